//! Flamegraphs of any engine binary with Linux `perf`, independent of the engine's own
//! `profile` feature: `perf record -e cpu-clock -F HZ --call-graph fp|dwarf -- ENGINE ARGS...`,
//! then `perf script`, collapsed with inferno's perf collapser into folded stacks and drawn as an
//! SVG with inferno's flamegraph renderer. The engine's stdout is returned so the caller can parse
//! the bench it printed.
//!
//! - **Event**: `cpu-clock` (a software timer). Hardware counters (`cycles`) are not available on
//!   every machine (virtual machines often lack them); `cpu-clock` works wherever perf does.
//! - **Stacks**: [`CallGraph::FramePointer`] (the default) walks frame pointers: cheap, small
//!   data, but an engine built without them (Rust's default; build with
//!   `RUSTFLAGS="-C force-frame-pointers=yes"`) gives shallow, truncated stacks.
//!   [`CallGraph::Dwarf`] unwinds copies of the user stack with DWARF CFI instead: works on any
//!   binary with unwind tables, at the price of much larger `perf.data` and a slower
//!   `perf script` (its output is held in memory).
//! - **Symbols**: frames are named from the binary's symbol table; a stripped binary shows
//!   addresses or `[unknown]`.
//! - **Permissions**: recording one's own processes needs `/proc/sys/kernel/perf_event_paranoid`
//!   at 2 or lower (or CAP_PERFMON); [`perf_availability`] tries a real recording and says why
//!   it failed.
//! - **Effective rate**: perf may throttle the requested frequency (the kernel lowers
//!   `perf_event_max_sample_rate` when sampling costs too much), so the profile reports the rate
//!   it got: samples per second of the recorded run (see [`PerfProfile::effective_hz`]).
//!
//! Every child (perf, and the engine under it) runs in its own process group with a timeout
//! ([`crate::process::run_with_timeout`]): a hung engine is killed together with perf.

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use inferno::collapse::Collapse;
use serde::Serialize;

use crate::paths::write_atomically;
use crate::process::{describe_status, run_with_timeout, tail_section, ERROR_TAIL_LINES};

/// The sampling event: a software timer, available where hardware counters are not.
pub(crate) const PERF_EVENT: &str = "cpu-clock";
/// Where the kernel's permission setting for perf lives.
pub(crate) const PARANOID_PATH: &str = "/proc/sys/kernel/perf_event_paranoid";
/// The fields of `perf script`: no `period`, which inferno's collapser would otherwise count
/// instead of samples (nanoseconds of `cpu-clock`), and symbols without offsets.
const SCRIPT_FIELDS: &str = "comm,pid,tid,time,event,ip,sym,dso";
/// How long the availability probe (`perf record -- true`) may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(30);

/// How perf collects each sample's call stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CallGraph {
    /// `--call-graph fp`: frame pointers. Shallow stacks for binaries built without them.
    #[default]
    FramePointer,
    /// `--call-graph dwarf`: DWARF unwinding of a copy of the user stack; any binary with
    /// unwind tables, larger data and a slower `perf script`.
    Dwarf,
}

impl CallGraph {
    /// The value of perf's `--call-graph` option.
    pub(crate) fn perf_arg(self) -> &'static str {
        match self {
            CallGraph::FramePointer => "fp",
            CallGraph::Dwarf => "dwarf",
        }
    }
}

/// What to profile and where to write the results.
#[derive(Debug, Clone)]
pub struct PerfRequest {
    /// The engine binary (any executable).
    pub(crate) binary: PathBuf,
    /// Its arguments, e.g. `["bench"]` for an OpenBench engine.
    pub(crate) args: Vec<OsString>,
    /// The directory it runs in.
    pub working_dir: PathBuf,
    /// The requested sampling frequency, in Hz (perf's `-F`).
    pub frequency_hz: u32,
    /// The deadline of each child: `perf record` (with the engine), then `perf script`.
    pub timeout: Duration,
    /// How stacks are collected.
    pub call_graph: CallGraph,
    /// The flamegraph SVG to write.
    pub(crate) svg: PathBuf,
    /// The folded stacks to write (`frame;frame;leaf COUNT` per line).
    pub(crate) folded: PathBuf,
    /// How many functions [`PerfProfile::functions`] lists (the top ones by self share).
    pub(crate) top: usize,
}

