//! Calibration data for the lazy-exit margin tables and the QSearch futility margins.
//!
//! `Histogram` is always available (the lab reads saved histograms with it). The samplers
//! that hook into evaluation and quiescence exist only with the `calibrate` cargo feature, so
//! a normal build carries no calibration code at all.

pub mod histogram;
mod run;
#[cfg(feature = "calibrate")]
mod sampler;
pub mod stats;

pub use histogram::Histogram;
pub use run::{passes, run_pool, supported, PoolRun};
#[cfg(feature = "calibrate")]
pub use sampler::{Calibration, ExitTally};

/// Which measurements a calibration run takes. The exit rate needs none: it comes from the
/// always-on counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Modes {
    pub residual: bool,
    pub margin_safety: bool,
    pub qfutility: bool,
}
