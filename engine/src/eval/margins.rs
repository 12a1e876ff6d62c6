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
// source: squall calibrate residual, 207 positions (bench + perft suite), depth 8; p2/p98/p50
pub const KING_LO: [i32; 8] = [-22, -24, -40, -157, -188, -295, -393, -219];
pub const KING_HI: [i32; 8] = [1, 7, 14, 17, 28, 30, 35, 42];
pub const KING_P50: [i32; 8] = [-8, -8, -15, -18, -2, -7, -5, 11];
pub const LAZY_RESID_LO: [i32; 8] = [-20, -13, -30, -57, -87, -98, -98, -145];
pub const LAZY_RESID_HI: [i32; 8] = [187, 116, 416, 342, 127, 104, 127, 27];
pub const LAZY_RESID_P50: [i32; 8] = [24, 41, 35, 25, 7, 13, 1, -41];
pub const SUPER_LAZY_RESID_LO: [i32; 8] = [-27, -18, -43, -56, -72, -63, -79, -81];
pub const SUPER_LAZY_RESID_HI: [i32; 8] = [723, 215, 526, 444, 179, 143, 167, 106];
pub const SUPER_LAZY_RESID_P50: [i32; 8] = [24, 46, 52, 37, 33, 58, 28, 10];
// END MARGIN TABLES

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Margins {
    /// `margin_a`: subtracted before the fail-high test.
    pub fail_high: i32,
    /// `margin_b`: added before the fail-low test.
    pub fail_low: i32,
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
