//! Measurement plans: which runs happen in which order, and the raw figures they yield.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use anyhow::{anyhow, bail, Result};
use serde::{Deserialize, Serialize};
use squall::tier::{MATERIAL_BUCKETS, SIDE_BUCKETS};

use crate::engine::adapter::{run_bench, BenchRequest, BenchResult, EngineAdapter};
use crate::engine::bench::{EngineIdentity, EvalCounters};
use crate::engine::build::EngineBinary;
use crate::engine::callgrind::{
    find_valgrind, parse_functions, parse_total, Callgrind, CannotExecute, Detail, FunctionCosts,
};
use crate::engine::revision::Revision;
use crate::paths::LabPaths;
use crate::progress::Progress;
use crate::side::Side;

#[derive(Debug, Clone)]
pub(crate) struct Plan {
    /// The engine under test: how its bench runs and reads.
    pub(crate) adapter: Arc<dyn EngineAdapter>,
    /// Where bench processes run (engines may write files there).
    pub(crate) bench_dir: PathBuf,
    /// `None`: the engine's default bench depth.
    pub(crate) depth: Option<u32>,
    pub(crate) rounds: u32,
    pub(crate) instr_depth: u32,
    pub(crate) instructions: bool,
    pub(crate) timeout: Duration,
    /// A positions file for `squall bench --positions` (`None`: the built-in bench).
    pub(crate) positions: Option<std::path::PathBuf>,
}

/// A revision with its built engine, ready to measure, and how reports name it: both decided
/// before measuring, so no figure is relabelled afterwards.
pub(crate) struct Subject<'a> {
    pub(crate) side: Side,
    /// The side's name in reports: "A", "B", "revision", or the revision itself for `lab bench`.
    pub(crate) label: String,
    /// The revision as reports show it ("HEAD", or "HEAD --full-eval" for `lab tiers`' A).
    pub(crate) spec: String,
    pub(crate) revision: &'a Revision,
    pub(crate) binary: &'a EngineBinary,
    /// Bench with `--full-eval` (`lab tiers` measures a binary both ways).
    pub(crate) full_eval: bool,
}

impl<'a> Subject<'a> {
    /// A plain bench of `revision`, named in reports by `label` and the revision's spec.
    pub(crate) fn new(
        side: Side,
        label: impl Into<String>,
        revision: &'a Revision,
        binary: &'a EngineBinary,
    ) -> Self {
        Self {
            side,
            label: label.into(),
            spec: revision.spec.clone(),
            revision,
            binary,
            full_eval: false,
        }
    }
}

/// A measurement with the label reports give its side.
#[derive(Debug, Clone)]
pub struct Measured {
    pub(crate) label: String,
    pub(crate) measurement: Measurement,
    /// Per-function costs of the instruction count's run at the instruction depth, read from
    /// the same callgrind output as its total; never stored (a baseline has none).
    pub(crate) functions: Option<FunctionCosts>,
}

impl Measured {
    pub fn new(label: impl Into<String>, measurement: Measurement) -> Self {
        Self {
            label: label.into(),
            measurement,
            functions: None,
        }
    }
}

