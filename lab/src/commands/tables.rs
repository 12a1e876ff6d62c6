//! `lab tables FILE`: the engine's margin tables from a calibration file, and with `--apply`
//! the marked block of engine/src/eval/margins.rs rewritten.

use anyhow::Result;

use crate::calibration::tables::{self, Choice, Pair};
use crate::calibration::CalibrationFile;
use crate::cli::{PercentileArgs, TablesArgs};
use crate::engine::adapter::ProtocolFeature;
use crate::lab::Lab;
use crate::outcome::Outcome;
use crate::report::calibration::margin_tables;
use crate::report::Report;

pub(crate) fn run(lab: &Lab, args: &TablesArgs) -> Result<Outcome> {
    let file = CalibrationFile::load(&args.file)?;
    let choice = choice(&args.percentiles)?;
    let block = tables::render(&file, &tables::origin(&args.file), &choice)?;
    let applied = if args.apply {
        // Edits the working tree's source, not the cache: no lock.
        let workdir = lab.workdir()?;
        workdir.engine.require(ProtocolFeature::MarginTables)?;
        Some(tables::apply(&workdir.paths.workdir, &block)?)
    } else {
        None
    };
    Ok(Outcome::clean(Report::Text(margin_tables(
        &block,
        applied.as_deref(),
    ))))
}

/// The percentile choice of `--lo/--hi/--king-lo/--king-hi/--bucket`, checked.
pub(crate) fn choice(args: &PercentileArgs) -> Result<Choice> {
    let (Some(lo), Some(hi)) = (args.lo, args.hi) else {
        anyhow::bail!("--lo and --hi are needed: the residual tables' percentiles");
    };
    let residual = Pair::new(lo, hi, args.allow_asymmetric)?;
    let king = Pair::new(
        args.king_lo.unwrap_or(lo),
        args.king_hi.unwrap_or(hi),
        args.allow_asymmetric,
    )?;
    let mut choice = Choice::uniform(residual, king);
    for text in &args.buckets {
        let (target, bucket, pair) = tables::parse_override(text, args.allow_asymmetric)?;
        choice.set(target, bucket, pair);
    }
    Ok(choice)
}
