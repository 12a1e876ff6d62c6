//! Time management: turns UCI limits into a soft target (don't start another iteration) and a
//! hard deadline (stop now).
//!
//! The GUI times a move from sending `go` to reading `bestmove`; the search times itself from
//! its own start. The move overhead (`Limits::move_overhead`, the UCI option `Move Overhead`)
//! covers the difference, so a hard deadline plus the overhead never exceeds the clock.

use crate::search::Limits;
use std::time::{Duration, Instant};

/// The default of `Limits::move_overhead`.
pub const DEFAULT_MOVE_OVERHEAD: Duration = Duration::from_millis(20);

/// Moves the clock is spread over when the GUI sends no `movestogo`.
const DEFAULT_MOVES_TO_GO: u32 = 30;

/// A larger `movestogo` is read as this: the game may end before the time control does.
const MAX_MOVES_TO_GO: u32 = 50;

/// Share of the increment (net of the overhead) spent on top of the clock's share, as
/// numerator / denominator.
const INCREMENT_SHARE: (u32, u32) = (3, 4);

/// The hard deadline as a multiple of the soft target: an iteration that starts just before the
/// soft target may run this much longer before it is cut.
const HARD_OVER_SOFT: u32 = 4;

/// One move takes at most 1/N of the clock after the overhead. The rest is a reserve: it
/// absorbs latency beyond the overhead, and keeps a clock that lives on its increment from
/// running down to the overhead. Fewer moves to the next time control shrink the reserve
/// (the clock is refilled soon), never below half.
const RESERVE_DIVISOR: u32 = 4;

/// The shortest `movetime` search: the overhead may exceed a tiny `movetime`.
const MIN_MOVETIME: Duration = Duration::from_millis(1);

#[derive(Clone, Copy, Debug)]
pub struct Deadlines {
    pub soft: Option<Instant>,
    pub hard: Option<Instant>,
}

/// Search time from the search's start: the soft target and the hard deadline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    pub soft: Duration,
    pub hard: Duration,
}

/// The time budget of a search under `limits`; `None` when time does not limit it.
pub fn budget(limits: &Limits) -> Option<Budget> {
    let overhead = limits.move_overhead;
    if let Some(movetime) = limits.movetime {
        let t = movetime.saturating_sub(overhead).max(MIN_MOVETIME);
        return Some(Budget { soft: t, hard: t });
    }
    if limits.infinite {
        return None;
    }
    let clock = limits.clock?;
    let left = clock.time.saturating_sub(overhead);
    let moves = clock
        .moves_to_go
        .unwrap_or(DEFAULT_MOVES_TO_GO)
        .clamp(1, MAX_MOVES_TO_GO);
    // Every move pays the overhead out of its increment: only the rest is there to think with.
    let increment = clock.increment.saturating_sub(overhead);
    let (share, of) = INCREMENT_SHARE;
    let soft = left / moves + increment * share / of;
    let cap = left / (moves + 1).min(RESERVE_DIVISOR);
    let hard = (soft * HARD_OVER_SOFT).min(cap);
    Some(Budget {
        soft: soft.min(hard),
        hard,
    })
}

