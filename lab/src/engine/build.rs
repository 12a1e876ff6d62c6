//! Building the engine of a revision, cached by what actually determines the binary.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use git2::{ObjectType, Oid, Repository};

use super::revision::{entry_id, Revision};
use super::snapshot::{materialize, source_dir};
use crate::input::{read_text, CACHE_RECORD};
use crate::machine::{rustc_version, rustflags};
use crate::paths::{remove_if_exists, temp_sibling, LabPaths};
use crate::process::{describe_status, run_keeping_tails, tail_section, FAILED_BUILD_TAIL_LINES};
use crate::progress::Progress;

const ENGINE_PACKAGE: &str = "squall";
/// Generous: a cold release build with fat LTO on two busy cores takes minutes.
const BUILD_TIMEOUT: Duration = Duration::from_secs(3600);

/// A built (or cached) engine binary, whichever adapter built it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineBinary {
    /// `target/lab/bin/<key>/<name>`, absolute when the lab's paths are.
    pub path: PathBuf,
    pub key: String,
    /// True when the binary came from the cache rather than a fresh build.
    pub cached: bool,
}

impl EngineBinary {
    /// How a progress line tells where the binary came from: `cached build` or `built`.
    pub(crate) fn origin(&self) -> &'static str {
        if self.cached {
            "cached build"
        } else {
            "built"
        }
    }
}

/// Paths in a revision whose content decides the engine binary. `lab/` is deliberately absent,
/// so commits touching only the lab reuse the engine binary.
const KEY_PATHS: [&str; 6] = [
    "engine",
    "Cargo.lock",
    "Cargo.toml",
    ".cargo",
    "rust-toolchain",
    "rust-toolchain.toml",
];

pub fn build_engine(
    repo: &Repository,
    revision: &Revision,
    features: &[&str],
    paths: &LabPaths,
    progress: &Progress,
) -> Result<EngineBinary> {
    build_engine_with_rustflags(repo, revision, features, "", paths, progress)
}

/// [`build_engine`] with `extra_rustflags` appended to the environment's RUSTFLAGS for this
/// build only (e.g. `-C force-frame-pointers=yes` for `lab profile`); part of the cache key.
pub(crate) fn build_engine_with_rustflags(
    repo: &Repository,
    revision: &Revision,
    features: &[&str],
    extra_rustflags: &str,
    paths: &LabPaths,
    progress: &Progress,
) -> Result<EngineBinary> {
    if entry_id(repo, revision.tree, "engine")?.is_none() {
        bail!("revision '{}' has no engine/ directory", revision.spec);
    }
    let sources = materialize(repo, revision, paths, progress)?;
    let key = binary_key(repo, revision.tree, features, extra_rustflags, &sources)?;
    let binary_dir = paths.binaries.join(&key);
    let what = format!("engine of {}", revision.short_name());
    let binary = cached_or_build(&binary_dir, ENGINE_PACKAGE, &what, key, progress, |key| {
        if let Some(standalone) = super::workspace::standalone_manifest(repo, revision.tree)? {
            progress.line(&format!(
                "{}{} predates the lab layout: its workspace names {}, which it does not contain; \
                 building the engine package alone",
                revision.short_name(),
                commit_date(repo, revision)
                    .map_or_else(String::new, |date| format!(" from {date}")),
                standalone.missing.join(", ")
            ));
        }
        // All trees share one cargo target directory, and cargo decides freshness by comparing
        // source mtimes with the last build's outputs: a tree materialised before another
        // tree's build (e.g. B built plain, then A and B with `--features calibrate`) would look
        // fresh and get the other tree's binary. Stamping the sources "now" forces the real
        // rebuild.
        touch_tree(&sources)?;
        let task = progress.spinner(&format!("building engine of {}", revision.short_name()));
        let built = run_cargo_build(&sources, features, extra_rustflags, paths);
        task.finish();
        if let Err(error) = built {
            // A failed tree stays out of the cache, so the next run starts from scratch.
            remove_if_exists(&source_dir(paths, revision.tree))?;
            return Err(error.context(format!("building the engine of '{}'", revision.spec)));
        }
        let built = cargo_target(paths, extra_rustflags)
            .join("release")
            .join(ENGINE_PACKAGE);
        install(
            paths,
            key,
            &built,
            &binary_dir,
            ENGINE_PACKAGE,
            Placing::Copy,
        )
    })?;
    progress.line(&format!(
        "{what}: {} {}",
        binary.origin(),
        crate::input::short_key(&binary.key)
    ));
    Ok(binary)
}

