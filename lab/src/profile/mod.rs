//! `lab profile REV [--vs REV_B]`: for squall, builds the engine with `--features profile` and
//! frame pointers, runs `squall profile` (the bench under pprof's sampler), keeps the flamegraph
//! SVG and folded stacks, and reports the share of samples in the key frames: the eval tiers,
//! the fixed-cost checks, move generation and the search. Any other engine is built as its
//! `lab.toml` says and its bench recorded by `perf record` (`perf`), reporting its
//! hottest functions; without a usable perf the lab says why. With `--vs`, both runs' folded
//! stacks also give a differential flamegraph (`diff`), whichever sampler wrote them.

pub(crate) mod diff;
pub mod perf;
pub(crate) mod pprof;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use serde::Serialize;

use self::diff::{write_differential, DiffLabels};
use self::perf::{FoldedStack, PerfRequest};
use crate::engine::adapter::{BenchRequest, EngineAdapter};
use crate::engine::build::EngineBinary;
use crate::engine::config::BenchProtocol;
use crate::engine::revision::{resolve, Revision};
use crate::lab::Session;
use crate::paths::{check_writable, LabPaths};
use crate::progress::Progress;
use crate::schema::{Kind, LAB_JSON_SCHEMA_VERSION};

#[derive(Debug, Clone, Serialize)]
pub(crate) struct FrameShare {
    pub(crate) frame: String,
    /// Samples whose stack contains the frame.
    pub(crate) inclusive_samples: u64,
    /// Samples whose leaf is the frame.
    pub(crate) self_samples: u64,
    /// Fractions of all samples, 0 to 1.
    pub(crate) inclusive: f64,
    #[serde(rename = "self")]
    pub(crate) self_share: f64,
}

