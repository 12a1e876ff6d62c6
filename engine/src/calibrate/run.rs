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
    if modes.needs_sampler() && !cfg!(feature = "calibrate") {
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
/// exit rates, residuals, margin safety and samples all come from the first pass, the engine's real
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
    let others = modes.residual || modes.margin_safety || modes.samples.is_some();
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
    if modes.needs_sampler() {
        searcher.evaluator().start_calibration(modes);
    }
    let limits = Limits::depth(depth);
    let stop = AtomicBool::new(false);
    let mut counters = Counters::default();
    for (index, board) in positions.iter().enumerate() {
        searcher.clear();
        #[cfg(feature = "calibrate")]
        if let Some(calibration) = searcher.evaluator().calibration() {
            calibration.begin_position(index);
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

#[cfg(all(test, feature = "calibrate"))]
mod tests {
    use super::*;
    use crate::calibrate::{Sample, Sampling};
    use crate::eval::margins;
    use crate::tier::{Tier, MATERIAL_BUCKETS, SEARCH_KINDS, TIERS};

    const DEPTH: i32 = 4;
    const HASH_MB: usize = 4;

    fn samples_run(per_bucket: usize, seed: u64) -> PoolRun {
        let positions = crate::bench::default_positions();
        let modes = Modes {
            samples: Some(Sampling { per_bucket, seed }),
            ..Modes::default()
        };
        run_pool(&positions, DEPTH, HASH_MB, modes, |_, _| {}).unwrap()
    }

    fn samples_of(run: &PoolRun) -> &crate::calibrate::Samples {
        run.calibration.as_ref().unwrap().samples.as_ref().unwrap()
    }

    /// The tier a sample exits in under the margin tables in force, as `evaluate` decides.
    fn predicted_tier(s: &Sample) -> Tier {
        let pair = margins::Pair {
            my_bucket: usize::from(s.my_bucket),
            opp_bucket: usize::from(s.opp_bucket),
            my_class: usize::from(s.my_class),
            opp_class: usize::from(s.opp_class),
        };
        if !s.race
            && margins::super_lazy(pair)
                .exit(s.super_lazy, s.alpha, s.beta)
                .is_some()
        {
            Tier::SuperLazy
        } else if margins::lazy(pair).exit(s.lazy, s.alpha, s.beta).is_some() {
            Tier::Lazy
        } else {
            Tier::Full
        }
    }

    #[test]
    fn samples_of_every_call_predict_the_counted_exits_exactly() {
        let run = samples_run(1 << 22, 5);
        let samples = samples_of(&run);
        let mut predicted = [[[0u64; TIERS]; MATERIAL_BUCKETS]; SEARCH_KINDS];
        let mut positions = std::collections::BTreeSet::new();
        for (bucket, reservoir) in samples.by_material_bucket.iter().enumerate() {
            let counted: u64 = run.counters.exits_by_material_bucket[bucket].iter().sum();
            assert_eq!(
                reservoir.seen(),
                counted,
                "bucket {bucket}: every call is offered"
            );
            assert_eq!(reservoir.items().len() as u64, counted, "and kept");
            for s in reservoir.items() {
                predicted[s.search as usize][bucket][predicted_tier(s) as usize] += 1;
                positions.insert(s.position);
                assert!(s.alpha < s.beta);
            }
        }
        assert_eq!(predicted, run.counters.exits_by_search);
        // Every position with a move is evaluated; a position without one (the bench has a
        // stalemate) ends its search before any evaluation.
        let playable: std::collections::BTreeSet<u32> = crate::bench::default_positions()
            .iter()
            .enumerate()
            .filter(|(_, board)| crate::movegen::count_legal_moves(board) > 0)
            .map(|(i, _)| i as u32)
            .collect();
        assert_eq!(positions, playable);
        let cheap: u64 = run.counters.exits[..2].iter().sum();
        assert!(cheap > 0, "the run exercises the cheap tiers");
    }

    #[test]
    fn a_small_reservoir_predicts_the_exit_shares_and_repeats_exactly() {
        const PER_BUCKET: usize = 400;
        let run = samples_run(PER_BUCKET, 1);
        let samples = samples_of(&run);
        let again = samples_run(PER_BUCKET, 1);
        let other_seed = samples_run(PER_BUCKET, 2);
        for (bucket, reservoir) in samples.by_material_bucket.iter().enumerate() {
            assert_eq!(
                reservoir.items(),
                samples_of(&again).by_material_bucket[bucket].items()
            );
            let seen = reservoir.seen();
            assert_eq!(reservoir.items().len() as u64, seen.min(PER_BUCKET as u64));
        }
        let differs = (0..MATERIAL_BUCKETS).any(|b| {
            samples.by_material_bucket[b].items()
                != samples_of(&other_seed).by_material_bucket[b].items()
        });
        assert!(differs, "another seed draws another sample");

        // Each bucket's sample weighted by its calls estimates the shares of the whole run.
        let mut estimate = [0.0f64; TIERS];
        for reservoir in &samples.by_material_bucket {
            let kept = reservoir.items().len();
            for s in reservoir.items() {
                estimate[predicted_tier(s) as usize] += reservoir.seen() as f64 / kept as f64;
            }
        }
        let calls = run.counters.eval_calls as f64;
        for tier in Tier::ALL {
            let measured = run.counters.exits[tier as usize] as f64 / calls;
            let predicted = estimate[tier as usize] / calls;
            assert!(
                (measured - predicted).abs() < 0.03,
                "{}: measured {measured:.3}, predicted {predicted:.3}",
                tier.name()
            );
        }
    }
}
