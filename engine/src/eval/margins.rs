//! Lazy-exit margins: O(1) table lookups by per-side bucket, no attack generation.
//!
//! `margin_a` gates fail-high (`score - margin_a > beta`) and assumes the worst for the side
//! to move and the best for the opponent on each term; `margin_b` gates fail-low
//! (`score + margin_b < alpha`), the mirror image. King tables are indexed by the attacker's
//! per-side bucket, residual tables by the side's own bucket. `_LO`/`_HI` are low/high
//! percentiles of the measured distributions; `_P50` are medians, a point estimate of a side's
//! missing terms used by QSearch futility (`positional`), not a safety bound.
//!
//! `FUTILITY_BASE_MARGIN_BY_SOURCE` is QSearch futility's margin by the tier that produced the
//! stand-pat score (super-lazy, lazy, full), before that tier's `positional` estimate is added;
//! `lab calibrate --modes qfutility` recommends it.
//!
//! The block between the BEGIN/END markers is rewritten by `lab tables --apply`, which writes the
//! nine margin tables and keeps every other line of the block as it is.

use crate::tier::{SIDE_BUCKETS, TIERS};

// BEGIN MARGIN TABLES
// source: cal_applied.json (30000 positions, depth 6); king p0.5/p99.5 p0.5/p99.5 p0.5/p99.5 p3/p97 p0.5/p99.5 p20/p80 p8/p92 p0.5/p99.5; lazy p15/p85 p10/p90 p20/p80 p20/p80 p20/p80 p0.5/p99.5 p0.5/p99.5 p20/p80; super-lazy p0.5/p99.5 p1/p99 p0.5/p99.5 p0.5/p99.5 p0.5/p99.5 p0.5/p99.5 p10/p90 p20/p80; medians p50
pub const KING_LO: [i32; SIDE_BUCKETS] = [-1, -10, -39, -55, -121, -25, -63, -183];
pub const KING_HI: [i32; SIDE_BUCKETS] = [0, 0, 0, 0, 0, 0, 0, 0];
pub const KING_P50: [i32; SIDE_BUCKETS] = [0, 0, 0, -1, 0, -2, -2, 0];
pub const LAZY_RESID_LO: [i32; SIDE_BUCKETS] = [-2, -7, -15, -27, -61, -139, -130, -108];
pub const LAZY_RESID_HI: [i32; SIDE_BUCKETS] = [19, 54, 41, 39, 14, 79, 68, -53];
pub const LAZY_RESID_P50: [i32; SIDE_BUCKETS] = [6, 28, 14, 8, -25, -36, -44, -83];
pub const SUPER_LAZY_RESID_LO: [i32; SIDE_BUCKETS] = [-93, -75, -112, -118, -133, -135, -70, -48];
pub const SUPER_LAZY_RESID_HI: [i32; SIDE_BUCKETS] = [255, 252, 267, 216, 167, 152, 60, 32];
pub const SUPER_LAZY_RESID_P50: [i32; SIDE_BUCKETS] = [-4, 22, 12, 9, -5, -5, -5, -7];
/// QSearch futility's base margin by stand-pat tier (see above).
pub const FUTILITY_BASE_MARGIN_BY_SOURCE: [i32; TIERS] = [350, 175, 100];
// END MARGIN TABLES

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Margins {
    /// `margin_a`: subtracted before the fail-high test.
    pub fail_high: i32,
    /// `margin_b`: added before the fail-low test.
    pub fail_low: i32,
}

impl Margins {
    /// Whether a tier's `score` decides the node: `Some(true)` when it fails high past `beta`
    /// by `margin_a`, `Some(false)` when it fails low under `alpha` by `margin_b`.
    #[inline(always)]
    pub fn exit(self, score: i32, alpha: i32, beta: i32) -> Option<bool> {
        if score - self.fail_high > beta {
            Some(true)
        } else if score + self.fail_low < alpha {
            Some(false)
        } else {
            None
        }
    }
}

/// Both margins of one (my bucket, opponent bucket) pair from any king and residual tables:
/// fail-high assumes the side to move's king term at its worst and residual at its lowest,
/// the opponent's at their best; fail-low the mirror image; neither margin is negative. The
/// engine's own pair tables and the lab's replay of candidate tables (`lab tune`) share it.
pub const fn pair_margins(
    king_lo: &[i32; SIDE_BUCKETS],
    king_hi: &[i32; SIDE_BUCKETS],
    resid_lo: &[i32; SIDE_BUCKETS],
    resid_hi: &[i32; SIDE_BUCKETS],
    my: usize,
    opp: usize,
) -> Margins {
    let fail_high = (king_hi[my] - king_lo[opp]) + (resid_hi[opp] - resid_lo[my]);
    let fail_low = (king_hi[opp] - king_lo[my]) + (resid_hi[my] - resid_lo[opp]);
    Margins {
        fail_high: if fail_high > 0 { fail_high } else { 0 },
        fail_low: if fail_low > 0 { fail_low } else { 0 },
    }
}

