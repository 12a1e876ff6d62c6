//! The replay: which tier each sampled call would exit at under candidate margin tables, and
//! whether the full evaluation contradicts that exit, with no search. The pair margins come
//! from the engine's own formula (`squall::eval::margins::pair_margins`), the exit test from
//! its `Margins::exit`, and "exceeded" is the engine's `marginsafety` definition.

use std::collections::HashSet;

use serde::Serialize;
use squall::calibrate::stats::{wilson_interval, Z95};
use squall::eval::margins::{pair_margins, KingTable, Margins, Pair};
use squall::search::INFINITY;
use squall::tier::{
    SearchKind, Tier, DANGER_CLASSES, MATERIAL_BUCKETS, SEARCH_KINDS, SIDE_BUCKETS, TIERS,
};

use super::samples::{Sample, Samples};
use crate::calibration::in_force::MarginsInForce;

/// The fewest sampled exits of a cheap tier, in one material bucket and danger class, for the
/// exceeded limit to hold that cell apart from its bucket: with no exceeded exit, 1,000 exits
/// put the Wilson 95% upper bound at 0.38%, under any limit the search is given. A smaller
/// cell says too little alone; its bucket's row, which includes it, still holds it.
pub(crate) const MIN_CLASS_CELL_EXITS: u64 = 1_000;

/// A table's low and high rows: what the exits read (the P50 rows feed QSearch futility only).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Bounds {
    pub(crate) lo: [i32; SIDE_BUCKETS],
    pub(crate) hi: [i32; SIDE_BUCKETS],
}

/// The rows of the margin tables the exits read: the king table's of each danger class, and
/// each residual table's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct ExitTables {
    pub(crate) king: [Bounds; DANGER_CLASSES],
    pub(crate) lazy: Bounds,
    pub(crate) super_lazy: Bounds,
}

impl From<&MarginsInForce> for ExitTables {
    fn from(margins: &MarginsInForce) -> Self {
        let bounds = |t: &crate::calibration::in_force::TableInForce| Bounds { lo: t.lo, hi: t.hi };
        ExitTables {
            king: std::array::from_fn(|class| bounds(margins.king_of_class(class))),
            lazy: bounds(&margins.lazy_residual),
            super_lazy: bounds(&margins.super_lazy_residual),
        }
    }
}

impl ExitTables {
    /// The king table's low and high rows in the engine's shape.
    fn king_rows(&self) -> (KingTable, KingTable) {
        (
            std::array::from_fn(|class| self.king[class].lo),
            std::array::from_fn(|class| self.king[class].hi),
        )
    }

    /// Refuses tables the engine could not use: every pair margin of `pair_margins` must be
    /// computable in `i32` (the engine's `const fn` fails to compile otherwise), and small
    /// enough that the exit test `score ∓ margin` stays in `i32` for any score within
    /// `[-INFINITY, INFINITY]`. The error names the table entries, as `lab tables` prints them.
    pub(crate) fn check(&self) -> anyhow::Result<()> {
        let max_margin = i32::MAX - INFINITY;
        for (resid, prefix) in [
            (&self.super_lazy, "SUPER_LAZY_RESID"),
            (&self.lazy, "LAZY_RESID"),
        ] {
            for pair in Pair::all() {
                let Pair {
                    my_bucket: my,
                    opp_bucket: opp,
                    my_class: mc,
                    opp_class: oc,
                } = pair;
                // The engine's two sums, in its order of operations.
                for (name, (hi_class, hi_bucket), (lo_class, lo_bucket), resid_hi, resid_lo) in [
                    ("fail-high", (oc, my), (mc, opp), opp, my),
                    ("fail-low", (mc, opp), (oc, my), my, opp),
                ] {
                    let (king_hi, king_lo) = (
                        self.king[hi_class].hi[hi_bucket],
                        self.king[lo_class].lo[lo_bucket],
                    );
                    let terms = format!(
                        "(KING_HI[{hi_class}][{hi_bucket}] - KING_LO[{lo_class}][{lo_bucket}]) + \
                         ({prefix}_HI[{resid_hi}] - {prefix}_LO[{resid_lo}])"
                    );
                    let margin = king_hi
                        .checked_sub(king_lo)
                        .zip(resid.hi[resid_hi].checked_sub(resid.lo[resid_lo]))
                        .and_then(|(king, resid)| king.checked_add(resid));
                    let place = format!(
                        "{name} margin of side buckets ({my}, {opp}), danger classes ({mc}, {oc})"
                    );
                    match margin {
                        None => anyhow::bail!(
                            "{place}: {terms} = {} overflows i32, so the engine's pair_margins \
                             cannot compute it",
                            i64::from(king_hi) - i64::from(king_lo) + i64::from(resid.hi[resid_hi])
                                - i64::from(resid.lo[resid_lo])
                        ),
                        Some(margin) if margin > max_margin => anyhow::bail!(
                            "{place}: {terms} = {margin}, above {max_margin}: a score within \
                             +-{INFINITY} minus it overflows i32"
                        ),
                        Some(_) => {}
                    }
                }
            }
        }
        Ok(())
    }
}

