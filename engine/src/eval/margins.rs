//! Lazy-exit margins: O(1) table lookups by per-side bucket, no attack generation.
//!
//! `fail_high` gates a fail-high exit (`score - fail_high > beta`) and assumes the worst for
//! the side to move and the best for the opponent on each term; `fail_low` gates a fail-low
//! exit (`score + fail_low < alpha`), the mirror image. King tables are indexed by the defending
//! king's danger class (`tier::danger_class`), then by the attacker's per-side bucket; residual
//! tables by the side's own bucket. `_LO`/`_HI` are low/high
//! percentiles of the measured distributions; `_P50` are medians, a point estimate of a side's
//! missing terms used by QSearch futility (`positional`), not a safety bound.
//!
//! `FUTILITY_BASE_MARGIN_BY_SOURCE` is QSearch futility's margin by the tier that produced the
//! stand-pat score (super-lazy, lazy, full), before that tier's `positional` estimate is added;
//! `lab calibrate --modes qfutility` recommends it.
//!
//! The block between the BEGIN/END markers is rewritten by `lab tables --apply`, which writes the
//! nine margin tables and keeps every other line of the block as it is.

use crate::board::Board;
use crate::tier::{danger_class, side_bucket, DANGER_CLASSES, SIDE_BUCKETS, TIERS};

// BEGIN MARGIN TABLES
// source: cal_applied.json (30000 positions, depth 6); king p0.5/p99.5 p0.5/p99.5 p0.5/p99.5 p3/p97 p0.5/p99.5 p20/p80 p8/p92 p0.5/p99.5; lazy p15/p85 p10/p90 p20/p80 p20/p80 p20/p80 p0.5/p99.5 p0.5/p99.5 p20/p80; super-lazy p0.5/p99.5 p1/p99 p0.5/p99.5 p0.5/p99.5 p0.5/p99.5 p0.5/p99.5 p10/p90 p20/p80; medians p50
pub const KING_LO: [[i32; SIDE_BUCKETS]; DANGER_CLASSES] = [
    [-1, -10, -39, -55, -121, -25, -63, -183],
    [-1, -10, -39, -55, -121, -25, -63, -183],
    [-1, -10, -39, -55, -121, -25, -63, -183],
];
pub const KING_HI: [[i32; SIDE_BUCKETS]; DANGER_CLASSES] = [
    [0, 0, 0, 0, 0, 0, 0, 0],
    [0, 0, 0, 0, 0, 0, 0, 0],
    [0, 0, 0, 0, 0, 0, 0, 0],
];
pub const KING_P50: [[i32; SIDE_BUCKETS]; DANGER_CLASSES] = [
    [0, 0, 0, -1, 0, -2, -2, 0],
    [0, 0, 0, -1, 0, -2, -2, 0],
    [0, 0, 0, -1, 0, -2, -2, 0],
];
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
    /// Subtracted from the score before the fail-high test.
    pub fail_high: i32,
    /// Added to the score before the fail-low test.
    pub fail_low: i32,
}

impl Margins {
    /// Whether a tier's `score` decides the node: `Some(true)` when it fails high past `beta`
    /// by `fail_high`, `Some(false)` when it fails low under `alpha` by `fail_low`.
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

/// King tables: one row per danger class of the defending king, each by attacker's bucket.
pub type KingTable = [[i32; SIDE_BUCKETS]; DANGER_CLASSES];
/// Pair margins by (my class, opponent's class, my bucket, opponent's bucket).
type PairTable = [[[[Margins; SIDE_BUCKETS]; SIDE_BUCKETS]; DANGER_CLASSES]; DANGER_CLASSES];

/// Where an evaluation stands for the margin lookup: each side's bucket and its king's danger
/// class, the side to move first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pair {
    pub my_bucket: usize,
    pub opp_bucket: usize,
    pub my_class: usize,
    pub opp_class: usize,
}

impl Pair {
    /// The pair of `board`'s side to move.
    #[inline(always)]
    pub fn of(board: &Board) -> Pair {
        let us = board.side_to_move();
        Pair::with_classes(board, side_bucket(board, us), side_bucket(board, !us))
    }

