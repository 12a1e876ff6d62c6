//! What verdicts keep between runs (speed-Elo models, node budgets): one JSON file per machine,
//! engine binary and clock, written atomically after a check, read bounded and checked again,
//! since a file under `target/lab/` may have been edited or written by another lab.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::games::rules::Limit;
use crate::input;
use crate::paths::write_atomically;

/// A kind of file a verdict keeps.
pub(crate) trait StoredFile: Serialize + DeserializeOwned {
    /// The `kind` this lab writes and reads.
    const KIND: &'static str;
    const SCHEMA_VERSION: u32;
    /// How much of one file is read, and what messages call it.
    const INPUT: input::FileCap;

    /// The file's own `kind` and `schema_version`.
    fn kind(&self) -> (&str, u32);

    /// Checks what serde cannot, past the kind and version.
    fn check(&self) -> Result<()>;
}

/// The kind and version, then the file's own checks.
fn validate<T: StoredFile>(value: &T) -> Result<()> {
    let (kind, version) = value.kind();
    if kind != T::KIND {
        bail!("kind is '{kind}', not '{}'", T::KIND);
    }
    if version != T::SCHEMA_VERSION {
        bail!(
            "schema_version {version} (this lab reads {})",
            T::SCHEMA_VERSION
        );
    }
    value.check()
}

/// The file of a machine's entry for a binary at a clock: `<machine>-<binary>-<time
/// control>.json`, the binary cut to 12 characters, every other character outside `[A-Za-z0-9]`
/// made `_`, so no key names a path outside `dir`.
pub(crate) fn path_for(dir: &Path, machine_id: &str, binary: &str, limit: &Limit) -> PathBuf {
    let safe = |text: &str| -> String {
        text.chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect()
    };
    let binary: String = binary
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(12)
        .collect();
    dir.join(format!(
        "{}-{binary}-{}.json",
        safe(machine_id),
        safe(&limit.pgn_time_control())
    ))
}

/// Writes `value` to `path` atomically (its directory made if missing), if it passes its checks.
pub(crate) fn save<T: StoredFile>(path: &Path, value: &T) -> Result<()> {
    validate(value).with_context(|| format!("refusing to store a {}", T::INPUT.what))?;
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    write_atomically(path, text.as_bytes())
}

/// Reads one file: a regular file within its cap, valid JSON, passing its checks.
pub(crate) fn load<T: StoredFile>(path: &Path) -> Result<T> {
    let text = input::read_text(path, T::INPUT)?;
    let value: T =
        serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
    validate(&value)
        .with_context(|| format!("{} is not a usable {}", path.display(), T::INPUT.what))?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Note {
        kind: String,
        schema_version: u32,
        value: i64,
    }

    impl StoredFile for Note {
        const KIND: &'static str = "lab-test-note";
        const SCHEMA_VERSION: u32 = 3;
        const INPUT: input::FileCap = input::FileCap {
            what: "test note",
            cap: 96,
        };
        fn kind(&self) -> (&str, u32) {
            (&self.kind, self.schema_version)
        }
        fn check(&self) -> Result<()> {
            if self.value < 0 {
                bail!("value {} is negative", self.value);
            }
            Ok(())
        }
    }

    fn note(value: i64) -> Note {
        Note {
            kind: Note::KIND.into(),
            schema_version: Note::SCHEMA_VERSION,
            value,
        }
    }

    #[test]
    fn a_stored_file_round_trips_and_a_bad_one_is_never_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("n.json");
        save(&path, &note(7)).unwrap();
        assert_eq!(load::<Note>(&path).unwrap(), note(7));
        let error = format!("{:#}", save(&path, &note(-1)).unwrap_err());
        assert!(error.contains("refusing to store a test note"), "{error}");
        assert_eq!(load::<Note>(&path).unwrap(), note(7), "the old file stands");
    }

    #[test]
    fn another_kind_version_size_or_content_is_refused_with_its_reason() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("n.json");
        let refused = |text: &str| {
            std::fs::write(&path, text).unwrap();
            format!("{:#}", load::<Note>(&path).unwrap_err())
        };
        let other_kind = r#"{"kind":"lab-x","schema_version":3,"value":1}"#;
        assert!(refused(other_kind).contains("kind is 'lab-x'"));
        let other_version = r#"{"kind":"lab-test-note","schema_version":4,"value":1}"#;
        assert!(refused(other_version).contains("schema_version 4"));
        let negative = r#"{"kind":"lab-test-note","schema_version":3,"value":-2}"#;
        let error = refused(negative);
        assert!(error.contains("not a usable test note") && error.contains("negative"));
        assert!(refused("{").contains("parsing"));
        let padded = format!("{}{}", " ".repeat(100), r#"{"kind":"lab-test-note"}"#);
        assert!(refused(&padded).contains("test note"));
    }

    #[test]
    fn no_key_names_a_path_outside_its_directory() {
        let limit = Limit::parse_tc("2+0.02").unwrap();
        let path = path_for(Path::new("/d"), "../../m", "../bin/ary0123456789", &limit);
        assert_eq!(path, Path::new("/d/______m-binary012345-2_0_02.json"));
    }

    proptest::proptest! {
        #[test]
        fn every_key_is_one_plain_file_name_in_its_directory(
            machine in ".{0,40}",
            binary in ".{0,40}",
            base_ms in 1u64..10_000_000,
            increment_ms in 0u64..100_000,
        ) {
            let limit = Limit::Clock { base_ms, increment_ms };
            let path = path_for(Path::new("/d"), &machine, &binary, &limit);
            proptest::prop_assert_eq!(path.parent(), Some(Path::new("/d")));
            let name = path.file_name().unwrap().to_str().unwrap();
            proptest::prop_assert!(
                name.chars().all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c)),
                "{}", name
            );
            proptest::prop_assert!(name.ends_with(".json"));
        }
    }
}
