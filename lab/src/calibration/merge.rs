//! The merge of calibration runs: `lab calibrate --shard` files pooled into one, every sum
//! checked, the replay samples' reservoirs resampled into a uniform sample of the union.

use super::data::{
    rows, CalibrationFile, Histograms, SampleRows, ShardProvenance, SparseHistogram, Tally,
    TierSafety,
};
use crate::machine::Provenance;
use crate::positions::SplitMix;
use anyhow::{bail, Context, Result};
use squall::tier::SIDE_BUCKETS;

impl CalibrationFile {
    /// Adds another run over a disjoint set of positions: sums everywhere, except the
    /// largest single-position contribution, which is a maximum. Every sum is checked: an
    /// overflow is an error naming the field, and `self` is left unchanged on any error.
    /// The `lab` record is not touched; [`merge_shards`] handles it.
    pub fn merge(&mut self, other: &CalibrationFile) -> Result<()> {
        let mut differences = Vec::new();
        if self.depth != other.depth {
            differences.push(format!("depth {} vs {}", self.depth, other.depth));
        }
        if self.hash_mb != other.hash_mb {
            differences.push(format!("hash_mb {} vs {}", self.hash_mb, other.hash_mb));
        }
        if self.modes != other.modes {
            differences.push(format!("modes {:?} vs {:?}", self.modes, other.modes));
        }
        if self.engine != other.engine {
            differences.push(format!("engine {:?} vs {:?}", self.engine, other.engine));
        }
        if !differences.is_empty() {
            bail!(
                "cannot merge runs with different settings: {}",
                differences.join(", ")
            );
        }
        let mut merged = self.clone();
        merged.positions = add(self.positions, other.positions, "positions")?;
        merged.nodes = add(self.nodes, other.nodes, "nodes")?;
        let rate = &mut merged.exit_rate;
        rate.calls = add(rate.calls, other.exit_rate.calls, "exit_rate.calls")?;
        add3(&mut rate.exits, &other.exit_rate.exits, "exit_rate.exits")?;
        rows(
            "exit_rate.by_material_bucket",
            other.exit_rate.by_material_bucket.len(),
            rate.by_material_bucket.len(),
        )?;
        for (b, (x, y)) in rate
            .by_material_bucket
            .iter_mut()
            .zip(&other.exit_rate.by_material_bucket)
            .enumerate()
        {
            add3(x, y, &format!("exit_rate.by_material_bucket[{b}]"))?;
        }
        match (&mut merged.histograms, &other.histograms) {
            (Some(a), Some(b)) => merge_histograms(a, b)?,
            (None, None) => {}
            _ => bail!("cannot merge: one run has histograms and the other not"),
        }
        match (&mut merged.margin_safety, &other.margin_safety) {
            (Some(a), Some(b)) => {
                merge_tier(&mut a.super_lazy, &b.super_lazy, "margin_safety.super_lazy")?;
                merge_tier(&mut a.lazy, &b.lazy, "margin_safety.lazy")?;
            }
            (None, None) => {}
            _ => bail!("cannot merge: one run has margin safety and the other not"),
        }
        match (&mut merged.samples, &other.samples) {
            (Some(a), Some(b)) => *a = merge_samples(a, b)?,
            (None, None) => {}
            _ => bail!("cannot merge: one run has samples and the other not"),
        }
        merged.validate().context("the merged run")?;
        *self = merged;
        Ok(())
    }
}

