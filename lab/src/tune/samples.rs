//! The `samples` field of a calibration file (`--modes samples`, docs/calibration.md): per
//! material bucket, a uniform reservoir of the run's evaluation calls, each with the score
//! every tier's exit saw, and how many calls were offered to the reservoir (`seen`). Only that
//! field is read here; the rest of the file is the calibration file's.

use anyhow::{bail, Context, Result};
use serde::Deserialize;
use squall::tier::{SearchKind, MATERIAL_BUCKETS, SIDE_BUCKETS};

/// One sampled evaluation call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sample {
    /// The position's index in the run's pool (the same id across shards).
    pub position: u32,
    pub search: SearchKind,
    pub my_bucket: usize,
    pub opp_bucket: usize,
    pub alpha: i32,
    pub beta: i32,
    /// The super-lazy tier's score as its exit saw it (scaled).
    pub super_lazy: i32,
    /// The lazy tier's score as its exit saw it (scaled).
    pub lazy: i32,
    /// The full evaluation's score (scaled): what the call returns with `--full-eval`.
    pub full: i32,
    /// A passer race was possible: the super-lazy tier may not exit.
    pub race: bool,
}

/// A sample as the file writes it: `[position, search, my_bucket, opp_bucket, alpha, beta,
/// super_lazy, lazy, full, race]`.
type SampleRow = (u32, u8, u8, u8, i32, i32, i32, i32, i32, u8);

#[derive(Deserialize)]
struct SamplesField {
    capacity: u64,
    seed: u64,
    seen: Vec<u64>,
    by_material_bucket: Vec<Vec<SampleRow>>,
}

/// The reservoirs of one run (or a merge of shards).
#[derive(Clone, Debug, PartialEq)]
pub struct Samples {
    /// Most samples a bucket's reservoir keeps.
    pub capacity: u64,
    /// The reservoir's seed.
    pub seed: u64,
    /// Calls offered to each bucket's reservoir: the population each reservoir samples.
    pub seen: [u64; MATERIAL_BUCKETS],
    pub by_material_bucket: [Vec<Sample>; MATERIAL_BUCKETS],
}

impl Samples {
    /// The `samples` field, checked: eight buckets, no bucket holding more samples than its
    /// capacity or than the calls it saw, buckets, search kinds and flags in range. The error
    /// names the field.
    pub fn from_value(value: serde_json::Value) -> Result<Samples> {
        let field: SamplesField = serde_json::from_value(value)
            .map_err(|e| anyhow::anyhow!("samples: malformed: {e}"))?;
        let seen: [u64; MATERIAL_BUCKETS] = field.seen.as_slice().try_into().map_err(|_| {
            anyhow::anyhow!(
                "samples.seen: expected {MATERIAL_BUCKETS} buckets, found {}",
                field.seen.len()
            )
        })?;
        if field.by_material_bucket.len() != MATERIAL_BUCKETS {
            bail!(
                "samples.by_material_bucket: expected {MATERIAL_BUCKETS} buckets, found {}",
                field.by_material_bucket.len()
            );
        }
        let mut buckets: [Vec<Sample>; MATERIAL_BUCKETS] = Default::default();
        for (bucket, rows) in field.by_material_bucket.into_iter().enumerate() {
            let place = format!("samples.by_material_bucket[{bucket}]");
            let held = rows.len() as u64;
            if held > field.capacity || held > seen[bucket] {
                bail!(
                    "{place}: {held} samples, more than the capacity {} or the {} calls seen",
                    field.capacity,
                    seen[bucket]
                );
            }
            buckets[bucket] = rows
                .into_iter()
                .enumerate()
                .map(|(index, row)| sample(row).with_context(|| format!("{place}[{index}]")))
                .collect::<Result<_>>()?;
        }
        Ok(Samples {
            capacity: field.capacity,
            seed: field.seed,
            seen,
            by_material_bucket: buckets,
        })
    }

