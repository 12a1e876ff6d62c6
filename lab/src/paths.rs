//! Where the lab keeps its cache inside the repository being measured, and how it writes files:
//! atomically, never onto one of its own inputs, and under an advisory lock while a file is
//! appended to.

use std::fs::{self, File, TryLockError};
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

use anyhow::{bail, Context, Result};

#[derive(Debug, Clone)]
pub struct LabPaths {
    pub(crate) workdir: PathBuf,
    pub(crate) root: PathBuf,
    pub(crate) sources: PathBuf,
    pub binaries: PathBuf,
    pub(crate) cargo_target: PathBuf,
    pub scratch: PathBuf,
    pub(crate) baselines: PathBuf,
}

impl LabPaths {
    pub fn new(workdir: &Path) -> Self {
        let root = workdir.join("target").join("lab");
        Self {
            workdir: workdir.to_path_buf(),
            sources: root.join("src"),
            binaries: root.join("bin"),
            cargo_target: root.join("cargo-target"),
            scratch: root.join("tmp"),
            baselines: workdir.join("baselines"),
            root,
        }
    }

    pub fn create_dirs(&self) -> Result<()> {
        for dir in [&self.sources, &self.binaries, &self.scratch] {
            fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        Ok(())
    }

    /// Clears what an interrupted run left behind. Only call with the lock held: then no other
    /// run can be writing these.
    pub(crate) fn remove_stale_temporaries(&self) -> Result<()> {
        for dir in [&self.sources, &self.binaries, &self.scratch] {
            for entry in fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
                let entry = entry?;
                let stale = *dir == self.scratch
                    || entry.file_name().to_string_lossy().starts_with(".tmp-");
                if stale {
                    remove_if_exists(&entry.path())?;
                }
            }
        }
        Ok(())
    }

    /// Holds an exclusive lock on `target/lab/lock` until dropped, so two lab runs neither
    /// corrupt the cache nor disturb each other's timings.
    pub fn lock(&self, on_wait: impl FnOnce()) -> Result<File> {
        let path = self.root.join("lock");
        let file = File::create(&path).with_context(|| format!("creating {}", path.display()))?;
        if file.try_lock().is_err() {
            on_wait();
            file.lock()
                .with_context(|| format!("locking {}", path.display()))?;
        }
        Ok(file)
    }
}

/// A name unique to this process for temporary siblings of cache entries; the final rename
/// makes an entry appear whole or not at all.
pub(crate) fn temp_sibling(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!(".tmp-{name}-{}", std::process::id()))
}

pub(crate) fn remove_if_exists(path: &Path) -> Result<()> {
    let result = if path.is_dir() {
        fs::remove_dir_all(path)
    } else {
        fs::remove_file(path)
    };
    match result {
        Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
            Err(error).with_context(|| format!("removing {}", path.display()))
        }
        _ => Ok(()),
    }
}

