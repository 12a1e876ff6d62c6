//! `lab bench REV`: one revision measured on its own.

use anyhow::Result;

use super::{plan, settings};
use crate::analysis::compare::{summarize, Thresholds};
use crate::analysis::measure::{measure_single, Side, Subject};
use crate::cli::BenchArgs;
use crate::engine::revision::resolve;
use crate::lab::Lab;
use crate::outcome::Outcome;
use crate::report::{BenchOutput, Report};
use crate::schema::{Kind, LAB_JSON_SCHEMA_VERSION};

pub fn run(lab: &Lab, args: &BenchArgs) -> Result<Outcome> {
    let session = lab.lock()?;
    let revision = resolve(session.repo(), &args.rev, session.paths())?;
    let (plan, positions) = plan(&session, &args.measure)?;
    let binary = session.build(&revision, &args.measure.features)?;
    let subject = Subject::new(Side::A, args.rev.clone(), &revision, &binary);
    let measured = measure_single(&subject, &plan, session.paths(), session.progress())?;
    let output = BenchOutput {
        schema_version: LAB_JSON_SCHEMA_VERSION,
        kind: Kind::Bench,
        settings: settings(&args.measure, Thresholds::NONE, positions),
        revision: summarize(&measured.label, &measured.measurement),
    };
    Ok(Outcome::clean(Report::Bench(Box::new(output))))
}
