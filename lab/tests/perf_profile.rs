//! `profile::perf`: a real recording of a small C program, perf's absence and refusal, and a hung
//! engine killed at its timeout with perf.
//!
//! The tests that need perf skip (with a printed reason) where `perf_availability` says it
//! cannot record, and the C workload skips where there is no `cc`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use squall_lab::profile::perf::{perf_availability, record, CallGraph, PerfRequest};

/// `LAB_PERF` is process-wide: the tests of this file run one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Sets `LAB_PERF` for the life of the guard (callers hold [`serial`]).
struct LabPerf;

impl LabPerf {
    fn set(value: &Path) -> LabPerf {
        std::env::set_var("LAB_PERF", value);
        LabPerf
    }
}

impl Drop for LabPerf {
    fn drop(&mut self) {
        std::env::remove_var("LAB_PERF");
    }
}

/// perf's path, or `None` after printing why the test is skipped.
fn perf_or_skip(test: &str) -> Option<PathBuf> {
    match perf_availability() {
        Ok(perf) => Some(perf),
        Err(reason) => {
            eprintln!("skipping {test}: {reason}");
            None
        }
    }
}

const BURN_C: &str = r#"
#include <stdio.h>
#include <time.h>

static double seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec + now.tv_nsec / 1e9;
}

/* Half a second of arithmetic, in a function perf must name. */
__attribute__((noinline)) double burn_cycles(void) {
    volatile double sum = 0;
    double start = seconds();
    do {
        for (int i = 0; i < 100000; i++) sum += i * 0.5;
    } while (seconds() - start < 0.5);
    return sum;
}

int main(void) {
    printf("bench: %.0f\n", burn_cycles());
    return 0;
}
"#;

/// Compiles the workload in `dir` with `frame_pointers` (`-fno-omit-frame-pointer` or
/// `-fomit-frame-pointer`); `None` (printed) when there is no C compiler.
fn build_burn(dir: &Path, frame_pointers: &str) -> Option<PathBuf> {
    let source = dir.join("burn.c");
    std::fs::write(&source, BURN_C).unwrap();
    let binary = dir.join("burn");
    let compiled = Command::new("cc")
        .args(["-O1", frame_pointers, "-o"])
        .arg(&binary)
        .arg(&source)
        .status();
    match compiled {
        Ok(status) if status.success() => Some(binary),
        Ok(status) => panic!("cc failed to compile the workload: {status}"),
        Err(error) => {
            eprintln!("skipping: no C compiler (`cc`: {error})");
            None
        }
    }
}