/// One tier's margins by (my class, opponent's class, my bucket, opponent's bucket), as the
/// engine's own pair tables hold them.
type PairMargins = [[[[Margins; SIDE_BUCKETS]; SIDE_BUCKETS]; DANGER_CLASSES]; DANGER_CLASSES];

/// Both cheap tiers' margins of every pair.
pub(crate) struct PairTables {
    super_lazy: PairMargins,
    lazy: PairMargins,
}

impl PairTables {
    pub(crate) fn new(tables: &ExitTables) -> PairTables {
        let (king_lo, king_hi) = tables.king_rows();
        let pairs = |resid: &Bounds| {
            let mut table = [[[[Margins {
                fail_high: 0,
                fail_low: 0,
            }; SIDE_BUCKETS]; SIDE_BUCKETS]; DANGER_CLASSES];
                DANGER_CLASSES];
            for pair in Pair::all() {
                table[pair.my_class][pair.opp_class][pair.my_bucket][pair.opp_bucket] =
                    pair_margins(&king_lo, &king_hi, &resid.lo, &resid.hi, pair);
            }
            table
        };
        PairTables {
            super_lazy: pairs(&tables.super_lazy),
            lazy: pairs(&tables.lazy),
        }
    }
}

/// A sampled call replayed under candidate tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Replayed {
    /// The tier it exits at.
    pub(crate) tier: Tier,
    /// Whether the full score contradicts the exit (a fail-high with full <= beta, a fail-low
    /// with full >= alpha; never for the full tier).
    pub(crate) exceeded: bool,
    /// For a cheap exit, the danger class of the king it bet on: the side to move's for a fail
    /// high, the opponent's for a fail low (as the engine's `marginsafety` tallies
    /// `by_danger_class`).
    pub(crate) bet_class: Option<usize>,
}

/// Replays one sampled call under `pairs`. The super-lazy tier stands aside when a passer race
/// is possible, as in the engine.
pub(crate) fn replay(sample: &Sample, pairs: &PairTables) -> Replayed {
    let (tier, failed_high) = exit(sample, pairs);
    Replayed {
        tier,
        exceeded: failed_high.is_some_and(|failed_high| {
            if failed_high {
                sample.full <= sample.beta
            } else {
                sample.full >= sample.alpha
            }
        }),
        bet_class: failed_high.map(|failed_high| {
            if failed_high {
                sample.my_class
            } else {
                sample.opp_class
            }
        }),
    }
}

/// The tier a sampled call exits at, and for a cheap tier whether it failed high.
fn exit(sample: &Sample, pairs: &PairTables) -> (Tier, Option<bool>) {
    let (my, opp) = (sample.my_bucket, sample.opp_bucket);
    let (mc, oc) = (sample.my_class, sample.opp_class);
    let (alpha, beta) = (sample.alpha, sample.beta);
    if !sample.race {
        if let Some(failed_high) =
            pairs.super_lazy[mc][oc][my][opp].exit(sample.super_lazy, alpha, beta)
        {
            return (Tier::SuperLazy, Some(failed_high));
        }
    }
    if let Some(failed_high) = pairs.lazy[mc][oc][my][opp].exit(sample.lazy, alpha, beta) {
        return (Tier::Lazy, Some(failed_high));
    }
    (Tier::Full, None)
}

/// Exits and exceeded exits of each tier in one material bucket, and of each cheap tier by the
/// danger class of the king its exits bet on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    pub(crate) calls: u64,
    pub(crate) exits: [u64; TIERS],
    pub(crate) exceeded: [u64; TIERS],
    /// Super-lazy and lazy exits by bet class.
    pub(crate) class_exits: [[u64; DANGER_CLASSES]; 2],
    pub(crate) class_exceeded: [[u64; DANGER_CLASSES]; 2],
}

impl Counts {
    pub(crate) fn add(&mut self, other: &Counts) {
        self.calls += other.calls;
        for tier in 0..TIERS {
            self.exits[tier] += other.exits[tier];
            self.exceeded[tier] += other.exceeded[tier];
        }
        for cheap in 0..2 {
            for class in 0..DANGER_CLASSES {
                self.class_exits[cheap][class] += other.class_exits[cheap][class];
                self.class_exceeded[cheap][class] += other.class_exceeded[cheap][class];
            }
        }
    }

