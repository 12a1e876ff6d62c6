//! The calibration file written by `squall calibrate ... --out FILE.json` (schema version 1)
//! and by `lab calibrate`, validated on load; `merge` adds runs up and `json_rows` lays the
//! file out.

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use squall::calibrate::Histogram;
use squall::tier::{DANGER_CLASSES, MATERIAL_BUCKETS, SEARCH_KINDS, SIDE_BUCKETS};
use std::collections::BTreeSet;

use super::in_force::MarginsInForce;
use crate::engine::bench::EngineIdentity;
use crate::machine::Provenance;

pub(crate) const SCHEMA_VERSION: u64 = 1;
pub(crate) const KIND: &str = "squall-calibration";

/// Histogram bounds a file may declare: far beyond any evaluation term (the engine uses
/// +-1500 cp), small enough that the dense form stays a few MB and `lo - 1` cannot overflow.
pub const HISTOGRAM_LIMIT: i32 = 100_000;

/// Buckets of the `qfutility_excess` set: one per futility source tier.
pub(crate) const QFUTILITY_TIERS: usize = 3;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExitRate {
    pub calls: u64,
    pub exits: [u64; 3],
    pub by_material_bucket: Vec<[u64; 3]>,
}

/// A histogram with only its non-empty bins, as `[value, count]` pairs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SparseHistogram {
    pub underflow: u64,
    pub overflow: u64,
    pub bins: Vec<(i32, u64)>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Histograms {
    pub lo: i32,
    pub hi: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lazy_residual: Option<Vec<SparseHistogram>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub super_lazy_residual: Option<Vec<SparseHistogram>>,
    /// The king term by the defending king's danger class, then by the attacker's side bucket
    /// (`king[class * SIDE_BUCKETS + bucket]`): `SIDE_BUCKETS` times 1 to `DANGER_CLASSES`
    /// classes, one class in files from engines without danger classes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub king: Option<Vec<SparseHistogram>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qfutility_excess: Option<Vec<SparseHistogram>>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    pub exits: u64,
    pub exceeded: u64,
    #[serde(default)]
    pub positions: u64,
    #[serde(default)]
    pub max_from_one_position: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TierSafety {
    pub by_material_bucket: Vec<Tally>,
    pub by_side_buckets: Vec<Vec<Tally>>,
    /// `[material bucket][danger class]`: the class of the king whose term the exit bet on
    /// (the side to move's for a fail high, the opponent's for a fail low). Absent in files
    /// from engines without danger classes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by_danger_class: Option<Vec<Vec<Tally>>>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MarginSafety {
    pub super_lazy: TierSafety,
    pub lazy: TierSafety,
}

/// One evaluation call of a samples run, written as the compact array
/// `[position, search, my_bucket, opp_bucket, alpha, beta, super_lazy, lazy, full, race,
/// my_class, opp_class]`; files from engines without danger classes have the first ten
/// (both classes 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SampleRow {
    /// Index of the searched position in the whole pool (the run's pool for a bare engine run).
    pub position: u32,
    /// `squall::tier::SearchKind as u8`: 0 main search, 1 quiescence.
    pub search: u8,
    /// Side buckets of the side to move and of its opponent.
    pub my_bucket: u8,
    pub opp_bucket: u8,
    pub alpha: i32,
    pub beta: i32,
    /// The scores the super-lazy and lazy exits test (drawish-scaled), and the full score.
    pub super_lazy: i32,
    pub lazy: i32,
    pub full: i32,
    /// 1 when a pawn race is possible: the super-lazy tier may not exit.
    pub race: u8,
    /// The danger classes of the side to move's king and of its opponent's.
    pub my_class: u8,
    pub opp_class: u8,
}

/// The fields of a sample's array in files from engines without danger classes.
const SAMPLE_FIELDS_WITHOUT_CLASSES: usize = 10;
/// The fields of a sample's array with both kings' danger classes.
const SAMPLE_FIELDS: usize = 12;

