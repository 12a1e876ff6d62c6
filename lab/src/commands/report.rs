//! `lab report FILE.json --out FILE.html`: the HTML page of a stored JSON report, measuring
//! nothing (and needing no repository).

use anyhow::{bail, Context, Result};

use crate::cli::ReportArgs;
use crate::exit::Exit;
use crate::input::{read_text, size_text, CALIBRATION, REPORT};
use crate::outcome::Outcome;
use crate::report::Report;

pub(crate) fn run(args: &ReportArgs) -> Result<Outcome> {
    crate::paths::check_writable(&args.out)?;
    // A calibration with replay samples may be as large as the calibration readers take:
    // the page the lab drew of it when it was made is drawn again from the same bytes.
    let (text, beyond_report_cap) = match read_text(&args.file, REPORT) {
        Err(error) if error.is_too_large() => (read_text(&args.file, CALIBRATION)?, true),
        read => (read?, false),
    };
    let value: serde_json::Value = serde_json::from_str(&text).with_context(|| {
        format!(
            "{} is not JSON (a lab report from --format json or --export-json)",
            args.file.display()
        )
    })?;
    let kind = value.get("kind").and_then(|kind| kind.as_str());
    if beyond_report_cap && !matches!(kind, Some("calibration" | crate::calibration::data::KIND)) {
        bail!(
            "{} is larger than a JSON report is read ({}); only a calibration may be larger \
             (up to {})",
            args.file.display(),
            size_text(REPORT.cap),
            size_text(CALIBRATION.cap)
        );
    }
    let page = crate::report::html::from_json(&value)
        .with_context(|| format!("cannot draw {}", args.file.display()))?;
    crate::paths::write_atomically(&args.out, page.as_bytes())?;
    Ok(Outcome {
        report: Report::Text(format!("wrote {}\n", args.out.display())),
        exit: Exit::Clean,
    })
}
