//! The bench protocol (docs/bench-protocol.md): the arguments of `squall bench --json`, and
//! reading and checking its report. The engine adapter runs it.

use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};

/// The bench protocol version this lab understands (docs/bench-protocol.md).
pub const BENCH_SCHEMA_VERSION: u64 = 1;

#[derive(Debug, Clone, Deserialize)]
pub struct BenchReport {
    pub schema_version: u64,
    pub engine: EngineInfo,
    pub depth: u32,
    pub positions: Vec<PositionResult>,
    pub totals: Totals,
    pub eval: EvalCounters,
}

#[derive(Debug, Clone, Deserialize)]
pub struct EngineInfo {
    pub name: String,
    pub version: String,
    #[serde(default)]
    pub features: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct PositionResult {
    pub fen: String,
    pub nodes: u64,
    pub time_ns: u64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Totals {
    pub nodes: u64,
    pub time_ns: u64,
}

/// Exits in protocol order: super-lazy, lazy, full.
pub type TierCounts = [u64; 3];

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EvalCounters {
    pub calls: u64,
    pub exits: Exits,
    pub by_material_bucket: Vec<TierCounts>,
    pub by_side_buckets: Vec<Vec<TierCounts>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exits {
    pub super_lazy: u64,
    pub lazy: u64,
    pub full: u64,
}

impl Exits {
    pub fn as_array(&self) -> TierCounts {
        [self.super_lazy, self.lazy, self.full]
    }
}

pub fn bench_args(depth: Option<u32>, full_eval: bool, positions: Option<&Path>) -> Vec<String> {
    let mut args = vec!["bench".to_string(), "--json".to_string()];
    if let Some(positions) = positions {
        args.push("--positions".to_string());
        args.push(positions.display().to_string());
    }
    if let Some(depth) = depth {
        args.push("--depth".to_string());
        args.push(depth.to_string());
    }
    if full_eval {
        args.push("--full-eval".to_string());
    }
    args
}

pub fn parse_bench(stdout: &[u8]) -> Result<BenchReport> {
    let value: serde_json::Value = serde_json::from_slice(stdout).map_err(|e| {
        anyhow!(
            "the engine's bench output is not JSON ({e}); it starts with: {:?}",
            String::from_utf8_lossy(&stdout[..stdout.len().min(200)])
        )
    })?;
    match value.get("schema_version").and_then(serde_json::Value::as_u64) {
        Some(BENCH_SCHEMA_VERSION) => {}
        Some(other) => bail!(
            "the engine speaks bench schema_version {other}; this lab understands {BENCH_SCHEMA_VERSION}"
        ),
        None => bail!("the engine's bench JSON has no schema_version"),
    }
    let report: BenchReport = serde_json::from_value(value)
        .context("the engine's bench JSON does not match schema_version 1")?;
    validate(&report)?;
    Ok(report)
}

fn validate(report: &BenchReport) -> Result<()> {
    if report.positions.is_empty() {
        bail!("the engine's bench reported no positions");
    }
    let Some(position_nodes) = report
        .positions
        .iter()
        .try_fold(0u64, |sum, p| sum.checked_add(p.nodes))
    else {
        bail!("the engine's bench positions' node counts overflow");
    };
    if position_nodes != report.totals.nodes {
        bail!(
            "the engine's bench totals.nodes ({}) is not the sum of its positions' nodes ({position_nodes})",
            report.totals.nodes
        );
    }
    if report.eval.by_material_bucket.len() != 8 || report.eval.by_side_buckets.len() != 8 {
        bail!("the engine's bench eval buckets are not 8 rows");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_unknown_schema() {
        let error = parse_bench(br#"{"schema_version": 2}"#).unwrap_err();
        assert!(error.to_string().contains("schema_version 2"), "{error}");
        assert!(parse_bench(b"Nodes searched: 5").is_err());
    }
}