#[test]
fn profiles_a_real_workload() {
    let _serial = serial();
    if perf_or_skip("profiles_a_real_workload").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some(binary) = build_burn(dir.path(), "-fno-omit-frame-pointer") else {
        return;
    };
    let out = dir.path().join("out");
    let mut request = PerfRequest::new(&binary, &[], out.join("burn.svg"));
    request.frequency_hz = 999;
    request.timeout = Duration::from_secs(60);
    request.working_dir = dir.path().to_path_buf();
    let profile = record(&request).unwrap_or_else(|error| panic!("{error:#}"));
    eprintln!(
        "{} samples, {:.0} Hz effective ({} requested), recorded {:?} of {:?} wall; top: {:?}",
        profile.samples,
        profile.effective_hz,
        profile.requested_hz,
        profile.recorded_time,
        profile.wall_time,
        profile.functions.iter().take(3).collect::<Vec<_>>()
    );

    assert!(
        profile.stdout_text().starts_with("bench: "),
        "the engine's stdout is returned: {:?}",
        profile.stdout_text()
    );
    let svg = std::fs::read_to_string(out.join("burn.svg")).unwrap();
    assert!(svg.contains("<svg"), "not an SVG");
    assert!(
        svg.contains("burn_cycles"),
        "the flamegraph names burn_cycles"
    );
    assert!(
        svg.contains("Hz effective"),
        "the title gives the effective rate"
    );
    let folded = std::fs::read_to_string(out.join("burn.folded")).unwrap();
    assert!(folded.lines().count() > 0, "folded stacks written");
    assert_eq!(profile.folded, out.join("burn.folded"));
    let leftovers: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");

    // About 500 samples in half a second at 999 Hz; allow a loaded machine.
    assert!(profile.samples >= 50, "{} samples", profile.samples);
    assert_eq!(profile.requested_hz, 999);
    assert!(
        profile.effective_hz > 0.0 && profile.effective_hz <= 999.0 * 1.5,
        "effective rate {} Hz",
        profile.effective_hz
    );
    assert!(
        profile.recorded_time <= profile.wall_time + Duration::from_millis(50),
        "the recorded run ({:?}) lies within perf's wall time ({:?})",
        profile.recorded_time,
        profile.wall_time
    );
    assert!(
        profile.recorded_time >= Duration::from_millis(400),
        "the workload runs 0.5 s: {:?}",
        profile.recorded_time
    );

    let burn = profile
        .functions
        .iter()
        .find(|share| share.function == "burn_cycles")
        .unwrap_or_else(|| panic!("burn_cycles missing: {:?}", profile.functions));
    assert!(burn.inclusive > 0.5, "burn_cycles: {burn:?}");
    assert!(burn.self_share > 0.5, "burn_cycles: {burn:?}");
    assert_eq!(
        profile.functions[0].function, "burn_cycles",
        "the top function by self share: {:?}",
        profile.functions
    );
    // Frame pointers give the caller too.
    let main = profile
        .functions
        .iter()
        .find(|share| share.function == "main")
        .unwrap_or_else(|| panic!("main missing: {:?}", profile.functions));
    assert!(main.inclusive >= burn.inclusive, "{main:?} vs {burn:?}");
}

#[test]
fn dwarf_unwinding_finds_callers_without_frame_pointers() {
    let _serial = serial();
    if perf_or_skip("dwarf_unwinding_finds_callers_without_frame_pointers").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some(binary) = build_burn(dir.path(), "-fomit-frame-pointer") else {
        return;
    };
    let mut request = PerfRequest::new(&binary, &[], dir.path().join("dwarf.svg"));
    request.call_graph = CallGraph::Dwarf;
    request.timeout = Duration::from_secs(120);
    let profile = record(&request).unwrap_or_else(|error| panic!("{error:#}"));
    let inclusive = |name: &str| {
        profile
            .functions
            .iter()
            .find(|share| share.function == name)
            .map_or(0.0, |share| share.inclusive)
    };
    assert!(inclusive("burn_cycles") > 0.5, "{:?}", profile.functions);
    assert!(
        inclusive("main") > 0.5,
        "DWARF unwinding reaches main: {:?}",
        profile.functions
    );
    let svg = std::fs::read_to_string(dir.path().join("dwarf.svg")).unwrap();
    assert!(
        svg.contains("--call-graph dwarf"),
        "the subtitle names the unwinder"
    );
}

#[test]
fn a_missing_perf_is_reported() {
    let _serial = serial();
    let _perf = LabPerf::set(Path::new("/nonexistent"));
    let reason = perf_availability().expect_err("no perf at /nonexistent");
    assert!(
        reason.contains("perf not found") && reason.contains("/nonexistent"),
        "{reason}"
    );
    // record() gives the same reason, before running anything.
    let dir = tempfile::tempdir().unwrap();
    let request = PerfRequest::new("/bin/true", &[], dir.path().join("x.svg"));
    let error = format!("{:#}", record(&request).unwrap_err());
    assert!(error.contains("perf not found"), "{error}");
    assert!(!dir.path().join("x.svg").exists());
}

