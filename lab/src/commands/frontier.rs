//! `lab frontier --point LABEL=VERDICT_JSON[,CALIBRATION_JSON] ... [--reference LABEL[=FILE]]`:
//! reads stored verdicts and calibrations, measures nothing (and needs no repository).

use std::path::PathBuf;

use anyhow::{bail, Result};

use crate::cli::FrontierArgs;
use crate::exit::Exit;
use crate::outcome::Outcome;
use crate::paths::NamedPath;
use crate::report::Report;
use crate::verdict::frontier::{frontier, PointInput, ReferenceInput, DEFAULT_REFERENCE_LABEL};

pub(crate) fn run(args: &FrontierArgs) -> Result<Outcome> {
    let points = args
        .points
        .iter()
        .map(|text| point(text))
        .collect::<Result<Vec<_>>>()?;
    let reference = args
        .reference
        .as_deref()
        .map_or_else(|| Ok(default_reference()), reference)?;
    Ok(Outcome {
        report: Report::Frontier(Box::new(frontier(&points, &reference)?)),
        exit: Exit::Clean,
    })
}

/// The files the command reads, as far as its arguments parse; no export may overwrite one.
pub(crate) fn files(args: &FrontierArgs) -> Vec<NamedPath> {
    let mut files = Vec::new();
    for point in args.points.iter().filter_map(|text| point(text).ok()) {
        files.push(NamedPath::new("a --point verdict", &point.verdict));
        if let Some(calibration) = &point.calibration {
            files.push(NamedPath::new("a --point calibration", calibration));
        }
    }
    if let Some(Ok(ReferenceInput {
        calibration: Some(calibration),
        ..
    })) = args.reference.as_deref().map(reference)
    {
        files.push(NamedPath::new("the --reference calibration", &calibration));
    }
    files
}

fn default_reference() -> ReferenceInput {
    ReferenceInput {
        label: DEFAULT_REFERENCE_LABEL.to_string(),
        calibration: None,
    }
}

fn label(flag: &str, text: &str, label: &str) -> Result<String> {
    if label.trim().is_empty() {
        bail!("{flag} {text:?}: the label is empty");
    }
    Ok(label.to_string())
}

/// `LABEL=VERDICT_JSON[,CALIBRATION_JSON]`: the label ends at the first `=`, the verdict's path
/// at the last `,` (so a label may not hold `=`, nor a calibration's path `,`).
fn point(text: &str) -> Result<PointInput> {
    let Some((name, files)) = text.split_once('=') else {
        bail!("--point {text:?}: expected LABEL=VERDICT_JSON[,CALIBRATION_JSON]");
    };
    let (verdict, calibration) = match files.rsplit_once(',') {
        Some((verdict, calibration)) => (verdict, Some(calibration)),
        None => (files, None),
    };
    if verdict.is_empty() || calibration.is_some_and(str::is_empty) {
        bail!("--point {text:?}: a file name is empty (LABEL=VERDICT_JSON[,CALIBRATION_JSON])");
    }
    Ok(PointInput {
        label: label("--point", text, name)?,
        verdict: PathBuf::from(verdict),
        calibration: calibration.map(PathBuf::from),
    })
}

/// `LABEL[=CALIBRATION_JSON]`.
fn reference(text: &str) -> Result<ReferenceInput> {
    let (name, calibration) = match text.split_once('=') {
        Some((name, "")) => {
            bail!("--reference {text:?}: the calibration's file name is empty ({name})")
        }
        Some((name, file)) => (name, Some(PathBuf::from(file))),
        None => (text, None),
    };
    Ok(ReferenceInput {
        label: label("--reference", text, name)?,
        calibration,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_and_references_parse_and_bad_ones_are_named() {
        let parsed = point("2%=runs/v2.json,runs/cal 2.json").unwrap();
        assert_eq!(parsed.label, "2%");
        assert_eq!(parsed.verdict, PathBuf::from("runs/v2.json"));
        assert_eq!(parsed.calibration, Some(PathBuf::from("runs/cal 2.json")));
        assert_eq!(point("a=v.json").unwrap().calibration, None);
        for bad in ["v.json", "=v.json", "a=", "a=v.json,"] {
            let error = point(bad).unwrap_err().to_string();
            assert!(error.starts_with("--point"), "{bad}: {error}");
        }
        let with = reference("1%=c.json").unwrap();
        assert_eq!(
            (with.label.as_str(), with.calibration),
            ("1%", Some(PathBuf::from("c.json")))
        );
        assert_eq!(reference("1%").unwrap().calibration, None);
        assert!(reference("1%=").is_err());
        assert!(reference("").is_err());
    }
}
