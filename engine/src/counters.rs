//! Per-search counters: plain integer increments, always compiled in, reset per bench position.
//! The lab reads them through `squall bench --json`.

use crate::tier::{SearchKind, Tier, MATERIAL_BUCKETS, SEARCH_KINDS, SIDE_BUCKETS, TIERS};

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Every node visited, main search and quiescence.
    pub nodes: u64,
    pub qnodes: u64,
    pub tt_probes: u64,
    pub tt_hits: u64,
    pub beta_cutoffs: u64,
    pub first_move_cutoffs: u64,
    pub eval_calls: u64,
    /// Evaluation exits by tier (`Tier as usize`).
    pub exits: [u64; TIERS],
    pub exits_by_material_bucket: [[u64; TIERS]; MATERIAL_BUCKETS],
    /// Indexed by the side to move's per-side bucket, then the opponent's.
    pub exits_by_side_buckets: [[[u64; TIERS]; SIDE_BUCKETS]; SIDE_BUCKETS],
    /// Indexed by `SearchKind as usize`, then the material bucket.
    pub exits_by_search: [[[u64; TIERS]; MATERIAL_BUCKETS]; SEARCH_KINDS],
    /// QSearch futility prunes by the tier that produced the stand-pat score.
    pub futility_prunes: [u64; TIERS],
}

impl Counters {
    #[inline(always)]
    pub fn record_exit(
        &mut self,
        tier: Tier,
        search: SearchKind,
        material_bucket: usize,
        my_bucket: usize,
        opp_bucket: usize,
    ) {
        let t = tier as usize;
        self.exits[t] += 1;
        self.exits_by_material_bucket[material_bucket][t] += 1;
        self.exits_by_side_buckets[my_bucket][opp_bucket][t] += 1;
        self.exits_by_search[search as usize][material_bucket][t] += 1;
    }

    /// One search's exits by tier, over every material bucket.
    pub fn search_exits(&self, search: SearchKind) -> [u64; TIERS] {
        let mut exits = [0; TIERS];
        for bucket in &self.exits_by_search[search as usize] {
            for t in 0..TIERS {
                exits[t] += bucket[t];
            }
        }
        exits
    }

    /// Adds another search's counters (bench totals over positions).
    pub fn add(&mut self, other: &Counters) {
        self.nodes += other.nodes;
        self.qnodes += other.qnodes;
        self.tt_probes += other.tt_probes;
        self.tt_hits += other.tt_hits;
        self.beta_cutoffs += other.beta_cutoffs;
        self.first_move_cutoffs += other.first_move_cutoffs;
        self.eval_calls += other.eval_calls;
        for t in 0..TIERS {
            self.exits[t] += other.exits[t];
            self.futility_prunes[t] += other.futility_prunes[t];
            for b in 0..MATERIAL_BUCKETS {
                self.exits_by_material_bucket[b][t] += other.exits_by_material_bucket[b][t];
                for s in 0..SEARCH_KINDS {
                    self.exits_by_search[s][b][t] += other.exits_by_search[s][b][t];
                }
            }
            for my in 0..SIDE_BUCKETS {
                for opp in 0..SIDE_BUCKETS {
                    self.exits_by_side_buckets[my][opp][t] +=
                        other.exits_by_side_buckets[my][opp][t];
                }
            }
        }
    }

    /// Share of evaluations that exited in each tier, in percent.
    pub fn exit_percentages(&self) -> [f64; TIERS] {
        let total: u64 = self.exits.iter().sum();
        self.exits.map(|n| {
            if total == 0 {
                0.0
            } else {
                100.0 * n as f64 / total as f64
            }
        })
    }
}
