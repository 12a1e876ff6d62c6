//! Resolving revisions and writing their trees into the source cache, without touching the
//! user's working tree, index, HEAD or stash.

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use git2::{FileMode, Index, IndexEntry, IndexTime, ObjectType, Oid, Repository, Tree};

use crate::paths::{remove_if_exists, temp_sibling, LabPaths};

/// The pseudo-revision naming the uncommitted working tree.
pub const WORKTREE: &str = "WORKTREE";

#[derive(Debug, Clone)]
pub struct Revision {
    pub spec: String,
    pub commit: Option<Oid>,
    pub tree: Oid,
}

impl Revision {
    pub fn short_name(&self) -> String {
        match self.commit {
            Some(commit) => format!("{} ({})", self.spec, &commit.to_string()[..10]),
            None => format!("{} (tree {})", self.spec, &self.tree.to_string()[..10]),
        }
    }
}

pub fn open_repository(explicit: Option<&Path>) -> Result<Repository> {
    let start = match explicit {
        Some(path) => path.to_path_buf(),
        None => std::env::current_dir().context("reading the current directory")?,
    };
    let repo = Repository::discover(&start)
        .map_err(|e| anyhow!("no git repository at {}: {}", start.display(), e.message()))?;
    if repo.workdir().is_none() {
        bail!(
            "{} is a bare repository; the lab needs a working tree",
            start.display()
        );
    }
    Ok(repo)
}

pub fn resolve(repo: &Repository, spec: &str, paths: &LabPaths) -> Result<Revision> {
    if spec == WORKTREE {
        let tree = worktree_tree(repo, paths)?;
        return Ok(Revision {
            spec: spec.to_string(),
            commit: None,
            tree,
        });
    }
    let object = repo
        .revparse_single(spec)
        .map_err(|e| anyhow!("unknown revision '{spec}': {}", e.message()))?;
    let commit = object.peel_to_commit().ok().map(|c| c.id());
    let tree = object
        .peel_to_tree()
        .map_err(|e| anyhow!("revision '{spec}' does not name a tree: {}", e.message()))?
        .id();
    Ok(Revision {
        spec: spec.to_string(),
        commit,
        tree,
    })
}

/// The id of an entry (a subtree or blob) at `path` in the revision's tree, if present.
pub fn entry_id(repo: &Repository, tree: Oid, path: &str) -> Result<Option<Oid>> {
    let tree = repo.find_tree(tree)?;
    match tree.get_path(Path::new(path)) {
        Ok(entry) => Ok(Some(entry.id())),
        Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Builds a tree object of the working tree as it is on disk: tracked files plus untracked
/// files that are not ignored. It uses a private in-memory index, so the user's index file is
/// only read; the blobs and trees written to the object database are unreferenced and harmless.
fn worktree_tree(repo: &Repository, paths: &LabPaths) -> Result<Oid> {
    let workdir = repo
        .workdir()
        .expect("checked in open_repository")
        .to_path_buf();
    let tracked = tracked_paths(repo)?;
    let mut index = Index::new()?;
    let walker = WorktreeWalker {
        repo,
        workdir: &workdir,
        tracked: &tracked,
        cache: &paths.root,
    };
    walker.add_dir(&mut index, "")?;
    Ok(index.write_tree_to(repo)?)
}

fn tracked_paths(repo: &Repository) -> Result<BTreeSet<String>> {
    let index_file = repo.path().join("index");
    if !index_file.exists() {
        return Ok(BTreeSet::new());
    }
    // A standalone copy, so nothing can ever be written back to the user's index.
    let index = Index::open(&index_file)?;
    Ok(index
        .iter()
        .map(|entry| String::from_utf8_lossy(&entry.path).into_owned())
        .collect())
}

struct WorktreeWalker<'a> {
    repo: &'a Repository,
    workdir: &'a Path,
    tracked: &'a BTreeSet<String>,
    cache: &'a Path,
}

impl WorktreeWalker<'_> {
    fn add_dir(&self, index: &mut Index, relative: &str) -> Result<()> {
        let dir = self.workdir.join(relative);
        let mut entries: Vec<_> = fs::read_dir(&dir)
            .with_context(|| format!("reading {}", dir.display()))?
            .collect::<std::io::Result<_>>()?;
        entries.sort_by_key(|entry| entry.file_name());
        for entry in entries {
            let name = entry.file_name();
            if name == ".git" {
                continue;
            }
            let path = join_relative(relative, &name.to_string_lossy());
            let kind = entry.file_type()?;
            if kind.is_dir() {
                self.add_subdir(index, &path, &entry.path())?;
            } else if self.tracked.contains(&path) || !self.repo.is_path_ignored(&path)? {
                self.add_file(index, &path)?;
            }
        }
        Ok(())
    }

    fn add_subdir(&self, index: &mut Index, path: &str, absolute: &Path) -> Result<()> {
        if absolute == self.cache || absolute.join(".git").exists() {
            return Ok(());
        }
        if !self.repo.is_path_ignored(path)? {
            return self.add_dir(index, path);
        }
        // Force-added files inside an ignored directory are still part of the tree.
        let prefix = format!("{path}/");
        for tracked in self.tracked.range(prefix.clone()..) {
            if !tracked.starts_with(&prefix) {
                break;
            }
            if self.workdir.join(tracked).symlink_metadata().is_ok() {
                self.add_file(index, tracked)?;
            }
        }
        Ok(())
    }

    fn add_file(&self, index: &mut Index, path: &str) -> Result<()> {
        let absolute = self.workdir.join(path);
        let metadata = absolute.symlink_metadata()?;
        let (mode, contents) = if metadata.file_type().is_symlink() {
            let target = fs::read_link(&absolute)?;
            (FileMode::Link, target.as_os_str().as_bytes().to_vec())
        } else if metadata.permissions().mode() & 0o111 != 0 {
            (FileMode::BlobExecutable, fs::read(&absolute)?)
        } else {
            (FileMode::Blob, fs::read(&absolute)?)
        };
        let id = self.repo.blob(&contents)?;
        index.add(&index_entry(path, mode, id, contents.len()))?;
        Ok(())
    }
}

