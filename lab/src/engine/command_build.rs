//! Building an engine with its own build command, as an OpenBench worker does, cached by what
//! decides the binary (docs/lab-toml.md).
//!
//! The build runs in a fresh snapshot of the revision that is a git working copy of its own
//! (see [`write_git_snapshot`]): `sh -c BUILD` with `{exe}` = [`EXE_NAME`], in the build
//! directory, in its own process group with a timeout. The file it leaves there is moved into
//! `target/lab/bin/<key>/<name>` with its digest beside it, and the snapshot is removed.
//!
//! Call with the cache lock held ([`LabPaths::lock`]), like the lab's other builds.

use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use git2::{FileMode, IndexTime, ObjectType, Oid, Repository, Tree};

use crate::engine::build::{cached_or_build, install, EngineBinary, Placing};
use crate::engine::config::OpenBenchEngine;
use crate::engine::revision::{check_tree_entries, Revision};
use crate::engine::snapshot::write_new_file;
use crate::paths::{remove_if_exists, LabPaths};
use crate::process::{run_keeping_tails, run_with_timeout, tail_section, FAILED_BUILD_TAIL_LINES};
use crate::progress::Progress;

/// The plain, relative file name the build is asked to produce (`{exe}`). Relative, so
/// makefiles that run `./$(EXE) bench` after linking (profile-guided optimisation) work.
pub const EXE_NAME: &str = "lab-engine";
/// The environment variables that reach a build and may change its binary: each is part of the
/// cache key, set or not. `make` imports the whole environment as variables, so others can
/// matter too; these are the ones compilers, make, cargo and OpenBench's makefiles read.
pub(crate) const BUILD_ENVIRONMENT: &[&str] = &[
    "CC",
    "CXX",
    "AR",
    "LD",
    "CFLAGS",
    "CXXFLAGS",
    "CPPFLAGS",
    "LDFLAGS",
    "LDLIBS",
    "EVALFILE",
    "MAKEFLAGS",
    "MFLAGS",
    "GNUMAKEFLAGS",
    "RUSTC",
    "RUSTC_WRAPPER",
    "RUSTFLAGS",
    "CARGO_ENCODED_RUSTFLAGS",
    "CARGO_BUILD_RUSTFLAGS",
    "CARGO_PROFILE_RELEASE_LTO",
    "CARGO_PROFILE_RELEASE_CODEGEN_UNITS",
    "RUSTUP_TOOLCHAIN",
];
/// Variables that would point the build's git commands at the user's repository (a lab started
/// from a git hook has them): removed, so `git` in the build sees the snapshot only.
pub(crate) const GIT_ENVIRONMENT: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
];
/// How long a compiler may take to say its version.
const PROBE_TIMEOUT: Duration = Duration::from_secs(60);
/// Changes whenever the meaning of the key changes, so old entries are never reused.
const KEY_VERSION: &str = "openbench-build 1";
/// Files by which rustup picks a toolchain, in the directory where `rustc` runs or above.
const TOOLCHAIN_FILES: [&str; 2] = ["rust-toolchain", "rust-toolchain.toml"];

/// Builds `engine` at `revision`, or finds it in the cache. `timeout` bounds the build command
/// (its whole process group is killed then).
///
/// The cache key (see [`cache_key`]) is the revision's whole tree, the commit the snapshot's
/// HEAD names, the build directory and command, [`EXE_NAME`], the [`BUILD_ENVIRONMENT`] and the
/// identity of every compiler present ([`compiler_identity`]). The bench command is not in it:
/// it does not change the binary.
pub fn build_openbench_engine(
    repo: &Repository,
    revision: &Revision,
    engine: &OpenBenchEngine,
    paths: &LabPaths,
    timeout: Duration,
    progress: &Progress,
) -> Result<EngineBinary> {
    let tree = repo.find_tree(revision.tree)?;
    require_build_dir(&tree, engine, revision)?;
    let head = snapshot_head(repo, revision);
    fs::create_dir_all(&paths.scratch)
        .with_context(|| format!("creating {}", paths.scratch.display()))?;
    let compilers = probe_compilers(repo, &tree, engine, paths)?;
    let key = cache_key(revision.tree, head, engine, &compilers)?;
    let binary_dir = paths.binaries.join(&key);
    let what = format!("{} of {}", engine.name, revision.short_name());
    cached_or_build(&binary_dir, &engine.name, &what, key, progress, |key| {
        let snapshot = paths.scratch.join(format!(
            "build-{}-{}",
            crate::input::short_key(key),
            unique()
        ));
        remove_if_exists(&snapshot)?;
        let built = write_git_snapshot(repo, revision, &snapshot)
            .with_context(|| {
                format!(
                    "writing the source of {} at {} to {}",
                    engine.name,
                    revision.short_name(),
                    snapshot.display()
                )
            })
            .and_then(|_| run_build(revision, engine, &snapshot, timeout))
            .and_then(|exe| install(paths, key, &exe, &binary_dir, &engine.name, Placing::Move));
        remove_if_exists(&snapshot)?;
        built
    })
}

