//! `lab pool generate`: a stratified calibration pool, or an opening book with `--book`.

use anyhow::Result;

use crate::cli::PoolCommand;
use crate::lab::Lab;
use crate::outcome::Outcome;
use crate::pool::{book_command, generate_command};

pub fn run(lab: &Lab, action: &PoolCommand) -> Result<Outcome> {
    let progress = lab.progress();
    match action {
        PoolCommand::Generate {
            count,
            seed,
            out,
            book,
        } => {
            let count = usize::try_from(*count)?;
            if *book {
                Ok(Outcome::clean(book_command(count, *seed, out, progress)?))
            } else {
                Ok(Outcome::clean(generate_command(
                    count, *seed, out, progress,
                )?))
            }
        }
    }
}