/// Refuses a path `write_atomically` could not write, before any work whose result it would
/// hold: its directory is created if missing and a temporary file is made and removed there.
pub(crate) fn check_writable(path: &Path) -> Result<()> {
    if path.is_dir() {
        anyhow::bail!("{} is a directory, not a file to write", path.display());
    }
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    fs::create_dir_all(dir).with_context(|| format!("cannot write {}", path.display()))?;
    // Removed when dropped.
    tempfile::Builder::new()
        .prefix(".lab-write-check-")
        .tempfile_in(dir)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// Writes `contents` through a temporary sibling and a rename (tempfile's `persist`), so
/// readers never see half a file. Creates the parent directory. Used by baselines, calibration files, pools and
/// `lab tables --apply`.
pub(crate) fn write_atomically(path: &Path, contents: &[u8]) -> Result<()> {
    use std::io::Write;
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let written = (|| -> std::io::Result<()> {
        // A hidden sibling with a random name, so the rename stays on one file system and two
        // writers (threads or processes) never share it; dropped unpersisted, it is removed.
        let mut temporary = tempfile::Builder::new()
            .prefix(&format!(".{file_name}."))
            .suffix(".tmp")
            .permissions(ordinary_file_permissions())
            .tempfile_in(dir)?;
        temporary.write_all(contents)?;
        temporary.as_file().sync_all()?;
        temporary.persist(path).map_err(|error| error.error)?;
        Ok(())
    })();
    written.with_context(|| format!("writing {}", path.display()))
}

/// What `File::create` gives (0666 less the umask): tempfile's own default, 0600, would hide
/// stores and reports from the other users of a shared machine.
fn ordinary_file_permissions() -> fs::Permissions {
    use std::os::unix::fs::PermissionsExt;
    fs::Permissions::from_mode(0o666)
}

/// Takes an advisory exclusive lock (`flock`) on `file` without waiting; it is released when
/// the file is closed, also when the process dies. Held by a match on its results file, so no
/// second run appends to it. A lock another process holds is an error naming that process.
pub(crate) fn try_lock_exclusive(file: &File, path: &Path) -> Result<()> {
    match file.try_lock() {
        Ok(()) => Ok(()),
        Err(TryLockError::WouldBlock) => bail!(
            "{} is in use by {}: another lab run is writing it; wait for it to end",
            path.display(),
            lock_holder(file)
        ),
        Err(TryLockError::Error(error)) => {
            Err(error).with_context(|| format!("locking {}", path.display()))
        }
    }
}

/// The process that holds an advisory lock on the file at `path`: `None` when the file is free
/// (or cannot be opened).
pub(crate) fn locked_by(path: &Path) -> Option<String> {
    let file = File::open(path).ok()?;
    match file.try_lock() {
        Err(TryLockError::WouldBlock) => Some(lock_holder(&file)),
        _ => None,
    }
}

/// The longest `/proc/locks` the lab reads to name a lock's holder.
const MAX_PROC_LOCKS_BYTES: u64 = 4 << 20;
/// The longest command line of a holder the lab quotes.
const MAX_HOLDER_COMMAND_BYTES: u64 = 200;

/// `pid 4242 (lab match ...)`: the process that holds a `flock` on `file`, as Linux's
/// `/proc/locks` lists it; "another process" where that is not available.
fn lock_holder(file: &File) -> String {
    let unknown = || "another process".to_string();
    let Ok(meta) = file.metadata() else {
        return unknown();
    };
    let dev = meta.dev();
    // glibc's encoding of a device number, as the kernel prints it in /proc/locks.
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    let key = format!("{major:02x}:{minor:02x}:{}", meta.ino());
    let mut locks = String::new();
    if File::open("/proc/locks")
        .and_then(|f| f.take(MAX_PROC_LOCKS_BYTES).read_to_string(&mut locks))
        .is_err()
    {
        return unknown();
    }
    let pid = locks.lines().find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let at = fields.iter().position(|field| *field == "FLOCK")?;
        let (pid, file_key) = (fields.get(at + 3)?, fields.get(at + 4)?);
        (*file_key == key)
            .then(|| pid.parse::<u32>().ok())
            .flatten()
    });
    let Some(pid) = pid else {
        return unknown();
    };
    let mut command = Vec::new();
    let _ = File::open(format!("/proc/{pid}/cmdline"))
        .and_then(|f| f.take(MAX_HOLDER_COMMAND_BYTES).read_to_end(&mut command));
    // A command line is untrusted text: its words are joined by spaces, control characters
    // shown escaped.
    let command: String = String::from_utf8_lossy(&command)
        .trim_end_matches('\0')
        .split('\0')
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .flat_map(|c| {
            let shown: Vec<char> = if c.is_control() {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            shown
        })
        .collect();
    if command.is_empty() {
        format!("pid {pid}")
    } else {
        format!("pid {pid} ({command})")
    }
}

/// A file a command reads or writes, named by its flag for the error messages.
#[derive(Debug, Clone)]
pub(crate) struct NamedPath {
    pub(crate) role: String,
    pub(crate) path: PathBuf,
}

impl NamedPath {
    pub(crate) fn new(role: impl Into<String>, path: &Path) -> NamedPath {
        NamedPath {
            role: role.into(),
            path: path.to_path_buf(),
        }
    }
}

/// Refuses, before anything runs, an output that is the same file as an input or as another
/// output: writing it would destroy what the command reads, or another of its results. Paths
/// are compared canonically (symbolic links resolved, also for a file not written yet) and,
/// where both files exist, by device and inode (hard links).
pub(crate) fn refuse_aliases(inputs: &[NamedPath], outputs: &[NamedPath]) -> Result<()> {
    let inputs: Vec<_> = inputs
        .iter()
        .map(|named| (named, FileIdentity::of(&named.path)))
        .collect();
    let outputs: Vec<_> = outputs
        .iter()
        .map(|named| (named, FileIdentity::of(&named.path)))
        .collect();
    for (index, (output, identity)) in outputs.iter().enumerate() {
        let earlier_outputs = outputs[..index]
            .iter()
            .map(|(named, other)| (named, other, "writes"));
        let clash = inputs
            .iter()
            .map(|(named, other)| (named, other, "reads"))
            .chain(earlier_outputs)
            .find(|(_, other, _)| identity.same_as(other));
        if let Some((other, _, verb)) = clash {
            bail!(
                "{} {} is the same file as {} {}, which this command also {verb}; choose another path",
                output.role,
                output.path.display(),
                other.role,
                other.path.display()
            );
        }
    }
    Ok(())
}

/// Whether two paths name one file (as [`refuse_aliases`] compares them).
pub(crate) fn same_file(a: &Path, b: &Path) -> bool {
    FileIdentity::of(a).same_as(&FileIdentity::of(b))
}

/// What makes two paths one file.
#[derive(Debug)]
struct FileIdentity {
    canonical: PathBuf,
    /// Device and inode, when the file exists.
    inode: Option<(u64, u64)>,
}