/// The build directory must be a directory of the revision's tree.
fn require_build_dir(tree: &Tree, engine: &OpenBenchEngine, revision: &Revision) -> Result<()> {
    if engine.build_dir.as_os_str().is_empty() {
        return Ok(());
    }
    let found = tree
        .get_path(&engine.build_dir)
        .ok()
        .and_then(|entry| entry.kind());
    if found != Some(ObjectType::Tree) {
        bail!(
            "revision {} has no directory '{}' (build-dir of {} in lab.toml)",
            revision.short_name(),
            engine.build_dir_display(),
            engine.name
        );
    }
    Ok(())
}

/// The commit the snapshot's HEAD names: the revision's own, or, for a revision without a
/// commit (`WORKTREE`, or a tree id), the user's HEAD commit when there is one: the commit the
/// working tree's changes sit on, which `git rev-parse HEAD` in the user's checkout prints too.
pub(crate) fn snapshot_head(repo: &Repository, revision: &Revision) -> Option<Oid> {
    revision.commit.or_else(|| {
        repo.head()
            .ok()
            .and_then(|head| head.peel_to_commit().ok())
            .map(|commit| commit.id())
    })
}

/// Writes the revision's tree into `dir` (which must not exist) as a git working copy, for
/// build commands that ask git about their source (`git rev-parse HEAD`, `git describe`):
///
/// - `dir/.git` is a fresh repository whose `objects/info/alternates` names the user's object
///   directory, so it reads every object of the user's repository and stores none of its own;
/// - HEAD is detached at [`snapshot_head`] (unborn when there is none);
/// - the index holds that commit's tree with the stat data of the files written, so
///   `git status` shows a clean checkout for a commit, and for `WORKTREE` the uncommitted
///   changes as unstaged modifications and untracked files, as in the user's own checkout.
///
/// A tree git would not check out is refused before anything is written (see
/// [`check_tree_entries`]). Nothing is written to the user's repository: no worktree registration, object, ref, index
/// or config. A shallow repository's `shallow` file is copied, so history stops where it does
/// there. Submodules are left as empty directories. Returns the HEAD commit.
pub fn write_git_snapshot(
    repo: &Repository,
    revision: &Revision,
    dir: &Path,
) -> Result<Option<Oid>> {
    if dir.symlink_metadata().is_ok() {
        bail!(
            "{} already exists: a snapshot is written afresh",
            dir.display()
        );
    }
    check_tree_entries(repo, revision)?;
    fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let tree = repo.find_tree(revision.tree)?;
    write_tree(repo, &tree, dir)?;

    let git_dir = Repository::init(dir)
        .with_context(|| format!("git init {}", dir.display()))?
        .path()
        .to_path_buf();
    let user_objects = repo.commondir().join("objects");
    let user_objects = user_objects
        .canonicalize()
        .with_context(|| format!("resolving {}", user_objects.display()))?;
    let alternates = git_dir.join("objects").join("info").join("alternates");
    fs::create_dir_all(alternates.parent().expect("a parent"))?;
    let mut line = user_objects.as_os_str().as_bytes().to_vec();
    line.push(b'\n');
    fs::write(&alternates, line).with_context(|| format!("writing {}", alternates.display()))?;
    let shallow = repo.commondir().join("shallow");
    if shallow.is_file() {
        fs::copy(&shallow, git_dir.join("shallow"))
            .with_context(|| format!("copying {}", shallow.display()))?;
    }

    // Opened again, so the alternates take effect.
    let snapshot = Repository::open(dir)?;
    let head = snapshot_head(repo, revision);
    let Some(head) = head else {
        return Ok(None);
    };
    snapshot
        .set_head_detached(head)
        .with_context(|| format!("detaching the snapshot's HEAD at {head}"))?;
    let head_tree = snapshot.find_commit(head)?.tree()?;
    let mut index = snapshot.index()?;
    index.read_tree(&head_tree)?;
    let entries: Vec<_> = index.iter().collect();
    for mut entry in entries {
        let blob = entry.mode == u32::from(FileMode::Blob)
            || entry.mode == u32::from(FileMode::BlobExecutable)
            || entry.mode == u32::from(FileMode::Link);
        if !blob {
            continue;
        }
        let relative = Path::new(std::ffi::OsStr::from_bytes(&entry.path));
        // Stat data only for files that hold the index's content: for `WORKTREE` an edited
        // file keeps empty stat data, so git compares its content and sees the change.
        let same = revision.tree == head_tree.id()
            || tree
                .get_path(relative)
                .is_ok_and(|written| written.id() == entry.id);
        if !same {
            continue;
        }
        let Ok(metadata) = dir.join(relative).symlink_metadata() else {
            continue;
        };
        entry.ctime = index_time(metadata.ctime(), metadata.ctime_nsec());
        entry.mtime = index_time(metadata.mtime(), metadata.mtime_nsec());
        entry.dev = metadata.dev() as u32;
        entry.ino = metadata.ino() as u32;
        entry.uid = metadata.uid();
        entry.gid = metadata.gid();
        entry.file_size = u32::try_from(metadata.size()).unwrap_or(u32::MAX);
        index.add(&entry)?;
    }
    index.write()?;
    Ok(Some(head))
}

