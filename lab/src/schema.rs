//! The lab's JSON documents: their schema versions and `kind` tags (docs/lab-json.md).

use serde::{Deserialize, Serialize};

/// Version of the lab's own JSON reports but the match's: comparisons, tiers, bench, baselines,
/// profile, history and bisect, calibration, tune, speed-Elo, verdict and frontier.
pub const LAB_JSON_SCHEMA_VERSION: u32 = 2;
/// Version of `lab match`'s JSON report.
pub(crate) const MATCH_JSON_SCHEMA_VERSION: u32 = 1;

/// What a JSON document reports; serialised as its `kind` field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    Compare,
    Tiers,
    BaselineCheck,
    Bench,
    Baseline,
    Profile,
    Match,
    Calibration,
    History,
    Bisect,
    Tune,
    SpeedElo,
    Verdict,
    /// `lab compare` of two revisions that resolve to one engine binary: nothing measured.
    SameBinary,
    /// `lab frontier`: margin-table levels' exceeded rates against their verdicts' Elo.
    Frontier,
}

impl Kind {
    /// The tag as the JSON writes it, which terminal and markdown titles also show.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Compare => "compare",
            Kind::Tiers => "tiers",
            Kind::BaselineCheck => "baseline-check",
            Kind::Bench => "bench",
            Kind::Baseline => "baseline",
            Kind::Profile => "profile",
            Kind::Match => "match",
            Kind::Calibration => "calibration",
            Kind::History => "history",
            Kind::Bisect => "bisect",
            Kind::Tune => "tune",
            Kind::SpeedElo => "speed-elo",
            Kind::Verdict => "verdict",
            Kind::SameBinary => "same-binary",
            Kind::Frontier => "frontier",
        }
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_serialise_as_their_names() {
        for kind in [
            Kind::Compare,
            Kind::Tiers,
            Kind::BaselineCheck,
            Kind::Bench,
            Kind::Baseline,
            Kind::Profile,
            Kind::Match,
            Kind::Calibration,
            Kind::History,
            Kind::Bisect,
            Kind::Tune,
            Kind::SpeedElo,
            Kind::Verdict,
            Kind::SameBinary,
            Kind::Frontier,
        ] {
            assert_eq!(
                serde_json::to_string(&kind).unwrap(),
                format!("\"{}\"", kind.name())
            );
        }
    }
}
