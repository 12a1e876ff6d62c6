//! A revision range over time: `lab history` measures each commit of a range once per machine,
//! toolchain and settings and keeps the figures in a store, and `lab bisect` finds the first
//! commit whose figures moved. This module owns which commits are visited (`range.rs`), the
//! store (`store.rs`), the bisection (`bisect.rs`) and the figures of a history; it measures
//! through `analysis::measure` and formats nothing.

pub mod bisect;
pub(crate) mod machines;
pub mod range;
pub(crate) mod steps;
pub mod store;

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use serde::Serialize;

use crate::analysis::compare::{summarize, NpsSummary, Thresholds, TierRates};
use crate::analysis::measure::{measure_single, Measurement, Plan, Subject};
use crate::engine::build::EngineBinary;
use crate::engine::revision::{resolve, Revision};
use crate::lab::Session;
use crate::machine::{Machine, Toolchain};
use crate::progress;
use crate::schema::{Kind, LAB_JSON_SCHEMA_VERSION};
use crate::side::Side;
use range::CommitInfo;
use store::{Failure, Series, SeriesSettings, Stage, Stored};

/// What `lab history` was asked for.
pub(crate) struct HistoryRequest<'a> {
    /// `A..B`.
    pub(crate) range: &'a str,
    /// Keep every Nth commit, counted back from the newest (1: all).
    pub(crate) every: usize,
    /// Keep at most the newest K after thinning.
    pub(crate) max: Option<usize>,
    /// The store's root (default `target/lab/history`).
    pub(crate) store: PathBuf,
    pub(crate) plan: &'a Plan,
    pub(crate) features: &'a [String],
    /// Build and measure again the commits stored as failed points.
    pub(crate) retry_failed: bool,
}

/// `lab history A..B`: one row per selected commit, oldest first.
#[derive(Debug, Clone, Serialize)]
pub struct HistoryReport {
    pub(crate) schema_version: u32,
    pub(crate) kind: Kind,
    pub(crate) range: String,
    pub(crate) store: String,
    /// `<machine id>-<toolchain id>-<settings id>`: the store directory of these figures.
    pub(crate) series: String,
    pub(crate) machine_id: String,
    pub(crate) toolchain_id: String,
    pub(crate) settings_id: String,
    pub(crate) settings: SeriesSettings,
    /// The machine of this series (what `machine_id` hashes).
    pub(crate) machine: Machine,
    /// NPS per machine: this machine's line first, then every other machine of the store with
    /// the same toolchain and settings that measured some of these commits.
    pub(crate) machines: Vec<machines::MachineLine>,
    /// Commits on the range's first-parent line, before thinning.
    pub(crate) commits_in_range: usize,
    /// Commits measured by this run.
    pub(crate) measured: usize,
    /// Commits whose figures came from the store.
    pub(crate) from_store: usize,
    /// Commits of this run that were built but not measured: their binary is another
    /// commit's, whose measurement they share (counted in neither `measured` nor `from_store`).
    pub(crate) shared_now: usize,
    /// The measured commits, oldest first.
    pub(crate) rows: Vec<HistoryRow>,
    /// The selected commits that could not be built or measured (now or by an earlier run),
    /// oldest first; `rows` and these together are the selection.
    pub(crate) failed: Vec<FailedRow>,
    /// Changes of level beyond the noise between neighbouring segments, oldest first, NPS
    /// then instructions per node (`steps.rs`).
    pub(crate) steps: Vec<Step>,
}

/// Which figure of the rows a step is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum StepMetric {
    Nps,
    InstructionsPerNode,
}

impl StepMetric {
    /// The `lab bisect --metric` that looks for it.
    pub(crate) fn bisect_metric(self) -> bisect::Metric {
        match self {
            StepMetric::Nps => bisect::Metric::Nps,
            StepMetric::InstructionsPerNode => bisect::Metric::Instructions,
        }
    }

    /// The least change that counts: compare's default thresholds, which `lab bisect` also uses
    /// by default.
    pub(crate) fn threshold_pct(self) -> f64 {
        match self {
            StepMetric::Nps => Thresholds::DEFAULT.threshold_pct,
            StepMetric::InstructionsPerNode => Thresholds::DEFAULT.instr_threshold_pct,
        }
    }
}

