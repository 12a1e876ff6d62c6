//! `lab hist FILE [PERCENTILES]`: any percentile of a saved calibration file's histograms.

use anyhow::{bail, Result};

use crate::calibration::summary::{SETS, SPREAD};
use crate::calibration::CalibrationFile;
use crate::cli::HistArgs;
use crate::lab::Lab;
use crate::outcome::Outcome;
use crate::report::calibration::histogram_percentiles;
use crate::report::Report;

pub(crate) fn run(_lab: &Lab, args: &HistArgs) -> Result<Outcome> {
    let file = CalibrationFile::load(&args.file)?;
    let percentiles = if args.percentiles.is_empty() {
        SPREAD.to_vec()
    } else {
        args.percentiles.clone()
    };
    let sets: Vec<&str> = match &args.set {
        Some(name) => {
            if !SETS.iter().any(|(set, _, _)| set == name) {
                bail!(
                    "unknown histogram set '{name}': expected one of {}",
                    SETS.iter()
                        .map(|(set, _, _)| *set)
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
            vec![name.as_str()]
        }
        None => SETS.iter().map(|(set, _, _)| *set).collect(),
    };
    let present: Vec<&str> = sets
        .into_iter()
        .filter(|set| file.histogram_set(set).is_some())
        .collect();
    if present.is_empty() {
        match &args.set {
            Some(set) => bail!(
                "{} has no '{set}' histograms (modes: {})",
                args.file.display(),
                file.modes.join(",")
            ),
            None => bail!(
                "{} holds no histograms (modes: {}): run residual or qfutility",
                args.file.display(),
                file.modes.join(",")
            ),
        }
    }
    let text = histogram_percentiles(
        &file,
        &args.file.display().to_string(),
        &present,
        &percentiles,
    );
    Ok(Outcome::clean(Report::Text(text)))
}