pub fn deadlines(limits: &Limits, start: Instant) -> Deadlines {
    let budget = budget(limits);
    Deadlines {
        soft: budget.map(|b| start + b.soft),
        hard: budget.map(|b| start + b.hard),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::Clock;

    fn clock(time_ms: u64, increment_ms: u64, moves_to_go: Option<u32>) -> Limits {
        Limits {
            clock: Some(Clock {
                time: Duration::from_millis(time_ms),
                increment: Duration::from_millis(increment_ms),
                moves_to_go,
            }),
            ..Limits::default()
        }
    }

    /// (soft, hard) in whole microseconds.
    fn micros(limits: &Limits) -> (u128, u128) {
        let b = budget(limits).expect("a time budget");
        (b.soft.as_micros(), b.hard.as_micros())
    }

    #[test]
    fn tiny_clocks_keep_a_reserve() {
        // 1+0.01 with the default 20 ms overhead: the increment does not cover the overhead, so
        // the clock alone pays for thinking.
        assert_eq!(micros(&clock(1000, 10, None)), (32_666, 130_666));
        assert_eq!(micros(&clock(100, 10, None)), (2_666, 10_666));
        assert_eq!(micros(&clock(40, 10, None)), (666, 2_666));
        // Nothing left after the overhead: no time to plan with (the search still completes
        // depth 1).
        assert_eq!(micros(&clock(15, 10, None)), (0, 0));
        // A large increment never lets a move plan past the clock it has now.
        assert_eq!(micros(&clock(30, 100, None)), (2_500, 2_500));
    }

    #[test]
    fn the_hard_deadline_fits_the_clock() {
        for time in [0, 1, 10, 20, 21, 25, 40, 100, 1000, 10_000, 60_000] {
            for increment in [0, 5, 10, 20, 100, 600, 5000] {
                for moves_to_go in [None, Some(1), Some(2), Some(3), Some(40), Some(200)] {
                    let limits = clock(time, increment, moves_to_go);
                    let b = budget(&limits).unwrap();
                    let left = Duration::from_millis(time).saturating_sub(DEFAULT_MOVE_OVERHEAD);
                    assert!(b.soft <= b.hard, "{limits:?}: {b:?}");
                    // At most half of what is left after the overhead, so two moves in a row
                    // that both overrun still leave time.
                    assert!(b.hard <= left / 2, "{limits:?}: {b:?}");
                }
            }
        }
    }

    #[test]
    fn normal_time_controls() {
        // 8+0.08 (OpenBench STC), 10+0.1, 60+0.6: about 1/30 of the clock plus 3/4 of the net
        // increment; the hard deadline four times that.
        assert_eq!(micros(&clock(8000, 80, None)), (311_000, 1_244_000));
        assert_eq!(micros(&clock(10_000, 100, None)), (392_666, 1_570_666));
        assert_eq!(micros(&clock(60_000, 600, None)), (2_434_333, 9_737_333));
        // Sudden death: the same share of the clock.
        assert_eq!(micros(&clock(60_000, 0, None)), (1_999_333, 7_997_333));
    }

    #[test]
    fn moves_to_go_spreads_the_clock_and_shrinks_the_reserve() {
        // The last move before the time control may use half of the clock after the overhead.
        assert_eq!(micros(&clock(1020, 0, Some(1))), (500_000, 500_000));
        assert_eq!(micros(&clock(1020, 0, Some(2))), (333_333, 333_333));
        assert_eq!(micros(&clock(1020, 0, Some(10))), (100_000, 250_000));
        // `movestogo` beyond the cap spreads over MAX_MOVES_TO_GO moves.
        assert_eq!(micros(&clock(1020, 0, Some(500))), (20_000, 80_000));
    }

    #[test]
    fn move_overhead_moves_the_deadlines() {
        let mut limits = clock(1000, 100, None);
        assert_eq!(micros(&limits), (92_666, 245_000));
        limits.move_overhead = Duration::from_millis(200);
        assert_eq!(micros(&limits), (26_666, 106_666));
        limits.move_overhead = Duration::ZERO;
        assert_eq!(micros(&limits), (108_333, 250_000));

        let mut limits = Limits {
            movetime: Some(Duration::from_millis(100)),
            ..Limits::default()
        };
        assert_eq!(micros(&limits), (80_000, 80_000));
        limits.move_overhead = Duration::from_millis(50);
        assert_eq!(micros(&limits), (50_000, 50_000));
        limits.move_overhead = Duration::from_millis(5000);
        assert_eq!(micros(&limits), (1_000, 1_000));
    }

    #[test]
    fn no_clock_no_budget() {
        assert_eq!(budget(&Limits::default()), None);
        assert_eq!(budget(&Limits::depth(8)), None);
        let infinite = Limits {
            infinite: true,
            ..clock(1000, 0, None)
        };
        assert_eq!(budget(&infinite), None);
        let start = Instant::now();
        let d = deadlines(&clock(1000, 10, None), start);
        assert_eq!(
            d.hard,
            Some(start + budget(&clock(1000, 10, None)).unwrap().hard)
        );
    }
}
