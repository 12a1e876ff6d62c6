//! `lab tiers REV`: one binary with `--full-eval` (A) against the same binary with its eval
//! tiers on (B).

use anyhow::Result;

use super::{comparison_outcome, plan, settings, thresholds};
use crate::analysis::compare::{compare, Criteria};
use crate::analysis::measure::{measure_pair, Subject};
use crate::cli::TiersArgs;
use crate::engine::adapter::ProtocolFeature;
use crate::engine::revision::resolve;
use crate::lab::Lab;
use crate::outcome::Outcome;
use crate::schema::Kind;
use crate::side::Side;

pub(crate) fn run(lab: &Lab, args: &TiersArgs) -> Result<Outcome> {
    let session = lab.lock()?;
    session.engine().require(ProtocolFeature::EvalTiers)?;
    let revision = resolve(session.repo(), &args.rev, session.paths())?;
    let (plan, positions) = plan(&session, &args.measure)?;
    let binary = session.build(&revision, &args.measure.run.features)?;
    let full_eval = Subject {
        spec: format!("{} --full-eval", revision.spec),
        full_eval: true,
        ..Subject::new(Side::A, "A", &revision, &binary)
    };
    let tiers = Subject::new(Side::B, "B", &revision, &binary);
    let (full_eval, tiers) = measure_pair(
        &full_eval,
        &tiers,
        &plan,
        session.paths(),
        session.progress(),
    )?;
    let mut comparison = compare(
        Kind::Tiers,
        settings(&args.measure, thresholds(&args.thresholds), positions),
        &full_eval,
        &tiers,
        Criteria::local(true),
    );
    comparison.speed_elo = crate::verdict::comparison_speed_elo(&comparison, session.paths());
    Ok(comparison_outcome(comparison))
}