impl PerfRequest {
    /// A request with defaults: 997 Hz (`lab profile`'s default), frame pointers, a 10-minute
    /// timeout, the top 30 functions, run in the current directory, folded stacks next to the
    /// SVG (`.folded`).
    pub fn new(binary: impl Into<PathBuf>, args: &[&str], svg: impl Into<PathBuf>) -> PerfRequest {
        let svg = svg.into();
        PerfRequest {
            binary: binary.into(),
            args: args.iter().map(OsString::from).collect(),
            working_dir: PathBuf::from("."),
            frequency_hz: 997,
            timeout: Duration::from_secs(600),
            call_graph: CallGraph::FramePointer,
            folded: svg.with_extension("folded"),
            svg,
            top: 30,
        }
    }
}

/// One function's share of the samples, from the folded stacks.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FunctionShare {
    /// The frame as perf named it (offsets dropped by the collapser).
    pub function: String,
    /// Samples whose leaf frame is this function.
    pub(crate) self_samples: u64,
    /// Samples whose stack contains this function anywhere, each stack counted once
    /// (recursion does not count twice).
    pub(crate) inclusive_samples: u64,
    /// `self_samples / total`, 0 to 1.
    #[serde(rename = "self")]
    pub self_share: f64,
    /// `inclusive_samples / total`, 0 to 1.
    pub inclusive: f64,
}

/// The result of [`record`].
#[derive(Debug, Clone, Serialize)]
pub struct PerfProfile {
    /// Samples in the folded stacks.
    pub samples: u64,
    /// The rate perf actually sampled at: `samples / recorded_time`. Below the requested rate
    /// when perf or the kernel throttled, or when the engine was off the CPU (waiting, sleeping);
    /// above it only when several threads ran at once (`cpu-clock` samples each CPU).
    pub effective_hz: f64,
    /// The rate asked for (`-F`).
    pub requested_hz: u32,
    /// The recorded run: from perf's first to its last sample, plus one requested period (so
    /// `n` samples exactly at the requested rate span `n / requested_hz`); perf's start-up and
    /// writing are not in it. The wall time of `perf record` when perf's header lacks the
    /// sample times.
    pub recorded_time: Duration,
    /// Wall time of the whole `perf record` process: the engine plus perf's start-up and writing.
    pub wall_time: Duration,
    /// The top functions by self share (then inclusive share, then name).
    pub functions: Vec<FunctionShare>,
    pub(crate) svg: PathBuf,
    pub folded: PathBuf,
    /// The engine's stdout (perf writes its own messages to stderr).
    #[serde(skip)]
    pub(crate) stdout: Vec<u8>,
    /// The folded stacks as written to [`PerfProfile::folded`], for a differential flamegraph
    /// drawn without reading the file back.
    #[serde(skip)]
    pub(crate) stacks: Vec<FoldedStack>,
}

impl PerfProfile {
    /// The engine's stdout as text.
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
}

/// Finds `perf` (on PATH, or `LAB_PERF` when set, which also lets tests simulate its absence)
/// and checks that it can record here, by recording `true` at 99 Hz with `cpu-clock`.
/// The error is a sentence for the user: what failed, perf's first line of complaint, and the
/// `perf_event_paranoid` setting when permissions are the cause.
pub fn perf_availability() -> Result<PathBuf, String> {
    let perf = find_perf()?;
    let scratch = Scratch::new().map_err(|error| format!("{error:#}"))?;
    let data = scratch.path().join("probe.data");
    let mut command = Command::new(&perf);
    command
        .arg("record")
        .args(["-e", PERF_EVENT, "-F", "99", "-o"])
        .arg(&data)
        .args(["--", "true"])
        .current_dir(scratch.path());
    quiet_environment(&mut command);
    let what = format!("`{} record -- true`", perf.display());
    let finished = run_with_timeout(command, PROBE_TIMEOUT, &what)
        .map_err(|error| format!("perf cannot record here: {error:#}"))?;
    if finished.status.success() && data.is_file() {
        return Ok(perf);
    }
    Err(explain_perf_failure(
        &perf,
        &describe_status(finished.status),
        &String::from_utf8_lossy(&finished.stderr),
        read_paranoid(),
    ))
}

