//! Steps in a history, as asv finds them: the series is taken as piecewise constant plus noise,
//! fitted by the segmentation that minimises the noise-weighted squared residuals plus a penalty
//! per segment (an exact dynamic programme over the points), and a boundary is kept only where
//! the levels on its two sides differ by more than their noise and by the metric's threshold;
//! a boundary that does not is merged away and the levels refitted. A point's noise is half the
//! spread of its runs (min to max), and never less than half the threshold, so a metric measured
//! without spread (instructions per node) moves only by the threshold.

/// One point of a series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Point {
    /// The figure drawn (the median of the runs).
    pub(crate) value: f64,
    /// The lowest and highest runs (both `value` when there is a single figure).
    pub(crate) low: f64,
    pub(crate) high: f64,
}

/// A change of level between two neighbouring segments.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct LevelChange {
    /// Index of the last point of the segment before.
    pub(crate) before: usize,
    /// Index of the first point of the segment after.
    pub(crate) after: usize,
    /// The segments' levels (noise-weighted means), in the points' unit.
    pub(crate) level_before: f64,
    pub(crate) level_after: f64,
}

impl LevelChange {
    /// The change of level in percent of the level before.
    pub(crate) fn percent(&self) -> f64 {
        (self.level_after / self.level_before - 1.0) * 100.0
    }
}

/// Most points segmented: the programme takes time quadratic in the points.
pub(crate) const MAX_POINTS: usize = 5_000;

/// The changes of level in `points` beyond their noise and beyond `threshold_pct` percent,
/// oldest first. Points that are not finite and positive are the caller's to leave out; any
/// that remain make the series too unlike a measurement to segment, and nothing is found.
pub(crate) fn detect(points: &[Point], threshold_pct: f64) -> Vec<LevelChange> {
    let usable = |p: &Point| {
        [p.value, p.low, p.high]
            .iter()
            .all(|v| v.is_finite() && *v > 0.0)
    };
    if points.len() < 2 || points.len() > MAX_POINTS || !points.iter().all(usable) {
        return Vec::new();
    }
    let floor = threshold_pct.max(0.0) / 100.0;
    let mut sorted: Vec<f64> = points.iter().map(|p| p.value).collect();
    sorted.sort_by(f64::total_cmp);
    let scale = sorted[sorted.len() / 2];
    // Relative values, so one penalty fits every metric and unit.
    let values: Vec<f64> = points.iter().map(|p| p.value / scale).collect();
    let noise: Vec<f64> = points
        .iter()
        .map(|p| {
            ((p.high - p.low).abs() / 2.0 / scale)
                .max(floor / 2.0)
                .max(1e-9)
        })
        .collect();
    let sums = Sums::new(&values, &noise);
    let mut starts = segment(&sums, values.len());
    // Merge the weakest boundary that is within the noise until every one stands out.
    loop {
        let weakest = (1..starts.len())
            .map(|k| {
                let (a, b) = (
                    (starts[k - 1], starts[k]),
                    (starts[k], *starts.get(k + 1).unwrap_or(&values.len())),
                );
                let gap = (sums.mean(b.0, b.1) - sums.mean(a.0, a.1)).abs();
                let needed = (segment_noise(&noise[a.0..a.1]) + segment_noise(&noise[b.0..b.1]))
                    .max(floor * sums.mean(a.0, a.1));
                (k, gap / needed)
            })
            .filter(|(_, strength)| *strength <= 1.0)
            .min_by(|x, y| x.1.total_cmp(&y.1));
        match weakest {
            Some((k, _)) => {
                starts.remove(k);
            }
            None => break,
        }
    }
    (1..starts.len())
        .map(|k| {
            let end = *starts.get(k + 1).unwrap_or(&values.len());
            LevelChange {
                before: starts[k] - 1,
                after: starts[k],
                level_before: sums.mean(starts[k - 1], starts[k]) * scale,
                level_after: sums.mean(starts[k], end) * scale,
            }
        })
        .collect()
}

/// The noise of a segment's level: the median noise of its points.
fn segment_noise(noise: &[f64]) -> f64 {
    let mut sorted = noise.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[sorted.len() / 2]
}

/// Prefix sums of the weights (1/σ²), weighted values and weighted squares: any segment's
/// weighted mean and residual in constant time.
struct Sums {
    w: Vec<f64>,
    wy: Vec<f64>,
    wyy: Vec<f64>,
}

impl Sums {
    fn new(values: &[f64], noise: &[f64]) -> Self {
        let mut sums = Self {
            w: vec![0.0],
            wy: vec![0.0],
            wyy: vec![0.0],
        };
        for (y, sigma) in values.iter().zip(noise) {
            let w = 1.0 / (sigma * sigma);
            sums.w.push(sums.w.last().unwrap_or(&0.0) + w);
            sums.wy.push(sums.wy.last().unwrap_or(&0.0) + w * y);
            sums.wyy.push(sums.wyy.last().unwrap_or(&0.0) + w * y * y);
        }
        sums
    }