fn join_relative(parent: &str, name: &str) -> String {
    if parent.is_empty() {
        name.to_string()
    } else {
        format!("{parent}/{name}")
    }
}

fn index_entry(path: &str, mode: FileMode, id: Oid, size: usize) -> IndexEntry {
    IndexEntry {
        ctime: IndexTime::new(0, 0),
        mtime: IndexTime::new(0, 0),
        dev: 0,
        ino: 0,
        mode: u32::try_from(i32::from(mode)).unwrap_or(0o100644),
        uid: 0,
        gid: 0,
        file_size: u32::try_from(size).unwrap_or(u32::MAX),
        id,
        flags: 0,
        flags_extended: 0,
        path: path.as_bytes().to_vec(),
    }
}

/// Writes the tree into `target/lab/src/<tree-id>/` (once) and returns that directory.
pub fn materialize(repo: &Repository, tree_id: Oid, paths: &LabPaths) -> Result<PathBuf> {
    let destination = source_dir(paths, tree_id);
    if destination.is_dir() {
        return Ok(destination);
    }
    let temporary = temp_sibling(&paths.sources, &tree_id.to_string());
    remove_if_exists(&temporary)?;
    fs::create_dir_all(&temporary)?;
    let tree = repo.find_tree(tree_id)?;
    let written = write_tree(repo, &tree, &temporary)
        .and_then(|()| fs::rename(&temporary, &destination).map_err(Into::into));
    if let Err(error) = written {
        remove_if_exists(&temporary)?;
        return Err(error.context(format!(
            "writing tree {tree_id} to {}",
            destination.display()
        )));
    }
    Ok(destination)
}

pub fn source_dir(paths: &LabPaths, tree_id: Oid) -> PathBuf {
    paths.sources.join(tree_id.to_string())
}

fn write_tree(repo: &Repository, tree: &Tree, dir: &Path) -> Result<()> {
    for entry in tree.iter() {
        let path = dir.join(OsStr::from_bytes(entry.name_bytes()));
        match entry.kind() {
            Some(ObjectType::Tree) => {
                fs::create_dir(&path)?;
                write_tree(repo, &repo.find_tree(entry.id())?, &path)?;
            }
            Some(ObjectType::Blob) => write_blob(repo, entry.id(), entry.filemode(), &path)?,
            // Submodules are not part of the engine build.
            _ => {}
        }
    }
    Ok(())
}

fn write_blob(repo: &Repository, id: Oid, filemode: i32, path: &Path) -> Result<()> {
    let blob = repo.find_blob(id)?;
    if filemode == i32::from(FileMode::Link) {
        std::os::unix::fs::symlink(OsStr::from_bytes(blob.content()), path)?;
        return Ok(());
    }
    fs::write(path, blob.content())?;
    if filemode == i32::from(FileMode::BlobExecutable) {
        fs::set_permissions(path, fs::Permissions::from_mode(0o755))?;
    }
    Ok(())
}
