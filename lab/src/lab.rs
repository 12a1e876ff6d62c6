//! The context every command runs in: the global options (`--repo`, `--quiet`) and the way to
//! the repository. Nothing is opened until a command asks, so commands that need no repository
//! (pool, hist, calibrate merge, match merge) run anywhere, and only commands that take the
//! cache lock wait for it.

use std::fs::File;
use std::path::PathBuf;

use anyhow::Result;
use git2::Repository;

use crate::engine::build::{build_engine, EngineBinary};
use crate::engine::revision::{open_repository, Revision};
use crate::paths::LabPaths;
use crate::progress::Progress;

pub struct Lab {
    repo: Option<PathBuf>,
    progress: Progress,
}

impl Lab {
    /// `repo`: the `--repo` option (`None`: discovered from the current directory).
    pub fn new(repo: Option<PathBuf>, progress: Progress) -> Self {
        Self { repo, progress }
    }

    pub fn progress(&self) -> &Progress {
        &self.progress
    }

    /// The repository and the lab's paths inside its working tree, with the cache unlocked.
    pub fn workdir(&self) -> Result<Workdir> {
        let repo = open_repository(self.repo.as_deref())?;
        let paths = LabPaths::new(
            repo.workdir()
                .expect("open_repository refuses bare repositories"),
        );
        Ok(Workdir { repo, paths })
    }

    /// The repository with the cache locked for as long as the session lives.
    pub fn lock(&self) -> Result<Session> {
        self.workdir()?.lock(&self.progress)
    }
}

/// An open repository and the lab's paths in it.
pub struct Workdir {
    pub repo: Repository,
    pub paths: LabPaths,
}

impl Workdir {
    /// Takes the cache lock (waiting for another lab run if need be) and clears what an
    /// interrupted run left behind.
    pub fn lock(self, progress: &Progress) -> Result<Session> {
        self.paths.create_dirs()?;
        let lock = self.paths.lock(|| {
            progress.line("waiting for another lab run to finish (target/lab/lock) ...")
        })?;
        self.paths.remove_stale_temporaries()?;
        Ok(Session {
            repo: self.repo,
            paths: self.paths,
            progress: *progress,
            _lock: lock,
        })
    }
}

/// An open repository with the cache locked until dropped.
pub struct Session {
    repo: Repository,
    paths: LabPaths,
    progress: Progress,
    _lock: File,
}

impl Session {
    pub fn repo(&self) -> &Repository {
        &self.repo
    }

    pub fn paths(&self) -> &LabPaths {
        &self.paths
    }

    pub fn progress(&self) -> &Progress {
        &self.progress
    }

    /// The engine of `revision` with extra cargo features, from the cache or built now.
    pub fn build(&self, revision: &Revision, features: &[String]) -> Result<EngineBinary> {
        let features: Vec<&str> = features.iter().map(String::as_str).collect();
        build_engine(&self.repo, revision, &features, &self.paths, &self.progress)
    }
}
