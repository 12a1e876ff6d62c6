//! Calibrating revisions: the pool read and sharded into run settings, the revision built with
//! the `calibrate` feature and run over it, the file saved with its provenance, and both sides
//! of `lab compare --calibrate`.

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use git2::Repository;
use squall::calibrate::Sampling;

use super::data::{CalibrationFile, ShardProvenance};
use super::in_force::margins_in_force;
use super::json_rows::to_json_text;
use super::margins_source::{const_values, marked_block, MARGINS_FILE};
use super::run::{parse_shard, run_pool, select_shard, RunSettings};
use super::summary::{CalibratedSide, CalibrationComparison, DEFAULT_PERCENTILE};
use crate::calendar::since_epoch;
use crate::engine::bench::reported_engine;
use crate::engine::build::build_engine;
use crate::engine::revision::Revision;
use crate::engine::snapshot::materialize;
use crate::input::{read_text, SOURCE};
use crate::machine::Provenance;
use crate::paths::{write_atomically, write_new, LabPaths};
use crate::progress::Progress;

/// The cargo feature that compiles the engine's samplers in.
pub(crate) const FEATURE: &str = "calibrate";

/// Writes a calibration file atomically as pretty JSON, arrays of scalars on one line.
pub(crate) fn save(path: &Path, file: &CalibrationFile) -> Result<()> {
    write_atomically(path, to_json_text(file)?.as_bytes())
}

/// [`save`] to a user's `--out`, which never replaces a file (`paths::write_new`).
pub(crate) fn save_new(path: &Path, file: &CalibrationFile) -> Result<()> {
    write_new(path, to_json_text(file)?.as_bytes())
}

/// The calibration of one revision, ready to report.
pub(crate) struct Calibrated {
    pub(crate) file: CalibrationFile,
    pub(crate) path: PathBuf,
    /// `FUTILITY_BASE_MARGIN_BY_SOURCE` in force in the revision, when known.
    pub(crate) futility: Option<[i32; 3]>,
}

/// Builds `revision` with the calibrate feature and runs the pool.
pub(crate) fn calibrate_revision(
    repo: &Repository,
    paths: &LabPaths,
    progress: &Progress,
    revision: &Revision,
    settings: &RunSettings,
    results: &Path,
    out: Option<&Path>,
) -> Result<Calibrated> {
    let binary = build_engine(repo, revision, &[FEATURE], paths, progress)?;
    // The constants only label the report: a binary that cannot say them still calibrates.
    let reported = reported_engine(&binary.path)
        .map_err(|error| {
            crate::progress::warning(&format!(
                "warning: {error:#}; the margins in force are read from the source"
            ));
        })
        .ok();
    let sources = materialize(repo, revision, paths, progress).ok();
    let futility = reported
        .as_ref()
        .and_then(|engine| engine.futility_base_margin_by_source)
        .or_else(|| sources.as_deref().and_then(futility_margins_from_source));
    let margins = margins_in_force(
        reported
            .as_ref()
            .and_then(|engine| engine.margin_tables.as_ref()),
        sources.as_deref(),
    );
    progress.line(&format!(
        "calibrating {}: {} positions, depth {}, {} jobs",
        revision.short_name(),
        settings.fens.len(),
        settings.depth,
        settings.jobs
    ));
    let mut file = run_pool(&binary.path, settings, &results.join("work"), progress)?;
    file.lab = Some(ShardProvenance {
        pool: settings.pool.clone(),
        pool_digest: settings.pool_digest.clone(),
        pool_positions: settings.pool_positions,
        revision: revision.spec.clone(),
        tree: revision.tree.to_string(),
        shard_count: settings.shard.1,
        shards: vec![settings.shard.0],
        margins,
        measured: Some(Provenance::here_now()),
    });
    // The samples' positions are pool indices, checked against the record just set.
    file.validate()?;
    let path = match out {
        Some(out) => {
            save_new(out, &file)?;
            out.to_path_buf()
        }
        None => {
            let path = results.join("calibration.json");
            save(&path, &file)?;
            path
        }
    };
    progress.line(&format!("wrote {}", path.display()));
    Ok(Calibrated {
        file,
        path,
        futility,
    })
}

