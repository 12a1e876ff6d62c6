//! Replay samples: a uniform reservoir sample (Algorithm R) of the evaluation calls per
//! material bucket, each with every tier's score as its exit sees it, so the exits of any
//! candidate margin tables can be predicted without searching again.

use super::{Sampling, SplitMix};
use crate::tier::{SearchKind, MATERIAL_BUCKETS};

/// One evaluation call with cheap exits enabled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sample {
    /// Index of the searched position in the run's pool.
    pub position: u32,
    pub search: SearchKind,
    /// The side buckets of the side to move and of its opponent.
    pub my_bucket: u8,
    pub opp_bucket: u8,
    /// The danger classes of the side to move's king and of its opponent's.
    pub my_class: u8,
    pub opp_class: u8,
    pub alpha: i32,
    pub beta: i32,
    /// The scores the super-lazy and lazy exits test (drawish-scaled), and the full score.
    pub super_lazy: i32,
    pub lazy: i32,
    pub full: i32,
    /// `pawn_race_possible`: the super-lazy tier may not exit.
    pub race: bool,
}

/// Algorithm R: after `seen` offers, each offered item is held with probability
/// `capacity / seen`. The slot is chosen before the item is built, so an item the reservoir
/// turns down costs one random draw.
#[derive(Clone, Debug)]
pub struct Reservoir<T> {
    capacity: usize,
    seen: u64,
    items: Vec<T>,
}

impl<T> Reservoir<T> {
    pub fn new(capacity: usize) -> Reservoir<T> {
        Reservoir {
            capacity,
            seen: 0,
            items: Vec::new(),
        }
    }

    /// Offers one item: `make` runs only if the item is kept.
    pub fn offer(&mut self, rng: &mut SplitMix, make: impl FnOnce() -> T) {
        self.seen += 1;
        if self.items.len() < self.capacity {
            self.items.push(make());
            return;
        }
        // `seen` counts calls of one search run: far below `usize::MAX` on 64-bit targets.
        let slot = rng.below(self.seen as usize);
        if let Some(held) = self.items.get_mut(slot) {
            *held = make();
        }
    }

    /// How many items were offered.
    pub fn seen(&self) -> u64 {
        self.seen
    }

    pub fn items(&self) -> &[T] {
        &self.items
    }
}

/// The reservoirs of a samples run, one per material bucket, sharing one random stream.
#[derive(Clone, Debug)]
pub struct Samples {
    pub sampling: Sampling,
    pub by_material_bucket: Vec<Reservoir<Sample>>,
    rng: SplitMix,
}

impl Samples {
    pub fn new(sampling: Sampling) -> Samples {
        Samples {
            sampling,
            by_material_bucket: (0..MATERIAL_BUCKETS)
                .map(|_| Reservoir::new(sampling.per_bucket))
                .collect(),
            rng: SplitMix::new(sampling.seed),
        }
    }

    /// Offers one call of material bucket `bucket`; `make` builds its sample if it is kept.
    pub fn offer(&mut self, bucket: usize, make: impl FnOnce() -> Sample) {
        self.by_material_bucket[bucket].offer(&mut self.rng, make);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fill(capacity: usize, seed: u64, stream: u64) -> Reservoir<u64> {
        let mut reservoir = Reservoir::new(capacity);
        let mut rng = SplitMix::new(seed);
        for item in 0..stream {
            reservoir.offer(&mut rng, || item);
        }
        reservoir
    }

    #[test]
    fn a_reservoir_holds_everything_until_full_then_exactly_its_capacity() {
        let short = fill(10, 7, 6);
        assert_eq!(short.items(), [0, 1, 2, 3, 4, 5]);
        assert_eq!(short.seen(), 6);
        let long = fill(10, 7, 10_000);
        assert_eq!(long.items().len(), 10);
        assert_eq!(long.seen(), 10_000);
        let mut distinct = long.items().to_vec();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), 10, "items are held without replacement");
        assert!(fill(0, 7, 100).items().is_empty());
    }

    #[test]
    fn the_same_seed_draws_the_same_sample_and_another_seed_another() {
        assert_eq!(fill(50, 3, 5_000).items(), fill(50, 3, 5_000).items());
        assert_ne!(fill(50, 3, 5_000).items(), fill(50, 4, 5_000).items());
    }

    #[test]
    fn every_item_of_the_stream_is_equally_likely_to_be_held() {
        // 1000 items into 100 slots, 2000 times: each item is held with probability 0.1, so
        // 200 times on average (sd ~13.4). Items late in the stream are the ones a biased
        // replacement would favour or starve, so tenths of the stream are compared too.
        const STREAM: u64 = 1000;
        const RUNS: u64 = 2000;
        let mut held = vec![0u64; STREAM as usize];
        for run in 0..RUNS {
            for &item in fill(100, 1000 + run, STREAM).items() {
                held[item as usize] += 1;
            }
        }
        let expected = RUNS as f64 * 0.1;
        for (item, &n) in held.iter().enumerate() {
            assert!(
                (n as f64 - expected).abs() < 6.0 * expected.sqrt(),
                "item {item} held {n} times, expected about {expected}"
            );
        }
        for tenth in held.chunks(100) {
            let total: u64 = tenth.iter().sum();
            // 100 items: 20,000 expected, sd ~ sqrt(100 * 180) ~ 134.
            assert!((19_400..=20_600).contains(&total), "a tenth held {total}");
        }
    }
}