impl FileIdentity {
    fn of(path: &Path) -> FileIdentity {
        FileIdentity {
            canonical: canonical_path(path),
            inode: fs::metadata(path).ok().map(|meta| (meta.dev(), meta.ino())),
        }
    }

    fn same_as(&self, other: &FileIdentity) -> bool {
        match (self.inode, other.inode) {
            (Some(mine), Some(theirs)) => mine == theirs,
            _ => self.canonical == other.canonical,
        }
    }
}

/// The most symbolic links followed for a path that does not exist yet (the kernel's limit).
const MAX_SYMLINKS: u32 = 40;

/// The absolute path `path` names once symbolic links are resolved, also when the file (or its
/// directory) does not exist yet: the longest existing ancestor is canonicalized, a dangling
/// link is followed to where it points, and the rest is joined lexically.
fn canonical_path(path: &Path) -> PathBuf {
    let mut path = std::env::current_dir()
        .map(|dir| dir.join(path))
        .unwrap_or_else(|_| path.to_path_buf());
    for _ in 0..MAX_SYMLINKS {
        if let Ok(canonical) = fs::canonicalize(&path) {
            return canonical;
        }
        let Ok(target) = fs::read_link(&path) else {
            break;
        };
        path = match path.parent() {
            Some(dir) => dir.join(target),
            None => target,
        };
    }
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => canonical_path(parent).join(name),
        // Ends in `..` under a directory that does not exist: nothing there to resolve.
        (Some(_), None) => canonical_path(&lexical(&path)),
        _ => path,
    }
}

/// `.` and `..` removed without touching the file system.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(role: &str, path: &Path) -> NamedPath {
        NamedPath::new(role, path)
    }

    #[test]
    fn aliases_are_found_through_links_and_missing_files() {
        let dir = tempfile::tempdir().unwrap();
        let results = dir.path().join("results.jsonl");
        fs::write(&results, "x\n").unwrap();
        let hard = dir.path().join("hard.jsonl");
        fs::hard_link(&results, &hard).unwrap();
        let soft = dir.path().join("soft.jsonl");
        std::os::unix::fs::symlink(&results, &soft).unwrap();
        let dangling = dir.path().join("dangling.json");
        std::os::unix::fs::symlink("not-yet.json", &dangling).unwrap();
        let dotted = dir.path().join("sub/../results.jsonl");
        let input = [named("--out", &results)];
        for alias in [&results, &hard, &soft, &dotted] {
            let refused = refuse_aliases(&input, &[named("--export-json", alias)]).unwrap_err();
            assert!(
                refused.to_string().contains("is the same file as --out"),
                "{refused}"
            );
        }
        // Two outputs not written yet, one through a dangling link.
        let not_yet = dir.path().join("not-yet.json");
        let refused = refuse_aliases(
            &[],
            &[named("--export-json", &not_yet), named("--pgn", &dangling)],
        )
        .unwrap_err();
        assert!(refused.to_string().contains("--pgn"), "{refused}");
        let missing_dir = dir.path().join("new/dir/report.json");
        assert!(refuse_aliases(
            &input,
            &[
                named("--export-json", &missing_dir),
                named("--pgn", &not_yet)
            ]
        )
        .is_ok());
    }

    #[test]
    fn concurrent_atomic_writes_of_one_file_each_land_whole() {
        // Threads of one process share a process id: each write needs its own temporary.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("store.json");
        let writers: Vec<_> = (0..8u8)
            .map(|writer| {
                let path = path.clone();
                std::thread::spawn(move || {
                    for _ in 0..200 {
                        write_atomically(&path, &[b'a' + writer; 4096])?;
                    }
                    anyhow::Ok(())
                })
            })
            .collect();
        for writer in writers {
            writer.join().unwrap().unwrap();
        }
        let written = fs::read(&path).unwrap();
        assert_eq!(written.len(), 4096);
        assert!(written.iter().all(|&byte| byte == written[0]), "mixed");
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        assert_eq!(names, ["store.json"], "no temporary left behind");
    }

    #[test]
    fn atomic_writes_get_the_permissions_of_a_created_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let created = dir.path().join("created");
        File::create(&created).unwrap();
        let atomic = dir.path().join("atomic");
        write_atomically(&atomic, b"x").unwrap();
        let mode = |path: &Path| fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&atomic), mode(&created));
    }

    #[test]
    fn a_held_lock_is_refused_with_its_holder() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("held.jsonl");
        let holder = File::create(&path).unwrap();
        try_lock_exclusive(&holder, &path).unwrap();
        let second = File::open(&path).unwrap();
        let refused = try_lock_exclusive(&second, &path).unwrap_err().to_string();
        assert!(
            refused.contains(&format!("pid {}", std::process::id())),
            "{refused}"
        );
        assert!(locked_by(&path).is_some());
        drop(holder);
        assert!(locked_by(&path).is_none());
        try_lock_exclusive(&second, &path).unwrap();
    }
}
