//! What the HTML report reads of a comparison's JSON (docs/lab-json.md). The page is always
//! drawn from the JSON, whether it was just measured (`--export-html`) or stored (`lab
//! report`), so both give the same bytes. Fields the JSON of an older lab lacks are optional,
//! and a `null` number (NaN when written) is `None`.

use anyhow::{bail, Context, Result};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
pub struct Doc {
    pub kind: String,
    pub settings: Settings,
    pub a: Side,
    pub b: Side,
    pub speed: Speed,
    /// Absent in the JSON of a lab before the figures table was recorded.
    #[serde(default)]
    pub figures: Option<Vec<crate::analysis::compare::Figure>>,
    #[serde(default)]
    pub instructions: Option<InstructionsDoc>,
    #[serde(default)]
    pub signature: Option<SignatureDoc>,
    pub verdict: String,
    #[serde(default)]
    pub warnings: Vec<String>,
    #[serde(default)]
    pub notes: Vec<String>,
    #[serde(default)]
    pub functions: Option<Functions>,
    #[serde(default)]
    pub measured: Option<Measured>,
}

#[derive(Debug, Deserialize)]
pub struct Settings {
    pub rounds: u32,
    pub threshold_pct: f64,
    #[serde(default)]
    pub instr_threshold_pct: Option<f64>,
}

/// The instructions comparison, for the instructions verdict.
#[derive(Debug, Deserialize)]
pub struct InstructionsDoc {
    pub comparable: bool,
    pub per_node_change_pct: Option<f64>,
    pub flagged: bool,
    pub verdict: crate::analysis::stats::Verdict,
}

#[derive(Debug, Deserialize)]
pub struct SignatureDoc {
    pub changed: bool,
}

/// What a side's instruction count was.
#[derive(Debug, Default, Deserialize)]
pub struct SideInstructions {
    pub depth: Option<u32>,
    pub skipped_reason: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct Side {
    pub label: String,
    pub revision: Revision,
    pub engine: Engine,
    pub nps: Nps,
    #[serde(default)]
    pub instructions: SideInstructions,
    #[serde(default)]
    pub eval: Option<Eval>,
}

#[derive(Debug, Deserialize)]
pub struct Revision {
    pub spec: String,
    #[serde(default)]
    pub commit: Option<String>,
    pub tree: String,
}

#[derive(Debug, Deserialize)]
pub struct Engine {
    pub name: String,
}

#[derive(Debug, Deserialize)]
pub struct Nps {
    pub median: Option<f64>,
    pub runs: Vec<Option<f64>>,
}

#[derive(Debug, Deserialize)]
pub struct Eval {
    pub calls: u64,
    pub by_material_bucket: Vec<Bucket>,
    #[serde(default)]
    pub by_side_buckets: Vec<Vec<[u64; 3]>>,
}

#[derive(Debug, Deserialize)]
pub struct Bucket {
    pub bucket: usize,
    pub exits: [u64; 3],
    pub total: u64,
}

#[derive(Debug, Deserialize)]
pub struct Speed {
    pub comparable: bool,
    pub pairing: String,
    pub cost_ratio: Option<CostRatio>,
    /// Absent in the JSON of a lab before it was recorded.
    #[serde(default)]
    pub round_ratios: Option<Vec<f64>>,
    pub verdict: String,
}

#[derive(Debug, Deserialize)]
pub struct CostRatio {
    pub estimate: Option<f64>,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    pub confidence: f64,
    pub rounds: usize,
}

#[derive(Debug, Deserialize)]
pub struct Functions {
    /// `requested` (`--functions`) or `instructions-moved` (the default attribution); absent
    /// before the attribution existed.
    #[serde(default)]
    pub why: Option<String>,
    pub depth: Option<u32>,
    pub movers: Vec<Mover>,
}

#[derive(Debug, Deserialize)]
pub struct Mover {
    pub function: String,
    pub self_delta: i64,
    pub self_delta_pct_of_total: f64,
}

#[derive(Debug, Deserialize)]
pub struct Measured {
    pub measured_unix: u64,
    pub hostname: Option<String>,
    pub machine: Machine,
}

#[derive(Debug, Deserialize)]
pub struct Machine {
    pub cpu_model: String,
    pub cores: usize,
}

/// The kinds of JSON document a page is drawn for.
pub const KINDS: [&str; 3] = ["compare", "tiers", "baseline-check"];

impl Doc {
    pub fn from_json(value: &serde_json::Value) -> Result<Self> {
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

impl Side {
    /// The NPS runs that were measured, in round order, with their round numbers (from 1).
    pub fn rounds(&self) -> Vec<(usize, f64)> {
        self.nps
            .runs
            .iter()
            .enumerate()
            .filter_map(|(i, nps)| nps.filter(|n| n.is_finite()).map(|n| (i + 1, n)))
            .collect()
    }

    /// `HEAD~1 (1a2b3c4)`: the spec and the short commit, or tree for WORKTREE.
    pub fn revision_name(&self) -> String {
        let id = self
            .revision
            .commit
            .as_deref()
            .unwrap_or(&self.revision.tree);
        let short = crate::input::prefix_chars(id, 7);
        format!("{} ({short})", self.revision.spec)
    }
}
