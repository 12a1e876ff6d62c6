//! `lab tune --search`: per-table, per-bucket percentile choices that maximise the
//! bench-weighted cheap-exit share while every cheap tier's exceeded rate, in every material
//! bucket where it exits, keeps its Wilson 95% upper bound at or below a limit.
//!
//! Greedy steepest ascent over a grid of symmetric pairs (`LOW_PERCENTILE_GRID`, pLO/p(100-LO)).
//! The coordinates are the (table, side bucket) choices of the king table of each danger class
//! (of those the run's king histograms hold: a class without its own histograms shares class
//! 0's), the lazy and the super-lazy tables: 40 with three danger classes. It starts with every coordinate at the widest pair its histogram allows (the
//! checks of `lab tables`); each step tries every narrower pair of every coordinate, replays
//! the samples, and takes the feasible move that raises the cheap-exit share most (ties: the
//! smaller move). It stops when no feasible move raises it. When the widest pairs already break
//! the limit (the exceeded rate is a share of the exits, so a bucket with few exits can keep a
//! fixed set of misses), steps are first chosen for how far they lower the worst bound, until
//! every bound is within the limit; if none can, it says where. A coordinate only touches the
//! pairs with that bucket on one side (a king coordinate, those whose king of its class is
//! attacked by that bucket), so a move replays only their samples. The ascent also
//! runs under smaller limits (`GREEDY_LIMIT_SHARES`), and the best result is kept.

use anyhow::{bail, Context, Result};
use rayon::prelude::*;
use serde::Serialize;
use squall::calibrate::Histogram;
use squall::tier::{Tier, DANGER_CLASSES, MATERIAL_BUCKETS, SIDE_BUCKETS};

use super::predict::{
    bucket_weights, cheap_share, count, worst_cell, Bounds, Counts, ExitTables, PairTables,
};
use super::samples::{Sample, Samples};
use crate::calibration::tables::{self, Choice, Pair};
use crate::calibration::CalibrationFile;

/// The low percentiles the search tries; each pairs with its mirror, 100 - LO.
pub(crate) const LOW_PERCENTILE_GRID: [f64; 14] = [
    0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0, 15.0, 20.0,
];

/// The limits the greedy ascent runs under, as shares of `--max-exceeded`: a steepest ascent can
/// spend the headroom early on a step that blocks better ones later, so it also runs with less
/// headroom and the best result within the real limit is kept.
pub const GREEDY_LIMIT_SHARES: [f64; 5] = [1.0, 0.95, 0.9, 0.85, 0.8];

/// Steps a report shows: the first, the last and evenly spaced steps between.
pub(crate) const SHOWN_STEPS: usize = 12;

/// A table the search chooses percentiles for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Table {
    /// The king table of one danger class.
    King(usize),
    Lazy,
    SuperLazy,
}

impl Table {
    /// Its name in the steps' changes: `king` when the run has one danger class, else
    /// `kingC`, as `lab tables --bucket` takes it.
    fn label(self, king_classes: usize) -> String {
        match self {
            Table::King(_) if king_classes == 1 => "king".to_string(),
            Table::King(class) => format!("king{class}"),
            Table::Lazy => Tier::Lazy.name().to_string(),
            Table::SuperLazy => Tier::SuperLazy.name().to_string(),
        }
    }
}

/// A grid pair a bucket's histogram allows, and the table entries it gives.
#[derive(Clone, Copy, Debug)]
struct GridPoint {
    low_percentile: f64,
    lo: i32,
    hi: i32,
}

/// The search's state after a step: cheap-exit share against the worst exceeded bound. Not a
/// point of `lab frontier`, which compares margin levels by their Elo.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SearchStep {
    pub(crate) step: usize,
    /// What the step changed (`lazy 3: p2/p98 -> p5/p95`); `None` at the start.
    pub change: Option<String>,
    pub cheap_share: f64,
    pub worst_exceeded_upper: f64,
}