/// The cache entry `binary_dir` holding the binary `name`, reused when its recorded digest
/// still matches and built by `build` (given the key) when it is absent or does not match. The
/// one cache-or-rebuild path of both adapters' builds; `what` names the binary in the note.
pub(crate) fn cached_or_build(
    binary_dir: &Path,
    name: &str,
    what: &str,
    key: String,
    progress: &Progress,
    build: impl FnOnce(&str) -> Result<()>,
) -> Result<EngineBinary> {
    let path = binary_dir.join(name);
    if binary_dir.symlink_metadata().is_ok() {
        match check_cached(binary_dir, name) {
            Ok(()) => {
                return Ok(EngineBinary {
                    path,
                    key,
                    cached: true,
                })
            }
            Err(problem) => {
                progress.line(&format!(
                    "note: the cached {what} ({}) {problem}; building it again",
                    binary_dir.display()
                ));
                remove_if_exists(binary_dir)?;
            }
        }
    }
    build(&key)?;
    Ok(EngineBinary {
        path,
        key,
        cached: false,
    })
}

/// How a fresh binary reaches its cache entry: copied out of a directory that outlives the
/// build (cargo's shared target), or moved out of one about to be removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Placing {
    Copy,
    Move,
}

/// Installs the fresh binary `built` as `binary_dir/name` with its digest beside it; the entry
/// appears whole or not at all.
pub(crate) fn install(
    paths: &LabPaths,
    key: &str,
    built: &Path,
    binary_dir: &Path,
    name: &str,
    placing: Placing,
) -> Result<()> {
    let temporary = temp_sibling(&paths.binaries, key);
    remove_if_exists(&temporary)?;
    fs::create_dir_all(&temporary).with_context(|| format!("creating {}", temporary.display()))?;
    let installed = temporary.join(name);
    // A move across file systems fails: copy then (with the permissions).
    if placing == Placing::Copy || fs::rename(built, &installed).is_err() {
        fs::copy(built, &installed).with_context(|| format!("copying {}", built.display()))?;
    }
    fs::write(temporary.join(DIGEST_FILE), digest(&installed)? + "\n")
        .with_context(|| format!("writing the digest of {}", installed.display()))?;
    remove_if_exists(binary_dir)?;
    fs::rename(&temporary, binary_dir)
        .with_context(|| format!("installing {}", binary_dir.display()))?;
    Ok(())
}

/// The file beside each cached binary that holds its digest.
pub(crate) const DIGEST_FILE: &str = "digest";

/// The digest of a file's bytes: its git blob id (SHA-1), computed by libgit2.
pub(crate) fn digest(path: &Path) -> Result<String> {
    Ok(Oid::hash_file(ObjectType::Blob, path)
        .with_context(|| format!("hashing {}", path.display()))?
        .to_string())
}

/// Whether the cache entry `binary_dir` still holds the binary `name` that was installed there:
/// the binary's digest matches the one recorded at installation. The problem otherwise.
pub(crate) fn check_cached(binary_dir: &Path, name: &str) -> std::result::Result<(), String> {
    let recorded = read_text(&binary_dir.join(DIGEST_FILE), CACHE_RECORD)
        .map_err(|_| "has no recorded digest".to_string())?;
    let binary = binary_dir.join(name);
    if !binary.is_file() {
        return Err("has no binary".to_string());
    }
    match digest(&binary) {
        Ok(actual) if actual == recorded.trim() => Ok(()),
        Ok(_) => Err("does not match the digest recorded when it was built \
                      (truncated or modified)"
            .to_string()),
        Err(error) => Err(format!("cannot be read ({error:#})")),
    }
}

/// The commit date of `revision` (UTC, YYYY-MM-DD), when it names a commit.
fn commit_date(repo: &Repository, revision: &Revision) -> Option<String> {
    let commit = repo.find_commit(revision.commit?).ok()?;
    Some(crate::calendar::utc_date(commit.time().seconds(), '-'))
}

fn binary_key(
    repo: &Repository,
    tree: Oid,
    features: &[&str],
    extra_rustflags: &str,
    sources: &Path,
) -> Result<String> {
    let mut description = String::new();
    for path in KEY_PATHS {
        let id =
            entry_id(repo, tree, path)?.map_or_else(|| "absent".to_string(), |id| id.to_string());
        description.push_str(&format!("{path} {id}\n"));
    }
    let mut features: Vec<&str> = features.to_vec();
    features.sort_unstable();
    features.dedup();
    description.push_str(&format!("features {}\n", features.join(",")));
    description.push_str(&format!("rustflags {}\n", rustflags()));
    // Only when set, so the keys of ordinary builds stay what they were.
    if !extra_rustflags.trim().is_empty() {
        description.push_str(&format!("extra rustflags {}\n", extra_rustflags.trim()));
    }
    description.push_str(&rustc_version(sources)?);
    Ok(Oid::hash_object(ObjectType::Blob, description.as_bytes())?.to_string())
}

