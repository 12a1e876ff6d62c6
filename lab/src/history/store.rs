//! The history store: one JSON file per measured commit in a series, where a series is one
//! machine, one toolchain and one set of measurement settings. Figures from another machine,
//! toolchain, depth, round count or instruction depth are another series, never mixed in.
//!
//! Layout: `<store>/<machine id>-<toolchain id>-<settings id>/<commit>.json`, each id the first
//! 12 hex digits of the SHA-1 of its identity fields (stable across lab versions and hosts).
//! Files are written atomically; a file that cannot be read, or whose recorded key does not
//! match its place, is measured again. A commit that could not be built or measured is a failed
//! point, `<commit>.failed.json`, with the end of its error ([`FAILURE_TAIL_BYTES`]): it is not
//! tried again unless asked (`--retry-failed`), and a later measurement replaces it.

use std::path::{Path, PathBuf};

use anyhow::Result;
use git2::{ObjectType, Oid};
use serde::{Deserialize, Serialize};

use crate::analysis::measure::Measurement;
use crate::calendar::now_unix;
use crate::machine::{Machine, Toolchain};
use crate::paths::{remove_if_exists, write_atomically};

/// Bumped when a stored field changes meaning; files of another version are measured again.
pub(crate) const HISTORY_SCHEMA_VERSION: u32 = 1;

/// Hex digits of each id in a series name.
const ID_LEN: usize = 12;

/// Most bytes of a failure's error kept in the store: its end, where a build's last lines are.
pub(crate) const FAILURE_TAIL_BYTES: usize = 4096;

/// The settings that make figures of two runs comparable. Any difference is another series.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeriesSettings {
    /// The engine adapter (`squall`, or the name in lab.toml).
    pub engine: String,
    /// `None`: the engine's default bench depth.
    pub depth: Option<u32>,
    pub rounds: u32,
    pub instr_depth: u32,
    /// False with `--no-instructions`.
    pub instructions: bool,
    /// Extra cargo features, sorted and without duplicates.
    pub features: Vec<String>,
    /// What else decides the benched binary and its bench (`EngineAdapter::definition`): for
    /// a `lab.toml` engine its build directory, build and bench commands, build environment
    /// and compilers. Absent for squall, whose series ids are what they were without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_definition: Option<String>,
}

/// One series: where its files live and what they must record.
#[derive(Debug, Clone)]
pub struct Series {
    pub dir: PathBuf,
    pub(crate) name: String,
    pub(crate) machine_id: String,
    pub(crate) toolchain_id: String,
    pub(crate) settings_id: String,
    pub(crate) machine: Machine,
    pub(crate) toolchain: Toolchain,
    pub(crate) settings: SeriesSettings,
}

/// A stored measurement of one commit.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Entry {
    pub(crate) schema_version: u32,
    pub(crate) commit: String,
    pub(crate) machine_id: String,
    pub(crate) toolchain_id: String,
    pub(crate) settings_id: String,
    pub(crate) measured_unix: u64,
    pub(crate) machine: Machine,
    pub(crate) toolchain: Toolchain,
    pub(crate) settings: SeriesSettings,
    pub(crate) measurement: Measurement,
}

/// What failed at a commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Stage {
    Build,
    Measure,
}

impl Stage {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Stage::Build => "build",
            Stage::Measure => "measure",
        }
    }
}

/// A commit of the series that could not be built or measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Failure {
    pub(crate) schema_version: u32,
    pub(crate) commit: String,
    pub(crate) machine_id: String,
    pub(crate) toolchain_id: String,
    pub(crate) settings_id: String,
    pub(crate) failed_unix: u64,
    pub(crate) stage: Stage,
    /// The end of the error, at most [`FAILURE_TAIL_BYTES`] bytes.
    pub(crate) error: String,
}

/// What the store holds for a commit.
pub enum Stored {
    Found(Box<Entry>),
    /// A failed point of this series.
    Failed(Box<Failure>),
    Missing,
    /// A file is there but cannot be used; why, in one line.
    Unusable(String),
}

/// The first [`ID_LEN`] hex digits of the SHA-1 of `description`.
pub(crate) fn short_id(description: &str) -> String {
    Oid::hash_object(ObjectType::Blob, description.as_bytes())
        .map(|oid| oid.to_string()[..ID_LEN].to_string())
        // Hashing bytes in memory does not fail; a constant keeps the series well-formed anyway.
        .unwrap_or_else(|_| "0".repeat(ID_LEN))
}

