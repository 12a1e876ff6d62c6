//! `lab calibrate REV`: the engine's samplers over a pool; `lab calibrate merge`: shard files
//! pooled into one.

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use squall::calibrate::Sampling;

use crate::calibration::calibrate::{
    calibrate_revision, default_results_dir, run_settings, save_new,
};
use crate::calibration::merge::merge_shards;
use crate::calibration::summary::DEFAULT_PERCENTILE;
use crate::calibration::CalibrationFile;
use crate::cli::{CalibrateArgs, CalibrateCommand, CalibrateRunArgs};
use crate::engine::adapter::ProtocolFeature;
use crate::engine::revision::resolve;
use crate::lab::Lab;
use crate::outcome::Outcome;
use crate::report::calibration::CalibrationReport;
use crate::report::Report;

pub(crate) fn run(lab: &Lab, args: &CalibrateArgs) -> Result<Outcome> {
    match &args.action {
        Some(CalibrateCommand::Merge { files, out, .. }) => merge(lab, files, out.as_deref()),
        None => calibrate(lab, &args.run),
    }
}

fn calibrate(lab: &Lab, args: &CalibrateRunArgs) -> Result<Outcome> {
    if let Some(out) = &args.out {
        crate::paths::check_new_output("--out", out)?;
    }
    let session = lab.lock()?;
    session.engine().require(ProtocolFeature::Calibration)?;
    let (repo, paths, progress) = (session.repo(), session.paths(), session.progress());
    let revision = resolve(repo, &args.rev, paths)?;
    let settings = run_settings(
        paths,
        &args.pool,
        args.depth,
        args.jobs,
        &args.modes,
        args.shard.as_deref(),
        Sampling {
            per_bucket: args.samples_per_bucket,
            seed: args.seed,
        },
    )?;
    let results = match &args.results {
        Some(dir) => dir.clone(),
        None => default_results_dir(paths, &revision),
    };
    let calibrated = calibrate_revision(
        repo,
        paths,
        progress,
        &revision,
        &settings,
        &results,
        args.out.as_deref(),
    )?;
    let origin = format!("{} at {}", revision.short_name(), calibrated.path.display());
    Ok(Outcome::clean(Report::Calibration(Box::new(
        CalibrationReport::new(
            calibrated.file,
            origin,
            calibrated.futility,
            args.percentile,
        ),
    ))))
}

fn merge(lab: &Lab, files: &[PathBuf], out: Option<&Path>) -> Result<Outcome> {
    if let Some(out) = out {
        crate::paths::check_new_output("--out", out)?;
    }
    let mut loaded = Vec::new();
    for (i, path) in files.iter().enumerate() {
        if let Some(earlier) = files[..i]
            .iter()
            .find(|other| crate::paths::same_file(other, path))
        {
            bail!(
                "{} is given twice (also as {}): give each shard once",
                path.display(),
                earlier.display()
            );
        }
        loaded.push((path.display().to_string(), CalibrationFile::load(path)?));
    }
    let merged = merge_shards(&loaded)?;
    if let Some(out) = out {
        save_new(out, &merged)?;
        lab.progress().line(&format!("wrote {}", out.display()));
    }
    let origin = format!("{} merged files", files.len());
    Ok(Outcome::clean(Report::Calibration(Box::new(
        CalibrationReport::new(merged, origin, None, DEFAULT_PERCENTILE),
    ))))
}
