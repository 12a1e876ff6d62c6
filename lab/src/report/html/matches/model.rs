//! What the match page reads of a match's JSON (`kind: "match"`, docs/lab-json.md), in the
//! games module's own types. Fields an older lab did not write (`measured`, `trajectory`) are
//! optional.

use anyhow::{Context, Result};
use serde::Deserialize;

use crate::games::results::Shard;
use crate::games::rules::AdjudicationRules;
use crate::games::sprt::{Estimate, Pentanomial, Wdl};
use crate::games::summary::{
    Alike, NpsRatioInGames, NpsRatioOfRun, NpsRatioOfSitting, SearchInGames, SprtState,
};
use crate::games::trajectory::TrajectoryPoint;
use crate::report::html::model::ProvenanceDoc;

#[derive(Debug, Deserialize)]
pub(crate) struct MatchDoc {
    /// A, then B.
    pub(crate) engines: [MatchEngine; 2],
    pub(crate) tc: String,
    pub(crate) book: MatchBook,
    pub(crate) seed: u64,
    #[serde(rename = "games_budget")]
    pub(crate) max_games: u64,
    pub(crate) shards: Vec<Shard>,
    pub(crate) games: u64,
    pub(crate) pairs: u64,
    pub(crate) wdl: Wdl,
    pub(crate) pentanomial: Pentanomial,
    pub(crate) elo: Option<Estimate>,
    #[serde(default)]
    pub(crate) nelo: Option<Estimate>,
    #[serde(default)]
    pub(crate) los: Option<f64>,
    pub(crate) sprt: Option<SprtState>,
    #[serde(rename = "verdict")]
    pub(crate) conclusion: String,
    /// `None` for a merge.
    #[serde(default)]
    pub(crate) results_file: Option<String>,
    #[serde(default)]
    pub(crate) measured: Option<ProvenanceDoc>,
    /// Of a merge: where and when each shard was started.
    #[serde(default)]
    pub(crate) shards_started: Vec<ShardStarted>,
    /// `None` in the JSON of a lab from before the trajectory was recorded.
    #[serde(default)]
    pub(crate) trajectory: Option<Vec<TrajectoryPoint>>,
    /// Zero in the JSON of a lab from before it was recorded: nothing checked, no warning.
    #[serde(default)]
    pub(crate) alike: Alike,
    /// Zero moves in the JSON of a lab from before it was recorded: no rows.
    #[serde(default)]
    pub(crate) search_in_games: [SearchInGames; 2],
    #[serde(default)]
    pub(crate) nps_ratio_in_games: Option<NpsRatioInGames>,
    /// Empty in the JSON of a lab from before it was recorded, or below 100 games.
    #[serde(default)]
    pub(crate) nps_ratio_by_run: Vec<NpsRatioOfRun>,
    /// Empty in the JSON of a lab from before it was recorded, or below two sittings.
    #[serde(default)]
    pub(crate) nps_ratio_by_sitting: Vec<NpsRatioOfSitting>,
    /// `None` in the JSON of a lab from before it was recorded: not shown.
    #[serde(default)]
    pub(crate) adjudication: Option<AdjudicationRules>,
    /// `None` for a merge: no time to a decision is given.
    #[serde(default)]
    pub(crate) games_per_minute: Option<f64>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct ShardStarted {
    pub(crate) shard: Shard,
    #[serde(flatten)]
    pub(crate) started: ProvenanceDoc,
}

#[derive(Debug, Deserialize)]
pub(crate) struct MatchEngine {
    pub(crate) spec: String,
    pub(crate) name: String,
    #[serde(default)]
    pub(crate) commit: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct MatchBook {
    pub(crate) source: String,
    pub(crate) openings: u64,
}

impl MatchDoc {
    pub(crate) fn from_json(value: &serde_json::Value) -> Result<Self> {
        MatchDoc::deserialize(value).context("the match JSON lacks a field the HTML report reads")
    }
}
