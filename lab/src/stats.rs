//! Paired ratios, medians and a seeded percentile bootstrap. Everything is deterministic so a
//! report can be reproduced from its raw timings.

use serde::{Deserialize, Serialize};

/// Resamples per confidence interval: enough for stable 2.5/97.5 percentiles.
pub const BOOTSTRAP_RESAMPLES: usize = 2000;
/// Fixed seed: the same timings always give the same interval.
pub const BOOTSTRAP_SEED: u64 = 0x5EED_1AB0_0000_0001;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub median: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    /// Values the median is taken over.
    pub samples: usize,
    /// Independent units the interval resampled (rounds, for paired timings).
    pub clusters: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Regression,
    Improvement,
    NoChange,
}

/// Ratios `b / a` of corresponding entries of each round's pair of measurements, one list per
/// round. Pairs with a non-positive side carry no information and are dropped.
pub fn paired_ratios(a_rounds: &[Vec<f64>], b_rounds: &[Vec<f64>]) -> Vec<Vec<f64>> {
    a_rounds
        .iter()
        .zip(b_rounds)
        .map(|(a, b)| {
            a.iter()
                .zip(b)
                .filter(|(a, b)| **a > 0.0 && **b > 0.0)
                .map(|(a, b)| b / a)
                .collect()
        })
        .collect()
}

pub fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    median_in_place(&mut sorted)
}

fn median_in_place(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_unstable_by(f64::total_cmp);
    let middle = values.len() / 2;
    if values.len() % 2 == 1 {
        values[middle]
    } else {
        (values[middle - 1] + values[middle]) / 2.0
    }
}

/// Median with a percentile-bootstrap confidence interval at `confidence` (e.g. 0.95), treating
/// every value as independent.
pub fn bootstrap_median(values: &[f64], resamples: usize, confidence: f64, seed: u64) -> Estimate {
    let singletons: Vec<Vec<f64>> = values.iter().map(|v| vec![*v]).collect();
    bootstrap_clustered_median(&singletons, resamples, confidence, seed)
}

/// Median of all values with a cluster-bootstrap interval: whole clusters are resampled.
/// The ratios of one round share that round's machine state (a burst of load slows every
/// position of a run), so rounds, not single ratios, are the independent units; resampling
/// them keeps one disturbed round from looking like many independent slow pairs.
pub fn bootstrap_clustered_median(
    clusters: &[Vec<f64>],
    resamples: usize,
    confidence: f64,
    seed: u64,
) -> Estimate {
    let clusters: Vec<&Vec<f64>> = clusters.iter().filter(|c| !c.is_empty()).collect();
    let all: Vec<f64> = clusters.iter().flat_map(|c| c.iter().copied()).collect();
    let mut rng = SplitMix64::new(seed);
    let mut pooled = Vec::with_capacity(all.len() * 2);
    let mut medians: Vec<f64> = (0..resamples)
        .map(|_| {
            pooled.clear();
            for _ in 0..clusters.len() {
                pooled.extend_from_slice(clusters[rng.below(clusters.len())]);
            }
            median_in_place(&mut pooled)
        })
        .collect();
    medians.sort_unstable_by(f64::total_cmp);
    let tail = (1.0 - confidence) / 2.0;
    Estimate {
        median: median(&all),
        ci_low: percentile(&medians, tail),
        ci_high: percentile(&medians, 1.0 - tail),
        samples: all.len(),
        clusters: clusters.len(),
    }
}

