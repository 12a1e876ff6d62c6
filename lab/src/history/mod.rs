//! A revision range over time: `lab history` measures each commit of a range once per machine,
//! toolchain and settings and keeps the figures in a store, and `lab bisect` finds the first
//! commit whose figures moved. This module owns which commits are visited (`range.rs`), the
//! store (`store.rs`), the bisection (`bisect.rs`) and the figures of a history; it measures
//! through `analysis::measure` and formats nothing.

pub mod bisect;
pub mod machines;
pub mod range;
pub mod store;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use serde::Serialize;

use crate::analysis::compare::{summarize, NpsSummary, TierRates};
use crate::analysis::measure::{measure_single, Measurement, Plan, Side, Subject};
use crate::engine::revision::{resolve, Revision};
use crate::lab::Session;
use crate::machine::{Machine, Toolchain};
use crate::schema::{Kind, LAB_JSON_SCHEMA_VERSION};
use range::CommitInfo;
use store::{Series, SeriesSettings, Stored};

/// What `lab history` was asked for.
pub struct HistoryRequest<'a> {
    /// `A..B`.
    pub range: &'a str,
    /// Keep every Nth commit, counted back from the newest (1: all).
    pub every: usize,
    /// Keep at most the newest K after thinning.
    pub max: Option<usize>,
    /// The store's root (default `target/lab/history`).
    pub store: PathBuf,
    pub plan: &'a Plan,
    pub features: &'a [String],
}

/// `lab history A..B`: one row per selected commit, oldest first.
#[derive(Debug, Clone, Serialize)]
pub struct HistoryReport {
    pub schema_version: u32,
    pub kind: Kind,
    pub range: String,
    pub store: String,
    /// `<machine id>-<toolchain id>-<settings id>`: the store directory of these figures.
    pub series: String,
    pub machine_id: String,
    pub toolchain_id: String,
    pub settings_id: String,
    pub settings: SeriesSettings,
    /// The machine of this series (what `machine_id` hashes).
    pub machine: Machine,
    /// NPS per machine: this machine's line first, then every other machine of the store with
    /// the same toolchain and settings that measured some of these commits.
    pub machines: Vec<machines::MachineLine>,
    /// Commits on the range's first-parent line, before thinning.
    pub commits_in_range: usize,
    /// Commits measured by this run.
    pub measured: usize,
    /// Commits whose figures came from the store.
    pub from_store: usize,
    pub rows: Vec<HistoryRow>,
}

#[derive(Debug, Clone, Serialize)]
pub struct HistoryRow {
    pub commit: CommitInfo,
    pub signature: u64,
    /// The signature differs from the previous row's (false on the first row).
    pub signature_changed: bool,
    pub nps: NpsSummary,
    /// `None` when instructions were not counted (see `instructions_skipped`).
    pub instructions_per_node: Option<f64>,
    pub instructions_skipped: Option<String>,
    /// Shares of eval calls by exit tier; `None` for an engine that does not report them.
    pub eval_rates: Option<TierRates>,
    /// True when the figures were measured by this run, false when read from the store.
    pub measured_now: bool,
    /// When the figures were measured (Unix seconds), as the store records it.
    pub measured_unix: u64,
}

/// The settings of a series as the store keys them.
pub fn series_settings(session: &Session, plan: &Plan, features: &[String]) -> SeriesSettings {
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
    }
}

/// A commit as a revision of the lab, named in reports by its short id.
pub fn revision_of(session: &Session, commit: &CommitInfo) -> Result<Revision> {
    let mut revision = resolve(session.repo(), &commit.id, session.paths())?;
    revision.spec = commit.short.clone();
    Ok(revision)
}

/// Measures the commits of the range that the store lacks and reads the others from it.
pub fn history(session: &Session, request: &HistoryRequest) -> Result<HistoryReport> {
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
    let mut measurements: Vec<Option<(Measurement, u64)>> = Vec::with_capacity(commits.len());
    for commit in &commits {
        measurements.push(match series.load(&commit.id) {
            Stored::Found(entry) => Some((entry.measurement, entry.measured_unix)),
            Stored::Missing => None,
            Stored::Unusable(why) => {
                progress.line(&format!("warning: {why}; measuring {} again", commit.short));
                None
            }
        });
    }
    let missing = measurements.iter().filter(|m| m.is_none()).count();
    progress.line(&format!(
        "history {}: {} commits selected of {}, {missing} to measure, {} stored ({})",
        request.range,
        commits.len(),
        all.len(),
        commits.len() - missing,
        series.dir.display()
    ));
    let started = Instant::now();
    let mut done = 0usize;
    let mut fresh = vec![false; commits.len()];
    for (index, commit) in commits.iter().enumerate() {
        if measurements[index].is_some() {
            continue;
        }
        progress.line(&format!(
            "[{}/{missing}] {} {}{}",
            done + 1,
            commit.short,
            commit.subject,
            eta(started.elapsed(), done, missing)
        ));
        let revision = revision_of(session, commit)?;
        let binary = session.build(&revision, request.features)?;
        let subject = Subject::new(Side::A, commit.short.clone(), &revision, &binary);
        let measured = measure_single(&subject, request.plan, session.paths(), progress)?;
        let entry = series.save(&commit.id, &measured.measurement)?;
        measurements[index] = Some((measured.measurement, entry.measured_unix));
        fresh[index] = true;
        done += 1;
    }
    let mut rows: Vec<HistoryRow> = Vec::with_capacity(commits.len());
    for ((commit, measurement), measured_now) in commits.into_iter().zip(measurements).zip(fresh) {
        let Some((measurement, measured_unix)) = measurement else {
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
            measured_now,
            measured_unix,
        });
    }
    let mut warnings = Vec::new();
    let nps: Vec<f64> = rows.iter().map(|row| row.nps.median).collect();
    let infos: Vec<CommitInfo> = rows.iter().map(|row| row.commit.clone()).collect();
    let machines = machines::machine_lines(&series, &infos, &nps, &mut warnings);
    for warning in warnings {
        progress.line(&format!("warning: {warning}; left out of NPS per machine"));
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
        measured: done,
        from_store: rows.len() - done,
        rows,
    })
}

/// `, ETA 1m 20s` once a commit has been measured: the mean time per commit so far times the
/// commits left.
fn eta(elapsed: Duration, done: usize, total: usize) -> String {
    if done == 0 {
        return String::new();
    }
    let left = elapsed.as_secs_f64() / done as f64 * (total - done) as f64;
    let seconds = left.round() as u64;
    if seconds >= 60 {
        format!(", ETA {}m {:02}s", seconds / 60, seconds % 60)
    } else {
        format!(", ETA {seconds}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eta_extrapolates_the_mean_commit() {
        assert_eq!(eta(Duration::from_secs(10), 0, 5), "");
        assert_eq!(eta(Duration::from_secs(10), 2, 5), ", ETA 15s");
        assert_eq!(eta(Duration::from_secs(100), 1, 3), ", ETA 3m 20s");
    }
}
