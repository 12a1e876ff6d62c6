//! `lab hist FILE [PERCENTILES]`: any percentile of a saved calibration file's histograms.

use anyhow::{bail, Result};

use crate::calibration::summary::{SETS, SPREAD};
use crate::calibration::CalibrationFile;
use crate::cli::HistArgs;
use crate::lab::Lab;
use crate::outcome::Outcome;
use crate::report::calibration::{header, percentile_section};
use crate::report::table::Style;
use crate::report::Report;

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
    let mut text = header(&file, &args.file.display().to_string());
    let mut any = false;
    for set in sets {
        if let Some(section) = percentile_section(&file, set, &percentiles, Style::Terminal) {
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
    Ok(Outcome::clean(Report::Text(text)))
}