/// What `lab profile` is asked for.
#[derive(Debug, Clone)]
pub(crate) struct ProfileRequest {
    /// The revision profiled (anything git understands, or WORKTREE).
    pub(crate) rev: String,
    /// A second revision, profiled the same way and compared frame by frame.
    pub(crate) vs: Option<String>,
    /// The flamegraph SVG of `rev` (default: `target/lab/profile/<rev>.svg`); the folded stacks go
    /// beside it, and `vs`'s files into the same directory.
    pub(crate) out: Option<PathBuf>,
    /// Bench depth (default: the engine's own).
    pub(crate) depth: Option<u32>,
    /// Samples per second asked of the sampler.
    pub(crate) frequency: u32,
    /// Seconds one profiled bench may take before it is killed with its process group.
    pub(crate) timeout: u64,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct ProfileRun {
    pub(crate) spec: String,
    pub(crate) commit: Option<String>,
    pub(crate) binary_key: String,
    pub(crate) depth: Option<u32>,
    /// The requested sampling rate, in Hz.
    pub(crate) frequency: u32,
    /// Samples per second of the sampled run, what the sampler achieved: over the engine's
    /// search time (pprof; its profile time when it prints none) or perf's first to last sample.
    pub(crate) effective_hz: Option<f64>,
    /// "pprof" (squall's own sampler) or "perf".
    pub(crate) sampler: &'static str,
    pub(crate) svg: PathBuf,
    pub(crate) folded: PathBuf,
    /// Wall time of the `squall profile` process, start-up and SVG writing included.
    pub(crate) run_time_s: f64,
    /// The engine's own figure: the sampled bench plus building the report.
    pub(crate) engine_profile_time_ms: Option<u64>,
    pub(crate) nodes: Option<u64>,
    pub(crate) samples: u64,
    pub(crate) frames: Vec<FrameShare>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ProfileOutput {
    pub(crate) schema_version: u32,
    pub(crate) kind: Kind,
    pub(crate) a: ProfileRun,
    pub(crate) b: Option<ProfileRun>,
    /// B's shares minus A's, in percentage points, per key frame.
    pub(crate) deltas_pp: Option<Vec<FrameDelta>>,
    /// The differential flamegraph of A → B (with `--vs`).
    pub(crate) diff_svg: Option<PathBuf>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct FrameDelta {
    pub(crate) frame: String,
    pub(crate) inclusive: f64,
    #[serde(rename = "self")]
    pub(crate) self_share: f64,
}

/// Runs under the session's cache lock. squall is profiled by its own pprof sampler;
/// any other engine by perf.
pub(crate) fn run(session: &Session, options: &ProfileRequest) -> Result<ProfileOutput> {
    let (repo, paths, progress) = (session.repo(), session.paths(), session.progress());
    let engine = session.engine().as_ref();
    let with_perf = engine.bench_protocol() == BenchProtocol::OpenBench;
    if with_perf {
        perf::perf_availability().map_err(|reason| {
            anyhow::anyhow!(
                "lab profile draws '{}' with perf, which cannot record here: {reason}",
                engine.name()
            )
        })?;
    }
    let build = |revision: &Revision| {
        if with_perf {
            engine.build(repo, revision, &[], paths, progress)
        } else {
            pprof::build(repo, revision, paths, progress)
        }
    };
    // `frames`: B of `--vs` under perf reports A's functions, so the rows align.
    let profile = |revision: &Revision, binary: &EngineBinary, files: &RunFiles, frames| {
        if with_perf {
            perf_one(
                engine, revision, binary, files, options, paths, progress, frames,
            )
        } else {
            pprof::profile_one(revision, binary, files, options, paths, progress)
        }
    };
    let a = resolve(repo, &options.rev, paths)?;
    let b = match &options.vs {
        Some(spec) => Some(resolve(repo, spec, paths)?),
        None => None,
    };
    let a_svg = options.out.clone().unwrap_or_else(|| {
        paths
            .root
            .join("profile")
            .join(format!("{}.svg", file_stem(&a.spec)))
    });
    let a_files = RunFiles::beside(a_svg);
    let b_files = b
        .as_ref()
        .map(|b| RunFiles::beside(vs_svg(&a_files.svg, &a, b)));
    let diff = b_files.as_ref().map(|b| diff_svg(&a_files.svg, &b.svg));
    // The engine no longer opens these itself: an unwritable one fails here, before the builds.
    for path in [&a_files.svg, &a_files.folded]
        .into_iter()
        .chain(b_files.iter().flat_map(|b| [&b.svg, &b.folded]))
        .chain(&diff)
    {
        check_writable(path)?;
    }
    let a_binary = build(&a)?;
    let b_binary = b.as_ref().map(build).transpose()?;
    let (a_run, a_stacks) = profile(&a, &a_binary, &a_files, None)?;
    let b_run = match (&b, &b_binary, &b_files) {
        (Some(b), Some(binary), Some(b_files)) => {
            let names: Vec<String> = a_run.frames.iter().map(|f| f.frame.clone()).collect();
            Some(profile(b, binary, b_files, Some(&names))?)
        }
        _ => None,
    };
    let deltas_pp = b_run.as_ref().map(|(b, _)| frame_deltas(&a_run, b));
    let diff_svg = match (&b_run, &diff) {
        (Some((b_run, b_stacks)), Some(svg)) => {
            let labels = DiffLabels {
                a: &a_run.spec,
                b: &b_run.spec,
                sampler: b_run.sampler,
            };
            write_differential(&a_stacks, b_stacks, svg, &labels)?;
            progress.line(&format!("differential flamegraph → {}", svg.display()));
            Some(svg.clone())
        }
        _ => None,
    };
    let b_run = b_run.map(|(run, _)| run);
    Ok(ProfileOutput {
        schema_version: LAB_JSON_SCHEMA_VERSION,
        kind: Kind::Profile,
        a: a_run,
        b: b_run,
        deltas_pp,
        diff_svg,
    })
}

/// The files one profiled run writes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RunFiles {
    pub(crate) svg: PathBuf,
    pub(crate) folded: PathBuf,
}

impl RunFiles {
    /// `svg` and its folded stacks beside it.
    fn beside(svg: PathBuf) -> RunFiles {
        RunFiles {
            folded: svg.with_extension("folded"),
            svg,
        }
    }
}

/// Where `--vs`'s flamegraph goes: beside A's, named by B's spec (`-vs` when both are one).
fn vs_svg(a_svg: &Path, a: &Revision, b: &Revision) -> PathBuf {
    let dir = a_svg.parent().unwrap_or(Path::new("."));
    let mut name = file_stem(&b.spec);
    if b.spec == a.spec {
        name.push_str("-vs");
    }
    dir.join(format!("{name}.svg"))
}

/// Where `--vs`'s differential flamegraph goes: beside A's, `<A>-vs-<B>.diff.svg` from the two
/// flamegraphs' names.
fn diff_svg(a_svg: &Path, b_svg: &Path) -> PathBuf {
    let stem = |svg: &Path| {
        svg.file_stem()
            .map_or_else(String::new, |s| s.to_string_lossy().into_owned())
    };
    let dir = a_svg.parent().unwrap_or(Path::new("."));
    dir.join(format!("{}-vs-{}.diff.svg", stem(a_svg), stem(b_svg)))
}

/// A revision spec as a file name: `HEAD~1` → `HEAD_1`.
fn file_stem(spec: &str) -> String {
    spec.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Functions reported for an engine profiled with perf: its hottest by self samples.
const PERF_TOP_FUNCTIONS: usize = 20;

fn frame_deltas(a: &ProfileRun, b: &ProfileRun) -> Vec<FrameDelta> {
    a.frames
        .iter()
        .zip(&b.frames)
        .map(|(a, b)| FrameDelta {
            frame: a.frame.clone(),
            inclusive: (b.inclusive - a.inclusive) * 100.0,
            self_share: (b.self_share - a.self_share) * 100.0,
        })
        .collect()
}

/// One bench under perf. `frames`: report these functions (B of `--vs`, aligned with A's
/// rows); `None`: the hottest.
#[allow(clippy::too_many_arguments)]
fn perf_one(
    engine: &dyn EngineAdapter,
    revision: &Revision,
    binary: &EngineBinary,
    files: &RunFiles,
    options: &ProfileRequest,
    paths: &LabPaths,
    progress: &Progress,
    frames: Option<&[String]>,
) -> Result<(ProfileRun, Vec<FoldedStack>)> {
    let command = engine.bench_command(
        &binary.path,
        &BenchRequest {
            depth: options.depth,
            ..BenchRequest::default()
        },
    )?;
    let bench_dir = crate::engine::adapter::bench_dir(paths);
    std::fs::create_dir_all(&bench_dir)
        .with_context(|| format!("creating {}", bench_dir.display()))?;
    let request = PerfRequest {
        binary: PathBuf::from(&command[0]),
        args: command[1..].to_vec(),
        working_dir: bench_dir,
        frequency_hz: options.frequency,
        timeout: Duration::from_secs(options.timeout),
        call_graph: perf::CallGraph::FramePointer,
        svg: files.svg.clone(),
        folded: files.folded.clone(),
        top: usize::MAX,
    };
    let task = progress.spinner(&format!("profiling {} with perf", revision.short_name()));
    let profile = perf::record(&request);
    task.finish();
    let profile = profile?;
    let nodes = engine
        .read_bench(&profile.stdout, &[], &BenchRequest::default())
        .ok()
        .map(|bench| bench.total_nodes);
    let share = |function: &str| profile.functions.iter().find(|f| f.function == function);
    let chosen: Vec<FrameShare> = match frames {
        Some(names) => names
            .iter()
            .map(|name| match share(name) {
                Some(f) => perf_frame(f),
                None => FrameShare {
                    frame: name.clone(),
                    inclusive_samples: 0,
                    self_samples: 0,
                    inclusive: 0.0,
                    self_share: 0.0,
                },
            })
            .collect(),
        None => profile
            .functions
            .iter()
            .filter(|f| f.self_samples > 0)
            .take(PERF_TOP_FUNCTIONS)
            .map(perf_frame)
            .collect(),
    };
    progress.line(&format!(
        "profile of {}: {} samples at {:.0} Hz effective ({} Hz requested) → {}",
        revision.short_name(),
        profile.samples,
        profile.effective_hz,
        options.frequency,
        files.svg.display()
    ));
    let run = ProfileRun {
        spec: revision.spec.clone(),
        commit: revision.commit.map(|c| c.to_string()),
        binary_key: binary.key.clone(),
        depth: options.depth,
        frequency: options.frequency,
        effective_hz: Some(profile.effective_hz),
        sampler: "perf",
        svg: files.svg.clone(),
        folded: files.folded.clone(),
        run_time_s: profile.wall_time.as_secs_f64(),
        engine_profile_time_ms: None,
        nodes,
        samples: profile.samples,
        frames: chosen,
    };
    Ok((run, profile.stacks))
}

fn perf_frame(function: &perf::FunctionShare) -> FrameShare {
    FrameShare {
        frame: function.function.clone(),
        inclusive_samples: function.inclusive_samples,
        self_samples: function.self_samples,
        inclusive: function.inclusive,
        self_share: function.self_share,
    }
}