    /// The field as the engine writes it (the inverse of [`Samples::from_value`]).
    pub fn to_value(&self) -> serde_json::Value {
        let row = |s: &Sample| {
            serde_json::json!([
                s.position,
                s.search as u8,
                s.my_bucket,
                s.opp_bucket,
                s.alpha,
                s.beta,
                s.super_lazy,
                s.lazy,
                s.full,
                u8::from(s.race)
            ])
        };
        serde_json::json!({
            "capacity": self.capacity,
            "seed": self.seed,
            "seen": self.seen,
            "by_material_bucket": self
                .by_material_bucket
                .iter()
                .map(|bucket| bucket.iter().map(row).collect::<Vec<_>>())
                .collect::<Vec<_>>(),
        })
    }

    /// Distinct positions among all samples.
    pub fn positions(&self) -> usize {
        self.by_material_bucket
            .iter()
            .flatten()
            .map(|s| s.position)
            .collect::<std::collections::HashSet<_>>()
            .len()
    }
}

fn sample(row: SampleRow) -> Result<Sample> {
    let (position, search, my, opp, alpha, beta, super_lazy, lazy, full, race) = row;
    let search = match search {
        0 => SearchKind::Main,
        1 => SearchKind::Quiescence,
        other => bail!("search {other} is neither 0 (main) nor 1 (quiescence)"),
    };
    let bucket = |name: &str, b: u8| -> Result<usize> {
        let b = usize::from(b);
        if b >= SIDE_BUCKETS {
            bail!("{name} {b} is not a side bucket (0..{SIDE_BUCKETS})");
        }
        Ok(b)
    };
    let race = match race {
        0 => false,
        1 => true,
        other => bail!("race {other} is neither 0 nor 1"),
    };
    Ok(Sample {
        position,
        search,
        my_bucket: bucket("my_bucket", my)?,
        opp_bucket: bucket("opp_bucket", opp)?,
        alpha,
        beta,
        super_lazy,
        lazy,
        full,
        race,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(rows: serde_json::Value) -> serde_json::Value {
        serde_json::json!({
            "capacity": 2, "seed": 7, "seen": [3, 0, 0, 0, 0, 0, 0, 1],
            "by_material_bucket": [rows, [], [], [], [], [], [], []]
        })
    }

    #[test]
    fn reads_and_writes_the_compact_rows() {
        let value = field(serde_json::json!([
            [4, 1, 2, 3, -10, 10, 50, 40, 30, 1],
            [5, 0, 7, 0, -5, -4, 0, 0, 0, 0]
        ]));
        let samples = Samples::from_value(value.clone()).unwrap();
        assert_eq!(samples.seen[0], 3);
        let first = samples.by_material_bucket[0][0];
        assert_eq!(first.search, SearchKind::Quiescence);
        assert_eq!((first.my_bucket, first.opp_bucket), (2, 3));
        assert_eq!((first.super_lazy, first.lazy, first.full), (50, 40, 30));
        assert!(first.race && !samples.by_material_bucket[0][1].race);
        assert_eq!(samples.positions(), 2);
        assert_eq!(samples.to_value(), value);
    }

    #[test]
    fn refuses_what_the_engine_never_writes() {
        let cases = [
            (
                serde_json::json!([[4, 2, 0, 0, 0, 0, 0, 0, 0, 0]]),
                "search 2",
            ),
            (
                serde_json::json!([[4, 0, 8, 0, 0, 0, 0, 0, 0, 0]]),
                "my_bucket 8",
            ),
            (
                serde_json::json!([[4, 0, 0, 0, 0, 0, 0, 0, 0, 2]]),
                "race 2",
            ),
            (
                serde_json::json!([[4, 0, 0, 0, 0, 0, 0, 0, 0]]),
                "malformed",
            ),
            (
                serde_json::json!([
                    [1, 0, 0, 0, 0, 0, 0, 0, 0, 0],
                    [2, 0, 0, 0, 0, 0, 0, 0, 0, 0],
                    [3, 0, 0, 0, 0, 0, 0, 0, 0, 0]
                ]),
                "more than the capacity",
            ),
        ];
        for (rows, message) in cases {
            let error = format!("{:#}", Samples::from_value(field(rows)).unwrap_err());
            assert!(error.contains(message), "{error}");
        }
        let mut short = field(serde_json::json!([]));
        short["seen"] = serde_json::json!([1, 2]);
        let error = format!("{:#}", Samples::from_value(short).unwrap_err());
        assert!(error.contains("samples.seen"), "{error}");
    }
}
