//! Time management: turns UCI limits into a soft target (don't start another iteration) and a
//! hard deadline (stop now).

use crate::search::Limits;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug)]
pub struct Deadlines {
    pub soft: Option<Instant>,
    pub hard: Option<Instant>,
}

const MOVE_OVERHEAD: Duration = Duration::from_millis(20);

pub fn deadlines(limits: &Limits, start: Instant) -> Deadlines {
    if let Some(movetime) = limits.movetime {
        let t = start
            + movetime
                .saturating_sub(MOVE_OVERHEAD)
                .max(Duration::from_millis(1));
        return Deadlines {
            soft: Some(t),
            hard: Some(t),
        };
    }
    if limits.infinite {
        return Deadlines {
            soft: None,
            hard: None,
        };
    }
    match limits.clock {
        Some(clock) => {
            let left = clock.time.saturating_sub(MOVE_OVERHEAD);
            let moves = clock.moves_to_go.unwrap_or(30).clamp(1, 50);
            let soft = left / moves + clock.increment * 3 / 4;
            let soft = soft.min(left / 2);
            let hard = (soft * 4).min(left / 3 + clock.increment / 2).max(soft);
            Deadlines {
                soft: Some(start + soft),
                hard: Some(start + hard),
            }
        }
        None => Deadlines {
            soft: None,
            hard: None,
        },
    }
}