/// `LAB_PERF` when set (it must name a file), else the first `perf` on PATH.
fn find_perf() -> Result<PathBuf, String> {
    if let Some(explicit) = std::env::var_os("LAB_PERF") {
        let path = PathBuf::from(&explicit);
        if path.is_file() {
            return Ok(path);
        }
        return Err(format!(
            "perf not found: LAB_PERF={} is not a file",
            path.display()
        ));
    }
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|dir| dir.join("perf"))
        .find(|candidate| candidate.is_file())
        .ok_or_else(|| {
            "perf not found on PATH (install linux-perf / linux-tools, or set LAB_PERF)".to_string()
        })
}

fn read_paranoid() -> Option<i32> {
    std::fs::read_to_string(PARANOID_PATH)
        .ok()
        .and_then(|text| text.trim().parse().ok())
}

/// The reason perf could not record, from its exit status and stderr: the first line that says
/// something (perf opens with a bare `Error:`), and the paranoid setting when access was denied.
pub(crate) fn explain_perf_failure(
    perf: &Path,
    status: &str,
    stderr: &str,
    paranoid: Option<i32>,
) -> String {
    let first = first_meaningful_line(stderr).unwrap_or("no message");
    let mut reason = format!(
        "perf cannot record here: `{} record -e {PERF_EVENT}` failed ({status}): {first}",
        perf.display()
    );
    let lower = stderr.to_ascii_lowercase();
    let denied = lower.contains("perf_event_paranoid")
        || lower.contains("permission denied")
        || lower.contains("access to performance monitoring")
        || lower.contains("operation not permitted");
    if denied {
        let setting = paranoid.map_or("unknown".to_string(), |value| value.to_string());
        reason.push_str(&format!(
            " (access denied: {PARANOID_PATH} is {setting}; profiling your own processes needs \
             2 or lower, e.g. `sudo sysctl kernel.perf_event_paranoid=2`, or CAP_PERFMON)"
        ));
    }
    reason
}

/// perf's first informative stderr line: not blank, not a bare `Error:`, not its
/// `[ perf record: ... ]` progress notes.
fn first_meaningful_line(stderr: &str) -> Option<&str> {
    stderr
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty() && *line != "Error:" && !is_perf_note(line))
}

fn is_perf_note(line: &str) -> bool {
    line.trim_start().starts_with("[ perf record:")
}

/// No debuginfod downloads while symbolising: offline and bounded.
fn quiet_environment(command: &mut Command) {
    command.env("DEBUGINFOD_URLS", "");
}

