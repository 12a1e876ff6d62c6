//! `lab compare A B`: two revisions measured in paired rounds, optionally with per-function
//! instruction movers and a calibration of both.

use std::time::Duration;

use anyhow::Result;

use super::{comparison_outcome, plan, settings, thresholds};
use crate::analysis::compare::{measure_and_compare, Note};
use crate::analysis::functions::{compare_functions, measure_functions, FunctionsWhy};
use crate::analysis::measure::{Instructions, RevisionRecord, Subject};
use crate::calibration;
use crate::cli::CompareArgs;
use crate::engine::adapter::ProtocolFeature;
use crate::engine::build::EngineBinary;
use crate::engine::revision::{resolve, Revision};
use crate::lab::Lab;
use crate::outcome::Outcome;
use crate::report::{Report, SameBinaryOutput};
use crate::schema::{Kind, LAB_JSON_SCHEMA_VERSION};
use crate::side::Side;

pub(crate) fn run(lab: &Lab, args: &CompareArgs) -> Result<Outcome> {
    let session = lab.lock()?;
    let (repo, paths, progress) = (session.repo(), session.paths(), session.progress());
    // Resolve both before building either, so a typo fails in a second, not after a build.
    let a = resolve(repo, &args.a, paths)?;
    let b = resolve(repo, &args.b, paths)?;
    let (plan, positions) = plan(&session, &args.measure)?;
    if args.calibration.calibrate {
        session.engine().require(ProtocolFeature::Calibration)?;
    }
    let a_binary = session.build(&a, &args.measure.run.features)?;
    let b_binary = session.build(&b, &args.measure.run.features)?;
    // One cache key is one binary: measuring it against itself can only measure noise.
    let one_binary = a_binary.key == b_binary.key;
    if one_binary && !args.force {
        return Ok(same_binary(&a, &b, &a_binary));
    }
    let (mut comparison, a_measured, b_measured) = measure_and_compare(
        Kind::Compare,
        settings(&args.measure, thresholds(&args.thresholds), positions),
        (
            &Subject::new(Side::A, "A", &a, &a_binary),
            &Subject::new(Side::B, "B", &b, &b_binary),
        ),
        &plan,
        paths,
        progress,
    )?;
    if one_binary {
        comparison.notes.insert(
            0,
            Note::AaRun {
                binary_key: a_binary.key.clone(),
            },
        );
    }
    if args.functions.functions {
        let top = args.functions.functions_top;
        // The instruction count's own per-function costs where it kept them; else runs of
        // their own.
        let kept = match (&a_measured.functions, &b_measured.functions) {
            (Some(a_costs), Some(b_costs)) => {
                let depth = match &a_measured.measurement.instructions {
                    Instructions::Measured { depth, .. } => *depth,
                    Instructions::Skipped { .. } => None,
                };
                Some(compare_functions(
                    depth,
                    a_costs,
                    b_costs,
                    top,
                    FunctionsWhy::Requested,
                ))
            }
            _ => None,
        };
        comparison.functions = Some(match kept {
            Some(functions) => functions,
            None => {
                let engine = session.engine();
                measure_functions(
                    engine.as_ref(),
                    [&a_binary.path, &b_binary.path],
                    engine.takes_depth().then_some(args.measure.run.instr_depth),
                    plan.positions.as_deref(),
                    top,
                    Duration::from_secs(args.measure.run.timeout),
                    paths,
                    progress,
                )?
            }
        });
    }
    if args.calibration.calibrate {
        comparison.calibration = Some(calibration::calibrate::compare_calibration(
            repo,
            paths,
            progress,
            [&a, &b],
            &args.calibration.pool,
            args.calibration.calib_depth,
        )?);
    }
    comparison.speed_elo = crate::verdict::comparison_speed_elo(&comparison, paths);
    Ok(comparison_outcome(comparison))
}

/// The report of two revisions with one engine binary: nothing measured, exit 0.
fn same_binary(a: &Revision, b: &Revision, binary: &EngineBinary) -> Outcome {
    let record = |revision: &Revision| RevisionRecord {
        spec: revision.spec.clone(),
        commit: revision.commit.map(|commit| commit.to_string()),
        tree: revision.tree.to_string(),
        binary_key: binary.key.clone(),
        cached_build: binary.cached,
    };
    Outcome::clean(Report::SameBinary(Box::new(SameBinaryOutput {
        schema_version: LAB_JSON_SCHEMA_VERSION,
        kind: Kind::SameBinary,
        a: record(a),
        b: record(b),
        binary_key: binary.key.clone(),
        measured: false,
        change: crate::analysis::stats::Change::Insignificant,
        regression: false,
    })))
}
