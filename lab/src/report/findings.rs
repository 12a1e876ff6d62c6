//! What a comparison or a verdict found beside its figures, in words: the analysis returns
//! typed [`Warning`]s, [`Note`]s and [`VerdictNote`]s, and every format (terminal, markdown,
//! JSON, HTML) says them in the sentences written here.

use std::fmt;

use serde::{Serialize, Serializer};

use super::{describe_depth, ratio_change, ratio_change_with_ci};
use crate::analysis::compare::{Note, Warning};
use crate::analysis::stats::MIN_ROUNDS_FOR_CI;
use crate::games::summary::{Alike, MIN_GAMES_FOR_NPS_RATIO};
use crate::verdict::{ChargedBy, SpeedSource, VerdictNote};

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::SignatureChanged {
                a_label,
                a_nodes,
                b_label,
                b_nodes,
                change_pct,
            } => write!(
                f,
                "SIGNATURE CHANGED: {a_label} searched {a_nodes} nodes, {b_label} searched \
                 {b_nodes} ({}%). The revisions search different trees, so speed \
                 is compared per node (time per node, instructions per node), not for the bench \
                 as a whole.",
                crate::digits::signed(*change_pct, 2)
            ),
            Warning::DepthsDiffer {
                a_label,
                a_depth,
                b_label,
                b_depth,
            } => write!(
                f,
                "{a_label} was measured at depth {} and {b_label} at depth {}.",
                describe_depth(*a_depth),
                describe_depth(*b_depth)
            ),
            Warning::NpsNotComparable { differences } => {
                let why = if differences.is_empty() {
                    "the baseline was measured on another machine".to_string()
                } else {
                    format!(
                        "the baseline was measured in another setting ({})",
                        differences.join("; ")
                    )
                };
                write!(
                    f,
                    "NPS is not comparable: {why}. Speed is shown but not judged."
                )
            }
            Warning::MachineUnknown { settings } => write!(
                f,
                "The baseline does not record {}: NPS is compared as if they matched; save the \
                 baseline again to record them.",
                settings.join(", ")
            ),
            Warning::TooFewRounds { rounds, df } => write!(
                f,
                "Only {rounds} rounds: the speed interval is a t interval on {df} degree{} of \
                 freedom, valid but too wide to detect any but gross changes. Use --rounds {} \
                 or more.",
                if *df == 1 { "" } else { "s" },
                MIN_ROUNDS_FOR_CI
            ),
            Warning::ToolchainDiffers => f.write_str(
                "The toolchain differs from the baseline's: signature and instruction changes \
                 may come from the compiler, so they are reported but not judged.",
            ),
            Warning::PositionListsDiffer => f.write_str(
                "The bench position lists differ; runs are paired as a whole, not per position.",
            ),
            Warning::InstructionDepthsDiffer => f.write_str(
                "Instruction counts were taken at different depths and are not compared.",
            ),
        }
    }
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::AaRun { binary_key } => write!(
                f,
                "A/A run (--force): A and B are one engine binary ({}), so any change is the \
                 machine's noise.",
                crate::input::short_key(binary_key)
            ),
            Note::SameBinaryNodeRatio { a_nodes, b_nodes } => write!(
                f,
                "A and B run one binary two ways, whose trees may differ by design: B searched \
                 {b_nodes} nodes, A {a_nodes} (node ratio {:.4}); speed is compared per node.",
                *b_nodes as f64 / (*a_nodes).max(1) as f64
            ),
            Note::SittingDrift {
                change_pct,
                baseline_commit,
                baseline_spec,
                revision,
            } => write!(
                f,
                "time per node moved {}% against the baseline with the same \
                 signature and the same instructions per node: the baseline's runs were \
                 measured at another time, and the machine's speed drifts over time (the \
                 interval covers this run's rounds only); `lab compare {} {revision}` \
                 measures both in the same rounds.",
                crate::digits::signed(*change_pct, 2),
                baseline_commit
                    .as_deref()
                    .map_or(baseline_spec.as_str(), crate::input::short_commit)
            ),
            Note::Instructions { side, note } => {
                write!(f, "{}'s instructions: {note}", side.letter())
            }
        }
    }
}

