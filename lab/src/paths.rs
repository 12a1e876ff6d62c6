//! Where the lab keeps its cache inside the repository being measured.

use std::fs::{self, File};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

#[derive(Debug, Clone)]
pub struct LabPaths {
    pub workdir: PathBuf,
    pub root: PathBuf,
    pub sources: PathBuf,
    pub binaries: PathBuf,
    pub cargo_target: PathBuf,
    pub scratch: PathBuf,
    pub baselines: PathBuf,
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
    pub fn remove_stale_temporaries(&self) -> Result<()> {
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
pub fn temp_sibling(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!(".tmp-{name}-{}", std::process::id()))
}

pub fn remove_if_exists(path: &Path) -> Result<()> {
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
pub fn check_writable(path: &Path) -> Result<()> {
    if path.is_dir() {
        anyhow::bail!("{} is a directory, not a file to write", path.display());
    }
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    fs::create_dir_all(dir).with_context(|| format!("cannot write {}", path.display()))?;
    let probe = dir.join(format!(".lab-write-check-{}", std::process::id()));
    File::create(&probe).with_context(|| format!("cannot write {}", path.display()))?;
    remove_if_exists(&probe)
}

/// Writes `contents` through a temporary sibling and a rename, so readers never see half a
/// file. Creates the parent directory. Used by baselines, calibration files, pools and
/// `lab tables --apply`.
pub fn write_atomically(path: &Path, contents: &[u8]) -> Result<()> {
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
    let temporary = dir.join(format!(".{file_name}.tmp-{}", std::process::id()));
    let written = (|| -> std::io::Result<()> {
        let mut file = File::create(&temporary)?;
        file.write_all(contents)?;
        file.sync_all()?;
        fs::rename(&temporary, path)
    })();
    if let Err(error) = written {
        remove_if_exists(&temporary)?;
        return Err(error).with_context(|| format!("writing {}", path.display()));
    }
    Ok(())
}