/// Profiles `request.binary` under `perf record` and writes the folded stacks and the
/// flamegraph SVG (each atomically: a temporary sibling, then a rename).
///
/// Probes perf with [`perf_availability`] first (a recording of `true`, a fraction of a second).
/// The engine's stdin is empty; its stdout is returned in [`PerfProfile::stdout`].
///
/// Fails when perf is missing or may not record (the reason from [`perf_availability`]),
/// when the engine exits non-zero (with the tail of its stderr), when a child outlives
/// `request.timeout` (killed with its whole process group), and when perf recorded no sample:
/// never an empty flamegraph.
pub fn record(request: &PerfRequest) -> Result<PerfProfile> {
    if request.frequency_hz == 0 {
        bail!("the sampling frequency must be at least 1 Hz");
    }
    let perf = perf_availability().map_err(|reason| anyhow!(reason))?;
    if !request.binary.is_file() {
        bail!(
            "the engine binary {} does not exist",
            request.binary.display()
        );
    }
    let scratch = Scratch::new()?;
    let data = scratch.path().join("perf.data");

    let mut command = Command::new(&perf);
    command
        .arg("record")
        .args(["-e", PERF_EVENT, "-F"])
        .arg(request.frequency_hz.to_string())
        .args(["-g", "--call-graph", request.call_graph.perf_arg(), "-o"])
        .arg(&data)
        .arg("--")
        .arg(&request.binary)
        .args(&request.args)
        .current_dir(&request.working_dir);
    quiet_environment(&mut command);
    let engine = engine_description(request);
    let start = Instant::now();
    let recorded = run_with_timeout(
        command,
        request.timeout,
        &format!("`perf record` of {engine}"),
    )?;
    let wall_time = start.elapsed();
    if !recorded.status.success() {
        bail!(
            "{engine} failed under `perf record` ({}): the engine exited with this status, or \
             perf could not start it{}",
            describe_status(recorded.status),
            tail_section(&without_perf_notes(&recorded.stderr), ERROR_TAIL_LINES)
        );
    }
    if !data.is_file() {
        bail!(
            "`perf record` of {engine} wrote no data file{}",
            tail_section(&recorded.stderr, ERROR_TAIL_LINES)
        );
    }

    let mut script = Command::new(&perf);
    script
        .args(["script", "--header", "-F", SCRIPT_FIELDS, "-i"])
        .arg(&data)
        .current_dir(&request.working_dir);
    quiet_environment(&mut script);
    let scripted = run_with_timeout(script, request.timeout, "`perf script`")?;
    if !scripted.status.success() {
        bail!(
            "`perf script` failed ({}){}",
            describe_status(scripted.status),
            tail_section(&scripted.stderr, ERROR_TAIL_LINES)
        );
    }

    let folded_text = collapse_perf_script(&scripted.stdout)?;
    let stacks = parse_folded(&folded_text)?;
    let (samples, mut functions) = function_shares(&stacks)?;
    if samples == 0 {
        bail!(
            "perf recorded no samples: run too short at {} Hz? ({engine} ran {:.3} s)",
            request.frequency_hz,
            wall_time.as_secs_f64()
        );
    }
    functions.truncate(request.top);
    let header = String::from_utf8_lossy(&scripted.stdout);
    let recorded_time = sample_span(&header)
        .map(|span| span + Duration::from_secs_f64(1.0 / f64::from(request.frequency_hz)))
        .unwrap_or(wall_time);
    let effective_hz = samples as f64 / recorded_time.as_secs_f64().max(1e-9);

    write_atomically(&request.folded, folded_text.as_bytes())?;
    let title = format!(
        "{}: {samples} samples, {effective_hz:.0} Hz effective ({} Hz requested)",
        engine_title(request),
        request.frequency_hz
    );
    let svg = render_flamegraph(&folded_text, &title, request.call_graph)?;
    write_atomically(&request.svg, &svg)?;

    Ok(PerfProfile {
        samples,
        effective_hz,
        requested_hz: request.frequency_hz,
        recorded_time,
        wall_time,
        functions,
        svg: request.svg.clone(),
        folded: request.folded.clone(),
        stdout: recorded.stdout,
        stacks,
    })
}

/// `` `/path/engine bench` `` for messages.
fn engine_description(request: &PerfRequest) -> String {
    let mut text = request.binary.display().to_string();
    for arg in &request.args {
        text.push(' ');
        text.push_str(&arg.to_string_lossy());
    }
    format!("`{text}`")
}

/// `engine bench` (the file name and arguments) for the flamegraph's title.
fn engine_title(request: &PerfRequest) -> String {
    let mut text = request.binary.file_name().map_or_else(
        || request.binary.display().to_string(),
        |name| name.to_string_lossy().into_owned(),
    );
    for arg in &request.args {
        text.push(' ');
        text.push_str(&arg.to_string_lossy());
    }
    text
}

