//! The stored speed-Elo models: one JSON file per engine binary, time control and machine
//! under `target/lab/speed-elo/`, written atomically, validated on load. A comparison looks
//! one up for its machine, preferring one fitted on A's own binary.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

use super::speed_elo::EloPerDoubling;
use super::stored::{self, StoredFile};
use crate::games::rules::Limit;
use crate::machine::Machine;
use crate::paths::LabPaths;

pub const SPEED_ELO_KIND: &str = "lab-speed-elo";
pub const SPEED_ELO_SCHEMA_VERSION: u32 = 1;

/// The engine a model was fitted on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelEngine {
    /// As given: a revision or `exe:PATH`.
    pub spec: String,
    /// The commit the revision resolved to.
    pub commit: Option<String>,
    /// The build-cache key of the binary, or the git blob id of an `exe:` binary.
    pub binary: String,
}

/// One fitted model and what it was fitted on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpeedEloModel {
    pub kind: String,
    pub schema_version: u32,
    pub engine: ModelEngine,
    /// A's clock; B had `odds ×` it.
    pub limit: Limit,
    pub machine: Machine,
    /// The machine's identity (`history::store::machine_id`): models apply on this machine only.
    pub machine_id: String,
    pub elo_per_doubling: EloPerDoubling,
    /// Games over all odds.
    pub games: u64,
    /// When it was fitted, `YYYY-MM-DD`.
    pub date: String,
}

impl StoredFile for SpeedEloModel {
    const KIND: &'static str = SPEED_ELO_KIND;
    const SCHEMA_VERSION: u32 = SPEED_ELO_SCHEMA_VERSION;
    const INPUT: crate::input::FileCap = crate::input::SPEED_ELO_MODEL;

    fn kind(&self) -> (&str, u32) {
        (&self.kind, self.schema_version)
    }

    /// A clock, and finite numbers in order.
    fn check(&self) -> Result<()> {
        if !matches!(self.limit, Limit::Clock { .. }) {
            bail!("limit is {}, not a clock", self.limit);
        }
        let k = &self.elo_per_doubling;
        let finite = [k.value, k.ci_low, k.ci_high].iter().all(|x| x.is_finite());
        if !finite || k.ci_low > k.value || k.value > k.ci_high {
            bail!(
                "elo_per_doubling {} (CI {} to {}) is not a finite estimate inside its interval",
                k.value,
                k.ci_low,
                k.ci_high
            );
        }
        if self.machine_id.is_empty() || self.engine.binary.is_empty() {
            bail!("machine_id and engine.binary must not be empty");
        }
        Ok(())
    }
}

/// Where the models live: `target/lab/speed-elo/`.
pub fn models_dir(paths: &LabPaths) -> PathBuf {
    paths.root.join("speed-elo")
}

/// The file a model is stored in: `<machine>-<binary>-<time control>.json`.
pub(crate) fn model_path(dir: &Path, model: &SpeedEloModel) -> PathBuf {
    stored::path_for(dir, &model.machine_id, &model.engine.binary, &model.limit)
}

/// Writes `model` atomically under `dir`, replacing the model of the same key.
pub fn save(dir: &Path, model: &SpeedEloModel) -> Result<PathBuf> {
    let path = model_path(dir, model);
    stored::save(&path, model)?;
    Ok(path)
}

/// Reads one model file: a regular file of bounded size, valid JSON, a valid model.
pub fn load(path: &Path) -> Result<SpeedEloModel> {
    stored::load(path)
}

/// Every `.json` file under `dir`, in name order, with its model or why it is unusable. A
/// missing directory has no models.
pub(crate) fn list(dir: &Path) -> Vec<(PathBuf, Result<SpeedEloModel>)> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let model = load(&path);
            (path, model)
        })
        .collect()
}

