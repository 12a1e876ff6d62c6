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
///
/// QSearch futility sampling searches every capture the futility test would prune, so it
/// grows the tree: combined with other modes it runs as a second pass over the pool, and the
/// exit rates, residuals and margin safety all come from the first pass, the engine's real
/// search tree. `on_position(pass, index)` counts passes from 0; see [`passes`].
pub fn run_pool(
    positions: &[Board],
    depth: i32,
    hash_mb: usize,
    modes: Modes,
    mut on_position: impl FnMut(usize, usize),
) -> Result<PoolRun, String> {
    supported(modes)?;
    if passes(modes) == 1 {
        return run_pass(positions, depth, hash_mb, modes, &mut |i| on_position(0, i));
    }
    let real_tree = Modes {
        qfutility: false,
        ..modes
    };
    #[cfg_attr(not(feature = "calibrate"), allow(unused_mut))]
    let mut run = run_pass(positions, depth, hash_mb, real_tree, &mut |i| {
        on_position(0, i)
    })?;
    let qfutility_only = Modes {
        qfutility: true,
        ..Modes::default()
    };
    #[cfg_attr(not(feature = "calibrate"), allow(unused_variables))]
    let futility = run_pass(positions, depth, hash_mb, qfutility_only, &mut |i| {
        on_position(1, i)
    })?;
    #[cfg(feature = "calibrate")]
    if let (Some(calibration), Some(futility)) = (run.calibration.as_mut(), futility.calibration) {
        calibration.modes.qfutility = true;
        calibration.qfutility_excess = futility.qfutility_excess;
    }
    Ok(run)
}

/// How many passes over the pool `run_pool` makes for `modes`: 2 when QSearch futility
/// sampling comes with other modes.
pub fn passes(modes: Modes) -> usize {
    let others = modes.residual || modes.margin_safety;
    if modes.qfutility && others {
        2
    } else {
        1
    }
}

/// One pass over the pool with the sampler in `modes`.
fn run_pass(
    positions: &[Board],
    depth: i32,
    hash_mb: usize,
    #[cfg_attr(not(feature = "calibrate"), allow(unused_variables))] modes: Modes,
    on_position: &mut impl FnMut(usize),
) -> Result<PoolRun, String> {
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