/// Everything measured for one revision. Baselines store it verbatim, so a later check can pair
/// its per-position timings with fresh ones.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Measurement {
    pub revision: RevisionRecord,
    pub engine: EngineIdentity,
    /// `None`: the engine's default bench, whose depth it does not report (OpenBench format).
    pub depth: Option<u32>,
    /// Total bench nodes: identical on every run of a deterministic engine.
    pub signature: u64,
    pub positions: Vec<PositionRecord>,
    /// `time_ns` of every position, one row per run, in run order.
    pub runs_time_ns: Vec<Vec<u64>>,
    /// The eval tiers' exits: `None` for an engine whose bench does not report them.
    pub eval: Option<EvalCounters>,
    pub instructions: Instructions,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RevisionRecord {
    pub spec: String,
    pub commit: Option<String>,
    pub tree: String,
    pub binary_key: String,
    pub cached_build: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PositionRecord {
    pub fen: String,
    pub nodes: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum Instructions {
    Measured {
        /// `None`: the engine's default bench (its depth not reported).
        depth: Option<u32>,
        total: u64,
        nodes: u64,
        /// The same count at a minimal depth, subtracted to leave the per-node search cost.
        base: Option<InstructionCount>,
        /// Set when the process counted is not the built binary (`engine::callgrind`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
    Skipped {
        reason: String,
    },
}

/// Callgrind `Ir` of one whole bench process (`squall bench --json --depth N`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstructionCount {
    pub depth: Option<u32>,
    pub total: u64,
    pub nodes: u64,
}

impl Instructions {
    fn validate(&self) -> std::result::Result<(), Invalid> {
        let Instructions::Measured {
            depth,
            total,
            nodes,
            base,
            ..
        } = self
        else {
            return Ok(());
        };
        let count = |field: &str, depth: Option<u32>, total: u64, nodes: u64| {
            if depth == Some(0) {
                Err(invalid(format!("{field}depth"), "0 is not a search depth"))
            } else if total == 0 {
                Err(invalid(format!("{field}total"), "0 instructions"))
            } else if nodes == 0 {
                Err(invalid(format!("{field}nodes"), "0 nodes"))
            } else {
                Ok(())
            }
        };
        count("instructions.", *depth, *total, *nodes)?;
        match base {
            Some(base) => count("instructions.base.", base.depth, base.total, base.nodes),
            None => Ok(()),
        }
    }

    /// Instructions per searched node: the marginal cost between the reference run and the
    /// measured one when there is a reference, the plain ratio otherwise.
    pub(crate) fn per_node(&self) -> Option<f64> {
        let Instructions::Measured {
            total, nodes, base, ..
        } = self
        else {
            return None;
        };
        match base {
            Some(base) if *nodes > base.nodes && *total >= base.total => {
                Some((total - base.total) as f64 / (nodes - base.nodes) as f64)
            }
            _ if *nodes > 0 => Some(*total as f64 / *nodes as f64),
            _ => None,
        }
    }
}

/// One node in under a nanosecond is no chess engine but a timer that read zero or garbage.
pub(crate) const MAX_PLAUSIBLE_NPS: f64 = 1e9;

/// A field of a measurement that cannot be right, named by its path (`runs_time_ns[2][5]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    pub field: String,
    pub(crate) problem: String,
}

impl std::fmt::Display for Invalid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.problem)
    }
}

impl std::error::Error for Invalid {}

fn invalid(field: impl Into<String>, problem: impl Into<String>) -> Invalid {
    Invalid {
        field: field.into(),
        problem: problem.into(),
    }
}

/// Checks one position's figures: a search that visits nodes takes positive time, and no
/// engine searches a node per nanosecond or faster. A position without a legal move (mate or
/// stalemate at the root) is searched in 0 nodes.
fn check_timing(nodes: u64, time_ns: u64) -> std::result::Result<(), String> {
    if nodes == 0 {
        return Ok(());
    }
    if time_ns == 0 {
        return Err(format!(
            "{nodes} nodes in 0 ns: a search takes positive time (is the engine's timer broken?)"
        ));
    }
    let nps = nodes as f64 * 1e9 / time_ns as f64;
    if nps > MAX_PLAUSIBLE_NPS {
        return Err(format!(
            "{nodes} nodes in {time_ns} ns is {nps:.3e} NPS, more than the plausible {MAX_PLAUSIBLE_NPS:.0e}"
        ));
    }
    Ok(())
}