/// Both margins of every (my bucket, opponent bucket) pair, computed at compile time from the
/// tables above, so a node reads one entry instead of doing four lookups and the arithmetic.
const fn pair_table(
    resid_lo: &[i32; SIDE_BUCKETS],
    resid_hi: &[i32; SIDE_BUCKETS],
) -> [[Margins; SIDE_BUCKETS]; SIDE_BUCKETS] {
    let mut table = [[Margins {
        fail_high: 0,
        fail_low: 0,
    }; SIDE_BUCKETS]; SIDE_BUCKETS];
    let mut my = 0;
    while my < SIDE_BUCKETS {
        let mut opp = 0;
        while opp < SIDE_BUCKETS {
            table[my][opp] = pair_margins(&KING_LO, &KING_HI, resid_lo, resid_hi, my, opp);
            opp += 1;
        }
        my += 1;
    }
    table
}

const SUPER_LAZY_MARGINS: [[Margins; SIDE_BUCKETS]; SIDE_BUCKETS] =
    pair_table(&SUPER_LAZY_RESID_LO, &SUPER_LAZY_RESID_HI);
const LAZY_MARGINS: [[Margins; SIDE_BUCKETS]; SIDE_BUCKETS] =
    pair_table(&LAZY_RESID_LO, &LAZY_RESID_HI);

/// Margins of the super-lazy tier (baseline: material alone).
#[inline(always)]
pub fn super_lazy(my_bucket: usize, opp_bucket: usize) -> Margins {
    SUPER_LAZY_MARGINS[my_bucket][opp_bucket]
}

/// Margins of the lazy tier (baseline: material, pawns, passers, bad trades, bishop pair).
#[inline(always)]
pub fn lazy(my_bucket: usize, opp_bucket: usize) -> Margins {
    LAZY_MARGINS[my_bucket][opp_bucket]
}

/// Median estimate of the side to move's terms that a super-lazy exit did not count: its own
/// king term (indexed by the attacker, the opponent) plus its residual.
#[inline(always)]
pub fn super_lazy_positional(my_bucket: usize, opp_bucket: usize) -> i32 {
    KING_P50[opp_bucket] + SUPER_LAZY_RESID_P50[my_bucket]
}

/// Median estimate of the side to move's terms that a lazy exit did not count.
#[inline(always)]
pub fn lazy_positional(my_bucket: usize, opp_bucket: usize) -> i32 {
    KING_P50[opp_bucket] + LAZY_RESID_P50[my_bucket]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pair_tables_follow_the_issue_formula() {
        for my in 0..SIDE_BUCKETS {
            for opp in 0..SIDE_BUCKETS {
                let (sl, lz) = (super_lazy(my, opp), lazy(my, opp));
                let a = |lo: &[i32; SIDE_BUCKETS], hi: &[i32; SIDE_BUCKETS]| {
                    ((KING_HI[my] - KING_LO[opp]) + (hi[opp] - lo[my])).max(0)
                };
                let b = |lo: &[i32; SIDE_BUCKETS], hi: &[i32; SIDE_BUCKETS]| {
                    ((KING_HI[opp] - KING_LO[my]) + (hi[my] - lo[opp])).max(0)
                };
                assert_eq!(sl.fail_high, a(&SUPER_LAZY_RESID_LO, &SUPER_LAZY_RESID_HI));
                assert_eq!(sl.fail_low, b(&SUPER_LAZY_RESID_LO, &SUPER_LAZY_RESID_HI));
                assert_eq!(lz.fail_high, a(&LAZY_RESID_LO, &LAZY_RESID_HI));
                assert_eq!(lz.fail_low, b(&LAZY_RESID_LO, &LAZY_RESID_HI));
            }
        }
    }

    #[test]
    fn pair_margins_work_on_any_tables() {
        let king_lo = [0, -10, -20, -30, -40, -50, -60, -70];
        let king_hi = [0, 5, 0, 0, 0, 0, 0, 0];
        let resid_lo = [-100, -1, -2, -3, -4, -5, -6, -7];
        let resid_hi = [50, 1, 2, 3, 4, 5, 6, 300];
        // fail-high: (KING_HI[1] - KING_LO[7]) + (RESID_HI[7] - RESID_LO[1]) = 75 + 301;
        // fail-low: (KING_HI[7] - KING_LO[1]) + (RESID_HI[1] - RESID_LO[7]) = 10 + 8.
        assert_eq!(
            pair_margins(&king_lo, &king_hi, &resid_lo, &resid_hi, 1, 7),
            Margins {
                fail_high: 376,
                fail_low: 18
            }
        );
        // A pair whose sums are negative gets no margin, never a negative one.
        let low = [10; SIDE_BUCKETS];
        let high = [-10; SIDE_BUCKETS];
        assert_eq!(
            pair_margins(&low, &high, &low, &high, 2, 3),
            Margins {
                fail_high: 0,
                fail_low: 0
            }
        );
    }
}