impl Serialize for SampleRow {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeTuple;
        let mut row = serializer.serialize_tuple(SAMPLE_FIELDS)?;
        row.serialize_element(&self.position)?;
        row.serialize_element(&self.search)?;
        row.serialize_element(&self.my_bucket)?;
        row.serialize_element(&self.opp_bucket)?;
        row.serialize_element(&self.alpha)?;
        row.serialize_element(&self.beta)?;
        row.serialize_element(&self.super_lazy)?;
        row.serialize_element(&self.lazy)?;
        row.serialize_element(&self.full)?;
        row.serialize_element(&self.race)?;
        row.serialize_element(&self.my_class)?;
        row.serialize_element(&self.opp_class)?;
        row.end()
    }
}

impl<'de> Deserialize<'de> for SampleRow {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<SampleRow, D::Error> {
        deserializer.deserialize_seq(SampleRowVisitor)
    }
}

/// Reads a sample's array of 10 or 12 fields, refusing any other length.
struct SampleRowVisitor;

impl<'de> serde::de::Visitor<'de> for SampleRowVisitor {
    type Value = SampleRow;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(
            f,
            "a sample array of {SAMPLE_FIELDS_WITHOUT_CLASSES} or {SAMPLE_FIELDS} fields"
        )
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<SampleRow, A::Error> {
        use serde::de::Error;
        let mut read = 0usize;
        macro_rules! field {
            () => {{
                let value = seq
                    .next_element()?
                    .ok_or_else(|| A::Error::invalid_length(read, &self))?;
                read += 1;
                value
            }};
        }
        let mut sample = SampleRow {
            position: field!(),
            search: field!(),
            my_bucket: field!(),
            opp_bucket: field!(),
            alpha: field!(),
            beta: field!(),
            super_lazy: field!(),
            lazy: field!(),
            full: field!(),
            race: field!(),
            my_class: 0,
            opp_class: 0,
        };
        if let Some(my_class) = seq.next_element()? {
            read += 1;
            sample.my_class = my_class;
            sample.opp_class = field!();
            if seq.next_element::<serde::de::IgnoredAny>()?.is_some() {
                return Err(A::Error::invalid_length(read + 1, &self));
            }
        }
        Ok(sample)
    }
}

/// The replay samples: per material bucket, a uniform sample without replacement of the
/// evaluation calls with cheap exits enabled, at most `capacity` of them, out of `seen`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SampleRows {
    pub capacity: u64,
    pub seed: u64,
    pub seen: Vec<u64>,
    pub by_material_bucket: Vec<Vec<SampleRow>>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CalibrationFile {
    pub schema_version: u64,
    pub kind: String,
    pub engine: EngineIdentity,
    pub depth: i32,
    pub hash_mb: u64,
    pub positions: u64,
    pub modes: Vec<String>,
    pub nodes: u64,
    pub exit_rate: ExitRate,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histograms: Option<Histograms>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub margin_safety: Option<MarginSafety>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<SampleRows>,
    /// Written by `lab calibrate`; what `lab calibrate merge` checks the shards against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lab: Option<ShardProvenance>,
}

/// Which positions and which engine a lab calibration covers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShardProvenance {
    /// The pool as given on the command line (for messages; the digest is what is compared).
    pub pool: String,
    /// Git blob id of the pool's position lines joined by newlines.
    pub pool_digest: String,
    /// Positions in the whole pool.
    pub pool_positions: u64,
    /// The revision as given, and the tree it resolved to (the engine's source).
    pub revision: String,
    pub tree: String,
    /// The pool is split into `shard_count` shards; this file covers `shards` (1-based). A
    /// whole-pool run, or a merge of every shard, is shard 1 of 1.
    pub shard_count: u64,
    pub shards: Vec<u64>,
    /// The margin tables in force in `tree`, which the calibration page draws on the
    /// histograms. `None` in files from before the lab recorded them, or for a tree without
    /// the marked block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub margins: Option<MarginsInForce>,
    /// When the run ended and on which machine. `None` in files from before the lab recorded
    /// it, and in a merge of shards run on different machines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured: Option<Provenance>,
}

