//! The context every command runs in: the global options (`--repo`, `--config`, `--quiet`) and
//! the way to the repository and its engine (`lab.toml`, read when the repository is opened). Nothing is opened until a command asks, so commands that need no repository
//! (pool, hist, calibrate merge, match merge) run anywhere, and only commands that take the
//! cache lock wait for it.

use std::fs::File;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Result;
use git2::Repository;

use crate::engine::adapter::{adapter, EngineAdapter};
use crate::engine::build::EngineBinary;
use crate::engine::config;
use crate::engine::revision::{open_repository, Revision};
use crate::paths::LabPaths;
use crate::progress::Progress;

pub(crate) struct Lab {
    repo: Option<PathBuf>,
    config: Option<PathBuf>,
    progress: Progress,
}

impl Lab {
    /// `repo`: the `--repo` option (`None`: discovered from the current directory); `config`:
    /// the `--config` option (`None`: the repository's `lab.toml`, or squall without one).
    pub(crate) fn new(repo: Option<PathBuf>, config: Option<PathBuf>, progress: Progress) -> Self {
        Self {
            repo,
            config,
            progress,
        }
    }

    pub(crate) fn progress(&self) -> &Progress {
        &self.progress
    }

    /// The repository, the lab's paths inside its working tree and the engine its
    /// configuration names, with the cache unlocked.
    pub(crate) fn workdir(&self) -> Result<Workdir> {
        let repo = open_repository(self.repo.as_deref())?;
        let root = repo
            .workdir()
            .expect("open_repository refuses bare repositories")
            .to_path_buf();
        let engine = adapter(&config::load(&root, self.config.as_deref())?);
        Ok(Workdir {
            repo,
            paths: LabPaths::new(&root),
            engine,
        })
    }

    /// The repository with the cache locked for as long as the session lives.
    pub(crate) fn lock(&self) -> Result<Session> {
        self.workdir()?.lock(&self.progress)
    }
}

/// An open repository and the lab's paths in it.
pub(crate) struct Workdir {
    pub(crate) repo: Repository,
    pub(crate) paths: LabPaths,
    /// The engine under test.
    pub(crate) engine: Arc<dyn EngineAdapter>,
}

impl Workdir {
    /// Takes the cache lock (waiting for another lab run if need be) and clears what an
    /// interrupted run left behind.
    pub(crate) fn lock(self, progress: &Progress) -> Result<Session> {
        self.paths.create_dirs()?;
        let lock = self.paths.lock(|| {
            progress.line("waiting for another lab run to finish (target/lab/lock) ...")
        })?;
        self.paths.remove_stale_temporaries()?;
        Ok(Session {
            repo: self.repo,
            paths: self.paths,
            engine: self.engine,
            progress: *progress,
            _lock: lock,
        })
    }
}

/// An open repository with the cache locked until dropped.
pub(crate) struct Session {
    repo: Repository,
    paths: LabPaths,
    engine: Arc<dyn EngineAdapter>,
    progress: Progress,
    _lock: File,
}

impl Session {
    pub(crate) fn repo(&self) -> &Repository {
        &self.repo
    }

    pub(crate) fn paths(&self) -> &LabPaths {
        &self.paths
    }

    pub(crate) fn progress(&self) -> &Progress {
        &self.progress
    }

    /// The engine under test.
    pub(crate) fn engine(&self) -> &Arc<dyn EngineAdapter> {
        &self.engine
    }

    /// The engine of `revision` with extra cargo features (squall only), from the cache or
    /// built now.
    pub(crate) fn build(&self, revision: &Revision, features: &[String]) -> Result<EngineBinary> {
        let features: Vec<&str> = features.iter().map(String::as_str).collect();
        self.engine
            .build(&self.repo, revision, &features, &self.paths, &self.progress)
    }
}