/// What the search found.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SearchResult {
    /// The limit on every Wilson upper bound, as a fraction.
    pub(crate) max_exceeded: f64,
    /// The limit of the greedy run whose result was kept (at most `max_exceeded`), a fraction.
    pub greedy_limit: f64,
    pub(crate) low_percentile_grid: Vec<f64>,
    /// Steps taken after the start.
    #[serde(rename = "steps")]
    pub(crate) step_count: usize,
    /// The start, thinned steps, and the end.
    #[serde(rename = "frontier")]
    pub steps: Vec<SearchStep>,
    /// `[lo, hi]` percentiles per side bucket of each table; the king table's per danger
    /// class (`DANGER_CLASSES` rows).
    pub king: Vec<[[f64; 2]; SIDE_BUCKETS]>,
    pub lazy: [[f64; 2]; SIDE_BUCKETS],
    pub super_lazy: [[f64; 2]; SIDE_BUCKETS],
}

impl SearchResult {
    /// The choice in the form `lab tables` takes.
    pub(crate) fn choice(&self) -> Choice {
        let pairs = |rows: &[[f64; 2]; SIDE_BUCKETS]| rows.map(|[lo, hi]| Pair { lo, hi });
        Choice {
            king: std::array::from_fn(|class| pairs(self.king.get(class).unwrap_or(&self.king[0]))),
            lazy: pairs(&self.lazy),
            super_lazy: pairs(&self.super_lazy),
        }
    }
}

/// A feasible move of one coordinate to a narrower pair, and what it gives.
struct Move {
    gain: f64,
    /// Grid steps moved.
    size: usize,
    table: usize,
    bucket: usize,
    option: usize,
    /// The new counts of the pairs the move touches.
    recounted: Vec<(usize, [Counts; MATERIAL_BUCKETS])>,
    share: f64,
    worst: f64,
}

impl Move {
    /// The larger gain; on a tie, the smaller move.
    fn beats(&self, other: &Move) -> bool {
        self.gain > other.gain + f64::EPSILON
            || ((self.gain - other.gain).abs() <= f64::EPSILON && self.size < other.size)
    }
}

/// Groups of samples: one per (my class, opponent's class, my bucket, opponent's bucket).
const GROUPS: usize = DANGER_CLASSES * DANGER_CLASSES * SIDE_BUCKETS * SIDE_BUCKETS;

/// A group's pair: (my class, opponent's class, my bucket, opponent's bucket).
fn group_pair(group: usize) -> (usize, usize, usize, usize) {
    let buckets = group % (SIDE_BUCKETS * SIDE_BUCKETS);
    let classes = group / (SIDE_BUCKETS * SIDE_BUCKETS);
    (
        classes / DANGER_CLASSES,
        classes % DANGER_CLASSES,
        buckets / SIDE_BUCKETS,
        buckets % SIDE_BUCKETS,
    )
}

/// Samples grouped by their pair, each with its material bucket.
struct Grouped {
    by_pair: Vec<Vec<(usize, Sample)>>,
}

impl Grouped {
    fn new(samples: &Samples) -> Grouped {
        let mut by_pair = vec![Vec::new(); GROUPS];
        for (bucket, list) in samples.by_material_bucket.iter().enumerate() {
            for s in list {
                let classes = s.my_class * DANGER_CLASSES + s.opp_class;
                let buckets = s.my_bucket * SIDE_BUCKETS + s.opp_bucket;
                by_pair[classes * SIDE_BUCKETS * SIDE_BUCKETS + buckets].push((bucket, *s));
            }
        }
        Grouped { by_pair }
    }

    fn count(&self, pair: usize, pairs: &PairTables) -> [Counts; MATERIAL_BUCKETS] {
        count(self.by_pair[pair].iter().map(|(b, s)| (*b, s)), pairs)
    }
}

/// Whether the entries of `table` for `bucket` enter the margins of `group`: a residual
/// table's when either side has the bucket; a king table's when a king of its class (a class
/// beyond the run's `king_classes` reads class 0's table) is attacked by that bucket.
fn touches(table: Table, bucket: usize, group: usize, king_classes: usize) -> bool {
    let (my_class, opp_class, my, opp) = group_pair(group);
    let table_of = |class: usize| if class < king_classes { class } else { 0 };
    match table {
        Table::King(class) => {
            (table_of(my_class) == class && opp == bucket)
                || (table_of(opp_class) == class && my == bucket)
        }
        Table::Lazy | Table::SuperLazy => my == bucket || opp == bucket,
    }
}