    /// Every pair of side buckets and danger classes, in the tables' order: class, class,
    /// bucket, bucket.
    pub fn all() -> impl Iterator<Item = Pair> {
        (0..DANGER_CLASSES).flat_map(|my_class| {
            (0..DANGER_CLASSES).flat_map(move |opp_class| {
                (0..SIDE_BUCKETS).flat_map(move |my_bucket| {
                    (0..SIDE_BUCKETS).map(move |opp_bucket| Pair {
                        my_bucket,
                        opp_bucket,
                        my_class,
                        opp_class,
                    })
                })
            })
        })
    }

    /// The pair of the side to move's buckets, with its kings' danger classes read from `board`.
    #[inline(always)]
    fn with_classes(board: &Board, my_bucket: usize, opp_bucket: usize) -> Pair {
        let us = board.side_to_move();
        Pair {
            my_bucket,
            opp_bucket,
            my_class: danger_class(board, us),
            opp_class: danger_class(board, !us),
        }
    }
}

/// The margin lookups of one evaluation. Each cheap tier first tests its floor, the smallest
/// margins of the side buckets over every pair of danger classes: a score that does not clear
/// the floor exits in no class, so the kings' classes are read only for the calls that may
/// exit, once, and the decision is exactly the one the full pair gives.
pub struct Lookup<'a> {
    board: &'a Board,
    my_bucket: usize,
    opp_bucket: usize,
    pair: Option<Pair>,
}