    /// The weighted mean of points `start..end`.
    fn mean(&self, start: usize, end: usize) -> f64 {
        (self.wy[end] - self.wy[start]) / (self.w[end] - self.w[start])
    }

    /// Σ w (y − mean)² over `start..end`.
    fn residual(&self, start: usize, end: usize) -> f64 {
        let w = self.w[end] - self.w[start];
        let wy = self.wy[end] - self.wy[start];
        let wyy = self.wyy[end] - self.wyy[start];
        (wyy - wy * wy / w).max(0.0)
    }
}

/// The first index of every segment of the best fit (always starting with 0). The penalty per
/// segment is that of the Bayesian information criterion for a level and a boundary, with the
/// residuals measured in units of each point's noise.
fn segment(sums: &Sums, n: usize) -> Vec<usize> {
    let penalty = 2.0 * (n as f64).ln().max(1.0) + 2.0;
    // best[j]: the cost of the best fit of points 0..j; from[j]: where its last segment starts.
    let mut best = vec![0.0f64; n + 1];
    let mut from = vec![0usize; n + 1];
    for end in 1..=n {
        let (cost, start) = (0..end)
            .map(|start| (best[start] + sums.residual(start, end) + penalty, start))
            .min_by(|x, y| x.0.total_cmp(&y.0))
            .unwrap_or((0.0, 0));
        best[end] = cost;
        from[end] = start;
    }
    let mut starts = Vec::new();
    let mut end = n;
    while end > 0 {
        starts.push(from[end]);
        end = from[end];
    }
    starts.reverse();
    starts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(value: f64, spread_pct: f64) -> Point {
        let half = value * spread_pct / 200.0;
        Point {
            value,
            low: value - half,
            high: value + half,
        }
    }

    /// A level with a deterministic wobble inside ±`wobble_pct`/2 percent.
    fn level(value: f64, count: usize, wobble_pct: f64) -> Vec<Point> {
        (0..count)
            .map(|i| {
                let wobble = [0.0, 0.4, -0.3, 0.2, -0.5, 0.1][i % 6] * wobble_pct / 100.0;
                point(value * (1.0 + wobble), wobble_pct)
            })
            .collect()
    }

    #[test]
    fn a_drop_beyond_the_noise_is_one_step_at_its_commit() {
        let mut points = level(1.0e6, 6, 0.8);
        points.extend(level(0.87e6, 5, 0.8));
        let steps = detect(&points, 1.0);
        assert_eq!(steps.len(), 1, "{steps:?}");
        assert_eq!((steps[0].before, steps[0].after), (5, 6));
        assert!((steps[0].percent() + 13.0).abs() < 0.5, "{steps:?}");
    }

    #[test]
    fn noise_alone_is_no_step() {
        assert!(detect(&level(1.0e6, 30, 0.8), 1.0).is_empty());
        // Wide spreads hide a 2% move, which is within them.
        let mut points = level(1.0e6, 5, 6.0);
        points.extend(level(0.98e6, 5, 6.0));
        assert!(detect(&points, 1.0).is_empty());
    }

    #[test]
    fn a_move_within_the_threshold_is_no_step() {
        // Instructions per node: no spread, a 0.3% move under a 0.5% threshold.
        let mut points: Vec<Point> = (0..4).map(|_| point(500.0, 0.0)).collect();
        points.extend((0..4).map(|_| point(501.5, 0.0)));
        assert!(detect(&points, 0.5).is_empty());
        points.extend((0..4).map(|_| point(510.0, 0.0)));
        let steps = detect(&points, 0.5);
        assert_eq!(steps.len(), 1, "{steps:?}");
        assert_eq!(steps[0].after, 8);
    }

    #[test]
    fn two_steps_and_a_return_are_each_found() {
        let mut points = level(2.0e6, 4, 0.5);
        points.extend(level(2.2e6, 4, 0.5));
        points.extend(level(2.0e6, 4, 0.5));
        let steps = detect(&points, 1.0);
        let at: Vec<usize> = steps.iter().map(|s| s.after).collect();
        assert_eq!(at, [4, 8], "{steps:?}");
        assert!(steps[0].percent() > 9.0 && steps[1].percent() < -8.0);
    }

    #[test]
    fn a_single_point_moved_at_the_end_is_a_step() {
        let mut points = level(1.0e6, 5, 0.5);
        points.push(point(0.8e6, 0.5));
        let steps = detect(&points, 1.0);
        assert_eq!(steps.len(), 1, "{steps:?}");
        assert_eq!(steps[0].after, 5);
    }

    #[test]
    fn degenerate_series_find_nothing() {
        assert!(detect(&[], 1.0).is_empty());
        assert!(detect(&[point(1.0, 1.0)], 1.0).is_empty());
        let mut points = level(1.0e6, 4, 0.5);
        points.push(point(f64::NAN, 0.5));
        assert!(detect(&points, 1.0).is_empty());
        points.pop();
        points.push(point(0.0, 0.0));
        assert!(detect(&points, 1.0).is_empty());
    }
}