fn total(pair_counts: &[[Counts; MATERIAL_BUCKETS]]) -> [Counts; MATERIAL_BUCKETS] {
    let mut total = [Counts::default(); MATERIAL_BUCKETS];
    for counts in pair_counts {
        for (t, c) in total.iter_mut().zip(counts) {
            t.add(c);
        }
    }
    total
}

fn label(low: f64) -> String {
    format!("p{low}/p{}", 100.0 - low)
}

/// Runs the search on `samples` with the residual histograms of `file`; `max_exceeded` is a
/// fraction. The greedy ascent runs once per `GREEDY_LIMIT_SHARES` (in parallel) and the run
/// with the most cheap exits is kept (on a tie, the one with the larger limit).
pub fn search(
    file: &CalibrationFile,
    samples: &Samples,
    max_exceeded: f64,
) -> Result<SearchResult> {
    let (tables, options) = grid_options(file)?;
    let weights = bucket_weights(&samples.seen);
    let grouped = Grouped::new(samples);
    let runs: Vec<Result<SearchResult>> = GREEDY_LIMIT_SHARES
        .par_iter()
        .map(|share| {
            let mut result = greedy(&tables, &options, &weights, &grouped, share * max_exceeded)?;
            result.max_exceeded = max_exceeded;
            Ok(result)
        })
        .collect();
    let final_share = |r: &SearchResult| r.steps.last().map_or(0.0, |p| p.cheap_share);
    // The first run is under the whole limit: when it cannot get within it, no smaller limit
    // can, and its error names the real limit. A smaller limit that fails is passed over.
    let mut runs = runs.into_iter();
    let mut best = runs.next().expect("GREEDY_LIMIT_SHARES is not empty")?;
    for result in runs.flatten() {
        if final_share(&result) > final_share(&best) + f64::EPSILON {
            best = result;
        }
    }
    Ok(best)
}

