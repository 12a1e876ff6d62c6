//! The boundary between the lab and the engine under test. Everything the lab asks of an engine
//! (build a revision, run its bench, read what the bench printed, say which protocol features
//! it has) goes through [`EngineAdapter`]; its two implementations are squall's own protocol
//! ([`SquallAdapter`]: the lab's cargo build, `squall bench --json`) and OpenBench's
//! convention ([`OpenBenchAdapter`]: `make -j EXE={exe}`, `{exe} bench`, nodes and NPS read from
//! the text). Measuring, comparing and reporting see only a [`BenchResult`].

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use git2::Repository;

use super::bench::{bench_args, parse_bench, EngineIdentity, EvalCounters};
use super::build::{build_engine, EngineBinary};
use super::command_build::{build_openbench_engine, engine_definition};
use super::config::{BenchProtocol, Engine, LabConfig, OpenBenchEngine, DEPTH_PLACEHOLDER};
use super::openbench::{bench_argv, parse_bench_output};
use super::revision::Revision;
use crate::paths::LabPaths;
use crate::process::{require_success, run_with_timeout, Finished};
use crate::progress::Progress;

/// Generous: a cold build of a C++ engine with PGO on two busy cores takes minutes.
const COMMAND_BUILD_TIMEOUT: Duration = Duration::from_secs(3600);

/// The name of the one "position" of an OpenBench bench: the whole run.
pub(crate) const WHOLE_BENCH: &str = "(the whole bench)";

/// A feature of squall's bench protocol that an OpenBench-style engine lacks; errors name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProtocolFeature {
    /// `bench --full-eval` and the eval exit counters: `lab tiers`.
    EvalTiers,
    /// `squall calibrate`: `lab calibrate` and `compare --calibrate`.
    Calibration,
    /// The margin tables in `engine/src/eval/margins.rs`: `lab tables --apply`.
    MarginTables,
    /// `bench --positions FILE`: `--positions` on compare, bench and tiers.
    PositionsFile,
    /// Cargo features of the engine package: `--features`.
    CargoFeatures,
}

impl ProtocolFeature {
    /// What the feature is, for "X needs the squall bench protocol".
    pub(crate) fn describe(self) -> &'static str {
        match self {
            ProtocolFeature::EvalTiers => {
                "`lab tiers` (bench --full-eval and the eval tiers' exit counters)"
            }
            ProtocolFeature::Calibration => "calibration (`squall calibrate`)",
            ProtocolFeature::MarginTables => {
                "`lab tables` (the margin tables of engine/src/eval/margins.rs)"
            }
            ProtocolFeature::PositionsFile => "--positions (bench --positions FILE)",
            ProtocolFeature::CargoFeatures => "--features (the engine package's cargo features)",
        }
    }
}

/// What one bench run is asked to do.
#[derive(Debug, Clone, Copy, Default)]
pub struct BenchRequest<'a> {
    /// `None`: the engine's default bench.
    pub depth: Option<u32>,
    /// squall only: both cheap-tier exits off.
    pub full_eval: bool,
    /// squall only: these positions instead of the built-in list.
    pub positions: Option<&'a Path>,
}

/// One bench run as the lab measures it, whatever the engine's format.
#[derive(Debug, Clone)]
pub struct BenchResult {
    pub(crate) engine: EngineIdentity,
    /// The depth the engine searched to, when it says (`None`: its default bench, depth not
    /// reported).
    pub depth: Option<u32>,
    /// Per-position figures; an OpenBench bench is one "position", [`WHOLE_BENCH`].
    pub positions: Vec<PositionFigures>,
    pub total_nodes: u64,
    pub total_time_ns: u64,
    /// The eval tiers' exits (squall protocol only).
    pub eval: Option<EvalCounters>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PositionFigures {
    pub fen: String,
    pub nodes: u64,
    pub time_ns: u64,
}

/// The engine under test, as the lab drives it.
pub trait EngineAdapter: fmt::Debug + Send + Sync {
    /// The engine's name (`[engine] name`).
    fn name(&self) -> &str;

