//! The calibration sampler: residual and king histograms, margin-safety tallies, QSearch
//! futility excesses and replay samples, recorded during real searches.

use super::{Histogram, Modes, Samples};
use crate::board::Board;
use crate::eval::Breakdown;
use crate::tier::{
    danger_class, material_bucket, side_bucket, Tier, DANGER_CLASSES, MATERIAL_BUCKETS,
    SIDE_BUCKETS, TIERS,
};
use crate::types::Color;

/// Exits of one cheap tier in one bucket, and how many of them the full score contradicts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExitTally {
    pub exits: u64,
    pub exceeded: u64,
    /// Positions of the pool whose search contributed at least one exit.
    pub positions: u64,
    /// The most exits any single position contributed.
    pub max_from_one_position: u64,
}

/// The two cheap tiers, indexed by `Tier as usize`.
const CHEAP_TIERS: usize = 2;

#[derive(Clone, Debug)]
pub struct Calibration {
    pub modes: Modes,
    /// Lazy residual (full - lazy, without the king term) per side, by its own bucket.
    pub lazy_residual: Vec<Histogram>,
    /// Super-lazy residual (full - material, without the king term), by its own bucket.
    pub super_lazy_residual: Vec<Histogram>,
    /// A side's king term by its king's danger class, then by the attacker's (opponent's)
    /// bucket: `king[class * SIDE_BUCKETS + attacker]`.
    pub king: Vec<Histogram>,
    /// Margin safety by cheap tier and material bucket.
    pub by_material_bucket: [[ExitTally; MATERIAL_BUCKETS]; CHEAP_TIERS],
    /// Margin safety by cheap tier, my bucket and the opponent's.
    pub by_side_buckets: [[[ExitTally; SIDE_BUCKETS]; SIDE_BUCKETS]; CHEAP_TIERS],
    /// Margin safety by cheap tier, material bucket and the danger class of the king whose term
    /// the exit bet on: the side to move's for a fail high, the opponent's for a fail low.
    pub by_danger_class: [[[ExitTally; DANGER_CLASSES]; MATERIAL_BUCKETS]; CHEAP_TIERS],
    /// QSearch: real score minus (stand pat + captured value + positional), by source tier.
    pub qfutility_excess: Vec<Histogram>,
    pub positions: u64,
    /// Replay samples (the `samples` mode).
    pub samples: Option<Samples>,
    /// The index in the pool of the position being searched.
    pub position: u32,
    current: [[u64; MATERIAL_BUCKETS]; CHEAP_TIERS],
}

impl Calibration {
    pub fn new(modes: Modes) -> Calibration {
        let hists = |n: usize| vec![Histogram::default(); n];
        Calibration {
            modes,
            lazy_residual: hists(SIDE_BUCKETS),
            super_lazy_residual: hists(SIDE_BUCKETS),
            king: hists(DANGER_CLASSES * SIDE_BUCKETS),
            by_material_bucket: [[ExitTally::default(); MATERIAL_BUCKETS]; CHEAP_TIERS],
            by_side_buckets: [[[ExitTally::default(); SIDE_BUCKETS]; SIDE_BUCKETS]; CHEAP_TIERS],
            by_danger_class: [[[ExitTally::default(); DANGER_CLASSES]; MATERIAL_BUCKETS];
                CHEAP_TIERS],
            qfutility_excess: hists(TIERS),
            positions: 0,
            samples: modes.samples.map(Samples::new),
            position: 0,
            current: [[0; MATERIAL_BUCKETS]; CHEAP_TIERS],
        }
    }

    /// Starts attributing exits and samples to pool position `index`.
    pub fn begin_position(&mut self, index: usize) {
        self.position = u32::try_from(index).unwrap_or(u32::MAX);
        self.current = [[0; MATERIAL_BUCKETS]; CHEAP_TIERS];
    }

    /// Folds the current position's exits into the distinct-position statistics.
    pub fn end_position(&mut self) {
        self.positions += 1;
        for tier in 0..CHEAP_TIERS {
            for bucket in 0..MATERIAL_BUCKETS {
                let n = self.current[tier][bucket];
                let tally = &mut self.by_material_bucket[tier][bucket];
                if n > 0 {
                    tally.positions += 1;
                    tally.max_from_one_position = tally.max_from_one_position.max(n);
                }
            }
        }
    }

    /// Records both sides' residuals and king terms of one evaluated position. The super-lazy
    /// residual only where the super-lazy tier may exit. Terms are recorded before the drawish
    /// scale: a scaled exit leaves out less than that, so tables drawn from these histograms
    /// stay conservative there, and normal positions keep the distribution they bound.
    pub fn record_residuals(&mut self, board: &Board, breakdown: &Breakdown, super_lazy: bool) {
        for color in Color::BOTH {
            let side = color.index();
            let own = side_bucket(board, color);
            let attacker = side_bucket(board, !color);
            self.lazy_residual[own].record(breakdown.rest[side]);
            if super_lazy {
                self.super_lazy_residual[own].record(breakdown.lazy[side] + breakdown.rest[side]);
            }
            let class = danger_class(board, color);
            self.king[class * SIDE_BUCKETS + attacker].record(breakdown.king[side]);
        }
    }

    /// Records a cheap-tier exit and whether the full score contradicts its decision.
    pub fn record_exit(
        &mut self,
        board: &Board,
        tier: Tier,
        failed_high: bool,
        alpha: i32,
        beta: i32,
        full: i32,
    ) {
        let t = tier as usize;
        debug_assert!(t < CHEAP_TIERS);
        let exceeded = if failed_high {
            full <= beta
        } else {
            full >= alpha
        };
        let us = board.side_to_move();
        let bucket = material_bucket(board);
        let (my, opp) = (side_bucket(board, us), side_bucket(board, !us));
        let tally = &mut self.by_material_bucket[t][bucket];
        tally.exits += 1;
        tally.exceeded += u64::from(exceeded);
        let pair = &mut self.by_side_buckets[t][my][opp];
        pair.exits += 1;
        pair.exceeded += u64::from(exceeded);
        let king = if failed_high { us } else { !us };
        let class = &mut self.by_danger_class[t][bucket][danger_class(board, king)];
        class.exits += 1;
        class.exceeded += u64::from(exceeded);
        self.current[t][bucket] += 1;
    }

    pub fn record_qfutility(&mut self, tier: Tier, excess: i32) {
        self.qfutility_excess[tier as usize].record(excess);
    }
}