/// `lab compare A B --calibrate`: calibrates both revisions on the (small) pool, side by side
/// with STALE futility warnings.
pub(crate) fn compare_calibration(
    repo: &Repository,
    paths: &LabPaths,
    progress: &Progress,
    revisions: [&Revision; 2],
    pool: &Path,
    depth: u32,
) -> Result<CalibrationComparison> {
    let modes = ["marginsafety", "qfutility"].map(String::from);
    let settings = run_settings(paths, pool, depth, None, &modes, None, Sampling::default())?;
    let stamp = since_epoch().as_millis();
    let root = paths
        .root
        .join("calibration")
        .join(format!("compare-{stamp}"));
    let side = |label: &str, revision: &Revision| -> Result<(CalibratedSide, CalibrationFile)> {
        let calibrated = calibrate_revision(
            repo,
            paths,
            progress,
            revision,
            &settings,
            &root.join(label),
            None,
        )?;
        let side = CalibratedSide::new(
            revision.short_name(),
            calibrated.path.display().to_string(),
            &calibrated.file,
            calibrated.futility,
            DEFAULT_PERCENTILE,
        );
        Ok((side, calibrated.file))
    };
    let (a, _) = side("a", revisions[0])?;
    let (b, b_file) = side("b", revisions[1])?;
    Ok(CalibrationComparison::new(
        (b_file.depth, b_file.positions),
        a,
        b,
        DEFAULT_PERCENTILE,
        root.display().to_string(),
    ))
}

