//! `lab history A..B`: each commit of a range measured once per machine, toolchain and
//! settings, the figures kept in a store and printed as a table; its HTML page is always
//! written to `target/lab/history.html` too (beside any `--export-html`).

use anyhow::Result;

use super::{plan, series_measure};
use crate::cli::HistoryArgs;
use crate::history::{history, HistoryRequest};
use crate::lab::Lab;
use crate::outcome::Outcome;
use crate::report::Report;

pub(crate) fn run(lab: &Lab, args: &HistoryArgs) -> Result<Outcome> {
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
            features: &measure.run.features,
            retry_failed: args.retry_failed,
        },
    )?;
    let report = Report::History(Box::new(report));
    // In the lab's cache, never in the store: a store may be a committed directory.
    let page = session.paths().root.join(PAGE);
    match crate::report::export_html(&report, &page) {
        Ok(()) => session
            .progress()
            .line(&format!("history page: {}", page.display())),
        // The figures are stored and the table prints: a page that cannot be written is not
        // worth failing the run.
        Err(error) => crate::progress::warning(&format!(
            "warning: the history page was not written: {error:#}"
        )),
    }
    Ok(Outcome::clean(report))
}

/// The page every run writes, under the lab's cache root (`target/lab/`).
pub(crate) const PAGE: &str = "history.html";
