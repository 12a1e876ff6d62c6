//! Paired ratios, medians and a Student-t interval over rounds. Everything is deterministic so a
//! report can be reproduced from its raw timings. No formatting happens here.

use serde::{Deserialize, Serialize};
use statrs::distribution::{Continuous, ContinuousCDF, StudentsT};

/// Fewer rounds than this still give an honest interval, but one so wide (t = 12.7 at two
/// rounds, 4.3 at three) that only a gross change can be significant.
pub(crate) const MIN_ROUNDS_FOR_CI: usize = 4;

/// A ratio estimated from rounds of paired measurements.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RatioInterval {
    /// The point estimate the interval is centred on and the verdict reads: the geometric mean
    /// of the per-round median ratios.
    pub estimate: f64,
    /// Student-t interval of `estimate` at `confidence` (on the log scale, rounds as the sample);
    /// NaN (JSON `null`) with fewer than two rounds.
    pub ci_low: f64,
    pub ci_high: f64,
    pub(crate) confidence: f64,
    /// The sample size of the interval: rounds with at least one pair.
    pub(crate) rounds: usize,
    /// Degrees of freedom of the t quantile (`rounds - 1`).
    pub(crate) df: usize,
    /// Paired values over all rounds: a description, not the sample size.
    pub(crate) pairs: usize,
    /// Median of all paired values, for reference.
    pub(crate) pair_median: f64,
}

/// What a comparison's figure (speed, instructions, or both) did beyond its threshold; the JSON
/// keeps the key `verdict` for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Change {
    Regression,
    Improvement,
    /// No change beyond the threshold: `no-change` in JSON.
    #[serde(rename = "no-change")]
    Insignificant,
}

/// Ratios `b / a` of corresponding entries of each round's pair of measurements, one list per
/// round. Pairs with a non-positive or non-finite side carry no information and are dropped.
pub(crate) fn paired_ratios(a_rounds: &[Vec<f64>], b_rounds: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let usable = |x: f64| x > 0.0 && x.is_finite();
    a_rounds
        .iter()
        .zip(b_rounds)
        .map(|(a, b)| {
            a.iter()
                .zip(b)
                .filter(|(a, b)| usable(**a) && usable(**b))
                .map(|(a, b)| b / a)
                .filter(|ratio| usable(*ratio))
                .collect()
        })
        .collect()
}

pub(crate) fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted.sort_unstable_by(f64::total_cmp);
    let middle = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[middle]
    } else {
        (sorted[middle - 1] + sorted[middle]) / 2.0
    }
}

/// Ratio estimate from rounds of paired ratios (all positive). Each round is summarised by its
/// median ratio; the rounds, not the pairs, are the independent sample, because every pair of a
/// round shares that round's machine state (a burst of load slows every position of a run).
/// The interval is a Student-t interval of the mean log round ratio with `rounds - 1` degrees
/// of freedom, exponentiated: honest with as few as a handful of rounds, where a bootstrap over
/// the same rounds is too narrow.
pub(crate) fn round_ratio_interval(rounds: &[Vec<f64>], confidence: f64) -> RatioInterval {
    let logs: Vec<f64> = rounds
        .iter()
        .filter(|round| !round.is_empty())
        .map(|round| median(round).ln())
        .collect();
    let all: Vec<f64> = rounds.iter().flatten().copied().collect();
    let n = logs.len();
    let mean = logs.iter().sum::<f64>() / n as f64;
    let (ci_low, ci_high) = if n >= 2 {
        let variance = logs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let t = student_t_quantile(0.5 + confidence / 2.0, (n - 1) as f64);
        let half = t * (variance / n as f64).sqrt();
        ((mean - half).exp(), (mean + half).exp())
    } else {
        (f64::NAN, f64::NAN)
    };
    RatioInterval {
        estimate: mean.exp(),
        ci_low,
        ci_high,
        confidence,
        rounds: n,
        df: n.saturating_sub(1),
        pairs: all.len(),
        pair_median: median(&all),
    }
}

/// `estimate` is a ratio new/old of a cost (time per node): above 1 is slower. A verdict needs
/// both a confidence interval excluding 1 and an estimate beyond the threshold.
pub(crate) fn classify(estimate: &RatioInterval, threshold_pct: f64) -> Change {
    let threshold = threshold_pct / 100.0;
    if estimate.ci_low > 1.0 && estimate.estimate > 1.0 + threshold {
        Change::Regression
    } else if estimate.ci_high < 1.0 && estimate.estimate < 1.0 - threshold {
        Change::Improvement
    } else {
        Change::Insignificant
    }
}

