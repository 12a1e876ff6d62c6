//! An engine or build that leaves descendants behind: `--timeout` kills the whole process
//! group, a finished engine's leftovers are killed, and SIGTERM to the lab ends its children.

mod common;

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use common::{gone_soon, pids_in, FakeRepo};

/// The fake engine's stray descendant sleeps this long; a lab that waits for it takes as long.
const DESCENDANT_SLEEP: Duration = Duration::from_secs(120);

fn assert_all_gone(pids: &[u32]) {
    assert!(!pids.is_empty(), "the fake engine recorded no process ids");
    for &pid in pids {
        assert!(gone_soon(pid), "process {pid} outlived the lab");
    }
}

/// Runs `lab ARGS --rounds 2 --no-instructions --timeout 5` on an engine that starts a descendant
/// holding its pipes and hangs: the lab must give up at the timeout and leave nothing running.
fn assert_timeout_kills_a_descendant_holding_the_pipes(args: &[&str]) {
    let repo = FakeRepo::new();
    repo.commit_constant("DESCENDANT_HANG", "true");
    let pids = repo.path().join("target/pids");
    let mut args = args.to_vec();
    args.extend(["--rounds", "2", "--no-instructions", "--timeout", "5"]);
    let start = Instant::now();
    let run = repo.lab_with_env(&args, &[("FAKE_ENGINE_PIDS", pids.to_str().unwrap())]);
    // Includes building the fake engine; far below the descendant's 120 s.
    assert!(
        start.elapsed() < DESCENDANT_SLEEP / 2,
        "took {:?}",
        start.elapsed()
    );
    assert_eq!(run.code, 2, "{run}");
    assert!(run.stderr.contains("did not finish within 5 s"), "{run}");
    assert_all_gone(&pids_in(&pids));
}

#[test]
fn bench_timeout_kills_an_engine_whose_descendant_holds_its_pipes() {
    assert_timeout_kills_a_descendant_holding_the_pipes(&["bench", "HEAD"]);
}

#[test]
fn compare_timeout_kills_an_engine_whose_descendant_holds_its_pipes() {
    assert_timeout_kills_a_descendant_holding_the_pipes(&["compare", "HEAD~1", "HEAD"]);
}

#[test]
fn an_engine_that_exits_leaving_a_descendant_is_measured_and_its_descendant_killed() {
    let repo = FakeRepo::new();
    repo.commit_constant("DESCENDANT_LINGER", "true");
    let pids = repo.path().join("target/pids");
    let start = Instant::now();
    let run = repo.lab_with_env(
        &[
            "bench",
            "HEAD",
            "--rounds",
            "2",
            "--no-instructions",
            "--timeout",
            "60",
        ],
        &[("FAKE_ENGINE_PIDS", pids.to_str().unwrap())],
    );
    assert_eq!(run.code, 0, "{run}");
    // Each engine run waited the descendant's 120 s before.
    assert!(
        start.elapsed() < DESCENDANT_SLEEP / 2,
        "took {:?}",
        start.elapsed()
    );
    let recorded = pids_in(&pids);
    assert!(
        recorded.len() >= 4,
        "an engine and a sleep per run: {recorded:?}"
    );
    assert_all_gone(&recorded);
}

/// Starts `lab` with `args`, waits until `ready` names a process id, sends SIGTERM to the lab
/// alone (not its group) and returns its exit code.
fn terminate_when_ready(repo: &FakeRepo, args: &[&str], ready: &Path) -> (i32, Vec<u32>) {
    let _slot = common::serial();
    let mut lab: Child = repo
        .lab_command(args)
        .env("FAKE_ENGINE_PIDS", ready)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("starting lab");
    let deadline = Instant::now() + Duration::from_secs(300);
    while pids_in(ready).is_empty() {
        if Instant::now() > deadline || lab.try_wait().unwrap().is_some() {
            let _ = lab.kill();
            panic!("the lab ended or took too long before its child started");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: kill(2) with a process id we spawned and have not reaped.
    let sent = unsafe { libc::kill(lab.id() as libc::pid_t, libc::SIGTERM) };
    assert_eq!(sent, 0);
    let status = lab.wait().unwrap();
    (status.code().unwrap_or(-1), pids_in(ready))
}

#[test]
fn sigterm_to_the_lab_ends_a_running_engine_and_its_descendants() {
    let repo = FakeRepo::new();
    repo.commit_constant("DESCENDANT_HANG", "true");
    let pids = repo.path().join("target/pids");
    let args = [
        "bench",
        "HEAD",
        "--rounds",
        "2",
        "--no-instructions",
        "--timeout",
        "600",
    ];
    let (code, recorded) = terminate_when_ready(&repo, &args, &pids);
    assert_eq!(code, 130);
    assert_all_gone(&recorded);
}

#[test]
fn sigterm_to_the_lab_ends_a_running_build() {
    let repo = FakeRepo::new();
    // A build script that records its process id and then takes its time.
    repo.write(
        "engine/build.rs",
        "fn main() {\n    if let Some(file) = std::env::var_os(\"FAKE_ENGINE_PIDS\") {\n        \
         std::fs::write(file, std::process::id().to_string()).unwrap();\n    }\n    \
         std::thread::sleep(std::time::Duration::from_secs(120));\n}\n",
    );
    repo.commit("a slow build script");
    let pids = repo.path().join("target/pids");
    let args = ["bench", "HEAD", "--rounds", "2", "--no-instructions"];
    let (code, recorded) = terminate_when_ready(&repo, &args, &pids);
    assert_eq!(code, 130);
    assert_all_gone(&recorded);
}

#[test]
fn sigterm_to_the_lab_ends_running_calibration_processes() {
    let repo = FakeRepo::new();
    repo.write(
        "engine/Cargo.toml",
        "[package]\nname = \"squall\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
         [features]\ncalibrate = []\n\n[[bin]]\nname = \"squall\"\npath = \"src/main.rs\"\n",
    );
    repo.commit_constant("DESCENDANT_HANG", "true");
    let pool = repo.path().join("target/pool.epd");
    std::fs::create_dir_all(pool.parent().unwrap()).unwrap();
    std::fs::write(
        &pool,
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -\n\
         r1bqkbnr/pppppppp/2n5/8/8/5N2/PPPPPPPP/RNBQKB1R w KQkq -\n",
    )
    .unwrap();
    let pids = repo.path().join("target/pids");
    let args = [
        "calibrate",
        "HEAD",
        "--pool",
        pool.to_str().unwrap(),
        "--jobs",
        "2",
    ];
    let (code, recorded) = terminate_when_ready(&repo, &args, &pids);
    assert_eq!(code, 130);
    assert_all_gone(&recorded);
}
