//! Reports: the only place that formats for a reader. Each section (comparison, bench,
//! baseline, match, calibration, history, bisect, tune, profile, verdict) is one function over
//! a [`Style`], so terminal and markdown say the same in the same order; JSON serialises the
//! report, and `--export-json` and `--export-markdown` write the same report beside stdout.

pub(crate) mod bench;
pub(crate) mod bisect;
pub mod calibration;
pub(crate) mod comparison;
pub(crate) mod cutechess;
pub(crate) mod eval_exits;
pub(crate) mod fastchess;
pub(crate) mod findings;
pub(crate) mod frontier;
pub(crate) mod functions;
pub(crate) mod history;
pub mod html;
pub(crate) mod json;
pub(crate) mod markdown;
pub(crate) mod matches;
pub(crate) mod pool;
pub(crate) mod profile;
pub(crate) mod sanitize;
pub(crate) mod style;
pub mod table;
pub(crate) mod terminal;
pub(crate) mod tune;
pub(crate) mod verdict;

use std::path::Path;

use anyhow::Result;
use serde::Serialize;

use crate::analysis::compare::{Comparison, Settings, SideSummary};
use crate::analysis::measure::RevisionRecord;
use crate::analysis::stats::Change;
use crate::digits::{signed, thousands};
use crate::games::summary::WiderNpsInterval;
use crate::machine::{Machine, Toolchain};
use crate::schema::Kind;
use style::Style;

/// `lab bench REV`.
#[derive(Debug, Clone, Serialize)]
pub struct BenchOutput {
    pub schema_version: u32,
    pub kind: Kind,
    pub settings: Settings,
    pub revision: SideSummary,
    /// `--check-commit`: the signature against the commit message's last `Bench: N`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit_bench: Option<CommitBench>,
}

/// The bench number a commit message states (OpenBench's convention) and what was measured.
#[derive(Debug, Clone, Serialize)]
pub struct CommitBench {
    pub commit: String,
    /// The number of the message's last `Bench: N`.
    pub stated: u64,
    /// The signature measured.
    pub measured: u64,
    pub matches: bool,
}

impl CommitBench {
    /// One line for a reader.
    pub(crate) fn describe(&self) -> String {
        if self.matches {
            format!(
                "commit bench: {} states Bench: {}, the signature measured: {} (match)",
                crate::input::short_commit(&self.commit),
                self.stated,
                self.measured
            )
        } else {
            format!(
                "commit bench MISMATCH: {} states Bench: {}, but the signature measured is {}",
                crate::input::short_commit(&self.commit),
                self.stated,
                self.measured
            )
        }
    }
}

/// `lab baseline show NAME`.
#[derive(Debug, Clone, Serialize)]
pub struct BaselineOutput {
    pub schema_version: u32,
    pub kind: Kind,
    pub name: String,
    pub created_unix: u64,
    pub machine: Machine,
    pub toolchain: Toolchain,
    pub settings: Settings,
    pub revision: SideSummary,
}

/// `lab compare A B` where A and B resolve to one engine binary: nothing was measured.
#[derive(Debug, Clone, Serialize)]
pub struct SameBinaryOutput {
    pub(crate) schema_version: u32,
    pub(crate) kind: Kind,
    pub(crate) a: RevisionRecord,
    pub(crate) b: RevisionRecord,
    /// The build cache key both resolve to.
    pub(crate) binary_key: String,
    /// Always false: `--force` measures them as a comparison (an A/A run) instead.
    pub(crate) measured: bool,
    #[serde(rename = "verdict")]
    pub(crate) change: Change,
    pub(crate) regression: bool,
}

/// The one line of a comparison of one binary with itself.
pub(crate) fn same_binary_line(output: &SameBinaryOutput, style: Style) -> String {
    let name = |revision: &RevisionRecord| {
        let id = revision.commit.as_deref().unwrap_or(&revision.tree);
        format!(
            "{} ({})",
            style.code(&revision.spec),
            crate::input::short_commit(id)
        )
    };
    same_binary_sentence(&name(&output.a), &name(&output.b), &output.binary_key)
}

/// `A = … and B = … resolve to the same engine binary …`, as every format says it.
pub(crate) fn same_binary_sentence(a: &str, b: &str, binary_key: &str) -> String {
    format!(
        "A = {a} and B = {b} resolve to the same engine binary {}: not measured (exit 0; \
         --force measures them as an A/A run).",
        crate::input::short_key(binary_key)
    )
}

