//! Stored baselines: `baselines/NAME.json`, one measured revision with the machine and
//! toolchain it was measured on.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::machine::{Machine, Toolchain};
use crate::measure::Measurement;
use crate::paths::{write_atomically, LabPaths};

/// Bumped whenever a field changes meaning or disappears; older files are then refused.
pub const BASELINE_SCHEMA_VERSION: u64 = 1;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Baseline {
    pub schema_version: u64,
    pub name: String,
    pub created_unix: u64,
    pub machine: Machine,
    pub toolchain: Toolchain,
    pub settings: BaselineSettings,
    pub measurement: Measurement,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BaselineSettings {
    pub depth: Option<u32>,
    pub rounds: u32,
    pub instr_depth: u32,
    pub features: Vec<String>,
}

pub fn baseline_path(paths: &LabPaths, name: &str) -> Result<PathBuf> {
    let valid = !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !valid {
        bail!("invalid baseline name '{name}': use letters, digits, '-', '_' and '.'");
    }
    Ok(paths.baselines.join(format!("{name}.json")))
}

pub fn load(path: &Path) -> Result<Baseline> {
    let text = fs::read_to_string(path)
        .map_err(|e| anyhow!("cannot read baseline {}: {e}", path.display()))?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| anyhow!("baseline {} is corrupt: {e}", path.display()))?;
    match value
        .get("schema_version")
        .and_then(serde_json::Value::as_u64)
    {
        Some(BASELINE_SCHEMA_VERSION) => {}
        Some(other) => bail!(
            "baseline {} has schema_version {other}; this lab reads {BASELINE_SCHEMA_VERSION}. \
             Save it again with `lab baseline save`",
            path.display()
        ),
        None => bail!("baseline {} is corrupt: no schema_version", path.display()),
    }
    let corrupt =
        |e: &dyn std::fmt::Display| anyhow!("baseline {} is corrupt: {e}", path.display());
    let baseline: Baseline = serde_json::from_value(value).map_err(|e| corrupt(&e))?;
    baseline.measurement.validate().map_err(|e| corrupt(&e))?;
    Ok(baseline)
}

/// Writes through a temporary sibling and a rename, so readers never see half a file.
pub fn save(path: &Path, baseline: &Baseline) -> Result<()> {
    let json = serde_json::to_string_pretty(baseline)? + "\n";
    write_atomically(path, json.as_bytes()).context("writing baseline")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_bad_names() {
        let paths = LabPaths::new(Path::new("/repo"));
        assert!(baseline_path(&paths, "main").is_ok());
        assert!(baseline_path(&paths, "../etc").is_err());
        assert!(baseline_path(&paths, "").is_err());
    }

    #[test]
    fn corrupt_and_old_files_give_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let corrupt = dir.path().join("corrupt.json");
        fs::write(&corrupt, "{ not json").unwrap();
        assert!(load(&corrupt)
            .unwrap_err()
            .to_string()
            .contains("is corrupt"));
        let old = dir.path().join("old.json");
        fs::write(&old, r#"{"schema_version": 0}"#).unwrap();
        assert!(load(&old)
            .unwrap_err()
            .to_string()
            .contains("schema_version 0"));
        let incomplete = dir.path().join("incomplete.json");
        fs::write(&incomplete, r#"{"schema_version": 1, "name": "x"}"#).unwrap();
        assert!(load(&incomplete)
            .unwrap_err()
            .to_string()
            .contains("is corrupt"));
    }
}