/// The warning of a match whose checked pairs were all the same moves (terminal, markdown and
/// HTML alike); `None` otherwise.
pub(crate) fn played_alike(alike: Alike) -> Option<String> {
    alike.in_every_pair().then(|| {
        format!(
            "A and B played the same moves in all {} pairs checked: under these limits they \
             choose alike at every move, so these games cannot tell them apart",
            alike.checked
        )
    })
}

/// The JSON carries each finding as the sentence the other formats print.
impl Serialize for Warning {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl Serialize for Note {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl fmt::Display for VerdictNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VerdictNote::ModelOfAnotherTree { spec } => write!(
                f,
                "the speed-Elo model was fitted on another engine tree ({spec}), not on A's binary"
            ),
            VerdictNote::SpeedTooCoarse { ratio, rounds } => write!(
                f,
                "the speed's interval ({}) is still too wide for the bounds after {rounds} \
                 rounds: its lower end credits B less than a quiet machine would \
                 (`--speed-from instructions` measures an exact speed term)",
                ratio_change_with_ci(ratio)
            ),
            VerdictNote::SearchEloUnbounded { games } => write!(
                f,
                "the search's Elo is unbounded after {games} games (every pair won or lost)"
            ),
            VerdictNote::GamesContradictSpeed {
                charged,
                by,
                in_games,
                games,
            } => {
                let measured = match by {
                    ChargedBy::Measured(SpeedSource::Instructions) => {
                        format!("{} by instructions per node", ratio_change(charged.value))
                    }
                    ChargedBy::Measured(SpeedSource::Nps) => {
                        format!("{} by paired NPS", ratio_change_with_ci(charged))
                    }
                    ChargedBy::Measured(SpeedSource::Games) => {
                        format!("{} by NPS in the games", ratio_change_with_ci(charged))
                    }
                    ChargedBy::ResumedNodeOdds => format!(
                        "{} in nodes, the resumed games' node odds",
                        ratio_change(charged.value)
                    ),
                };
                write!(
                    f,
                    "in the {games} games B's NPS over A's was {}, outside the speed the \
                     verdict charged ({measured}): the bench's positions or machine state do \
                     not stand for the games', so the speed the verdict credits may be off",
                    ratio_change_with_ci(in_games)
                )
            }
            VerdictNote::DecisionWithheld { h1 } => write!(
                f,
                "the games' SPRT accepted {}, but on a speed their own NPS contradicts in its \
                 favour (above): no decision. `--speed-from games` charges the games' own speed \
                 (equal nodes: `--resume --speed-from games` judges these games again with it)",
                if *h1 { "H1" } else { "H0" }
            ),
            VerdictNote::InterruptedPastBound { h1 } => write!(
                f,
                "the games so far are past the {} bound, but the run was interrupted, so it gives \
                 no decision (exit 130): `--resume` judges them again, and decides before \
                 another game if they still are",
                if *h1 { "H1" } else { "H0" }
            ),
            VerdictNote::NoSpeedFromGames { games: 0 } => write!(
                f,
                "the signatures are equal, so no game was played to read the speed from \
                 (--speed-from games): the speed is the paired NPS rounds'"
            ),
            VerdictNote::NoSpeedFromGames { games } => write!(
                f,
                "{games} games are too few to show their own speed (--speed-from games reads it \
                 from {MIN_GAMES_FOR_NPS_RATIO}): the speed is the paired NPS rounds'"
            ),
            VerdictNote::GamesShowNoSpeed { games } => write!(
                f,
                "after {games} games too few moves carried both sides' nodes and time to read \
                 the speed from the games: the speed is the paired NPS rounds' (--speed-from \
                 nps says so at the start)"
            ),
        }
    }
}

impl Serialize for VerdictNote {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::sprt::Estimate;

