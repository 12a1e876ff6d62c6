//! The bench protocol (docs/bench-protocol.md): the arguments of `squall bench --json`, and
//! reading and checking its report. The engine adapter runs it.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};
use squall::tier::{MATERIAL_BUCKETS, SIDE_BUCKETS, TIERS};

use crate::process::{require_success, run_with_timeout};

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
    /// The margin tables compiled into the binary; `None` from revisions that predate the field.
    #[serde(default)]
    pub margin_tables: Option<MarginTables>,
    /// QSearch futility's base margins by stand-pat tier; `None` before the field.
    #[serde(default)]
    pub futility_base_margin_by_source: Option<[i32; TIERS]>,
}

/// One margin table as the engine reports it: its low, high and median entry per side bucket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MarginTable {
    pub lo: [i32; SIDE_BUCKETS],
    pub hi: [i32; SIDE_BUCKETS],
    pub p50: [i32; SIDE_BUCKETS],
}

/// `engine.margin_tables`, named after the histogram sets the tables are generated from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MarginTables {
    pub king: MarginTable,
    pub lazy_residual: MarginTable,
    pub super_lazy_residual: MarginTable,
}

/// How long the one-ply bench that reports a binary's constants may take: it searches for
/// milliseconds, so this only bounds a hang.
const CONSTANTS_BENCH_TIMEOUT: Duration = Duration::from_secs(120);

/// The `engine` object of a one-ply bench of `binary`: what it says about itself, with the
/// calibrated constants it was compiled with where its protocol has them.
pub fn reported_engine(binary: &Path) -> Result<EngineInfo> {
    let mut command = Command::new(binary);
    command.args(bench_args(Some(1), false, None));
    let what = format!("the bench of {}", binary.display());
    let finished = run_with_timeout(command, CONSTANTS_BENCH_TIMEOUT, &what)?;
    require_success(&finished, &what)?;
    Ok(parse_bench(&finished.stdout)
        .with_context(|| format!("reading {what}"))?
        .engine)
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
    if report.eval.by_material_bucket.len() != MATERIAL_BUCKETS
        || report.eval.by_side_buckets.len() != SIDE_BUCKETS
    {
        bail!("the engine's bench eval buckets are not {MATERIAL_BUCKETS} rows");
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

    fn document(engine: serde_json::Value) -> Vec<u8> {
        let rows = vec![[0u64; 3]; 8];
        serde_json::json!({
            "schema_version": 1,
            "engine": engine,
            "depth": 1,
            "positions": [{"fen": "x", "nodes": 5, "time_ns": 1}],
            "totals": {"nodes": 5, "time_ns": 1},
            "eval": {
                "calls": 0,
                "exits": {"super_lazy": 0, "lazy": 0, "full": 0},
                "by_material_bucket": rows,
                "by_side_buckets": vec![rows.clone(); 8],
            },
        })
        .to_string()
        .into_bytes()
    }

    #[test]
    fn reads_the_calibrated_constants_and_their_absence_in_older_revisions() {
        let old = parse_bench(&document(
            serde_json::json!({"name": "squall", "version": "0.1.0"}),
        ))
        .unwrap();
        assert_eq!(old.engine.margin_tables, None);
        assert_eq!(old.engine.futility_base_margin_by_source, None);
        let table = |base: i32| {
            let row = |v: i32| vec![v; 8];
            serde_json::json!({"lo": row(base), "hi": row(base + 1), "p50": row(base + 2)})
        };
        let new = parse_bench(&document(serde_json::json!({
            "name": "squall",
            "version": "0.1.0",
            "margin_tables": {
                "king": table(0), "lazy_residual": table(10), "super_lazy_residual": table(20)
            },
            "futility_base_margin_by_source": [350, 175, 100],
        })))
        .unwrap();
        let tables = new.engine.margin_tables.unwrap();
        assert_eq!(
            (
                tables.king.hi[7],
                tables.lazy_residual.p50[0],
                tables.super_lazy_residual.lo[3]
            ),
            (1, 12, 20)
        );
        assert_eq!(
            new.engine.futility_base_margin_by_source,
            Some([350, 175, 100])
        );
    }
}