impl<'a> Lookup<'a> {
    #[inline(always)]
    pub fn new(board: &'a Board, my_bucket: usize, opp_bucket: usize) -> Lookup<'a> {
        Lookup {
            board,
            my_bucket,
            opp_bucket,
            pair: None,
        }
    }

    /// The full pair, the classes read on the first call (class 0 for both kings when the king
    /// tables do not differ by class: every class then looks up the same margins).
    #[inline(always)]
    pub fn pair(&mut self) -> Pair {
        let (board, my, opp) = (self.board, self.my_bucket, self.opp_bucket);
        if !CLASSES_DIFFER {
            return Pair {
                my_bucket: my,
                opp_bucket: opp,
                my_class: 0,
                opp_class: 0,
            };
        }
        *self
            .pair
            .get_or_insert_with(|| Pair::with_classes(board, my, opp))
    }

    /// `super_lazy(pair).exit(..)`, the classes read only past the floor.
    #[inline(always)]
    pub fn super_lazy_exit(&mut self, score: i32, alpha: i32, beta: i32) -> Option<bool> {
        if CLASSES_DIFFER {
            SUPER_LAZY_FLOOR[self.my_bucket][self.opp_bucket].exit(score, alpha, beta)?;
        }
        super_lazy(self.pair()).exit(score, alpha, beta)
    }

    /// `lazy(pair).exit(..)`, the classes read only past the floor.
    #[inline(always)]
    pub fn lazy_exit(&mut self, score: i32, alpha: i32, beta: i32) -> Option<bool> {
        if CLASSES_DIFFER {
            LAZY_FLOOR[self.my_bucket][self.opp_bucket].exit(score, alpha, beta)?;
        }
        lazy(self.pair()).exit(score, alpha, beta)
    }
}

/// Both margins of one pair from any king and residual tables: fail-high assumes the side to
/// move's king term at its worst (its own class, attacked by the opponent's bucket) and
/// residual at its lowest, the opponent's at their best; fail-low the mirror image; neither
/// margin is negative. The engine's own pair tables and the lab's replay of candidate tables
/// (`lab tune`) share it.
pub const fn pair_margins(
    king_lo: &KingTable,
    king_hi: &KingTable,
    resid_lo: &[i32; SIDE_BUCKETS],
    resid_hi: &[i32; SIDE_BUCKETS],
    pair: Pair,
) -> Margins {
    let Pair {
        my_bucket: my,
        opp_bucket: opp,
        my_class,
        opp_class,
    } = pair;
    let fail_high =
        (king_hi[opp_class][my] - king_lo[my_class][opp]) + (resid_hi[opp] - resid_lo[my]);
    let fail_low =
        (king_hi[my_class][opp] - king_lo[opp_class][my]) + (resid_hi[my] - resid_lo[opp]);
    Margins {
        fail_high: if fail_high > 0 { fail_high } else { 0 },
        fail_low: if fail_low > 0 { fail_low } else { 0 },
    }
}

/// Both margins of every pair, computed at compile time from the tables above, so a node reads
/// one entry instead of doing four lookups and the arithmetic.
const fn pair_table(
    king_lo: &KingTable,
    king_hi: &KingTable,
    resid_lo: &[i32; SIDE_BUCKETS],
    resid_hi: &[i32; SIDE_BUCKETS],
) -> PairTable {
    let mut table = [[[[Margins {
        fail_high: 0,
        fail_low: 0,
    }; SIDE_BUCKETS]; SIDE_BUCKETS]; DANGER_CLASSES]; DANGER_CLASSES];
    let mut my_class = 0;
    while my_class < DANGER_CLASSES {
        let mut opp_class = 0;
        while opp_class < DANGER_CLASSES {
            let mut my = 0;
            while my < SIDE_BUCKETS {
                let mut opp = 0;
                while opp < SIDE_BUCKETS {
                    let pair = Pair {
                        my_bucket: my,
                        opp_bucket: opp,
                        my_class,
                        opp_class,
                    };
                    table[my_class][opp_class][my][opp] =
                        pair_margins(king_lo, king_hi, resid_lo, resid_hi, pair);
                    opp += 1;
                }
                my += 1;
            }
            opp_class += 1;
        }
        my_class += 1;
    }
    table
}

/// Whether any king table differs between danger classes. When none does, the margins do not
/// depend on the classes and no evaluation reads them (a compile-time constant).
pub const CLASSES_DIFFER: bool =
    rows_differ(&KING_LO) || rows_differ(&KING_HI) || rows_differ(&KING_P50);

const fn rows_differ(table: &KingTable) -> bool {
    let mut class = 1;
    while class < DANGER_CLASSES {
        let mut bucket = 0;
        while bucket < SIDE_BUCKETS {
            if table[class][bucket] != table[0][bucket] {
                return true;
            }
            bucket += 1;
        }
        class += 1;
    }
    false
}

/// Each side-bucket pair's smallest fail-high and smallest fail-low margin over every pair of
/// danger classes.
const fn floor_table(pairs: &PairTable) -> [[Margins; SIDE_BUCKETS]; SIDE_BUCKETS] {
    let mut table = [[pairs[0][0][0][0]; SIDE_BUCKETS]; SIDE_BUCKETS];
    let mut my = 0;
    while my < SIDE_BUCKETS {
        let mut opp = 0;
        while opp < SIDE_BUCKETS {
            let mut floor = pairs[0][0][my][opp];
            let mut my_class = 0;
            while my_class < DANGER_CLASSES {
                let mut opp_class = 0;
                while opp_class < DANGER_CLASSES {
                    let m = pairs[my_class][opp_class][my][opp];
                    if m.fail_high < floor.fail_high {
                        floor.fail_high = m.fail_high;
                    }
                    if m.fail_low < floor.fail_low {
                        floor.fail_low = m.fail_low;
                    }
                    opp_class += 1;
                }
                my_class += 1;
            }
            table[my][opp] = floor;
            opp += 1;
        }
        my += 1;
    }
    table
}

const SUPER_LAZY_MARGINS: PairTable = pair_table(
    &KING_LO,
    &KING_HI,
    &SUPER_LAZY_RESID_LO,
    &SUPER_LAZY_RESID_HI,
);
const LAZY_MARGINS: PairTable = pair_table(&KING_LO, &KING_HI, &LAZY_RESID_LO, &LAZY_RESID_HI);
const SUPER_LAZY_FLOOR: [[Margins; SIDE_BUCKETS]; SIDE_BUCKETS] = floor_table(&SUPER_LAZY_MARGINS);
const LAZY_FLOOR: [[Margins; SIDE_BUCKETS]; SIDE_BUCKETS] = floor_table(&LAZY_MARGINS);

/// Margins of the super-lazy tier (baseline: material alone).
#[inline(always)]
pub fn super_lazy(pair: Pair) -> Margins {
    SUPER_LAZY_MARGINS[pair.my_class][pair.opp_class][pair.my_bucket][pair.opp_bucket]
}

/// Margins of the lazy tier (baseline: material, pawns, passers, bad trades, bishop pair).
#[inline(always)]
pub fn lazy(pair: Pair) -> Margins {
    LAZY_MARGINS[pair.my_class][pair.opp_class][pair.my_bucket][pair.opp_bucket]
}

/// Median estimate of the side to move's terms that a super-lazy exit did not count: its own
/// king term (its class, attacked by the opponent's bucket) plus its residual.
#[inline(always)]
pub fn super_lazy_positional(pair: Pair) -> i32 {
    KING_P50[pair.my_class][pair.opp_bucket] + SUPER_LAZY_RESID_P50[pair.my_bucket]
}

/// Median estimate of the side to move's terms that a lazy exit did not count.
#[inline(always)]
pub fn lazy_positional(pair: Pair) -> i32 {
    KING_P50[pair.my_class][pair.opp_bucket] + LAZY_RESID_P50[pair.my_bucket]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pair_tables_follow_the_issue_formula() {
        for pair in Pair::all() {
            let Pair {
                my_bucket: my,
                opp_bucket: opp,
                my_class: mc,
                opp_class: oc,
            } = pair;
            let (sl, lz) = (super_lazy(pair), lazy(pair));
            let a = |lo: &[i32; SIDE_BUCKETS], hi: &[i32; SIDE_BUCKETS]| {
                ((KING_HI[oc][my] - KING_LO[mc][opp]) + (hi[opp] - lo[my])).max(0)
            };
            let b = |lo: &[i32; SIDE_BUCKETS], hi: &[i32; SIDE_BUCKETS]| {
                ((KING_HI[mc][opp] - KING_LO[oc][my]) + (hi[my] - lo[opp])).max(0)
            };
            assert_eq!(sl.fail_high, a(&SUPER_LAZY_RESID_LO, &SUPER_LAZY_RESID_HI));
            assert_eq!(sl.fail_low, b(&SUPER_LAZY_RESID_LO, &SUPER_LAZY_RESID_HI));
            assert_eq!(lz.fail_high, a(&LAZY_RESID_LO, &LAZY_RESID_HI));
            assert_eq!(lz.fail_low, b(&LAZY_RESID_LO, &LAZY_RESID_HI));
        }
    }

    #[test]
    fn a_floor_lies_under_every_class_pair_of_tables_that_differ_by_class() {
        let mut king_lo = [[-40, -50, -60, -70, -80, -90, -100, -110]; DANGER_CLASSES];
        let mut king_hi = [[0; SIDE_BUCKETS]; DANGER_CLASSES];
        for class in 1..DANGER_CLASSES {
            king_lo[class] = king_lo[class - 1].map(|v| v * 2 - 7 * class as i32);
            king_hi[class][3] = 5 * class as i32;
        }
        let table = pair_table(&king_lo, &king_hi, &LAZY_RESID_LO, &LAZY_RESID_HI);
        let floors = floor_table(&table);
        for pair in Pair::all() {
            let (my, opp) = (pair.my_bucket, pair.opp_bucket);
            let margins = table[pair.my_class][pair.opp_class][my][opp];
            let floor = floors[my][opp];
            assert!(floor.fail_high <= margins.fail_high && floor.fail_low <= margins.fail_low);
            for score in (-900..=900).step_by(11) {
                if margins.exit(score, -20, 20).is_some() {
                    assert!(floor.exit(score, -20, 20).is_some(), "{pair:?} at {score}");
                }
            }
        }
        // Each floor is some class pair's margin, not lower than every one.
        for my in 0..SIDE_BUCKETS {
            for opp in 0..SIDE_BUCKETS {
                let of_pairs = || table.iter().flatten().map(|by| by[my][opp]);
                assert_eq!(
                    floors[my][opp].fail_high,
                    of_pairs().map(|m| m.fail_high).min().unwrap()
                );
                assert_eq!(
                    floors[my][opp].fail_low,
                    of_pairs().map(|m| m.fail_low).min().unwrap()
                );
            }
        }
    }

    #[test]
    fn the_floors_lie_under_every_class_pair_and_decide_alike() {
        for pair in Pair::all() {
            let (my, opp) = (pair.my_bucket, pair.opp_bucket);
            for (floor, margins) in [
                (SUPER_LAZY_FLOOR[my][opp], super_lazy(pair)),
                (LAZY_FLOOR[my][opp], lazy(pair)),
            ] {
                assert!(floor.fail_high <= margins.fail_high && floor.fail_low <= margins.fail_low);
                // Wherever the pair's margins decide an exit, the floor lets the test through.
                for score in (-600..=600).step_by(7) {
                    if margins.exit(score, -20, 20).is_some() {
                        assert!(floor.exit(score, -20, 20).is_some(), "{pair:?} at {score}");
                    }
                }
            }
        }
        // The lookup decides as the full pair on real boards, classes read or not.
        for fen in [
            "r4rk1/8/8/8/4n3/8/5PPP/q5K1 w - - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "6k1/8/8/8/8/8/n4PPP/3r2K1 w - - 0 1",
        ] {
            let board = Board::from_fen(fen).unwrap();
            let pair = Pair::of(&board);
            for score in (-900..=900).step_by(13) {
                let mut lookup = Lookup::new(&board, pair.my_bucket, pair.opp_bucket);
                assert_eq!(
                    lookup.super_lazy_exit(score, -15, 25),
                    super_lazy(pair).exit(score, -15, 25)
                );
                assert_eq!(
                    lookup.lazy_exit(score, -15, 25),
                    lazy(pair).exit(score, -15, 25)
                );
                let read = lookup.pair();
                assert_eq!(
                    (read.my_bucket, read.opp_bucket),
                    (pair.my_bucket, pair.opp_bucket)
                );
                assert_eq!(super_lazy(read), super_lazy(pair));
                assert_eq!(lazy(read), lazy(pair));
                assert_eq!(super_lazy_positional(read), super_lazy_positional(pair));
            }
        }
    }

    #[test]
    fn pair_margins_work_on_any_tables() {
        let calm = [0, -10, -20, -30, -40, -50, -60, -70];
        let mut king_lo = [[-1000; SIDE_BUCKETS]; DANGER_CLASSES];
        king_lo[0] = calm;
        let mut king_hi = [[0, 7, 0, 0, 0, 0, 0, 0]; DANGER_CLASSES];
        king_hi[0] = [0, 5, 0, 0, 0, 0, 0, 0];
        let resid_lo = [-100, -1, -2, -3, -4, -5, -6, -7];
        let resid_hi = [50, 1, 2, 3, 4, 5, 6, 300];
        let pair = |my_class, opp_class| Pair {
            my_bucket: 1,
            opp_bucket: 7,
            my_class,
            opp_class,
        };
        // Both kings calm. fail-high: (KING_HI[0][1] - KING_LO[0][7]) + (RESID_HI[7] -
        // RESID_LO[1]) = 75 + 301; fail-low: (KING_HI[0][7] - KING_LO[0][1]) + (RESID_HI[1] -
        // RESID_LO[7]) = 10 + 8.
        assert_eq!(
            pair_margins(&king_lo, &king_hi, &resid_lo, &resid_hi, pair(0, 0)),
            Margins {
                fail_high: 376,
                fail_low: 18
            }
        );
        // My king in danger widens only the fail-high margin (my king term at its worst); the
        // opponent's class picks its KING_HI row there.
        assert_eq!(
            pair_margins(&king_lo, &king_hi, &resid_lo, &resid_hi, pair(1, 1)),
            Margins {
                fail_high: 7 + 1000 + 301,
                fail_low: 1000 + 8
            }
        );
        assert_eq!(
            pair_margins(&king_lo, &king_hi, &resid_lo, &resid_hi, pair(1, 0)),
            Margins {
                fail_high: 5 + 1000 + 301,
                fail_low: 10 + 8
            }
        );
        // A pair whose sums are negative gets no margin, never a negative one.
        let low = [[10; SIDE_BUCKETS]; DANGER_CLASSES];
        let high = [[-10; SIDE_BUCKETS]; DANGER_CLASSES];
        assert_eq!(
            pair_margins(&low, &high, &low[0], &high[0], pair(0, 1)),
            Margins {
                fail_high: 0,
                fail_low: 0
            }
        );
    }
}
