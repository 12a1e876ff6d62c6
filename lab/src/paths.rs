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

/// The most symbolic links followed from an output path to the file it names (Linux's own
/// limit); a longer chain is refused as a loop.
const MAX_LINKS_FOLLOWED: usize = 40;

/// Where a write to an output path lands.
#[derive(Debug)]
enum WriteTarget {
    /// A device, FIFO or open stream (`/dev/stdout`, a named pipe, `>(cmd)`): appended to as
    /// it stands, since renaming a file over it would replace the device, or cut off the file
    /// a shell opened as the lab's standard output.
    InPlace(PathBuf),
    /// A regular file, or none yet: replaced whole through a temporary sibling. A symbolic
    /// link's target is replaced, not the link.
    Replace(PathBuf),
}

/// `/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`: names of a stream the process already has
/// open. Their links (`pipe:[N]`, or the file a shell redirected) are the kernel's, not paths
/// to rename over.
fn names_an_open_stream(path: &Path) -> bool {
    let parts: Vec<_> = path.components().map(|part| part.as_os_str()).collect();
    let part = |index: usize, name: &str| parts.get(index).is_some_and(|part| *part == name);
    let rooted = path.has_root();
    rooted
        && ((part(1, "dev") && (part(2, "stdout") || part(2, "stderr") || part(2, "fd")))
            || (part(1, "proc") && part(3, "fd")))
}

fn write_target(path: &Path) -> Result<WriteTarget> {
    if names_an_open_stream(path) {
        return match fs::metadata(path) {
            Ok(meta) if meta.is_dir() => {
                bail!("{} is a directory, not a file to write", path.display())
            }
            _ => Ok(WriteTarget::InPlace(path.to_path_buf())),
        };
    }
    let mut path = path.to_path_buf();
    for _ in 0..MAX_LINKS_FOLLOWED {
        let link = match fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                refuse_a_planted_link(&path, &meta)?;
                fs::read_link(&path)
                    .with_context(|| format!("reading the link {}", path.display()))?
            }
            Ok(meta) if meta.is_dir() => {
                bail!("{} is a directory, not a file to write", path.display())
            }
            Ok(meta) if meta.is_file() => return Ok(WriteTarget::Replace(path)),
            Ok(_) => return Ok(WriteTarget::InPlace(path)),
            // Not there yet, or under a file: the directory check says which.
            Err(error)
                if matches!(
                    error.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
            {
                return Ok(WriteTarget::Replace(path))
            }
            Err(error) => {
                return Err(error).with_context(|| format!("cannot write {}", path.display()))
            }
        };
        path = match path.parent() {
            Some(dir) if link.is_relative() => dir.join(link),
            _ => link,
        };
        if names_an_open_stream(&path) {
            return Ok(WriteTarget::InPlace(path));
        }
    }
    bail!(
        "{} is a chain of more than {MAX_LINKS_FOLLOWED} symbolic links (a loop?)",
        path.display()
    )
}

/// The rule of Linux's `fs.protected_symlinks`, which following a link by hand would bypass:
/// in a sticky, world-writable directory (`/tmp`) a link is followed only when its owner is
/// the directory's or this process's, so no other user's planted link redirects a write.
fn refuse_a_planted_link(link: &Path, meta: &fs::Metadata) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    const STICKY_AND_WORLD_WRITABLE: u32 = 0o1002;
    let Ok(dir) = fs::metadata(parent_dir(link)) else {
        return Ok(());
    };
    if dir.permissions().mode() & STICKY_AND_WORLD_WRITABLE != STICKY_AND_WORLD_WRITABLE
        || meta.uid() == dir.uid()
    {
        return Ok(());
    }
    // /proc/self belongs to the process's effective user.
    match fs::metadata("/proc/self") {
        Ok(own) if own.uid() == meta.uid() => Ok(()),
        _ => bail!(
            "{} is another user's symbolic link in a shared directory: not followed",
            link.display()
        ),
    }
}

/// The directory a new file at `path` goes into, which may not exist yet.
fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

/// Refuses a path `write_atomically` could not write, before any work whose result it would
/// hold, and leaves nothing behind: a missing directory is not created here (the write
/// creates it), its nearest existing ancestor must take a temporary file.
pub(crate) fn check_writable(path: &Path) -> Result<()> {
    let WriteTarget::Replace(file) = write_target(path)? else {
        return Ok(());
    };
    let mut dir = parent_dir(&file);
    while fs::metadata(dir).is_err() {
        if fs::symlink_metadata(dir).is_ok() {
            bail!(
                "cannot write {}: {} is a dangling symbolic link",
                path.display(),
                dir.display()
            );
        }
        let parent = parent_dir(dir);
        if parent == dir {
            bail!(
                "cannot write {}: {} cannot be looked up",
                path.display(),
                dir.display()
            );
        }
        dir = parent;
    }
    if !dir.is_dir() {
        bail!(
            "cannot write {}: {} is not a directory",
            path.display(),
            dir.display()
        );
    }
    // Removed when dropped.
    tempfile::Builder::new()
        .prefix(".lab-write-check-")
        .tempfile_in(dir)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// Refuses an output of measured data (a pool, a book, a calibration file) that would replace
/// an existing file, before the work: such a file took minutes or hours to make, and other
/// files may name it. [`write_new`] holds to it at the end. A device or FIFO is let through.
pub(crate) fn refuse_existing(flag: &str, path: &Path) -> Result<()> {
    if let WriteTarget::Replace(file) = write_target(path)? {
        if fs::symlink_metadata(&file).is_ok() {
            bail!(
                "{flag} {} already exists: remove it or choose another {flag}",
                path.display()
            );
        }
    }
    Ok(())
}

/// The checks before the work of an output of measured data: it names no existing file
/// ([`refuse_existing`]) and can be written ([`check_writable`]).
pub(crate) fn check_new_output(flag: &str, path: &Path) -> Result<()> {
    refuse_existing(flag, path)?;
    check_writable(path).with_context(|| format!("{flag} {}", path.display()))
}

/// Whether a write may replace a file already there.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Existing {
    Replace,
    Refuse,
}

