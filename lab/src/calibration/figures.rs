//! The figures of a calibration's HTML page, computed from the calibration file: each residual
//! histogram's central range and clipped tails, where the percentiles the tables in force were
//! chosen at fall in it, each tier's exceeded rate with its Wilson interval, and the exit
//! shares. `report::html` draws them and computes nothing.

use squall::calibrate::stats::{wilson_interval, Z95};
use squall::calibrate::Histogram;
use squall::tier::{Tier, SIDE_BUCKETS};

use super::data::{CalibrationFile, Tally};

/// The histogram sets the margin tables are generated from, in the page's row order.
pub(crate) const RESIDUAL_SETS: [&str; 3] = ["super_lazy_residual", "lazy_residual", "king"];

/// The share of each histogram's samples a panel draws (the central range between the
/// (100 - SHOWN_PERCENT) / 2 and (100 + SHOWN_PERCENT) / 2 percentiles): the extreme tails would
/// stretch a panel so far that its bulk becomes one bar. The tails are counted, not drawn.
pub(crate) const SHOWN_PERCENT: f64 = 99.9;

/// One panel of the residual grid: one set's histogram of one bucket.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ResidualPanel {
    pub(crate) set: &'static str,
    /// The defending king's danger class of a king histogram (0 for the residual sets).
    pub(crate) class: usize,
    pub(crate) bucket: usize,
    pub(crate) samples: u64,
    /// The drawn values, inclusive: the central [`SHOWN_PERCENT`] of the samples, widened to
    /// take in the margin and percentile lines so that every line is drawn.
    pub(crate) range: (i32, i32),
    /// The count of every 1-cp bin of `range`, in order.
    pub(crate) counts: Vec<u64>,
    /// Samples below and above `range`, the histogram's underflow and overflow included.
    pub(crate) clipped: (u64, u64),
    /// The percentile pair the table in force was chosen at for this bucket, and the values
    /// at those percentiles in this calibration (`None` for an empty histogram).
    pub(crate) chosen: Option<([f64; 2], Option<[i32; 2]>)>,
    /// The table's LO and HI entries in force for this bucket.
    pub(crate) in_force: Option<[i32; 2]>,
}

/// The panels of every residual set the file has, set by set, bucket by bucket.
pub(crate) fn residual_panels(file: &CalibrationFile) -> Vec<ResidualPanel> {
    let margins = file.lab.as_ref().and_then(|lab| lab.margins.as_ref());
    let mut panels = Vec::new();
    for set in RESIDUAL_SETS {
        let Some(hists) = file.histogram_set(set) else {
            continue;
        };
        // The king set holds SIDE_BUCKETS histograms per danger class, class by class.
        for (index, h) in hists.iter().enumerate() {
            let (class, bucket) = (index / SIDE_BUCKETS, index % SIDE_BUCKETS);
            let table = margins.and_then(|m| m.table(set, class));
            let in_force = table.map(|t| [t.lo[bucket], t.hi[bucket]]);
            let chosen = table.and_then(|t| t.percentiles).map(|pairs| {
                let [lo, hi] = pairs[bucket];
                let values = h.percentile(lo).zip(h.percentile(hi)).map(|(a, b)| [a, b]);
                ([lo, hi], values)
            });
            let mut lines: Vec<i32> = in_force.into_iter().flatten().collect();
            lines.extend(chosen.and_then(|(_, v)| v).into_iter().flatten());
            let mut panel = panel(set, bucket, h, &lines, in_force, chosen);
            panel.class = class;
            panels.push(panel);
        }
    }
    panels
}

