//! Turning two measurements into a comparison: the figures every report format prints, and
//! the verdict.

use serde::{Deserialize, Serialize};

use crate::analysis::functions::{compare_functions, FunctionsComparison, FunctionsWhy};
use crate::analysis::measure::{
    measure_pair, Instructions, Measured, Measurement, Plan, RevisionRecord, Subject,
};
use crate::analysis::stats::{
    classify, median, paired_ratios, round_ratio_interval, Change, RatioInterval, MIN_ROUNDS_FOR_CI,
};
use crate::engine::adapter::WHOLE_BENCH;
use crate::engine::bench::{
    EngineIdentity, EvalCounters, Exits, ExitsBySearch, SearchExits, TierCounts,
};

use crate::schema::{Kind, LAB_JSON_SCHEMA_VERSION};
use crate::side::Side;

const CONFIDENCE: f64 = 0.95;

/// Instructions per node that moved by at least this much, in percent, with the same signature,
/// are attributed to functions by default: a fixed cost too small for the verdict still gets a
/// name.
pub(crate) const ATTRIBUTION_MIN_CHANGE_PCT: f64 = 0.1;

/// How many functions the default attribution lists (`--functions-top` sets it for
/// `--functions`).
pub(crate) const ATTRIBUTION_TOP: usize = 5;

/// How A and B may be judged against each other, beyond the thresholds.
#[derive(Debug, Clone)]
pub struct Criteria {
    /// False when A was measured on another machine (a baseline): NPS then means nothing.
    pub nps_comparable: bool,
    /// False when A was built by another toolchain: signatures and instructions may differ
    /// without any source change.
    pub toolchain_comparable: bool,
    /// True when A and B are one binary run two ways (`lab tiers`): their trees may differ by
    /// design, so the node ratio is a note and a changed signature no warning.
    pub same_binary: bool,
    /// False when A's runs come from another sitting (a baseline): the machine's drift between
    /// the sittings is in the speed ratio but not in its interval.
    pub paired_in_time: bool,
    /// Why NPS is not comparable (a baseline's machine or toolchain), one entry per setting.
    pub machine_differences: Vec<String>,
    /// Settings the baseline did not record.
    pub machine_unknown: Vec<String>,
}

impl Criteria {
    /// Both sides measured here and now, by this toolchain.
    pub fn local(same_binary: bool) -> Self {
        Self {
            nps_comparable: true,
            toolchain_comparable: true,
            same_binary,
            paired_in_time: true,
            machine_differences: Vec::new(),
            machine_unknown: Vec::new(),
        }
    }
}

/// What counts as a change: the one place the verdict's thresholds are held.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Thresholds {
    /// Smallest slowdown, in percent of time per node, that counts as a regression.
    pub threshold_pct: f64,
    /// Smallest change of instructions per node, in percent, that is flagged.
    pub instr_threshold_pct: f64,
}

impl Thresholds {
    /// `lab compare`'s defaults (`--threshold`, `--instr-threshold`), which `lab verdict`,
    /// `lab bisect` and the steps of `lab history` judge by too.
    pub(crate) const DEFAULT: Thresholds = Thresholds {
        threshold_pct: 1.0,
        instr_threshold_pct: 0.5,
    };
    /// For reports that judge nothing (`lab bench`, `lab baseline show`).
    pub(crate) const NONE: Thresholds = Thresholds {
        threshold_pct: 0.0,
        instr_threshold_pct: 0.0,
    };
}

#[derive(Debug, Clone, Serialize)]
pub struct Settings {
    pub rounds: u32,
    pub depth: Option<u32>,
    pub instr_depth: u32,
    #[serde(flatten)]
    pub thresholds: Thresholds,
    /// `--positions`: what was benched instead of the engine's built-in list.
    pub positions: Option<PositionsSetting>,
}

/// A `--positions` file as measured.
#[derive(Debug, Clone, Serialize)]
pub struct PositionsSetting {
    /// As given on the command line.
    pub(crate) file: String,
    /// Every Nth position of the file was benched.
    pub(crate) every: u32,
    /// How many positions that made.
    pub(crate) count: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub(crate) schema_version: u32,
    pub(crate) kind: Kind,
    pub settings: Settings,
    pub a: SideSummary,
    pub b: SideSummary,
    pub(crate) signature: SignatureComparison,
    pub speed: SpeedComparison,
    pub(crate) instructions: InstructionsComparison,
    /// The figures table, B against A: for timings the paired estimate the speed verdict reads,
    /// for counts the exact change. Every format prints these rows.
    pub(crate) figures: Vec<Figure>,
    /// `None` unless both engines report their eval exits (the squall protocol).
    pub(crate) eval_deltas: Option<EvalDeltas>,
    #[serde(rename = "verdict")]
    pub(crate) change: Change,
    pub regression: bool,
    pub(crate) warnings: Vec<Warning>,
    /// What the reader should know that is not a problem (`lab tiers`: the node ratio).
    pub(crate) notes: Vec<Note>,
    /// Per-function instruction movers: with `compare --functions`, or by default when
    /// instructions per node moved by [`ATTRIBUTION_MIN_CHANGE_PCT`] or more with the same
    /// signature (from the instruction count's own callgrind runs; `why` says which).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub functions: Option<FunctionsComparison>,
    /// Both revisions calibrated, with `compare --calibrate` only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) calibration: Option<crate::calibration::summary::CalibrationComparison>,
    /// When and on which machine B was measured, stamped by the command that measured it, so
    /// a report rendered later from the JSON can say so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) measured: Option<crate::machine::Provenance>,
    /// The speed change in Elo, when a speed-Elo model exists for this machine (`lab
    /// speed-elo`); filled by the command, which reads the stored models.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speed_elo: Option<SpeedEloEstimate>,
}