/// One greedy ascent under `max_exceeded` (a fraction), over the coordinates of `tables`
/// (the king tables of the run's danger classes first, then the lazy and super-lazy tables).
fn greedy(
    tables: &[Table],
    options: &[Vec<Vec<GridPoint>>],
    weights: &[f64; MATERIAL_BUCKETS],
    grouped: &Grouped,
    max_exceeded: f64,
) -> Result<SearchResult> {
    let king_classes = tables
        .iter()
        .filter(|t| matches!(t, Table::King(_)))
        .count();
    let index_of = |wanted: Table| {
        tables
            .iter()
            .position(|&t| t == wanted)
            .expect("every table is a coordinate")
    };
    let king_index =
        |class: usize| index_of(Table::King(if class < king_classes { class } else { 0 }));
    let (lazy_index, super_lazy_index) = (index_of(Table::Lazy), index_of(Table::SuperLazy));
    // state[table][bucket]: index into options[table][bucket], widest first.
    let mut state = vec![[0usize; SIDE_BUCKETS]; tables.len()];
    let tables_of = |state: &[[usize; SIDE_BUCKETS]]| {
        let bounds = |t: usize| Bounds {
            lo: std::array::from_fn(|b| options[t][b][state[t][b]].lo),
            hi: std::array::from_fn(|b| options[t][b][state[t][b]].hi),
        };
        ExitTables {
            king: std::array::from_fn(|class| bounds(king_index(class))),
            lazy: bounds(lazy_index),
            super_lazy: bounds(super_lazy_index),
        }
    };
    let pairs = PairTables::new(&tables_of(&state));
    let mut pair_counts: Vec<_> = (0..GROUPS)
        .map(|pair| grouped.count(pair, &pairs))
        .collect();
    let counts = total(&pair_counts);
    let mut current = cheap_share(&counts, weights);
    let mut current_worst = worst_cell(&counts).map_or(0.0, |cell| cell.upper);
    let mut steps = vec![SearchStep {
        step: 0,
        change: None,
        cheap_share: current,
        worst_exceeded_upper: current_worst,
    }];
    // The exceeded rate is a share of the exits, so the widest margins are not always the
    // safest: a bucket with few exits can hold a fixed set of misses that narrower margins
    // dilute with sound exits. Until every bound is within the limit, a step is chosen for
    // how far it lowers the worst bound (repair); after that, for the cheap exits it adds.
    loop {
        let repairing = current_worst > max_exceeded;
        let mut best: Option<Move> = None;
        for (t, &table) in tables.iter().enumerate() {
            for b in 0..SIDE_BUCKETS {
                let touched: Vec<usize> = (0..GROUPS)
                    .filter(|&group| touches(table, b, group, king_classes))
                    .collect();
                for option in state[t][b] + 1..options[t][b].len() {
                    let mut moved = state.clone();
                    moved[t][b] = option;
                    let pairs = PairTables::new(&tables_of(&moved));
                    let recounted: Vec<_> = touched
                        .iter()
                        .map(|&p| (p, grouped.count(p, &pairs)))
                        .collect();
                    let mut candidate = pair_counts.clone();
                    for (p, c) in &recounted {
                        candidate[*p] = *c;
                    }
                    let counts = total(&candidate);
                    let worst = worst_cell(&counts).map_or(0.0, |cell| cell.upper);
                    if (repairing && worst >= current_worst) || (!repairing && worst > max_exceeded)
                    {
                        continue;
                    }
                    let share = cheap_share(&counts, weights);
                    let trial = Move {
                        gain: if repairing {
                            current_worst - worst
                        } else {
                            share - current
                        },
                        size: option - state[t][b],
                        table: t,
                        bucket: b,
                        option,
                        recounted,
                        share,
                        worst,
                    };
                    if trial.gain > f64::EPSILON && best.as_ref().is_none_or(|m| trial.beats(m)) {
                        best = Some(trial);
                    }
                }
            }
        }
        let Some(taken) = best else {
            break;
        };
        let (t, b) = (taken.table, taken.bucket);
        let change = format!(
            "{} {b}: {} -> {}",
            tables[t].label(king_classes),
            label(options[t][b][state[t][b]].low_percentile),
            label(options[t][b][taken.option].low_percentile)
        );
        state[t][b] = taken.option;
        for (p, c) in taken.recounted {
            pair_counts[p] = c;
        }
        current = taken.share;
        current_worst = taken.worst;
        steps.push(SearchStep {
            step: steps.len(),
            change: Some(change),
            cheap_share: current,
            worst_exceeded_upper: taken.worst,
        });
    }
    if current_worst > max_exceeded {
        let counts = total(&pair_counts);
        let cell = worst_cell(&counts).expect("a bound above the limit");
        bail!(
            "no margins of the grid bring the {} under the limit: the best reached is an \
             exceeded upper bound of {:.2}% (limit {:.2}%); more samples \
             (--samples-per-bucket) narrow the bounds, or the tier needs the terms it misses there",
            cell.describe(),
            100.0 * cell.upper,
            100.0 * max_exceeded
        );
    }
    let step_count = steps.len() - 1;
    let chosen = |t: usize| {
        std::array::from_fn(|b| {
            let low = options[t][b][state[t][b]].low_percentile;
            [low, 100.0 - low]
        })
    };
    Ok(SearchResult {
        max_exceeded,
        greedy_limit: max_exceeded,
        low_percentile_grid: LOW_PERCENTILE_GRID.to_vec(),
        step_count,
        steps: thin(steps),
        king: (0..DANGER_CLASSES)
            .map(|class| chosen(king_index(class)))
            .collect(),
        lazy: chosen(lazy_index),
        super_lazy: chosen(super_lazy_index),
    })
}

