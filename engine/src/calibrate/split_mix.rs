//! SplitMix64: a tiny, well-distributed generator for the replay samples' reservoirs and the
//! lab's pools and merges. Always built, so the lab shares it; its sequence must not change
//! between versions (pools and samples are reproduced from seeds).

#[derive(Clone, Debug)]
pub struct SplitMix(u64);

impl SplitMix {
    pub fn new(seed: u64) -> SplitMix {
        SplitMix(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0), by a multiply instead of a division.
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let mut rng = SplitMix::new(9);
        let mut counts = [0u32; 7];
        for _ in 0..7000 {
            counts[rng.below(7)] += 1;
        }
        assert!(
            counts.iter().all(|&n| (850..=1150).contains(&n)),
            "{counts:?}"
        );
    }

    #[test]
    fn the_sequence_is_splitmix64() {
        // The reference implementation's first outputs for seed 0.
        let mut rng = SplitMix::new(0);
        assert_eq!(rng.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(rng.next_u64(), 0x6E78_9E6A_A1B9_65F4);
    }
}