    fn record(&mut self, call: Replayed) {
        let tier = call.tier as usize;
        self.calls += 1;
        self.exits[tier] += 1;
        self.exceeded[tier] += u64::from(call.exceeded);
        if let Some(class) = call.bet_class {
            self.class_exits[tier][class] += 1;
            self.class_exceeded[tier][class] += u64::from(call.exceeded);
        }
    }
}

/// The counts of `samples` replayed under `pairs`, per material bucket.
pub(crate) fn count<'a>(
    samples: impl IntoIterator<Item = (usize, &'a Sample)>,
    pairs: &PairTables,
) -> [Counts; MATERIAL_BUCKETS] {
    let mut counts = [Counts::default(); MATERIAL_BUCKETS];
    for (bucket, sample) in samples {
        counts[bucket].record(replay(sample, pairs));
    }
    counts
}

/// Each bucket's share of the calls of the run: its reservoir's population `seen`.
pub(crate) fn bucket_weights(seen: &[u64; MATERIAL_BUCKETS]) -> [f64; MATERIAL_BUCKETS] {
    let total: u64 = seen.iter().sum();
    seen.map(|n| {
        if total == 0 {
            0.0
        } else {
            n as f64 / total as f64
        }
    })
}

/// The bench-weighted share of the calls that exit at a cheap tier: each bucket's share
/// weighted by its population.
pub(crate) fn cheap_share(
    counts: &[Counts; MATERIAL_BUCKETS],
    weights: &[f64; MATERIAL_BUCKETS],
) -> f64 {
    counts
        .iter()
        .zip(weights)
        .filter(|(c, _)| c.calls > 0)
        .map(|(c, w)| w * (c.exits[0] + c.exits[1]) as f64 / c.calls as f64)
        .sum()
}

/// A cheap tier's cell that the exceeded limit holds, and the Wilson 95% upper bound of its
/// exceeded rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Cell {
    pub(crate) tier: Tier,
    pub(crate) bucket: usize,
    /// `None` for the whole material bucket, else one danger class within it.
    pub(crate) class: Option<usize>,
    pub(crate) upper: f64,
}

impl Cell {
    /// "lazy exits of material bucket 3", "... (danger class 2)".
    pub(crate) fn describe(&self) -> String {
        let class = self
            .class
            .map_or(String::new(), |c| format!(" (danger class {c})"));
        format!(
            "{} exits of material bucket {}{class}",
            self.tier.name(),
            self.bucket
        )
    }
}

/// The cell whose exceeded rate has the largest Wilson 95% upper bound: over the cheap tiers,
/// each material bucket with exits and each danger class within it with at least
/// [`MIN_CLASS_CELL_EXITS`] exits (the soundness figure `lab calibrate` reports per tier ×
/// bucket × class). `None` when the cheap tiers never exit.
pub(crate) fn worst_cell(counts: &[Counts; MATERIAL_BUCKETS]) -> Option<Cell> {
    let mut worst: Option<Cell> = None;
    let mut consider = |cell: Cell| {
        if worst.is_none_or(|w| cell.upper > w.upper) {
            worst = Some(cell);
        }
    };
    for (bucket, c) in counts.iter().enumerate() {
        for tier in [Tier::SuperLazy, Tier::Lazy] {
            let t = tier as usize;
            if c.exits[t] > 0 {
                let upper = wilson_interval(c.exceeded[t], c.exits[t], Z95).1;
                consider(Cell {
                    tier,
                    bucket,
                    class: None,
                    upper,
                });
            }
            for class in 0..DANGER_CLASSES {
                let exits = c.class_exits[t][class];
                if exits >= MIN_CLASS_CELL_EXITS {
                    let upper = wilson_interval(c.class_exceeded[t][class], exits, Z95).1;
                    consider(Cell {
                        tier,
                        bucket,
                        class: Some(class),
                        upper,
                    });
                }
            }
        }
    }
    worst
}

/// The bound of [`worst_cell`]; 0 when the cheap tiers never exit.
pub(crate) fn worst_upper(counts: &[Counts; MATERIAL_BUCKETS]) -> f64 {
    worst_cell(counts).map_or(0.0, |cell| cell.upper)
}

/// A rate with its Wilson 95% interval, fractions in [0, 1].
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub(crate) struct Rate {
    pub(crate) rate: f64,
    pub(crate) low: f64,
    pub(crate) high: f64,
}

impl Rate {
    /// `None` without trials.
    pub(crate) fn wilson(successes: u64, n: u64) -> Option<Rate> {
        (n > 0).then(|| {
            let (low, high) = wilson_interval(successes, n, Z95);
            Rate {
                rate: successes as f64 / n as f64,
                low,
                high,
            }
        })
    }