/// Reads and shards the pool and checks the modes.
pub(crate) fn run_settings(
    paths: &LabPaths,
    pool: &Path,
    depth: u32,
    jobs: Option<u32>,
    modes: &[String],
    shard: Option<&str>,
    sampling: Sampling,
) -> Result<RunSettings> {
    const MODES: [&str; 5] = [
        "residual",
        "marginsafety",
        "qfutility",
        "exitrate",
        "samples",
    ];
    if modes.is_empty() {
        bail!("--modes needs at least one of {}", MODES.join(", "));
    }
    for mode in modes {
        if !MODES.contains(&mode.as_str()) {
            bail!("unknown mode '{mode}': expected {}", MODES.join(", "));
        }
    }
    let pool = resolve_pool(paths, pool);
    let mut fens = crate::positions::read_pool(&pool)?;
    let pool_positions = fens.len() as u64;
    let pool_digest = pool_digest(&fens)?;
    let mut shard_of = (1, 1);
    if let Some(shard) = shard {
        let (index, count) = parse_shard(shard)?;
        fens = select_shard(fens, index, count);
        if fens.is_empty() {
            bail!("shard {shard} of {} holds no positions", pool.display());
        }
        shard_of = (index as u64, count as u64);
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let jobs = jobs.map_or(cores, |j| j as usize).clamp(1, fens.len());
    Ok(RunSettings {
        fens,
        depth,
        jobs,
        modes: modes.to_vec(),
        pool: pool.display().to_string(),
        pool_digest,
        pool_positions,
        shard: shard_of,
        sampling,
    })
}

/// The git blob id of the pool's positions, one per line: equal exactly when two runs read
/// the same positions in the same order, whatever the file's compression or comments.
fn pool_digest(fens: &[String]) -> Result<String> {
    let mut text = fens.join("\n");
    text.push('\n');
    Ok(git2::Oid::hash_object(git2::ObjectType::Blob, text.as_bytes())?.to_string())
}

/// A relative pool path that does not exist from the current directory is taken relative to
/// the repository, so the default works from any subdirectory.
fn resolve_pool(paths: &LabPaths, pool: &Path) -> PathBuf {
    if pool.is_relative() && !pool.exists() {
        let in_repo = paths.workdir.join(pool);
        if in_repo.exists() {
            return in_repo;
        }
    }
    pool.to_path_buf()
}

pub(crate) fn default_results_dir(paths: &LabPaths, revision: &Revision) -> PathBuf {
    let id = revision
        .commit
        .map_or_else(|| format!("tree-{}", revision.tree), |c| c.to_string());
    let stamp = since_epoch().as_millis();
    paths
        .root
        .join("calibration")
        .join(format!("{}-{stamp}", &id[..id.len().min(15)]))
}

/// Where revisions before the bench reported `engine.futility_base_margin_by_source` kept
/// `FUTILITY_BASE_MARGIN_BY_SOURCE`, on one line.
const OLD_FUTILITY_FILE: &str = "engine/src/search/mod.rs";

/// `FUTILITY_BASE_MARGIN_BY_SOURCE` of a source tree, for revisions whose bench does not report
/// it: the marked block of `margins.rs`, else the `const` line where revisions before the block
/// held it kept it.
pub(crate) fn futility_margins_from_source(sources: &Path) -> Option<[i32; 3]> {
    // The tree is the revision's own: a symlink to a device or a huge file reads as no block.
    let in_block = read_text(&sources.join(MARGINS_FILE), SOURCE)
        .ok()
        .and_then(|source| {
            const_values(marked_block(&source)?, "FUTILITY_BASE_MARGIN_BY_SOURCE")?
                .try_into()
                .ok()
        });
    in_block.or_else(|| {
        parse_futility_margins(&read_text(&sources.join(OLD_FUTILITY_FILE), SOURCE).ok()?)
    })
}

/// The one-line `const FUTILITY_BASE_MARGIN_BY_SOURCE` of `engine/src/search/mod.rs` as revisions
/// before the bench reported it wrote it.
pub(crate) fn parse_futility_margins(source: &str) -> Option<[i32; 3]> {
    let line = source
        .lines()
        .find(|l| l.contains("const FUTILITY_BASE_MARGIN_BY_SOURCE"))?;
    let list = line.split('=').nth(1)?;
    let list = list.trim().trim_end_matches(';').trim();
    let inner = list.strip_prefix('[')?.strip_suffix(']')?;
    let values: Vec<i32> = inner
        .split(',')
        .map(|v| v.trim().parse().ok())
        .collect::<Option<_>>()?;
    values.try_into().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_revisions_futility_margins_read_from_either_place_in_the_source() {
        let tree = tempfile::tempdir().unwrap();
        let write = |path: &str, text: &str| {
            let path = tree.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        assert_eq!(futility_margins_from_source(tree.path()), None);
        write(
            OLD_FUTILITY_FILE,
            "pub const FUTILITY_BASE_MARGIN_BY_SOURCE: [i32; 3] = [300, 150, 90];\n",
        );
        assert_eq!(
            futility_margins_from_source(tree.path()),
            Some([300, 150, 90])
        );
        // The marked block, where the constant lives now, comes first.
        write(
            MARGINS_FILE,
            include_str!("../../../engine/src/eval/margins.rs"),
        );
        assert_eq!(
            futility_margins_from_source(tree.path()),
            Some(squall::eval::margins::FUTILITY_BASE_MARGIN_BY_SOURCE)
        );
    }

    #[test]
    fn reads_the_futility_margins_from_source() {
        let source =
            "// x\npub const FUTILITY_BASE_MARGIN_BY_SOURCE: [i32; 3] = [350, 175, 100];\n";
        assert_eq!(parse_futility_margins(source), Some([350, 175, 100]));
        assert_eq!(parse_futility_margins("nothing"), None);
        assert_eq!(
            parse_futility_margins("const FUTILITY_BASE_MARGIN_BY_SOURCE: [i32; 2] = [1, 2];"),
            None
        );
    }
}
