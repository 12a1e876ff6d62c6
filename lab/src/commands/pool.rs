//! `lab pool generate`: a stratified calibration pool, or an opening book with `--book`.

use anyhow::Result;

use crate::cli::PoolCommand;
use crate::lab::Lab;
use crate::outcome::Outcome;
use crate::pool::{book_command, generate_command};
use crate::report::pool::{book_written, pool_written};
use crate::report::Report;

pub(crate) fn run(lab: &Lab, action: &PoolCommand) -> Result<Outcome> {
    let progress = lab.progress();
    match action {
        PoolCommand::Generate {
            count,
            seed,
            out,
            book,
        } => {
            let count = usize::try_from(*count)?;
            let text = if *book {
                book_written(&book_command(count, *seed, out, progress)?)
            } else {
                pool_written(&generate_command(count, *seed, out, progress)?)
            };
            Ok(Outcome::clean(Report::Text(text)))
        }
    }
}