/// A name part unique to this call in this process (the scratch directory is cleared of stale
/// entries when the lab takes its lock).
fn unique() -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static CALLS: AtomicUsize = AtomicUsize::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        CALLS.fetch_add(1, Ordering::Relaxed)
    )
}

fn index_time(seconds: i64, nanoseconds: i64) -> IndexTime {
    IndexTime::new(
        i32::try_from(seconds).unwrap_or(i32::MAX),
        u32::try_from(nanoseconds).unwrap_or(0),
    )
}

fn write_tree(repo: &Repository, tree: &Tree, dir: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    for entry in tree.iter() {
        let path = dir.join(std::ffi::OsStr::from_bytes(entry.name_bytes()));
        match entry.kind() {
            Some(ObjectType::Tree) => {
                fs::create_dir(&path)?;
                write_tree(repo, &repo.find_tree(entry.id())?, &path)?;
            }
            Some(ObjectType::Blob) => {
                let blob = repo.find_blob(entry.id())?;
                if entry.filemode() == i32::from(FileMode::Link) {
                    std::os::unix::fs::symlink(std::ffi::OsStr::from_bytes(blob.content()), &path)?;
                    continue;
                }
                write_new_file(&path, blob.content())
                    .with_context(|| format!("writing {}", path.display()))?;
                if entry.filemode() == i32::from(FileMode::BlobExecutable) {
                    fs::set_permissions(&path, fs::Permissions::from_mode(0o755))?;
                }
            }
            // A submodule: an empty directory, which git takes for one not checked out.
            Some(ObjectType::Commit) => fs::create_dir(&path)?,
            _ => {}
        }
    }
    Ok(())
}

