//! `lab profile REV [--vs REV_B]`: the bench under pprof, flamegraphs and key-frame shares.

use anyhow::Result;

use crate::cli::ProfileArgs;
use crate::lab::Lab;
use crate::outcome::Outcome;
use crate::profile::ProfileRequest;
use crate::report::Report;

pub(crate) fn run(lab: &Lab, args: &ProfileArgs) -> Result<Outcome> {
    let request = ProfileRequest {
        rev: args.rev.clone(),
        vs: args.vs.clone(),
        out: args.out.clone(),
        exports: super::export_paths(&args.output.export),
        depth: args.depth,
        frequency: args.frequency,
        timeout: args.timeout,
    };
    let output = crate::profile::run(&lab.lock()?, &request)?;
    Ok(Outcome::clean(Report::Profile(Box::new(output))))
}