    #[test]
    fn a_drift_note_names_the_baseline_by_its_short_commit_or_as_given() {
        let drift = |commit: Option<&str>| {
            Note::SittingDrift {
                change_pct: -0.001,
                baseline_commit: commit.map(str::to_string),
                baseline_spec: "feature/long-branch-name".to_string(),
                revision: "HEAD".to_string(),
            }
            .to_string()
        };
        let with_commit = drift(Some("0123456789abcdef0123456789abcdef01234567"));
        assert!(
            with_commit.contains("`lab compare 0123456789 HEAD`"),
            "{with_commit}"
        );
        assert!(
            with_commit.starts_with("time per node moved +0.00%"),
            "{with_commit}"
        );
        let without = drift(None);
        assert!(
            without.contains("`lab compare feature/long-branch-name HEAD`"),
            "{without}"
        );
    }

    #[test]
    fn a_speed_the_games_contradict_is_named_with_both_figures() {
        let point = |value: f64| Estimate {
            value,
            ci_low: value,
            ci_high: value,
        };
        let note = VerdictNote::GamesContradictSpeed {
            charged: point(1.2369),
            by: ChargedBy::Measured(SpeedSource::Instructions),
            in_games: Estimate {
                value: 1.10,
                ci_low: 1.05,
                ci_high: 1.15,
            },
            games: 480,
        };
        assert_eq!(
            note.to_string(),
            "in the 480 games B's NPS over A's was +10.00% (95% CI +5.00% to +15.00%), outside \
             the speed the verdict charged (+23.69% by instructions per node): the bench's \
             positions or machine state do not stand for the games', so the speed the verdict \
             credits may be off"
        );
    }

    /// Resumed games at node odds were charged the nodes they kept, named as such.
    #[test]
    fn a_contradicted_resumed_node_odds_is_named_as_the_odds_kept() {
        let note = VerdictNote::GamesContradictSpeed {
            charged: Estimate {
                value: 1.2,
                ci_low: 1.2,
                ci_high: 1.2,
            },
            by: ChargedBy::ResumedNodeOdds,
            in_games: Estimate {
                value: 1.05,
                ci_low: 1.04,
                ci_high: 1.06,
            },
            games: 400,
        }
        .to_string();
        assert!(
            note.contains("(+20.00% in nodes, the resumed games' node odds)"),
            "{note}"
        );
    }

    #[test]
    fn an_interrupt_past_a_bound_says_there_is_no_decision_and_what_to_do() {
        let text = VerdictNote::InterruptedPastBound { h1: true }.to_string();
        assert!(
            text.starts_with("the games so far are past the H1 bound")
                && text.contains("no decision (exit 130)")
                && text.contains("`--resume`"),
            "{text}"
        );
        let text = VerdictNote::InterruptedPastBound { h1: false }.to_string();
        assert!(text.contains("past the H0 bound"), "{text}");
    }

    #[test]
    fn a_withheld_decision_names_the_decision_and_what_to_do() {
        let text = VerdictNote::DecisionWithheld { h1: true }.to_string();
        assert!(
            text.contains("accepted H1") && text.contains("--resume --speed-from games"),
            "{text}"
        );
        let text = VerdictNote::DecisionWithheld { h1: false }.to_string();
        assert!(text.contains("accepted H0"), "{text}");
    }

    #[test]
    fn a_speed_not_read_from_games_says_why_and_what_stood_in() {
        let equal = VerdictNote::NoSpeedFromGames { games: 0 }.to_string();
        assert!(
            equal.contains("signatures are equal") && equal.contains("paired NPS"),
            "{equal}"
        );
        let silent = VerdictNote::GamesShowNoSpeed { games: 40 }.to_string();
        assert!(
            silent.starts_with("after 40 games") && silent.contains("paired NPS"),
            "{silent}"
        );
        let few = VerdictNote::NoSpeedFromGames { games: 6 }.to_string();
        assert!(
            few.starts_with("6 games are too few") && few.contains("from 20"),
            "{few}"
        );
    }
}