    /// A population rate from strata of `(weight of each unit, units, successes)`: the
    /// weighted proportion, its interval the Wilson interval at Kish's effective sample size
    /// `(sum w n)^2 / sum w^2 n` (successes and size rounded to whole units for the interval).
    pub(crate) fn weighted(strata: &[(f64, u64, u64)]) -> Option<Rate> {
        let strata: Vec<_> = strata.iter().filter(|s| s.0 > 0.0 && s.1 > 0).collect();
        let total: f64 = strata.iter().map(|&&(w, n, _)| w * n as f64).sum();
        if total <= 0.0 {
            return None;
        }
        let rate = strata.iter().map(|&&(w, _, k)| w * k as f64).sum::<f64>() / total;
        let squares: f64 = strata.iter().map(|&&(w, n, _)| w * w * n as f64).sum();
        let effective = (total * total / squares).max(1.0);
        let (low, high) = wilson_interval(
            (rate * effective).round() as u64,
            effective.round() as u64,
            Z95,
        );
        Some(Rate { rate, low, high })
    }
}

/// One tier's predicted exits in a scope (a material bucket, or the whole run).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct TierPrediction {
    pub(crate) tier: &'static str,
    /// Sampled calls that exit at this tier.
    pub(crate) exits: u64,
    /// The exits' share of the scope's calls (bench-weighted for the whole run).
    pub(crate) share: Option<Rate>,
    /// Distinct positions of those exits.
    pub(crate) exit_positions: u64,
    /// Exits the full evaluation contradicts (always 0 for the full tier).
    pub(crate) exceeded: u64,
    /// exceeded / exits; `None` for the full tier and without exits.
    pub(crate) exceeded_rate: Option<Rate>,
    /// Distinct positions of the exceeded exits.
    pub(crate) exceeded_positions: u64,
}

/// The prediction for one material bucket.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct BucketPrediction {
    pub(crate) bucket: usize,
    /// Calls offered to the bucket's reservoir in the run.
    pub(crate) seen: u64,
    /// seen / all calls seen: the bucket's weight in the run's figures.
    pub(crate) weight: f64,
    /// Sampled calls in the bucket.
    pub(crate) calls: u64,
    /// Distinct positions among them.
    pub(crate) positions: u64,
    pub(crate) tiers: Vec<TierPrediction>,
}

/// The predicted exits of one search's calls (main search or quiescence), bench-weighted.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct SearchPrediction {
    pub(crate) search: &'static str,
    /// The search's share of all calls.
    pub(crate) calls_share: f64,
    /// Of the search's calls, the share exiting at each tier (super-lazy, lazy, full).
    pub(crate) tier_shares: [f64; TIERS],
}

/// The sampled cheap exits that bet on a king of one danger class (the side to move's for a
/// fail high, the opponent's for a fail low), per cheap tier; sample counts, not weighted.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct DangerClassPrediction {
    pub(crate) class: usize,
    /// Super-lazy and lazy exits.
    pub(crate) exits: [u64; 2],
    pub(crate) exceeded: [u64; 2],
    /// exceeded / exits with its Wilson interval, per cheap tier; `None` without exits.
    pub(crate) exceeded_rate: [Option<Rate>; 2],
}

/// The prediction for a set of candidate tables.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Prediction {
    pub(crate) tables: ExitTables,
    pub(crate) by_material_bucket: Vec<BucketPrediction>,
    /// Main search and quiescence apart: the counters' `eval.by_search` of `squall bench`.
    pub(crate) by_search: Vec<SearchPrediction>,
    /// The cheap exits by the danger class of the king they bet on, over all material buckets.
    pub(crate) by_danger_class: Vec<DangerClassPrediction>,
    /// The whole run, bench-weighted: each bucket by its population.
    pub(crate) overall: Vec<TierPrediction>,
    /// Super-lazy plus lazy exits, bench-weighted.
    pub(crate) cheap_share: f64,
    /// The largest Wilson upper bound of a cheap tier's exceeded rate in a bucket with exits,
    /// or in a danger class within one ([`worst_cell`]).
    pub(crate) worst_exceeded_upper: f64,
}

/// Positions behind each tier's exits and exceeded exits.
#[derive(Default)]
struct Positions {
    exits: [HashSet<u32>; TIERS],
    exceeded: [HashSet<u32>; TIERS],
}

