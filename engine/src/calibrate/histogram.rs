//! Integer histograms with one-centipawn bins. Merging is a bin-wise sum, so shards of a
//! calibration merge to exactly the unsharded result, and any percentile can be read later
//! from the saved bins.

/// Values below `lo` and at or above `lo + bins.len()` land in under/overflow counters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Histogram {
    pub lo: i32,
    pub bins: Vec<u64>,
    pub underflow: u64,
    pub overflow: u64,
}

/// Range of the residual and king histograms, in centipawns.
pub const DEFAULT_LO: i32 = -1500;
pub const DEFAULT_HI: i32 = 1500;

impl Default for Histogram {
    fn default() -> Self {
        Histogram::new(DEFAULT_LO, DEFAULT_HI)
    }
}

impl Histogram {
    /// A histogram of the values `lo..hi`.
    pub fn new(lo: i32, hi: i32) -> Histogram {
        Histogram {
            lo,
            bins: vec![0; (hi - lo).max(1) as usize],
            underflow: 0,
            overflow: 0,
        }
    }

    #[inline]
    pub fn record(&mut self, value: i32) {
        let index = value - self.lo;
        if index < 0 {
            self.underflow += 1;
        } else if index as usize >= self.bins.len() {
            self.overflow += 1;
        } else {
            self.bins[index as usize] += 1;
        }
    }

    pub fn count(&self) -> u64 {
        self.underflow + self.overflow + self.bins.iter().sum::<u64>()
    }

    /// Bin-wise sum. Fails if the shapes differ.
    pub fn merge(&mut self, other: &Histogram) -> Result<(), String> {
        if self.lo != other.lo || self.bins.len() != other.bins.len() {
            return Err(format!(
                "histogram shapes differ: [{}, {}) vs [{}, {})",
                self.lo,
                self.lo + self.bins.len() as i32,
                other.lo,
                other.lo + other.bins.len() as i32
            ));
        }
        for (a, b) in self.bins.iter_mut().zip(&other.bins) {
            *a += b;
        }
        self.underflow += other.underflow;
        self.overflow += other.overflow;
        Ok(())
    }

    /// Nearest-rank percentile: the smallest value `v` with at least `p`% of samples `<= v`.
    /// Under/overflow samples read as `lo - 1` / `hi`. `None` for an empty histogram.
    pub fn percentile(&self, p: f64) -> Option<i32> {
        let n = self.count();
        if n == 0 {
            return None;
        }
        let rank = ((p / 100.0 * n as f64).ceil() as u64).clamp(1, n);
        let mut seen = self.underflow;
        if seen >= rank {
            return Some(self.lo - 1);
        }
        for (i, &c) in self.bins.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Some(self.lo + i as i32);
            }
        }
        Some(self.lo + self.bins.len() as i32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_exact_nearest_rank() {
        let mut h = Histogram::new(-10, 10);
        for v in 1..=100 {
            h.record(v % 10);
        }
        // Values 0..=9, ten each: the 25th of 100 sorted samples is 2.
        assert_eq!(h.percentile(25.0), Some(2));
        assert_eq!(h.percentile(0.0), Some(0));
        assert_eq!(h.percentile(100.0), Some(9));
        assert_eq!(h.percentile(50.0), Some(4));
        assert_eq!(h.percentile(50.5), Some(5));
    }

    #[test]
    fn out_of_range_values_are_kept() {
        let mut h = Histogram::new(0, 4);
        h.record(-5);
        h.record(9);
        h.record(2);
        assert_eq!((h.underflow, h.overflow, h.count()), (1, 1, 3));
        assert_eq!(h.percentile(1.0), Some(-1));
        assert_eq!(h.percentile(100.0), Some(4));
    }

    #[test]
    fn merge_is_a_binwise_sum() {
        let (mut a, mut b, mut all) = (
            Histogram::new(0, 8),
            Histogram::new(0, 8),
            Histogram::new(0, 8),
        );
        for v in [1, 2, 2, 30, -3] {
            a.record(v);
            all.record(v);
        }
        for v in [2, 7, 7, 5] {
            b.record(v);
            all.record(v);
        }
        a.merge(&b).unwrap();
        assert_eq!(a, all);
        assert!(a.merge(&Histogram::new(0, 9)).is_err());
    }
}