/// The tables the search chooses for (the king table of each danger class the run's king
/// histograms hold, then the residual tables), and the grid pairs each (table, bucket)
/// histogram allows, widest first, with their entries.
#[allow(
    clippy::type_complexity,
    reason = "a table's options per bucket, read once"
)]
fn grid_options(file: &CalibrationFile) -> Result<(Vec<Table>, Vec<Vec<Vec<GridPoint>>>)> {
    let missing =
        |set: &str| format!("the samples file has no `{set}` histograms: {NEEDS_HISTOGRAMS}");
    let king = tables::king_histograms(file).with_context(|| missing("king"))?;
    let mut tables: Vec<(Table, String, &str, Vec<Histogram>)> = king
        .into_iter()
        .enumerate()
        .map(|(class, hists)| {
            let set = if class == 0 {
                "king".to_string()
            } else {
                format!("king[{class}]")
            };
            (Table::King(class), set, "KING", hists)
        })
        .collect();
    for (table, set, name) in [
        (Table::Lazy, "lazy_residual", "LAZY_RESID"),
        (Table::SuperLazy, "super_lazy_residual", "SUPER_LAZY_RESID"),
    ] {
        let hists = file.histogram_set(set).with_context(|| missing(set))?;
        tables.push((table, set.to_string(), name, hists));
    }
    let options = tables
        .iter()
        .map(|(_, set, name, hists)| {
            if hists.len() != SIDE_BUCKETS {
                bail!(
                    "`{set}`: expected {SIDE_BUCKETS} buckets, found {}",
                    hists.len()
                );
            }
            hists
                .iter()
                .enumerate()
                .map(|(bucket, h)| {
                    let mut last_error = None;
                    let mut allowed = Vec::new();
                    for &low in &LOW_PERCENTILE_GRID {
                        let entries = tables::entry(&format!("{name}_LO"), set, bucket, h, low)
                            .and_then(|lo| {
                                Ok((
                                    lo,
                                    tables::entry(
                                        &format!("{name}_HI"),
                                        set,
                                        bucket,
                                        h,
                                        100.0 - low,
                                    )?,
                                ))
                            });
                        match entries {
                            Ok((lo, hi)) => allowed.push(GridPoint {
                                low_percentile: low,
                                lo,
                                hi,
                            }),
                            Err(e) => last_error = Some(e),
                        }
                    }
                    match (allowed.is_empty(), last_error) {
                        (true, Some(e)) => Err(e.context("no percentile of the search's grid")),
                        _ => Ok(allowed),
                    }
                })
                .collect()
        })
        .collect::<Result<_>>()?;
    Ok((
        tables.into_iter().map(|(table, ..)| table).collect(),
        options,
    ))
}

/// Said when a samples file lacks the histograms that percentiles are read from.
pub(crate) const NEEDS_HISTOGRAMS: &str =
    "percentiles are read from the residual histograms of the \
     same run; record both with `lab calibrate REV --modes residual,samples`";

/// At most [`SHOWN_STEPS`] of the path: the first, the last, evenly spaced between.
fn thin(points: Vec<SearchStep>) -> Vec<SearchStep> {
    let n = points.len();
    if n <= SHOWN_STEPS {
        return points;
    }
    let keep: Vec<usize> = (0..SHOWN_STEPS)
        .map(|i| i * (n - 1) / (SHOWN_STEPS - 1))
        .collect();
    points
        .into_iter()
        .enumerate()
        .filter(|(i, _)| keep.contains(i))
        .map(|(_, p)| p)
        .collect()
}