/// A change of level in the history, between the last commit of one segment and the first of
/// the next.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Step {
    pub(crate) metric: StepMetric,
    /// The last commit at the old level and the first at the new one (other commits of the range
    /// may lie between them when the history was thinned).
    pub(crate) before: CommitInfo,
    pub(crate) after: CommitInfo,
    /// The segments' levels: noise-weighted means of their commits' figures.
    pub(crate) level_before: f64,
    pub(crate) level_after: f64,
    pub(crate) change_pct: f64,
    /// Slower (NPS down) or more instructions per node (up).
    pub(crate) regression: bool,
    /// The command that would confirm it: `lab bisect` for a regression (it finds the first
    /// commit beyond the threshold), `lab compare` of the two commits for an improvement.
    pub(crate) confirm: String,
}

/// A selected commit that could not be built or measured.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct FailedRow {
    /// Its place among the selected commits, oldest first (0-based).
    pub(crate) position: usize,
    pub(crate) commit: CommitInfo,
    pub(crate) stage: Stage,
    /// The end of the error (at most `store::FAILURE_TAIL_BYTES` bytes).
    pub(crate) error: String,
    /// True when this run tried it, false when the store had it as a failed point.
    pub(crate) failed_now: bool,
    pub(crate) failed_unix: u64,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct HistoryRow {
    pub(crate) commit: CommitInfo,
    pub(crate) signature: u64,
    /// The signature differs from the previous row's (false on the first row).
    pub(crate) signature_changed: bool,
    pub(crate) nps: NpsSummary,
    /// `None` when instructions were not counted (see `instructions_skipped`).
    pub(crate) instructions_per_node: Option<f64>,
    pub(crate) instructions_skipped: Option<String>,
    /// Shares of eval calls by exit tier; `None` for an engine that does not report them.
    pub(crate) eval_rates: Option<TierRates>,
    /// True when the figures were measured by this run, false when read from the store or
    /// shared.
    pub(crate) measured_now: bool,
    /// The earlier commit of the selection built into the same engine binary (the build cache's
    /// key), whose measurement this row shows: one binary, one measurement.
    pub(crate) same_binary_as: Option<String>,
    /// When the figures were measured (Unix seconds), as the store records it.
    pub(crate) measured_unix: u64,
}

/// The settings of a series as the store keys them.
pub(crate) fn series_settings(
    session: &Session,
    plan: &Plan,
    features: &[String],
) -> SeriesSettings {
    let mut features = features.to_vec();
    features.sort();
    features.dedup();
    SeriesSettings {
        engine: session.engine().name().to_string(),
        depth: plan.depth,
        rounds: plan.rounds,
        instr_depth: plan.instr_depth,
        instructions: plan.instructions,
        features,
        engine_definition: session.engine().definition(&session.paths().workdir),
    }
}

/// A commit as a revision of the lab, named in reports by its short id.
pub(crate) fn revision_of(session: &Session, commit: &CommitInfo) -> Result<Revision> {
    let mut revision = resolve(session.repo(), &commit.id, session.paths())?;
    revision.spec = commit.short.clone();
    Ok(revision)
}

