//! Lazy-exit margins: O(1) table lookups by per-side bucket, no attack generation.
//!
//! `margin_a` gates fail-high (`score - margin_a > beta`) and assumes the worst for the side
//! to move and the best for the opponent on each term; `margin_b` gates fail-low
//! (`score + margin_b < alpha`), the mirror image. King tables are indexed by the attacker's
//! per-side bucket, residual tables by the side's own bucket. `_LO`/`_HI` are low/high
//! percentiles of the measured distributions; `_P50` are medians, a point estimate of a side's
//! missing terms used by QSearch futility (`positional`), not a safety bound.
//!
//! The block between the BEGIN/END markers is rewritten by `lab tables --apply`.

// BEGIN MARGIN TABLES
// source: squall calibrate residual over a 4000-position self-play pool (seed 1), depth 6; all tables p2/p98; medians p50
pub const KING_LO: [i32; 8] = [-13, -20, -53, -194, -237, -335, -332, -193];
pub const KING_HI: [i32; 8] = [8, 11, 17, 21, 28, 33, 35, 42];
pub const KING_P50: [i32; 8] = [-2, -4, -5, -6, -2, -5, -1, 8];
pub const LAZY_RESID_LO: [i32; 8] = [-30, -35, -70, -87, -126, -149, -135, -177];
pub const LAZY_RESID_HI: [i32; 8] = [132, 106, 123, 113, 88, 79, 67, 18];
pub const LAZY_RESID_P50: [i32; 8] = [16, 34, 22, 14, -17, -32, -37, -81];
pub const SUPER_LAZY_RESID_LO: [i32; 8] = [-65, -58, -85, -91, -109, -118, -109, -126];
pub const SUPER_LAZY_RESID_HI: [i32; 8] = [297, 204, 242, 188, 128, 120, 108, 88];
pub const SUPER_LAZY_RESID_P50: [i32; 8] = [12, 33, 25, 21, -1, -7, -4, -21];
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

#[inline(always)]
fn margins(resid_lo: &[i32; 8], resid_hi: &[i32; 8], my: usize, opp: usize) -> Margins {
    Margins {
        fail_high: ((KING_HI[my] - KING_LO[opp]) + (resid_hi[opp] - resid_lo[my])).max(0),
        fail_low: ((KING_HI[opp] - KING_LO[my]) + (resid_hi[my] - resid_lo[opp])).max(0),
    }
}

/// Margins of the super-lazy tier (baseline: material alone).
#[inline(always)]
pub fn super_lazy(my_bucket: usize, opp_bucket: usize) -> Margins {
    margins(
        &SUPER_LAZY_RESID_LO,
        &SUPER_LAZY_RESID_HI,
        my_bucket,
        opp_bucket,
    )
}

/// Margins of the lazy tier (baseline: material, pawns, passers, bad trades, bishop pair).
#[inline(always)]
pub fn lazy(my_bucket: usize, opp_bucket: usize) -> Margins {
    margins(&LAZY_RESID_LO, &LAZY_RESID_HI, my_bucket, opp_bucket)
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