impl ShardProvenance {
    /// Positions of the pool in `shards` of `shard_count` (index i is in shard i % N + 1).
    pub fn expected_positions(&self) -> Option<u64> {
        let n = self.shard_count;
        let total = self.pool_positions;
        let mut sum: u64 = 0;
        for &i in &self.shards {
            if i == 0 || i > n {
                return None;
            }
            sum = sum.checked_add((total + n - i) / n)?;
        }
        Some(sum)
    }
}

impl SparseHistogram {
    /// The dense histogram over `lo..hi`.
    /// Counts saturate: a validated file (`CalibrationFile::parse`) has totals that fit.
    pub(crate) fn to_dense(&self, lo: i32, hi: i32) -> Histogram {
        let mut h = Histogram::new(lo, hi);
        h.underflow = self.underflow;
        h.overflow = self.overflow;
        for &(value, count) in &self.bins {
            let index = i64::from(value) - i64::from(lo);
            let slot = if index < 0 {
                &mut h.underflow
            } else if let Some(bin) = usize::try_from(index).ok().and_then(|i| h.bins.get_mut(i)) {
                bin
            } else {
                &mut h.overflow
            };
            *slot = slot.saturating_add(count);
        }
        h
    }

    /// All samples, or `None` if they do not fit a u64.
    pub(crate) fn total(&self) -> Option<u64> {
        self.bins.iter().try_fold(
            self.underflow.checked_add(self.overflow)?,
            |sum, &(_, n)| sum.checked_add(n),
        )
    }

    pub fn from_dense(h: &Histogram) -> SparseHistogram {
        SparseHistogram {
            underflow: h.underflow,
            overflow: h.overflow,
            bins: h
                .bins
                .iter()
                .enumerate()
                .filter(|(_, &n)| n > 0)
                .map(|(i, &n)| (h.lo + i as i32, n))
                .collect(),
        }
    }
}

/// A file's `kind` as an error quotes it: at most 40 characters (the error's printer makes
/// control characters visible).
fn quoted_kind(kind: &str) -> String {
    kind.chars().take(40).collect()
}