/// Merges the files of `lab calibrate --shard I/N` runs, each given with its name for
/// messages. Every file must carry the lab's record, and they must agree on the pool, the
/// engine's tree, depth, hash, modes and shard count, hold the positions their shards
/// should, and cover disjoint shards; a file given twice is refused. A merge of every shard
/// is recorded as the whole pool, so it equals an unsharded run.
pub fn merge_shards(files: &[(String, CalibrationFile)]) -> Result<CalibrationFile> {
    let Some(((first_name, first), rest)) = files.split_first() else {
        bail!("no files to merge");
    };
    let record = |name: &str, file: &CalibrationFile| -> Result<ShardProvenance> {
        let lab = file.lab.clone().with_context(|| {
            format!(
                "{name}: no shard record (not written by `lab calibrate`), so its positions \
                 cannot be checked against the other files; merge files of \
                 `lab calibrate --shard I/N --out FILE`"
            )
        })?;
        if lab.expected_positions() != Some(file.positions) {
            bail!(
                "{name}: {} positions, but shard(s) {:?} of {} of a {}-position pool hold {}",
                file.positions,
                lab.shards,
                lab.shard_count,
                lab.pool_positions,
                lab.expected_positions()
                    .map_or("an impossible number".to_string(), |n| n.to_string())
            );
        }
        Ok(lab)
    };
    let base = record(first_name, first)?;
    let mut covered: Vec<(u64, &str)> = base
        .shards
        .iter()
        .map(|&i| (i, first_name.as_str()))
        .collect();
    for (index, (name, file)) in rest.iter().enumerate() {
        for (earlier, other) in &files[..=index] {
            if other == file {
                bail!("{name} is the same run as {earlier} (identical contents): give each shard once");
            }
        }
        let lab = record(name, file)?;
        let mut differences = Vec::new();
        let mut differ = |field: &str, a: String, b: String| {
            if a != b {
                differences.push(format!("{field}: {first_name} has {a}, {name} has {b}"));
            }
        };
        differ(
            "pool",
            format!("{} ({})", base.pool, base.pool_digest),
            format!("{} ({})", lab.pool, lab.pool_digest),
        );
        differ(
            "pool positions",
            base.pool_positions.to_string(),
            lab.pool_positions.to_string(),
        );
        differ(
            "engine tree",
            format!("{} ({})", base.tree, base.revision),
            format!("{} ({})", lab.tree, lab.revision),
        );
        differ("depth", first.depth.to_string(), file.depth.to_string());
        differ(
            "hash_mb",
            first.hash_mb.to_string(),
            file.hash_mb.to_string(),
        );
        differ("modes", first.modes.join(","), file.modes.join(","));
        differ(
            "engine",
            format!("{:?}", first.engine),
            format!("{:?}", file.engine),
        );
        differ(
            "shard count",
            base.shard_count.to_string(),
            lab.shard_count.to_string(),
        );
        if !differences.is_empty() {
            bail!(
                "cannot merge runs that differ in {}",
                differences.join("; ")
            );
        }
        for &shard in &lab.shards {
            if let Some((_, owner)) = covered.iter().find(|(i, _)| *i == shard) {
                bail!(
                    "{owner} and {name} both cover shard {shard}/{}: each position must be \
                     counted once",
                    lab.shard_count
                );
            }
            covered.push((shard, name));
        }
    }
    // In shard order, so the samples' draws, and with them the merged file, do not depend on
    // the order the files were given in.
    let mut in_shard_order: Vec<&(String, CalibrationFile)> = files.iter().collect();
    in_shard_order.sort_by_key(|(_, file)| file.lab.as_ref().map(|lab| lab.shards.clone()));
    let mut shards: Vec<u64> = covered.iter().map(|(i, _)| *i).collect();
    shards.sort_unstable();
    let mut merged = in_shard_order[0].1.clone();
    // Until the final record below, every shard merged: the samples' positions are checked
    // against it.
    merged.lab = Some(ShardProvenance {
        shards: shards.clone(),
        ..base.clone()
    });
    for (name, file) in &in_shard_order[1..] {
        merged
            .merge(file)
            .with_context(|| format!("merging {name}"))?;
    }
    let complete = shards.len() as u64 == base.shard_count;
    let records: Vec<&ShardProvenance> = files.iter().filter_map(|(_, f)| f.lab.as_ref()).collect();
    merged.lab = Some(ShardProvenance {
        shard_count: if complete { 1 } else { base.shard_count },
        shards: if complete { vec![1] } else { shards },
        margins: records.iter().find_map(|lab| lab.margins.clone()),
        measured: merged_measurement(&records),
        ..base
    });
    Ok(merged)
}

/// The shards' machine, dated when the last of them ended; `None` unless every shard records
/// the same host and machine, since one line could not name several.
fn merged_measurement(records: &[&ShardProvenance]) -> Option<Provenance> {
    let first = records.first()?.measured.as_ref()?;
    let mut latest = first.measured_unix;
    for lab in records {
        let measured = lab.measured.as_ref()?;
        if measured.hostname != first.hostname || measured.machine != first.machine {
            return None;
        }
        latest = latest.max(measured.measured_unix);
    }
    Some(Provenance {
        measured_unix: latest,
        ..first.clone()
    })
}

