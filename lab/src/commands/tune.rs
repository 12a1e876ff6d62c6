//! `lab tune FILE`: the predicted exits of candidate margin tables on a calibration's sampled
//! evaluation calls; with `--search`, the percentiles that maximise the cheap exits under a
//! limit on every exceeded rate.

use anyhow::{Context, Result};

use crate::calibration::margins_source::MARGINS_FILE;
use crate::calibration::tables;
use crate::cli::TuneArgs;
use crate::engine::adapter::ProtocolFeature;
use crate::lab::Lab;
use crate::outcome::Outcome;
use crate::report::Report;
use crate::tune::{self, Replay, TuneReport};

pub(crate) fn run(lab: &Lab, args: &TuneArgs) -> Result<Outcome> {
    let replay = Replay::load(&args.file)?;
    let file = args.file.display().to_string();
    let report = if args.search {
        tune::search_report(&replay, &args.file, args.max_exceeded / 100.0)?
    } else if let Some(percentiles) = &args.percentiles {
        let choice = super::tables::choice(percentiles)?;
        if replay.file.histograms.is_none() {
            anyhow::bail!(
                "{file}: no histograms: percentile tables {}",
                tune::search::NEEDS_HISTOGRAMS
            );
        }
        let (block, margins) =
            tune::tables_for_choice(&replay, &tables::origin(&args.file), &choice)?;
        let described = block
            .lines()
            .next()
            .unwrap_or_default()
            .trim_start_matches("// source: ");
        TuneReport::new(
            &replay,
            &file,
            format!("at percentiles: {described}"),
            &margins,
        )?
    } else {
        let path = match &args.tables {
            Some(path) => path.clone(),
            None => {
                // The working tree's tables: its source, not a build.
                let workdir = lab.workdir()?;
                workdir.engine.require(ProtocolFeature::MarginTables)?;
                workdir.paths.workdir.join(MARGINS_FILE)
            }
        };
        let source = crate::input::read_text(&path, crate::input::SOURCE)
            .with_context(|| format!("--tables {}", path.display()))?;
        let margins = tune::tables_from_source(&source).with_context(|| {
            format!(
                "{}: no margin tables (all nine KING_/LAZY_RESID_/SUPER_LAZY_RESID_ LO, HI and \
                 P50 rows, in a margins.rs or its marked block as `lab tables` prints it)",
                path.display()
            )
        })?;
        let candidate = match &args.tables {
            Some(_) => path.display().to_string(),
            None => format!("in force ({MARGINS_FILE} of the working tree)"),
        };
        TuneReport::new(&replay, &file, candidate, &margins)?
    };
    Ok(Outcome::clean(Report::Tune(Box::new(report))))
}