/// The `p` quantile of Student's t distribution with `df` degrees of freedom, for p in (0, 1):
/// statrs's inverse, polished by Newton steps on statrs's CDF (its inverse of the incomplete
/// beta function drifts by 1e-4 at a million degrees of freedom; the CDF does not).
pub(crate) fn student_t_quantile(p: f64, df: f64) -> f64 {
    assert!(
        p > 0.0 && p < 1.0 && df > 0.0,
        "t quantile of p={p}, df={df}"
    );
    let t = standard_t(df);
    let mut quantile = t.inverse_cdf(p);
    for _ in 0..4 {
        let step = (t.cdf(quantile) - p) / t.pdf(quantile);
        if !step.is_finite() {
            break;
        }
        quantile -= step;
    }
    quantile
}

/// P(T <= t) for Student's t with `df` degrees of freedom.
#[cfg(test)]
pub(crate) fn student_t_cdf(t: f64, df: f64) -> f64 {
    standard_t(df).cdf(t)
}

/// Student's t with location 0 and scale 1; `df` > 0 is checked by the callers.
fn standard_t(df: f64) -> StudentsT {
    StudentsT::new(0.0, 1.0, df)
        .unwrap_or_else(|error| panic!("t distribution of df={df}: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn estimate(value: f64, ci_low: f64, ci_high: f64) -> RatioInterval {
        RatioInterval {
            estimate: value,
            ci_low,
            ci_high,
            confidence: 0.95,
            rounds: 10,
            df: 9,
            pairs: 10,
            pair_median: value,
        }
    }

    /// SplitMix64, for reproducible simulated data.
    struct Rng(u64);

    impl Rng {
        fn unit(&mut self) -> f64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
        }

        /// Standard normal by Box-Muller.
        fn normal(&mut self) -> f64 {
            let u1 = self.unit().max(f64::MIN_POSITIVE);
            let u2 = self.unit();
            (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
        }
    }

    /// Rounds of per-position ratios around `true_ratio`: each round shares a random machine
    /// effect (sd `round_sd` on the log scale), each pair adds its own noise.
    fn simulated_rounds(
        rng: &mut Rng,
        true_ratio: f64,
        rounds: usize,
        round_sd: f64,
    ) -> Vec<Vec<f64>> {
        (0..rounds)
            .map(|_| {
                let round_effect = round_sd * rng.normal();
                (0..37)
                    .map(|_| true_ratio * (round_effect + 0.02 * rng.normal()).exp())
                    .collect()
            })
            .collect()
    }

    #[test]
    fn t_quantiles_match_the_tables() {
        // Two-sided 95% (p = 0.975) and other levels, from standard t tables.
        let table = [
            (0.975, 1.0, 12.706_204_736),
            (0.975, 2.0, 4.302_652_730),
            (0.975, 3.0, 3.182_446_305),
            (0.975, 4.0, 2.776_445_105),
            (0.975, 5.0, 2.570_581_836),
            (0.975, 9.0, 2.262_157_163),
            (0.975, 19.0, 2.093_024_054),
            (0.975, 29.0, 2.045_229_642),
            (0.975, 100.0, 1.983_971_519),
            (0.95, 1.0, 6.313_751_515),
            (0.95, 5.0, 2.015_048_373),
            (0.995, 3.0, 5.840_909_310),
            (0.995, 10.0, 3.169_272_673),
            (0.9, 7.0, 1.414_923_928),
        ];
        for (p, df, expected) in table {
            let got = student_t_quantile(p, df);
            assert!(
                (got - expected).abs() < 1e-6 * expected,
                "t({p}, {df}) = {got}, table {expected}"
            );
            let lower = student_t_quantile(1.0 - p, df);
            assert!(
                (lower + expected).abs() < 1e-6 * expected,
                "symmetry {lower}"
            );
        }
        // Large df approaches the normal quantile.
        assert!((student_t_quantile(0.975, 1e6) - 1.959_963_985).abs() < 1e-5);
    }

    #[test]
    fn t_cdf_is_a_distribution() {
        assert!((student_t_cdf(0.0, 3.0) - 0.5).abs() < 1e-12);
        // df = 1 is the Cauchy distribution: P(T <= 1) = 3/4.
        assert!((student_t_cdf(1.0, 1.0) - 0.75).abs() < 1e-12);
        assert!((student_t_cdf(-1.0, 1.0) - 0.25).abs() < 1e-12);
        let mut previous = 0.0;
        for i in -50..=50 {
            let p = student_t_cdf(f64::from(i) / 5.0, 4.0);
            assert!(p >= previous && p <= 1.0, "{i}: {p}");
            previous = p;
        }
    }

    #[test]
    fn paired_ratios_pair_rounds_and_positions() {
        let a = vec![vec![100.0, 200.0], vec![110.0, 0.0]];
        let b = vec![vec![150.0, 100.0], vec![110.0, 50.0]];
        assert_eq!(paired_ratios(&a, &b), vec![vec![1.5, 0.5], vec![1.0]]);
    }

    #[test]
    fn paired_ratios_drop_non_finite_values() {
        let a = vec![vec![f64::INFINITY, 1.0, f64::NAN, 1e-320]];
        let b = vec![vec![1.0, f64::INFINITY, 1.0, 1e300]];
        assert_eq!(paired_ratios(&a, &b), vec![Vec::<f64>::new()]);
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
    fn the_interval_counts_rounds_not_pairs() {
        let rounds = vec![vec![1.0, 1.1, 1.2], vec![1.0], vec![], vec![0.9, 1.0]];
        let ci = round_ratio_interval(&rounds, 0.95);
        assert_eq!((ci.rounds, ci.df, ci.pairs), (3, 2, 6));
        // Round medians 1.1, 1.0 and 0.95: the estimate is their geometric mean.
        let expected = (1.1f64 * 1.0 * 0.95).powf(1.0 / 3.0);
        assert!((ci.estimate - expected).abs() < 1e-12, "{ci:?}");
        assert!(ci.ci_low < ci.estimate && ci.estimate < ci.ci_high);
    }

    #[test]
    fn one_round_has_no_interval() {
        let ci = round_ratio_interval(&[vec![1.2, 1.3]], 0.95);
        assert!(ci.ci_low.is_nan() && ci.ci_high.is_nan(), "{ci:?}");
        assert_eq!(classify(&ci, 1.0), Change::Insignificant);
    }

    #[test]
    fn six_round_intervals_cover_the_true_ratio_95_percent_of_the_time() {
        // Six A/A rounds whose shared machine effect dominates the per-pair noise: an interval
        // that took the pairs as independent would be far too narrow here.
        let trials: u32 = 4000;
        let mut rng = Rng(42);
        let covered = (0..trials)
            .filter(|_| {
                let ci = round_ratio_interval(&simulated_rounds(&mut rng, 1.0, 6, 0.005), 0.95);
                ci.ci_low <= 1.0 && 1.0 <= ci.ci_high
            })
            .count();
        let coverage = covered as f64 / f64::from(trials);
        assert!((0.935..=0.965).contains(&coverage), "coverage {coverage}");
    }

    #[test]
    fn intervals_are_wider_with_fewer_rounds() {
        let mut rng = Rng(5);
        let width = |rounds: usize, rng: &mut Rng| {
            let widths: Vec<f64> = (0..200)
                .map(|_| {
                    let ci = round_ratio_interval(&simulated_rounds(rng, 1.0, rounds, 0.005), 0.95);
                    (ci.ci_high / ci.ci_low).ln()
                })
                .collect();
            median(&widths)
        };
        let two = width(2, &mut rng);
        let six = width(6, &mut rng);
        assert!(two > 3.0 * six, "two rounds {two}, six {six}");
    }

    #[test]
    fn one_disturbed_round_does_not_make_a_regression() {
        // Three quiet rounds of an A/A comparison and one where B's run hit a burst of load.
        let mut rng = Rng(9);
        let mut rounds = simulated_rounds(&mut rng, 1.0, 3, 0.0);
        rounds.push((0..32).map(|_| 1.5 * (0.01 * rng.normal()).exp()).collect());
        let ci = round_ratio_interval(&rounds, 0.95);
        assert_eq!(ci.rounds, 4);
        assert_eq!(classify(&ci, 1.0), Change::Insignificant, "{ci:?}");
    }

    #[test]
    fn consistent_rounds_of_a_three_percent_slowdown_are_a_regression() {
        let mut rng = Rng(10);
        let ci = round_ratio_interval(&simulated_rounds(&mut rng, 1.03, 6, 0.005), 0.95);
        assert_eq!(classify(&ci, 1.0), Change::Regression, "{ci:?}");
        let faster = round_ratio_interval(&simulated_rounds(&mut rng, 0.97, 6, 0.005), 0.95);
        assert_eq!(classify(&faster, 1.0), Change::Improvement, "{faster:?}");
    }

    #[test]
    fn classify_needs_significance_and_size() {
        assert_eq!(
            classify(&estimate(1.05, 1.02, 1.08), 1.0),
            Change::Regression
        );
        // Significant but within the threshold.
        assert_eq!(
            classify(&estimate(1.005, 1.001, 1.009), 1.0),
            Change::Insignificant
        );
        // Large but not significant.
        assert_eq!(
            classify(&estimate(1.05, 0.98, 1.12), 1.0),
            Change::Insignificant
        );
        assert_eq!(
            classify(&estimate(0.95, 0.92, 0.98), 1.0),
            Change::Improvement
        );
    }
}
