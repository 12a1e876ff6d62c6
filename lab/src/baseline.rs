//! Stored baselines: `baselines/NAME.json`, one measured revision with the machine and
//! toolchain it was measured on.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::analysis::measure::{Invalid, Measurement};
use crate::machine::{Machine, Toolchain};
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

pub(crate) fn baseline_path(paths: &LabPaths, name: &str) -> Result<PathBuf> {
    if !valid_name(name) {
        bail!("invalid baseline name '{name}': use letters, digits, '-', '_' and '.'");
    }
    Ok(paths.baselines.join(format!("{name}.json")))
}

/// A name `baseline save` takes: letters, digits, `-`, `_` and `.`, not starting with a dot. A
/// stored file is held to it too, since reports print the name among their own words.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

pub fn load(path: &Path) -> Result<Baseline> {
    let text = crate::input::read_text(path, crate::input::BASELINE)?;
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
    let baseline: Baseline = serde_json::from_value(value)
        .map_err(|e| anyhow!("baseline {} is corrupt: {e}", path.display()))?;
    baseline.validate().map_err(|invalid| {
        anyhow!(
            "baseline {} is invalid: field `{}`: {}",
            path.display(),
            invalid.field,
            invalid.problem
        )
    })?;
    Ok(baseline)
}

/// Most measurement rounds a stored baseline may ask `baseline check` to repeat.
pub(crate) const MAX_ROUNDS: u32 = 10_000;
/// Deepest bench a stored baseline may ask for (the engine's own limit on search depth).
pub(crate) const MAX_DEPTH: u32 = 64;

impl Baseline {
    /// Checks every field that figures or a later `baseline check` rely on; the error names it.
    pub(crate) fn validate(&self) -> Result<(), Invalid> {
        let invalid = |field: &str, problem: String| Invalid {
            field: field.to_string(),
            problem,
        };
        if !valid_name(&self.name) {
            return Err(invalid(
                "name",
                "not a name `baseline save` takes (letters, digits, '-', '_' and '.')".to_string(),
            ));
        }
        if self.machine.cores == 0 {
            return Err(invalid("machine.cores", "0 cores".to_string()));
        }
        if self.toolchain.rustc.trim().is_empty() {
            return Err(invalid("toolchain.rustc", "empty".to_string()));
        }
        let settings = &self.settings;
        if !(2..=MAX_ROUNDS).contains(&settings.rounds) {
            return Err(invalid(
                "settings.rounds",
                format!(
                    "{}: a measurement has 2 to {MAX_ROUNDS} rounds (the signature check needs two)",
                    settings.rounds
                ),
            ));
        }
        if !(1..=MAX_DEPTH).contains(&settings.instr_depth) {
            return Err(invalid(
                "settings.instr_depth",
                format!(
                    "{}: a bench depth is 1 to {MAX_DEPTH}",
                    settings.instr_depth
                ),
            ));
        }
        if let Some(depth) = settings.depth.filter(|d| !(1..=MAX_DEPTH).contains(d)) {
            return Err(invalid(
                "settings.depth",
                format!("{depth}: a bench depth is 1 to {MAX_DEPTH}"),
            ));
        }
        if let Some(index) = settings.features.iter().position(|f| f.trim().is_empty()) {
            return Err(invalid(
                &format!("settings.features[{index}]"),
                "an empty feature name".to_string(),
            ));
        }
        self.measurement.validate().map_err(|inner| Invalid {
            field: format!("measurement.{}", inner.field),
            problem: inner.problem,
        })?;
        let runs = self.measurement.runs_time_ns.len();
        if runs != settings.rounds as usize {
            return Err(invalid(
                "measurement.runs_time_ns",
                format!("{runs} runs, but settings.rounds is {}", settings.rounds),
            ));
        }
        Ok(())
    }
}

/// Writes through a temporary sibling and a rename, so readers never see half a file.
pub fn save(path: &Path, baseline: &Baseline) -> Result<()> {
    let json = serde_json::to_string_pretty(baseline)? + "\n";
    write_atomically(path, json.as_bytes()).context("writing baseline")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

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
