//! Calibration data for the lazy-exit margin tables and the QSearch futility margins.
//!
//! `Histogram` is always available (the lab reads saved histograms with it). The samplers
//! that hook into evaluation and quiescence exist only with the `calibrate` cargo feature, so
//! a normal build carries no calibration code at all.

pub mod histogram;
mod run;
#[cfg(feature = "calibrate")]
mod sampler;
#[cfg(feature = "calibrate")]
pub mod samples;
mod split_mix;
pub mod stats;

pub use histogram::Histogram;
pub use run::{passes, run_pool, supported, PoolRun};
#[cfg(feature = "calibrate")]
pub use sampler::{Calibration, ExitTally};
#[cfg(feature = "calibrate")]
pub use samples::{Sample, Samples};
pub use split_mix::SplitMix;

/// Which measurements a calibration run takes. The exit rate needs none: it comes from the
/// always-on counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Modes {
    pub residual: bool,
    pub margin_safety: bool,
    pub qfutility: bool,
    /// Replay samples of the evaluation calls, drawn so.
    pub samples: Option<Sampling>,
}

impl Modes {
    /// Whether a sampler must hook into the search (the exit rate needs none).
    pub fn needs_sampler(&self) -> bool {
        self.residual || self.margin_safety || self.qfutility || self.samples.is_some()
    }
}

/// What `squall calibrate samples` keeps by default per material bucket.
pub const DEFAULT_SAMPLES_PER_BUCKET: usize = 20_000;
/// The reservoir's seed unless `--seed` gives another.
pub const DEFAULT_SEED: u64 = 1;

/// How a samples run draws: the reservoir's capacity per material bucket and its seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sampling {
    pub per_bucket: usize,
    pub seed: u64,
}

impl Default for Sampling {
    fn default() -> Self {
        Sampling {
            per_bucket: DEFAULT_SAMPLES_PER_BUCKET,
            seed: DEFAULT_SEED,
        }
    }
}