/// Replays every sample under `tables`.
pub(crate) fn predict(samples: &Samples, tables: &ExitTables) -> Prediction {
    let pairs = PairTables::new(tables);
    let weights = bucket_weights(&samples.seen);
    let mut counts = [Counts::default(); MATERIAL_BUCKETS];
    let mut positions: [Positions; MATERIAL_BUCKETS] = Default::default();
    let mut calls_positions: [HashSet<u32>; MATERIAL_BUCKETS] = Default::default();
    let mut by_search = [[Counts::default(); MATERIAL_BUCKETS]; SEARCH_KINDS];
    let mut by_class = [[(0u64, 0u64); 2]; DANGER_CLASSES];
    for (bucket, bucket_samples) in samples.by_material_bucket.iter().enumerate() {
        for sample in bucket_samples {
            let call = replay(sample, &pairs);
            let (tier, exceeded) = (call.tier, call.exceeded);
            if let Some(class) = call.bet_class {
                let (exits, contradicted) = &mut by_class[class][tier as usize];
                *exits += 1;
                *contradicted += u64::from(exceeded);
            }
            counts[bucket].record(call);
            by_search[sample.search as usize][bucket].record(call);
            calls_positions[bucket].insert(sample.position);
            positions[bucket].exits[tier as usize].insert(sample.position);
            if exceeded {
                positions[bucket].exceeded[tier as usize].insert(sample.position);
            }
        }
    }
    let tier_prediction = |tier: Tier, c: &Counts, share: Option<Rate>, p: &Positions| {
        let t = tier as usize;
        TierPrediction {
            tier: tier.name(),
            exits: c.exits[t],
            share,
            exit_positions: p.exits[t].len() as u64,
            exceeded: c.exceeded[t],
            exceeded_rate: (tier != Tier::Full)
                .then(|| Rate::wilson(c.exceeded[t], c.exits[t]))
                .flatten(),
            exceeded_positions: p.exceeded[t].len() as u64,
        }
    };
    let by_material_bucket = (0..MATERIAL_BUCKETS)
        .map(|b| {
            let c = &counts[b];
            BucketPrediction {
                bucket: b,
                seen: samples.seen[b],
                weight: weights[b],
                calls: c.calls,
                positions: calls_positions[b].len() as u64,
                tiers: Tier::ALL
                    .iter()
                    .map(|&tier| {
                        let share = Rate::wilson(c.exits[tier as usize], c.calls);
                        tier_prediction(tier, c, share, &positions[b])
                    })
                    .collect(),
            }
        })
        .collect();
    // Each sampled call of bucket b stands for seen[b] / calls[b] calls of the run.
    let unit_weight = |b: usize| {
        let c = counts[b].calls;
        if c == 0 {
            0.0
        } else {
            weights[b] / c as f64
        }
    };
    let mut all = Positions::default();
    for p in &positions {
        for t in 0..TIERS {
            all.exits[t].extend(&p.exits[t]);
            all.exceeded[t].extend(&p.exceeded[t]);
        }
    }
    let weighted = |c: &[Counts; MATERIAL_BUCKETS], count: &dyn Fn(&Counts) -> u64| {
        (0..MATERIAL_BUCKETS)
            .map(|b| unit_weight(b) * count(&c[b]) as f64)
            .sum::<f64>()
    };
    let all_calls = weighted(&counts, &|c| c.calls);
    let by_search = SearchKind::ALL
        .iter()
        .map(|&search| {
            let c = &by_search[search as usize];
            let calls = weighted(c, &|c| c.calls);
            let share = |part: f64, whole: f64| if whole > 0.0 { part / whole } else { 0.0 };
            SearchPrediction {
                search: search.name(),
                calls_share: share(calls, all_calls),
                tier_shares: std::array::from_fn(|t| share(weighted(c, &|c| c.exits[t]), calls)),
            }
        })
        .collect();
    let mut total = Counts::default();
    counts.iter().for_each(|c| total.add(c));
    let overall = Tier::ALL
        .iter()
        .map(|&tier| {
            let t = tier as usize;
            let share_strata: Vec<_> = (0..MATERIAL_BUCKETS)
                .map(|b| (unit_weight(b), counts[b].calls, counts[b].exits[t]))
                .collect();
            let exceeded_strata: Vec<_> = (0..MATERIAL_BUCKETS)
                .map(|b| (unit_weight(b), counts[b].exits[t], counts[b].exceeded[t]))
                .collect();
            let mut prediction = tier_prediction(tier, &total, Rate::weighted(&share_strata), &all);
            if tier != Tier::Full {
                prediction.exceeded_rate = Rate::weighted(&exceeded_strata);
            }
            prediction
        })
        .collect();
    let by_danger_class = by_class
        .iter()
        .enumerate()
        .map(|(class, tiers)| DangerClassPrediction {
            class,
            exits: tiers.map(|(exits, _)| exits),
            exceeded: tiers.map(|(_, exceeded)| exceeded),
            exceeded_rate: tiers.map(|(exits, exceeded)| Rate::wilson(exceeded, exits)),
        })
        .collect();
    Prediction {
        tables: *tables,
        by_material_bucket,
        by_search,
        by_danger_class,
        overall,
        cheap_share: cheap_share(&counts, &weights),
        worst_exceeded_upper: worst_upper(&counts),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(sample: &Sample, pairs: &PairTables) -> (Tier, bool) {
        let call = replay(sample, pairs);
        (call.tier, call.exceeded)
    }
    use squall::tier::SearchKind;

    /// Tables whose pair margins are `margin` on both sides for every pair: king rows zero,
    /// residual rows -margin/2 and +margin/2.
    fn flat(super_lazy: i32, lazy: i32) -> ExitTables {
        let bounds = |m: i32| Bounds {
            lo: [-m / 2; SIDE_BUCKETS],
            hi: [m / 2; SIDE_BUCKETS],
        };
        ExitTables {
            king: [Bounds {
                lo: [0; SIDE_BUCKETS],
                hi: [0; SIDE_BUCKETS],
            }; DANGER_CLASSES],
            lazy: bounds(lazy),
            super_lazy: bounds(super_lazy),
        }
    }

    #[test]
    fn tables_the_engine_could_not_use_are_refused() {
        assert!(flat(100, 40).check().is_ok());
        let mut wrapping = flat(100, 40);
        wrapping.king[1].hi[2] = i32::MAX;
        wrapping.king[1].lo[5] = i32::MIN;
        let error = wrapping.check().unwrap_err().to_string();
        // The first pair in table order whose sum leaves i32: class 1's KING_HI[2] with a
        // residual spread, my king calm and the opponent's in danger.
        assert!(
            error.starts_with(
                "fail-high margin of side buckets (2, 0), danger classes (0, 1): \
                 (KING_HI[1][2] - KING_LO[0][0]) + (SUPER_LAZY_RESID_HI[0] - \
                 SUPER_LAZY_RESID_LO[2]) = 2147483747 overflows i32"
            ),
            "{error}"
        );
        // Computable, but the exit test would wrap for a score near -INFINITY.
        let mut wide = flat(100, 40);
        wide.lazy.hi = [i32::MAX - 1000; SIDE_BUCKETS];
        let error = wide.check().unwrap_err().to_string();
        assert!(error.contains("minus it overflows i32"), "{error}");
        let mut widest_usable = flat(100, 40);
        widest_usable.lazy.hi = [0; SIDE_BUCKETS];
        widest_usable.lazy.lo = [0; SIDE_BUCKETS];
        widest_usable.lazy.hi[0] = i32::MAX - INFINITY;
        assert!(widest_usable.check().is_ok());
    }

    fn call(position: u32, scores: (i32, i32, i32), race: bool) -> Sample {
        Sample {
            position,
            search: SearchKind::Main,
            my_bucket: 3,
            opp_bucket: 4,
            alpha: -50,
            beta: 50,
            super_lazy: scores.0,
            lazy: scores.1,
            full: scores.2,
            race,
            my_class: 0,
            opp_class: 0,
        }
    }

    fn samples(bucket: Vec<Sample>, seen: u64) -> Samples {
        let mut by_material_bucket: [Vec<Sample>; MATERIAL_BUCKETS] = Default::default();
        by_material_bucket[2] = bucket;
        let mut all_seen = [0; MATERIAL_BUCKETS];
        all_seen[2] = seen;
        Samples {
            capacity: 100,
            seed: 1,
            seen: all_seen,
            by_material_bucket,
        }
    }

    #[test]
    fn the_replay_reads_each_king_s_danger_class() {
        // Class 1 (danger) bounds the king term at -300: a side to move in danger needs 300 cp
        // more to fail high, and an opponent in danger 300 cp more to fail low.
        let mut tables = flat(100, 40);
        tables.king[1].lo = [-300; SIDE_BUCKETS];
        let pairs = PairTables::new(&tables);
        let in_danger = |sample: Sample, mine: bool| Sample {
            my_class: usize::from(mine),
            opp_class: usize::from(!mine),
            ..sample
        };
        let high = call(0, (200, 0, 60), false);
        assert_eq!(outcome(&high, &pairs), (Tier::SuperLazy, false));
        assert_eq!(outcome(&in_danger(high, false), &pairs).0, Tier::SuperLazy);
        assert_eq!(outcome(&in_danger(high, true), &pairs).0, Tier::Full);
        let low = call(0, (-200, 0, -60), false);
        assert_eq!(outcome(&in_danger(low, true), &pairs).0, Tier::SuperLazy);
        assert_eq!(outcome(&in_danger(low, false), &pairs).0, Tier::Full);
        // The prediction counts each exit under the class of the king it bet on: a fail high
        // under the side to move's, a fail low under the opponent's.
        let calls = vec![
            in_danger(call(1, (200, 0, 60), false), false), // fails high, my king calm
            in_danger(call(2, (-200, 0, -40), false), true), // fails low, opponent calm
            in_danger(call(3, (-600, 0, -60), false), false), // fails low, opponent in danger
            in_danger(call(4, (200, 0, 60), false), true),  // no exit: the margin is 400
        ];
        let prediction = predict(&samples(calls, 4), &tables);
        let [calm, danger] = [
            &prediction.by_danger_class[0],
            &prediction.by_danger_class[1],
        ];
        assert_eq!((calm.exits, calm.exceeded), ([2, 0], [1, 0]));
        assert_eq!((danger.exits, danger.exceeded), ([1, 0], [0, 0]));
        assert_eq!(calm.exceeded_rate[0].unwrap().rate, 0.5);
        assert_eq!(danger.exceeded_rate[0].unwrap().rate, 0.0);
        assert_eq!(danger.exceeded_rate[1], None);
        // The tables read back from a margins block with one king row use it for every class.
        let source = include_str!("../../../engine/src/eval/margins.rs");
        let margins = crate::calibration::in_force::parse_margins(source).unwrap();
        let (mut one_class, mut two_classes) = (margins.clone(), margins.clone());
        one_class.king.truncate(1);
        two_classes.king = vec![margins.king[0].clone(); 2];
        assert_eq!(ExitTables::from(&one_class), ExitTables::from(&two_classes));
    }

    #[test]
    fn exits_are_split_by_the_search_that_asked() {
        // Margins 100: a score of 500 clears the window (-50, 50) at super-lazy, 0 nowhere.
        let main = (0..3).map(|i| call(i, (500, 500, 500), false));
        let quiescence = (3..4).map(|i| Sample {
            search: SearchKind::Quiescence,
            ..call(i, (0, 0, 0), false)
        });
        let prediction = predict(
            &samples(main.chain(quiescence).collect(), 8),
            &flat(100, 100),
        );
        let [m, q] = [&prediction.by_search[0], &prediction.by_search[1]];
        assert_eq!((m.search, q.search), ("main", "quiescence"));
        assert!((m.calls_share - 0.75).abs() < 1e-12 && (q.calls_share - 0.25).abs() < 1e-12);
        assert_eq!(m.tier_shares, [1.0, 0.0, 0.0]);
        assert_eq!(q.tier_shares, [0.0, 0.0, 1.0]);
    }

    #[test]
    fn a_call_exits_at_the_first_tier_whose_margin_clears_the_window() {
        let pairs = PairTables::new(&flat(100, 40));
        // 200 - 100 > 50: super-lazy fails high, and the full score agrees.
        assert_eq!(
            outcome(&call(0, (200, 0, 60), false), &pairs),
            (Tier::SuperLazy, false)
        );
        // The full score is not above beta: the exit is exceeded.
        assert_eq!(
            outcome(&call(0, (200, 0, 50), false), &pairs),
            (Tier::SuperLazy, true)
        );
        // A fail-low: -200 + 100 < -50, contradicted by a full score at alpha.
        assert_eq!(
            outcome(&call(0, (-200, 0, -50), false), &pairs),
            (Tier::SuperLazy, true)
        );
        // 140 - 100 is not above beta; the lazy score 100 - 40 is.
        assert_eq!(
            outcome(&call(0, (140, 100, 0), false), &pairs),
            (Tier::Lazy, true)
        );
        // The race rule: the super-lazy tier stands aside, the lazy tier may still exit.
        assert_eq!(
            outcome(&call(0, (900, 100, 60), true), &pairs),
            (Tier::Lazy, false)
        );
        assert_eq!(
            outcome(&call(0, (900, 0, 60), true), &pairs),
            (Tier::Full, false)
        );
        // Inside the window for both tiers.
        assert_eq!(
            outcome(&call(0, (0, 0, 900), false), &pairs),
            (Tier::Full, false)
        );
    }

    #[test]
    fn the_prediction_counts_exits_exceeded_and_positions() {
        let calls = vec![
            call(1, (200, 0, 60), false),  // super-lazy, sound
            call(1, (200, 0, 40), false),  // super-lazy, exceeded
            call(2, (200, 0, 60), false),  // super-lazy, sound
            call(3, (900, 100, 60), true), // lazy (race), sound
            call(4, (0, 0, 0), false),     // full
        ];
        let prediction = predict(&samples(calls, 50), &flat(100, 40));
        let bucket = &prediction.by_material_bucket[2];
        assert_eq!((bucket.calls, bucket.positions, bucket.seen), (5, 4, 50));
        assert_eq!(bucket.weight, 1.0);
        let super_lazy = &bucket.tiers[0];
        assert_eq!((super_lazy.exits, super_lazy.exit_positions), (3, 2));
        assert_eq!((super_lazy.exceeded, super_lazy.exceeded_positions), (1, 1));
        let share = super_lazy.share.unwrap();
        let (low, high) = wilson_interval(3, 5, Z95);
        assert_eq!((share.rate, share.low, share.high), (0.6, low, high));
        let exceeded = super_lazy.exceeded_rate.unwrap();
        assert_eq!(exceeded.high, wilson_interval(1, 3, Z95).1);
        assert_eq!(bucket.tiers[1].exits, 1);
        assert_eq!(bucket.tiers[2].exits, 1);
        assert_eq!(bucket.tiers[2].exceeded_rate, None);
        // An empty bucket has no rates.
        assert_eq!(prediction.by_material_bucket[0].tiers[0].share, None);
        // One bucket: the weighted overall is the bucket's own figure.
        assert!((prediction.overall[0].share.unwrap().rate - 0.6).abs() < 1e-12);
        assert!((prediction.cheap_share - 0.8).abs() < 1e-12);
        // The worst bound is the lazy tier's: one exit, none exceeded, says little.
        let lazy_upper = wilson_interval(0, 1, Z95).1;
        assert!(lazy_upper > exceeded.high);
        assert_eq!(prediction.worst_exceeded_upper, lazy_upper);
    }

    #[test]
    fn the_overall_share_weights_buckets_by_their_population() {
        // Bucket 2: 4 calls, all super-lazy exits, 900 seen; bucket 5: 4 calls, none, 100 seen.
        let mut s = samples((0..4).map(|p| call(p, (200, 0, 60), false)).collect(), 900);
        s.by_material_bucket[5] = (10..14).map(|p| call(p, (0, 0, 0), false)).collect();
        s.seen[5] = 100;
        let prediction = predict(&s, &flat(100, 40));
        let share = prediction.overall[0].share.unwrap();
        assert!((share.rate - 0.9).abs() < 1e-12, "{share:?}");
        assert!(share.low < 0.9 && share.high > 0.9);
        assert_eq!(prediction.overall[0].exit_positions, 4);
        // The same calls unweighted would say 50%.
        assert!((prediction.cheap_share - 0.9).abs() < 1e-12);
    }

    #[test]
    fn weighted_rates_reduce_to_wilson_for_one_stratum() {
        let rate = Rate::weighted(&[(0.25, 200, 30)]).unwrap();
        let (low, high) = wilson_interval(30, 200, Z95);
        assert!((rate.rate - 0.15).abs() < 1e-12);
        assert!((rate.low - low).abs() < 1e-12 && (rate.high - high).abs() < 1e-12);
        assert_eq!(Rate::weighted(&[(0.0, 10, 1), (1.0, 0, 0)]), None);
    }

    #[test]
    fn a_danger_class_over_the_limit_is_the_worst_cell_once_it_has_enough_exits() {
        let mut counts = [Counts::default(); MATERIAL_BUCKETS];
        let lazy = Tier::Lazy as usize;
        // Bucket 2: 10,000 lazy exits, 50 exceeded (0.5%), all of them in class 2's 1,000.
        counts[2].calls = 20_000;
        counts[2].exits[lazy] = 10_000;
        counts[2].exceeded[lazy] = 50;
        counts[2].class_exits[lazy] = [9_000, 0, 1_000];
        counts[2].class_exceeded[lazy] = [0, 0, 50];
        let cell = worst_cell(&counts).unwrap();
        assert_eq!(
            (cell.tier, cell.bucket, cell.class),
            (Tier::Lazy, 2, Some(2))
        );
        assert_eq!(cell.upper, wilson_interval(50, 1_000, Z95).1);
        assert!(cell.upper > 0.05);
        assert_eq!(
            cell.describe(),
            "lazy exits of material bucket 2 (danger class 2)"
        );

        // One exit fewer than the floor: the class is held only within its bucket's row.
        counts[2].class_exits[lazy] = [9_001, 0, MIN_CLASS_CELL_EXITS - 1];
        let cell = worst_cell(&counts).unwrap();
        assert_eq!((cell.bucket, cell.class), (2, None));
        assert_eq!(cell.upper, wilson_interval(50, 10_000, Z95).1);
    }

    #[test]
    fn the_replay_tallies_exits_by_the_class_they_bet_on() {
        let pairs = PairTables::new(&flat(100, 100));
        let mut high = call(0, (200, 0, 60), false); // a fail high: bets on the mover's king
        high.my_class = 2;
        high.opp_class = 1;
        let mut low = call(1, (-200, 0, -60), false); // a fail low: bets on the opponent's
        low.my_class = 2;
        low.opp_class = 1;
        let counts = count([(0, &high), (0, &low)], &pairs);
        let super_lazy = Tier::SuperLazy as usize;
        assert_eq!(counts[0].class_exits[super_lazy], [0, 1, 1]);
        assert_eq!(counts[0].class_exceeded[super_lazy], [0, 0, 0]);
    }
}