/// Refuses a bench run whose timings or node counts cannot be a measurement, naming the
/// position; a zero timer would otherwise give an absurd NPS and a confident verdict.
pub fn check_report(report: &BenchResult) -> std::result::Result<(), Invalid> {
    for (index, position) in report.positions.iter().enumerate() {
        check_timing(position.nodes, position.time_ns).map_err(|problem| {
            invalid(
                format!("position {} ({})", index + 1, position.fen),
                problem,
            )
        })?;
    }
    if report.total_nodes == 0 {
        return Err(invalid("totals.nodes", "0: the bench searched nothing"));
    }
    if report.total_time_ns == 0 {
        return Err(invalid(
            "totals.time_ns",
            "0 ns: a bench takes positive time",
        ));
    }
    Ok(())
}

impl Measurement {
    /// Checks every field a stored measurement must get right before figures are derived from
    /// it; the error names the field.
    pub(crate) fn validate(&self) -> std::result::Result<(), Invalid> {
        let revision = &self.revision;
        // Git object ids (SHA-1 or SHA-256) and build keys: hex digits only.
        let is_id =
            |id: &str| (1..=128).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_hexdigit());
        for (field, id) in [
            ("revision.tree", Some(&revision.tree)),
            ("revision.binary_key", Some(&revision.binary_key)),
            ("revision.commit", revision.commit.as_ref()),
        ] {
            if let Some(id) = id.filter(|id| !is_id(id)) {
                return Err(invalid(field, format!("{id:?} is not a hex object id")));
            }
        }
        if self.depth == Some(0) {
            return Err(invalid("depth", "0 is not a search depth"));
        }
        if self.positions.is_empty() {
            return Err(invalid("positions", "no positions"));
        }
        let mut nodes: u64 = 0;
        for (index, position) in self.positions.iter().enumerate() {
            nodes = nodes.checked_add(position.nodes).ok_or_else(|| {
                invalid(
                    format!("positions[{index}].nodes"),
                    "the node total overflows",
                )
            })?;
        }
        if nodes == 0 {
            return Err(invalid("signature", "0: the bench searched nothing"));
        }
        if nodes != self.signature {
            return Err(invalid(
                "signature",
                format!(
                    "{} is not the sum of the positions' nodes ({nodes})",
                    self.signature
                ),
            ));
        }
        if self.runs_time_ns.len() < 2 {
            return Err(invalid(
                "runs_time_ns",
                format!(
                    "{} runs; a measurement has at least two (the signature check)",
                    self.runs_time_ns.len()
                ),
            ));
        }
        for (run_index, run) in self.runs_time_ns.iter().enumerate() {
            if run.len() != self.positions.len() {
                return Err(invalid(
                    format!("runs_time_ns[{run_index}]"),
                    format!(
                        "a run has {} timings for {} positions",
                        run.len(),
                        self.positions.len()
                    ),
                ));
            }
            let mut total: u64 = 0;
            for (index, (time, position)) in run.iter().zip(&self.positions).enumerate() {
                let field = format!("runs_time_ns[{run_index}][{index}]");
                check_timing(position.nodes, *time).map_err(|problem| invalid(&field, problem))?;
                total = total
                    .checked_add(*time)
                    .ok_or_else(|| invalid(&field, "the run's total time overflows"))?;
            }
        }
        if let Some(eval) = &self.eval {
            check_eval(eval)?;
        }
        self.instructions.validate()
    }
}

/// The eval counters' shape: 8 material buckets, 8×8 side buckets (docs/bench-protocol.md).
fn check_eval(eval: &EvalCounters) -> std::result::Result<(), Invalid> {
    if eval.by_material_bucket.len() != MATERIAL_BUCKETS {
        return Err(invalid(
            "eval.by_material_bucket",
            format!(
                "{} rows; the protocol has {MATERIAL_BUCKETS}",
                eval.by_material_bucket.len()
            ),
        ));
    }
    if eval.by_side_buckets.len() != SIDE_BUCKETS {
        return Err(invalid(
            "eval.by_side_buckets",
            format!(
                "{} rows; the protocol has {SIDE_BUCKETS}",
                eval.by_side_buckets.len()
            ),
        ));
    }
    if let Some(row) = eval
        .by_side_buckets
        .iter()
        .position(|row| row.len() != SIDE_BUCKETS)
    {
        return Err(invalid(
            format!("eval.by_side_buckets[{row}]"),
            format!(
                "{} columns; the protocol has {SIDE_BUCKETS}",
                eval.by_side_buckets[row].len()
            ),
        ));
    }
    if let Some((field, problem)) = eval.by_search_problem() {
        return Err(invalid(field, problem));
    }
    Ok(())
}

