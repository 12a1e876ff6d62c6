//! What a match is played under: the search limit each move gets, and the adjudication rules
//! that end a decided or dead-drawn game early. Parsed once from the command line.

use std::fmt;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::digits::thousands;

/// The limit of every move. A clock is the usual match setting; the others make games
/// reproducible (nodes, depth) or cheap (movetime).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Limit {
    /// `--tc BASE+INC` in seconds, fastchess notation; held in milliseconds.
    Clock {
        base_ms: u64,
        increment_ms: u64,
    },
    Nodes {
        nodes: u64,
    },
    Depth {
        depth: u32,
    },
    MoveTime {
        movetime_ms: u64,
    },
}

impl Limit {
    /// `10+0.1`, `60`, `0.5+0.005`: seconds of base time and optional increment.
    pub fn parse_tc(spec: &str) -> Result<Limit> {
        Self::parse_tc_flag("--tc", spec)
    }

    /// [`Limit::parse_tc`] of the value of `flag` (`--tc-a`, ...), which errors name.
    pub(crate) fn parse_tc_flag(flag: &str, spec: &str) -> Result<Limit> {
        let (base, increment) = spec.split_once('+').unwrap_or((spec, "0"));
        let seconds = |text: &str, what: &str| -> Result<u64> {
            let value: f64 = text.trim().parse().with_context(|| {
                format!("{flag} {spec}: {what} `{text}` is not a number of seconds")
            })?;
            if !value.is_finite() || !(0.0..=MAX_TC_SECONDS).contains(&value) {
                bail!("{flag} {spec}: {what} must be between 0 and {MAX_TC_SECONDS} seconds");
            }
            Ok((value * 1000.0).round() as u64)
        };
        let base_ms = seconds(base, "base time")?;
        let increment_ms = seconds(increment, "increment")?;
        if base_ms == 0 {
            bail!("{flag} {spec}: the clock needs a base time above 0 (the increment comes after each move)");
        }
        Ok(Limit::Clock {
            base_ms,
            increment_ms,
        })
    }

    /// The PGN TimeControl tag (seconds, `base+inc`), or `-` for limits without a clock.
    pub(crate) fn pgn_time_control(&self) -> String {
        match *self {
            Limit::Clock {
                base_ms,
                increment_ms,
            } => {
                if increment_ms == 0 {
                    seconds_text(base_ms)
                } else {
                    format!("{}+{}", seconds_text(base_ms), seconds_text(increment_ms))
                }
            }
            _ => "-".to_string(),
        }
    }
}

const MAX_TC_SECONDS: f64 = 86_400.0;

/// The limits of the two engines, A then B (fastchess's per-engine `tc=` and `nodes=`): each
/// engine searches under its own, and a clock is its own clock. Equal unless a side was given
/// a limit of its own.
pub(crate) type SideLimits = [Limit; 2];

/// Moves each side makes in a typical game, for a match's expected duration: self-play games
/// at short clocks last about 80 plies before they end or are adjudicated.
pub(crate) const TYPICAL_MOVES_PER_SIDE: u32 = 40;

/// The time one game is expected to take when each side spends what its limit allows over
/// [`TYPICAL_MOVES_PER_SIDE`] moves; `None` when a side's limit is not a time (nodes, depth).
pub(crate) fn expected_game_time(limits: &SideLimits) -> Option<Duration> {
    let moves = u64::from(TYPICAL_MOVES_PER_SIDE);
    limits
        .iter()
        .map(|limit| match *limit {
            Limit::Clock {
                base_ms,
                increment_ms,
            } => Some(base_ms.saturating_add(increment_ms.saturating_mul(moves))),
            Limit::MoveTime { movetime_ms } => Some(movetime_ms.saturating_mul(moves)),
            Limit::Nodes { .. } | Limit::Depth { .. } => None,
        })
        .try_fold(0u64, |sum, side| side.map(|ms| sum.saturating_add(ms)))
        .map(Duration::from_millis)
}

/// `tc 10+0.1` when both sides play under one limit, `A nodes 5,000, B tc 10+0.1` otherwise.
pub(crate) fn describe_limits(limits: &SideLimits) -> String {
    if limits[0] == limits[1] {
        limits[0].to_string()
    } else {
        format!("A {}, B {}", limits[0], limits[1])
    }
}