/// The arguments after `lab tables FILE` that give `choice`: the most common residual pair as
/// `--lo/--hi`, the most common king pair as `--king-lo/--king-hi`, and a `--bucket` for every
/// table and bucket that differs (`B=LO:HI` when both residual tables agree on it).
pub(crate) fn tables_args(choice: &Choice) -> Vec<String> {
    let most_common = |pairs: &[Pair]| -> Pair {
        let mut best = (pairs[0], 0);
        for p in pairs {
            let n = pairs.iter().filter(|q| *q == p).count();
            if n > best.1 {
                best = (*p, n);
            }
        }
        best.0
    };
    let residuals: Vec<Pair> = choice
        .lazy
        .iter()
        .chain(&choice.super_lazy)
        .copied()
        .collect();
    let base = most_common(&residuals);
    let kings: Vec<Pair> = choice.king.iter().flatten().copied().collect();
    let king = most_common(&kings);
    let mut args: Vec<String> = [
        ("--lo", base.lo),
        ("--hi", base.hi),
        ("--king-lo", king.lo),
        ("--king-hi", king.hi),
    ]
    .iter()
    .flat_map(|(flag, p)| [flag.to_string(), p.to_string()])
    .collect();
    let mut bucket = |table: &str, b: usize, p: &Pair| {
        args.push("--bucket".to_string());
        args.push(format!("{table}{b}={}:{}", p.lo, p.hi));
    };
    for b in 0..SIDE_BUCKETS {
        let by_class: [Pair; DANGER_CLASSES] = std::array::from_fn(|c| choice.king[c][b]);
        if by_class.iter().all(|p| *p == by_class[0]) {
            if by_class[0] != king {
                bucket("king:", b, &by_class[0]);
            }
            continue;
        }
        for (class, pair) in by_class.iter().enumerate() {
            if *pair != king {
                bucket(&format!("king{class}:"), b, pair);
            }
        }
    }
    for b in 0..SIDE_BUCKETS {
        let (lazy, super_lazy) = (&choice.lazy[b], &choice.super_lazy[b]);
        if lazy == super_lazy {
            if *lazy != base {
                bucket("", b, lazy);
            }
            continue;
        }
        if *lazy != base {
            bucket("lazy:", b, lazy);
        }
        if *super_lazy != base {
            bucket("super-lazy:", b, super_lazy);
        }
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibration::tables::Target;

    #[test]
    fn the_command_line_gives_back_the_choice() {
        let pair = |low: f64| Pair {
            lo: low,
            hi: 100.0 - low,
        };
        let mut choice = Choice::uniform(pair(2.0), pair(5.0));
        choice.set(Target::Lazy, 3, pair(8.0));
        choice.set(Target::Residual, 5, pair(0.5));
        choice.set(Target::SuperLazy, 7, pair(12.0));
        choice.set(Target::King(None), 0, pair(1.0));
        choice.set(Target::King(Some(1)), 6, pair(10.0));
        let args = tables_args(&choice);
        // Read back as `lab tables` reads its flags.
        let value = |flag: &str| -> f64 {
            let i = args.iter().position(|a| a == flag).unwrap();
            args[i + 1].parse().unwrap()
        };
        let mut read = Choice::uniform(
            Pair::new(value("--lo"), value("--hi"), false).unwrap(),
            Pair::new(value("--king-lo"), value("--king-hi"), false).unwrap(),
        );
        for window in args.windows(2).filter(|w| w[0] == "--bucket") {
            let (target, bucket, pair) = tables::parse_override(&window[1], false).unwrap();
            read.set(target, bucket, pair);
        }
        assert_eq!(format!("{read:?}"), format!("{choice:?}"));
        assert!(args.contains(&"5=0.5:99.5".to_string()), "{args:?}");
        assert!(args.contains(&"king1:6=10:90".to_string()), "{args:?}");
        assert!(args.contains(&"king:0=1:99".to_string()), "{args:?}");
        assert_eq!(
            args.iter().filter(|a| *a == "--bucket").count(),
            5,
            "{args:?}"
        );
    }

    #[test]
    fn a_king_coordinate_touches_the_pairs_whose_king_of_its_class_its_bucket_attacks() {
        let group = |mc: usize, oc: usize, my: usize, opp: usize| {
            ((mc * DANGER_CLASSES + oc) * SIDE_BUCKETS + my) * SIDE_BUCKETS + opp
        };
        assert_eq!(group_pair(group(1, 0, 3, 5)), (1, 0, 3, 5));
        // My king (class 1) attacked by the opponent's bucket 5; the opponent's (class 0) by 3.
        let g = group(1, 0, 3, 5);
        assert!(touches(Table::King(1), 5, g, 2));
        assert!(touches(Table::King(0), 3, g, 2));
        assert!(!touches(Table::King(1), 3, g, 2));
        assert!(!touches(Table::King(0), 5, g, 2));
        // One class in the run: class 1's kings read class 0's table.
        assert!(touches(Table::King(0), 5, g, 1));
        assert!(touches(Table::Lazy, 3, g, 2) && touches(Table::SuperLazy, 5, g, 2));
        assert!(!touches(Table::Lazy, 4, g, 2));
    }

    #[test]
    fn thinning_keeps_both_ends() {
        let points: Vec<_> = (0..40)
            .map(|step| SearchStep {
                step,
                change: None,
                cheap_share: 0.0,
                worst_exceeded_upper: 0.0,
            })
            .collect();
        let thinned = thin(points);
        assert_eq!(thinned.len(), SHOWN_STEPS);
        assert_eq!((thinned[0].step, thinned[SHOWN_STEPS - 1].step), (0, 39));
    }
}