    fn bench_protocol(&self) -> BenchProtocol;

    /// The engine of `revision`, from the cache or built now. `features` are cargo features
    /// (squall only).
    fn build(
        &self,
        repo: &Repository,
        revision: &Revision,
        features: &[&str],
        paths: &LabPaths,
        progress: &Progress,
    ) -> Result<EngineBinary>;

    /// The whole command line of one bench run, program first.
    fn bench_command(&self, binary: &Path, request: &BenchRequest) -> Result<Vec<OsString>>;

    /// Reads the output of a finished bench run made for `request`.
    fn read_bench(
        &self,
        stdout: &[u8],
        stderr: &[u8],
        request: &BenchRequest,
    ) -> Result<BenchResult>;

    /// Whether the bench takes a depth: callgrind then subtracts a depth-1 run's count, which is
    /// almost all start-up work.
    fn takes_depth(&self) -> bool;

    /// Fails naming the feature unless the engine has it.
    fn require(&self, feature: ProtocolFeature) -> Result<()>;

    /// What decides the benched binary and its bench beyond the revision, the toolchain and
    /// the cargo features (which history series key on already): the build's definition as
    /// its cache key has it, compilers included, and the bench command. `None` when nothing
    /// else does (squall: the lab's own cargo build and bench arguments). `workdir` is the
    /// repository's working tree, where the compilers are asked who they are.
    fn definition(&self, workdir: &Path) -> Option<String>;
}

/// The adapter `config` describes.
pub(crate) fn adapter(config: &LabConfig) -> Arc<dyn EngineAdapter> {
    match &config.engine {
        Engine::Squall => Arc::new(SquallAdapter),
        Engine::OpenBench(engine) => Arc::new(OpenBenchAdapter {
            engine: engine.clone(),
        }),
    }
}

/// Runs one bench of `binary` in `cwd` with a timeout (the process group killed whole) and reads
/// it.
pub fn run_bench(
    adapter: &dyn EngineAdapter,
    binary: &Path,
    request: &BenchRequest,
    cwd: &Path,
    timeout: Duration,
) -> Result<BenchResult> {
    let argv = adapter.bench_command(binary, request)?;
    let shown = show_command(&argv);
    std::fs::create_dir_all(cwd).with_context(|| format!("creating {}", cwd.display()))?;
    let mut command = Command::new(&argv[0]);
    command.args(&argv[1..]).current_dir(cwd);
    let what = format!("the bench `{shown}`");
    let finished: Finished = run_with_timeout(command, timeout, &what)?;
    require_success(&finished, &what)?;
    adapter
        .read_bench(&finished.stdout, &finished.stderr, request)
        .with_context(|| format!("reading the output of `{shown}`"))
}

/// A command line for messages.
pub(crate) fn show_command(argv: &[OsString]) -> String {
    argv.iter()
        .map(|arg| arg.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ")
}

/// squall's own protocol: the lab's cached cargo build, `squall bench --json`.
#[derive(Debug, Clone, Copy)]
pub struct SquallAdapter;

impl EngineAdapter for SquallAdapter {
    fn name(&self) -> &str {
        super::config::SQUALL_NAME
    }

    fn bench_protocol(&self) -> BenchProtocol {
        BenchProtocol::SquallJson
    }

    fn build(
        &self,
        repo: &Repository,
        revision: &Revision,
        features: &[&str],
        paths: &LabPaths,
        progress: &Progress,
    ) -> Result<EngineBinary> {
        build_engine(repo, revision, features, paths, progress)
    }

    fn bench_command(&self, binary: &Path, request: &BenchRequest) -> Result<Vec<OsString>> {
        let mut argv = vec![binary.as_os_str().to_os_string()];
        argv.extend(
            bench_args(request.depth, request.full_eval, request.positions)
                .into_iter()
                .map(OsString::from),
        );
        Ok(argv)
    }

    fn read_bench(
        &self,
        stdout: &[u8],
        _stderr: &[u8],
        _request: &BenchRequest,
    ) -> Result<BenchResult> {
        let report = parse_bench(stdout)?;
        Ok(BenchResult {
            engine: report.engine.into_identity(),
            depth: Some(report.depth),
            positions: report
                .positions
                .into_iter()
                .map(|p| PositionFigures {
                    fen: p.fen,
                    nodes: p.nodes,
                    time_ns: p.time_ns,
                })
                .collect(),
            total_nodes: report.totals.nodes,
            total_time_ns: report.totals.time_ns,
            eval: Some(report.eval),
        })
    }

    fn takes_depth(&self) -> bool {
        true
    }

    fn require(&self, _feature: ProtocolFeature) -> Result<()> {
        Ok(())
    }

    fn definition(&self, _workdir: &Path) -> Option<String> {
        None
    }
}

/// OpenBench's convention (docs/lab-toml.md): the configured build command in a git working
/// copy of the revision, and the bench's node count and speed read from its text.
#[derive(Debug, Clone)]
pub struct OpenBenchAdapter {
    pub engine: OpenBenchEngine,
}

impl EngineAdapter for OpenBenchAdapter {
    fn name(&self) -> &str {
        &self.engine.name
    }

    fn bench_protocol(&self) -> BenchProtocol {
        BenchProtocol::OpenBench
    }

    fn build(
        &self,
        repo: &Repository,
        revision: &Revision,
        features: &[&str],
        paths: &LabPaths,
        progress: &Progress,
    ) -> Result<EngineBinary> {
        if !features.is_empty() {
            self.require(ProtocolFeature::CargoFeatures)?;
        }
        let task = progress.spinner(&format!(
            "building {} at {} (`{}` in {})",
            self.engine.name,
            revision.short_name(),
            self.engine.build,
            self.engine.build_dir_display()
        ));
        let built = build_openbench_engine(
            repo,
            revision,
            &self.engine,
            paths,
            COMMAND_BUILD_TIMEOUT,
            progress,
        );
        task.finish();
        let built = built?;
        progress.line(&format!(
            "{} of {}: {} {}",
            self.engine.name,
            revision.short_name(),
            built.origin(),
            crate::input::short_key(&built.key)
        ));
        Ok(built)
    }

    fn bench_command(&self, binary: &Path, request: &BenchRequest) -> Result<Vec<OsString>> {
        if request.full_eval {
            self.require(ProtocolFeature::EvalTiers)?;
        }
        if request.positions.is_some() {
            self.require(ProtocolFeature::PositionsFile)?;
        }
        bench_argv(&self.engine.bench, binary, request.depth)
    }

    fn read_bench(
        &self,
        stdout: &[u8],
        stderr: &[u8],
        request: &BenchRequest,
    ) -> Result<BenchResult> {
        // stdout then stderr, as OpenBench reads its one pipe: Stockfish prints totals on stderr.
        let mut output = String::from_utf8_lossy(stdout).into_owned();
        if !output.is_empty() && !output.ends_with('\n') {
            output.push('\n');
        }
        output.push_str(&String::from_utf8_lossy(stderr));
        let figures = parse_bench_output(&output)?;
        // The engine's own speed, which leaves out its start-up, as OpenBench uses it.
        let time_ns =
            u64::try_from(u128::from(figures.nodes) * 1_000_000_000 / u128::from(figures.nps))
                .unwrap_or(u64::MAX)
                .max(1);
        Ok(BenchResult {
            engine: EngineIdentity {
                name: self.engine.name.clone(),
                version: String::new(),
                features: Vec::new(),
            },
            // The engine does not say; the depth it was given is the one it searched.
            depth: request.depth,
            positions: vec![PositionFigures {
                fen: WHOLE_BENCH.to_string(),
                nodes: figures.nodes,
                time_ns,
            }],
            total_nodes: figures.nodes,
            total_time_ns: time_ns,
            eval: None,
        })
    }

    fn takes_depth(&self) -> bool {
        self.engine.bench.contains(DEPTH_PLACEHOLDER)
    }

    fn require(&self, feature: ProtocolFeature) -> Result<()> {
        bail!(
            "{} needs the squall bench protocol (format = \"squall-json\", \
             docs/bench-protocol.md); the engine '{}' is configured with format = \"openbench\" \
             (docs/lab-toml.md), whose bench reports only nodes and nodes per second",
            feature.describe(),
            self.engine.name
        )
    }

    fn definition(&self, workdir: &Path) -> Option<String> {
        Some(engine_definition(&self.engine, workdir))
    }
}

/// The cwd of OpenBench-style benches: engines may write files (logs, PGO data) where they run.
pub(crate) fn bench_dir(paths: &LabPaths) -> PathBuf {
    paths.scratch.join("bench")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn openbench(bench: &str) -> OpenBenchAdapter {
        OpenBenchAdapter {
            engine: OpenBenchEngine {
                name: "toy".to_string(),
                build_dir: PathBuf::new(),
                build: "make -j EXE={exe}".to_string(),
                bench: bench.to_string(),
            },
        }
    }

    #[test]
    fn only_squall_speaks_the_squall_protocol() {
        let squall = adapter(&LabConfig::squall_default());
        assert_eq!(squall.bench_protocol(), BenchProtocol::SquallJson);
        assert!(squall.require(ProtocolFeature::EvalTiers).is_ok());
        let other = openbench("{exe} bench");
        assert_eq!(other.bench_protocol(), BenchProtocol::OpenBench);
        let message = format!(
            "{:#}",
            other.require(ProtocolFeature::EvalTiers).unwrap_err()
        );
        assert!(
            message.contains(ProtocolFeature::EvalTiers.describe()),
            "{message}"
        );
        assert!(message.contains("'toy'"), "{message}");
        assert!(message.contains("docs/lab-toml.md"), "{message}");
    }

    #[test]
    fn an_openbench_bench_is_one_whole_run_timed_by_the_engine_s_speed() {
        let result = openbench("{exe} bench")
            .read_bench(
                b"info depth 3 nodes 5\n2000000 nodes 4000000 nps\n",
                b"",
                &BenchRequest::default(),
            )
            .unwrap();
        assert_eq!(result.total_nodes, 2_000_000);
        assert_eq!(result.total_time_ns, 500_000_000);
        assert_eq!(result.positions.len(), 1);
        assert_eq!(result.positions[0].fen, WHOLE_BENCH);
        assert!(result.eval.is_none());
        assert_eq!(result.depth, None);
    }

    #[test]
    fn squall_only_requests_name_the_missing_feature() {
        let adapter = openbench("{exe} bench");
        let request = BenchRequest {
            full_eval: true,
            ..BenchRequest::default()
        };
        let error = adapter
            .bench_command(Path::new("/x/toy"), &request)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("`lab tiers`") && error.contains("'toy'"),
            "{error}"
        );
        assert!(!adapter.takes_depth());
        assert!(openbench("{exe} bench {depth}").takes_depth());
        assert!(SquallAdapter.require(ProtocolFeature::Calibration).is_ok());
    }

    #[test]
    fn a_bench_runs_with_its_depth_and_fails_with_its_status() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("engine");
        // The depth reaches the engine as its second argument; totals come on stderr.
        std::fs::write(
            &script,
            "#!/bin/sh\necho \"pos nodes 5 nps 1\"\n\
             echo \"Nodes searched: 42$2\" >&2\necho \"Nodes/second: 99\" >&2\n",
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let adapter = openbench("{exe} bench {depth}");
        let request = BenchRequest {
            depth: Some(7),
            ..BenchRequest::default()
        };
        let scratch = dir.path().join("scratch");
        let timeout = Duration::from_secs(60);
        let result = run_bench(&adapter, &script, &request, &scratch, timeout).unwrap();
        assert_eq!(result.total_nodes, 427);
        assert_eq!(result.depth, Some(7));

        std::fs::write(&script, "#!/bin/sh\necho 'about to crash' >&2\nexit 3\n").unwrap();
        let message = format!(
            "{:#}",
            run_bench(&adapter, &script, &request, &scratch, timeout).unwrap_err()
        );
        assert!(message.contains("failed (exit code 3)"), "{message}");
        assert!(message.contains("about to crash"), "{message}");
    }
}