/// Reads the per-side limits of a results file, or the one `limit` of a file written before
/// engines had limits of their own (both sides played under it).
pub(crate) fn one_or_per_side<'de, D>(deserializer: D) -> Result<SideLimits, D::Error>
where
    D: serde::Deserializer<'de>,
{
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrPerSide {
        PerSide(SideLimits),
        One(Limit),
    }
    Ok(match OneOrPerSide::deserialize(deserializer)? {
        OneOrPerSide::PerSide(limits) => limits,
        OneOrPerSide::One(limit) => [limit; 2],
    })
}

/// Nodes an engine may report beyond `go nodes N` and still honour it: engines poll the node
/// count every few thousand nodes, and some count the last iteration whole. An engine that
/// ignores the limit passes this within a fraction of a second.
const NODE_SLACK_FACTOR: u64 = 2;
const NODE_SLACK: u64 = 65_536;

/// What an engine that honours its limit never reports: more nodes than `go nodes N` allows
/// (with slack), or a deeper iteration than `go depth N`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Ceiling {
    pub(crate) nodes: Option<u64>,
    pub(crate) depth: Option<u32>,
}

impl Ceiling {
    /// The reported figure that breaks the ceiling (`nodes 1,200,000`), if one does.
    pub(crate) fn broken_by(&self, nodes: Option<u64>, depth: Option<u32>) -> Option<String> {
        if let (Some(most), Some(nodes)) = (self.nodes, nodes) {
            if nodes > most {
                return Some(format!("nodes {}", thousands(nodes)));
            }
        }
        if let (Some(most), Some(depth)) = (self.depth, depth) {
            if depth > most {
                return Some(format!("depth {depth}"));
            }
        }
        None
    }
}

impl Limit {
    /// The ceiling of a search under this limit; clocks and movetime have none (the lab's clock
    /// catches an engine that overruns them).
    pub(crate) fn ceiling(&self) -> Ceiling {
        match *self {
            Limit::Nodes { nodes } => Ceiling {
                nodes: Some(
                    nodes
                        .saturating_mul(NODE_SLACK_FACTOR)
                        .saturating_add(NODE_SLACK),
                ),
                depth: None,
            },
            Limit::Depth { depth } => Ceiling {
                nodes: None,
                depth: Some(depth),
            },
            Limit::Clock { .. } | Limit::MoveTime { .. } => Ceiling::default(),
        }
    }

    /// Whether a single-threaded deterministic engine plays the same moves under this limit on
    /// any machine: nodes and depth do not depend on the clock.
    pub(crate) fn is_reproducible(&self) -> bool {
        matches!(self, Limit::Nodes { .. } | Limit::Depth { .. })
    }
}

fn seconds_text(ms: u64) -> String {
    if ms.is_multiple_of(1000) {
        (ms / 1000).to_string()
    } else {
        let text = format!("{:.3}", ms as f64 / 1000.0);
        text.trim_end_matches('0').to_string()
    }
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Limit::Clock { .. } => write!(f, "tc {}", self.pgn_time_control()),
            Limit::Nodes { nodes } => write!(f, "nodes {}", thousands(nodes)),
            Limit::Depth { depth } => write!(f, "depth {depth}"),
            Limit::MoveTime { movetime_ms } => write!(f, "movetime {movetime_ms} ms"),
        }
    }
}

/// Draw adjudication as fastchess and OpenBench do it: from full move `move_number` on, when
/// both engines' scores stay within `score` centipawns of zero for `move_count` consecutive
/// moves each, the game is a draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct DrawAdjudication {
    pub(crate) move_number: u32,
    pub(crate) move_count: u32,
    pub(crate) score: i32,
}

/// Resign adjudication: an engine whose own score is `score` centipawns or more below zero for
/// `move_count` consecutive moves of its own loses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ResignAdjudication {
    pub(crate) move_count: u32,
    pub(crate) score: i32,
}

/// Both adjudication rules of a match, either of them off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct AdjudicationRules {
    pub(crate) draw: Option<DrawAdjudication>,
    pub(crate) resign: Option<ResignAdjudication>,
}

impl AdjudicationRules {
    /// The draw rule as `--draw-adj` takes it, `movenumber=32,movecount=8,score=10`; `None`
    /// when off.
    pub(crate) fn draw_spec(&self) -> Option<String> {
        self.draw.map(|draw| {
            format!(
                "movenumber={},movecount={},score={}",
                draw.move_number, draw.move_count, draw.score
            )
        })
    }

    /// The resign rule as `--resign-adj` takes it, `movecount=3,score=400`; `None` when off.
    pub(crate) fn resign_spec(&self) -> Option<String> {
        self.resign
            .map(|resign| format!("movecount={},score={}", resign.move_count, resign.score))
    }

