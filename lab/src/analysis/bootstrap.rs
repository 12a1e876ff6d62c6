//! The bootstrap distribution of the speed estimate, for plotting: the per-round ratios
//! resampled with replacement, each resample summarised as the estimate is (geometric mean).
//! A fixed-seed xorshift generator makes a report reproducible from its JSON. The verdict
//! never reads this: with a handful of rounds a bootstrap is too narrow (see `stats`), so it
//! shows the spread, the t interval judges.

/// Geometric means of `resamples` resamples (with replacement) of `values`, sorted ascending.
/// Empty when `values` is empty or holds a non-positive or non-finite value.
pub(crate) fn bootstrap_geometric_means(values: &[f64], resamples: usize, seed: u64) -> Vec<f64> {
    if values.is_empty() || values.iter().any(|v| !(v.is_finite() && *v > 0.0)) {
        return Vec::new();
    }
    let logs: Vec<f64> = values.iter().map(|v| v.ln()).collect();
    let mut rng = XorShift64::new(seed);
    let n = logs.len();
    let mut means: Vec<f64> = (0..resamples)
        .map(|_| {
            let sum: f64 = (0..n).map(|_| logs[rng.below(n)]).sum();
            (sum / n as f64).exp()
        })
        .collect();
    means.sort_unstable_by(f64::total_cmp);
    means
}

/// Marsaglia's xorshift64*: small, fast and the same on every platform.
struct XorShift64 {
    state: u64,
}

impl XorShift64 {
    fn new(seed: u64) -> Self {
        // A zero state would stay zero forever.
        Self {
            state: seed ^ 0x9E37_79B9_7F4A_7C15,
        }
        .nonzero()
    }

    fn nonzero(mut self) -> Self {
        if self.state == 0 {
            self.state = 0x2545_F491_4F6C_DD1D;
        }
        self
    }

    fn next(&mut self) -> u64 {
        let mut x = self.state;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.state = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..n` (multiply-shift: no modulo bias worth noticing for small `n`).
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next()) * n as u128) >> 64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resamples_are_reproducible_sorted_and_within_the_data() {
        let ratios = [1.01, 0.99, 1.03, 1.02, 0.98, 1.00];
        let first = bootstrap_geometric_means(&ratios, 2000, 7);
        assert_eq!(first.len(), 2000);
        assert_eq!(first, bootstrap_geometric_means(&ratios, 2000, 7));
        assert_ne!(first, bootstrap_geometric_means(&ratios, 2000, 8));
        assert!(first.windows(2).all(|w| w[0] <= w[1]));
        assert!(first[0] >= 0.98 && first[1999] <= 1.03);
        // The middle of the distribution sits near the geometric mean of the data.
        let geometric = (ratios.iter().map(|r: &f64| r.ln()).sum::<f64>() / 6.0).exp();
        assert!((first[1000] - geometric).abs() < 0.005, "{}", first[1000]);
    }

    #[test]
    fn a_constant_sample_has_no_spread_and_bad_data_none() {
        assert!(bootstrap_geometric_means(&[1.5; 4], 50, 1)
            .iter()
            .all(|m| (m - 1.5).abs() < 1e-12));
        assert!(bootstrap_geometric_means(&[], 50, 1).is_empty());
        assert!(bootstrap_geometric_means(&[1.0, f64::NAN], 50, 1).is_empty());
        assert!(bootstrap_geometric_means(&[1.0, 0.0], 50, 1).is_empty());
    }

    #[test]
    fn every_index_is_drawn() {
        let mut rng = XorShift64::new(0);
        let mut seen = [0usize; 5];
        for _ in 0..5000 {
            seen[rng.below(5)] += 1;
        }
        assert!(seen.iter().all(|&count| count > 800), "{seen:?}");
    }
}
