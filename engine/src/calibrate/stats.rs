//! Interval estimates for rare-event rates (how often a lazy exit was wrong).

/// Wilson score interval for `successes` out of `n` at normal quantile `z` (1.96 for 95%).
/// Returns `(low, high)` as fractions; `(0, 1)` when `n` is 0.
pub fn wilson_interval(successes: u64, n: u64, z: f64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let n_f = n as f64;
    let p = successes as f64 / n_f;
    let z2 = z * z;
    let denominator = 1.0 + z2 / n_f;
    let centre = (p + z2 / (2.0 * n_f)) / denominator;
    let half = z * (p * (1.0 - p) / n_f + z2 / (4.0 * n_f * n_f)).sqrt() / denominator;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// The 95% normal quantile.
pub const Z95: f64 = 1.959_963_984_540_054;

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 5e-5
    }

    #[test]
    fn matches_reference_values() {
        // Reference values from Wilson (1927) / Newcombe (1998), method 3: 81/263 -> 0.2553..0.3662.
        let (lo, hi) = wilson_interval(81, 263, Z95);
        assert!(close(lo, 0.2553) && close(hi, 0.3662), "{lo} {hi}");
        // Newcombe's 15/148 example: 0.0624..0.1605.
        let (lo, hi) = wilson_interval(15, 148, Z95);
        assert!(close(lo, 0.0624) && close(hi, 0.1605), "{lo} {hi}");
        // Zero events out of 10: 0..0.2775.
        let (lo, hi) = wilson_interval(0, 10, Z95);
        assert!(close(lo, 0.0) && close(hi, 0.2775), "{lo} {hi}");
        assert_eq!(wilson_interval(0, 0, Z95), (0.0, 1.0));
    }
}
