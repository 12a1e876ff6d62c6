//! The calibration commands: `lab pool generate`, `lab calibrate`, `lab calibrate merge`,
//! `lab hist` and `lab tables`, plus the calibration part of `lab compare --calibrate`.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context, Result};
use git2::Repository;

use super::data::{merge_shards, CalibrationFile, Provenance};
use super::report::{self, SPREAD};
use super::run::{parse_shard, run_pool, select_shard, RunSettings};
use super::tables::{self, Choice, Pair};
use crate::app::{Exit, Outcome};
use crate::build::build_engine;
use crate::cli::{CalibrateRunArgs, CompareCalibrationArgs, HistArgs, PoolCommand, TablesArgs};
use crate::paths::{write_atomically, LabPaths};
use crate::progress::Progress;
use crate::revision::{materialize, open_repository, resolve, Revision};

/// The cargo feature that compiles the engine's samplers in.
pub const FEATURE: &str = "calibrate";

fn report(text: String) -> Result<Outcome> {
    Ok(Outcome {
        report: text,
        exit: Exit::Clean,
    })
}

pub fn pool(action: PoolCommand, progress: &Progress) -> Result<Outcome> {
    match action {
        PoolCommand::Generate {
            count,
            seed,
            out,
            book,
        } => {
            let count = usize::try_from(count)?;
            if book {
                report(crate::pool::book_command(count, seed, &out, progress)?)
            } else {
                report(crate::pool::generate_command(count, seed, &out, progress)?)
            }
        }
    }
}

pub fn hist(args: &HistArgs) -> Result<Outcome> {
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
    report(text)
}