impl CalibrationFile {
    pub fn parse(text: &str, origin: &str) -> Result<CalibrationFile> {
        let value: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| anyhow::anyhow!("{origin}: not a calibration file: {e}"))?;
        Self::from_value(value, origin)
    }

    /// A calibration file already parsed as JSON, checked as [`Self::parse`] checks it.
    pub(crate) fn from_value(value: serde_json::Value, origin: &str) -> Result<CalibrationFile> {
        let version = value.get("schema_version").and_then(|v| v.as_u64());
        if version != Some(SCHEMA_VERSION)
            || value.get("kind").and_then(|v| v.as_str()) != Some(KIND)
        {
            let found = match (value.get("kind"), version) {
                (Some(serde_json::Value::String(kind)), Some(version)) => {
                    format!("kind `{}`, schema_version {version}", quoted_kind(kind))
                }
                (_, Some(version)) => format!("no kind, schema_version {version}"),
                (Some(serde_json::Value::String(kind)), None) => {
                    format!("kind `{}`, no schema_version", quoted_kind(kind))
                }
                _ => "neither a kind nor a schema_version".to_string(),
            };
            bail!("{origin}: not a schema-{SCHEMA_VERSION} {KIND} file ({found})");
        }
        let file: CalibrationFile = serde_json::from_value(value)
            .map_err(|e| anyhow::anyhow!("{origin}: malformed calibration file: {e}"))?;
        file.validate()
            .map_err(|e| anyhow::anyhow!("{origin}: {e:#}"))?;
        Ok(file)
    }

    pub fn load(path: &std::path::Path) -> Result<CalibrationFile> {
        let text = crate::input::read_text(path, crate::input::CALIBRATION)?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Checks what the readers rely on: the bucket counts the engine writes, histogram ranges
    /// within [`HISTOGRAM_LIMIT`], no tally with more exceedances than exits, and every total
    /// the reports add up fitting a u64. The error names the field.
    pub(crate) fn validate(&self) -> Result<()> {
        if self.depth < 1 {
            bail!("depth: {} is not a search depth (at least 1)", self.depth);
        }
        let rate = &self.exit_rate;
        rows(
            "exit_rate.by_material_bucket",
            rate.by_material_bucket.len(),
            MATERIAL_BUCKETS,
        )?;
        for (field, row) in std::iter::once(("exit_rate.exits".to_string(), &rate.exits)).chain(
            rate.by_material_bucket
                .iter()
                .enumerate()
                .map(|(b, row)| (format!("exit_rate.by_material_bucket[{b}]"), row)),
        ) {
            row.iter()
                .try_fold(0u64, |sum, &n| sum.checked_add(n))
                .with_context(|| format!("{field}: the counts overflow a u64 when added"))?;
        }
        if let Some(h) = &self.histograms {
            if !(-HISTOGRAM_LIMIT..HISTOGRAM_LIMIT).contains(&h.lo)
                || !(h.lo + 1..=HISTOGRAM_LIMIT).contains(&h.hi)
            {
                bail!(
                    "histograms: range [{}, {}) is not a range within [-{HISTOGRAM_LIMIT}, \
                     {HISTOGRAM_LIMIT}] with lo < hi",
                    h.lo,
                    h.hi
                );
            }
            for (name, set) in h.sets() {
                let Some(set) = set else { continue };
                match name {
                    "qfutility_excess" => {
                        rows(&format!("histograms.{name}"), set.len(), QFUTILITY_TIERS)?
                    }
                    "king" => {
                        king_classes(set.len())?;
                    }
                    _ => rows(&format!("histograms.{name}"), set.len(), SIDE_BUCKETS)?,
                };
                for (bucket, hist) in set.iter().enumerate() {
                    hist.total().with_context(|| {
                        format!("histograms.{name}[{bucket}]: the counts overflow a u64")
                    })?;
                }
            }
        }
        if let Some(safety) = &self.margin_safety {
            for (tier, t) in [("super_lazy", &safety.super_lazy), ("lazy", &safety.lazy)] {
                let field = format!("margin_safety.{tier}");
                rows(
                    &format!("{field}.by_material_bucket"),
                    t.by_material_bucket.len(),
                    MATERIAL_BUCKETS,
                )?;
                rows(
                    &format!("{field}.by_side_buckets"),
                    t.by_side_buckets.len(),
                    SIDE_BUCKETS,
                )?;
                for (b, row) in t.by_side_buckets.iter().enumerate() {
                    rows(
                        &format!("{field}.by_side_buckets[{b}]"),
                        row.len(),
                        SIDE_BUCKETS,
                    )?;
                }
                if let Some(by_class) = &t.by_danger_class {
                    validate_danger_classes(&field, by_class, &t.by_material_bucket)?;
                }
                let mut exits: u64 = 0;
                let mut tallies: Vec<(String, &Tally)> = Vec::new();
                for (b, tally) in t.by_material_bucket.iter().enumerate() {
                    exits = exits.checked_add(tally.exits).with_context(|| {
                        format!("{field}.by_material_bucket: the exits overflow a u64 when added")
                    })?;
                    tallies.push((format!("{field}.by_material_bucket[{b}]"), tally));
                }
                for (my, row) in t.by_side_buckets.iter().enumerate() {
                    for (opp, tally) in row.iter().enumerate() {
                        tallies.push((format!("{field}.by_side_buckets[{my}][{opp}]"), tally));
                    }
                }
                for (name, tally) in tallies {
                    if tally.exceeded > tally.exits {
                        bail!(
                            "{name}: exceeded {} is more than exits {}",
                            tally.exceeded,
                            tally.exits
                        );
                    }
                }
            }
        }
        if let Some(samples) = &self.samples {
            self.validate_samples(samples)?;
        }
        if let Some(lab) = &self.lab {
            let shards: BTreeSet<u64> = lab.shards.iter().copied().collect();
            if lab.shard_count == 0
                || lab.shards.is_empty()
                || shards.len() != lab.shards.len()
                || lab.shards.iter().any(|&i| i == 0 || i > lab.shard_count)
            {
                bail!(
                    "lab.shards: {:?} is not a set of distinct shards 1..={}",
                    lab.shards,
                    lab.shard_count
                );
            }
        }
        Ok(())
    }

    /// The replay samples: the engine's bucket counts, each reservoir as full as its calls
    /// allow, as many calls offered as the exit counts hold, every field in range, and every
    /// position one of the file's: in its shards of the pool, or in the run's own positions.
    fn validate_samples(&self, samples: &SampleRows) -> Result<()> {
        if samples.capacity == 0 {
            bail!("samples.capacity: 0, expected at least 1");
        }
        rows("samples.seen", samples.seen.len(), MATERIAL_BUCKETS)?;
        rows(
            "samples.by_material_bucket",
            samples.by_material_bucket.len(),
            MATERIAL_BUCKETS,
        )?;
        let in_file = |position: u32| -> Result<()> {
            let position = u64::from(position);
            match &self.lab {
                Some(lab) => {
                    let shard = position % lab.shard_count.max(1) + 1;
                    if position >= lab.pool_positions || !lab.shards.contains(&shard) {
                        bail!(
                            "position {position} is not in shard(s) {:?} of {} of the \
                             {}-position pool",
                            lab.shards,
                            lab.shard_count,
                            lab.pool_positions
                        );
                    }
                }
                None if position >= self.positions => {
                    bail!(
                        "position {position} is not one of the run's {}",
                        self.positions
                    )
                }
                None => {}
            }
            Ok(())
        };
        for (bucket, (kept, &seen)) in samples
            .by_material_bucket
            .iter()
            .zip(&samples.seen)
            .enumerate()
        {
            let calls = self
                .exit_rate
                .by_material_bucket
                .get(bucket)
                .map_or(0, |row| row.iter().sum::<u64>());
            if seen != calls {
                bail!(
                    "samples.seen[{bucket}]: {seen} calls, but exit_rate counts {calls} in \
                     material bucket {bucket}"
                );
            }
            let expected = seen.min(samples.capacity);
            if kept.len() as u64 != expected {
                bail!(
                    "samples.by_material_bucket[{bucket}]: {} samples, expected {expected} \
                     (capacity {}, seen {seen})",
                    kept.len(),
                    samples.capacity
                );
            }
            for (i, s) in kept.iter().enumerate() {
                let field = format!("samples.by_material_bucket[{bucket}][{i}]");
                if usize::from(s.search) >= SEARCH_KINDS {
                    bail!(
                        "{field}: search {} is not 0 (main) or 1 (quiescence)",
                        s.search
                    );
                }
                for (name, side) in [("my_bucket", s.my_bucket), ("opp_bucket", s.opp_bucket)] {
                    if usize::from(side) >= SIDE_BUCKETS {
                        bail!("{field}: {name} {side} is not a side bucket 0..{SIDE_BUCKETS}");
                    }
                }
                for (name, class) in [("my_class", s.my_class), ("opp_class", s.opp_class)] {
                    if usize::from(class) >= DANGER_CLASSES {
                        bail!("{field}: {name} {class} is not a danger class 0..{DANGER_CLASSES}");
                    }
                }
                if s.race > 1 {
                    bail!("{field}: race {} is not 0 or 1", s.race);
                }
                in_file(s.position).with_context(|| field.clone())?;
            }
        }
        Ok(())
    }

    /// The histogram set named `name` (`lazy_residual`, `super_lazy_residual`, `king`,
    /// `qfutility_excess`) as dense histograms.
    pub fn histogram_set(&self, name: &str) -> Option<Vec<Histogram>> {
        let h = self.histograms.as_ref()?;
        let set = match name {
            "lazy_residual" => h.lazy_residual.as_ref(),
            "super_lazy_residual" => h.super_lazy_residual.as_ref(),
            "king" => h.king.as_ref(),
            "qfutility_excess" => h.qfutility_excess.as_ref(),
            _ => None,
        }?;
        Some(set.iter().map(|s| s.to_dense(h.lo, h.hi)).collect())
    }

    /// The king histograms by danger class, each class's by attacker's bucket: one class in
    /// files from engines without danger classes.
    pub(crate) fn king_histograms_by_class(&self) -> Option<Vec<Vec<Histogram>>> {
        let king = self.histogram_set("king")?;
        Some(
            king.chunks(SIDE_BUCKETS)
                .map(<[Histogram]>::to_vec)
                .collect(),
        )
    }
}

