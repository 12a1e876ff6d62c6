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
        let read =
            || fs::read(&absolute).with_context(|| format!("reading {}", absolute.display()));
        let (mode, contents) = if kind.is_symlink() {
            let target = fs::read_link(&absolute)
                .with_context(|| format!("reading the link {}", absolute.display()))?;
            (FileMode::Link, target.as_os_str().as_bytes().to_vec())
        } else if !kind.is_file() {
            // Reading a FIFO blocks until a writer comes, a socket cannot be read at all: neither
            // is source.
            eprintln!(
                "warning: {WORKTREE}: skipping {} ({}): only regular files, directories and \
                 symbolic links are snapshotted",
                absolute.display(),
                special_kind(&kind)
            );
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

fn special_kind(kind: &fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_char_device() {
        "a character device"
    } else {
        "not a regular file"
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

/// Writes the tree into `target/lab/src/<tree-id>/` and returns that directory.
///
/// A directory already there is first checked against the tree, file by file (contents, the
/// executable bit, links, nothing missing, nothing extra): when anything differs, say an edit
/// made under `target/lab/src/`, it is written again from the object database, with a note
/// naming the first difference. The snapshot may differ from the tree in the ways the lab
/// itself makes (see [`SnapshotLayout`]).
pub fn materialize(repo: &Repository, tree_id: Oid, paths: &LabPaths) -> Result<PathBuf> {
    let destination = source_dir(paths, tree_id);
    let tree = repo.find_tree(tree_id)?;
    let layout = SnapshotLayout::of(repo, &tree)?;
    if destination.symlink_metadata().is_ok() {
        match layout.first_difference(repo, &tree, &destination, "")? {
            None => return Ok(destination),
            Some(difference) => {
                eprintln!(
                    "note: the source snapshot {} does not match tree {tree_id} ({difference}); \
                     writing it again",
                    destination.display()
                );
                remove_if_exists(&destination)?;
            }
        }
    }
    let temporary = temp_sibling(&paths.sources, &tree_id.to_string());
    remove_if_exists(&temporary)?;
    fs::create_dir_all(&temporary)?;
    let written = write_tree(repo, &tree, &temporary)
        .and_then(|()| layout.write(&temporary))
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

/// How a source snapshot may differ from its tree, by the lab's own doing.
struct SnapshotLayout {
    /// The root `Cargo.toml` that builds the engine alone, for revisions whose workspace names
    /// members the tree lacks (see [`crate::workspace`]).
    root_manifest: Option<Vec<u8>>,
    /// True when cargo owns the root `Cargo.lock`: the tree has none (cargo writes one) or the
    /// workspace was narrowed (cargo prunes it).
    cargo_owns_lock: bool,
}

const ROOT_MANIFEST: &str = "Cargo.toml";
const ROOT_LOCK: &str = "Cargo.lock";

impl SnapshotLayout {
    fn of(repo: &Repository, tree: &Tree) -> Result<SnapshotLayout> {
        let root_manifest =
            crate::workspace::standalone_manifest(repo, tree.id())?.map(|s| s.manifest);
        let cargo_owns_lock = root_manifest.is_some() || tree.get_name(ROOT_LOCK).is_none();
        Ok(SnapshotLayout {
            root_manifest,
            cargo_owns_lock,
        })
    }

    fn write(&self, dir: &Path) -> Result<()> {
        if let Some(manifest) = &self.root_manifest {
            let path = dir.join(ROOT_MANIFEST);
            fs::write(&path, manifest).with_context(|| format!("writing {}", path.display()))?;
        }
        Ok(())
    }

    /// The first way `dir` differs from `tree`, as "PATH: what"; `relative` is `dir`'s path
    /// in the snapshot. Unreadable entries count as differences.
    fn first_difference(
        &self,
        repo: &Repository,
        tree: &Tree,
        dir: &Path,
        relative: &str,
    ) -> Result<Option<String>> {
        let mut expected = BTreeSet::new();
        for entry in tree.iter() {
            let name = OsStr::from_bytes(entry.name_bytes());
            let path = join_relative(relative, &name.to_string_lossy());
            let on_disk = dir.join(name);
            let kind = match entry.kind() {
                Some(ObjectType::Tree) => Kind::Dir,
                Some(ObjectType::Blob) if entry.filemode() == i32::from(FileMode::Link) => {
                    Kind::Link
                }
                Some(ObjectType::Blob) => Kind::File {
                    executable: entry.filemode() == i32::from(FileMode::BlobExecutable),
                },
                // Submodules are not written (see `write_tree`).
                _ => continue,
            };
            expected.insert(name.to_os_string());
            if relative.is_empty() && path == ROOT_LOCK && self.cargo_owns_lock {
                continue;
            }
            let metadata = match on_disk.symlink_metadata() {
                Ok(metadata) => metadata,
                Err(_) => return Ok(Some(format!("{path}: missing"))),
            };
            let difference = match kind {
                Kind::Dir if metadata.is_dir() => {
                    let subtree = repo.find_tree(entry.id())?;
                    let found = self.first_difference(repo, &subtree, &on_disk, &path)?;
                    if found.is_some() {
                        return Ok(found);
                    }
                    None
                }
                Kind::Dir => Some("not a directory"),
                Kind::Link => match fs::read_link(&on_disk) {
                    Ok(target) => {
                        (Oid::hash_object(ObjectType::Blob, target.as_os_str().as_bytes())?
                            != entry.id())
                        .then_some("a different link target")
                    }
                    Err(_) => Some("not a symbolic link"),
                },
                Kind::File { executable } => {
                    let expected_contents = if relative.is_empty() && path == ROOT_MANIFEST {
                        self.root_manifest.as_deref()
                    } else {
                        None
                    };
                    file_difference(
                        &on_disk,
                        &metadata,
                        executable,
                        entry.id(),
                        expected_contents,
                    )
                }
            };
            if let Some(what) = difference {
                return Ok(Some(format!("{path}: {what}")));
            }
        }
        let extras = fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
        for extra in extras {
            let name = extra?.file_name();
            if expected.contains(&name) {
                continue;
            }
            if relative.is_empty() && name == ROOT_LOCK && self.cargo_owns_lock {
                continue;
            }
            let path = join_relative(relative, &name.to_string_lossy());
            return Ok(Some(format!("{path}: not in the tree")));
        }
        Ok(None)
    }
}

enum Kind {
    Dir,
    Link,
    File { executable: bool },
}

/// How a regular file on disk differs from blob `id` (or from `contents`, when the lab writes
/// its own version of the file), if it does.
fn file_difference(
    path: &Path,
    metadata: &fs::Metadata,
    executable: bool,
    id: Oid,
    contents: Option<&[u8]>,
) -> Option<&'static str> {
    if !metadata.is_file() {
        return Some("not a regular file");
    }
    if (metadata.permissions().mode() & 0o111 != 0) != executable {
        return Some("a different executable bit");
    }
    let same = match contents {
        Some(contents) => fs::read(path).is_ok_and(|on_disk| on_disk == contents),
        None => Oid::hash_file(ObjectType::Blob, path).is_ok_and(|on_disk| on_disk == id),
    };
    (!same).then_some("edited")
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
