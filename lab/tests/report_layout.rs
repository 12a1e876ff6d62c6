//! The terminal, markdown and JSON layouts of the comparison, bench, baseline and bisect
//! reports (and a comparison's HTML page), pinned byte for byte against the files in
//! `tests/golden/`: any change to what a reader sees
//! shows here as a diff. `LAB_BLESS_GOLDEN=1 cargo test --test report_layout` rewrites the
//! files after an intended change.

use std::path::PathBuf;

use squall_lab::analysis::compare::{
    compare, Comparison, Criteria, Settings, SpeedEloEstimate, Thresholds,
};
use squall_lab::analysis::functions::{FunctionMover, FunctionsComparison, FunctionsWhy};
use squall_lab::analysis::measure::{Instructions, Measured, Measurement};
use squall_lab::baseline::Baseline;
use squall_lab::engine::callgrind::Cost;
use squall_lab::history::bisect::{BisectReport, Metric, Probe, Role, Skipped};
use squall_lab::history::range::CommitInfo;
use squall_lab::report::{html, render, BaselineOutput, BenchOutput, CommitBench, Format, Report};
use squall_lab::schema::{Kind, LAB_JSON_SCHEMA_VERSION};

fn stored() -> Baseline {
    serde_json::from_str(include_str!("../../baselines/main.json")).unwrap()
}

fn settings(rounds: u32, depth: Option<u32>) -> Settings {
    Settings {
        rounds,
        depth,
        instr_depth: 6,
        thresholds: Thresholds {
            threshold_pct: 1.0,
            instr_threshold_pct: 0.5,
        },
        positions: None,
    }
}

/// B costs 5% more instructions per node on the same search: a regression, its top movers
/// named, with a speed-Elo estimate and a note on B's instruction count.
fn local_regression() -> Comparison {
    let a: Measurement = stored().measurement;
    let mut b = a.clone();
    if let Instructions::Measured { total, note, .. } = &mut b.instructions {
        *total += *total / 20;
        *note = Some("counted through a wrapper script".to_string());
    }
    b.revision.spec = "feature|branch <b>".to_string();
    let mut comparison = compare(
        Kind::Compare,
        settings(6, None),
        &Measured::new("A", a),
        &Measured::new("B", b),
        Criteria::local(false),
    );
    let cost = |self_ir, inclusive| Cost { self_ir, inclusive };
    comparison.functions = Some(FunctionsComparison {
        why: FunctionsWhy::InstructionsMoved,
        depth: Some(6),
        a_total: 1_000_000,
        b_total: 1_050_000,
        functions_counted: 42,
        movers: vec![
            FunctionMover {
                function: "squall::eval::full_tier".to_string(),
                a: cost(400_000, 600_000),
                b: cost(440_000, 650_000),
                self_delta: 40_000,
                inclusive_delta: 50_000,
                self_delta_pct_of_total: 4.0,
                inclusive_delta_pct_of_total: 5.0,
            },
            FunctionMover {
                function: "squall::movegen::generate".to_string(),
                a: cost(100_000, 100_000),
                b: cost(90_000, 90_000),
                self_delta: -10_000,
                inclusive_delta: -10_000,
                self_delta_pct_of_total: -1.0,
                inclusive_delta_pct_of_total: -1.0,
            },
        ],
    });
    comparison.speed_elo = Some(SpeedEloEstimate {
        value: 1.9,
        ci_low: 1.2,
        ci_high: 2.7,
        speed_ratio: 1.021,
        tc: "10+0.1".to_string(),
        elo_per_doubling: 65.3,
        model_of: "HEAD".to_string(),
        same_binary: false,
        games: 12_000,
    });
    comparison
}

/// A baseline from another setting: NPS and toolchain not comparable, the signature changed,
/// settings not recorded; the sides carry labels other than A and B.
fn baseline_check() -> Comparison {
    let stored = stored();
    let mut faster = stored.measurement.clone();
    faster.signature += 1;
    for run in &mut faster.runs_time_ns {
        for time in run.iter_mut() {
            *time = *time * 9 / 10;
        }
    }
    let criteria = Criteria {
        nps_comparable: false,
        toolchain_comparable: false,
        paired_in_time: false,
        machine_differences: vec!["CPU governor: powersave (baseline) vs performance".into()],
        machine_unknown: vec!["the kernel".into(), "the governor".into()],
        ..Criteria::local(false)
    };
    compare(
        Kind::BaselineCheck,
        settings(6, None),
        &Measured::new("baseline main", stored.measurement),
        &Measured::new("revision", faster),
        criteria,
    )
}

/// Two rounds, other depths, one side without eval counters and no split by search; the
/// revisions run one binary two ways (`lab tiers`).
fn few_rounds() -> Comparison {
    let mut a = stored().measurement;
    a.runs_time_ns.truncate(2);
    let mut b = a.clone();
    b.depth = Some(9);
    b.signature += 1000;
    b.eval = None;
    if let Some(eval) = &mut a.eval {
        eval.by_search = None;
    }
    compare(
        Kind::Tiers,
        settings(2, Some(11)),
        &Measured::new("A", a),
        &Measured::new("B", b),
        Criteria::local(true),
    )
}

