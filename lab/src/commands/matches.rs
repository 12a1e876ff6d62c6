//! `lab match A B` and `lab match merge FILES`: games between two engines and their verdict.

use anyhow::Result;

use crate::cli::{MatchArgs, MatchCommand};
use crate::games::{self, MatchReport};
use crate::lab::Lab;
use crate::outcome::{Exit, Outcome};
use crate::report::Report;

pub fn run(lab: &Lab, args: &MatchArgs) -> Result<Outcome> {
    match &args.action {
        Some(MatchCommand::Merge { files, pgn, .. }) => {
            Ok(outcome(games::merge(files, pgn.as_deref())?))
        }
        None => Ok(outcome(games::run(lab, &args.play)?)),
    }
}

fn outcome(report: MatchReport) -> Outcome {
    let exit = match report.exit_code {
        0 => Exit::Clean,
        1 => Exit::Regression,
        _ => Exit::Undecided,
    };
    Outcome {
        report: Report::Match(Box::new(report)),
        exit,
    }
}