/// stderr without perf's `[ perf record: ... ]` progress notes, leaving the engine's own lines
/// (and perf's warnings).
fn without_perf_notes(stderr: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(stderr);
    let mut kept = String::new();
    for line in text.lines().filter(|line| !is_perf_note(line)) {
        kept.push_str(line);
        kept.push('\n');
    }
    kept.into_bytes()
}

/// The output of `perf script` as folded stacks (inferno's perf collapser, offsets dropped,
/// the first event only).
pub(crate) fn collapse_perf_script(script: &[u8]) -> Result<String> {
    let mut folder = inferno::collapse::perf::Folder::default();
    let mut out = Vec::new();
    folder
        .collapse(script, &mut out)
        .context("collapsing `perf script` output into folded stacks")?;
    String::from_utf8(out).context("folded stacks are not UTF-8")
}

/// The flamegraph SVG of `folded` (folded stacks), with `title`.
pub(crate) fn render_flamegraph(
    folded: &str,
    title: &str,
    call_graph: CallGraph,
) -> Result<Vec<u8>> {
    let mut options = inferno::flamegraph::Options::default();
    options.title = title.to_string();
    options.subtitle = Some(format!(
        "perf record -e {PERF_EVENT} --call-graph {}",
        call_graph.perf_arg()
    ));
    options.count_name = "samples".to_string();
    // Colours from the function names: the same function looks the same in every graph.
    options.hash = true;
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut options, folded.lines(), &mut svg)
        .map_err(|error| anyhow!("rendering the flamegraph: {error}"))?;
    Ok(svg)
}

/// From `perf script --header`: the span between the first and the last sample
/// (`# time of first sample : 27282.284072`, `# time of last sample : ...`), when both are there.
pub(crate) fn sample_span(header: &str) -> Option<Duration> {
    let field = |name: &str| {
        header
            .lines()
            .take_while(|line| line.starts_with('#') || line.is_empty())
            .find_map(|line| {
                let rest = line.strip_prefix('#')?.trim_start().strip_prefix(name)?;
                rest.trim_start()
                    .strip_prefix(':')?
                    .trim()
                    .parse::<f64>()
                    .ok()
            })
    };
    let first = field("time of first sample")?;
    let last = field("time of last sample")?;
    (last >= first && first > 0.0).then(|| Duration::from_secs_f64(last - first))
}

/// One stack of the folded format: frames root first, and its sample count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FoldedStack {
    pub(crate) frames: Vec<String>,
    pub(crate) count: u64,
}

/// Parses `frame;frame;...;leaf COUNT` lines; blank lines are skipped.
pub(crate) fn parse_folded(text: &str) -> Result<Vec<FoldedStack>> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(number, line)| {
            let (stack, count) = line
                .trim_end()
                .rsplit_once(' ')
                .with_context(|| format!("folded line {}: no count: {line:?}", number + 1))?;
            let count = count
                .parse()
                .with_context(|| format!("folded line {}: bad count {count:?}", number + 1))?;
            Ok(FoldedStack {
                frames: stack.split(';').map(str::to_string).collect(),
                count,
            })
        })
        .collect()
}

/// The sum of the stacks' counts; counts that add up to more than a `u64` holds (only a corrupt
/// or hostile file has them) are refused rather than wrapped into nonsense shares.
pub(crate) fn sample_total<'a>(stacks: impl IntoIterator<Item = &'a FoldedStack>) -> Result<u64> {
    stacks
        .into_iter()
        .try_fold(0u64, |total, stack| total.checked_add(stack.count))
        .with_context(|| {
            format!(
                "the folded stacks' sample counts add up to more than {}: refused as corrupt",
                u64::MAX
            )
        })
}