fn commit(short: &str, subject: &str) -> CommitInfo {
    CommitInfo {
        id: format!("{short}000000000000000000000000000000"),
        short: short.to_string(),
        date: "2026-01-02".to_string(),
        subject: subject.to_string(),
        oid: git2::Oid::zero(),
    }
}

fn bisect(comparison: Option<Comparison>, found: bool) -> BisectReport {
    let probe = |role, commit, position, value, change_pct, ci, beyond| Probe {
        role,
        commit,
        position,
        value,
        change_pct,
        ci,
        beyond,
    };
    BisectReport {
        schema_version: LAB_JSON_SCHEMA_VERSION,
        kind: Kind::Bisect,
        metric: Metric::Nps,
        threshold_pct: 2.0,
        good: commit("aaaaaaaaaa", "the good one"),
        bad: commit("bbbbbbbbbb", "the bad | one `x`"),
        path_length: 7,
        first_bad: found.then(|| commit("cccccccccc", "slow down <eval>")),
        first_bad_among: Vec::new(),
        skipped: vec![Skipped {
            commit: commit("dddddddddd", "broken"),
            position: 3,
            error: "error[E0425]".to_string(),
        }],
        probes: vec![
            probe(
                Role::Reference,
                commit("aaaaaaaaaa", "the good one"),
                0,
                Some(1.0),
                None,
                None,
                false,
            ),
            probe(
                Role::Bad,
                commit("bbbbbbbbbb", "the bad | one `x`"),
                7,
                Some(1.05),
                Some(-4.76),
                Some([1.03, 1.07]),
                true,
            ),
            probe(
                Role::Probe,
                commit("eeeeeeeeee", "a probe"),
                4,
                None,
                None,
                None,
                false,
            ),
        ],
        builds: 4,
        fresh_builds: 3,
        measurements: 5,
        comparison,
    }
}

fn bench_output(eval: bool) -> BenchOutput {
    let mut revision = local_regression().b;
    if !eval {
        revision.eval = None;
        revision.instructions.skipped_reason = Some("valgrind not found".to_string());
    }
    BenchOutput {
        schema_version: LAB_JSON_SCHEMA_VERSION,
        kind: Kind::Bench,
        settings: settings(6, Some(11)),
        revision,
        commit_bench: Some(CommitBench {
            commit: "0123456789abcdef".to_string(),
            stated: 4_412_345,
            measured: 4_412_346,
            matches: false,
        }),
    }
}

fn baseline_output() -> BaselineOutput {
    let stored = stored();
    BaselineOutput {
        schema_version: LAB_JSON_SCHEMA_VERSION,
        kind: Kind::Baseline,
        name: "main".to_string(),
        created_unix: stored.created_unix,
        machine: stored.machine,
        toolchain: stored.toolchain,
        settings: settings(6, None),
        revision: local_regression().a,
    }
}

fn cases() -> Vec<(&'static str, Report)> {
    vec![
        (
            "compare_local",
            Report::Comparison(Box::new(local_regression())),
        ),
        (
            "compare_baseline",
            Report::Comparison(Box::new(baseline_check())),
        ),
        (
            "compare_few_rounds",
            Report::Comparison(Box::new(few_rounds())),
        ),
        ("bench", Report::Bench(Box::new(bench_output(true)))),
        (
            "bench_no_eval",
            Report::Bench(Box::new(bench_output(false))),
        ),
        (
            "baseline_show",
            Report::Baseline(Box::new(baseline_output())),
        ),
        (
            "bisect_found",
            Report::Bisect(Box::new(bisect(Some(local_regression()), true))),
        ),
        (
            "bisect_clean",
            Report::Bisect(Box::new(bisect(None, false))),
        ),
    ]
}

#[test]
fn every_layout_matches_its_golden_file() {
    let golden = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let bless = std::env::var_os("LAB_BLESS_GOLDEN").is_some();
    let mut differ = Vec::new();
    for (name, report) in cases() {
        let mut layouts = vec![
            ("txt", render(&report, Format::Terminal)),
            ("md", render(&report, Format::Markdown)),
            ("json", render(&report, Format::Json)),
        ];
        if let Report::Comparison(_) = report {
            // A page drawn from a report that records no machine names the one drawing it:
            // written as a placeholder here, so the golden file holds on any machine.
            let here = squall_lab::machine::Machine::current();
            let drawn_on = format!(
                "{} ({} cores): the machine this page was drawn on",
                here.cpu_model, here.cores
            );
            let page = html::render(&report).unwrap().replace(
                &drawn_on,
                "CPU (N cores): the machine this page was drawn on",
            );
            layouts.push(("html", page));
        }
        for (extension, rendered) in layouts {
            let path = golden.join(format!("{name}.{extension}"));
            if bless {
                std::fs::create_dir_all(&golden).unwrap();
                std::fs::write(&path, &rendered).unwrap();
                continue;
            }
            let expected = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            if rendered != expected {
                differ.push(format!(
                    "{} differs:\n--- expected\n{expected}\n--- rendered\n{rendered}",
                    path.display()
                ));
            }
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}
