//! What the HTML report reads of a comparison's JSON (docs/lab-json.md). The page is always
//! drawn from the JSON, whether it was just measured (`--export-html`) or stored (`lab
//! report`), so both give the same bytes. Fields the JSON of an older lab lacks are optional,
//! and a `null` number (NaN when written) is `None`.

use anyhow::{bail, Context, Result};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
pub(crate) struct Doc {
    pub(crate) kind: String,
    pub(crate) settings: Settings,
    pub(crate) a: SideSummary,
    pub(crate) b: SideSummary,
    pub(crate) speed: Speed,
    /// Absent in the JSON of a lab before the figures table was recorded.
    #[serde(default)]
    pub(crate) figures: Option<Vec<crate::analysis::compare::Figure>>,
    #[serde(default)]
    pub(crate) instructions: Option<InstructionsDoc>,
    #[serde(default)]
    pub(crate) signature: Option<SignatureDoc>,
    #[serde(rename = "verdict")]
    pub(crate) change: String,
    #[serde(default)]
    pub(crate) warnings: Vec<String>,
    #[serde(default)]
    pub(crate) notes: Vec<String>,
    #[serde(default)]
    pub(crate) functions: Option<Functions>,
    #[serde(default)]
    pub(crate) measured: Option<ProvenanceDoc>,
    /// What the speed is worth in Elo, when a model was found (`compare`, `tiers`).
    #[serde(default)]
    pub(crate) speed_elo: Option<crate::analysis::compare::SpeedEloEstimate>,
}

#[derive(Debug, Deserialize)]
pub struct Settings {
    pub rounds: u32,
    pub(crate) threshold_pct: f64,
    #[serde(default)]
    pub(crate) instr_threshold_pct: Option<f64>,
}

/// The instructions comparison, for the instructions verdict.
#[derive(Debug, Deserialize)]
pub(crate) struct InstructionsDoc {
    pub(crate) comparable: bool,
    pub(crate) per_node_change_pct: Option<f64>,
    pub(crate) flagged: bool,
    #[serde(rename = "verdict")]
    pub(crate) change: crate::analysis::stats::Change,
}

#[derive(Debug, Deserialize)]
pub(crate) struct SignatureDoc {
    pub(crate) changed: bool,
}

/// What a side's instruction count was.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct SideInstructions {
    pub(crate) depth: Option<u32>,
    pub(crate) skipped_reason: Option<String>,
}

/// One revision's figures: what the page reads of an `analysis::compare::SideSummary`.
#[derive(Debug, Deserialize)]
pub(crate) struct SideSummary {
    #[allow(dead_code, reason = "required: serde refuses a side without it")]
    pub(crate) label: String,
    pub(crate) revision: Revision,
    pub(crate) engine: Engine,
    pub(crate) nps: Nps,
    #[serde(default)]
    pub(crate) instructions: SideInstructions,
    #[serde(default)]
    pub(crate) eval: Option<Eval>,
}

#[derive(Debug, Deserialize)]
pub struct Revision {
    pub(crate) spec: String,
    #[serde(default)]
    pub commit: Option<String>,
    pub(crate) tree: String,
}

#[derive(Debug, Deserialize)]
pub struct Engine {
    pub(crate) name: String,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Nps {
    #[allow(
        dead_code,
        reason = "typed: serde refuses a median that is not a number"
    )]
    pub(crate) median: Option<f64>,
    pub(crate) runs: Vec<Option<f64>>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Eval {
    #[allow(dead_code, reason = "required: serde refuses eval counts without it")]
    pub(crate) calls: u64,
    pub(crate) by_material_bucket: Vec<Bucket>,
    #[serde(default)]
    pub(crate) by_side_buckets: Vec<Vec<[u64; 3]>>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Bucket {
    pub(crate) bucket: usize,
    pub(crate) exits: [u64; 3],
    pub(crate) total: u64,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Speed {
    pub(crate) comparable: bool,
    pub(crate) pairing: String,
    pub(crate) cost_ratio: Option<CostRatio>,
    /// Absent in the JSON of a lab before it was recorded.
    #[serde(default)]
    pub(crate) round_ratios: Option<Vec<f64>>,
    #[serde(rename = "verdict")]
    pub(crate) change: String,
}

#[derive(Debug, Deserialize)]
pub(crate) struct CostRatio {
    pub(crate) estimate: Option<f64>,
    pub(crate) ci_low: Option<f64>,
    pub(crate) ci_high: Option<f64>,
    pub(crate) confidence: f64,
    pub(crate) rounds: usize,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Functions {
    /// `requested` (`--functions`) or `instructions-moved` (the default attribution); absent
    /// before the attribution existed.
    #[serde(default)]
    pub(crate) why: Option<String>,
    pub(crate) depth: Option<u32>,
    pub(crate) movers: Vec<Mover>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Mover {
    pub(crate) function: String,
    pub(crate) self_delta: i64,
    pub(crate) self_delta_pct_of_total: f64,
}

/// When, on which host and on which machine: what the page reads of a `machine::Provenance`
/// (a side's measurement, a match shard's start).
#[derive(Debug, Deserialize)]
pub(crate) struct ProvenanceDoc {
    pub(crate) measured_unix: u64,
    pub(crate) hostname: Option<String>,
    pub(crate) machine: Machine,
}

#[derive(Debug, Deserialize)]
pub struct Machine {
    pub cpu_model: String,
    pub cores: usize,
}

/// The kinds of JSON document a page is drawn for.
pub(crate) const KINDS: [&str; 3] = ["compare", "tiers", "baseline-check"];

impl Doc {
    pub(crate) fn from_json(value: &serde_json::Value) -> Result<Self> {
        let kind = value.get("kind").and_then(|kind| kind.as_str());
        match kind {
            Some(kind) if KINDS.contains(&kind) => {}
            Some(kind) => bail!(
                "an HTML report is drawn for a {} report, not for kind \"{kind}\"",
                KINDS.join(", ")
            ),
            None => bail!("not a lab JSON report (no \"kind\" field; see docs/lab-json.md)"),
        }
        Doc::deserialize(value).context("the JSON report lacks a field the HTML report reads")
    }
}

impl SideSummary {
    /// The NPS runs that were measured, in round order, with their round numbers (from 1).
    pub(crate) fn rounds(&self) -> Vec<(usize, f64)> {
        self.nps
            .runs
            .iter()
            .enumerate()
            .filter_map(|(i, nps)| nps.filter(|n| n.is_finite()).map(|n| (i + 1, n)))
            .collect()
    }

    /// `HEAD~1 (1a2b3c4)`: the spec and the short commit, or tree for WORKTREE.
    pub(crate) fn revision_name(&self) -> String {
        let id = self
            .revision
            .commit
            .as_deref()
            .unwrap_or(&self.revision.tree);
        let short = crate::input::short_commit(id);
        format!("{} ({short})", self.revision.spec)
    }
}
