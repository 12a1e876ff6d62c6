//! Building the engine of a revision, cached by what actually determines the binary.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use git2::{ObjectType, Oid, Repository};

use crate::machine::{rustc_version, rustflags};
use crate::paths::{remove_if_exists, temp_sibling, LabPaths};
use crate::process::{describe_status, run_with_timeout, tail_section};
use crate::progress::Progress;
use crate::revision::{entry_id, materialize, source_dir, Revision};

const ENGINE_PACKAGE: &str = "squall";
/// Lines of cargo's output shown when a build fails.
const FAILED_BUILD_TAIL: usize = 30;
/// Generous: a cold release build with fat LTO on two busy cores takes minutes.
const BUILD_TIMEOUT: Duration = Duration::from_secs(3600);

#[derive(Debug, Clone)]
pub struct EngineBinary {
    pub path: PathBuf,
    pub key: String,
    /// True when the binary came from the cache rather than a fresh build.
    pub cached: bool,
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
    if entry_id(repo, revision.tree, "engine")?.is_none() {
        bail!("revision '{}' has no engine/ directory", revision.spec);
    }
    let sources = materialize(repo, revision.tree, paths)?;
    let key = binary_key(repo, revision.tree, features, &sources)?;
    let binary_dir = paths.binaries.join(&key);
    let path = binary_dir.join(ENGINE_PACKAGE);
    if path.is_file() {
        progress.line(&format!(
            "engine of {}: cached build {}",
            revision.short_name(),
            &key[..12]
        ));
        return Ok(EngineBinary {
            path,
            key,
            cached: true,
        });
    }
    let task = progress.spinner(&format!("building engine of {}", revision.short_name()));
    let built = run_cargo_build(&sources, features, paths);
    task.finish();
    if let Err(error) = built {
        // A failed tree stays out of the cache, so the next run starts from scratch.
        remove_if_exists(&source_dir(paths, revision.tree))?;
        return Err(error.context(format!("building the engine of '{}'", revision.spec)));
    }
    install_binary(paths, &key, &binary_dir)?;
    progress.line(&format!(
        "engine of {}: built {}",
        revision.short_name(),
        &key[..12]
    ));
    Ok(EngineBinary {
        path,
        key,
        cached: false,
    })
}

fn binary_key(repo: &Repository, tree: Oid, features: &[&str], sources: &Path) -> Result<String> {
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
    description.push_str(&rustc_version(sources)?);
    Ok(Oid::hash_object(ObjectType::Blob, description.as_bytes())?.to_string())
}

fn run_cargo_build(sources: &Path, features: &[&str], paths: &LabPaths) -> Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let mut command = Command::new(cargo);
    command
        .current_dir(sources)
        .args(["build", "--release", "-p", ENGINE_PACKAGE])
        .env("CARGO_TARGET_DIR", &paths.cargo_target)
        .env_remove("CARGO_BUILD_TARGET_DIR");
    if !features.is_empty() {
        command.arg("--features").arg(features.join(","));
    }
    let finished = run_with_timeout(command, BUILD_TIMEOUT, "cargo build")?;
    if !finished.status.success() {
        let mut output = finished.stdout;
        output.extend_from_slice(&finished.stderr);
        bail!(
            "cargo build --release -p {ENGINE_PACKAGE} failed ({}){}",
            describe_status(finished.status),
            tail_section(&output, FAILED_BUILD_TAIL)
        );
    }
    Ok(())
}

/// Copies the fresh binary out of the shared target directory, which the next build overwrites.
fn install_binary(paths: &LabPaths, key: &str, binary_dir: &Path) -> Result<()> {
    let built = paths.cargo_target.join("release").join(ENGINE_PACKAGE);
    let temporary = temp_sibling(&paths.binaries, key);
    remove_if_exists(&temporary)?;
    fs::create_dir_all(&temporary)?;
    fs::copy(&built, temporary.join(ENGINE_PACKAGE))
        .with_context(|| format!("copying {}", built.display()))?;
    remove_if_exists(binary_dir)?;
    fs::rename(&temporary, binary_dir)
        .with_context(|| format!("installing {}", binary_dir.display()))?;
    Ok(())
}