    /// Whether every value is one the flags could have given: rules read from a file (a
    /// results file's header) are taken only then.
    pub(crate) fn in_range(&self) -> bool {
        let valid = |value: i64| RULE_VALUES.contains(&value);
        self.draw.is_none_or(|draw| {
            valid(draw.move_number.into())
                && valid(draw.move_count.into())
                && valid(draw.score.into())
        }) && self
            .resign
            .is_none_or(|resign| valid(resign.move_count.into()) && valid(resign.score.into()))
    }

    /// In the flags' own syntax, so a reader can pass them on: `draw
    /// movenumber=32,movecount=8,score=10 and resign movecount=3,score=400`, or `none`.
    pub(crate) fn words(&self) -> String {
        let draw = self.draw_spec().map(|spec| format!("draw {spec}"));
        let resign = self.resign_spec().map(|spec| format!("resign {spec}"));
        match (draw, resign) {
            (None, None) => "none".to_string(),
            (draw, resign) => [draw, resign]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(" and "),
        }
    }
}

/// Which rules a resumed results file keeps as it recorded them: those a command was not given
/// (`lab verdict` or `lab speed-elo` without `--draw-adj` or `--resign-adj`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct RulesKept {
    pub(crate) draw: bool,
    pub(crate) resign: bool,
}

impl RulesKept {
    /// Whether games adjudicated by `recorded` may be resumed by a command whose rules are
    /// `given` where not kept: each rule not kept must be theirs.
    pub(crate) fn admits(self, given: &AdjudicationRules, recorded: &AdjudicationRules) -> bool {
        (self.draw || given.draw == recorded.draw)
            && (self.resign || given.resign == recorded.resign)
    }
}

/// Default of `lab match --draw-adj`, and of `lab verdict --draw-adj` for fresh games: a draw
/// from move 32 after 8 moves each within 10 cp.
pub(crate) const DEFAULT_DRAW_ADJ: &str = "movenumber=32,movecount=8,score=10";
/// Default of `lab match --resign-adj`, and of `lab verdict --resign-adj` for fresh games: a
/// loss after 3 moves of one side at -400 cp or worse.
pub(crate) const DEFAULT_RESIGN_ADJ: &str = "movecount=3,score=400";

/// The values an adjudication rule's move number, move count or score may take.
const RULE_VALUES: std::ops::RangeInclusive<i64> = 1..=100_000;

/// `key=value,...` with exactly the keys named; `none` turns the rule off.
fn parse_keyed(spec: &str, option: &str, keys: &[&str]) -> Result<Option<Vec<i64>>> {
    if spec.trim().eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    let mut values: Vec<Option<i64>> = vec![None; keys.len()];
    for part in spec.split(',') {
        let Some((key, value)) = part.split_once('=') else {
            bail!(
                "{option} {spec}: `{part}` is not KEY=VALUE (keys: {})",
                keys.join(", ")
            );
        };
        let Some(slot) = keys.iter().position(|k| k.eq_ignore_ascii_case(key.trim())) else {
            bail!(
                "{option} {spec}: unknown key `{key}` (keys: {})",
                keys.join(", ")
            );
        };
        let number: i64 = value
            .trim()
            .parse()
            .ok()
            .filter(|n| RULE_VALUES.contains(n))
            .with_context(|| {
                format!(
                    "{option} {spec}: {key} must be a whole number from {} to {}",
                    RULE_VALUES.start(),
                    RULE_VALUES.end()
                )
            })?;
        values[slot] = Some(number);
    }
    let mut parsed = Vec::with_capacity(keys.len());
    for (key, value) in keys.iter().zip(values) {
        parsed.push(value.with_context(|| format!("{option} {spec}: {key} is missing"))?);
    }
    Ok(Some(parsed))
}

impl DrawAdjudication {
    pub(crate) fn parse(spec: &str) -> Result<Option<DrawAdjudication>> {
        Ok(
            parse_keyed(spec, "--draw-adj", &["movenumber", "movecount", "score"])?.map(|v| {
                DrawAdjudication {
                    move_number: v[0] as u32,
                    move_count: v[1] as u32,
                    score: v[2] as i32,
                }
            }),
        )
    }
}

impl ResignAdjudication {
    pub(crate) fn parse(spec: &str) -> Result<Option<ResignAdjudication>> {
        Ok(
            parse_keyed(spec, "--resign-adj", &["movecount", "score"])?.map(|v| {
                ResignAdjudication {
                    move_count: v[0] as u32,
                    score: v[1] as i32,
                }
            }),
        )
    }
}

