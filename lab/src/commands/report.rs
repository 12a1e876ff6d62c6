//! `lab report FILE.json --out FILE.html`: the HTML page of a stored JSON report, measuring
//! nothing (and needing no repository).

use anyhow::{Context, Result};

use crate::cli::ReportArgs;
use crate::exit::Exit;
use crate::outcome::Outcome;
use crate::report::Report;

pub(crate) fn run(args: &ReportArgs) -> Result<Outcome> {
    crate::paths::check_writable(&args.out)?;
    let text = crate::input::read_text(&args.file, crate::input::REPORT)?;
    let value: serde_json::Value = serde_json::from_str(&text).with_context(|| {
        format!(
            "{} is not JSON (a lab report from --format json or --export-json)",
            args.file.display()
        )
    })?;
    let page = crate::report::html::from_json(&value)
        .with_context(|| format!("cannot draw {}", args.file.display()))?;
    crate::paths::write_atomically(&args.out, page.as_bytes())?;
    Ok(Outcome {
        report: Report::Text(format!("wrote {}\n", args.out.display())),
        exit: Exit::Clean,
    })
}