fn panel(
    set: &'static str,
    bucket: usize,
    h: &Histogram,
    lines: &[i32],
    in_force: Option<[i32; 2]>,
    chosen: Option<([f64; 2], Option<[i32; 2]>)>,
) -> ResidualPanel {
    let last = h.lo + h.bins.len() as i32 - 1;
    let tail = (100.0 - SHOWN_PERCENT) / 2.0;
    // Nearest-rank percentiles land on the underflow (lo - 1) or overflow (hi): clamp them to
    // the recorded bins.
    let central = h
        .percentile(tail)
        .zip(h.percentile(100.0 - tail))
        .map(|(a, b)| (a.clamp(h.lo, last), b.clamp(h.lo, last)));
    let (mut from, mut to) = central.unwrap_or((0, 0));
    for &line in lines {
        from = from.min(line);
        to = to.max(line);
    }
    let count = |value: i32| -> u64 {
        usize::try_from(i64::from(value) - i64::from(h.lo))
            .ok()
            .and_then(|i| h.bins.get(i).copied())
            .unwrap_or(0)
    };
    let counts: Vec<u64> = (from..=to).map(count).collect();
    let inside: u64 = counts.iter().sum();
    let below: u64 = h.underflow + (h.lo..from.min(last + 1)).map(count).sum::<u64>();
    ResidualPanel {
        set,
        class: 0,
        bucket,
        samples: h.count(),
        range: (from, to),
        clipped: (below, h.count() - inside - below),
        counts,
        chosen,
        in_force,
    }
}

/// A tier's exceeded rate in one material bucket, with its Wilson 95% interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct SafetyRate {
    pub(crate) bucket: usize,
    pub(crate) exceeded: u64,
    pub(crate) exits: u64,
    /// `exceeded / exits` and the interval's bounds, as fractions; `None` without exits.
    pub(crate) rate: Option<(f64, f64, f64)>,
}

/// Each cheap tier's rates by material bucket, `(tier name, rates)`; `None` without a margin
/// safety run.
pub(crate) fn safety_rates(file: &CalibrationFile) -> Option<[(&'static str, Vec<SafetyRate>); 2]> {
    let safety = file.margin_safety.as_ref()?;
    let rates = |tallies: &[Tally]| -> Vec<SafetyRate> {
        tallies
            .iter()
            .enumerate()
            .map(|(bucket, t)| SafetyRate {
                bucket,
                exceeded: t.exceeded,
                exits: t.exits,
                rate: (t.exits > 0).then(|| {
                    let (low, high) = wilson_interval(t.exceeded, t.exits, Z95);
                    (t.exceeded as f64 / t.exits as f64, low, high)
                }),
            })
            .collect()
    };
    Some([
        (
            Tier::SuperLazy.name(),
            rates(&safety.super_lazy.by_material_bucket),
        ),
        (Tier::Lazy.name(), rates(&safety.lazy.by_material_bucket)),
    ])
}

/// The tallies of `tallies` added up: the "all" row of the margin-safety tables. Positions are
/// the most of any one tally (the same position counts in many), as is the largest share.
pub(crate) fn sum_tallies(tallies: &[Tally]) -> Tally {
    let mut all = Tally::default();
    for t in tallies {
        all.exits = all.exits.saturating_add(t.exits);
        all.exceeded = all.exceeded.saturating_add(t.exceeded);
        all.positions = all.positions.max(t.positions);
        all.max_from_one_position = all.max_from_one_position.max(t.max_from_one_position);
    }
    all
}

/// The cell of a margin-safety run whose exceeded rate has the largest Wilson 95% upper bound.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct WorstBound {
    pub(crate) tier: &'static str,
    pub(crate) bucket: usize,
    /// The danger class of the cell; `None` for a cell of the material-bucket table.
    pub(crate) class: Option<usize>,
    pub(crate) exceeded: u64,
    pub(crate) exits: u64,
    /// The upper bound, as a fraction.
    pub(crate) upper: f64,
}

/// The largest upper bound over every cell `lab calibrate` states a rate for in its margin
/// safety tables: tier × material bucket ([`safety_rates`]) and, where the file records them,
/// tier × bucket × danger class. Cells without exits state no rate and are skipped; `None`
/// without a margin-safety run or without any exit.
pub(crate) fn worst_exceeded_bound(file: &CalibrationFile) -> Option<WorstBound> {
    let mut worst: Option<WorstBound> = None;
    let mut consider = |cell: WorstBound| {
        if worst.is_none_or(|w| cell.upper > w.upper) {
            worst = Some(cell);
        }
    };
    for (tier, rates) in safety_rates(file)? {
        for rate in rates {
            if let Some((_, _, upper)) = rate.rate {
                consider(WorstBound {
                    tier,
                    bucket: rate.bucket,
                    class: None,
                    exceeded: rate.exceeded,
                    exits: rate.exits,
                    upper,
                });
            }
        }
    }
    let safety = file.margin_safety.as_ref()?;
    for (tier, by_class) in [
        (Tier::SuperLazy.name(), &safety.super_lazy.by_danger_class),
        (Tier::Lazy.name(), &safety.lazy.by_danger_class),
    ] {
        for (bucket, row) in by_class.iter().flatten().enumerate() {
            for (class, t) in row.iter().enumerate().filter(|(_, t)| t.exits > 0) {
                let (_, upper) = wilson_interval(t.exceeded, t.exits, Z95);
                consider(WorstBound {
                    tier,
                    bucket,
                    class: Some(class),
                    exceeded: t.exceeded,
                    exits: t.exits,
                    upper,
                });
            }
        }
    }
    worst
}

