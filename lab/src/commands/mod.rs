//! The commands, one module each, and the one dispatch over them. The command line becomes
//! options here, at the edge; below, the lab works without a terminal.

pub mod baseline;
pub mod bench;
pub mod calibrate;
pub mod compare;
pub mod hist;
pub mod matches;
pub mod pool;
pub mod profile;
pub mod tables;
pub mod tiers;

use std::time::Duration;

use anyhow::Result;

use crate::analysis::compare::{Comparison, PositionsSetting, Settings, Thresholds};
use crate::analysis::measure::Plan;
use crate::cli::{Cli, Command, Format, MeasureArgs, VerdictArgs};
use crate::lab::{Lab, Session};
use crate::outcome::{Exit, Outcome};
use crate::progress::Progress;
use crate::report::{render, Report};

pub fn run(cli: Cli) -> Result<Outcome> {
    let lab = Lab::new(cli.repo, Progress::new(cli.quiet));
    match &cli.command {
        Command::Compare(args) => compare::run(&lab, args),
        Command::Bench(args) => bench::run(&lab, args),
        Command::Tiers(args) => tiers::run(&lab, args),
        Command::Baseline { action } => baseline::run(&lab, action),
        Command::Pool { action } => pool::run(&lab, action),
        Command::Calibrate(args) => calibrate::run(&lab, args),
        Command::Hist(args) => hist::run(&lab, args),
        Command::Tables(args) => tables::run(&lab, args),
        Command::Match(args) => matches::run(&lab, args),
        Command::Profile(args) => profile::run(&lab, args),
    }
}

/// The measurement plan. A `--positions` file is read and checked line by line (plain or
/// gzip), thinned to every Nth position, and written as plain EPD into the scratch directory,
/// where every bench run of this command reads it.
fn plan(session: &Session, measure: &MeasureArgs) -> Result<(Plan, Option<PositionsSetting>)> {
    let mut plan = Plan {
        depth: measure.depth,
        rounds: measure.rounds,
        instr_depth: measure.instr_depth,
        instructions: !measure.no_instructions,
        timeout: Duration::from_secs(measure.timeout),
        positions: None,
    };
    let Some(file) = &measure.positions else {
        return Ok((plan, None));
    };
    let every = measure.every.unwrap_or(1);
    let fens: Vec<String> = crate::pool::read_pool(file)?
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

fn thresholds(verdict: &VerdictArgs) -> Thresholds {
    Thresholds {
        threshold_pct: verdict.threshold,
        instr_threshold_pct: verdict.instr_threshold,
    }
}

fn settings(
    measure: &MeasureArgs,
    thresholds: Thresholds,
    positions: Option<PositionsSetting>,
) -> Settings {
    Settings {
        rounds: measure.rounds,
        depth: measure.depth,
        instr_depth: measure.instr_depth,
        thresholds,
        positions,
    }
}

fn comparison_outcome(comparison: &Comparison, format: Format) -> Outcome {
    Outcome {
        report: render(&Report::Comparison(comparison), format),
        exit: Exit::regression_if(comparison.regression),
    }
}