fn percentile(sorted: &[f64], fraction: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let index = (fraction * (sorted.len() - 1) as f64).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

/// `estimate` is a ratio new/old of a cost (time per node): above 1 is slower. A verdict needs
/// both a confidence interval excluding 1 and a median beyond the threshold.
pub fn classify(estimate: &Estimate, threshold_pct: f64) -> Verdict {
    let threshold = threshold_pct / 100.0;
    if estimate.ci_low > 1.0 && estimate.median > 1.0 + threshold {
        Verdict::Regression
    } else if estimate.ci_high < 1.0 && estimate.median < 1.0 - threshold {
        Verdict::Improvement
    } else {
        Verdict::NoChange
    }
}

/// SplitMix64: tiny, fast and good enough for resampling indices.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..bound` (multiply-shift; the bias is negligible for sample-sized bounds).
    pub fn below(&mut self, bound: usize) -> usize {
        ((u128::from(self.next_u64()) * bound as u128) >> 64) as usize
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn estimate(median: f64, ci_low: f64, ci_high: f64) -> Estimate {
        Estimate {
            median,
            ci_low,
            ci_high,
            samples: 10,
            clusters: 10,
        }
    }

    /// Standard normal by Box-Muller.
    fn normal(rng: &mut SplitMix64) -> f64 {
        let u1 = rng.unit().max(f64::MIN_POSITIVE);
        let u2 = rng.unit();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    #[test]
    fn paired_ratios_pair_rounds_and_positions() {
        let a = vec![vec![100.0, 200.0], vec![110.0, 0.0]];
        let b = vec![vec![150.0, 100.0], vec![110.0, 50.0]];
        assert_eq!(paired_ratios(&a, &b), vec![vec![1.5, 0.5], vec![1.0]]);
    }

    #[test]
    fn paired_ratios_ignore_unpaired_rounds() {
        let a = vec![vec![1.0], vec![2.0]];
        let b = vec![vec![3.0]];
        assert_eq!(paired_ratios(&a, &b), vec![vec![3.0]]);
    }

    #[test]
    fn median_of_odd_and_even_lengths() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn bootstrap_is_reproducible_and_brackets_the_median() {
        let values: Vec<f64> = (0..50).map(|i| 1.0 + f64::from(i % 7) / 100.0).collect();
        let first = bootstrap_median(&values, 500, 0.95, 7);
        assert_eq!(first, bootstrap_median(&values, 500, 0.95, 7));
        assert!(first.ci_low <= first.median && first.median <= first.ci_high);
    }

    #[test]
    fn bootstrap_ci_covers_the_true_median_about_95_percent_of_the_time() {
        // Log-normal ratios with true median 1.03: the kind of data a 3% slowdown produces.
        let true_median: f64 = 1.03;
        let trials: u32 = 400;
        let mut rng = SplitMix64::new(42);
        let covered = (0..trials)
            .filter(|trial| {
                let sample: Vec<f64> = (0..101)
                    .map(|_| true_median * (0.02 * normal(&mut rng)).exp())
                    .collect();
                let ci = bootstrap_median(&sample, 1000, 0.95, u64::from(*trial));
                ci.ci_low <= true_median && true_median <= ci.ci_high
            })
            .count();
        let coverage = covered as f64 / f64::from(trials);
        assert!((0.91..=0.99).contains(&coverage), "coverage {coverage}");
    }

    #[test]
    fn bootstrap_detects_a_three_percent_slowdown_in_noisy_pairs() {
        let mut rng = SplitMix64::new(3);
        let sample: Vec<f64> = (0..128)
            .map(|_| 1.03 * (0.03 * normal(&mut rng)).exp())
            .collect();
        let ci = bootstrap_median(&sample, BOOTSTRAP_RESAMPLES, 0.95, BOOTSTRAP_SEED);
        assert_eq!(classify(&ci, 1.0), Verdict::Regression);
    }

    #[test]
    fn one_disturbed_round_does_not_make_a_regression() {
        // Three quiet rounds of an A/A comparison and one where B's run hit a burst of load.
        let mut rng = SplitMix64::new(9);
        let mut rounds: Vec<Vec<f64>> = (0..3)
            .map(|_| (0..32).map(|_| (0.01 * normal(&mut rng)).exp()).collect())
            .collect();
        rounds.push(
            (0..32)
                .map(|_| 1.5 * (0.01 * normal(&mut rng)).exp())
                .collect(),
        );
        let clustered =
            bootstrap_clustered_median(&rounds, BOOTSTRAP_RESAMPLES, 0.95, BOOTSTRAP_SEED);
        assert_eq!(clustered.clusters, 4);
        assert_eq!(
            classify(&clustered, 1.0),
            Verdict::NoChange,
            "{clustered:?}"
        );
    }

    #[test]
    fn consistent_rounds_of_a_three_percent_slowdown_are_a_regression() {
        let mut rng = SplitMix64::new(10);
        let rounds: Vec<Vec<f64>> = (0..4)
            .map(|_| {
                (0..32)
                    .map(|_| 1.03 * (0.03 * normal(&mut rng)).exp())
                    .collect()
            })
            .collect();
        let clustered =
            bootstrap_clustered_median(&rounds, BOOTSTRAP_RESAMPLES, 0.95, BOOTSTRAP_SEED);
        assert_eq!(
            classify(&clustered, 1.0),
            Verdict::Regression,
            "{clustered:?}"
        );
    }

    #[test]
    fn classify_needs_significance_and_size() {
        assert_eq!(
            classify(&estimate(1.05, 1.02, 1.08), 1.0),
            Verdict::Regression
        );
        // Significant but within the threshold.
        assert_eq!(
            classify(&estimate(1.005, 1.001, 1.009), 1.0),
            Verdict::NoChange
        );
        // Large but not significant.
        assert_eq!(
            classify(&estimate(1.05, 0.98, 1.12), 1.0),
            Verdict::NoChange
        );
        assert_eq!(
            classify(&estimate(0.95, 0.92, 0.98), 1.0),
            Verdict::Improvement
        );
    }

    #[test]
    fn below_stays_in_range() {
        let mut rng = SplitMix64::new(1);
        assert!((0..10_000).all(|_| rng.below(7) < 7));
    }
}