impl Measurement {
    pub(crate) fn median_nps(&self) -> f64 {
        crate::analysis::stats::median(&self.run_nps())
    }

    pub(crate) fn run_nps(&self) -> Vec<f64> {
        self.runs_time_ns
            .iter()
            .map(|run| {
                // Summed as floats: an unvalidated run must not overflow.
                let total: f64 = run.iter().map(|time| *time as f64).sum();
                self.signature as f64 * 1e9 / total.max(1.0)
            })
            .collect()
    }

    /// Time per node of every position in every run, the unit the paired comparison works in.
    pub(crate) fn per_node_times(&self) -> Vec<Vec<f64>> {
        self.runs_time_ns
            .iter()
            .map(|run| {
                run.iter()
                    .zip(&self.positions)
                    .map(|(time, position)| *time as f64 / position.nodes.max(1) as f64)
                    .collect()
            })
            .collect()
    }

    /// One time-per-node figure per run, for pairing when position lists differ.
    pub(crate) fn run_time_per_node(&self) -> Vec<Vec<f64>> {
        self.run_nps().iter().map(|nps| vec![1e9 / nps]).collect()
    }
}

/// Collects the runs of one binary, failing fast when they disagree on the search.
struct Runs<'a> {
    subject: &'a Subject<'a>,
    plan: &'a Plan,
    /// The discarded warm-up run: not timed into any figure, but its search is checked against
    /// the measured runs' as theirs are against each other.
    warm_up: Option<BenchResult>,
    reports: Vec<BenchResult>,
}

impl Plan {
    /// Two runs at least: the signature check compares them.
    fn check(&self) -> Result<()> {
        if self.rounds < 2 {
            bail!(
                "{} rounds: a measurement needs at least two (the signature check)",
                self.rounds
            );
        }
        if self.instructions && self.instr_depth == 0 {
            bail!("instruction depth 0: the engine's bench needs a depth of at least 1");
        }
        Ok(())
    }
}

impl<'a> Runs<'a> {
    fn new(subject: &'a Subject<'a>, plan: &'a Plan) -> Self {
        Self {
            subject,
            plan,
            warm_up: None,
            reports: Vec::new(),
        }
    }

    /// One run whose time is discarded, as hyperfine's `--warmup 1`: the first run of a binary
    /// pays for what later runs find warm (the page cache holding the binary, the CPU's
    /// frequency ramp, the allocator's first pages), a cost no round should carry.
    fn warm_up(&mut self) -> Result<&BenchResult> {
        let report = self.bench()?;
        Ok(self.warm_up.insert(report))
    }

    fn run_once(&mut self) -> Result<&BenchResult> {
        let report = self.bench()?;
        self.reports.push(report);
        Ok(self.reports.last().expect("just pushed"))
    }

    /// A bench run, valid and with the same search as the runs before it.
    fn bench(&self) -> Result<BenchResult> {
        let request = BenchRequest {
            depth: self.plan.depth,
            full_eval: self.subject.full_eval,
            positions: self.plan.positions.as_deref(),
        };
        let report = run_bench(
            self.plan.adapter.as_ref(),
            &self.subject.binary.path,
            &request,
            &self.plan.bench_dir,
            self.plan.timeout,
        )?;
        check_report(&report).map_err(|problem| {
            anyhow!(
                "invalid measurement of {} {}: {problem}",
                self.subject.side.letter(),
                self.subject.revision.short_name()
            )
        })?;
        if let Some(first) = self.warm_up.as_ref().or(self.reports.first()) {
            check_same_search(self.subject, first, &report)?;
        }
        Ok(report)
    }

