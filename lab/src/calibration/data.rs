//! The calibration file written by `squall calibrate ... --out FILE.json` (schema version 1)
//! and by `lab calibrate`, and the bin-wise merge that makes shards add up exactly.

use serde::{Deserialize, Serialize};
use squall::calibrate::Histogram;

pub const SCHEMA_VERSION: u64 = 1;
pub const KIND: &str = "squall-calibration";

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineInfo {
    pub name: String,
    pub version: String,
    pub features: Vec<String>,
}

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
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MarginSafety {
    pub super_lazy: TierSafety,
    pub lazy: TierSafety,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CalibrationFile {
    pub schema_version: u64,
    pub kind: String,
    pub engine: EngineInfo,
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
}

impl SparseHistogram {
    /// The dense histogram over `lo..hi`.
    pub fn to_dense(&self, lo: i32, hi: i32) -> Histogram {
        let mut h = Histogram::new(lo, hi);
        h.underflow = self.underflow;
        h.overflow = self.overflow;
        for &(value, count) in &self.bins {
            let index = value - lo;
            if index >= 0 && (index as usize) < h.bins.len() {
                h.bins[index as usize] += count;
            } else if index < 0 {
                h.underflow += count;
            } else {
                h.overflow += count;
            }
        }
        h
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

impl CalibrationFile {
    pub fn parse(text: &str, origin: &str) -> anyhow::Result<CalibrationFile> {
        let value: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| anyhow::anyhow!("{origin}: not a calibration file: {e}"))?;
        let version = value.get("schema_version").and_then(|v| v.as_u64());
        if version != Some(SCHEMA_VERSION)
            || value.get("kind").and_then(|v| v.as_str()) != Some(KIND)
        {
            anyhow::bail!(
                "{origin}: not a schema-{SCHEMA_VERSION} {KIND} file (schema_version {:?})",
                version
            );
        }
        serde_json::from_value(value)
            .map_err(|e| anyhow::anyhow!("{origin}: malformed calibration file: {e}"))
    }

    pub fn load(path: &std::path::Path) -> anyhow::Result<CalibrationFile> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        Self::parse(&text, &path.display().to_string())
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

    /// Adds another run over a disjoint set of positions: sums everywhere, except the
    /// largest single-position contribution, which is a maximum.
    pub fn merge(&mut self, other: &CalibrationFile) -> anyhow::Result<()> {
        if self.depth != other.depth
            || self.hash_mb != other.hash_mb
            || self.modes != other.modes
            || self.engine != other.engine
        {
            anyhow::bail!(
                "cannot merge runs with different settings: depth {} vs {}, modes {:?} vs {:?}, engine {:?} vs {:?}",
                self.depth,
                other.depth,
                self.modes,
                other.modes,
                self.engine,
                other.engine
            );
        }
        self.positions += other.positions;
        self.nodes += other.nodes;
        self.exit_rate.calls += other.exit_rate.calls;
        add3(&mut self.exit_rate.exits, &other.exit_rate.exits);
        for (a, b) in self
            .exit_rate
            .by_material_bucket
            .iter_mut()
            .zip(&other.exit_rate.by_material_bucket)
        {
            add3(a, b);
        }
        match (&mut self.histograms, &other.histograms) {
            (Some(a), Some(b)) => merge_histograms(a, b)?,
            (None, None) => {}
            _ => anyhow::bail!("cannot merge: one run has histograms and the other not"),
        }
        match (&mut self.margin_safety, &other.margin_safety) {
            (Some(a), Some(b)) => {
                merge_tier(&mut a.super_lazy, &b.super_lazy);
                merge_tier(&mut a.lazy, &b.lazy);
            }
            (None, None) => {}
            _ => anyhow::bail!("cannot merge: one run has margin safety and the other not"),
        }
        Ok(())
    }
}

fn add3(a: &mut [u64; 3], b: &[u64; 3]) {
    for (x, y) in a.iter_mut().zip(b) {
        *x += y;
    }
}

fn merge_histograms(a: &mut Histograms, b: &Histograms) -> anyhow::Result<()> {
    if a.lo != b.lo || a.hi != b.hi {
        anyhow::bail!(
            "cannot merge histograms of ranges [{}, {}) and [{}, {})",
            a.lo,
            a.hi,
            b.lo,
            b.hi
        );
    }
    let (lo, hi) = (a.lo, a.hi);
    for (x, y) in [
        (&mut a.lazy_residual, &b.lazy_residual),
        (&mut a.super_lazy_residual, &b.super_lazy_residual),
        (&mut a.king, &b.king),
        (&mut a.qfutility_excess, &b.qfutility_excess),
    ] {
        match (x, y) {
            (Some(xs), Some(ys)) => {
                for (sx, sy) in xs.iter_mut().zip(ys) {
                    let mut dense = sx.to_dense(lo, hi);
                    dense
                        .merge(&sy.to_dense(lo, hi))
                        .map_err(anyhow::Error::msg)?;
                    *sx = SparseHistogram::from_dense(&dense);
                }
            }
            (None, None) => {}
            _ => anyhow::bail!("cannot merge: histogram sets differ"),
        }
    }
    Ok(())
}

fn merge_tally(a: &mut Tally, b: &Tally) {
    a.exits += b.exits;
    a.exceeded += b.exceeded;
    a.positions += b.positions;
    a.max_from_one_position = a.max_from_one_position.max(b.max_from_one_position);
}

fn merge_tier(a: &mut TierSafety, b: &TierSafety) {
    for (x, y) in a.by_material_bucket.iter_mut().zip(&b.by_material_bucket) {
        merge_tally(x, y);
    }
    for (row_a, row_b) in a.by_side_buckets.iter_mut().zip(&b.by_side_buckets) {
        for (x, y) in row_a.iter_mut().zip(row_b) {
            merge_tally(x, y);
        }
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