/// What a speed change is worth in Elo under a stored speed-Elo model.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SpeedEloEstimate {
    pub value: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    /// B's NPS over A's (paired), the figure converted.
    pub speed_ratio: f64,
    /// The model's clock, `BASE+INC`.
    pub tc: String,
    /// Elo per doubling of time.
    pub elo_per_doubling: f64,
    /// The revision (or executable) the model was fitted on.
    pub model_of: String,
    /// Whether the model was fitted on A's own binary.
    pub same_binary: bool,
    pub games: u64,
}

/// What a row of the figures table measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum FigureKind {
    Signature,
    Nps,
    TimePerNode,
    /// The time to search every position to the bench depth (a row only when the signature
    /// changed).
    BenchTime,
    Instructions,
    InstructionsPerNode,
}

/// How a figure's change was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum FigureBasis {
    /// The paired estimate over rounds that the speed verdict reads, with its interval.
    Paired,
    /// A deterministic count: the change is exact.
    Exact,
    /// Timings from another setting: no change is given.
    NotComparable,
    /// Nothing to compare (a count not measured on both sides).
    Missing,
}

/// One row of the figures table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Figure {
    pub(crate) figure: FigureKind,
    /// A's and B's values: counts as counted, timings as the median over runs (NPS in nodes
    /// per second, times in nanoseconds per node or milliseconds per bench).
    pub(crate) a: Option<f64>,
    pub(crate) b: Option<f64>,
    pub(crate) basis: FigureBasis,
    /// B against A, in percent: the paired estimate for timings, the exact change for counts.
    pub(crate) change_pct: Option<f64>,
    /// The interval of a paired change, in percent (`null` from a single round).
    pub(crate) ci_low_pct: Option<f64>,
    pub(crate) ci_high_pct: Option<f64>,
    /// The interval's sample size: rounds with at least one pair (paired figures only).
    pub(crate) rounds: Option<usize>,
    /// Timings only: B's median over A's, unpaired; for reference, never judged.
    pub(crate) unpaired_change_pct: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SideSummary {
    pub(crate) label: String,
    pub(crate) revision: RevisionRecord,
    pub(crate) engine: EngineIdentity,
    /// `None`: the engine's default bench, whose depth it does not report.
    pub(crate) depth: Option<u32>,
    pub(crate) signature: u64,
    pub(crate) positions: usize,
    pub(crate) runs: usize,
    pub(crate) nps: NpsSummary,
    pub(crate) time_per_node_ns: f64,
    /// The bench's median wall time: the time to search every position to the bench depth.
    pub(crate) bench_time_ms: f64,
    pub instructions: InstructionsSummary,
    /// The eval tiers' exits: `None` for an engine whose bench does not report them.
    pub eval: Option<EvalSummary>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct NpsSummary {
    pub(crate) median: f64,
    pub(crate) min: f64,
    pub(crate) max: f64,
    pub(crate) runs: Vec<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct InstructionsSummary {
    pub(crate) measured: bool,
    pub skipped_reason: Option<String>,
    pub(crate) depth: Option<u32>,
    pub(crate) total: Option<u64>,
    pub(crate) nodes: Option<u64>,
    /// The start-up reference run (see docs/lab-json.md).
    pub(crate) base_depth: Option<u32>,
    pub(crate) base_total: Option<u64>,
    pub(crate) base_nodes: Option<u64>,
    pub(crate) per_node: Option<f64>,
}

#[derive(Debug, Clone, Copy, Serialize)]
pub(crate) struct TierRates {
    pub(crate) super_lazy: f64,
    pub(crate) lazy: f64,
    pub(crate) full: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct EvalSummary {
    pub(crate) calls: u64,
    pub(crate) exits: Exits,
    pub(crate) rates: TierRates,
    pub(crate) by_material_bucket: Vec<BucketSummary>,
    /// `[my bucket][opponent bucket] = [super_lazy, lazy, full]` exits, as the engine reported.
    pub(crate) by_side_buckets: Vec<Vec<TierCounts>>,
    /// Each tier's exits split by the search that asked: `None` when the bench does not report
    /// it (bench schema_version 1).
    pub(crate) by_search: Option<SearchSplit>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct SearchSplit {
    pub(crate) main: SearchShare,
    pub(crate) quiescence: SearchShare,
}

/// The exits of the evaluations one search asked for.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct SearchShare {
    pub(crate) exits: Exits,
    /// This search's share of each tier's exits (main and quiescence add up to 1 per tier).
    pub(crate) share_of_tier: TierRates,
    /// This search's share of all exits.
    pub(crate) share_of_all: f64,
    /// Its own exits by tier, as shares of them.
    pub(crate) rates: TierRates,
    pub(crate) by_material_bucket: Vec<BucketSummary>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct BucketSummary {
    pub(crate) bucket: usize,
    pub(crate) exits: TierCounts,
    pub(crate) total: u64,
    pub(crate) rates: TierRates,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct SignatureComparison {
    pub(crate) a: u64,
    pub(crate) b: u64,
    pub(crate) changed: bool,
    pub(crate) change_pct: f64,
    pub(crate) comparable: bool,
}

/// How A's timings are paired with B's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Pairing {
    /// The same positions, run by run.
    PerPosition,
    /// Whole runs, when the position lists differ.
    PerRun,
    /// Whole runs of an engine whose bench reports only its totals (the openbench format): one
    /// pair per round, so the interval's sample is the rounds.
    WholeBench,
}

impl Pairing {
    /// The name the JSON gives it, which the speed line also prints.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Pairing::PerPosition => "per-position",
            Pairing::PerRun => "per-run",
            Pairing::WholeBench => "whole-bench",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct SpeedComparison {
    pub(crate) comparable: bool,
    pub(crate) pairing: Pairing,
    /// B/A time per node: above 1 means B is slower.
    pub cost_ratio: Option<RatioInterval>,
    /// Each round's median B/A time-per-node ratio, in round order: the sample `cost_ratio`'s
    /// interval is computed from (rounds without pairs left out).
    pub(crate) round_ratios: Vec<f64>,
    /// B/A median NPS.
    pub(crate) nps_ratio: Option<f64>,
    /// NPS change implied by the median cost ratio, in percent (negative: B is slower).
    pub(crate) nps_change_pct: Option<f64>,
    #[serde(rename = "verdict")]
    pub(crate) change: Change,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct InstructionsComparison {
    pub(crate) comparable: bool,
    pub(crate) total_ratio: Option<f64>,
    pub(crate) per_node_ratio: Option<f64>,
    pub(crate) per_node_change_pct: Option<f64>,
    pub(crate) flagged: bool,
    #[serde(rename = "verdict")]
    pub(crate) change: Change,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct EvalDeltas {
    /// B minus A, in percentage points.
    pub(crate) rates_pp: TierRates,
    pub(crate) by_material_bucket: Vec<BucketDelta>,
    /// `None` unless both sides split their exits by search.
    pub(crate) by_search: Option<SearchSplitDeltas>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct SearchSplitDeltas {
    /// B minus A of quiescence's share of each tier's exits, in percentage points (main's
    /// moves by the opposite amount).
    pub(crate) quiescence_share_of_tier_pp: TierRates,
    /// B minus A of quiescence's share of all exits, in percentage points.
    pub(crate) quiescence_share_of_all_pp: f64,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct BucketDelta {
    pub(crate) bucket: usize,
    pub(crate) rates_pp: TierRates,
}

impl TierRates {
    fn of(counts: TierCounts, total: u64) -> Self {
        Self::per_tier(counts, [total; 3])
    }

    /// Each tier's count over that tier's own total.
    fn per_tier(counts: TierCounts, totals: TierCounts) -> Self {
        Self {
            super_lazy: fraction(counts[0], totals[0]),
            lazy: fraction(counts[1], totals[1]),
            full: fraction(counts[2], totals[2]),
        }
    }

    fn minus_in_points(&self, other: &Self) -> Self {
        Self {
            super_lazy: (self.super_lazy - other.super_lazy) * 100.0,
            lazy: (self.lazy - other.lazy) * 100.0,
            full: (self.full - other.full) * 100.0,
        }
    }

    pub(crate) fn as_array(&self) -> [f64; 3] {
        [self.super_lazy, self.lazy, self.full]
    }
}

pub fn summarize(label: &str, measurement: &Measurement) -> SideSummary {
    let runs = measurement.run_nps();
    let nps = NpsSummary {
        median: measurement.median_nps(),
        min: runs.iter().copied().fold(f64::INFINITY, f64::min),
        max: runs.iter().copied().fold(0.0, f64::max),
        runs,
    };
    SideSummary {
        label: label.to_string(),
        revision: measurement.revision.clone(),
        engine: measurement.engine.clone(),
        depth: measurement.depth,
        signature: measurement.signature,
        positions: measurement.positions.len(),
        runs: measurement.runs_time_ns.len(),
        time_per_node_ns: 1e9 / nps.median,
        bench_time_ms: measurement.signature as f64 / nps.median * 1e3,
        nps,
        instructions: summarize_instructions(&measurement.instructions),
        eval: measurement.eval.as_ref().map(summarize_eval),
    }
}

fn summarize_instructions(instructions: &Instructions) -> InstructionsSummary {
    let per_node = instructions.per_node();
    match instructions {
        Instructions::Measured {
            depth,
            total,
            nodes,
            base,
            ..
        } => InstructionsSummary {
            measured: true,
            skipped_reason: None,
            depth: *depth,
            total: Some(*total),
            nodes: Some(*nodes),
            base_depth: base.and_then(|b| b.depth),
            base_total: base.map(|b| b.total),
            base_nodes: base.map(|b| b.nodes),
            per_node,
        },
        Instructions::Skipped { reason } => InstructionsSummary {
            measured: false,
            skipped_reason: Some(reason.clone()),
            depth: None,
            total: None,
            nodes: None,
            base_depth: None,
            base_total: None,
            base_nodes: None,
            per_node: None,
        },
    }
}

fn summarize_eval(eval: &EvalCounters) -> EvalSummary {
    let exits = eval.exits.as_array();
    let total = if eval.calls > 0 {
        eval.calls
    } else {
        sum(&exits)
    };
    EvalSummary {
        calls: eval.calls,
        exits: eval.exits,
        rates: TierRates::of(exits, total),
        by_material_bucket: summarize_buckets(&eval.by_material_bucket),
        by_side_buckets: eval.by_side_buckets.clone(),
        by_search: eval.by_search.as_ref().map(summarize_split),
    }
}

fn sum(counts: &TierCounts) -> u64 {
    counts
        .iter()
        .fold(0u64, |sum, count| sum.saturating_add(*count))
}

fn summarize_buckets(rows: &[TierCounts]) -> Vec<BucketSummary> {
    rows.iter()
        .enumerate()
        .map(|(bucket, counts)| {
            let total = sum(counts);
            BucketSummary {
                bucket,
                exits: *counts,
                total,
                rates: TierRates::of(*counts, total),
            }
        })
        .collect()
}

fn summarize_split(split: &ExitsBySearch) -> SearchSplit {
    let (main, quiescence) = (
        split.main.exits.as_array(),
        split.quiescence.exits.as_array(),
    );
    let tier_totals: TierCounts = std::array::from_fn(|t| main[t].saturating_add(quiescence[t]));
    let all = sum(&tier_totals);
    let share = |search: &SearchExits| {
        let exits = search.exits.as_array();
        let own = sum(&exits);
        SearchShare {
            exits: search.exits,
            share_of_tier: TierRates::per_tier(exits, tier_totals),
            share_of_all: fraction(own, all),
            rates: TierRates::of(exits, own),
            by_material_bucket: summarize_buckets(&search.by_material_bucket),
        }
    };
    SearchSplit {
        main: share(&split.main),
        quiescence: share(&split.quiescence),
    }
}

fn fraction(count: u64, total: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        count as f64 / total as f64
    }
}

/// A problem with a comparison the reader must see before its figures. The report says it
/// in words (`report::findings`), and the JSON carries those words.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Warning {
    /// The revisions searched different trees.
    SignatureChanged {
        a_label: String,
        a_nodes: u64,
        b_label: String,
        b_nodes: u64,
        change_pct: f64,
    },
    /// The sides were measured at different depths (`None`: the engine's default).
    DepthsDiffer {
        a_label: String,
        a_depth: Option<u32>,
        b_label: String,
        b_depth: Option<u32>,
    },
    /// The baseline was measured on another machine, or in the settings listed.
    NpsNotComparable { differences: Vec<String> },
    /// Settings of the machine the baseline did not record.
    MachineUnknown { settings: Vec<String> },
    /// Fewer rounds than [`MIN_ROUNDS_FOR_CI`]: the interval is valid but wide.
    TooFewRounds { rounds: usize, df: usize },
    /// The baseline was built by another toolchain.
    ToolchainDiffers,
    /// The bench position lists differ: runs are paired whole.
    PositionListsDiffer,
    /// Both instruction counts exist but at different depths.
    InstructionDepthsDiffer,
}

/// Something the reader should know about a comparison that is not a problem.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Note {
    /// `lab compare --force` of one binary: an A/A run; the binary's cache key.
    AaRun { binary_key: String },
    /// One binary run two ways (`lab tiers`): the node counts of both.
    SameBinaryNodeRatio { a_nodes: u64, b_nodes: u64 },
    /// A baseline's time per node moved with the same work: possibly the machine's drift
    /// between sittings. The baseline's revision by its commit when it has one (the report
    /// shortens it), else as given; `revision` the other, as given.
    SittingDrift {
        change_pct: f64,
        baseline_commit: Option<String>,
        baseline_spec: String,
        revision: String,
    },
    /// A side's instruction count says how it was taken (`engine::callgrind`).
    Instructions { side: Side, note: String },
}

/// A and B measured side by side under `plan` on this machine (ABBA rounds, one toolchain) and
/// compared: what `lab compare`, `lab verdict` and `lab bisect` (each step and its finding)
/// share. The two measurements come back too, for what a caller reads beyond the comparison.
pub(crate) fn measure_and_compare(
    kind: Kind,
    settings: Settings,
    (a, b): (&Subject, &Subject),
    plan: &Plan,
    paths: &crate::paths::LabPaths,
    progress: &crate::progress::Progress,
) -> anyhow::Result<(Comparison, Measured, Measured)> {
    let (a, b) = measure_pair(a, b, plan, paths, progress)?;
    let comparison = compare(kind, settings, &a, &b, Criteria::local(false));
    Ok((comparison, a, b))
}

pub fn compare(
    kind: Kind,
    settings: Settings,
    a: &Measured,
    b: &Measured,
    criteria: Criteria,
) -> Comparison {
    let a_summary = summarize(&a.label, &a.measurement);
    let b_summary = summarize(&b.label, &b.measurement);
    let (a_measured, b_measured) = (a, b);
    let (a, b) = (&a.measurement, &b.measurement);
    let thresholds = settings.thresholds;
    let signature = compare_signatures(a, b, &criteria);
    let speed = compare_speed(a, b, &a_summary, &b_summary, &criteria, thresholds);
    let instructions = compare_instructions(a, b, signature.changed, &criteria, thresholds);
    let figures = figures(&a_summary, &b_summary, &signature, &speed, &instructions);
    let attribution = attribute(a_measured, b_measured, &signature, &instructions);
    let eval_deltas = match (&a_summary.eval, &b_summary.eval) {
        (Some(a), Some(b)) => Some(eval_deltas(a, b)),
        _ => None,
    };
    let change = overall_change(speed.change, instructions.change);
    let notes = notes(a, b, &signature, &speed, &instructions, &criteria);
    let warnings = warnings(
        &signature,
        &speed,
        &instructions,
        &a_summary,
        &b_summary,
        &criteria,
    );
    Comparison {
        schema_version: LAB_JSON_SCHEMA_VERSION,
        kind,
        settings,
        a: a_summary,
        b: b_summary,
        signature,
        speed,
        instructions,
        figures,
        eval_deltas,
        change,
        regression: change == Change::Regression,
        warnings,
        notes,
        functions: attribution,
        calibration: None,
        measured: None,
        speed_elo: None,
    }
}

/// The top function movers, when instructions per node moved with the same signature and both
/// sides' instruction counts kept their per-function costs.
fn attribute(
    a: &Measured,
    b: &Measured,
    signature: &SignatureComparison,
    instructions: &InstructionsComparison,
) -> Option<FunctionsComparison> {
    let change = instructions.per_node_change_pct?;
    if signature.changed || change.abs() < ATTRIBUTION_MIN_CHANGE_PCT {
        return None;
    }
    let (a_costs, b_costs) = (a.functions.as_ref()?, b.functions.as_ref()?);
    let depth = match &a.measurement.instructions {
        Instructions::Measured { depth, .. } => *depth,
        Instructions::Skipped { .. } => return None,
    };
    Some(compare_functions(
        depth,
        a_costs,
        b_costs,
        ATTRIBUTION_TOP,
        FunctionsWhy::InstructionsMoved,
    ))
}

/// The rows of the figures table. Timings carry the paired estimate the speed verdict reads
/// (NPS and bench time derived from the time-per-node ratio: the node counts are exact), and
/// B's median over A's beside it, labelled unpaired.
fn figures(
    a: &SideSummary,
    b: &SideSummary,
    signature: &SignatureComparison,
    speed: &SpeedComparison,
    instructions: &InstructionsComparison,
) -> Vec<Figure> {
    let finite = |x: f64| x.is_finite().then_some(x);
    let exact = |figure, a: Option<f64>, b: Option<f64>, ratio: Option<f64>| Figure {
        figure,
        a,
        b,
        basis: if ratio.is_some() {
            FigureBasis::Exact
        } else {
            FigureBasis::Missing
        },
        change_pct: ratio.map(percent_change),
        ci_low_pct: None,
        ci_high_pct: None,
        rounds: None,
        unpaired_change_pct: None,
    };
    // `scale` maps a time-per-node ratio to the figure's ratio (monotonic: increasing, or
    // decreasing for NPS, whose interval bounds swap).
    let timing = |figure, a: f64, b: f64, scale: &dyn Fn(f64) -> f64| {
        let paired = speed.cost_ratio.filter(|_| speed.comparable);
        let (low, high) = paired.map_or((None, None), |estimate| {
            let (x, y) = (scale(estimate.ci_low), scale(estimate.ci_high));
            (finite(x.min(y)), finite(x.max(y)))
        });
        Figure {
            figure,
            a: Some(a),
            b: Some(b),
            basis: if !speed.comparable {
                FigureBasis::NotComparable
            } else if paired.is_some() {
                FigureBasis::Paired
            } else {
                FigureBasis::Missing
            },
            change_pct: paired
                .and_then(|estimate| finite(percent_change(scale(estimate.estimate)))),
            ci_low_pct: low.map(percent_change),
            ci_high_pct: high.map(percent_change),
            rounds: paired.map(|estimate| estimate.rounds),
            unpaired_change_pct: speed
                .comparable
                .then(|| finite(percent_change(b / a)))
                .flatten(),
        }
    };
    let node_ratio = signature.b as f64 / signature.a.max(1) as f64;
    let signature_row = exact(
        FigureKind::Signature,
        Some(signature.a as f64),
        Some(signature.b as f64),
        Some(node_ratio),
    );
    let nps = timing(FigureKind::Nps, a.nps.median, b.nps.median, &|cost| {
        1.0 / cost
    });
    let time_per_node = timing(
        FigureKind::TimePerNode,
        a.time_per_node_ns,
        b.time_per_node_ns,
        &|cost| cost,
    );
    let total = exact(
        FigureKind::Instructions,
        a.instructions.total.map(|t| t as f64),
        b.instructions.total.map(|t| t as f64),
        instructions.total_ratio,
    );
    let per_node = exact(
        FigureKind::InstructionsPerNode,
        a.instructions.per_node,
        b.instructions.per_node,
        instructions.per_node_ratio,
    );
    if signature.changed {
        // Different trees: what the change costs or saves in search time to the same depth.
        let bench_time = timing(
            FigureKind::BenchTime,
            a.bench_time_ms,
            b.bench_time_ms,
            &|cost| cost * node_ratio,
        );
        vec![
            time_per_node,
            per_node,
            signature_row,
            bench_time,
            nps,
            total,
        ]
    } else {
        vec![signature_row, nps, time_per_node, total, per_node]
    }
}

/// Runs from another sitting whose wall clock moved while the work per node did not: the move
/// may be the machine's, and only a paired run can say.
fn drift_note(
    a: &Measurement,
    b: &Measurement,
    signature: &SignatureComparison,
    speed: &SpeedComparison,
    instructions: &InstructionsComparison,
) -> Option<Note> {
    let estimate = speed.cost_ratio.as_ref()?;
    let moved = estimate.ci_low > 1.0 || estimate.ci_high < 1.0;
    let same_work = instructions.per_node_ratio.is_some() && !instructions.flagged;
    if !speed.comparable || signature.changed || !moved || !same_work {
        return None;
    }
    Some(Note::SittingDrift {
        change_pct: (estimate.estimate - 1.0) * 100.0,
        baseline_commit: a.revision.commit.clone(),
        baseline_spec: a.revision.spec.clone(),
        revision: b.revision.spec.clone(),
    })
}

fn compare_signatures(
    a: &Measurement,
    b: &Measurement,
    criteria: &Criteria,
) -> SignatureComparison {
    SignatureComparison {
        a: a.signature,
        b: b.signature,
        changed: a.signature != b.signature,
        change_pct: percent_change(b.signature as f64 / a.signature.max(1) as f64),
        comparable: criteria.toolchain_comparable,
    }
}

fn same_positions(a: &Measurement, b: &Measurement) -> bool {
    a.positions.len() == b.positions.len()
        && a.positions
            .iter()
            .zip(&b.positions)
            .all(|(x, y)| x.fen == y.fen)
}

/// Pairs time per node position by position (equal to plain time when the search is
/// unchanged), so the ratio stays meaningful when the signature moves.
fn compare_speed(
    a: &Measurement,
    b: &Measurement,
    a_summary: &SideSummary,
    b_summary: &SideSummary,
    criteria: &Criteria,
    thresholds: Thresholds,
) -> SpeedComparison {
    let whole_bench = |m: &Measurement| m.positions.len() == 1 && m.positions[0].fen == WHOLE_BENCH;
    let (pairing, ratios) = if same_positions(a, b) {
        (
            if whole_bench(a) {
                Pairing::WholeBench
            } else {
                Pairing::PerPosition
            },
            paired_ratios(
                &cycle_to(a.per_node_times(), b.runs_time_ns.len()),
                &b.per_node_times(),
            ),
        )
    } else {
        (
            Pairing::PerRun,
            paired_ratios(
                &cycle_to(a.run_time_per_node(), b.runs_time_ns.len()),
                &b.run_time_per_node(),
            ),
        )
    };
    let cost_ratio = ratios
        .iter()
        .any(|round| !round.is_empty())
        .then(|| round_ratio_interval(&ratios, CONFIDENCE));
    let round_ratios = ratios
        .iter()
        .filter(|round| !round.is_empty())
        .map(|round| median(round))
        .collect();
    let change = match (criteria.nps_comparable, &cost_ratio) {
        (true, Some(estimate)) => classify(estimate, thresholds.threshold_pct),
        _ => Change::Insignificant,
    };
    SpeedComparison {
        comparable: criteria.nps_comparable,
        pairing,
        nps_change_pct: cost_ratio.map(|estimate| percent_change(1.0 / estimate.estimate)),
        cost_ratio,
        round_ratios,
        nps_ratio: Some(b_summary.nps.median / a_summary.nps.median),
        change,
    }
}

/// Repeats A's runs cyclically to pair with each of B's; a no-op when both ran equally often.
fn cycle_to(rows: Vec<Vec<f64>>, count: usize) -> Vec<Vec<f64>> {
    if rows.is_empty() {
        return rows;
    }
    (0..count).map(|i| rows[i % rows.len()].clone()).collect()
}

fn compare_instructions(
    a: &Measurement,
    b: &Measurement,
    signature_changed: bool,
    criteria: &Criteria,
    thresholds: Thresholds,
) -> InstructionsComparison {
    // Counts taken at different depths measure different searches: not comparable.
    let totals = match (measured(&a.instructions), measured(&b.instructions)) {
        (Some((a_depth, a_total)), Some((b_depth, b_total))) if a_depth == b_depth => {
            Some(b_total as f64 / a_total.max(1) as f64)
        }
        _ => None,
    };
    let per_node_ratio = match (a.instructions.per_node(), b.instructions.per_node()) {
        (Some(a), Some(b)) if totals.is_some() => Some(b / a),
        _ => None,
    };
    let change_pct = per_node_ratio.map(percent_change);
    let flagged = change_pct.is_some_and(|pct| pct.abs() >= thresholds.instr_threshold_pct);
    // Same search and same toolchain: extra instructions per node can only be extra work.
    let change = match change_pct {
        Some(pct) if flagged && !signature_changed && criteria.toolchain_comparable => {
            if pct > 0.0 {
                Change::Regression
            } else {
                Change::Improvement
            }
        }
        _ => Change::Insignificant,
    };
    InstructionsComparison {
        comparable: criteria.toolchain_comparable,
        total_ratio: totals,
        per_node_ratio,
        per_node_change_pct: change_pct,
        flagged,
        change,
    }
}

/// Depth and total of a measured instruction count.
fn measured(instructions: &Instructions) -> Option<(Option<u32>, u64)> {
    match instructions {
        Instructions::Measured { depth, total, .. } => Some((*depth, *total)),
        Instructions::Skipped { .. } => None,
    }
}

fn eval_deltas(a: &EvalSummary, b: &EvalSummary) -> EvalDeltas {
    EvalDeltas {
        rates_pp: b.rates.minus_in_points(&a.rates),
        by_material_bucket: a
            .by_material_bucket
            .iter()
            .zip(&b.by_material_bucket)
            .map(|(a, b)| BucketDelta {
                bucket: a.bucket,
                rates_pp: b.rates.minus_in_points(&a.rates),
            })
            .collect(),
        by_search: match (&a.by_search, &b.by_search) {
            (Some(a), Some(b)) => Some(SearchSplitDeltas {
                quiescence_share_of_tier_pp: b
                    .quiescence
                    .share_of_tier
                    .minus_in_points(&a.quiescence.share_of_tier),
                quiescence_share_of_all_pp: (b.quiescence.share_of_all - a.quiescence.share_of_all)
                    * 100.0,
            }),
            _ => None,
        },
    }
}

impl Comparison {
    /// This comparison's timings with `first`'s instruction counts, for a verdict that measures
    /// the speed again with more rounds but counts instructions once (they are exact): every
    /// part that reads the counts (the judgement, each side's count, their figures, notes and
    /// warnings, the function movers) is `first`'s, and the overall change follows from both.
    pub(crate) fn with_instructions_of(mut self, first: &Comparison) -> Comparison {
        let of_instructions = |kind: FigureKind| {
            matches!(
                kind,
                FigureKind::Instructions | FigureKind::InstructionsPerNode
            )
        };
        self.instructions = first.instructions.clone();
        self.a.instructions = first.a.instructions.clone();
        self.b.instructions = first.b.instructions.clone();
        for figure in &mut self.figures {
            if let Some(counted) = first
                .figures
                .iter()
                .find(|counted| of_instructions(counted.figure) && counted.figure == figure.figure)
            {
                *figure = counted.clone();
            }
        }
        self.notes
            .retain(|note| !matches!(note, Note::Instructions { .. }));
        self.notes.extend(
            first
                .notes
                .iter()
                .filter(|note| matches!(note, Note::Instructions { .. }))
                .cloned(),
        );
        self.warnings
            .retain(|warning| *warning != Warning::InstructionDepthsDiffer);
        if first.warnings.contains(&Warning::InstructionDepthsDiffer) {
            self.warnings.push(Warning::InstructionDepthsDiffer);
        }
        self.functions = first.functions.clone();
        self.change = overall_change(self.speed.change, self.instructions.change);
        self.regression = self.change == Change::Regression;
        self
    }
}

/// Any regression wins; otherwise any improvement is reported.
fn overall_change(speed: Change, instructions: Change) -> Change {
    if speed == Change::Regression || instructions == Change::Regression {
        Change::Regression
    } else if speed == Change::Improvement || instructions == Change::Improvement {
        Change::Improvement
    } else {
        Change::Insignificant
    }
}

fn notes(
    a: &Measurement,
    b: &Measurement,
    signature: &SignatureComparison,
    speed: &SpeedComparison,
    instructions: &InstructionsComparison,
    criteria: &Criteria,
) -> Vec<Note> {
    let mut notes = Vec::new();
    if criteria.same_binary {
        notes.push(Note::SameBinaryNodeRatio {
            a_nodes: signature.a,
            b_nodes: signature.b,
        });
    }
    if !criteria.paired_in_time {
        notes.extend(drift_note(a, b, signature, speed, instructions));
    }
    for (side, measurement) in [(Side::A, a), (Side::B, b)] {
        if let Instructions::Measured {
            note: Some(note), ..
        } = &measurement.instructions
        {
            notes.push(Note::Instructions {
                side,
                note: note.clone(),
            });
        }
    }
    notes
}

fn warnings(
    signature: &SignatureComparison,
    speed: &SpeedComparison,
    instructions: &InstructionsComparison,
    a: &SideSummary,
    b: &SideSummary,
    criteria: &Criteria,
) -> Vec<Warning> {
    let mut warnings = Vec::new();
    if signature.changed && !criteria.same_binary {
        warnings.push(Warning::SignatureChanged {
            a_label: a.label.clone(),
            a_nodes: signature.a,
            b_label: b.label.clone(),
            b_nodes: signature.b,
            change_pct: signature.change_pct,
        });
    }
    if a.depth != b.depth {
        warnings.push(Warning::DepthsDiffer {
            a_label: a.label.clone(),
            a_depth: a.depth,
            b_label: b.label.clone(),
            b_depth: b.depth,
        });
    }
    if !criteria.nps_comparable {
        warnings.push(Warning::NpsNotComparable {
            differences: criteria.machine_differences.clone(),
        });
    }
    if !criteria.machine_unknown.is_empty() {
        warnings.push(Warning::MachineUnknown {
            settings: criteria.machine_unknown.clone(),
        });
    }
    if let Some(estimate) = &speed.cost_ratio {
        if estimate.rounds < MIN_ROUNDS_FOR_CI {
            warnings.push(Warning::TooFewRounds {
                rounds: estimate.rounds,
                df: estimate.df,
            });
        }
    }
    if !criteria.toolchain_comparable {
        warnings.push(Warning::ToolchainDiffers);
    }
    if speed.pairing == Pairing::PerRun {
        warnings.push(Warning::PositionListsDiffer);
    }
    if a.instructions.measured && b.instructions.measured && instructions.per_node_ratio.is_none() {
        warnings.push(Warning::InstructionDepthsDiffer);
    }
    warnings
}

/// `ratio` 1.03 → +3.0 (percent).
pub(crate) fn percent_change(ratio: f64) -> f64 {
    (ratio - 1.0) * 100.0
}

/// For tests: the shipped baseline's measurement (A, "baseline main") compared with a copy of it
/// (B, "revision") that `change` alters, at 6 rounds and depth 6.
#[cfg(test)]
pub(crate) fn baseline_against_a_copy(
    kind: Kind,
    thresholds: Thresholds,
    criteria: Criteria,
    change: impl FnOnce(&mut Measurement),
) -> Comparison {
    let stored: serde_json::Value =
        serde_json::from_str(include_str!("../../../baselines/main.json")).unwrap();
    let a: Measurement = serde_json::from_value(stored["measurement"].clone()).unwrap();
    let mut b = a.clone();
    change(&mut b);
    let settings = Settings {
        rounds: 6,
        depth: None,
        instr_depth: 6,
        thresholds,
        positions: None,
    };
    compare(
        kind,
        settings,
        &Measured::new("baseline main", a),
        &Measured::new("revision", b),
        criteria,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::measure::Instructions;

    /// The shipped baseline against a copy whose runs take `factor` times as long, its
    /// instructions per node 5% higher when `more_work`.
    fn check_against_slower(kind: Kind, factor: f64, more_work: bool) -> Comparison {
        let thresholds = Thresholds {
            // `baseline check`'s default.
            threshold_pct: 15.0,
            instr_threshold_pct: 0.5,
        };
        let criteria = Criteria {
            paired_in_time: kind != Kind::BaselineCheck,
            ..Criteria::local(false)
        };
        baseline_against_a_copy(kind, thresholds, criteria, |b| {
            for run in &mut b.runs_time_ns {
                for time in run.iter_mut() {
                    *time = (*time as f64 * factor) as u64;
                }
            }
            if let (true, Instructions::Measured { total, .. }) = (more_work, &mut b.instructions) {
                *total += *total / 20;
            }
        })
    }

    #[test]
    fn timings_measured_again_keep_the_first_count_and_its_judgement() {
        let first = check_against_slower(Kind::Compare, 1.0, true);
        assert_eq!(first.instructions.change, Change::Regression);
        let again = check_against_slower(Kind::Compare, 1.0, false);
        assert_eq!(again.change, Change::Insignificant);
        let joined = again.with_instructions_of(&first);
        assert_eq!(joined.change, Change::Regression);
        assert!(joined.regression);
        let per_node = |comparison: &Comparison| {
            comparison
                .figures
                .iter()
                .find(|figure| figure.figure == FigureKind::InstructionsPerNode)
                .cloned()
        };
        assert_eq!(per_node(&joined), per_node(&first));
        assert_eq!(
            joined.b.instructions.per_node,
            first.b.instructions.per_node
        );
    }

    fn drift_noted(comparison: &Comparison) -> bool {
        comparison
            .notes
            .iter()
            .any(|note| matches!(note, Note::SittingDrift { .. }))
    }

    #[test]
    fn a_baseline_check_tells_drift_from_regression() {
        // 8% slower with the same work: within the drift allowance, and said to be possible drift.
        let drift = check_against_slower(Kind::BaselineCheck, 1.08, false);
        assert_eq!(drift.speed.change, Change::Insignificant);
        assert!(drift_noted(&drift), "{:?}", drift.notes);
        assert!(
            matches!(&drift.notes[0], Note::SittingDrift { revision, .. } if revision == "HEAD"),
            "{:?}",
            drift.notes
        );
        // 25% slower: a regression even so, still with the note (the work per node is the same).
        let slow = check_against_slower(Kind::BaselineCheck, 1.25, false);
        assert_eq!(slow.change, Change::Regression);
        assert!(drift_noted(&slow));
        // More instructions per node: real extra work, no drift note.
        let work = check_against_slower(Kind::BaselineCheck, 1.08, true);
        assert_eq!(work.change, Change::Regression);
        assert!(!drift_noted(&work), "{:?}", work.notes);
        // A paired compare measures both sides in the same rounds: no such note.
        assert!(!drift_noted(&check_against_slower(
            Kind::Compare,
            1.08,
            false
        )));
    }
}
