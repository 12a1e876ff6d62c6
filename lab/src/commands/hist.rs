//! `lab hist FILE [PERCENTILES]`: any percentile of a saved calibration file's histograms.

use anyhow::{bail, Result};

use crate::calibration::report::{self, SPREAD};
use crate::calibration::CalibrationFile;
use crate::cli::HistArgs;
use crate::lab::Lab;
use crate::outcome::Outcome;

pub fn run(_lab: &Lab, args: &HistArgs) -> Result<Outcome> {
    let file = CalibrationFile::load(&args.file)?;
    let percentiles = if args.percentiles.is_empty() {
        SPREAD.to_vec()
    } else {
        args.percentiles.clone()
    };
    for &p in &percentiles {
        if !(0.0..=100.0).contains(&p) || p.is_nan() {
            bail!("percentile {p} is out of range: expected 0..=100");
        }
    }
    let sets: Vec<&str> = match &args.set {
        Some(name) => {
            if !report::SETS.iter().any(|(set, _, _)| set == name) {
                bail!(
                    "unknown histogram set '{name}': expected one of {}",
                    report::SETS
                        .iter()
                        .map(|(set, _, _)| *set)
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
            vec![name.as_str()]
        }
        None => report::SETS.iter().map(|(set, _, _)| *set).collect(),
    };
    let mut text = report::header(&file, &args.file.display().to_string());
    let mut any = false;
    for set in sets {
        if let Some(section) = report::percentile_section(&file, set, &percentiles) {
            text.push_str(&section);
            any = true;
        } else if args.set.is_some() {
            bail!(
                "{} has no '{set}' histograms (modes: {})",
                args.file.display(),
                file.modes.join(",")
            );
        }
    }
    if !any {
        bail!(
            "{} holds no histograms (modes: {}): run residual or qfutility",
            args.file.display(),
            file.modes.join(",")
        );
    }
    Ok(Outcome::clean(text))
}
