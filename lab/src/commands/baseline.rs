//! `lab baseline save|check|show`: stored measurements (baselines/NAME.json) and a revision
//! checked against one.

use anyhow::Result;

use super::{comparison_outcome, plan, settings, thresholds};
use crate::analysis::compare::{compare, summarize, Criteria, Settings, Thresholds};
use crate::analysis::measure::{measure_single, Measured, Subject};
use crate::baseline::{self, Baseline, BaselineSettings};
use crate::calendar::now_unix;
use crate::cli::{BaselineCommand, BenchRunArgs, MeasureArgs, ThresholdArgs};
use crate::engine::revision::resolve;
use crate::lab::Lab;
use crate::machine::{comparability, Machine, Toolchain};
use crate::outcome::Outcome;
use crate::report::{BaselineOutput, Report};
use crate::schema::{Kind, LAB_JSON_SCHEMA_VERSION};
use crate::side::Side;

pub(crate) fn run(lab: &Lab, action: &BaselineCommand) -> Result<Outcome> {
    match action {
        BaselineCommand::Save { name, rev, measure } => save(lab, name, rev, measure),
        BaselineCommand::Check {
            name,
            rev,
            rounds,
            no_instructions,
            timeout,
            threshold,
            instr_threshold,
            ..
        } => check(
            lab,
            &CheckRequest {
                name,
                rev,
                rounds: *rounds,
                no_instructions: *no_instructions,
                timeout: *timeout,
                thresholds: &ThresholdArgs {
                    threshold: *threshold,
                    instr_threshold: *instr_threshold,
                },
            },
        ),
        BaselineCommand::Show { name, .. } => show(lab, name),
    }
}

fn save(lab: &Lab, name: &str, rev: &str, measure: &MeasureArgs) -> Result<Outcome> {
    let session = lab.lock()?;
    let paths = session.paths();
    if measure.positions.is_some() {
        anyhow::bail!(
            "a baseline is the engine's built-in bench: `baseline save` takes no --positions \
             (compare, tiers and bench do)"
        );
    }
    let path = baseline::baseline_path(paths, name)?;
    let revision = resolve(session.repo(), rev, paths)?;
    let binary = session.build(&revision, &measure.run.features)?;
    let subject = Subject::new(Side::A, name, &revision, &binary);
    let (plan, _) = plan(&session, measure)?;
    let measured = measure_single(&subject, &plan, paths, session.progress())?;
    let stored = Baseline {
        schema_version: baseline::BASELINE_SCHEMA_VERSION,
        name: name.to_string(),
        created_unix: now_unix(),
        machine: Machine::current(),
        toolchain: Toolchain::current(&paths.workdir)?,
        settings: BaselineSettings {
            depth: measure.run.depth,
            rounds: measure.run.rounds,
            instr_depth: measure.run.instr_depth,
            features: measure.run.features.clone(),
        },
        measurement: measured.measurement,
    };
    baseline::save(&path, &stored)?;
    session
        .progress()
        .line(&format!("saved {}", path.display()));
    Ok(Outcome::clean(Report::Baseline(Box::new(baseline_output(
        &stored,
    )))))
}

struct CheckRequest<'a> {
    name: &'a str,
    rev: &'a str,
    rounds: Option<u32>,
    no_instructions: bool,
    timeout: u64,
    thresholds: &'a ThresholdArgs,
}

fn check(lab: &Lab, request: &CheckRequest) -> Result<Outcome> {
    let session = lab.lock()?;
    let paths = session.paths();
    let path = baseline::baseline_path(paths, request.name)?;
    let stored = baseline::load(&path)?;
    let revision = resolve(session.repo(), request.rev, paths)?;
    let binary = session.build(&revision, &stored.settings.features)?;
    let measure = MeasureArgs {
        run: BenchRunArgs {
            rounds: request.rounds.unwrap_or(stored.settings.rounds),
            depth: stored.settings.depth,
            instr_depth: stored.settings.instr_depth,
            no_instructions: request.no_instructions,
            features: stored.settings.features.clone(),
            timeout: request.timeout,
        },
        positions: None,
        every: None,
    };
    let subject = Subject::new(Side::B, "revision", &revision, &binary);
    let (plan, _) = plan(&session, &measure)?;
    let measured = measure_single(&subject, &plan, paths, session.progress())?;
    let toolchain = Toolchain::current(&paths.workdir)?;
    let machine = Machine::current();
    let setting = comparability((&stored.machine, &stored.toolchain), (&machine, &toolchain));
    let criteria = Criteria {
        nps_comparable: setting.nps,
        toolchain_comparable: setting.toolchain,
        machine_differences: setting.differences,
        machine_unknown: setting.unknown,
        paired_in_time: false,
        ..Criteria::local(false)
    };
    let stored_side = Measured {
        label: format!("baseline {}", stored.name),
        measurement: stored.measurement,
        functions: None,
    };
    let comparison = compare(
        Kind::BaselineCheck,
        settings(&measure, thresholds(request.thresholds), None),
        &stored_side,
        &measured,
        criteria,
    );
    Ok(comparison_outcome(comparison))
}

/// Reads the stored file only: no lock, no build.
fn show(lab: &Lab, name: &str) -> Result<Outcome> {
    let workdir = lab.workdir()?;
    let stored = baseline::load(&baseline::baseline_path(&workdir.paths, name)?)?;
    Ok(Outcome::clean(Report::Baseline(Box::new(baseline_output(
        &stored,
    )))))
}

fn baseline_output(stored: &Baseline) -> BaselineOutput {
    let settings = &stored.settings;
    BaselineOutput {
        schema_version: LAB_JSON_SCHEMA_VERSION,
        kind: Kind::Baseline,
        name: stored.name.clone(),
        created_unix: stored.created_unix,
        machine: stored.machine.clone(),
        toolchain: stored.toolchain.clone(),
        settings: Settings {
            rounds: settings.rounds,
            depth: settings.depth,
            instr_depth: settings.instr_depth,
            thresholds: Thresholds::NONE,
            positions: None,
        },
        revision: summarize(&stored.name, &stored.measurement),
    }
}