/// Everything a command can report.
pub enum Report {
    /// `lab compare`, `lab tiers`, `lab baseline check`.
    Comparison(Box<Comparison>),
    Bench(Box<BenchOutput>),
    Baseline(Box<BaselineOutput>),
    Profile(Box<crate::profile::ProfileOutput>),
    Match(Box<crate::games::MatchReport>),
    Calibration(Box<calibration::CalibrationReport>),
    History(Box<crate::history::HistoryReport>),
    Bisect(Box<crate::history::bisect::BisectReport>),
    Tune(Box<crate::tune::TuneReport>),
    SpeedElo(Box<crate::verdict::SpeedEloReport>),
    Verdict(Box<crate::verdict::VerdictReport>),
    Frontier(Box<crate::verdict::frontier::FrontierReport>),
    SameBinary(Box<SameBinaryOutput>),
    /// The one-layout text of a command without `--format` (pool, hist, tables).
    Text(String),
}

/// How a report is laid out for its reader (`--format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Terminal,
    Json,
    Markdown,
    /// cutechess-cli's result lines (`lab match` only): `Score of`, `Elo difference`, `SPRT`.
    Cutechess,
    /// fastchess's results block (`lab match` only): `Results of`, `Elo`, `LOS`, `Games`,
    /// `Ptnml(0-2)`, `LLR`.
    Fastchess,
}

/// The report's text in `style`, before outside text is made visible (the format's `render`
/// does that): the one place that says which section each report is.
pub(crate) fn layout(report: &Report, style: Style) -> String {
    match report {
        Report::Comparison(comparison) => comparison::render(comparison, style),
        Report::Bench(bench) => bench::render_bench(bench, style),
        Report::Baseline(baseline) => bench::render_baseline(baseline, style),
        Report::Profile(output) => profile::render(output, style),
        Report::Match(report) => matches::render(report, style),
        Report::Calibration(report) => calibration::render(report, style),
        Report::History(report) => history::render(report, style),
        Report::Bisect(report) => bisect::render(report, style),
        Report::Tune(report) => tune::render(report, style),
        Report::SpeedElo(report) => verdict::render_speed_elo(report, style),
        Report::Verdict(report) => verdict::render_verdict(report, style),
        Report::Frontier(report) => frontier::render(report, style),
        Report::SameBinary(output) => format!("{}\n", same_binary_line(output, style)),
        Report::Text(text) => text.clone(),
    }
}

pub fn render(report: &Report, format: Format) -> String {
    match format {
        Format::Terminal => terminal::render(report),
        Format::Json => json::render(report),
        Format::Markdown => markdown::render(report),
        Format::Cutechess => match report {
            Report::Match(report) => cutechess::render(report),
            // Refused before the command runs (`commands::run`); laid out for a person here.
            other => terminal::render(other),
        },
        Format::Fastchess => match report {
            Report::Match(report) => fastchess::render(report),
            other => terminal::render(other),
        },
    }
}

/// Writes the report as JSON and as markdown where asked, each file whole or not at all.
pub(crate) fn export(report: &Report, json: Option<&Path>, markdown: Option<&Path>) -> Result<()> {
    if let Some(path) = json {
        crate::paths::write_atomically(path, json::render(report).as_bytes())?;
    }
    if let Some(path) = markdown {
        crate::paths::write_atomically(path, markdown::render(report).as_bytes())?;
    }
    Ok(())
}

/// Writes the report's HTML page (`--export-html`), whole or not at all.
pub(crate) fn export_html(report: &Report, path: &Path) -> Result<()> {
    crate::paths::write_atomically(path, html::render(report)?.as_bytes())
}

pub(crate) fn change_word(change: Change) -> &'static str {
    match change {
        Change::Regression => "REGRESSION",
        Change::Improvement => "improvement",
        Change::Insignificant => "no significant change",
    }
}

/// Said instead of the eval tables when an engine's bench does not report its eval exits.
pub(crate) const NO_EVAL_EXITS: &str =
    "Eval exits: not reported (only the squall bench protocol counts them).";

/// A share of no exits.
pub(crate) const NO_EXITS: &str = "—";

/// Said when `who` does not split its exits between the main search and quiescence.
pub(crate) fn no_search_split(who: &str) -> String {
    format!(
        "Eval exits by search (main, quiescence): not reported by {who} (squall's bench \
         reports them from schema_version 2)."
    )
}

