//! Resolving revisions and writing their trees into the source cache, without touching the
//! user's working tree, index, HEAD or stash.

use std::collections::BTreeSet;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};
use git2::{FileMode, Index, IndexEntry, IndexTime, Oid, Repository};

use crate::paths::LabPaths;

/// The pseudo-revision naming the uncommitted working tree.
pub(crate) const WORKTREE: &str = "WORKTREE";

#[derive(Debug, Clone)]
pub struct Revision {
    pub spec: String,
    pub commit: Option<Oid>,
    pub tree: Oid,
}

impl Revision {
    pub(crate) fn short_name(&self) -> String {
        match self.commit {
            Some(commit) => format!(
                "{} ({})",
                self.spec,
                crate::input::short_commit(&commit.to_string())
            ),
            None => format!(
                "{} (tree {})",
                self.spec,
                crate::input::short_commit(&self.tree.to_string())
            ),
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
    keep_new_objects_in_memory(&repo)?;
    Ok(repo)
}

/// Puts an in-memory object store in front of the repository's own, so every object the lab
/// writes (the blobs and trees of a `WORKTREE` snapshot) lives in this process only and the
/// user's `.git/objects` never grows. Reads still find the repository's objects.
fn keep_new_objects_in_memory(repo: &Repository) -> Result<()> {
    // Above the loose (1) and pack (2) backends, so writes go here first; libgit2 then never
    // falls through to the loose store, since the in-memory write does not fail.
    const IN_MEMORY_PRIORITY: i32 = 1000;
    repo.odb()?
        .add_new_mempack_backend(IN_MEMORY_PRIORITY)
        .context("adding an in-memory object store")?;
    Ok(())
}

/// `unknown revision 'X': git's reason`; where libgit2 gives none (it says "no error" for a
/// few forms, as `@{-1}` in a repository without that checkout history), a reason of ours.
pub(crate) fn unknown_revision(spec: &str, error: &git2::Error) -> anyhow::Error {
    let reason = match error.message().trim() {
        "" | "no error" => "git cannot resolve it to an object in this repository",
        message => message,
    };
    anyhow!("unknown revision '{spec}': {reason}")
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
        .map_err(|e| unknown_revision(spec, &e))?;
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

/// The deepest directory nesting of a tree the lab writes out, as git's `core.maxTreeDepth`.
pub const MAX_TREE_DEPTH: usize = 2048;
/// The most files, links and directories a tree the lab writes out may hold, counted along
/// every path (a subtree named twice counts twice): far above any engine's source, far below
/// a crafted tree whose directories repeat one subtree to fill the disk.
pub(crate) const MAX_TREE_ENTRIES: u64 = 1_000_000;

/// Why git's checkout would refuse to write a tree entry named `name`, if it would: a name that
/// is empty, `.` or `..`, `.git` in any case, or holds `/` or NUL could write outside the
/// directory being filled, or into a repository's own files.
pub fn unsafe_entry_name(name: &[u8]) -> Option<&'static str> {
    if name.is_empty() {
        Some("an empty name")
    } else if name == b"." || name == b".." {
        Some("a name that leaves its directory")
    } else if name.eq_ignore_ascii_case(b".git") {
        Some("the name of git's own directory")
    } else if name.contains(&b'/') {
        Some("a name with '/'")
    } else if name.contains(&0) {
        Some("a name with a NUL byte")
    } else {
        None
    }
}

/// Refuses the revision when its tree holds an entry that git's checkout would refuse to write
/// (see [`unsafe_entry_name`]), two entries of one name in a directory, directories nested
/// deeper than [`MAX_TREE_DEPTH`] or more than [`MAX_TREE_ENTRIES`] entries: such a tree comes
/// from a crafted object, never from git itself, and writing it could reach outside the cache
/// or fill the disk. Called before anything is written; the error names the revision, its
/// commit and the entry. Each distinct subtree is read once.
pub fn check_tree_entries(repo: &Repository, revision: &Revision) -> Result<()> {
    let refuse = |path: &str, why: &str| {
        let of = match revision.commit {
            Some(commit) => format!("commit {commit}"),
            None => format!("tree {}", revision.tree),
        };
        anyhow!(
            "refusing revision '{}' ({of}): its tree has the entry {path:?}, {why}, which git \
             would not check out; nothing was written",
            revision.spec
        )
    };
    let too_deep = format!("a directory nested deeper than {MAX_TREE_DEPTH} levels");
    let too_many = format!("where the tree passes {MAX_TREE_ENTRIES} entries");
    // Per subtree already checked: its height in directories and its entries along every path.
    let mut checked: std::collections::HashMap<Oid, (usize, u64)> = Default::default();
    // Depth-first, children before their parent's total: (tree, its path, its depth, whether
    // its children were already pushed).
    let mut pending = vec![(revision.tree, String::new(), 1usize, false)];
    while let Some((tree_id, path, depth, expanded)) = pending.pop() {
        if let Some(&(height, _)) = checked.get(&tree_id) {
            if depth + height - 1 > MAX_TREE_DEPTH {
                return Err(refuse(&path, &too_deep));
            }
            continue;
        }
        if depth > MAX_TREE_DEPTH {
            return Err(refuse(&path, &too_deep));
        }
        let tree = repo.find_tree(tree_id)?;
        if expanded {
            let mut height = 1;
            let mut entries = 0u64;
            for entry in tree.iter() {
                entries = entries.saturating_add(1);
                if let Some(&(below, count)) = checked.get(&entry.id()) {
                    if entry.kind() == Some(git2::ObjectType::Tree) {
                        height = height.max(below + 1);
                        entries = entries.saturating_add(count);
                    }
                }
            }
            if entries > MAX_TREE_ENTRIES {
                return Err(refuse(&path, &too_many));
            }
            checked.insert(tree_id, (height, entries));
            continue;
        }
        pending.push((tree_id, path.clone(), depth, true));
        let mut names = BTreeSet::new();
        for entry in tree.iter() {
            let name = entry.name_bytes();
            let entry_path = join_relative(&path, &String::from_utf8_lossy(name));
            if let Some(why) = unsafe_entry_name(name) {
                return Err(refuse(&entry_path, why));
            }
            if !names.insert(name.to_vec()) {
                return Err(refuse(
                    &entry_path,
                    "a name that appears twice in its directory",
                ));
            }
            if entry.kind() == Some(git2::ObjectType::Tree) {
                pending.push((entry.id(), entry_path, depth + 1, false));
            }
        }
    }
    Ok(())
}

/// The id of an entry (a subtree or blob) at `path` in the revision's tree, if present.
pub(crate) fn entry_id(repo: &Repository, tree: Oid, path: &str) -> Result<Option<Oid>> {
    let tree = repo.find_tree(tree)?;
    match tree.get_path(Path::new(path)) {
        Ok(entry) => Ok(Some(entry.id())),
        Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Builds a tree object of the working tree as it is on disk: tracked files plus untracked
/// files that are not ignored. It uses a private in-memory index, so the user's index file is
/// only read, and its blobs and trees go to the in-memory store (see [`open_repository`]).
/// Special files (FIFOs, sockets, devices) are skipped with a warning naming each.
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
        let metadata = absolute
            .symlink_metadata()
            .with_context(|| format!("reading {}", absolute.display()))?;
        let kind = metadata.file_type();
        // The opened file is checked again: one swapped for a FIFO since is refused, not waited on.
        let read = || crate::input::read_bytes(&absolute, crate::input::WORKTREE_FILE);
        let (mode, contents) = if kind.is_symlink() {
            let target = fs::read_link(&absolute)
                .with_context(|| format!("reading the link {}", absolute.display()))?;
            (FileMode::Link, target.as_os_str().as_bytes().to_vec())
        } else if !kind.is_file() {
            // Reading a FIFO blocks until a writer comes, a socket cannot be read at all: neither
            // is source.
            crate::progress::warning(&format!(
                "warning: {WORKTREE}: skipping {} ({}): only regular files, directories and \
                 symbolic links are snapshotted",
                absolute.display(),
                crate::input::special_file_kind(&kind)
            ));
            return Ok(());
        } else if metadata.permissions().mode() & 0o111 != 0 {
            (FileMode::BlobExecutable, read()?)
        } else {
            (FileMode::Blob, read()?)
        };
        let id = self.repo.blob(&contents)?;
        index.add(&index_entry(path, mode, id, contents.len()))?;
        Ok(())
    }
}

pub(super) fn join_relative(parent: &str, name: &str) -> String {
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