fn add(a: u64, b: u64, field: &str) -> Result<u64> {
    a.checked_add(b)
        .with_context(|| format!("{field}: {a} + {b} overflows a u64"))
}

fn add3(a: &mut [u64; 3], b: &[u64; 3], field: &str) -> Result<()> {
    for (i, (x, y)) in a.iter_mut().zip(b).enumerate() {
        *x = add(*x, *y, &format!("{field}[{i}]"))?;
    }
    Ok(())
}

/// Bin-wise sum of two sparse histograms over `lo..hi`, checked.
fn merge_sparse(
    a: &SparseHistogram,
    b: &SparseHistogram,
    lo: i32,
    hi: i32,
    field: &str,
) -> Result<SparseHistogram> {
    let dense = |s: &SparseHistogram| s.to_dense(lo, hi);
    let (mut x, y) = (dense(a), dense(b));
    x.underflow = add(x.underflow, y.underflow, &format!("{field} underflow"))?;
    x.overflow = add(x.overflow, y.overflow, &format!("{field} overflow"))?;
    for (i, (p, q)) in x.bins.iter_mut().zip(&y.bins).enumerate() {
        *p = add(*p, *q, &format!("{field} bin {}", i64::from(lo) + i as i64))?;
    }
    Ok(SparseHistogram::from_dense(&x))
}

fn merge_histograms(a: &mut Histograms, b: &Histograms) -> Result<()> {
    if a.lo != b.lo || a.hi != b.hi {
        bail!(
            "cannot merge histograms of ranges [{}, {}) and [{}, {})",
            a.lo,
            a.hi,
            b.lo,
            b.hi
        );
    }
    let (lo, hi) = (a.lo, a.hi);
    for ((name, x), y) in [
        ("lazy_residual", &mut a.lazy_residual),
        ("super_lazy_residual", &mut a.super_lazy_residual),
        ("king", &mut a.king),
        ("qfutility_excess", &mut a.qfutility_excess),
    ]
    .into_iter()
    .zip([
        &b.lazy_residual,
        &b.super_lazy_residual,
        &b.king,
        &b.qfutility_excess,
    ]) {
        match (x, y) {
            (Some(xs), Some(ys)) => {
                if ys.len() != xs.len() && name == "king" {
                    bail!(
                        "cannot merge: histograms.king holds {} danger class(es) in one run and \
                         {} in the other",
                        xs.len() / SIDE_BUCKETS,
                        ys.len() / SIDE_BUCKETS
                    );
                }
                rows(&format!("histograms.{name}"), ys.len(), xs.len())?;
                for (bucket, (sx, sy)) in xs.iter_mut().zip(ys).enumerate() {
                    *sx = merge_sparse(sx, sy, lo, hi, &format!("histograms.{name}[{bucket}]"))?;
                }
            }
            (None, None) => {}
            _ => bail!("cannot merge: histogram set {name} is in one run only"),
        }
    }
    Ok(())
}

fn merge_tally(a: &mut Tally, b: &Tally, field: &str) -> Result<()> {
    a.exits = add(a.exits, b.exits, &format!("{field}.exits"))?;
    a.exceeded = add(a.exceeded, b.exceeded, &format!("{field}.exceeded"))?;
    a.positions = add(a.positions, b.positions, &format!("{field}.positions"))?;
    a.max_from_one_position = a.max_from_one_position.max(b.max_from_one_position);
    Ok(())
}

