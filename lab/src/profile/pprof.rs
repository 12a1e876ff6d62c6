//! squall's own sampler: the engine built with `--features profile` and frame pointers, and
//! `squall profile` (the bench under pprof), its folded stacks read into the shares of the key
//! frames: the eval tiers, the fixed-cost checks, move generation and the search.

use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use git2::Repository;

use super::perf::{parse_folded, sample_total, FoldedStack};
use super::{FrameShare, ProfileRequest, ProfileRun, RunFiles};
use crate::engine::build::{build_engine_with_rustflags, EngineBinary};
use crate::engine::revision::Revision;
use crate::input::{read_bytes, read_text, FLAMEGRAPH, FOLDED_STACKS};
use crate::paths::{write_atomically, LabPaths};
use crate::process::{require_success, run_with_timeout};
use crate::progress::Progress;

pub(crate) const PROFILE_FEATURE: &str = "profile";
/// Complete stacks for the sampler's unwinder; part of the build's cache key.
pub(crate) const PROFILE_RUSTFLAGS: &str = "-C force-frame-pointers=yes";

/// The frames whose shares are reported: `(label, how a frame name matches)`.
pub(crate) const KEY_FRAMES: [(&str, Matcher); 10] = [
    ("evaluate", Matcher::Function("evaluate")),
    ("super_lazy_score", Matcher::Function("super_lazy_score")),
    ("lazy_terms", Matcher::Function("lazy_terms")),
    ("full_tier", Matcher::Function("full_tier")),
    ("drawish_scale", Matcher::Function("drawish_scale")),
    (
        "pawn_race_possible",
        Matcher::Function("pawn_race_possible"),
    ),
    (
        "bare_king_either_side",
        Matcher::Function("bare_king_either_side"),
    ),
    ("movegen", Matcher::Contains("movegen")),
    ("quiescence", Matcher::Function("quiescence")),
    ("search (negamax)", Matcher::Function("negamax")),
];