/// The machine's identity: CPU, cores, kernel, THP mode and governor.
pub fn machine_id(machine: &Machine) -> String {
    let setting = |value: &Option<String>| value.clone().unwrap_or_default();
    short_id(&format!(
        "cpu {}\ncores {}\nkernel {}\nthp {}\ngovernor {}\n",
        machine.cpu_model,
        machine.cores,
        setting(&machine.kernel),
        setting(&machine.transparent_hugepages),
        setting(&machine.governor)
    ))
}

/// The toolchain's identity: `rustc -vV`, RUSTFLAGS and target features.
pub(crate) fn toolchain_id(toolchain: &Toolchain) -> String {
    short_id(&format!(
        "rustc {}\nrustflags {}\ntarget features {}\n",
        toolchain.rustc,
        toolchain.rustflags,
        toolchain.target_features.join(",")
    ))
}

pub(crate) fn settings_id(settings: &SeriesSettings) -> String {
    let definition = settings
        .engine_definition
        .as_ref()
        .map_or_else(String::new, |definition| {
            format!("engine definition\n{definition}")
        });
    short_id(&format!(
        "engine {}\ndepth {}\nrounds {}\ninstr depth {}\ninstructions {}\nfeatures {}\n{definition}",
        settings.engine,
        settings
            .depth
            .map_or_else(|| "default".to_string(), |d| d.to_string()),
        settings.rounds,
        settings.instr_depth,
        settings.instructions,
        settings.features.join(",")
    ))
}

impl Series {
    pub fn new(
        store: &Path,
        machine: Machine,
        toolchain: Toolchain,
        settings: SeriesSettings,
    ) -> Self {
        let machine_id = machine_id(&machine);
        let toolchain_id = toolchain_id(&toolchain);
        let settings_id = settings_id(&settings);
        let name = format!("{machine_id}-{toolchain_id}-{settings_id}");
        Self {
            dir: store.join(&name),
            name,
            machine_id,
            toolchain_id,
            settings_id,
            machine,
            toolchain,
            settings,
        }
    }

    pub fn path(&self, commit: &str) -> PathBuf {
        self.dir.join(format!("{commit}.json"))
    }

    pub(crate) fn failure_path(&self, commit: &str) -> PathBuf {
        self.dir.join(format!("{commit}.failed.json"))
    }

    /// The stored measurement of `commit`, checked against this series' key; else its failed
    /// point.
    pub fn load(&self, commit: &str) -> Stored {
        match self.load_entry(commit) {
            Stored::Missing => self.load_failure(commit),
            stored => stored,
        }
    }

    fn load_failure(&self, commit: &str) -> Stored {
        let path = self.failure_path(commit);
        let text = match crate::input::read_text(&path, crate::input::STORE_FILE) {
            Ok(text) => text,
            Err(error) if error.is_not_found() => return Stored::Missing,
            Err(error) => return Stored::Unusable(error.to_string()),
        };
        let failure: Failure = match serde_json::from_str(&text) {
            Ok(failure) => failure,
            Err(error) => {
                return Stored::Unusable(format!("{} is corrupt: {error}", path.display()))
            }
        };
        let key = (
            failure.schema_version,
            failure.commit.as_str(),
            failure.machine_id.as_str(),
            failure.toolchain_id.as_str(),
            failure.settings_id.as_str(),
        );
        let expected = (
            HISTORY_SCHEMA_VERSION,
            commit,
            self.machine_id.as_str(),
            self.toolchain_id.as_str(),
            self.settings_id.as_str(),
        );
        if key != expected || failure.error.len() > FAILURE_TAIL_BYTES {
            return Stored::Unusable(format!(
                "{} is unusable: its schema version, commit, series or error length is not \
                 this series' failed point",
                path.display()
            ));
        }
        Stored::Failed(Box::new(failure))
    }

