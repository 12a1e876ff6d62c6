//! The two engines of a match: each spec resolved to a binary (a revision built through the
//! lab's cache, or `exe:PATH`), started once to check it speaks UCI and to learn its name.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use git2::{ObjectType, Oid};

use super::results::Contestant;
use super::rules::{Limit, SideLimits};
use super::uci_process::{EngineSetup, UciProcess};
use super::{SideSetup, EXE_PREFIX};
use crate::engine::revision::resolve;
use crate::lab::{Lab, Session};
use crate::paths::LabPaths;
use crate::progress::Progress;

/// Characters of a commit (or tree) id in an engine's PGN name. The name is recorded in results
/// files and compared on `--resume` and `lab match merge`, so it stays 7 whatever the reports
/// show.
const PGN_NAME_ID_CHARS: usize = 7;

/// Both engines, checked and ready to play.
pub(super) struct Contestants {
    pub(super) identities: [Contestant; 2],
    pub(super) setups: [Arc<EngineSetup>; 2],
    /// Where the match files go: the lab's work directory, or the current directory for two
    /// `exe:` engines outside a repository.
    pub(super) paths: LabPaths,
    /// A's binary, whose bench `--scale-nps` measures.
    pub(super) bench_binary: PathBuf,
}

impl Contestants {
    /// Builds (or finds) both engines with the cache locked, then lets other lab runs go on,
    /// and starts each once (`preflight`). Two engines with the same name get ` A` and ` B`.
    pub(super) fn prepare(
        lab: &Lab,
        specs: &[String; 2],
        sides: &[SideSetup; 2],
        uci_options: &[Vec<(String, String)>; 2],
        (hash, limits): (Option<u32>, SideLimits),
        progress: &Progress,
    ) -> Result<Contestants> {
        let (binaries, paths) = if specs.iter().all(|spec| spec.starts_with(EXE_PREFIX)) {
            let paths = match lab.workdir() {
                Ok(workdir) => workdir.paths,
                Err(_) => LabPaths::new(
                    &std::env::current_dir().context("reading the current directory")?,
                ),
            };
            (
                [
                    exe_binary(&specs[0], sides[0].dir.as_deref())?,
                    exe_binary(&specs[1], sides[1].dir.as_deref())?,
                ],
                paths,
            )
        } else {
            let session = lab.lock()?;
            (
                [
                    engine_binary(&session, &specs[0], sides[0].dir.as_deref())?,
                    engine_binary(&session, &specs[1], sides[1].dir.as_deref())?,
                ],
                session.paths().clone(),
            )
        };
        let bench_binary = binaries[0].path.clone();
        let [binary_a, binary_b] = binaries;
        let (mut identity_a, setup_a) = preflight(
            "A",
            &specs[0],
            binary_a,
            &sides[0],
            &uci_options[0],
            (hash, limits[0]),
            progress,
        )?;
        let (mut identity_b, setup_b) = preflight(
            "B",
            &specs[1],
            binary_b,
            &sides[1],
            &uci_options[1],
            (hash, limits[1]),
            progress,
        )?;
        if identity_a.name == identity_b.name {
            identity_a.name = format!("{} A", identity_a.name);
            identity_b.name = format!("{} B", identity_b.name);
        }
        Ok(Contestants {
            identities: [identity_a, identity_b],
            setups: [Arc::new(setup_a), Arc::new(setup_b)],
            paths,
            bench_binary,
        })
    }
}

/// The binary of one side and what identifies it: a revision's cached build, or an `exe:`.
struct Binary {
    path: PathBuf,
    id: String,
    commit: Option<String>,
    short: Option<String>,
}

fn exe_binary(spec: &str, dir: Option<&Path>) -> Result<Binary> {
    let path = find_executable(spec.strip_prefix(EXE_PREFIX).unwrap_or(spec), dir)?;
    let bytes = crate::input::read_bytes(&path, crate::input::ENGINE_BINARY)?;
    Ok(Binary {
        id: Oid::hash_object(ObjectType::Blob, &bytes)?.to_string(),
        path,
        commit: None,
        short: None,
    })
}

fn engine_binary(session: &Session, spec: &str, dir: Option<&Path>) -> Result<Binary> {
    if spec.starts_with(EXE_PREFIX) {
        return exe_binary(spec, dir);
    }
    let revision = resolve(session.repo(), spec, session.paths())?;
    let binary = session.build(&revision, &[])?;
    Ok(Binary {
        path: binary.path,
        id: binary.key,
        commit: revision.commit.map(|commit| commit.to_string()),
        short: Some(match revision.commit {
            Some(commit) => commit.to_string()[..PGN_NAME_ID_CHARS].to_string(),
            None => format!("{spec} {}", &revision.tree.to_string()[..PGN_NAME_ID_CHARS]),
        }),
    })
}