    fn finish(
        self,
        (instructions, functions): (Instructions, Option<FunctionCosts>),
    ) -> Result<Measured> {
        let Some(first) = self.reports.first() else {
            bail!("no bench run was made: a plan has at least two rounds");
        };
        let revision = self.subject.revision;
        let measurement = Measurement {
            revision: RevisionRecord {
                spec: self.subject.spec.clone(),
                commit: revision.commit.map(|c| c.to_string()),
                tree: revision.tree.to_string(),
                binary_key: self.subject.binary.key.clone(),
                cached_build: self.subject.binary.cached,
            },
            engine: first.engine.clone(),
            depth: first.depth,
            signature: first.total_nodes,
            positions: first
                .positions
                .iter()
                .map(|p| PositionRecord {
                    fen: p.fen.clone(),
                    nodes: p.nodes,
                })
                .collect(),
            runs_time_ns: self
                .reports
                .iter()
                .map(|report| report.positions.iter().map(|p| p.time_ns).collect())
                .collect(),
            eval: first.eval.clone(),
            instructions,
        };
        measurement.validate().map_err(|problem| {
            anyhow!(
                "invalid measurement of {} {}: {problem}",
                self.subject.side.letter(),
                self.subject.revision.short_name()
            )
        })?;
        Ok(Measured {
            label: self.subject.label.clone(),
            measurement,
            functions,
        })
    }
}

fn check_same_search(subject: &Subject, first: &BenchResult, later: &BenchResult) -> Result<()> {
    let same_positions = first.positions.len() == later.positions.len()
        && first
            .positions
            .iter()
            .zip(&later.positions)
            .all(|(x, y)| x.fen == y.fen && x.nodes == y.nodes);
    if first.total_nodes != later.total_nodes || !same_positions || first.eval != later.eval {
        bail!(
            "non-deterministic engine: {} ({}) searched {} nodes on one run and {} on another \
             with the same arguments",
            subject.side.letter(),
            subject.revision.short_name(),
            first.total_nodes,
            later.total_nodes
        );
    }
    Ok(())
}

/// Measures two binaries with paired runs in ABBA order (A B, B A, A B, ...), so slow drifts of
/// the machine affect both sides alike, after one discarded warm-up run of each. The warm-up
/// and the first round double as the signature check.
pub(crate) fn measure_pair(
    a: &Subject,
    b: &Subject,
    plan: &Plan,
    paths: &LabPaths,
    progress: &Progress,
) -> Result<(Measured, Measured)> {
    plan.check()?;
    let mut a_runs = Runs::new(a, plan);
    let mut b_runs = Runs::new(b, plan);
    let task = progress.counter(
        u64::from(plan.rounds) * 2 + 2,
        "measuring NPS (a warm-up run per side, then ABBA rounds)",
    );
    for runs in [&mut a_runs, &mut b_runs] {
        let label = runs.subject.side.letter();
        let report = runs.warm_up()?;
        task.advance(&format!(
            "warm-up: {label} {} (discarded)",
            describe_run(report)
        ));
    }
    for round in 0..plan.rounds {
        let order = if round % 2 == 0 {
            [&mut a_runs, &mut b_runs]
        } else {
            [&mut b_runs, &mut a_runs]
        };
        for runs in order {
            let label = runs.subject.side.letter();
            let report = runs.run_once()?;
            task.advance(&format!(
                "round {}: {label} {}",
                round + 1,
                describe_run(report)
            ));
        }
    }
    task.finish();
    let [a_instructions, b_instructions] = count_instructions([a, b], plan, paths, progress)?;
    Ok((
        a_runs.finish(a_instructions)?,
        b_runs.finish(b_instructions)?,
    ))
}

fn describe_run(report: &BenchResult) -> String {
    let nps = report.total_nodes as f64 * 1e9 / report.total_time_ns.max(1) as f64;
    format!("{} nodes, {:.0} nps", report.total_nodes, nps)
}

