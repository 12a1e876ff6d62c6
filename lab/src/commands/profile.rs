//! `lab profile REV [--vs REV_B]`: the bench under pprof, flamegraphs and key-frame shares.

use anyhow::Result;

use crate::cli::ProfileArgs;
use crate::lab::Lab;
use crate::outcome::Outcome;
use crate::report::Report;

pub fn run(lab: &Lab, args: &ProfileArgs) -> Result<Outcome> {
    let session = lab.lock()?;
    let output = crate::profile::run(
        session.repo(),
        session.paths(),
        session.progress(),
        session.engine().as_ref(),
        args,
    )?;
    Ok(Outcome::clean(Report::Profile(Box::new(output))))
}