/// Measures the commits of the range that the store lacks and reads the others from it.
pub(crate) fn history(session: &Session, request: &HistoryRequest) -> Result<HistoryReport> {
    let repo = session.repo();
    let (from, to) = range::parse_range(request.range)?;
    let (from_id, to_id) = (range::commit_of(repo, &from)?, range::commit_of(repo, &to)?);
    let all = range::first_parent_range(repo, from_id, to_id)?;
    if all.is_empty() {
        bail!(
            "the range {} is empty: {to} is {from} or one of its ancestors",
            request.range
        );
    }
    let selected = range::thin(&all, request.every, request.max);
    let commits = selected
        .iter()
        .map(|oid| CommitInfo::read(repo, *oid))
        .collect::<Result<Vec<_>>>()?;
    let series = Series::new(
        &request.store,
        Machine::current(),
        Toolchain::current(&session.paths().workdir)?,
        series_settings(session, request.plan, request.features),
    );
    let progress = session.progress();
    let mut points = Points::stored(&series, &commits, request.retry_failed);
    let stored_failures = points.failures.iter().flatten().count();
    let missing = points.measurements.iter().filter(|m| m.is_none()).count() - stored_failures;
    progress.line(&format!(
        "history {}: {} commits selected of {}, {missing} to measure, {} stored, {} failed \
         before ({})",
        request.range,
        commits.len(),
        all.len(),
        commits.len() - missing - stored_failures,
        stored_failures,
        series.dir.display()
    ));
    points.measure_missing(session, &series, &commits, request, missing)?;
    let (measured, shared_now) = (points.measured_now, points.shared_now);
    let (rows, failed) = points.rows(commits)?;
    let steps = history_steps(&rows, request.plan);
    let mut warnings = Vec::new();
    let nps: Vec<f64> = rows.iter().map(|row| row.nps.median).collect();
    let infos: Vec<CommitInfo> = rows.iter().map(|row| row.commit.clone()).collect();
    let machines = machines::machine_lines(&series, &infos, &nps, &mut warnings);
    for warning in warnings {
        progress::warning(&format!("warning: {warning}; left out of NPS per machine"));
    }
    Ok(HistoryReport {
        schema_version: LAB_JSON_SCHEMA_VERSION,
        kind: Kind::History,
        range: request.range.to_string(),
        store: request.store.display().to_string(),
        series: series.name,
        machine_id: series.machine_id,
        toolchain_id: series.toolchain_id,
        settings_id: series.settings_id,
        settings: series.settings,
        machine: series.machine,
        machines,
        commits_in_range: all.len(),
        measured,
        from_store: rows.len() - measured - shared_now,
        shared_now,
        rows,
        failed,
        steps,
    })
}

/// Each selected commit's point, by position: its measurement with the time it was taken, or
/// its failure.
struct Points {
    measurements: Vec<Option<(Measurement, u64)>>,
    /// A failure, and whether it happened in this run.
    failures: Vec<Option<(Failure, bool)>>,
    /// Whether the commit was measured in this run.
    fresh: Vec<bool>,
    /// Commits measured in this run.
    measured_now: usize,
    /// Commits that took, in this run, the measurement of an earlier commit's identical binary.
    shared_now: usize,
}

impl Points {
    /// What the store holds for `commits`; a failure stored before counts unless `retry_failed`,
    /// and an entry the store cannot use is measured again.
    fn stored(series: &Series, commits: &[CommitInfo], retry_failed: bool) -> Points {
        let mut failures: Vec<Option<(Failure, bool)>> = vec![None; commits.len()];
        let mut measurements = Vec::with_capacity(commits.len());
        for (index, commit) in commits.iter().enumerate() {
            measurements.push(match series.load(&commit.id) {
                Stored::Found(entry) => Some((entry.measurement, entry.measured_unix)),
                Stored::Failed(failure) if !retry_failed => {
                    failures[index] = Some((*failure, false));
                    None
                }
                Stored::Failed(_) | Stored::Missing => None,
                Stored::Unusable(why) => {
                    progress::warning(&format!("warning: {why}; measuring {} again", commit.short));
                    None
                }
            });
        }
        Points {
            measurements,
            failures,
            fresh: vec![false; commits.len()],
            measured_now: 0,
            shared_now: 0,
        }
    }

