//! The replay's typed view of a calibration file's `samples` (`--modes samples`,
//! docs/calibration.md): per material bucket, a uniform reservoir of the run's evaluation calls,
//! each with the score every tier's exit saw, and how many calls were offered to the reservoir
//! (`seen`). The file is read and checked by `calibration::data`; this is the same data with
//! the search kind, the buckets and the race flag typed.

use anyhow::{bail, Result};
use squall::search::INFINITY;
use squall::tier::{SearchKind, MATERIAL_BUCKETS};

use crate::calibration::data;

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
    /// The danger classes of the side to move's king and of its opponent's (0 in files from
    /// engines without danger classes).
    pub my_class: usize,
    pub opp_class: usize,
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
    /// The samples of a checked calibration file (`CalibrationFile::from_value` validated the
    /// buckets, the bucket counts and the capacity); the scores are checked here: every bound
    /// and score within the engine's window `[-INFINITY, INFINITY]`, and alpha <= beta.
    pub(crate) fn from_file(field: &data::SampleRows) -> Result<Samples> {
        let (Ok(seen), true) = (
            <[u64; MATERIAL_BUCKETS]>::try_from(field.seen.as_slice()),
            field.by_material_bucket.len() == MATERIAL_BUCKETS,
        ) else {
            bail!("samples: expected {MATERIAL_BUCKETS} material buckets");
        };
        let mut by_material_bucket: [Vec<Sample>; MATERIAL_BUCKETS] = Default::default();
        for (index, (bucket, rows)) in by_material_bucket
            .iter_mut()
            .zip(&field.by_material_bucket)
            .enumerate()
        {
            for (i, row) in rows.iter().enumerate() {
                check_scores(row)
                    .map_err(|e| anyhow::anyhow!("samples.by_material_bucket[{index}][{i}].{e}"))?;
            }
            *bucket = rows.iter().map(Sample::from_file).collect();
        }
        Ok(Samples {
            capacity: field.capacity,
            seed: field.seed,
            seen,
            by_material_bucket,
        })
    }

    /// The file's form of these samples (the inverse of [`Samples::from_file`]).
    pub fn to_file(&self) -> data::SampleRows {
        data::SampleRows {
            capacity: self.capacity,
            seed: self.seed,
            seen: self.seen.to_vec(),
            by_material_bucket: self
                .by_material_bucket
                .iter()
                .map(|bucket| bucket.iter().copied().map(Sample::to_file).collect())
                .collect(),
        }
    }

    /// Distinct positions among all samples.
    pub(crate) fn positions(&self) -> usize {
        self.by_material_bucket
            .iter()
            .flatten()
            .map(|s| s.position)
            .collect::<std::collections::HashSet<_>>()
            .len()
    }
}

/// The scores of a sample as the engine can have them: each within `[-INFINITY, INFINITY]` (a
/// search never widens its window beyond, and no evaluation leaves it), and alpha <= beta. The
/// replay's exit test subtracts and adds margins to them, which stays within `i32` only then.
fn check_scores(s: &data::SampleRow) -> std::result::Result<(), String> {
    for (name, value) in [
        ("alpha", s.alpha),
        ("beta", s.beta),
        ("super_lazy", s.super_lazy),
        ("lazy", s.lazy),
        ("full", s.full),
    ] {
        if !(-INFINITY..=INFINITY).contains(&value) {
            return Err(format!(
                "{name}: {value} is outside the engine's scores [-{INFINITY}, {INFINITY}]"
            ));
        }
    }
    if s.alpha > s.beta {
        return Err(format!(
            "alpha: {} is above beta {}: no search asks with such a window",
            s.alpha, s.beta
        ));
    }
    Ok(())
}

impl Sample {
    fn from_file(s: &data::SampleRow) -> Sample {
        Sample {
            position: s.position,
            search: SearchKind::ALL[usize::from(s.search)],
            my_bucket: usize::from(s.my_bucket),
            opp_bucket: usize::from(s.opp_bucket),
            alpha: s.alpha,
            beta: s.beta,
            super_lazy: s.super_lazy,
            lazy: s.lazy,
            full: s.full,
            race: s.race != 0,
            my_class: usize::from(s.my_class),
            opp_class: usize::from(s.opp_class),
        }
    }

    fn to_file(self) -> data::SampleRow {
        // Side buckets are below 8 and danger classes below DANGER_CLASSES: each fits a byte.
        data::SampleRow {
            position: self.position,
            search: self.search as u8,
            my_bucket: self.my_bucket as u8,
            opp_bucket: self.opp_bucket as u8,
            alpha: self.alpha,
            beta: self.beta,
            super_lazy: self.super_lazy,
            lazy: self.lazy,
            full: self.full,
            race: u8::from(self.race),
            my_class: self.my_class as u8,
            opp_class: self.opp_class as u8,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_typed_view_round_trips_the_file() {
        let row = |position, search, race| data::SampleRow {
            position,
            search,
            my_bucket: 2,
            opp_bucket: 3,
            alpha: -10,
            beta: 10,
            super_lazy: 50,
            lazy: 40,
            full: 30,
            race,
            my_class: race,
            opp_class: 0,
        };
        let mut by_material_bucket = vec![Vec::new(); MATERIAL_BUCKETS];
        by_material_bucket[0] = vec![row(4, 1, 1), row(5, 0, 0)];
        let mut seen = vec![0; MATERIAL_BUCKETS];
        seen[0] = 3;
        let field = data::SampleRows {
            capacity: 2,
            seed: 7,
            seen,
            by_material_bucket,
        };
        let samples = Samples::from_file(&field).unwrap();
        let first = samples.by_material_bucket[0][0];
        assert_eq!(first.search, SearchKind::Quiescence);
        assert_eq!((first.my_bucket, first.opp_bucket), (2, 3));
        assert!(first.race && !samples.by_material_bucket[0][1].race);
        assert_eq!((first.my_class, first.opp_class), (1, 0));
        assert_eq!(samples.positions(), 2);
        assert_eq!(samples.to_file(), field);

        let refused = |edit: fn(&mut data::SampleRow)| {
            let mut bad = field.clone();
            edit(&mut bad.by_material_bucket[0][1]);
            format!("{:#}", Samples::from_file(&bad).unwrap_err())
        };
        let error = refused(|s| s.full = i32::MIN);
        assert!(
            error.starts_with("samples.by_material_bucket[0][1].full: -2147483648 is outside"),
            "{error}"
        );
        let error = refused(|s| s.alpha = INFINITY + 1);
        assert!(error.contains("[0][1].alpha: 32001"), "{error}");
        let error = refused(|s| (s.alpha, s.beta) = (20, 10));
        assert!(error.contains("alpha: 20 is above beta 10"), "{error}");
        // The widest window the engine searches with is accepted.
        let mut widest = field.clone();
        (
            widest.by_material_bucket[0][1].alpha,
            widest.by_material_bucket[0][1].beta,
        ) = (-INFINITY, INFINITY);
        assert!(Samples::from_file(&widest).is_ok());
    }
}
