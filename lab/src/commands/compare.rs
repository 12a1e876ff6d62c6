//! `lab compare A B`: two revisions measured in paired rounds, optionally with per-function
//! instruction movers and a calibration of both.

use std::time::Duration;

use anyhow::Result;

use super::{comparison_outcome, plan, settings, thresholds};
use crate::analysis::compare::{compare, Criteria};
use crate::analysis::functions::measure_functions;
use crate::analysis::measure::{measure_pair, Side, Subject};
use crate::calibration;
use crate::cli::CompareArgs;
use crate::engine::adapter::ProtocolFeature;
use crate::engine::revision::resolve;
use crate::lab::Lab;
use crate::outcome::Outcome;
use crate::schema::Kind;

pub fn run(lab: &Lab, args: &CompareArgs) -> Result<Outcome> {
    let session = lab.lock()?;
    let (repo, paths, progress) = (session.repo(), session.paths(), session.progress());
    // Resolve both before building either, so a typo fails in a second, not after a build.
    let a = resolve(repo, &args.a, paths)?;
    let b = resolve(repo, &args.b, paths)?;
    let (plan, positions) = plan(&session, &args.measure)?;
    if args.calibration.calibrate {
        session.engine().require(ProtocolFeature::Calibration)?;
    }
    let a_binary = session.build(&a, &args.measure.features)?;
    let b_binary = session.build(&b, &args.measure.features)?;
    let (a_measured, b_measured) = measure_pair(
        &Subject::new(Side::A, "A", &a, &a_binary),
        &Subject::new(Side::B, "B", &b, &b_binary),
        &plan,
        paths,
        progress,
    )?;
    let mut comparison = compare(
        Kind::Compare,
        settings(&args.measure, thresholds(&args.verdict), positions),
        &a_measured,
        &b_measured,
        Criteria::local(false),
    );
    if args.functions.functions {
        let engine = session.engine();
        comparison.functions = Some(measure_functions(
            engine.as_ref(),
            [&a_binary.path, &b_binary.path],
            engine.takes_depth().then_some(args.measure.instr_depth),
            plan.positions.as_deref(),
            args.functions.functions_top,
            Duration::from_secs(args.measure.timeout),
            paths,
            progress,
        )?);
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