fn run_cargo_build(
    sources: &Path,
    features: &[&str],
    extra_rustflags: &str,
    paths: &LabPaths,
) -> Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let mut command = Command::new(cargo);
    command
        .current_dir(sources)
        .args(["build", "--release", "-p", ENGINE_PACKAGE])
        .env("CARGO_TARGET_DIR", cargo_target(paths, extra_rustflags))
        .env_remove("CARGO_BUILD_TARGET_DIR");
    if !features.is_empty() {
        command.arg("--features").arg(features.join(","));
    }
    let extra = extra_rustflags.trim();
    if !extra.is_empty() {
        // CARGO_ENCODED_RUSTFLAGS wins over RUSTFLAGS when set, so extend whichever is in force.
        match std::env::var("CARGO_ENCODED_RUSTFLAGS") {
            Ok(encoded) if !encoded.is_empty() => {
                let added = extra.split_whitespace().collect::<Vec<_>>().join("\u{1f}");
                command.env("CARGO_ENCODED_RUSTFLAGS", format!("{encoded}\u{1f}{added}"));
            }
            _ => {
                let plain = std::env::var("RUSTFLAGS").unwrap_or_default();
                command.env("RUSTFLAGS", format!("{plain} {extra}").trim());
            }
        }
    }
    let finished = run_keeping_tails(command, BUILD_TIMEOUT, "cargo build")?;
    if !finished.status.success() {
        let mut output = finished.stdout;
        output.extend_from_slice(&finished.stderr);
        bail!(
            "cargo build --release -p {ENGINE_PACKAGE} failed ({}){}",
            describe_status(finished.status),
            tail_section(&output, FAILED_BUILD_TAIL_LINES)
        );
    }
    Ok(())
}

/// Builds with extra flags get their own cargo target directory: cargo rebuilds everything when
/// RUSTFLAGS change, so sharing one would cost the ordinary builds a full rebuild each time.
fn cargo_target(paths: &LabPaths, extra_rustflags: &str) -> PathBuf {
    if extra_rustflags.trim().is_empty() {
        paths.cargo_target.clone()
    } else {
        paths.cargo_target.join("extra-rustflags")
    }
}

/// Sets the modification time of every file under `dir` to now.
fn touch_tree(dir: &Path) -> Result<()> {
    let now = std::time::SystemTime::now();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(current) = pending.pop() {
        for entry in
            fs::read_dir(&current).with_context(|| format!("reading {}", current.display()))?
        {
            let entry = entry?;
            let kind = entry.file_type()?;
            if kind.is_dir() {
                pending.push(entry.path());
            } else if kind.is_file() {
                fs::File::options()
                    .write(true)
                    .open(entry.path())
                    .and_then(|file| file.set_modified(now))
                    .with_context(|| format!("touching {}", entry.path().display()))?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds into `binary_dir` the way both adapters do: a fresh file installed with its digest.
    fn build_into<'a>(
        paths: &'a LabPaths,
        binary_dir: &'a Path,
        builds: &'a std::cell::Cell<u32>,
    ) -> impl FnOnce(&str) -> Result<()> + 'a {
        move |key| {
            builds.set(builds.get() + 1);
            let fresh = paths.scratch.join("fresh");
            fs::write(&fresh, b"binary")?;
            install(paths, key, &fresh, binary_dir, "engine", Placing::Move)
        }
    }

    #[test]
    fn an_entry_is_built_once_reused_while_sound_and_rebuilt_when_damaged() {
        let dir = tempfile::tempdir().unwrap();
        let paths = LabPaths::new(dir.path());
        paths.create_dirs().unwrap();
        let binary_dir = paths.binaries.join("key");
        let builds = std::cell::Cell::new(0);
        let cache = || {
            cached_or_build(
                &binary_dir,
                "engine",
                "engine of test",
                "key".to_string(),
                &Progress::new(true),
                build_into(&paths, &binary_dir, &builds),
            )
            .unwrap()
        };

        let first = cache();
        assert!(!first.cached && first.origin() == "built");
        assert_eq!(first.path, binary_dir.join("engine"));
        assert_eq!(fs::read(&first.path).unwrap(), b"binary");
        assert!(!paths.scratch.join("fresh").exists(), "moved, not copied");

        let again = cache();
        assert!(again.cached && again.origin() == "cached build");
        assert_eq!((again.path, again.key), (first.path.clone(), first.key));
        assert_eq!(builds.get(), 1);

        fs::write(&first.path, b"truncated").unwrap();
        assert!(check_cached(&binary_dir, "engine").is_err());
        let rebuilt = cache();
        assert!(!rebuilt.cached);
        assert_eq!(builds.get(), 2);
        assert_eq!(check_cached(&binary_dir, "engine"), Ok(()));
    }
}
