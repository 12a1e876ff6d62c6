//! `lab match --scale-nps REF_NPS`: clocks scaled to the machine's speed, as OpenBench's client
//! does it (`determine_scale_factor`, `scale_time_control` in its worker), so that matches on
//! machines of different speeds search about the same number of nodes per move.
//!
//! What is measured, as OpenBench measures it: the base engine's own `bench` (`./engine bench`,
//! no other argument), run as many times at once as the match plays games, so the speed is the
//! one the games will see; the speed is what the engine itself reports (OpenBench's bench
//! parser, `engine::openbench`), the mean of the runs, and every run must report the same node
//! count. The factor is `REF_NPS / NPS` of the base engine (A; OpenBench's default `BASE`
//! method). A clock's base and increment and a movetime are multiplied by it and rounded to
//! the hundredth of a second OpenBench writes (`%.2f`), never below 10 ms; node and depth
//! limits are not scaled.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::results::NpsScale;
use super::rules::{Limit, SideLimits};
use crate::engine::openbench::parse_bench_output;
use crate::process::{describe_status, run_with_timeout};

/// How long one `bench` run may take: OpenBench's `MAX_BENCH_TIME_SECONDS`.
const BENCH_TIMEOUT: Duration = Duration::from_secs(60);
/// The smallest scaled time: OpenBench writes seconds with two decimals.
const RESOLUTION_MS: u64 = 10;

/// Runs `binary bench` `copies` times at once (in `dir` when given) and returns the scaling
/// of `reference_nps` against the mean speed the runs report.
pub(crate) fn measure(
    binary: &Path,
    dir: Option<&Path>,
    copies: usize,
    reference_nps: u64,
) -> Result<NpsScale> {
    let copies = copies.max(1);
    let runs: Vec<Result<(u64, u64)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..copies)
            .map(|_| scope.spawn(|| bench_once(binary, dir)))
            .collect();
        handles
            .into_iter()
            .map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|_| bail!("a bench thread panicked"))
            })
            .collect()
    });
    let mut figures = Vec::with_capacity(copies);
    for run in runs {
        figures.push(run?);
    }
    let nodes = figures[0].0;
    if let Some((other, _)) = figures.iter().find(|(n, _)| *n != nodes) {
        bail!(
            "--scale-nps: {} bench runs at once disagree on the node count ({nodes} and {other}): \
             OpenBench refuses a non-deterministic bench, and so does the lab",
            figures.len()
        );
    }
    let total: u128 = figures.iter().map(|(_, nps)| u128::from(*nps)).sum();
    let measured_nps = (total / figures.len() as u128) as u64;
    NpsScale::new(reference_nps, measured_nps)
}

fn bench_once(binary: &Path, dir: Option<&Path>) -> Result<(u64, u64)> {
    let mut command = Command::new(binary);
    command.arg("bench");
    if let Some(dir) = dir {
        command.current_dir(dir);
    }
    let what = format!("{} bench", binary.display());
    let finished = run_with_timeout(command, BENCH_TIMEOUT, &what)?;
    if !finished.status.success() {
        bail!("--scale-nps: `{what}` {}", describe_status(finished.status));
    }
    let text = String::from_utf8_lossy(&finished.stdout);
    let figures = parse_bench_output(&text).with_context(|| format!("--scale-nps: `{what}`"))?;
    Ok((figures.nodes, figures.nps))
}

/// Both sides' limits with their times multiplied by `factor`.
pub(crate) fn scale_limits(limits: SideLimits, factor: f64) -> SideLimits {
    limits.map(|limit| scale_limit(limit, factor))
}

fn scale_limit(limit: Limit, factor: f64) -> Limit {
    // Hundredths of a second, as OpenBench's `%.2f` writes them.
    let scaled = |ms: u64| -> u64 {
        let hundredths = (ms as f64 * factor / RESOLUTION_MS as f64).round();
        (hundredths.min(u64::MAX as f64 / RESOLUTION_MS as f64) as u64)
            .saturating_mul(RESOLUTION_MS)
    };
    match limit {
        Limit::Clock {
            base_ms,
            increment_ms,
        } => Limit::Clock {
            base_ms: scaled(base_ms).max(RESOLUTION_MS),
            increment_ms: scaled(increment_ms),
        },
        Limit::MoveTime { movetime_ms } => Limit::MoveTime {
            movetime_ms: scaled(movetime_ms).max(RESOLUTION_MS),
        },
        Limit::Nodes { .. } | Limit::Depth { .. } => limit,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clocks_scale_to_hundredths_and_fixed_searches_do_not() {
        let clock = Limit::parse_tc("10+0.1").unwrap();
        let nodes = Limit::Nodes { nodes: 5000 };
        assert_eq!(
            scale_limits([clock, nodes], 2.0),
            [
                Limit::Clock {
                    base_ms: 20_000,
                    increment_ms: 200
                },
                nodes
            ]
        );
        // 8+0.08 at 1.2345: 9.876 s and 0.09876 s, written by OpenBench as 9.88+0.10.
        assert_eq!(
            scale_limits([Limit::parse_tc("8+0.08").unwrap(); 2], 1.2345)[0],
            Limit::Clock {
                base_ms: 9_880,
                increment_ms: 100
            }
        );
        assert_eq!(
            scale_limits([Limit::MoveTime { movetime_ms: 1000 }; 2], 0.5)[1],
            Limit::MoveTime { movetime_ms: 500 }
        );
        // A tiny factor keeps a clock to run.
        assert_eq!(
            scale_limits([clock; 2], 1e-9)[0],
            Limit::Clock {
                base_ms: 10,
                increment_ms: 0
            }
        );
        assert_eq!(
            scale_limits([Limit::Depth { depth: 6 }; 2], 3.0)[0],
            Limit::Depth { depth: 6 }
        );
    }

    #[test]
    fn the_factor_is_the_reference_over_the_measured_speed() {
        let scale = NpsScale::new(1_000_000, 500_000).unwrap();
        assert_eq!(scale.factor, 2.0);
        assert!(NpsScale::new(0, 5).is_err());
        assert!(NpsScale::new(5, 0).is_err());
    }
}
