//! Running `squall calibrate` over a pool: the positions are split into one chunk per job,
//! each chunk runs in its own engine process, and the per-chunk files are merged bin-wise.
//! Every position is searched from cleared state, so how the pool is split (into jobs or
//! into shards) does not change the merged result, except for the replay samples: a uniform
//! sample of the calls however the pool is split, but not the same one.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;

use anyhow::{anyhow, bail, Context, Result};

use super::data::{CalibrationFile, SampleRows};
use super::merge::merge_samples;
use crate::paths::{remove_if_exists, write_atomically};
use crate::positions::SplitMix;
use crate::process::{describe_status, spawn_in_group, tail_section, wait_and_end_group};
use crate::progress::Progress;
use squall::calibrate::Sampling;

/// Progress lines the engine prints per chunk (`calibrate: i/n positions`, every 5%).
const ENGINE_PROGRESS_STEPS: u64 = 20;

#[derive(Debug, Clone)]
pub(crate) struct RunSettings {
    pub(crate) fens: Vec<String>,
    pub(crate) depth: u32,
    pub(crate) jobs: usize,
    pub(crate) modes: Vec<String>,
    /// The pool as given, its digest and size, and the shard run (1 of 1 for all of it).
    pub(crate) pool: String,
    pub(crate) pool_digest: String,
    pub(crate) pool_positions: u64,
    pub(crate) shard: (u64, u64),
    /// The samples mode's reservoir capacity per material bucket, and the run's seed.
    pub(crate) sampling: Sampling,
}

impl RunSettings {
    /// Index in the whole pool of position `index` of this run's (sharded) positions.
    pub(crate) fn pool_index(&self, index: usize) -> u64 {
        let (shard, count) = self.shard;
        index as u64 * count + shard - 1
    }
}

/// The engine's seed for the chunk that starts at pool position `first`: chunks of one run,
/// and of the shards of one pool, draw apart.
fn chunk_seed(seed: u64, first: u64) -> u64 {
    SplitMix::new(seed ^ first.rotate_left(32)).next_u64()
}

/// Parses `I/N` with `1 <= I <= N`.
pub(crate) fn parse_shard(text: &str) -> Result<(usize, usize)> {
    let bad = || anyhow!("bad --shard '{text}': expected I/N with 1 <= I <= N, e.g. 2/4");
    let (index, count) = text.split_once('/').ok_or_else(bad)?;
    let index: usize = index.trim().parse().map_err(|_| bad())?;
    let count: usize = count.trim().parse().map_err(|_| bad())?;
    if index == 0 || count == 0 || index > count {
        return Err(bad());
    }
    Ok((index, count))
}

/// Shard `index` (1-based) of `count`: the positions whose 0-based index % count == index - 1.
pub(crate) fn select_shard(fens: Vec<String>, index: usize, count: usize) -> Vec<String> {
    fens.into_iter()
        .enumerate()
        .filter(|(i, _)| i % count == index - 1)
        .map(|(_, fen)| fen)
        .collect()
}

/// Deals `n` items round-robin into at most `jobs` chunks of indices. Pools are written
/// stratum by stratum, and endgames search faster than middlegames, so contiguous chunks
/// would leave one process idle long before the other finishes.
fn deal(n: usize, jobs: usize) -> Vec<Vec<usize>> {
    let jobs = jobs.clamp(1, n.max(1));
    let mut chunks = vec![Vec::with_capacity(n / jobs + 1); jobs];
    for i in 0..n {
        chunks[i % jobs].push(i);
    }
    chunks.retain(|c| !c.is_empty());
    chunks
}