#[test]
fn a_perf_that_may_not_record_says_why() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("perf");
    std::fs::write(
        &fake,
        "#!/bin/sh\n\
         echo 'Error:' >&2\n\
         echo 'Access to performance monitoring and observability operations is limited.' >&2\n\
         echo 'Consider adjusting /proc/sys/kernel/perf_event_paranoid setting to open' >&2\n\
         exit 255\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let _perf = LabPerf::set(&fake);
    let reason = perf_availability().expect_err("the fake perf refuses");
    assert!(
        reason.contains("Access to performance monitoring and observability operations is limited"),
        "perf's first line is quoted: {reason}"
    );
    assert!(
        reason.contains("/proc/sys/kernel/perf_event_paranoid"),
        "{reason}"
    );
    assert!(reason.contains("exit code 255"), "{reason}");
}

#[test]
fn an_engine_that_fails_gives_its_stderr() {
    let _serial = serial();
    if perf_or_skip("an_engine_that_fails_gives_its_stderr").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let request = PerfRequest::new(
        "/bin/sh",
        &["-c", "echo 'engine: bad option' >&2; exit 3"],
        dir.path().join("fail.svg"),
    );
    let error = format!("{:#}", record(&request).unwrap_err());
    assert!(error.contains("exit code 3"), "{error}");
    assert!(error.contains("engine: bad option"), "{error}");
    assert!(!dir.path().join("fail.svg").exists());
    assert!(!dir.path().join("fail.folded").exists());
}

#[test]
fn a_run_without_samples_is_an_error() {
    let _serial = serial();
    if perf_or_skip("a_run_without_samples_is_an_error").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut request = PerfRequest::new("/bin/true", &[], dir.path().join("empty.svg"));
    request.frequency_hz = 1;
    let error = format!("{:#}", record(&request).unwrap_err());
    assert!(error.contains("perf recorded no samples"), "{error}");
    assert!(error.contains("at 1 Hz"), "{error}");
    assert!(
        !dir.path().join("empty.svg").exists(),
        "no empty flamegraph"
    );
}

/// True while `pid` is a live process (a zombie counts as dead: it runs nothing).
fn alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| {
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            !state.starts_with('Z') && !state.starts_with('X')
        })
        .unwrap_or(false)
}

/// Processes whose command line mentions `marker` (zombies excluded: they run nothing).
fn processes_mentioning(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let pid = entry.file_name().to_string_lossy().into_owned();
        if !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let state = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let state = state.rsplit(')').next().unwrap_or("").trim_start();
        if cmdline.contains(marker) && !state.starts_with('Z') && !state.starts_with('X') {
            found.push(format!("{pid}: {cmdline}"));
        }
    }
    found
}

#[test]
fn a_hung_engine_is_killed_with_perf_at_the_timeout() {
    let _serial = serial();
    if perf_or_skip("a_hung_engine_is_killed_with_perf_at_the_timeout").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("hang-marker");
    let script = format!("echo $$ > {}; exec sleep 100", marker.display());
    let mut request = PerfRequest::new("/bin/sh", &["-c", &script], dir.path().join("hang.svg"));
    request.timeout = Duration::from_secs(2);
    let start = Instant::now();
    let error = format!("{:#}", record(&request).unwrap_err());
    let elapsed = start.elapsed();
    assert!(
        elapsed < Duration::from_secs(10),
        "took {elapsed:?}: {error}"
    );
    assert!(
        error.contains("did not finish within 2 s"),
        "the timeout is named: {error}"
    );
    // The engine wrote its pid before it exec'd `sleep 100`: it ran, and it must be gone, as
    // must perf (its command line holds the marker's path).
    let pid = std::fs::read_to_string(&marker).expect("the engine started");
    let pid = pid.trim();
    let marker_text = marker.display().to_string();
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let perf_left = processes_mentioning(&marker_text);
        let engine_left = alive(pid);
        if perf_left.is_empty() && !engine_left {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "left running: engine {pid} alive: {engine_left}; {perf_left:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!dir.path().join("hang.svg").exists());
}