/// The identity of every compiler a build could use, each only when it exists: `$CC` (or
/// `cc`) `--version`, `$CXX` (or `c++`) `--version`, `$RUSTC` (or `rustc`) `-vV`. All three,
/// since the lab cannot know which a Makefile calls. `dir` is where they run, so a
/// `rust-toolchain` file there or above picks the toolchain as in the build.
pub(crate) fn compiler_identity(dir: &Path) -> String {
    let from_env = |name: &str, default: &str| {
        std::env::var(name)
            .ok()
            .filter(|value| !value.trim().is_empty())
            .unwrap_or_else(|| default.to_string())
    };
    let mut identity = String::new();
    for (program, flag) in [
        (from_env("CC", "cc"), "--version"),
        (from_env("CXX", "c++"), "--version"),
        (from_env("RUSTC", "rustc"), "-vV"),
    ] {
        // `CC="ccache gcc"`: the program and its leading arguments.
        let mut words = program.split_whitespace();
        let Some(name) = words.next() else { continue };
        let mut command = Command::new(name);
        command.args(words).arg(flag).current_dir(dir);
        let what = format!("{program} {flag}");
        let answer = match run_with_timeout(command, PROBE_TIMEOUT, &format!("`{what}`")) {
            Err(_) => "absent".to_string(),
            Ok(finished) if !finished.status.success() => {
                format!("failed ({:?})", finished.status.code())
            }
            Ok(finished) => {
                let mut output = finished.stdout;
                output.extend_from_slice(&finished.stderr);
                String::from_utf8_lossy(&output).trim().to_string()
            }
        };
        identity.push_str(&format!("{what}:\n{answer}\n"));
    }
    identity
}

/// [`compiler_identity`] in a probe directory holding the tree's rust-toolchain files along the
/// build directory's path (and nothing else), so rustup picks the toolchain the build will get
/// without the whole tree being written.
fn probe_compilers(
    repo: &Repository,
    tree: &Tree,
    engine: &OpenBenchEngine,
    paths: &LabPaths,
) -> Result<String> {
    let probe = paths.scratch.join(format!("compiler-probe-{}", unique()));
    remove_if_exists(&probe)?;
    let mut relative = PathBuf::new();
    let mut levels = vec![relative.clone()];
    for component in engine.build_dir.components() {
        relative.push(component);
        levels.push(relative.clone());
    }
    for level in &levels {
        fs::create_dir_all(probe.join(level))?;
        for name in TOOLCHAIN_FILES {
            if let Ok(entry) = tree.get_path(&level.join(name)) {
                if let Ok(blob) = repo.find_blob(entry.id()) {
                    fs::write(probe.join(level).join(name), blob.content())?;
                }
            }
        }
    }
    let identity = compiler_identity(&probe.join(&engine.build_dir));
    remove_if_exists(&probe)?;
    Ok(identity)
}

/// The cache key: the git blob id of a description of everything that decides the binary.
pub(crate) fn cache_key(
    tree: Oid,
    head: Option<Oid>,
    engine: &OpenBenchEngine,
    compilers: &str,
) -> Result<String> {
    let mut description = format!("{KEY_VERSION}\n");
    description.push_str(&format!("tree {tree}\n"));
    match head {
        Some(head) => description.push_str(&format!("head {head}\n")),
        None => description.push_str("head none\n"),
    }
    description.push_str(&build_definition(engine, compilers));
    Ok(Oid::hash_object(ObjectType::Blob, description.as_bytes())?.to_string())
}

/// The part of the cache key that is not the revision: the build directory and command,
/// [`EXE_NAME`], the [`BUILD_ENVIRONMENT`] and `compilers` ([`compiler_identity`]). A history
/// series keys on it too, so a change of any of them is another series.
pub(crate) fn build_definition(engine: &OpenBenchEngine, compilers: &str) -> String {
    let mut description = String::new();
    description.push_str(&format!("build-dir {}\n", engine.build_dir_display()));
    description.push_str(&format!("build {}\n", engine.build));
    description.push_str(&format!("exe {EXE_NAME}\n"));
    for name in BUILD_ENVIRONMENT {
        match std::env::var_os(name) {
            Some(value) => {
                description.push_str(&format!("env {name}={}\n", value.to_string_lossy()))
            }
            None => description.push_str(&format!("env {name} unset\n")),
        }
    }
    description.push_str(compilers);
    description
}

