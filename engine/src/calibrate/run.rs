//! Runs a calibration over a position pool: real fixed-depth searches, per-search state
//! cleared per position (as in the bench), with the sampler switched on.

use super::Modes;
use crate::board::Board;
use crate::counters::Counters;
use crate::search::{Limits, Searcher, Silent};
use std::sync::atomic::AtomicBool;

/// What a calibration run produced.
pub struct PoolRun {
    pub positions: u64,
    /// Summed search counters: the exit rate per tier and material bucket come from here.
    pub counters: Counters,
    #[cfg(feature = "calibrate")]
    pub calibration: Option<Box<super::Calibration>>,
}

/// Whether this build can take the measurements `modes` asks for.
pub fn supported(modes: Modes) -> Result<(), String> {
    let needs_feature = modes.residual || modes.margin_safety || modes.qfutility;
    if needs_feature && !cfg!(feature = "calibrate") {
        return Err(
            "this squall was built without the `calibrate` feature; rebuild with \
                    `cargo build --release -p squall --features calibrate`"
                .to_string(),
        );
    }
    Ok(())
}

/// Searches every position to `depth`, calling `on_position` after each one.
pub fn run_pool(
    positions: &[Board],
    depth: i32,
    hash_mb: usize,
    modes: Modes,
    mut on_position: impl FnMut(usize),
) -> Result<PoolRun, String> {
    supported(modes)?;
    let mut searcher = Searcher::new(hash_mb);
    #[cfg(feature = "calibrate")]
    if modes.residual || modes.margin_safety || modes.qfutility {
        searcher.evaluator().start_calibration(modes);
    }
    let limits = Limits::depth(depth);
    let stop = AtomicBool::new(false);
    let mut counters = Counters::default();
    for (index, board) in positions.iter().enumerate() {
        searcher.clear();
        #[cfg(feature = "calibrate")]
        if let Some(calibration) = searcher.evaluator().calibration() {
            calibration.begin_position();
        }
        searcher.search(board, &[], &limits, &stop, &mut Silent);
        #[cfg(feature = "calibrate")]
        if let Some(calibration) = searcher.evaluator().calibration() {
            calibration.end_position();
        }
        counters.add(searcher.counters());
        on_position(index);
    }
    Ok(PoolRun {
        positions: positions.len() as u64,
        counters,
        #[cfg(feature = "calibrate")]
        calibration: searcher.evaluator().take_calibration(),
    })
}
