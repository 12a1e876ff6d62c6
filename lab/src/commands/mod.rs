//! The commands, one module each, and the one dispatch over them. The command line becomes
//! options here, at the edge; below, the lab works without a terminal.

pub(crate) mod baseline;
pub(crate) mod bench;
pub(crate) mod bisect;
pub(crate) mod calibrate;
pub(crate) mod compare;
pub(crate) mod frontier;
pub(crate) mod hist;
pub(crate) mod history;
pub(crate) mod matches;
pub(crate) mod pool;
pub(crate) mod profile;
pub(crate) mod report;
pub(crate) mod speed_elo;
pub(crate) mod tables;
pub(crate) mod tiers;
pub(crate) mod tune;
pub(crate) mod verdict;

use std::time::Duration;

use anyhow::{bail, Result};

use crate::analysis::compare::{Comparison, PositionsSetting, Settings, Thresholds};
use crate::analysis::measure::Plan;
use crate::cli::{
    BaselineCommand, CalibrateCommand, Cli, Command, ExportArgs, MatchCommand, MeasureArgs,
    OutputArgs, SeriesMeasureArgs, ThresholdArgs,
};
use crate::engine::adapter::{bench_dir, ProtocolFeature};
use crate::exit::Exit;
use crate::games::rules::{
    AdjudicationRules, DrawAdjudication, ResignAdjudication, DEFAULT_DRAW_ADJ, DEFAULT_RESIGN_ADJ,
};
use crate::games::MaxGames;
use crate::lab::{Lab, Session};
use crate::outcome::Outcome;
use crate::paths::NamedPath;
use crate::progress::Progress;
use crate::report::{export, render, Format, Report};

/// What the lab prints on stdout, and its exit code.
pub struct Printed {
    pub stdout: String,
    pub exit: Exit,
}

/// Runs the command, lays its report out in the format asked for and writes the exports. An
/// export path that cannot be written is refused before anything is measured.
pub fn run(cli: Cli) -> Result<Printed> {
    let (format, exports) = output(&cli.command);
    if format == Format::Cutechess && !matches!(cli.command, Command::Match(_)) {
        anyhow::bail!("--format cutechess: cutechess-cli's result lines are printed for `lab match` and `lab match merge` only");
    }
    if format == Format::Fastchess && !matches!(cli.command, Command::Match(_)) {
        anyhow::bail!("--format fastchess: fastchess's results block is printed for `lab match` and `lab match merge` only");
    }
    let exports = exports.cloned().unwrap_or_default();
    if exports.export_html.is_some() && !draws_html(&cli.command) {
        anyhow::bail!(
            "--export-html: an HTML report is drawn for {} only",
            crate::report::html::PAGES
        );
    }
    for path in [
        &exports.export_json,
        &exports.export_markdown,
        &exports.export_html,
    ]
    .into_iter()
    .flatten()
    {
        crate::paths::check_writable(path)?;
    }
    let (inputs, mut outputs) = files(&cli.command);
    outputs.extend(export_paths(&exports));
    crate::paths::refuse_aliases(&inputs, &outputs)?;
    let lab = Lab::new(
        cli.repo.clone(),
        cli.config.clone(),
        Progress::new(cli.quiet),
    );
    let outcome = dispatch(&lab, &cli.command)?;
    export(
        &outcome.report,
        exports.export_json.as_deref(),
        exports.export_markdown.as_deref(),
    )?;
    if let Some(path) = &exports.export_html {
        crate::report::export_html(&outcome.report, path)?;
    }
    Ok(Printed {
        stdout: render(&outcome.report, format),
        exit: outcome.exit,
    })
}

/// Whether the command's report has an HTML page.
fn draws_html(command: &Command) -> bool {
    matches!(
        command,
        Command::Compare(_)
            | Command::Tiers(_)
            | Command::Match(_)
            | Command::History(_)
            | Command::Baseline {
                action: BaselineCommand::Check { .. }
            }
            | Command::Calibrate(_)
            | Command::SpeedElo(_)
            | Command::Verdict(_)
            | Command::Frontier(_)
    )
}