/// Total samples and every function's self and inclusive share, sorted by self samples, then
/// inclusive samples (both descending), then name. Self: the function is the leaf frame.
/// Inclusive: the function is anywhere in the stack, each stack counted once however often the
/// function recurs in it. No samples: `(0, [])`. Counts whose total overflows are an error.
pub(crate) fn function_shares(stacks: &[FoldedStack]) -> Result<(u64, Vec<FunctionShare>)> {
    let total = sample_total(stacks)?;
    // Each function's counts sum a subset of the stacks, once each: never above `total`.
    let mut counts: HashMap<&str, (u64, u64)> = HashMap::new();
    for stack in stacks {
        if let Some(leaf) = stack.frames.last() {
            counts.entry(leaf).or_default().0 += stack.count;
        }
        let distinct: HashSet<&str> = stack.frames.iter().map(String::as_str).collect();
        for frame in distinct {
            counts.entry(frame).or_default().1 += stack.count;
        }
    }
    let share = |samples: u64| {
        if total == 0 {
            0.0
        } else {
            samples as f64 / total as f64
        }
    };
    let mut shares: Vec<FunctionShare> = counts
        .into_iter()
        .map(
            |(function, (self_samples, inclusive_samples))| FunctionShare {
                function: function.to_string(),
                self_samples,
                inclusive_samples,
                self_share: share(self_samples),
                inclusive: share(inclusive_samples),
            },
        )
        .collect();
    shares.sort_by(|a, b| {
        b.self_samples
            .cmp(&a.self_samples)
            .then(b.inclusive_samples.cmp(&a.inclusive_samples))
            .then_with(|| a.function.cmp(&b.function))
    });
    Ok((total, shares))
}