    /// Builds and measures every commit with neither a measurement nor a failure (`missing` of
    /// them), storing each result; a commit whose binary an earlier point measured shares that
    /// measurement, and a commit that fails is stored as a failed point and the run goes on.
    fn measure_missing(
        &mut self,
        session: &Session,
        series: &Series,
        commits: &[CommitInfo],
        request: &HistoryRequest,
        missing: usize,
    ) -> Result<()> {
        let progress = session.progress();
        let started = Instant::now();
        let mut tried = 0usize;
        // The first commit holding each binary's measurement, stored or measured now.
        let mut by_binary: HashMap<String, usize> = HashMap::new();
        for (index, measurement) in self.measurements.iter().enumerate() {
            if let Some((measurement, _)) = measurement {
                by_binary
                    .entry(measurement.revision.binary_key.clone())
                    .or_insert(index);
            }
        }
        for (index, commit) in commits.iter().enumerate() {
            if self.measurements[index].is_some() || self.failures[index].is_some() {
                continue;
            }
            progress.line(&format!(
                "[{}/{missing}] {} {}{}",
                tried + 1,
                commit.short,
                commit.subject,
                eta(started.elapsed(), tried, missing)
            ));
            tried += 1;
            let built = build_commit(session, commit, request);
            if let Ok((_, binary)) = &built {
                if let Some(&source) = by_binary.get(&binary.key) {
                    if let Some((measurement, _)) = self.measurements[source].clone() {
                        progress.line(&format!(
                            "{} is the engine binary of {} ({}): sharing its measurement",
                            commit.short,
                            commits[source].short,
                            crate::input::short_key(&binary.key)
                        ));
                        // Stored under this commit too, so a later run neither builds nor
                        // measures it.
                        let entry = series.save(&commit.id, &measurement)?;
                        self.measurements[index] = Some((measurement, entry.measured_unix));
                        self.shared_now += 1;
                        continue;
                    }
                }
            }
            match built.and_then(|(revision, binary)| {
                measure_built(session, commit, &revision, &binary, request)
                    .map(|measurement| (measurement, binary.key))
            }) {
                Ok((measurement, key)) => {
                    by_binary.entry(key).or_insert(index);
                    let entry = series.save(&commit.id, &measurement)?;
                    self.measurements[index] = Some((measurement, entry.measured_unix));
                    self.fresh[index] = true;
                    self.measured_now += 1;
                }
                Err((stage, error)) => {
                    let error = format!("{error:#}");
                    let failure = series.save_failure(&commit.id, stage, &error)?;
                    progress::warning(&format!(
                        "warning: {} failed to {}; stored as a failed point, going on \
                         (--retry-failed tries it again): {}",
                        commit.short,
                        stage.name(),
                        last_line(&error)
                    ));
                    self.failures[index] = Some((failure, true));
                }
            }
        }
        Ok(())
    }

    /// The table's rows and failed rows, in `commits`' order. One binary, one measurement: a
    /// commit shows the first selected commit's figures of its binary, also when an older
    /// store measured both.
    fn rows(self, commits: Vec<CommitInfo>) -> Result<(Vec<HistoryRow>, Vec<FailedRow>)> {
        let mut first_of_binary: HashMap<String, usize> = HashMap::new();
        let mut same_binary: Vec<Option<usize>> = vec![None; commits.len()];
        for (index, measurement) in self.measurements.iter().enumerate() {
            if let Some((measurement, _)) = measurement {
                let first = *first_of_binary
                    .entry(measurement.revision.binary_key.clone())
                    .or_insert(index);
                if first != index {
                    same_binary[index] = Some(first);
                }
            }
        }
        let shared_measurements: Vec<Option<(Measurement, u64)>> = same_binary
            .iter()
            .map(|first| first.and_then(|first| self.measurements[first].clone()))
            .collect();
        let shorts: Vec<String> = commits.iter().map(|commit| commit.short.clone()).collect();
        let mut rows: Vec<HistoryRow> = Vec::with_capacity(commits.len());
        let mut failed: Vec<FailedRow> = Vec::new();
        for (position, ((((commit, measurement), measured_now), failure), shared)) in commits
            .into_iter()
            .zip(self.measurements)
            .zip(self.fresh)
            .zip(self.failures)
            .zip(shared_measurements)
            .enumerate()
        {
            if let Some((failure, failed_now)) = failure {
                failed.push(FailedRow {
                    position,
                    commit,
                    stage: failure.stage,
                    error: failure.error,
                    failed_now,
                    failed_unix: failure.failed_unix,
                });
                continue;
            }
            let same_binary_as = same_binary[position].map(|first| shorts[first].clone());
            let Some((measurement, measured_unix)) = shared.or(measurement) else {
                bail!("{} was neither stored nor measured", commit.short);
            };
            let summary = summarize(&commit.short, &measurement);
            let signature_changed = rows
                .last()
                .is_some_and(|previous| previous.signature != summary.signature);
            rows.push(HistoryRow {
                commit,
                signature: summary.signature,
                signature_changed,
                nps: summary.nps,
                instructions_per_node: summary.instructions.per_node,
                instructions_skipped: summary.instructions.skipped_reason,
                eval_rates: summary.eval.map(|eval| eval.rates),
                measured_now: measured_now && same_binary_as.is_none(),
                measured_unix,
                same_binary_as,
            });
        }
        Ok((rows, failed))
    }
}