fn seconds(milliseconds: f64) -> String {
    format!("{:.3} s", milliseconds / 1e3)
}

fn optional_count(value: Option<u64>) -> String {
    value.map_or_else(|| "—".to_string(), thousands)
}

fn optional_float(value: Option<f64>) -> String {
    value.map_or_else(|| "—".to_string(), |v| format!("{v:.1}"))
}

/// A signed percentage at two decimals; a value that rounds to zero prints as +0.00%, never
/// -0.00%.
pub(crate) fn signed_pct(value: f64) -> String {
    format!("{}%", signed(value, 2))
}

/// A ratio as the signed percent change it is, `+25.07%`.
pub(crate) fn ratio_change(ratio: f64) -> String {
    signed_pct((ratio - 1.0) * 100.0)
}

/// A ratio with its 95% interval as percent changes: `+25.07% (95% CI +24.01% to +26.13%)`.
pub(crate) fn ratio_change_with_ci(ratio: &crate::games::sprt::Estimate) -> String {
    format!(
        "{} (95% CI {} to {})",
        ratio_change(ratio.value),
        ratio_change(ratio.ci_low),
        ratio_change(ratio.ci_high)
    )
}

/// How the games' NPS ratio was bounded: game by game, or, when theirs was wider, by the
/// spread of runs of consecutive games or of the sittings that played them (`NpsRatioInGames`).
pub(crate) fn nps_interval_words(wider: Option<WiderNpsInterval>) -> String {
    match wider {
        Some(WiderNpsInterval::Runs(runs)) => {
            format!("bounded by {runs} runs of consecutive games (wider than game by game)")
        }
        Some(WiderNpsInterval::Sittings(sittings)) => format!(
            "bounded by the {sittings} sittings that played them (wider than game by game and \
             than runs of consecutive games)"
        ),
        None => "game by game".to_string(),
    }
}

fn signed_pp(value: f64) -> String {
    format!("{} pp", signed(value, 2))
}

fn pct(fraction: f64) -> String {
    format!("{:.1}%", fraction * 100.0)
}

/// A bench depth as the reports say it: the engine's default when it does not report one.
pub(crate) fn describe_depth(depth: Option<u32>) -> String {
    depth.map_or_else(
        || "the engine's default".to_string(),
        |depth| depth.to_string(),
    )
}

/// A revision as the titles name it: its spec and the first ten digits of its commit (or tree).
pub(crate) fn describe_revision(side: &SideSummary) -> String {
    let id = side
        .revision
        .commit
        .as_deref()
        .unwrap_or(&side.revision.tree);
    let short = crate::input::short_commit(id);
    format!("{} ({short})", side.revision.spec)
}

/// The machine a baseline was measured on, in one line; settings an older baseline did not
/// record are said to be so.
pub(crate) fn describe_machine(machine: &Machine) -> String {
    let setting = |value: &Option<String>| value.as_deref().unwrap_or("not recorded").to_string();
    format!(
        "{} ({} cores), kernel {}, transparent huge pages {}, governor {}",
        machine.cpu_model,
        machine.cores,
        setting(&machine.kernel),
        setting(&machine.transparent_hugepages),
        setting(&machine.governor)
    )
}

/// `measured_depth` is what the engine reported, which tells the depth when it chose its default;
/// `instructions`, whether any instruction count was taken (none with `--no-instructions` or
/// without valgrind, when the callgrind depth would mislead).
pub(crate) fn describe_settings(
    settings: &Settings,
    measured_depth: Option<u32>,
    instructions: bool,
) -> String {
    let depth = match (settings.depth, measured_depth) {
        (Some(depth), _) => depth.to_string(),
        (None, Some(measured)) => format!("{measured} (engine default)"),
        (None, None) => "the engine's default".to_string(),
    };
    let positions = match &settings.positions {
        Some(p) if p.every > 1 => format!(
            ", positions: every {}th of {} ({})",
            p.every, p.file, p.count
        ),
        Some(p) => format!(", positions: {} ({})", p.file, p.count),
        None => String::new(),
    };
    let instructions = if instructions {
        format!("instructions at depth {}", settings.instr_depth)
    } else {
        "no instructions".to_string()
    };
    format!(
        "depth {depth}, {} rounds, {instructions}{positions}",
        settings.rounds
    )
}
