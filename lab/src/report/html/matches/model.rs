//! What the match page reads of a match's JSON (`kind: "match"`, docs/lab-json.md), in the
//! games module's own types. Fields an older lab did not write (`measured`, `trajectory`) are
//! optional.

use anyhow::{Context, Result};
use serde::Deserialize;

use crate::games::results::Shard;
use crate::games::sprt::{Estimate, Pentanomial, Wdl};
use crate::games::summary::SprtState;
use crate::games::trajectory::TrajectoryPoint;
use crate::report::html::model::Measured;

#[derive(Debug, Deserialize)]
pub struct MatchDoc {
    /// A, then B.
    pub engines: [MatchEngine; 2],
    pub tc: String,
    pub book: MatchBook,
    pub seed: u64,
    pub games_budget: u64,
    pub shards: Vec<Shard>,
    pub games: u64,
    pub pairs: u64,
    pub wdl: Wdl,
    pub pentanomial: Pentanomial,
    pub elo: Option<Estimate>,
    #[serde(default)]
    pub nelo: Option<Estimate>,
    #[serde(default)]
    pub los: Option<f64>,
    pub sprt: Option<SprtState>,
    pub verdict: String,
    /// `None` for a merge.
    #[serde(default)]
    pub results_file: Option<String>,
    #[serde(default)]
    pub measured: Option<Measured>,
    /// Of a merge: where and when each shard was started.
    #[serde(default)]
    pub shards_started: Vec<ShardStarted>,
    /// `None` in the JSON of a lab from before the trajectory was recorded.
    #[serde(default)]
    pub trajectory: Option<Vec<TrajectoryPoint>>,
}

#[derive(Debug, Deserialize)]
pub struct ShardStarted {
    pub shard: Shard,
    #[serde(flatten)]
    pub started: Measured,
}

#[derive(Debug, Deserialize)]
pub struct MatchEngine {
    pub spec: String,
    pub name: String,
    #[serde(default)]
    pub commit: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct MatchBook {
    pub source: String,
    pub openings: u64,
}

impl MatchDoc {
    pub fn from_json(value: &serde_json::Value) -> Result<Self> {
        MatchDoc::deserialize(value).context("the match JSON lacks a field the HTML report reads")
    }
}