/// A score an engine reported, from its own side's point of view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Score {
    Centipawns(i32),
    /// Mate in N moves (negative: being mated).
    Mate(i32),
}

impl Score {
    /// Mates count as decisive beyond any adjudication threshold.
    pub(crate) fn centipawns(self) -> i32 {
        const MATE_AS_CP: i32 = 100_000;
        match self {
            // An engine's number, clamped: `i32::MIN` has no absolute value.
            Score::Centipawns(cp) => cp.clamp(-MATE_AS_CP, MATE_AS_CP),
            Score::Mate(n) if n > 0 => MATE_AS_CP,
            Score::Mate(_) => -MATE_AS_CP,
        }
    }
}

/// Tracks the adjudication counters through one game.
#[derive(Debug, Default)]
pub(crate) struct Adjudicator {
    draw: Option<DrawAdjudication>,
    resign: Option<ResignAdjudication>,
    /// Consecutive plies (both engines) whose score stayed inside the draw band.
    drawish_plies: u32,
    /// Consecutive own moves with a losing score, per colour (white, black).
    losing_moves: [u32; 2],
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Adjudication {
    Draw(DrawAdjudication),
    /// The side (0 white, 1 black) that resigns.
    Resign(usize, ResignAdjudication),
}

impl Adjudicator {
    pub(crate) fn new(draw: Option<DrawAdjudication>, resign: Option<ResignAdjudication>) -> Self {
        Self {
            draw,
            resign,
            ..Self::default()
        }
    }

