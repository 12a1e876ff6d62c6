//! `lab history A..B`: each commit of a range measured once per machine, toolchain and
//! settings, the figures kept in a store and printed as a table.

use anyhow::Result;

use super::{plan, series_measure};
use crate::cli::HistoryArgs;
use crate::history::{history, HistoryRequest};
use crate::lab::Lab;
use crate::outcome::Outcome;
use crate::report::Report;

pub fn run(lab: &Lab, args: &HistoryArgs) -> Result<Outcome> {
    let session = lab.lock()?;
    let measure = series_measure(&args.measure);
    let (plan, _) = plan(&session, &measure)?;
    let store = args
        .store
        .clone()
        .unwrap_or_else(|| session.paths().root.join("history"));
    let report = history(
        &session,
        &HistoryRequest {
            range: &args.range,
            every: args.every as usize,
            max: args.max.map(|max| max as usize),
            store,
            plan: &plan,
            features: &measure.features,
        },
    )?;
    Ok(Outcome::clean(Report::History(Box::new(report))))
}
