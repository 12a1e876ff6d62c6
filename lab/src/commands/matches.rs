//! `lab match A B` and `lab match merge FILES`: games between two engines and their verdict.

use anyhow::Result;

use crate::cli::{Format, MatchArgs, MatchCommand};
use crate::games::{self, MatchReport};
use crate::lab::Lab;
use crate::outcome::{Exit, Outcome};
use crate::report::{render, Report};

pub fn run(lab: &Lab, args: &MatchArgs) -> Result<Outcome> {
    match &args.action {
        Some(MatchCommand::Merge { files, pgn, output }) => Ok(outcome(
            &games::merge(files, pgn.as_deref())?,
            output.format,
        )),
        None => Ok(outcome(
            &games::run(lab, &args.play)?,
            args.play.output.format,
        )),
    }
}

fn outcome(report: &MatchReport, format: Format) -> Outcome {
    let exit = match report.exit_code {
        0 => Exit::Clean,
        1 => Exit::Regression,
        _ => Exit::Undecided,
    };
    Outcome {
        report: render(&Report::Match(report), format),
        exit,
    }
}