/// The format of stdout and the exports a command asks for.
fn output(command: &Command) -> (Format, Option<&ExportArgs>) {
    fn with(output: &OutputArgs) -> (Format, Option<&ExportArgs>) {
        (output.format, Some(&output.export))
    }
    match command {
        Command::Compare(args) => with(&args.output),
        Command::Bench(args) => with(&args.output),
        Command::Tiers(args) => with(&args.output),
        Command::Profile(args) => with(&args.output),
        Command::History(args) => with(&args.output),
        Command::Bisect(args) => with(&args.output),
        Command::Tune(args) => with(&args.output),
        Command::SpeedElo(args) => with(&args.output),
        Command::Verdict(args) => with(&args.output),
        Command::Frontier(args) => with(&args.output),
        Command::Baseline {
            action: BaselineCommand::Check { output, .. } | BaselineCommand::Show { output, .. },
        } => with(output),
        Command::Match(args) => match &args.action {
            Some(MatchCommand::Merge { output, .. }) => with(output),
            None => with(&args.play.output),
        },
        Command::Calibrate(args) => match &args.action {
            Some(CalibrateCommand::Merge { output, .. }) => with(output),
            None => with(&args.run.output),
        },
        Command::Baseline {
            action: BaselineCommand::Save { .. },
        }
        | Command::Pool { .. }
        | Command::Hist(_)
        | Command::Tables(_)
        | Command::Report(_) => (Format::Terminal, None),
    }
}

/// The files a command reads and the files it writes, as far as its arguments name them (its
/// exports aside): no output may be the same file as another input or output.
fn files(command: &Command) -> (Vec<NamedPath>, Vec<NamedPath>) {
    match command {
        Command::Match(args) => match &args.action {
            Some(MatchCommand::Merge { files, pgn, .. }) => (
                files
                    .iter()
                    .map(|file| NamedPath::new("the results file", file))
                    .collect(),
                pgn.iter().map(|pgn| NamedPath::new("--pgn", pgn)).collect(),
            ),
            None => matches::files(&args.play),
        },
        Command::Calibrate(args) => match &args.action {
            Some(CalibrateCommand::Merge { files, out, .. }) => (
                files
                    .iter()
                    .map(|file| NamedPath::new("the calibration file", file))
                    .collect(),
                out.iter().map(|out| NamedPath::new("--out", out)).collect(),
            ),
            None => (
                vec![NamedPath::new("--pool", &args.run.pool)],
                args.run
                    .out
                    .iter()
                    .map(|out| NamedPath::new("--out", out))
                    .collect(),
            ),
        },
        Command::Tune(args) => (
            std::iter::once(NamedPath::new("the calibration file", &args.file))
                .chain(args.tables.iter().map(|t| NamedPath::new("--tables", t)))
                .collect(),
            Vec::new(),
        ),
        Command::Compare(args) => (positions(&args.measure), Vec::new()),
        Command::Bench(args) => (positions(&args.measure), Vec::new()),
        Command::Tiers(args) => (positions(&args.measure), Vec::new()),
        Command::Verdict(args) => (positions(&args.measure), Vec::new()),
        Command::Frontier(args) => (frontier::files(args), Vec::new()),
        Command::Report(args) => (
            vec![NamedPath::new("the report", &args.file)],
            vec![NamedPath::new("--out", &args.out)],
        ),
        _ => (Vec::new(), Vec::new()),
    }
}

/// A `--positions` file, read by the measuring commands.
fn positions(measure: &MeasureArgs) -> Vec<NamedPath> {
    measure
        .positions
        .iter()
        .map(|file| NamedPath::new("--positions", file))
        .collect()
}

/// The exports asked for, by flag.
fn export_paths(exports: &ExportArgs) -> Vec<NamedPath> {
    [
        ("--export-json", &exports.export_json),
        ("--export-markdown", &exports.export_markdown),
        ("--export-html", &exports.export_html),
    ]
    .into_iter()
    .filter_map(|(flag, path)| path.as_deref().map(|path| NamedPath::new(flag, path)))
    .collect()
}

/// The most games of a budget flag (`--games`, `--max-games`): as given, which must be even
/// since each opening is a pair of games, else `default`.
fn max_games(flag: &str, given: Option<u64>, default: u64) -> Result<MaxGames> {
    match given {
        Some(games) if !games.is_multiple_of(2) => {
            bail!("{flag} {games}: a game pair is 2 games, so the budget must be even")
        }
        Some(games) => Ok(MaxGames::Given(games)),
        None => Ok(MaxGames::Default(default)),
    }
}