/// Writes `contents` through a temporary sibling and a rename (tempfile's `persist`), so
/// readers never see half a file, creating the parent directory; a device or stream is
/// appended to in place. A replaced file keeps its permissions. Used by baselines, stores,
/// exports and `lab tables --apply`.
pub(crate) fn write_atomically(path: &Path, contents: &[u8]) -> Result<()> {
    write_whole(path, contents, Existing::Replace)
}

/// [`write_atomically`] for measured data: a file that appeared at `path` since
/// [`refuse_existing`] checked (another run with the same `--out`) is not replaced.
pub(crate) fn write_new(path: &Path, contents: &[u8]) -> Result<()> {
    write_whole(path, contents, Existing::Refuse)
}

fn write_whole(path: &Path, contents: &[u8], existing: Existing) -> Result<()> {
    use std::io::Write;
    let file = match write_target(path)? {
        WriteTarget::InPlace(stream) => {
            let written = fs::OpenOptions::new()
                .append(true)
                .open(&stream)
                .and_then(|mut out| out.write_all(contents).and_then(|()| out.flush()));
            return written.with_context(|| format!("writing {}", path.display()));
        }
        WriteTarget::Replace(file) => file,
    };
    let dir = parent_dir(&file);
    fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let file_name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let kept_permissions = fs::metadata(&file).ok().map(|meta| meta.permissions());
    let written = (|| -> std::io::Result<()> {
        // A hidden sibling with a random name, so the rename stays on one file system and two
        // writers (threads or processes) never share it; dropped unpersisted, it is removed.
        let mut temporary = tempfile::Builder::new()
            .prefix(&format!(".{file_name}."))
            .suffix(".tmp")
            .permissions(ordinary_file_permissions())
            .tempfile_in(dir)?;
        if let Some(permissions) = &kept_permissions {
            temporary.as_file().set_permissions(permissions.clone())?;
        }
        temporary.write_all(contents)?;
        temporary.as_file().sync_all()?;
        match existing {
            Existing::Replace => temporary.persist(&file).map(drop),
            Existing::Refuse => temporary.persist_noclobber(&file).map(drop),
        }
        .map_err(|error| error.error)
    })();
    match written {
        Err(error) if existing == Existing::Refuse && error.kind() == std::io::ErrorKind::AlreadyExists => bail!(
            "{} was created by another run while this one worked: it is kept, and this run's result is not written",
            path.display()
        ),
        written => written.with_context(|| format!("writing {}", path.display())),
    }
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
    fn a_link_is_written_through_and_a_fifo_in_place() {
        use std::io::Read;
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("report.json");
        fs::write(&target, "old").unwrap();
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink("report.json", &link).unwrap();
        write_atomically(&link, b"new").unwrap();
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read_to_string(&target).unwrap(), "new");
        // A dangling link creates the file it names, as the shell's `>` does.
        let dangling = dir.path().join("dangling.json");
        std::os::unix::fs::symlink("sub/later.json", &dangling).unwrap();
        write_atomically(&dangling, b"later").unwrap();
        assert_eq!(
            fs::read_to_string(dir.path().join("sub/later.json")).unwrap(),
            "later"
        );
        let looped = dir.path().join("loop.json");
        std::os::unix::fs::symlink("loop.json", &looped).unwrap();
        let refused = write_atomically(&looped, b"x").unwrap_err();
        assert!(refused.to_string().contains("symbolic links"), "{refused}");

        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|status| status.success()) {
            eprintln!("mkfifo not available: the FIFO half is skipped");
            return;
        }
        let (sender, received) = std::sync::mpsc::channel();
        {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                let mut text = String::new();
                File::open(&fifo)
                    .unwrap()
                    .read_to_string(&mut text)
                    .unwrap();
                let _ = sender.send(text);
            });
        }
        check_writable(&fifo).unwrap();
        write_atomically(&fifo, b"through the pipe").unwrap();
        assert!(
            !fs::metadata(&fifo).unwrap().is_file(),
            "the FIFO was replaced"
        );
        // A write that missed the FIFO leaves its reader waiting: a bounded wait fails instead.
        let text = received.recv_timeout(std::time::Duration::from_secs(20));
        assert_eq!(text.as_deref(), Ok("through the pipe"));
    }

    #[test]
    fn measured_data_is_never_replaced_and_a_dangling_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let pool = dir.path().join("pool.epd");
        refuse_existing("--out", &pool).unwrap();
        write_new(&pool, b"first").unwrap();
        let refused = refuse_existing("--out", &pool).unwrap_err();
        assert!(refused.to_string().contains("already exists"), "{refused}");
        // Another run's file, made after this run's check: kept.
        let refused = write_new(&pool, b"second").unwrap_err();
        assert!(
            refused.to_string().contains("created by another run"),
            "{refused}"
        );
        assert_eq!(fs::read_to_string(&pool).unwrap(), "first");

        let dangling = dir.path().join("gone");
        std::os::unix::fs::symlink("nowhere", &dangling).unwrap();
        let refused = check_writable(&dangling.join("pool.epd")).unwrap_err();
        assert!(
            refused.to_string().contains("dangling symbolic link"),
            "{refused}"
        );
    }

    #[test]
    fn only_the_names_of_open_streams_are_streams() {
        for stream in [
            "/dev/stdout",
            "/dev/stderr",
            "/dev/fd/1",
            "/proc/self/fd/1",
            "/proc/42/fd/3",
        ] {
            assert!(names_an_open_stream(Path::new(stream)), "{stream}");
        }
        for file in [
            "/dev/shm/pool.epd",
            "/devel/x",
            "dev/stdout",
            "/proc/self/status",
            "/tmp/fd/1",
        ] {
            assert!(!names_an_open_stream(Path::new(file)), "{file}");
        }
    }

    proptest::proptest! {
        /// A chain of links, each relative or absolute, some through a subdirectory, ends at
        /// one file: a write through its first link lands there whole, every link stays a
        /// link, and nothing else appears.
        #[test]
        fn a_write_through_a_chain_of_links_lands_at_its_end(
            hops in proptest::collection::vec((proptest::bool::ANY, proptest::bool::ANY), 1..6),
            end_exists in proptest::bool::ANY,
        ) {
            let dir = tempfile::tempdir().unwrap();
            fs::create_dir(dir.path().join("sub")).unwrap();
            let end = dir.path().join("end.json");
            if end_exists {
                fs::write(&end, "old").unwrap();
            }
            // Link i is in `sub/` or the top directory and names link i + 1 (the last, end.json).
            let place = |index: usize, in_sub: bool| {
                let name = format!("link-{index}");
                if in_sub { dir.path().join("sub").join(name) } else { dir.path().join(name) }
            };
            let links: Vec<PathBuf> =
                hops.iter().enumerate().map(|(index, &(in_sub, _))| place(index, in_sub)).collect();
            for (index, &(_, relative)) in hops.iter().enumerate() {
                let next = links.get(index + 1).unwrap_or(&end);
                let target = if relative {
                    let from_sub = links[index].parent() != Some(dir.path());
                    let to_sub = next.parent() != Some(dir.path());
                    let name = PathBuf::from(next.file_name().unwrap());
                    match (from_sub, to_sub) {
                        (false, false) | (true, true) => name,
                        (false, true) => Path::new("sub").join(name),
                        (true, false) => Path::new("..").join(name),
                    }
                } else {
                    next.clone()
                };
                std::os::unix::fs::symlink(&target, &links[index]).unwrap();
            }
            write_atomically(&links[0], b"through").unwrap();
            proptest::prop_assert_eq!(fs::read_to_string(&end).unwrap(), "through");
            for link in &links {
                proptest::prop_assert!(fs::symlink_metadata(link).unwrap().file_type().is_symlink());
            }
            let entries = fs::read_dir(dir.path()).unwrap().count()
                + fs::read_dir(dir.path().join("sub")).unwrap().count();
            proptest::prop_assert_eq!(entries, links.len() + 2);
        }
    }

    #[test]
    fn a_refused_or_checked_path_leaves_no_directory_behind() {
        let dir = tempfile::tempdir().unwrap();
        let deep = dir.path().join("new/sub/report.html");
        check_writable(&deep).unwrap();
        assert!(!dir.path().join("new").exists());
        let refused = check_writable(dir.path()).unwrap_err();
        assert!(refused.to_string().contains("is a directory"), "{refused}");
        let file = dir.path().join("plain");
        fs::write(&file, "x").unwrap();
        let under_file = file.join("report.html");
        let refused = check_writable(&under_file).unwrap_err();
        assert!(
            refused.to_string().contains("is not a directory"),
            "{refused}"
        );
        write_atomically(&deep, b"x").unwrap();
        assert_eq!(fs::read_to_string(&deep).unwrap(), "x");
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
        // A file replaced keeps the permissions its owner gave it.
        fs::set_permissions(&atomic, fs::Permissions::from_mode(0o600)).unwrap();
        write_atomically(&atomic, b"y").unwrap();
        assert_eq!(mode(&atomic), 0o600);
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