/// The steps of the rows' NPS and instructions per node, each with the command confirming it.
fn history_steps(rows: &[HistoryRow], plan: &Plan) -> Vec<Step> {
    let mut found = Vec::new();
    for metric in [StepMetric::Nps, StepMetric::InstructionsPerNode] {
        // Rows with the figure, and where each sits among the rows.
        let (indices, points): (Vec<usize>, Vec<steps::Point>) = rows
            .iter()
            .enumerate()
            .filter_map(|(index, row)| {
                let point = match metric {
                    StepMetric::Nps => steps::Point {
                        value: row.nps.median,
                        low: row.nps.min,
                        high: row.nps.max,
                    },
                    StepMetric::InstructionsPerNode => {
                        let value = row.instructions_per_node?;
                        steps::Point {
                            value,
                            low: value,
                            high: value,
                        }
                    }
                };
                Some((index, point))
            })
            .unzip();
        for change in steps::detect(&points, metric.threshold_pct()) {
            let (before, after) = (&rows[indices[change.before]], &rows[indices[change.after]]);
            let change_pct = change.percent();
            let regression = match metric {
                StepMetric::Nps => change_pct < 0.0,
                StepMetric::InstructionsPerNode => change_pct > 0.0,
            };
            found.push(Step {
                metric,
                before: before.commit.clone(),
                after: after.commit.clone(),
                level_before: change.level_before,
                level_after: change.level_after,
                change_pct,
                regression,
                confirm: confirm_command(metric, regression, &before.commit, &after.commit, plan),
            });
        }
    }
    found
}

/// `lab bisect BEFORE AFTER --metric M` with the history's measurement settings, or for an
/// improvement (which bisect, a regression finder, does not judge) `lab compare BEFORE AFTER`.
fn confirm_command(
    metric: StepMetric,
    regression: bool,
    before: &CommitInfo,
    after: &CommitInfo,
    plan: &Plan,
) -> String {
    let depth = plan
        .depth
        .map_or_else(String::new, |depth| format!(" --depth {depth}"));
    if regression {
        let settings = match metric {
            StepMetric::Nps => format!(" --rounds {}{depth}", plan.rounds),
            StepMetric::InstructionsPerNode => format!(" --instr-depth {}", plan.instr_depth),
        };
        format!(
            "lab bisect {} {} --metric {}{settings}",
            before.short,
            after.short,
            metric.bisect_metric().name()
        )
    } else {
        format!(
            "lab compare {} {} --rounds {}{depth}",
            before.short, after.short, plan.rounds
        )
    }
}

/// An error of a commit, with whether its build or its measurement failed.
type StageError = (Stage, anyhow::Error);

/// Builds one commit (from the build cache when it has the binary).
fn build_commit(
    session: &Session,
    commit: &CommitInfo,
    request: &HistoryRequest,
) -> std::result::Result<(Revision, EngineBinary), StageError> {
    let revision = revision_of(session, commit).map_err(|error| (Stage::Build, error))?;
    let binary = session
        .build(&revision, request.features)
        .map_err(|error| (Stage::Build, error))?;
    Ok((revision, binary))
}

/// Measures one built commit.
fn measure_built(
    session: &Session,
    commit: &CommitInfo,
    revision: &Revision,
    binary: &EngineBinary,
    request: &HistoryRequest,
) -> std::result::Result<Measurement, StageError> {
    let subject = Subject::new(Side::A, commit.short.clone(), revision, binary);
    measure_single(&subject, request.plan, session.paths(), session.progress())
        .map(|measured| measured.measurement)
        .map_err(|error| (Stage::Measure, error))
}

/// The last non-empty line of an error, for one-line messages.
pub(crate) fn last_line(error: &str) -> &str {
    error
        .lines()
        .rev()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or("")
}

/// `, ETA 1m20s` once a commit has been measured: the mean time per commit so far times the
/// commits left.
fn eta(elapsed: Duration, done: usize, total: usize) -> String {
    progress::eta(elapsed, done as u64, total as u64)
        .map(|left| format!(", ETA {}", crate::digits::format_duration(left)))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eta_extrapolates_the_mean_commit() {
        assert_eq!(eta(Duration::from_secs(10), 0, 5), "");
        assert_eq!(eta(Duration::from_secs(10), 2, 5), ", ETA 15s");
        assert_eq!(eta(Duration::from_secs(100), 1, 3), ", ETA 3m20s");
    }
}