/// `exe:PATH`: a path, or a bare name looked up on PATH as a shell would; with a working
/// directory (`dir=`), a relative path or bare name is found in it, as OpenBench's
/// `dir=Engines/ cmd=./NAME` means.
fn find_executable(name: &str, dir: Option<&Path>) -> Result<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |path: &Path| {
        path.metadata()
            .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
    };
    if let Some(dir) = dir.filter(|_| !Path::new(name).is_absolute()) {
        let path = dir.join(name);
        if !executable(&path) {
            bail!(
                "cmd={name}: no executable file in dir={} ({})",
                dir.display(),
                path.display()
            );
        }
        return Ok(std::fs::canonicalize(&path)?);
    }
    if name.contains('/') {
        let path = PathBuf::from(name);
        if !executable(&path) {
            bail!("exe:{name}: no executable file there");
        }
        return Ok(std::fs::canonicalize(&path)?);
    }
    let search = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&search)
        .map(|dir| dir.join(name))
        .find(|path| executable(path))
        .with_context(|| {
            format!("exe:{name}: not found on PATH (give a path, e.g. exe:/usr/games/{name})")
        })
}

/// Starts the engine once before any game: a binary that is not a UCI engine, or an option it
/// does not have, is an error now rather than a string of lost games. Under a limit that makes
/// games reproducible (nodes, depth), an engine that declares `Threads` is asked for one
/// thread unless the user set it: a parallel search is not deterministic.
fn preflight(
    label: &'static str,
    spec: &str,
    binary: Binary,
    side: &SideSetup,
    options: &[(String, String)],
    (hash, limit): (Option<u32>, Limit),
    progress: &Progress,
) -> Result<(Contestant, EngineSetup)> {
    let probe = EngineSetup {
        path: binary.path.clone(),
        args: side.args.clone(),
        dir: side.dir.clone(),
        options: Vec::new(),
    };
    let engine = UciProcess::start(Arc::new(probe))
        .map_err(|fault| anyhow::anyhow!("engine {label} ({spec}) {}", fault.describe()))?;
    let mut sent = Vec::new();
    if let Some(mb) = hash {
        if engine.has_option("Hash") {
            engine
                .check_option("Hash", &mb.to_string())
                .map_err(|error| anyhow::anyhow!("--hash: engine {label} ({spec}) {error}"))?;
            sent.push(("Hash".to_string(), mb.to_string()));
        } else {
            progress.line(&format!(
                "note: engine {label} ({spec}) has no Hash option; --hash is not sent to it"
            ));
        }
    }
    let user_threads = options
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("Threads"));
    if limit.is_reproducible() && engine.has_option("Threads") {
        match user_threads {
            None => sent.push(("Threads".to_string(), "1".to_string())),
            Some((_, value)) if value.trim() != "1" => progress.line(&format!(
                "note: engine {label} ({spec}) searches with Threads={value}: games under {limit} replay exactly only with one thread"
            )),
            Some(_) => {}
        }
    }
    for (name, value) in options {
        engine
            .check_option(name, value)
            .map_err(|error| anyhow::anyhow!("engine {label} ({spec}) {error}"))?;
        sent.push((name.clone(), value.clone()));
    }
    let id_name = engine.id_name.clone().unwrap_or_else(|| spec.to_string());
    drop(engine);
    let setup = EngineSetup {
        path: binary.path,
        args: side.args.clone(),
        dir: side.dir.clone(),
        options: sent.clone(),
    };
    // Start once more with the options, so a value the engine rejects by dying shows now.
    UciProcess::start(Arc::new(setup.clone())).map_err(|fault| {
        anyhow::anyhow!(
            "engine {label} ({spec}) with its options {}",
            fault.describe()
        )
    })?;
    let name = match (&side.name, &binary.short) {
        (Some(name), _) => name.clone(),
        (None, Some(short)) => format!("{id_name} ({short})"),
        (None, None) => id_name,
    };
    Ok((
        Contestant {
            spec: spec.to_string(),
            name,
            binary: binary.id,
            commit: binary.commit,
            options: sent,
            args: side.args.clone(),
            dir: side.dir.as_ref().map(|dir| dir.display().to_string()),
        },
        setup,
    ))
}