/// The adjudication rules of `--draw-adj` and `--resign-adj` where they are optional (`lab
/// verdict`, `lab speed-elo`): as given, else `lab match`'s defaults.
fn adjudication_rules(draw: Option<&str>, resign: Option<&str>) -> Result<AdjudicationRules> {
    Ok(AdjudicationRules {
        draw: DrawAdjudication::parse(draw.unwrap_or(DEFAULT_DRAW_ADJ))?,
        resign: ResignAdjudication::parse(resign.unwrap_or(DEFAULT_RESIGN_ADJ))?,
    })
}

fn dispatch(lab: &Lab, command: &Command) -> Result<Outcome> {
    match command {
        Command::Compare(args) => compare::run(lab, args),
        Command::Bench(args) => bench::run(lab, args),
        Command::Tiers(args) => tiers::run(lab, args),
        Command::Baseline { action } => baseline::run(lab, action),
        Command::Pool { action } => pool::run(lab, action),
        Command::Calibrate(args) => calibrate::run(lab, args),
        Command::Hist(args) => hist::run(lab, args),
        Command::Tables(args) => tables::run(lab, args),
        Command::Match(args) => matches::run(lab, args),
        Command::Profile(args) => profile::run(lab, args),
        Command::History(args) => history::run(lab, args),
        Command::Bisect(args) => bisect::run(lab, args),
        Command::Tune(args) => tune::run(lab, args),
        Command::SpeedElo(args) => speed_elo::run(lab, args),
        Command::Verdict(args) => verdict::run(lab, args),
        Command::Frontier(args) => frontier::run(args),
        Command::Report(args) => report::run(args),
    }
}

/// The measurement plan. A `--positions` file is read and checked line by line (plain or
/// gzip), thinned to every Nth position, and written as plain EPD into the scratch directory,
/// where every bench run of this command reads it.
fn plan(session: &Session, measure: &MeasureArgs) -> Result<(Plan, Option<PositionsSetting>)> {
    if measure.positions.is_some() {
        session.engine().require(ProtocolFeature::PositionsFile)?;
    }
    if !measure.run.features.is_empty() {
        session.engine().require(ProtocolFeature::CargoFeatures)?;
    }
    let mut plan = Plan {
        adapter: session.engine().clone(),
        bench_dir: bench_dir(session.paths()),
        depth: measure.run.depth,
        rounds: measure.run.rounds,
        instr_depth: measure.run.instr_depth,
        instructions: !measure.run.no_instructions,
        timeout: Duration::from_secs(measure.run.timeout),
        positions: None,
    };
    let Some(file) = &measure.positions else {
        return Ok((plan, None));
    };
    let every = measure.every.unwrap_or(1);
    let fens: Vec<String> = crate::positions::read_pool(file)?
        .into_iter()
        .step_by(every as usize)
        .collect();
    let path = session.paths().scratch.join("positions.epd");
    crate::paths::write_atomically(&path, (fens.join("\n") + "\n").as_bytes())?;
    session.progress().line(&format!(
        "benching {} positions of {}",
        fens.len(),
        file.display()
    ));
    plan.positions = Some(path);
    let setting = PositionsSetting {
        file: file.display().to_string(),
        every,
        count: fens.len(),
    };
    Ok((plan, Some(setting)))
}

/// The measurement options of `history` and `bisect` as the plan reads them.
fn series_measure(series: &SeriesMeasureArgs) -> MeasureArgs {
    MeasureArgs {
        run: series.run.clone(),
        positions: None,
        every: None,
    }
}

fn thresholds(args: &ThresholdArgs) -> Thresholds {
    Thresholds {
        threshold_pct: args.threshold,
        instr_threshold_pct: args.instr_threshold,
    }
}

fn settings(
    measure: &MeasureArgs,
    thresholds: Thresholds,
    positions: Option<PositionsSetting>,
) -> Settings {
    Settings {
        rounds: measure.run.rounds,
        depth: measure.run.depth,
        instr_depth: measure.run.instr_depth,
        thresholds,
        positions,
    }
}

/// A comparison stamped with the date and machine of its measurement, which its exports keep.
fn comparison_outcome(mut comparison: Comparison) -> Outcome {
    comparison.measured = Some(crate::machine::Provenance::here_now());
    Outcome {
        exit: Exit::regression_if(comparison.regression),
        report: Report::Comparison(Box::new(comparison)),
    }
}