/// Measures one binary `plan.rounds` times (at least twice, for the signature check) after one
/// discarded warm-up run.
pub(crate) fn measure_single(
    subject: &Subject,
    plan: &Plan,
    paths: &LabPaths,
    progress: &Progress,
) -> Result<Measured> {
    plan.check()?;
    let mut runs = Runs::new(subject, plan);
    let task = progress.counter(
        u64::from(plan.rounds) + 1,
        "measuring NPS (a warm-up run, then the rounds)",
    );
    let report = runs.warm_up()?;
    task.advance(&format!("warm-up: {} (discarded)", describe_run(report)));
    for round in 0..plan.rounds {
        let report = runs.run_once()?;
        task.advance(&format!("run {}: {}", round + 1, describe_run(report)));
    }
    task.finish();
    let [instructions] = count_instructions([subject], plan, paths, progress)?;
    runs.finish(instructions)
}

/// Depth of the reference run whose count is subtracted: it is almost all start-up work (table
/// initialisation, allocation), which would otherwise dilute per-node changes.
const BASE_DEPTH: u32 = 1;

/// Callgrind runs of all subjects at once: instruction counts do not depend on machine load,
/// and running them concurrently divides the wait by the number of cores.
fn count_instructions<const N: usize>(
    subjects: [&Subject; N],
    plan: &Plan,
    paths: &LabPaths,
    progress: &Progress,
) -> Result<[(Instructions, Option<FunctionCosts>); N]> {
    let skipped = |reason: &str| {
        Ok(std::array::from_fn(|_| {
            (
                Instructions::Skipped {
                    reason: reason.to_string(),
                },
                None,
            )
        }))
    };
    if !plan.instructions {
        return skipped("disabled by --no-instructions");
    }
    let Some(valgrind) = find_valgrind() else {
        progress.line("instructions: skipped (valgrind not found)");
        return skipped("valgrind not found");
    };
    // An engine whose bench takes no depth is counted over its whole default bench, start-up
    // included: without a depth there is no shorter run of the same start-up to subtract.
    let (depths, described) = if !plan.adapter.takes_depth() {
        (
            vec![None],
            "its default bench, start-up included".to_string(),
        )
    } else if plan.instr_depth > BASE_DEPTH {
        (
            vec![Some(plan.instr_depth), Some(BASE_DEPTH)],
            format!(
                "depth {}, start-up reference at depth {BASE_DEPTH}",
                plan.instr_depth
            ),
        )
    } else {
        (
            vec![Some(plan.instr_depth)],
            format!("depth {}", plan.instr_depth),
        )
    };
    let task = progress.spinner(&format!(
        "counting instructions under callgrind ({described})"
    ));
    let counts = run_callgrind(&subjects, &depths, &valgrind, plan, paths);
    task.finish();
    let counts = match counts {
        Ok(counts) => counts,
        Err(error) => {
            // A binary valgrind cannot run leaves the speed to judge: instructions are skipped.
            let Some(cannot) = error
                .chain()
                .find_map(|e| e.downcast_ref::<CannotExecute>())
            else {
                return Err(error);
            };
            progress.line(&format!("instructions: skipped ({cannot})"));
            return skipped(&cannot.reason);
        }
    };
    for (subject, count) in subjects.iter().zip(&counts) {
        for note in count.iter().filter_map(|counted| counted.note.as_ref()) {
            progress.line(&format!("instructions of {}: {note}", subject.label));
        }
    }
    let mut counts = counts;
    Ok(std::array::from_fn(|i| {
        let functions = counts[i][0].functions.take();
        (
            Instructions::Measured {
                depth: counts[i][0].count.depth,
                total: counts[i][0].count.total,
                nodes: counts[i][0].count.nodes,
                base: counts[i].get(1).map(|counted| counted.count),
                note: counts[i].iter().find_map(|counted| counted.note.clone()),
            },
            functions,
        )
    }))
}

