//! Executing the engine: one `squall bench --json` per fresh process, or one under callgrind.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::paths::remove_if_exists;
use crate::process::{require_success, run_with_timeout};

/// The bench protocol version this lab understands (docs/bench-protocol.md).
pub const BENCH_SCHEMA_VERSION: u64 = 1;
/// Callgrind slows the engine down by well over an order of magnitude.
const CALLGRIND_TIMEOUT_FACTOR: u32 = 20;

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

#[derive(Debug, Clone)]
pub struct BenchRunner {
    pub binary: PathBuf,
    pub depth: Option<u32>,
    /// Runs `bench --full-eval`: the same binary with both cheap-tier exits off.
    pub full_eval: bool,
    /// `bench --positions FILE` instead of the engine's built-in list.
    pub positions: Option<PathBuf>,
    pub timeout: Duration,
}

impl BenchRunner {
    pub fn run(&self) -> Result<BenchReport> {
        let mut command = Command::new(&self.binary);
        command.args(bench_args(
            self.depth,
            self.full_eval,
            self.positions.as_deref(),
        ));
        let what = format!("`{} bench --json`", self.binary.display());
        let finished = run_with_timeout(command, self.timeout, &what)?;
        require_success(&finished, &format!("the engine {what}"))?;
        parse_bench(&finished.stdout)
    }

    /// Total instructions (callgrind `Ir`) and the bench report of one run at `depth`.
    pub fn instructions(
        &self,
        valgrind: &Path,
        depth: u32,
        out_file: &Path,
    ) -> Result<(u64, BenchReport)> {
        remove_if_exists(out_file)?;
        let mut command = Command::new(valgrind);
        command
            .arg("--tool=callgrind")
            .arg(format!("--callgrind-out-file={}", out_file.display()))
            .arg(&self.binary)
            .args(bench_args(
                Some(depth),
                self.full_eval,
                self.positions.as_deref(),
            ));
        let what = format!("callgrind on `{} bench`", self.binary.display());
        let finished = run_with_timeout(command, self.timeout * CALLGRIND_TIMEOUT_FACTOR, &what)?;
        require_success(&finished, &what)?;
        let report = parse_bench(&finished.stdout)?;
        let counts = std::fs::read_to_string(out_file)
            .with_context(|| format!("reading callgrind output {}", out_file.display()))?;
        remove_if_exists(out_file)?;
        Ok((parse_callgrind_total(&counts)?, report))
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

/// Reads the `summary:` (or, in newer valgrind, `totals:`) line's first event count, which is
/// `Ir` with callgrind's default events.
pub fn parse_callgrind_total(contents: &str) -> Result<u64> {
    let line = contents
        .lines()
        .find(|line| line.starts_with("summary:"))
        .or_else(|| contents.lines().find(|line| line.starts_with("totals:")))
        .ok_or_else(|| anyhow!("callgrind output has no summary/totals line"))?;
    line.split_whitespace()
        .nth(1)
        .and_then(|count| count.parse().ok())
        .ok_or_else(|| anyhow!("cannot read the instruction count in callgrind line {line:?}"))
}

/// valgrind on PATH, or LAB_VALGRIND when set (which also lets tests simulate its absence).
pub fn find_valgrind() -> Option<PathBuf> {
    if let Some(explicit) = std::env::var_os("LAB_VALGRIND") {
        let path = PathBuf::from(explicit);
        return path.is_file().then_some(path);
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join("valgrind"))
        .find(|candidate| candidate.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_callgrind_summary_and_totals() {
        assert_eq!(
            parse_callgrind_total("events: Ir\nsummary: 12345\n").unwrap(),
            12345
        );
        assert_eq!(
            parse_callgrind_total("events: Ir\ntotals: 777 1\n").unwrap(),
            777
        );
        assert!(parse_callgrind_total("events: Ir\n").is_err());
    }

    #[test]
    fn rejects_unknown_schema() {
        let error = parse_bench(br#"{"schema_version": 2}"#).unwrap_err();
        assert!(error.to_string().contains("schema_version 2"), "{error}");
        assert!(parse_bench(b"Nodes searched: 5").is_err());
    }
}