/// A private directory for perf's data, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Scratch> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let nanos = crate::calendar::since_epoch().subsec_nanos();
        let path = std::env::temp_dir().join(format!(
            "lab-perf-{}-{}-{nanos}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir(&path).with_context(|| format!("creating {}", path.display()))?;
        Ok(Scratch(path))
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn share<'a>(shares: &'a [FunctionShare], name: &str) -> &'a FunctionShare {
        shares
            .iter()
            .find(|share| share.function == name)
            .unwrap_or_else(|| panic!("{name} missing from {shares:?}"))
    }

    #[test]
    fn self_is_the_leaf_and_inclusive_counts_each_stack_once() {
        let stacks = parse_folded(
            "engine;main;search;eval 6\n\
             engine;main;search;search;search;movegen 3\n\
             engine;main;search 1\n\n",
        )
        .unwrap();
        let (total, shares) = function_shares(&stacks).unwrap();
        assert_eq!(total, 10);
        let eval = share(&shares, "eval");
        assert_eq!((eval.self_samples, eval.inclusive_samples), (6, 6));
        assert_eq!(eval.self_share, 0.6);
        // `search` recurses in the second stack: still 3 samples there, not 9.
        let search = share(&shares, "search");
        assert_eq!((search.self_samples, search.inclusive_samples), (1, 10));
        assert_eq!(search.inclusive, 1.0);
        assert_eq!(search.self_share, 0.1);
        let main = share(&shares, "main");
        assert_eq!((main.self_samples, main.inclusive_samples), (0, 10));
        // Ordered by self samples.
        let order: Vec<&str> = shares.iter().map(|s| s.function.as_str()).collect();
        assert_eq!(&order[..3], ["eval", "movegen", "search"]);
        let self_sum: u64 = shares.iter().map(|s| s.self_samples).sum();
        assert_eq!(self_sum, total, "every sample has exactly one leaf");
    }

    #[test]
    fn no_stacks_no_shares() {
        assert_eq!(parse_folded("").unwrap(), vec![]);
        assert_eq!(parse_folded("\n  \n").unwrap(), vec![]);
        let (total, shares) = function_shares(&[]).unwrap();
        assert_eq!(total, 0);
        assert!(shares.is_empty());
        let zero = [FoldedStack {
            frames: vec!["main".into()],
            count: 0,
        }];
        let (total, shares) = function_shares(&zero).unwrap();
        assert_eq!(total, 0);
        assert_eq!(shares[0].inclusive, 0.0, "no division by zero");
    }

    #[test]
    fn counts_whose_total_overflows_are_refused() {
        let stacks = parse_folded(&format!("main;eval {}\nmain;search 1\n", u64::MAX)).unwrap();
        let refused = function_shares(&stacks).unwrap_err().to_string();
        assert!(refused.contains("add up to more than"), "{refused}");
        // Up to the limit is a profile.
        let stacks = parse_folded(&format!("main;eval {}\nmain 1\n", u64::MAX - 1)).unwrap();
        assert_eq!(function_shares(&stacks).unwrap().0, u64::MAX);
    }

    #[test]
    fn malformed_folded_lines_are_refused() {
        assert!(parse_folded("main;eval").is_err());
        assert!(parse_folded("main;eval x").is_err());
        assert!(parse_folded("main;eval -3").is_err());
        // Frames may contain spaces (C++ and Rust generics): the count is after the last one.
        let stacks = parse_folded("main;Foo<A, B>::bar 7").unwrap();
        assert_eq!(stacks[0].frames, ["main", "Foo<A, B>::bar"]);
        assert_eq!(stacks[0].count, 7);
    }

    #[test]
    fn collapses_perf_script_output() {
        let script = "\
# ========
# time of first sample : 27282.284072
# time of last sample : 27282.783624
# ========
#
burn  8869/8869  27282.284072: cpu-clock:
\t            1176 burn_cycles (/tmp/burn)
\t            11f6 main (/tmp/burn)

burn  8869/8869  27282.285047: cpu-clock:
\t            118a burn_cycles (/tmp/burn)
\t            11f6 main (/tmp/burn)

burn  8869/8869  27282.286047: cpu-clock:
\t            11f6 main (/tmp/burn)

";
        let folded = collapse_perf_script(script.as_bytes()).unwrap();
        let stacks = parse_folded(&folded).unwrap();
        let (total, shares) = function_shares(&stacks).unwrap();
        assert_eq!(total, 3, "{folded}");
        let burn = share(&shares, "burn_cycles");
        assert_eq!((burn.self_samples, burn.inclusive_samples), (2, 2));
        assert_eq!(share(&shares, "main").inclusive_samples, 3);
        let span = sample_span(script).unwrap();
        assert!((span.as_secs_f64() - 0.499552).abs() < 1e-6, "{span:?}");
        let svg = render_flamegraph(&folded, "burn: test", CallGraph::FramePointer).unwrap();
        let svg = String::from_utf8(svg).unwrap();
        assert!(svg.contains("burn_cycles") && svg.contains("burn: test"));
    }

    #[test]
    fn sample_span_needs_both_times() {
        assert_eq!(sample_span("# time of first sample : 1.5\n"), None);
        assert_eq!(sample_span(""), None);
        // perf writes zeroes when there was no sample.
        assert_eq!(
            sample_span("# time of first sample : 0.000000\n# time of last sample : 0.000000\n"),
            None
        );
        // Only the header counts, not a sample line that happens to look alike.
        assert_eq!(
            sample_span(
                "burn 1 2.0: cpu-clock:\n# time of first sample : 1\n# time of last sample : 2\n"
            ),
            None
        );
    }

    #[test]
    fn permission_failures_name_the_paranoid_setting() {
        let stderr = "Error:\nAccess to performance monitoring and observability operations is \
                      limited.\nConsider adjusting /proc/sys/kernel/perf_event_paranoid setting\n\
                      perf_event_paranoid setting is 3:\n";
        let reason =
            explain_perf_failure(Path::new("/usr/bin/perf"), "exit code 255", stderr, Some(3));
        assert!(
            reason.contains(
                "Access to performance monitoring and observability operations is limited."
            ),
            "{reason}"
        );
        assert!(
            reason.contains(PARANOID_PATH) && reason.contains("is 3"),
            "{reason}"
        );
        assert!(reason.contains("exit code 255"), "{reason}");
        let other = explain_perf_failure(
            Path::new("perf"),
            "exit code 1",
            "[ perf record: Woken up 1 times to write data ]\nfailed to mmap: weird\n",
            Some(2),
        );
        assert!(other.contains("failed to mmap: weird"), "{other}");
        assert!(!other.contains(PARANOID_PATH), "{other}");
        assert!(
            explain_perf_failure(Path::new("perf"), "exit code 1", "", None).contains("no message")
        );
    }
}
