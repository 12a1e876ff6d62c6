//! What a calibration says beyond its counts: the futility margins it recommends, when a margin
//! is stale, and the two sides of `lab compare --calibrate` side by side.

use serde::Serialize;
use squall::calibrate::stats::{wilson_interval, Z95};
use squall::tier::Tier;

use super::data::{CalibrationFile, ExitRate, MarginSafety, Tally};

/// The default percentile spread of `lab hist` and the calibration report.
pub(crate) const SPREAD: [f64; 7] = [2.0, 5.0, 10.0, 50.0, 90.0, 95.0, 98.0];
/// Percentile of `qfutility_excess` recommended as the futility margin.
pub(crate) const DEFAULT_PERCENTILE: f64 = 98.0;
/// A recommendation further than this from the current margin (or from A's) is stale.
pub(crate) const STALE_FRACTION: f64 = 0.25;
/// The target: every bucket's exceeded-rate upper bound at or below 1%.
pub(crate) const TARGET_UPPER: f64 = 0.01;
/// Below this many distinct positions, or above this share from one position, a rate is
/// flagged as resting on too little evidence.
pub(crate) const MIN_POSITIONS: u64 = 30;
pub(crate) const MAX_SHARE: f64 = 0.10;

/// Why a margin-safety tally's rate is doubtful; all false for a tally without exits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct TallyDoubts {
    /// The exceeded rate's Wilson upper bound is above [`TARGET_UPPER`].
    pub(crate) upper_above_target: bool,
    /// Fewer than [`MIN_POSITIONS`] distinct positions.
    pub(crate) few_positions: bool,
    /// One position holds more than [`MAX_SHARE`] of the exits.
    pub(crate) one_position_dominates: bool,
}

pub(crate) fn tally_doubts(tally: &Tally) -> TallyDoubts {
    if tally.exits == 0 {
        return TallyDoubts::default();
    }
    let (_, upper) = wilson_interval(tally.exceeded, tally.exits, Z95);
    TallyDoubts {
        upper_above_target: upper > TARGET_UPPER,
        few_positions: tally.positions < MIN_POSITIONS,
        one_position_dominates: tally.max_from_one_position as f64 > MAX_SHARE * tally.exits as f64,
    }
}

/// Histogram sets: name in the file, title, what the row index is.
pub(crate) const SETS: [(&str, &str, &str); 4] = [
    (
        "lazy_residual",
        "Lazy residual (full - lazy baseline, without king), cp",
        "side bucket",
    ),
    (
        "super_lazy_residual",
        "Super-lazy residual (full - material, without king), cp",
        "side bucket",
    ),
    ("king", "King term, cp", "attacker bucket"),
    (
        "qfutility_excess",
        "QSearch futility excess (real score - estimate), cp",
        "source tier",
    ),
];

/// Recommended futility margins: the chosen percentile of `qfutility_excess` per source tier.
pub(crate) fn futility_recommendation(
    file: &CalibrationFile,
    percentile: f64,
) -> Option<[Option<i32>; 3]> {
    let hists = file.histogram_set("qfutility_excess")?;
    let mut out = [None; 3];
    for (slot, h) in out.iter_mut().zip(&hists) {
        *slot = h.percentile(percentile);
    }
    Some(out)
}

/// `(new - old) / |old|`; infinite when a zero margin became non-zero.
pub(crate) fn relative_change(new: i32, old: i32) -> f64 {
    if old == 0 {
        if new == 0 {
            0.0
        } else {
            f64::INFINITY
        }
    } else {
        (new - old) as f64 / old.abs() as f64
    }
}

/// One revision's calibration as `compare --calibrate` reports it.
#[derive(Debug, Clone, Serialize)]
pub struct CalibratedSide {
    /// The revision, as `Revision::short_name` gives it.
    pub(crate) revision: String,
    /// The calibration file written for it.
    pub(crate) file: String,
    pub(crate) exit_rate: ExitRate,
    pub(crate) margin_safety: Option<MarginSafety>,
    /// The chosen percentile of `qfutility_excess` per source tier.
    pub(crate) futility_recommended: Option<[Option<i32>; 3]>,
    /// `FUTILITY_BASE_MARGIN_BY_SOURCE` in force in the revision, when known.
    pub(crate) futility_current: Option<[i32; 3]>,
}

impl CalibratedSide {
    pub fn new(
        revision: String,
        file: String,
        calibration: &CalibrationFile,
        futility_current: Option<[i32; 3]>,
        percentile: f64,
    ) -> Self {
        Self {
            revision,
            file,
            exit_rate: calibration.exit_rate.clone(),
            margin_safety: calibration.margin_safety.clone(),
            futility_recommended: futility_recommendation(calibration, percentile),
            futility_current,
        }
    }
}

/// `lab compare A B --calibrate`: both revisions calibrated on one pool.
#[derive(Debug, Clone, Serialize)]
pub struct CalibrationComparison {
    pub(crate) depth: i32,
    pub(crate) positions: u64,
    /// The percentile of `qfutility_excess` recommended as the futility margin.
    pub(crate) percentile: f64,
    pub(crate) a: CalibratedSide,
    pub(crate) b: CalibratedSide,
    /// STALE warnings: futility margins that the calibration no longer supports.
    pub(crate) stale: Vec<String>,
    /// Where both sides' calibration files are.
    pub(crate) directory: String,
}

impl CalibrationComparison {
    pub fn new(
        (depth, positions): (i32, u64),
        a: CalibratedSide,
        b: CalibratedSide,
        percentile: f64,
        directory: String,
    ) -> Self {
        let stale = stale_futility(&a, &b, percentile);
        Self {
            depth,
            positions,
            percentile,
            a,
            b,
            stale,
            directory,
        }
    }
}

/// STALE warnings: B's recommended margin differs from B's current margin, or from A's
/// recommendation, by more than [`STALE_FRACTION`].
pub(crate) fn stale_futility(
    a: &CalibratedSide,
    b: &CalibratedSide,
    percentile: f64,
) -> Vec<String> {
    let mut warnings = Vec::new();
    let Some(rb) = b.futility_recommended else {
        return warnings;
    };
    let ra = a.futility_recommended;
    for tier in 0..3 {
        let Some(new) = rb[tier] else { continue };
        if let Some(current) = b.futility_current.map(|c| c[tier]) {
            let rel = relative_change(new, current);
            if rel.abs() > STALE_FRACTION {
                warnings.push(format!(
                    "STALE: {} futility margin {current} of B differs by {:+.0}% from B's \
                     recommendation {new} (p{percentile})",
                    Tier::ALL[tier].name(),
                    100.0 * rel,
                ));
            }
        }
        if let Some(old) = ra.and_then(|r| r[tier]) {
            let rel = relative_change(new, old);
            if rel.abs() > STALE_FRACTION {
                warnings.push(format!(
                    "STALE: {} futility recommendation moved {:+.0}% from A ({old}) to B ({new}): \
                     the new tables changed QSearch's estimate errors",
                    Tier::ALL[tier].name(),
                    100.0 * rel
                ));
            }
        }
    }
    warnings
}