/// Everything that decides what a history series of `engine` measures apart from the
/// revision: the build's definition ([`build_definition`], the compilers as they answer in
/// `workdir`'s build directory) and the bench command.
pub(crate) fn engine_definition(engine: &OpenBenchEngine, workdir: &Path) -> String {
    let build_dir = workdir.join(&engine.build_dir);
    let probe_dir = if build_dir.is_dir() {
        build_dir
    } else {
        workdir.to_path_buf()
    };
    format!(
        "format openbench\nname {}\nbench {}\n{}",
        engine.name,
        engine.bench,
        build_definition(engine, &compiler_identity(&probe_dir))
    )
}

/// Runs the build in the snapshot and returns the path of the file it produced.
fn run_build(
    revision: &Revision,
    engine: &OpenBenchEngine,
    snapshot: &Path,
    timeout: Duration,
) -> Result<PathBuf> {
    let build_dir = snapshot.join(&engine.build_dir);
    let script = engine.build_command(EXE_NAME);
    let mut command = Command::new("sh");
    command.arg("-c").arg(&script).current_dir(&build_dir);
    for name in GIT_ENVIRONMENT {
        command.env_remove(name);
    }
    let doing = format!("building {} at {}", engine.name, revision.short_name());
    let finished = run_keeping_tails(command, timeout, &format!("`{script}`"))
        .with_context(|| doing.clone())?;
    if !finished.status.success() {
        let mut output = finished.stdout;
        output.extend_from_slice(&finished.stderr);
        bail!(
            "{doing} failed ({}): `{script}` in {}{}",
            exit_status(finished.status),
            engine.build_dir_display(),
            tail_section(&output, FAILED_BUILD_TAIL_LINES)
        );
    }
    let exe = build_dir.join(EXE_NAME);
    match exe.symlink_metadata() {
        Ok(metadata) if metadata.is_file() => Ok(exe),
        Ok(_) => Err(anyhow!(
            "{doing}: `{script}` succeeded but {} is not a regular file",
            Path::new(&engine.build_dir_display())
                .join(EXE_NAME)
                .display()
        )),
        Err(_) => Err(anyhow!(
            "{doing}: `{script}` succeeded but did not produce {} (the file named by {{exe}}, \
             relative to build-dir)",
            Path::new(&engine.build_dir_display())
                .join(EXE_NAME)
                .display()
        )),
    }
}

fn exit_status(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        _ => status.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn engine(build: &str) -> OpenBenchEngine {
        OpenBenchEngine {
            name: "e".to_string(),
            build_dir: PathBuf::new(),
            build: build.to_string(),
            bench: "{exe} bench".to_string(),
        }
    }

    #[test]
    fn the_key_follows_what_decides_the_binary() {
        let tree = Oid::hash_object(ObjectType::Blob, b"tree").unwrap();
        let other_tree = Oid::hash_object(ObjectType::Blob, b"other").unwrap();
        let base = cache_key(tree, None, &engine("make EXE={exe}"), "cc 1").unwrap();
        assert_eq!(
            base,
            cache_key(tree, None, &engine("make EXE={exe}"), "cc 1").unwrap()
        );
        let mut bench = engine("make EXE={exe}");
        bench.bench = "{exe} bench {depth}".to_string();
        assert_eq!(base, cache_key(tree, None, &bench, "cc 1").unwrap());
        let mut dir = engine("make EXE={exe}");
        dir.build_dir = PathBuf::from("src");
        for different in [
            cache_key(other_tree, None, &engine("make EXE={exe}"), "cc 1").unwrap(),
            cache_key(tree, Some(tree), &engine("make EXE={exe}"), "cc 1").unwrap(),
            cache_key(tree, None, &engine("make -j EXE={exe}"), "cc 1").unwrap(),
            cache_key(tree, None, &engine("make EXE={exe}"), "cc 2").unwrap(),
            cache_key(tree, None, &dir, "cc 1").unwrap(),
        ] {
            assert_ne!(base, different);
        }
    }

    #[test]
    fn the_compiler_identity_has_every_probe() {
        let dir = tempfile::tempdir().unwrap();
        let identity = compiler_identity(dir.path());
        assert!(identity.contains("--version:"), "{identity}");
        assert!(identity.contains("-vV:"), "{identity}");
        // rustc runs the lab's own tests, so it exists.
        assert!(identity.contains("rustc "), "{identity}");
    }
}
