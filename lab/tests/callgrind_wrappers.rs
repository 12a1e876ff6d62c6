//! Instruction counts of benches that do not run the built binary directly: a wrapper
//! (`taskset -c 0 {exe} bench`, as docs/lab-toml.md shows), an engine that is a script starting
//! the real binary, and a binary valgrind cannot execute (built for the host CPU).

#[path = "common/c_engine.rs"]
mod c_engine;
mod common;

use c_engine::{c_engine_repo, have};
use common::{FakeRepo, LabRun};

fn valgrind_available() -> bool {
    have("valgrind")
}

fn compare_same(repo: &FakeRepo) -> LabRun {
    repo.lab(&[
        "compare",
        "HEAD",
        "HEAD",
        "--force",
        "--rounds",
        "2",
        "--depth",
        "3",
        "--instr-depth",
        "2",
        "--threshold",
        "50",
        "--format",
        "json",
    ])
}

/// Instructions per node of a side of a comparison's JSON.
fn per_node(run: &LabRun, side: &str) -> f64 {
    run.json()[side]["instructions"]["per_node"]
        .as_f64()
        .unwrap_or_else(|| panic!("no instructions per node: {run}"))
}

#[test]
fn a_taskset_wrapper_counts_the_engine() {
    if !valgrind_available() || !have("taskset") {
        eprintln!("skipped: valgrind and taskset are needed");
        return;
    }
    let Some(repo) = c_engine_repo("make EXE={exe}", "taskset -c 0 {exe} bench {depth}") else {
        return;
    };
    let run = compare_same(&repo);
    assert_eq!(run.code, 0, "{run}");
    // WORK = 300 LCG rounds per node, a few instructions each.
    let a = per_node(&run, "a");
    assert!(a > 600.0, "{a} instructions per node: {run}");
    assert!((per_node(&run, "b") / a - 1.0).abs() < 0.01, "{run}");
    // taskset replaced itself by the built binary: that is the process counted, no note.
    assert!(!run.stdout.contains("not the built binary"), "{run}");
}

#[test]
fn a_script_engine_is_counted_in_the_process_it_starts_with_a_note() {
    if !valgrind_available() {
        eprintln!("skipped: valgrind is needed");
        return;
    }
    let real = tempfile::tempdir().unwrap();
    let real_engine = real.path().join("real-engine");
    // The built "binary" is a shell script that runs the real engine as its child.
    let build = format!(
        "make EXE={real} && sh wrap.sh {{exe}} {real}",
        real = real_engine.display()
    );
    let Some(repo) = c_engine_repo(&build, "{exe} bench {depth}") else {
        return;
    };
    repo.write(
        "src/wrap.sh",
        "printf '#!/bin/sh\\n%s \"$@\"\\n' \"$2\" > \"$1\" && chmod +x \"$1\"\n",
    );
    repo.commit("the engine is a script");
    let run = compare_same(&repo);
    assert_eq!(run.code, 0, "{run}");
    let a = per_node(&run, "a");
    assert!(
        a > 600.0,
        "the shell's count would be below 1 per node: {a}: {run}"
    );
    let notes = run.json()["notes"].to_string();
    assert!(
        notes.contains("not the built binary") && notes.contains("is a script"),
        "{run}"
    );
    assert!(notes.contains("real-engine bench"), "{notes}");
}

#[test]
fn a_binary_valgrind_cannot_execute_skips_instructions_and_keeps_the_speed_verdict() {
    if !valgrind_available() {
        eprintln!("skipped: valgrind is needed");
        return;
    }
    let Some(repo) = c_engine_repo(
        "make EXE={exe} CFLAGS=-DAVX512_UNDER_VALGRIND",
        "{exe} bench {depth}",
    ) else {
        return;
    };
    let run = repo.lab(&[
        "compare",
        "HEAD",
        "HEAD",
        "--force",
        "--rounds",
        "2",
        "--depth",
        "3",
        "--threshold",
        "50",
    ]);
    assert_eq!(run.code, 0, "the speed verdict decides: {run}");
    let expected = "instructions: skipped (valgrind cannot execute this binary: illegal \
                    instruction; likely built with -march=native; give a build without it, \
                    e.g. ARCH=... in lab.toml)";
    assert!(run.stderr.contains(expected), "{run}");
    assert!(
        run.stdout
            .contains("Instructions: skipped (valgrind cannot execute this binary"),
        "{run}"
    );
}
