//! Source snapshots: a revision's tree written into `target/lab/src/<tree-id>/` from the object
//! database, and an existing snapshot checked against its tree before it is used.

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use git2::{FileMode, ObjectType, Oid, Repository, Tree};

use super::revision::{check_tree_entries, join_relative, Revision};
use crate::paths::{remove_if_exists, temp_sibling, LabPaths};
use crate::progress::Progress;

/// Writes the revision's tree into `target/lab/src/<tree-id>/` and returns that directory.
/// A tree git would not check out is refused first (see [`check_tree_entries`]).
///
/// A directory already there is first checked against the tree, file by file (contents, the
/// executable bit, links, nothing missing, nothing extra): when anything differs, say an edit
/// made under `target/lab/src/`, it is written again from the object database, with a note
/// naming the first difference. The snapshot may differ from the tree in the ways the lab
/// itself makes (see [`SnapshotLayout`]).
pub fn materialize(
    repo: &Repository,
    revision: &Revision,
    paths: &LabPaths,
    progress: &Progress,
) -> Result<PathBuf> {
    check_tree_entries(repo, revision)?;
    let tree_id = revision.tree;
    let destination = source_dir(paths, tree_id);
    let tree = repo.find_tree(tree_id)?;
    let layout = SnapshotLayout::of(repo, &tree)?;
    if destination.symlink_metadata().is_ok() {
        match layout.first_difference(repo, &tree, &destination, "")? {
            None => return Ok(destination),
            Some(difference) => {
                progress.line(&format!(
                    "note: the source snapshot {} does not match tree {tree_id} ({difference}); \
                     writing it again",
                    destination.display()
                ));
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
    /// members the tree lacks (see [`super::workspace`]).
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
            super::workspace::standalone_manifest(repo, tree.id())?.map(|s| s.manifest);
        let cargo_owns_lock = root_manifest.is_some() || tree.get_name(ROOT_LOCK).is_none();
        Ok(SnapshotLayout {
            root_manifest,
            cargo_owns_lock,
        })
    }

    fn write(&self, dir: &Path) -> Result<()> {
        if let Some(manifest) = &self.root_manifest {
            let path = dir.join(ROOT_MANIFEST);
            // Replaced, never written through: the tree's own may be a link out of the cache.
            remove_if_exists(&path)?;
            write_new_file(&path, manifest)
                .with_context(|| format!("writing {}", path.display()))?;
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

pub(crate) fn source_dir(paths: &LabPaths, tree_id: Oid) -> PathBuf {
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
    write_new_file(path, blob.content())?;
    if filemode == i32::from(FileMode::BlobExecutable) {
        fs::set_permissions(path, fs::Permissions::from_mode(0o755))?;
    }
    Ok(())
}

/// Writes a file that must not exist yet: a link left at `path` is never followed.
pub(super) fn write_new_file(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?
        .write_all(contents)
}