/// One callgrind count, the note of a process counted that is not the built binary, and the
/// per-function costs of the same output (`None` where they do not parse).
struct NotedCount {
    count: InstructionCount,
    note: Option<String>,
    functions: Option<FunctionCosts>,
}

/// Counts per subject, in the order of `depths`, each with the note of a process counted that
/// is not the built binary.
fn run_callgrind(
    subjects: &[&Subject],
    depths: &[Option<u32>],
    valgrind: &Path,
    plan: &Plan,
    paths: &LabPaths,
) -> Result<Vec<Vec<NotedCount>>> {
    thread::scope(|scope| {
        let handles: Vec<Vec<_>> = subjects
            .iter()
            .map(|subject| {
                depths
                    .iter()
                    .map(|&depth| {
                        let out_file = paths.scratch.join(format!(
                            "callgrind-{}-{}-depth{}.out",
                            std::process::id(),
                            subject.side.letter(),
                            depth.map_or_else(|| "default".to_string(), |d| d.to_string())
                        ));
                        let adapter = plan.adapter.as_ref();
                        let request = BenchRequest {
                            depth,
                            full_eval: subject.full_eval,
                            positions: plan.positions.as_deref(),
                        };
                        scope.spawn(move || {
                            let command = adapter.bench_command(&subject.binary.path, &request)?;
                            let counted = Callgrind {
                                valgrind,
                                command: &command,
                                binary: &subject.binary.path,
                                out_file: &out_file,
                                timeout: plan.timeout,
                                detail: Detail::Total,
                            }
                            .run()?;
                            let total = parse_total(&counted.contents)?;
                            // The first depth is the instruction depth, whose costs name the
                            // functions where instructions per node moved.
                            let functions = (Some(&depth) == depths.first())
                                .then(|| parse_functions(&counted.contents).ok())
                                .flatten();
                            let finished = counted.finished;
                            let report =
                                adapter.read_bench(&finished.stdout, &finished.stderr, &request)?;
                            Ok(NotedCount {
                                count: InstructionCount {
                                    depth: report.depth,
                                    total,
                                    nodes: report.total_nodes,
                                },
                                note: counted.note,
                                functions,
                            })
                        })
                    })
                    .collect()
            })
            .collect();
        handles
            .into_iter()
            .map(|per_subject| {
                per_subject
                    .into_iter()
                    .map(|handle| {
                        handle
                            .join()
                            .unwrap_or_else(|_| bail!("callgrind worker panicked"))
                    })
                    .collect()
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timings_must_be_possible() {
        assert_eq!(check_timing(5000, 1_000_000), Ok(()));
        // Mate or stalemate at the root: no nodes, whatever the clock says.
        assert_eq!(check_timing(0, 0), Ok(()));
        assert_eq!(check_timing(0, 600), Ok(()));
        assert!(check_timing(5000, 0).unwrap_err().contains("0 ns"));
        assert!(check_timing(5000, 4999).unwrap_err().contains("NPS"));
        assert_eq!(check_timing(5000, 5000), Ok(()));
    }

    #[test]
    fn per_node_instructions_exclude_start_up_work() {
        let base = InstructionCount {
            depth: Some(1),
            total: 1_000_000,
            nodes: 100,
        };
        let with_base = Instructions::Measured {
            depth: Some(5),
            total: 1_000_000 + 50 * 10_000,
            nodes: 100 + 10_000,
            base: Some(base),
            note: None,
        };
        assert_eq!(with_base.per_node(), Some(50.0));
        let without_base = Instructions::Measured {
            depth: Some(1),
            total: 1_000,
            nodes: 10,
            base: None,
            note: None,
        };
        assert_eq!(without_base.per_node(), Some(100.0));
        let skipped = Instructions::Skipped {
            reason: "valgrind not found".to_string(),
        };
        assert_eq!(skipped.per_node(), None);
    }
}