/// Runs the calibration with `engine` and returns the merged file. `work` holds the chunk
/// files while the processes run and is removed afterwards.
pub(crate) fn run_pool(
    engine: &Path,
    settings: &RunSettings,
    work: &Path,
    progress: &Progress,
) -> Result<CalibrationFile> {
    if settings.fens.is_empty() {
        bail!("no positions to calibrate");
    }
    std::fs::create_dir_all(work).with_context(|| format!("creating {}", work.display()))?;
    let chunks = deal(settings.fens.len(), settings.jobs);
    let task = progress.counter(
        chunks.len() as u64 * ENGINE_PROGRESS_STEPS,
        &format!(
            "calibrating {} positions in {} processes",
            settings.fens.len(),
            chunks.len()
        ),
    );
    let (sender, receiver) = mpsc::channel::<String>();
    let mut children = Vec::new();
    for (job, indices) in chunks.iter().enumerate() {
        let chunk = work.join(format!("chunk-{job}.epd"));
        let out = work.join(format!("chunk-{job}.json"));
        let mut text = String::new();
        for &i in indices {
            text.push_str(&settings.fens[i]);
            text.push('\n');
        }
        write_atomically(&chunk, text.as_bytes())?;
        let mut command = Command::new(engine);
        command
            .arg("calibrate")
            .args(&settings.modes)
            .arg("--positions")
            .arg(&chunk)
            .arg("--depth")
            .arg(settings.depth.to_string());
        if settings.modes.iter().any(|mode| mode == "samples") {
            let first = settings.pool_index(indices[0]);
            command
                .arg("--samples-per-bucket")
                .arg(settings.sampling.per_bucket.to_string())
                .arg("--seed")
                .arg(chunk_seed(settings.sampling.seed, first).to_string());
        }
        command
            .arg("--out")
            .arg(&out)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = spawn_in_group(&mut command)
            .with_context(|| format!("starting {}", engine.display()))?;
        let stderr = child.stderr.take();
        let sender = sender.clone();
        // Forwards progress lines and keeps the rest for error messages.
        let reader = thread::spawn(move || {
            let mut kept = Vec::new();
            if let Some(stderr) = stderr {
                for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                    if let Some(step) = line.strip_prefix("calibrate: ") {
                        let _ = sender.send(format!("job {job}: {step}"));
                    } else {
                        kept.extend_from_slice(line.as_bytes());
                        kept.push(b'\n');
                    }
                }
            }
            kept
        });
        children.push((job, child, reader, out));
    }
    drop(sender);
    for line in receiver {
        task.advance(&line);
    }
    task.finish();
    let mut failures = Vec::new();
    let mut outputs = Vec::new();
    for (job, mut child, reader, out) in children {
        let status = wait_and_end_group(&mut child).context("waiting for the engine")?;
        let stderr = reader.join().unwrap_or_default();
        if status.success() {
            outputs.push((job, out));
        } else {
            failures.push(format!(
                "calibration process {job} failed ({}){}",
                describe_status(status),
                tail_section(&stderr, 10)
            ));
        }
    }
    if !failures.is_empty() {
        bail!("{}", failures.join("\n"));
    }
    // The samples merge apart: their positions become pool indices, which only the whole
    // run's record (set by the caller) validates.
    let mut merged: Option<CalibrationFile> = None;
    let mut samples: Option<SampleRows> = None;
    for (job, out) in &outputs {
        let mut file = CalibrationFile::load(out)?;
        if let Some(mut chunk) = file.samples.take() {
            for sample in chunk.by_material_bucket.iter_mut().flatten() {
                let index = *chunks[*job]
                    .get(sample.position as usize)
                    .with_context(|| format!("{}: a sample of no position", out.display()))?;
                sample.position = u32::try_from(settings.pool_index(index))
                    .context("a pool of more than 2^32 positions cannot be sampled")?;
            }
            samples = Some(match samples {
                None => chunk,
                Some(all) => merge_samples(&all, &chunk)?,
            });
        }
        match &mut merged {
            None => merged = Some(file),
            Some(all) => all.merge(&file)?,
        }
    }
    remove_if_exists(work)?;
    let mut merged = merged.context("no calibration output")?;
    merged.samples = samples.map(|samples| SampleRows {
        seed: settings.sampling.seed,
        ..samples
    });
    Ok(merged)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_pool() {
        let fens: Vec<String> = (0..10).map(|i| i.to_string()).collect();
        let mut all: Vec<String> = (1..=3)
            .flat_map(|i| select_shard(fens.clone(), i, 3))
            .collect();
        all.sort_by_key(|s| s.parse::<u32>().unwrap());
        assert_eq!(all, fens);
        assert_eq!(select_shard(fens, 2, 3), ["1", "4", "7"]);
        assert_eq!(parse_shard("2/4").unwrap(), (2, 4));
        for bad in ["0/4", "5/4", "2", "a/b", "1/0"] {
            assert!(parse_shard(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn chunks_cover_everything_once() {
        for (n, jobs) in [(10, 3), (2, 8), (1, 1), (7, 7)] {
            let chunks = deal(n, jobs);
            let mut all: Vec<usize> = chunks.concat();
            all.sort_unstable();
            assert_eq!(all, (0..n).collect::<Vec<_>>());
            assert!(chunks.len() <= jobs);
        }
        assert_eq!(deal(5, 2), [vec![0, 2, 4], vec![1, 3]]);
    }
}
