//! The command line itself: help laid out within a terminal's width, global options apart from
//! a command's own, the shared measurement options with each command's own help, and negative
//! numbers given to the lab's own checks.

use std::process::{Command, Output};

/// `lab ARGS` outside any repository, as if printed to a terminal 100 columns wide that is not
/// one (COLUMNS is what clap reads when no terminal answers).
fn lab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lab"))
        .args(args)
        .env("COLUMNS", "100")
        .current_dir(std::env::temp_dir())
        .output()
        .expect("running lab")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

const COMMANDS: [&[&str]; 8] = [
    &["--help"],
    &["compare", "--help"],
    &["match", "--help"],
    &["history", "--help"],
    &["bisect", "--help"],
    &["tune", "--help"],
    &["verdict", "--help"],
    &["baseline", "check", "--help"],
];

#[test]
fn help_fits_the_terminal_width() {
    for args in COMMANDS {
        let run = lab(args);
        assert_eq!(run.status.code(), Some(0), "{args:?}");
        let help = text(&run.stdout);
        let widest = help.lines().map(|line| line.chars().count()).max();
        assert!(
            widest.is_some_and(|width| width <= 100),
            "lab {args:?}: a line of {widest:?} characters\n{help}"
        );
    }
}

#[test]
fn global_options_are_listed_apart_from_a_commands_own() {
    let help = text(&lab(&["compare", "--help"]).stdout);
    let global = help
        .find("Global options:")
        .unwrap_or_else(|| panic!("no global heading:\n{help}"));
    let own = help.find("--rounds").expect("compare's own --rounds");
    for flag in ["--repo", "--config", "--quiet"] {
        let at = help.find(flag).unwrap_or_else(|| panic!("{flag}:\n{help}"));
        assert!(at > global, "{flag} under the global heading:\n{help}");
    }
    assert!(
        own < global,
        "--rounds among compare's own options:\n{help}"
    );
}

/// The options `history` and `bisect` share with `compare` are one definition; the three whose
/// meaning differs for a series keep their own help (--rounds one for each command), and the
/// series has no `--positions`.
#[test]
fn shared_measurement_options_keep_each_commands_help() {
    let wide = |args: &[&str]| {
        let run = Command::new(env!("CARGO_BIN_EXE_lab"))
            .args(args)
            .env("COLUMNS", "1000")
            .current_dir(std::env::temp_dir())
            .output()
            .expect("running lab");
        assert_eq!(run.status.code(), Some(0), "{args:?}");
        text(&run.stdout)
    };
    let compare = wide(&["compare", "--help"]);
    for own in [
        "Measurement rounds. `compare` runs each round as a pair",
        "Bench depth of the callgrind run per binary (a second run at depth 1",
        "it started (callgrind gets 20 times as long)",
        "--positions <FILE>",
    ] {
        assert!(compare.contains(own), "compare: {own:?}\n{compare}");
    }
    let rounds = [
        (
            "history",
            "NPS runs per commit, after one discarded warm-up run; the table shows their median",
        ),
        (
            "bisect",
            "ABBA rounds of each `--metric nps` probe (GOOD measured again beside it) and of the \
             closing `lab compare` of the commit found with its parent; probes of the other \
             metrics run twice, for the signature check",
        ),
    ];
    for (series, rounds) in rounds {
        let help = wide(&[series, "--help"]);
        for own in [
            rounds,
            "Bench depth of the callgrind run (a run at depth 1 is subtracted as start-up work)",
            "Seconds a single bench run may take before it is killed (callgrind gets 20 times as \
             long)",
            "Extra cargo features to build the engine with (comma-separated or repeated)",
            "--no-instructions",
            "--depth <DEPTH>",
        ] {
            assert!(help.contains(own), "{series}: {own:?}\n{help}");
        }
        assert!(!help.contains("--positions"), "{series}:\n{help}");
        assert!(!help.contains("Measurement rounds."), "{series}:\n{help}");
    }
}

#[test]
fn negative_numbers_reach_the_labs_own_checks() {
    let cases: [(&[&str], &str); 6] = [
        (
            &["compare", "A", "B", "--threshold", "-1"],
            "'-1' is negative: a threshold is a size",
        ),
        (
            &["compare", "A", "B", "--instr-threshold", "-0.5"],
            "'-0.5' is negative",
        ),
        (
            &["baseline", "check", "main", "--threshold", "-2"],
            "'-2' is negative",
        ),
        (
            &["bisect", "A", "B", "--metric", "nps", "--threshold", "-1"],
            "'-1' is negative",
        ),
        (&["compare", "A", "B", "--rounds", "-1"], "--rounds"),
        (
            &["tune", "file.json", "--search", "--max-exceeded", "-1"],
            "a percentage above 0 and below 100",
        ),
    ];
    for (args, expected) in cases {
        let run = lab(args);
        let stderr = text(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(
            !stderr.contains("unexpected argument") && !stderr.contains("tip:"),
            "{args:?}: clap's hint instead of the lab's error: {stderr}"
        );
    }
}
