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
use crate::paths::{check_writable, refuse_aliases, same_file, LabPaths, NamedPath};
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
    /// The command's other outputs (its exports), which none of the profile's files may be.
    pub(crate) exports: Vec<NamedPath>,
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
    let files = OutputPlan::new(
        &options.rev,
        options.vs.as_deref(),
        options.out.as_deref(),
        &paths.root.join("profile"),
    );
    files.check(&options.exports)?;
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
    let a_binary = build(&a)?;
    let b_binary = b.as_ref().map(build).transpose()?;
    let (a_run, a_stacks) = profile(&a, &a_binary, &files.a, None)?;
    let b_run = match (&b, &b_binary, &files.b) {
        (Some(b), Some(binary), Some(b_files)) => {
            let names: Vec<String> = a_run.frames.iter().map(|f| f.frame.clone()).collect();
            Some(profile(b, binary, b_files, Some(&names))?)
        }
        _ => None,
    };
    let deltas_pp = b_run.as_ref().map(|(b, _)| frame_deltas(&a_run, b));
    let diff_svg = match (&b_run, &files.diff) {
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

/// How many `-vs` suffixes B's names may take to stay clear of A's files; a collision left
/// after them (links chosen to defeat it) is refused by [`OutputPlan::check`].
const MAX_VS_SUFFIXES: usize = 3;

/// Every file `lab profile` writes, known before anything runs. They are its reports, replaced
/// like `--out` itself; no two of them may be one file.
#[derive(Debug)]
struct OutputPlan {
    a_spec: String,
    b_spec: Option<String>,
    a: RunFiles,
    /// `--vs`'s flamegraph and stacks, beside A's and named by B's spec.
    b: Option<RunFiles>,
    /// The differential flamegraph, beside A's: `<A>-vs-<B>.diff.svg` from the two
    /// flamegraphs' names.
    diff: Option<PathBuf>,
}

impl OutputPlan {
    /// A's files at `out` (default: `<default_dir>/<A>.svg`); B's beside them, named by its spec,
    /// with `-vs` appended when the specs are one or B's names would be A's files (`HEAD~1` and
    /// `HEAD^1`, `feat/x` and `feat_x`, or an `--out` named like B).
    fn new(a_spec: &str, b_spec: Option<&str>, out: Option<&Path>, default_dir: &Path) -> Self {
        let a_svg = out.map_or_else(
            || default_dir.join(format!("{}.svg", file_stem(a_spec))),
            Path::to_path_buf,
        );
        let a = RunFiles::beside(a_svg);
        let dir = match a.svg.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let b = b_spec.map(|b_spec| {
            let mut name = file_stem(b_spec);
            if b_spec == a_spec {
                name.push_str("-vs");
            }
            let mut files = RunFiles::beside(dir.join(format!("{name}.svg")));
            for _ in 0..MAX_VS_SUFFIXES {
                if !shares_a_file(&a, &files) {
                    break;
                }
                name.push_str("-vs");
                files = RunFiles::beside(dir.join(format!("{name}.svg")));
            }
            files
        });
        let diff = b.as_ref().map(|b| {
            let stem = |svg: &Path| {
                svg.file_stem()
                    .map_or_else(String::new, |s| s.to_string_lossy().into_owned())
            };
            dir.join(format!("{}-vs-{}.diff.svg", stem(&a.svg), stem(&b.svg)))
        });
        OutputPlan {
            a_spec: a_spec.to_string(),
            b_spec: b_spec.map(str::to_string),
            a,
            b,
            diff,
        }
    }

    /// The files by role, for messages.
    fn named(&self) -> Vec<NamedPath> {
        let mut named = vec![
            NamedPath::new(format!("the flamegraph of {}", self.a_spec), &self.a.svg),
            NamedPath::new(
                format!("the folded stacks of {}", self.a_spec),
                &self.a.folded,
            ),
        ];
        if let (Some(b_spec), Some(b)) = (&self.b_spec, &self.b) {
            named.push(NamedPath::new(
                format!("the flamegraph of --vs {b_spec}"),
                &b.svg,
            ));
            named.push(NamedPath::new(
                format!("the folded stacks of --vs {b_spec}"),
                &b.folded,
            ));
        }
        if let Some(diff) = &self.diff {
            named.push(NamedPath::new("the differential flamegraph", diff));
        }
        named
    }

    /// Refuses, before anything is built, a plan with two outputs in one file (among them and
    /// the command's `exports`) or one that cannot be written.
    fn check(&self, exports: &[NamedPath]) -> Result<()> {
        let mut outputs = self.named();
        outputs.extend_from_slice(exports);
        refuse_aliases(&[], &outputs)?;
        for output in self.named() {
            check_writable(&output.path)
                .with_context(|| format!("{} {}", output.role, output.path.display()))?;
        }
        Ok(())
    }
}

/// Whether any of B's files is one of A's.
fn shares_a_file(a: &RunFiles, b: &RunFiles) -> bool {
    [&b.svg, &b.folded]
        .iter()
        .any(|b| same_file(b, &a.svg) || same_file(b, &a.folded))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn names(files: &RunFiles) -> (String, String) {
        let name = |path: &Path| path.file_name().unwrap().to_string_lossy().into_owned();
        (name(&files.svg), name(&files.folded))
    }

    fn checked_plan(a: &str, b: &str, out: Option<&Path>, dir: &Path) -> OutputPlan {
        let plan = OutputPlan::new(a, Some(b), out, dir);
        plan.check(&[]).unwrap();
        plan
    }

    #[test]
    fn specs_with_one_file_name_get_distinct_files() {
        let dir = tempfile::tempdir().unwrap();
        for (a, b) in [("HEAD~1", "HEAD^1"), ("feat/x", "feat_x"), ("HEAD", "HEAD")] {
            let plan = checked_plan(a, b, None, dir.path());
            let stem = file_stem(a);
            assert_eq!(
                names(&plan.a),
                (format!("{stem}.svg"), format!("{stem}.folded"))
            );
            let b_files = plan.b.as_ref().unwrap();
            assert_eq!(
                names(b_files),
                (format!("{stem}-vs.svg"), format!("{stem}-vs.folded")),
                "{a} against {b}"
            );
            assert_eq!(
                plan.diff.unwrap(),
                dir.path().join(format!("{stem}-vs-{stem}-vs.diff.svg"))
            );
        }
        // Distinct names stay as documented.
        let plan = checked_plan("HEAD~1", "WORKTREE", None, dir.path());
        assert_eq!(names(plan.b.as_ref().unwrap()).0, "WORKTREE.svg");
        assert_eq!(
            plan.diff.unwrap(),
            dir.path().join("HEAD_1-vs-WORKTREE.diff.svg")
        );
    }

    #[test]
    fn an_out_named_like_b_keeps_b_apart() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("notes").join("main.svg");
        let plan = checked_plan("HEAD", "main", Some(&out), dir.path());
        assert_eq!(plan.a.svg, out);
        assert_eq!(names(plan.b.as_ref().unwrap()).0, "main-vs.svg");
        // Also when --out reaches B's name only through a link.
        std::fs::create_dir(dir.path().join("notes")).unwrap();
        let link = dir.path().join("notes").join("flame.svg");
        std::os::unix::fs::symlink("main.svg", &link).unwrap();
        let plan = checked_plan("HEAD", "main", Some(&link), dir.path());
        assert_eq!(names(plan.b.as_ref().unwrap()).0, "main-vs.svg");
        // Otherwise B is named by its spec beside --out.
        let out = dir.path().join("notes").join("other.svg");
        let plan = checked_plan("HEAD", "main", Some(&out), dir.path());
        assert_eq!(
            names(plan.b.as_ref().unwrap()),
            ("main.svg".to_string(), "main.folded".to_string())
        );
        assert_eq!(
            plan.diff.unwrap(),
            dir.path().join("notes").join("other-vs-main.diff.svg")
        );
    }

    #[test]
    fn two_outputs_in_one_file_are_refused_before_anything_runs() {
        let dir = tempfile::tempdir().unwrap();
        // `--out x.folded`: the flamegraph and its folded stacks would be one file.
        let out = dir.path().join("x.folded");
        let refused = OutputPlan::new("HEAD", None, Some(&out), dir.path())
            .check(&[])
            .unwrap_err()
            .to_string();
        assert!(
            refused.contains("the folded stacks of HEAD")
                && refused.contains("is the same file as the flamegraph of HEAD"),
            "{refused}"
        );
        // An export on one of the profile's files.
        let out = dir.path().join("a.svg");
        let plan = OutputPlan::new("HEAD", Some("main"), Some(&out), dir.path());
        let export = NamedPath::new("--export-json", &dir.path().join("a-vs-main.diff.svg"));
        let refused = plan.check(&[export]).unwrap_err().to_string();
        assert!(
            refused.contains("--export-json") && refused.contains("the differential flamegraph"),
            "{refused}"
        );
        // A path that cannot be written is refused, and no directory is left behind.
        let file = dir.path().join("plain");
        std::fs::write(&file, "x").unwrap();
        let out = file.join("sub").join("a.svg");
        let refused = OutputPlan::new("HEAD", None, Some(&out), dir.path())
            .check(&[])
            .unwrap_err();
        assert!(
            format!("{refused:#}").contains("the flamegraph of HEAD"),
            "{refused:#}"
        );
    }
}