pub fn tables(args: &TablesArgs, repo: Option<&Path>) -> Result<Outcome> {
    let file = CalibrationFile::load(&args.file)?;
    let residual = Pair::new(args.lo, args.hi, args.allow_asymmetric)?;
    let king = Pair::new(
        args.king_lo.unwrap_or(args.lo),
        args.king_hi.unwrap_or(args.hi),
        args.allow_asymmetric,
    )?;
    let mut choice = Choice::uniform(residual, king);
    for text in &args.buckets {
        let (target, bucket, pair) = tables::parse_override(text, args.allow_asymmetric)?;
        choice.set(target, bucket, pair);
    }
    let origin = args.file.file_name().map_or_else(
        || args.file.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let block = tables::render(&file, &origin, &choice)?;
    let mut text = format!("{}{block}{}\n", tables::BEGIN_MARKER, tables::END_MARKER);
    if args.apply {
        let repo = open_repository(repo)?;
        let workdir = repo
            .workdir()
            .context("the repository has no working tree")?
            .to_path_buf();
        let path = tables::apply(&workdir, &block)?;
        text.push_str(&format!(
            "\nrewrote the margin tables in {}\n\
             next: rebuild and re-run the whole pool (`lab calibrate WORKTREE`), or \
             `lab compare HEAD WORKTREE --calibrate`: exits reshape the search tree, so \
             buckets whose entries did not change can move too\n",
            path.display()
        ));
    }
    report(text)
}

pub fn merge(files: &[PathBuf], out: Option<&Path>, progress: &Progress) -> Result<Outcome> {
    let mut loaded = Vec::new();
    for (i, path) in files.iter().enumerate() {
        let same = |other: &PathBuf| {
            other == path
                || matches!(
                    (other.canonicalize(), path.canonicalize()),
                    (Ok(a), Ok(b)) if a == b
                )
        };
        if let Some(earlier) = files[..i].iter().find(|other| same(other)) {
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
        save(out, &merged)?;
        progress.line(&format!("wrote {}", out.display()));
    }
    let origin = format!("{} merged files", files.len());
    report(report::full_report(
        &merged,
        &origin,
        None,
        report::DEFAULT_PERCENTILE,
    ))
}

/// Writes a calibration file atomically as pretty JSON.
pub fn save(path: &Path, file: &CalibrationFile) -> Result<()> {
    let json = serde_json::to_string_pretty(file)? + "\n";
    write_atomically(path, json.as_bytes())
}

/// The calibration of one revision, ready to report.
pub struct Calibrated {
    pub file: CalibrationFile,
    pub path: PathBuf,
    /// `FUTILITY_BASE_MARGIN_BY_SOURCE` as written in the revision's source, when found.
    pub futility: Option<[i32; 3]>,
}

/// Builds `revision` with the calibrate feature and runs the pool.
pub fn calibrate_revision(
    repo: &Repository,
    paths: &LabPaths,
    progress: &Progress,
    revision: &Revision,
    settings: &RunSettings,
    results: &Path,
    out: Option<&Path>,
) -> Result<Calibrated> {
    let binary = build_engine(repo, revision, &[FEATURE], paths, progress)?;
    let futility = materialize(repo, revision.tree, paths)
        .ok()
        .and_then(|sources| futility_margins(&sources));
    progress.line(&format!(
        "calibrating {}: {} positions, depth {}, {} jobs",
        revision.short_name(),
        settings.fens.len(),
        settings.depth,
        settings.jobs
    ));
    let mut file = run_pool(&binary.path, settings, &results.join("work"), progress)?;
    file.lab = Some(Provenance {
        pool: settings.pool.clone(),
        pool_digest: settings.pool_digest.clone(),
        pool_positions: settings.pool_positions,
        revision: revision.spec.clone(),
        tree: revision.tree.to_string(),
        shard_count: settings.shard.1,
        shards: vec![settings.shard.0],
    });
    let path = out.map_or_else(|| results.join("calibration.json"), Path::to_path_buf);
    save(&path, &file)?;
    progress.line(&format!("wrote {}", path.display()));
    Ok(Calibrated {
        file,
        path,
        futility,
    })
}

pub fn calibrate(
    repo: &Repository,
    paths: &LabPaths,
    progress: &Progress,
    args: &CalibrateRunArgs,
) -> Result<Outcome> {
    let revision = resolve(repo, &args.rev, paths)?;
    let settings = run_settings(
        paths,
        &args.pool,
        args.depth,
        args.jobs,
        &args.modes,
        args.shard.as_deref(),
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
    report(report::full_report(
        &calibrated.file,
        &origin,
        calibrated.futility,
        args.percentile,
    ))
}

/// `lab compare A B --calibrate`: calibrates both revisions on the (small) pool and returns
/// the side-by-side section with STALE futility warnings.
pub fn compare_calibration(
    repo: &Repository,
    paths: &LabPaths,
    progress: &Progress,
    revisions: [&Revision; 2],
    args: &CompareCalibrationArgs,
) -> Result<String> {
    let modes = ["marginsafety", "qfutility"].map(String::from);
    let settings = run_settings(paths, &args.pool, args.calib_depth, None, &modes, None)?;
    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let root = paths
        .root
        .join("calibration")
        .join(format!("compare-{stamp}"));
    let mut sides = Vec::new();
    for (label, revision) in ["a", "b"].iter().zip(revisions) {
        sides.push(calibrate_revision(
            repo,
            paths,
            progress,
            revision,
            &settings,
            &root.join(label),
            None,
        )?);
    }
    let (a_label, b_label) = (revisions[0].short_name(), revisions[1].short_name());
    let a = report::Side {
        label: &a_label,
        file: &sides[0].file,
        futility: sides[0].futility,
    };
    let b = report::Side {
        label: &b_label,
        file: &sides[1].file,
        futility: sides[1].futility,
    };
    Ok(report::compare_section(&a, &b, report::DEFAULT_PERCENTILE)
        + &format!("calibration files: {}\n", root.display()))
}

/// Reads and shards the pool and checks the modes.
pub fn run_settings(
    paths: &LabPaths,
    pool: &Path,
    depth: u32,
    jobs: Option<u32>,
    modes: &[String],
    shard: Option<&str>,
) -> Result<RunSettings> {
    const MODES: [&str; 4] = ["residual", "marginsafety", "qfutility", "exitrate"];
    if modes.is_empty() {
        bail!("--modes needs at least one of {}", MODES.join(", "));
    }
    for mode in modes {
        if !MODES.contains(&mode.as_str()) {
            bail!("unknown mode '{mode}': expected {}", MODES.join(", "));
        }
    }
    let pool = resolve_pool(paths, pool);
    let mut fens = crate::pool::read_pool(&pool)?;
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

pub fn default_results_dir(paths: &LabPaths, revision: &Revision) -> PathBuf {
    let id = revision
        .commit
        .map_or_else(|| format!("tree-{}", revision.tree), |c| c.to_string());
    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    paths
        .root
        .join("calibration")
        .join(format!("{}-{stamp}", &id[..id.len().min(15)]))
}

/// `FUTILITY_BASE_MARGIN_BY_SOURCE` from `engine/src/search/mod.rs` of a source tree.
pub fn futility_margins(sources: &Path) -> Option<[i32; 3]> {
    let text = std::fs::read_to_string(sources.join("engine/src/search/mod.rs")).ok()?;
    parse_futility_margins(&text)
}

pub fn parse_futility_margins(source: &str) -> Option<[i32; 3]> {
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