fn merge_tier(a: &mut TierSafety, b: &TierSafety, field: &str) -> Result<()> {
    rows(
        &format!("{field}.by_material_bucket"),
        b.by_material_bucket.len(),
        a.by_material_bucket.len(),
    )?;
    rows(
        &format!("{field}.by_side_buckets"),
        b.by_side_buckets.len(),
        a.by_side_buckets.len(),
    )?;
    for (i, (x, y)) in a
        .by_material_bucket
        .iter_mut()
        .zip(&b.by_material_bucket)
        .enumerate()
    {
        merge_tally(x, y, &format!("{field}.by_material_bucket[{i}]"))?;
    }
    match (&mut a.by_danger_class, &b.by_danger_class) {
        (Some(xs), Some(ys)) => {
            rows(&format!("{field}.by_danger_class"), ys.len(), xs.len())?;
            for (bucket, (row_a, row_b)) in xs.iter_mut().zip(ys).enumerate() {
                let row = format!("{field}.by_danger_class[{bucket}]");
                rows(&row, row_b.len(), row_a.len())?;
                for (class, (x, y)) in row_a.iter_mut().zip(row_b).enumerate() {
                    merge_tally(x, y, &format!("{row}[{class}]"))?;
                }
            }
        }
        (None, None) => {}
        _ => bail!(
            "cannot merge: {field}.by_danger_class is in one run only (an engine with danger \
             classes and one without)"
        ),
    }
    for (my, (row_a, row_b)) in a
        .by_side_buckets
        .iter_mut()
        .zip(&b.by_side_buckets)
        .enumerate()
    {
        rows(
            &format!("{field}.by_side_buckets[{my}]"),
            row_b.len(),
            row_a.len(),
        )?;
        for (opp, (x, y)) in row_a.iter_mut().zip(row_b).enumerate() {
            merge_tally(x, y, &format!("{field}.by_side_buckets[{my}][{opp}]"))?;
        }
    }
    Ok(())
}

/// Merges the samples of two runs over disjoint positions into a uniform sample of all their
/// calls: per bucket, each draw takes a call of run i with probability (its calls not drawn
/// yet) / (all calls not drawn yet), without replacement, the call itself drawn uniformly
/// from run i's sample. The draws are seeded by both runs' seeds and sizes, so a merge
/// repeats exactly; `seen` adds up, and the merge keeps the first run's seed.
pub fn merge_samples(a: &SampleRows, b: &SampleRows) -> Result<SampleRows> {
    if a.capacity != b.capacity {
        bail!(
            "cannot merge samples of capacity {} and {}",
            a.capacity,
            b.capacity
        );
    }
    rows("samples.seen", b.seen.len(), a.seen.len())?;
    rows(
        "samples.by_material_bucket",
        b.by_material_bucket.len(),
        a.by_material_bucket.len(),
    )?;
    let total = |s: &SampleRows| s.seen.iter().fold(0u64, |sum, &n| sum.wrapping_add(n));
    let mut rng = SplitMix::new(
        a.seed
            ^ b.seed.rotate_left(32)
            ^ total(a).wrapping_mul(SEED_MIX)
            ^ total(b).rotate_left(17),
    );
    let mut merged = SampleRows {
        capacity: a.capacity,
        seed: a.seed,
        seen: Vec::with_capacity(a.seen.len()),
        by_material_bucket: Vec::with_capacity(a.seen.len()),
    };
    for (bucket, ((&seen_a, kept_a), (&seen_b, kept_b))) in a
        .seen
        .iter()
        .zip(&a.by_material_bucket)
        .zip(b.seen.iter().zip(&b.by_material_bucket))
        .enumerate()
    {
        let field = format!("samples.by_material_bucket[{bucket}]");
        merged
            .seen
            .push(add(seen_a, seen_b, &format!("samples.seen[{bucket}]"))?);
        let mut parts = [
            (seen_a, kept_a.clone(), 0usize),
            (seen_b, kept_b.clone(), 0usize),
        ];
        let draws = (seen_a + seen_b).min(a.capacity);
        let mut drawn = Vec::with_capacity(usize::try_from(draws).unwrap_or(0));
        for _ in 0..draws {
            let left = parts[0].0 + parts[1].0;
            let (calls, kept, taken) = if rng.below(left as usize) < parts[0].0 as usize {
                &mut parts[0]
            } else {
                &mut parts[1]
            };
            *calls -= 1;
            // A partial Fisher-Yates shuffle: the next draw among the samples not yet taken.
            let untaken = kept.len() - *taken;
            if untaken == 0 {
                bail!("{field}: fewer samples than its calls and capacity require");
            }
            let pick = *taken + rng.below(untaken);
            kept.swap(*taken, pick);
            drawn.push(kept[*taken]);
            *taken += 1;
        }
        merged.by_material_bucket.push(drawn);
    }
    Ok(merged)
}

/// Spreads a run's size over the merge seed's bits (the golden-ratio increment of SplitMix).
const SEED_MIX: u64 = 0x9E37_79B9_7F4A_7C15;