/// The model a comparison on `machine_id` uses, and whether it was fitted on `binary` itself:
/// one of that binary if there is one, else the newest of the machine (another engine tree's,
/// which the report says). With `limit`, only models of that clock.
pub(crate) fn find(
    dir: &Path,
    machine_id: &str,
    binary: &str,
    limit: Option<&Limit>,
) -> Option<(SpeedEloModel, bool)> {
    let usable: Vec<SpeedEloModel> = list(dir)
        .into_iter()
        .filter_map(|(_, model)| model.ok())
        .filter(|model| model.machine_id == machine_id)
        .filter(|model| !limit.is_some_and(|limit| model.limit != *limit))
        .collect();
    let newest = |models: Vec<SpeedEloModel>| models.into_iter().max_by(|a, b| a.date.cmp(&b.date));
    let (own, other): (Vec<_>, Vec<_>) = usable
        .into_iter()
        .partition(|model| model.engine.binary == binary);
    newest(own)
        .map(|model| (model, true))
        .or_else(|| newest(other).map(|model| (model, false)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::sprt::Estimate;
    use crate::verdict::speed_elo::OddsPoint;

    fn model(binary: &str, machine_id: &str, date: &str, k: f64) -> SpeedEloModel {
        SpeedEloModel {
            kind: SPEED_ELO_KIND.into(),
            schema_version: SPEED_ELO_SCHEMA_VERSION,
            engine: ModelEngine {
                spec: "HEAD".into(),
                commit: Some("abc".into()),
                binary: binary.into(),
            },
            limit: Limit::parse_tc("2+0.02").unwrap(),
            machine: Machine {
                cpu_model: "test cpu".into(),
                cores: 2,
                kernel: None,
                transparent_hugepages: None,
                governor: None,
            },
            machine_id: machine_id.into(),
            elo_per_doubling: EloPerDoubling {
                value: k,
                ci_low: k - 10.0,
                ci_high: k + 10.0,
                points: vec![OddsPoint {
                    odds: 2.0,
                    elo: Estimate {
                        value: k,
                        ci_low: k - 10.0,
                        ci_high: k + 10.0,
                    },
                    games: 200,
                }],
            },
            games: 200,
            date: date.into(),
        }
    }

    #[test]
    fn models_round_trip_and_the_own_binary_comes_first() {
        let dir = tempfile::tempdir().unwrap();
        let own = model("binary-a", "m1", "2026-01-01", 70.0);
        let newer_other = model("binary-b", "m1", "2026-06-01", 90.0);
        let other_machine = model("binary-a", "m2", "2026-07-01", 50.0);
        for m in [&own, &newer_other, &other_machine] {
            save(dir.path(), m).unwrap();
        }
        assert_eq!(load(&model_path(dir.path(), &own)).unwrap(), own);
        assert_eq!(list(dir.path()).len(), 3);
        let (found, same) = find(dir.path(), "m1", "binary-a", None).unwrap();
        assert!(same);
        assert_eq!(found, own);
        let (found, same) = find(dir.path(), "m1", "binary-z", None).unwrap();
        assert!(!same, "another binary's model, newest first");
        assert_eq!(found, newer_other);
        assert!(find(dir.path(), "m3", "binary-a", None).is_none());
        let tc = Limit::parse_tc("10+0.1").unwrap();
        assert!(find(dir.path(), "m1", "binary-a", Some(&tc)).is_none());
    }

    #[test]
    fn bad_files_are_refused_with_their_reason() {
        let dir = tempfile::tempdir().unwrap();
        let mut bad = model("b", "m", "2026-01-01", 70.0);
        bad.elo_per_doubling.value = f64::NAN;
        assert!(save(dir.path(), &bad).is_err(), "never stored");
        let path = dir.path().join("x.json");
        let mut text = serde_json::to_value(model("b", "m", "2026-01-01", 70.0)).unwrap();
        text["schema_version"] = 9.into();
        fs::write(&path, text.to_string()).unwrap();
        let error = format!("{:#}", load(&path).unwrap_err());
        assert!(error.contains("schema_version 9"), "{error}");
        fs::write(&path, "{").unwrap();
        assert!(load(&path).is_err());
        fs::create_dir(dir.path().join("dir.json")).unwrap();
        let listed = list(dir.path());
        assert_eq!(listed.len(), 2);
        assert!(listed.iter().all(|(_, model)| model.is_err()));
        assert!(find(dir.path(), "m", "b", None).is_none());
    }
}