/// Both cheap tiers' exits the full evaluation contradicts, added up (the "all" rows of the two
/// margin-safety tables together), with the rate's Wilson 95% interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct OverallExceeded {
    pub(crate) exceeded: u64,
    pub(crate) exits: u64,
    /// `exceeded / exits` and the interval's bounds, as fractions.
    pub(crate) rate: (f64, f64, f64),
}

/// [`OverallExceeded`]; `None` without a margin-safety run or without any cheap exit.
pub(crate) fn overall_exceeded(file: &CalibrationFile) -> Option<OverallExceeded> {
    let safety = file.margin_safety.as_ref()?;
    let all = sum_tallies(&[
        sum_tallies(&safety.super_lazy.by_material_bucket),
        sum_tallies(&safety.lazy.by_material_bucket),
    ]);
    (all.exits > 0).then(|| {
        let (low, high) = wilson_interval(all.exceeded, all.exits, Z95);
        OverallExceeded {
            exceeded: all.exceeded,
            exits: all.exits,
            rate: (all.exceeded as f64 / all.exits as f64, low, high),
        }
    })
}

/// The share of all eval calls that exits in each tier (super-lazy, lazy, full); `None` for a
/// run without calls.
pub(crate) fn overall_exit_shares(file: &CalibrationFile) -> Option<[f64; 3]> {
    let calls: u64 = file.exit_rate.exits.iter().sum();
    (calls > 0).then(|| {
        file.exit_rate
            .exits
            .map(|exits| exits as f64 / calls as f64)
    })
}

/// The share of each material bucket's eval calls that exits in each tier, `[tier][bucket]`;
/// `None` for a bucket never evaluated.
pub(crate) fn exit_shares(file: &CalibrationFile) -> [Vec<Option<f64>>; 3] {
    std::array::from_fn(|tier| {
        file.exit_rate
            .by_material_bucket
            .iter()
            .map(|exits| {
                let calls: u64 = exits.iter().sum();
                (calls > 0).then(|| exits[tier] as f64 / calls as f64)
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn histogram(values: &[(i32, u64)], lo: i32, hi: i32) -> Histogram {
        let mut h = Histogram::new(lo, hi);
        for &(value, n) in values {
            for _ in 0..n {
                h.record(value);
            }
        }
        h
    }

    #[test]
    fn a_panel_clips_the_far_tails_and_counts_them() {
        // 10,000 samples: 4 far out on each side are beyond the central 99.9%.
        let h = histogram(
            &[
                (-500, 4),
                (-3, 2000),
                (0, 5992),
                (7, 2000),
                (600, 3),
                (900, 1),
            ],
            -1000,
            1000,
        );
        let p = panel("lazy_residual", 2, &h, &[], None, None);
        assert_eq!(p.range, (-3, 7));
        assert_eq!(p.counts.len(), 11);
        assert_eq!((p.counts[0], p.counts[3], p.counts[10]), (2000, 5992, 2000));
        assert_eq!(p.clipped, (4, 4));
        assert_eq!(p.samples, 10_000);
    }

    #[test]
    fn a_panel_widens_to_its_lines_and_keeps_underflow_in_its_tail() {
        let h = histogram(&[(-50, 3), (0, 10_000), (2, 10)], -20, 20);
        let p = panel("king", 0, &h, &[-8, 12], Some([-8, 12]), None);
        assert_eq!(p.range, (-8, 12));
        assert_eq!(p.counts[8], 10_000);
        assert_eq!(p.counts[10], 10);
        assert_eq!(p.clipped, (3, 0), "the underflow is below the drawn range");
    }
}