#[derive(Debug, Clone, Copy)]
pub(crate) enum Matcher {
    /// The function's own name, after dropping the module path and generic arguments.
    Function(&'static str),
    /// Anywhere in the frame's text (module paths appear in generic arguments).
    Contains(&'static str),
}

impl Matcher {
    pub(crate) fn matches(&self, frame: &str) -> bool {
        match self {
            Matcher::Function(name) => function_name(frame) == *name,
            Matcher::Contains(text) => frame.contains(text),
        }
    }
}

/// `squall::eval::Evaluator::full_tier::h0123` or `generate<squall::movegen::MoveList, true>`
/// → `full_tier`, `generate`.
pub(crate) fn function_name(frame: &str) -> &str {
    let mut depth = 0usize;
    let mut end = frame.len();
    for (i, c) in frame.char_indices() {
        match c {
            '<' if depth == 0 && i > 0 => {
                end = i;
                break;
            }
            '<' => depth += 1,
            '>' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    let path = &frame[..end];
    let mut segments: Vec<&str> = path.split("::").collect();
    if segments.len() > 1
        && segments.last().is_some_and(|s| {
            s.len() == 17 && s.starts_with('h') && s[1..].bytes().all(|b| b.is_ascii_hexdigit())
        })
    {
        segments.pop();
    }
    segments.last().copied().unwrap_or(path)
}

/// Total samples and the key frames' shares. Counts whose total overflows are an error.
pub(crate) fn frame_shares(stacks: &[FoldedStack]) -> Result<(u64, Vec<FrameShare>)> {
    let total = sample_total(stacks)?;
    let share = |samples: u64| {
        if total == 0 {
            0.0
        } else {
            samples as f64 / total as f64
        }
    };
    let shares = KEY_FRAMES
        .iter()
        .map(|(label, matcher)| {
            let inclusive_samples = sample_total(
                stacks
                    .iter()
                    .filter(|s| s.frames.iter().any(|f| matcher.matches(f))),
            )?;
            let self_samples = sample_total(
                stacks
                    .iter()
                    .filter(|s| s.frames.last().is_some_and(|f| matcher.matches(f))),
            )?;
            Ok(FrameShare {
                frame: label.to_string(),
                inclusive_samples,
                self_samples,
                inclusive: share(inclusive_samples),
                self_share: share(self_samples),
            })
        })
        .collect::<Result<_>>()?;
    Ok((total, shares))
}

pub(super) fn build(
    repo: &Repository,
    revision: &Revision,
    paths: &LabPaths,
    progress: &Progress,
) -> Result<EngineBinary> {
    build_engine_with_rustflags(
        repo,
        revision,
        &[PROFILE_FEATURE],
        PROFILE_RUSTFLAGS,
        paths,
        progress,
    )
}

/// One `squall profile` run, and its folded stacks. The engine writes into a directory of its
/// own under the lab's scratch: it truncates its outputs when it starts, so a crash or a timeout
/// must not reach `files`. What it wrote is read back bounded and checked, and only then written
/// to `files`, each atomically.
pub(super) fn profile_one(
    revision: &Revision,
    binary: &EngineBinary,
    files: &RunFiles,
    options: &ProfileRequest,
    paths: &LabPaths,
    progress: &Progress,
) -> Result<(ProfileRun, Vec<FoldedStack>)> {
    std::fs::create_dir_all(&paths.scratch)
        .with_context(|| format!("creating {}", paths.scratch.display()))?;
    // Removed when dropped; one an interrupted run left is cleared by the next run's lock.
    let scratch = tempfile::Builder::new()
        .prefix("profile-")
        .tempdir_in(&paths.scratch)
        .with_context(|| format!("creating a directory in {}", paths.scratch.display()))?;
    let engine_svg = scratch.path().join("flamegraph.svg");
    let engine_folded = scratch.path().join("stacks.folded");
    let mut command = Command::new(&binary.path);
    command
        .arg("profile")
        .arg("--out")
        .arg(&engine_svg)
        .arg("--folded")
        .arg(&engine_folded)
        .arg("--frequency")
        .arg(options.frequency.to_string());
    if let Some(depth) = options.depth {
        command.arg("--depth").arg(depth.to_string());
    }
    let what = format!("`{} profile`", binary.path.display());
    let task = progress.spinner(&format!("profiling {}", revision.short_name()));
    let start = Instant::now();
    let finished = run_with_timeout(command, Duration::from_secs(options.timeout), &what);
    let elapsed = start.elapsed();
    task.finish();
    let finished = finished?;
    require_success(&finished, &format!("the engine {what}"))?;
    let stdout = String::from_utf8_lossy(&finished.stdout);
    let field = |name: &str| {
        stdout
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|value| value.parse::<u64>().ok())
    };
    let name = revision.short_name();
    let refused = || format!("the output of the engine {what} for {name}");
    let text = read_text(&engine_folded, FOLDED_STACKS).with_context(refused)?;
    let stacks = parse_folded(&text).with_context(|| format!("the profile of {name}"))?;
    let (samples, frames) =
        frame_shares(&stacks).with_context(|| format!("the profile of {name}"))?;
    if samples == 0 {
        bail!("the profile of {name} has no samples; try a larger --depth");
    }
    let svg = read_bytes(&engine_svg, FLAMEGRAPH).with_context(refused)?;
    // Not a validation of the SVG: it keeps an empty or foreign file from replacing a good one.
    if !svg.windows(4).any(|window| window == b"<svg") {
        bail!("the engine {what} wrote a flamegraph for {name} that is not an SVG");
    }
    write_atomically(&files.svg, &svg)?;
    write_atomically(&files.folded, text.as_bytes())?;
    progress.line(&format!(
        "profile of {name}: {samples} samples in {:.2} s → {}",
        elapsed.as_secs_f64(),
        files.svg.display()
    ));
    let run = ProfileRun {
        spec: revision.spec.clone(),
        commit: revision.commit.map(|c| c.to_string()),
        binary_key: binary.key.clone(),
        depth: options.depth,
        frequency: options.frequency,
        svg: files.svg.clone(),
        folded: files.folded.clone(),
        run_time_s: elapsed.as_secs_f64(),
        engine_profile_time_ms: field("Profile time:"),
        // The sampled span is the bench: "Profile time" also holds building the report
        // (symbolising, after the last sample), which would read the rate low (~6% at depth 11).
        effective_hz: field("Search time:")
            .or_else(|| field("Profile time:"))
            .filter(|ms| *ms > 0)
            .map(|ms| samples as f64 / (ms as f64 / 1000.0)),
        sampler: "pprof",
        nodes: field("Nodes searched:"),
        samples,
        frames,
    };
    Ok((run, stacks))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn function_names_drop_paths_generics_and_hashes() {
        assert_eq!(function_name("full_tier"), "full_tier");
        assert_eq!(
            function_name("squall::eval::Evaluator::full_tier::h0123456789abcdef"),
            "full_tier"
        );
        assert_eq!(
            function_name("generate<squall::movegen::MoveList, true>"),
            "generate"
        );
        assert_eq!(
            function_name("<squall::search::Searcher as Foo>::negamax"),
            "negamax"
        );
    }

    #[test]
    fn shares_count_stacks_containing_a_frame() {
        let stacks = parse_folded(
            "main;negamax;evaluate;full_tier 3\n\
             main;negamax;negamax;evaluate;super_lazy_score 1\n\
             main;negamax;generate<squall::movegen::MoveList, true> 4\n\n",
        )
        .unwrap();
        let (total, shares) = frame_shares(&stacks).unwrap();
        assert_eq!(total, 8);
        let get = |name: &str| shares.iter().find(|s| s.frame == name).unwrap();
        assert_eq!(get("evaluate").inclusive_samples, 4);
        assert_eq!(get("evaluate").self_samples, 0);
        assert_eq!(get("full_tier").self_samples, 3);
        assert_eq!(get("movegen").inclusive, 0.5);
        // A recursive frame counts once per stack.
        assert_eq!(get("search (negamax)").inclusive, 1.0);
        assert!(parse_folded("no-count-here").is_err());
    }

    #[test]
    fn counts_whose_total_overflows_are_refused() {
        // Each count fits; their sum does not, and would wrap to a share above 100%.
        let stacks = parse_folded(&format!(
            "main;negamax;evaluate 2\nmain;negamax {}\n",
            u64::MAX - 1
        ))
        .unwrap();
        let refused = format!("{:#}", frame_shares(&stacks).unwrap_err());
        assert!(refused.contains("add up to more than"), "{refused}");
        let fits = parse_folded(&format!(
            "main;negamax;evaluate 1\nmain;negamax {}\n",
            u64::MAX - 1
        ))
        .unwrap();
        let (total, shares) = frame_shares(&fits).unwrap();
        assert_eq!(total, u64::MAX);
        assert_eq!(shares.last().unwrap().inclusive_samples, u64::MAX);
    }
}