    fn load_entry(&self, commit: &str) -> Stored {
        let path = self.path(commit);
        let text = match crate::input::read_text(&path, crate::input::STORE_FILE) {
            Ok(text) => text,
            Err(error) if error.is_not_found() => return Stored::Missing,
            Err(error) => return Stored::Unusable(error.to_string()),
        };
        let entry: Entry = match serde_json::from_str(&text) {
            Ok(entry) => entry,
            Err(error) => {
                return Stored::Unusable(format!("{} is corrupt: {error}", path.display()))
            }
        };
        let problem = if entry.schema_version != HISTORY_SCHEMA_VERSION {
            Some(format!(
                "schema_version {} (this lab reads {HISTORY_SCHEMA_VERSION})",
                entry.schema_version
            ))
        } else if entry.commit != commit {
            Some(format!("it records commit {}", entry.commit))
        } else if entry.machine != self.machine
            || entry.toolchain != self.toolchain
            || entry.settings != self.settings
        {
            Some("its machine, toolchain or settings are not this series'".to_string())
        } else {
            entry
                .measurement
                .validate()
                .err()
                .map(|invalid| format!("field `{}`: {}", invalid.field, invalid.problem))
        };
        match problem {
            Some(problem) => Stored::Unusable(format!("{} is unusable: {problem}", path.display())),
            None => Stored::Found(Box::new(entry)),
        }
    }

    /// Stores the measurement of `commit`, replacing any earlier file whole.
    pub(crate) fn save(&self, commit: &str, measurement: &Measurement) -> Result<Entry> {
        let entry = Entry {
            schema_version: HISTORY_SCHEMA_VERSION,
            commit: commit.to_string(),
            machine_id: self.machine_id.clone(),
            toolchain_id: self.toolchain_id.clone(),
            settings_id: self.settings_id.clone(),
            measured_unix: now_unix(),
            machine: self.machine.clone(),
            toolchain: self.toolchain.clone(),
            settings: self.settings.clone(),
            measurement: measurement.clone(),
        };
        let text = serde_json::to_string_pretty(&entry)? + "\n";
        write_atomically(&self.path(commit), text.as_bytes())?;
        remove_if_exists(&self.failure_path(commit))?;
        Ok(entry)
    }

    /// Records that `commit` failed at `stage`, keeping the end of `error`.
    pub(crate) fn save_failure(&self, commit: &str, stage: Stage, error: &str) -> Result<Failure> {
        let failure = Failure {
            schema_version: HISTORY_SCHEMA_VERSION,
            commit: commit.to_string(),
            machine_id: self.machine_id.clone(),
            toolchain_id: self.toolchain_id.clone(),
            settings_id: self.settings_id.clone(),
            failed_unix: now_unix(),
            stage,
            error: tail(error, FAILURE_TAIL_BYTES),
        };
        let text = serde_json::to_string_pretty(&failure)? + "\n";
        write_atomically(&self.failure_path(commit), text.as_bytes())?;
        Ok(failure)
    }
}

/// The last `max` bytes of `text` at most, cut at a character boundary after a `…` when cut.
pub(crate) fn tail(text: &str, max: usize) -> String {
    const CUT: &str = "…";
    if text.len() <= max {
        return text.to_string();
    }
    let mut start = text.len() - (max - CUT.len());
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("{CUT}{}", &text[start..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tail_keeps_the_end_within_its_bound() {
        assert_eq!(tail("short", 10), "short");
        let long = format!("{}é end", "x".repeat(5000));
        let kept = tail(&long, FAILURE_TAIL_BYTES);
        assert!(kept.len() <= FAILURE_TAIL_BYTES, "{}", kept.len());
        assert!(kept.starts_with('…') && kept.ends_with("é end"));
        // A cut inside a character moves to the next boundary.
        assert_eq!(tail("xxaébc", 6), "…bc");
    }

    #[test]
    fn ids_are_short_stable_hashes() {
        // The SHA-1 git gives the blob "hello\n".
        assert_eq!(short_id("hello\n"), "ce013625030b");
        let settings = SeriesSettings {
            engine: "squall".to_string(),
            depth: None,
            rounds: 6,
            instr_depth: 6,
            instructions: true,
            features: Vec::new(),
            engine_definition: None,
        };
        let deeper = SeriesSettings {
            depth: Some(7),
            ..settings.clone()
        };
        assert_ne!(settings_id(&settings), settings_id(&deeper));
        assert_eq!(settings_id(&settings).len(), ID_LEN);
        // squall's ids are unchanged by the engine definition's field (stores stay readable).
        assert_eq!(settings_id(&settings), "793d52eb65af");
        let defined = |build: &str| SeriesSettings {
            engine_definition: Some(format!("format openbench\nbuild {build}\n")),
            ..settings.clone()
        };
        assert_ne!(settings_id(&defined("make")), settings_id(&settings));
        assert_ne!(
            settings_id(&defined("make")),
            settings_id(&defined("make -j"))
        );
    }
}