    /// Records the score the mover (0 white, 1 black) reported with its move; `full_move` is
    /// the number of the move just played. A move without a score resets the counters.
    pub(crate) fn record(
        &mut self,
        mover: usize,
        full_move: u32,
        score: Option<Score>,
    ) -> Option<Adjudication> {
        let Some(score) = score.map(Score::centipawns) else {
            self.drawish_plies = 0;
            self.losing_moves[mover] = 0;
            return None;
        };
        if let Some(resign) = self.resign {
            if score <= -resign.score {
                self.losing_moves[mover] += 1;
                if self.losing_moves[mover] >= resign.move_count {
                    return Some(Adjudication::Resign(mover, resign));
                }
            } else {
                self.losing_moves[mover] = 0;
            }
        }
        if let Some(draw) = self.draw {
            if full_move >= draw.move_number && score.abs() <= draw.score {
                self.drawish_plies += 1;
                if self.drawish_plies >= 2 * draw.move_count {
                    return Some(Adjudication::Draw(draw));
                }
            } else {
                self.drawish_plies = 0;
            }
        }
        None
    }
}

/// Per-move deadline for limits without a clock (nodes, depth): a search that takes longer is
/// treated as a hang.
pub(crate) const UNTIMED_MOVE_DEADLINE: Duration = Duration::from_secs(60);

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Rules read from a file may hold any values: their words never fail, and those in
        /// range are exactly those whose specs the flags parse back to the same rules.
        #[test]
        fn rules_from_a_file_are_in_range_exactly_when_their_flags_give_them(
            draw in proptest::option::of((0u32..200_000, 0u32..200_000, -10i32..200_000)),
            resign in proptest::option::of((0u32..200_000, -10i32..200_000)),
        ) {
            let rules = AdjudicationRules {
                draw: draw.map(|(move_number, move_count, score)| DrawAdjudication {
                    move_number,
                    move_count,
                    score,
                }),
                resign: resign.map(|(move_count, score)| ResignAdjudication { move_count, score }),
            };
            proptest::prop_assert!(!rules.words().is_empty());
            let parsed_back = DrawAdjudication::parse(
                &rules.draw_spec().unwrap_or_else(|| "none".to_string()),
            )
            .ok()
            .zip(
                ResignAdjudication::parse(
                    &rules.resign_spec().unwrap_or_else(|| "none".to_string()),
                )
                .ok(),
            );
            proptest::prop_assert_eq!(
                rules.in_range(),
                parsed_back == Some((rules.draw, rules.resign))
            );
            // Kept rules admit any recorded ones; given ones only their own.
            let all = RulesKept { draw: true, resign: true };
            let none = AdjudicationRules { draw: None, resign: None };
            proptest::prop_assert!(all.admits(&none, &rules));
            proptest::prop_assert!(RulesKept::default().admits(&rules, &rules));
            proptest::prop_assert_eq!(
                RulesKept::default().admits(&none, &rules),
                rules == none
            );
        }
    }

    #[test]
    fn an_engine_s_extreme_scores_count_as_mates_not_as_draws() {
        assert_eq!(
            Score::Centipawns(i32::MIN).centipawns(),
            Score::Mate(-1).centipawns()
        );
        assert_eq!(
            Score::Centipawns(i32::MAX).centipawns(),
            Score::Mate(3).centipawns()
        );
        assert_eq!(Score::Centipawns(-42).centipawns(), -42);
    }

    #[test]
    fn a_game_is_expected_to_take_both_sides_limits_over_a_typical_game() {
        let tc = Limit::parse_tc("10+0.1").unwrap();
        // 10 s + 40 × 0.1 s per side.
        assert_eq!(expected_game_time(&[tc; 2]), Some(Duration::from_secs(28)));
        let movetime = Limit::MoveTime { movetime_ms: 20 };
        assert_eq!(
            expected_game_time(&[movetime, tc]),
            Some(Duration::from_millis(800 + 14_000))
        );
        assert_eq!(
            expected_game_time(&[tc, Limit::Nodes { nodes: 5000 }]),
            None
        );
    }

    #[test]
    fn time_controls_parse_in_fastchess_notation() {
        assert_eq!(
            Limit::parse_tc("10+0.1").unwrap(),
            Limit::Clock {
                base_ms: 10_000,
                increment_ms: 100
            }
        );
        assert_eq!(
            Limit::parse_tc("60").unwrap(),
            Limit::Clock {
                base_ms: 60_000,
                increment_ms: 0
            }
        );
        assert_eq!(
            Limit::parse_tc("5+0.05").unwrap().pgn_time_control(),
            "5+0.05"
        );
        assert_eq!(
            Limit::parse_tc("0.5+0.005").unwrap().pgn_time_control(),
            "0.5+0.005"
        );
        for bad in [
            "", "abc", "10+x", "-1+0.1", "0+0", "0+0.1", "inf", "NaN+1", "1e9",
        ] {
            assert!(Limit::parse_tc(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn results_files_with_one_limit_read_as_that_limit_for_both_sides() {
        #[derive(Deserialize)]
        struct Settings {
            #[serde(alias = "limit", deserialize_with = "one_or_per_side")]
            limits: SideLimits,
        }
        let nodes = Limit::Nodes { nodes: 5000 };
        let old: Settings =
            serde_json::from_str(r#"{"limit": {"kind": "nodes", "nodes": 5000}}"#).unwrap();
        assert_eq!(old.limits, [nodes; 2]);
        let clock = Limit::parse_tc("10+0.1").unwrap();
        let new: Settings = serde_json::from_str(&format!(
            r#"{{"limits": {}}}"#,
            serde_json::to_string(&[nodes, clock]).unwrap()
        ))
        .unwrap();
        assert_eq!(new.limits, [nodes, clock]);
        for bad in [
            r#"{"limits": [{"kind": "nodes", "nodes": 1}]}"#,
            r#"{"limits": "nodes 5000"}"#,
            r#"{"limit": {"kind": "nodes"}}"#,
        ] {
            assert!(serde_json::from_str::<Settings>(bad).is_err(), "{bad}");
        }
        assert_eq!(describe_limits(&[nodes; 2]), "nodes 5,000");
        assert_eq!(
            describe_limits(&[nodes, clock]),
            "A nodes 5,000, B tc 10+0.1"
        );
    }

    #[test]
    fn the_ceiling_allows_polling_slack_and_nothing_like_an_endless_search() {
        let ceiling = Limit::Nodes { nodes: 5000 }.ceiling();
        assert_eq!(ceiling.broken_by(Some(5000 + 4096), Some(40)), None);
        assert_eq!(
            ceiling.broken_by(Some(2_000_000), None).as_deref(),
            Some("nodes 2,000,000")
        );
        assert_eq!(ceiling.broken_by(None, None), None);
        let depth = Limit::Depth { depth: 6 }.ceiling();
        assert_eq!(depth.broken_by(Some(u64::MAX), Some(6)), None);
        assert_eq!(depth.broken_by(None, Some(7)).as_deref(), Some("depth 7"));
        assert_eq!(
            Limit::parse_tc("1+0").unwrap().ceiling(),
            Ceiling::default()
        );
        assert_eq!(
            Limit::Nodes { nodes: u64::MAX }.ceiling().nodes,
            Some(u64::MAX)
        );
    }

    #[test]
    fn adjudication_specs_parse_and_none_turns_them_off() {
        assert_eq!(
            DrawAdjudication::parse(DEFAULT_DRAW_ADJ).unwrap(),
            Some(DrawAdjudication {
                move_number: 32,
                move_count: 8,
                score: 10
            })
        );
        assert_eq!(
            ResignAdjudication::parse(DEFAULT_RESIGN_ADJ).unwrap(),
            Some(ResignAdjudication {
                move_count: 3,
                score: 400
            })
        );
        assert_eq!(DrawAdjudication::parse("none").unwrap(), None);
        let rules = AdjudicationRules {
            draw: DrawAdjudication::parse(DEFAULT_DRAW_ADJ).unwrap(),
            resign: ResignAdjudication::parse(DEFAULT_RESIGN_ADJ).unwrap(),
        };
        assert_eq!(
            rules.words(),
            format!("draw {DEFAULT_DRAW_ADJ} and resign {DEFAULT_RESIGN_ADJ}")
        );
        let resign_only = AdjudicationRules {
            draw: None,
            ..rules
        };
        assert_eq!(resign_only.words(), "resign movecount=3,score=400");
        // Each rule's spec is what its flag parses back.
        assert_eq!(
            DrawAdjudication::parse(&rules.draw_spec().unwrap()).unwrap(),
            rules.draw
        );
        assert_eq!(
            ResignAdjudication::parse(&rules.resign_spec().unwrap()).unwrap(),
            rules.resign
        );
        assert_eq!(resign_only.draw_spec(), None);
        let none = AdjudicationRules {
            draw: None,
            resign: None,
        };
        assert_eq!(none.words(), "none");
        assert!(rules.in_range() && none.in_range());
        for broken in [
            AdjudicationRules {
                draw: Some(DrawAdjudication {
                    move_number: 0,
                    move_count: 8,
                    score: 10,
                }),
                resign: None,
            },
            AdjudicationRules {
                draw: None,
                resign: Some(ResignAdjudication {
                    move_count: 3,
                    score: -400,
                }),
            },
            AdjudicationRules {
                draw: None,
                resign: Some(ResignAdjudication {
                    move_count: u32::MAX,
                    score: 400,
                }),
            },
        ] {
            assert!(!broken.in_range(), "{broken:?}");
        }
        for bad in [
            "movecount=3",
            "movecount=3,score=x",
            "foo=1,movecount=3,score=4",
            "movecount=0,score=400",
        ] {
            let error = ResignAdjudication::parse(bad).unwrap_err().to_string();
            assert!(error.contains("--resign-adj"), "{error}");
        }
    }

    #[test]
    fn resign_needs_consecutive_losing_moves_of_one_side() {
        let resign = ResignAdjudication::parse("movecount=3,score=400").unwrap();
        let mut adjudicator = Adjudicator::new(None, resign);
        let lost = Some(Score::Centipawns(-500));
        assert_eq!(adjudicator.record(1, 10, lost), None);
        assert_eq!(adjudicator.record(0, 11, lost), None);
        assert_eq!(adjudicator.record(1, 11, lost), None);
        // A better score breaks the run.
        assert_eq!(
            adjudicator.record(1, 12, Some(Score::Centipawns(-100))),
            None
        );
        assert_eq!(adjudicator.record(1, 13, lost), None);
        assert_eq!(adjudicator.record(1, 14, Some(Score::Mate(-3))), None);
        assert_eq!(
            adjudicator.record(1, 15, lost),
            Some(Adjudication::Resign(1, resign.unwrap()))
        );
    }

    #[test]
    fn draw_needs_both_engines_in_the_band_after_the_move_number() {
        let draw = DrawAdjudication::parse("movenumber=32,movecount=2,score=10").unwrap();
        let mut adjudicator = Adjudicator::new(draw, None);
        let level = Some(Score::Centipawns(5));
        for mover in [0, 1, 0, 1] {
            assert_eq!(adjudicator.record(mover, 20, level), None, "too early");
        }
        assert_eq!(adjudicator.record(0, 32, level), None);
        assert_eq!(adjudicator.record(1, 32, level), None);
        assert_eq!(
            adjudicator.record(0, 33, Some(Score::Centipawns(-30))),
            None
        );
        for mover in [1, 0, 1] {
            assert_eq!(adjudicator.record(mover, 34, level), None);
        }
        assert_eq!(
            adjudicator.record(0, 35, level),
            Some(Adjudication::Draw(draw.unwrap()))
        );
    }
}