/// The danger classes `histograms.king` holds, from its length: `SIDE_BUCKETS` histograms per
/// class, 1 to `DANGER_CLASSES` classes.
pub(crate) fn king_classes(histograms: usize) -> Result<usize> {
    let classes = histograms / SIDE_BUCKETS;
    if !histograms.is_multiple_of(SIDE_BUCKETS) || !(1..=DANGER_CLASSES).contains(&classes) {
        bail!(
            "histograms.king: {histograms} rows, expected {SIDE_BUCKETS} per danger class for 1 \
             to {DANGER_CLASSES} classes"
        );
    }
    Ok(classes)
}

/// `margin_safety.TIER.by_danger_class`: a row per material bucket, each of one tally per
/// danger class of the engine that wrote it (the same number in every row, 1 to
/// `DANGER_CLASSES`), no more exceeded than exits, and each row's exits those of its material
/// bucket (every exit bets on one king).
fn validate_danger_classes(
    field: &str,
    by_class: &[Vec<Tally>],
    by_bucket: &[Tally],
) -> Result<()> {
    let field = format!("{field}.by_danger_class");
    rows(&field, by_class.len(), MATERIAL_BUCKETS)?;
    let classes = match by_class.first() {
        Some(row) if (1..=DANGER_CLASSES).contains(&row.len()) => row.len(),
        _ => DANGER_CLASSES,
    };
    for (bucket, (row, total)) in by_class.iter().zip(by_bucket).enumerate() {
        rows(&format!("{field}[{bucket}]"), row.len(), classes)?;
        let mut exits: u64 = 0;
        for (class, tally) in row.iter().enumerate() {
            if tally.exceeded > tally.exits {
                bail!(
                    "{field}[{bucket}][{class}]: exceeded {} is more than exits {}",
                    tally.exceeded,
                    tally.exits
                );
            }
            exits = exits.checked_add(tally.exits).with_context(|| {
                format!("{field}[{bucket}]: the exits overflow a u64 when added")
            })?;
        }
        if exits != total.exits {
            bail!(
                "{field}[{bucket}]: {exits} exits over the classes, but material bucket {bucket} \
                 has {}",
                total.exits
            );
        }
    }
    Ok(())
}

pub(crate) fn rows(field: &str, found: usize, expected: usize) -> Result<()> {
    if found != expected {
        bail!("{field}: {found} rows, expected {expected}");
    }
    Ok(())
}

impl Histograms {
    /// The four sets by name.
    pub(crate) fn sets(&self) -> [(&'static str, &Option<Vec<SparseHistogram>>); 4] {
        [
            ("lazy_residual", &self.lazy_residual),
            ("super_lazy_residual", &self.super_lazy_residual),
            ("king", &self.king),
            ("qfutility_excess", &self.qfutility_excess),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparse_and_dense_round_trip_and_merge_exactly() {
        let mut a = Histogram::new(-5, 5);
        let mut b = Histogram::new(-5, 5);
        for v in [-7, -5, 0, 0, 4, 9] {
            a.record(v);
        }
        for v in [0, 1, 1, -6] {
            b.record(v);
        }
        let sa = SparseHistogram::from_dense(&a);
        assert_eq!(sa.to_dense(-5, 5), a);
        let mut merged = a.clone();
        merged.merge(&b).unwrap();
        assert_eq!(merged.count(), 10);
        assert_eq!(merged.percentile(50.0), Some(0));
    }
}
