//! `lab frontier` end to end on hand-made verdict reports and calibration files: the table,
//! the JSON and the page say the same numbers, the optimum and whether the data separate it,
//! and every file that does not fit is refused by name with exit 2.

mod common;

use std::path::{Path, PathBuf};

use common::calibration::calibration_file;
use common::lab;
use serde_json::{json, Value};
use squall::calibrate::stats::{wilson_interval, Z95};
use squall_lab::calibration::data::{CalibrationFile, ExitRate, MarginSafety, Tally, TierSafety};
use tempfile::TempDir;

const A_KEY: &str = "74b32d52d7cae663e493b05c27af95d74bba4245";

fn estimate(value: f64, low: f64, high: f64) -> Value {
    json!({"value": value, "ci_low": low, "ci_high": high})
}

fn revision(spec: &str, commit: &str, key: &str) -> Value {
    json!({"spec": spec, "commit": commit, "tree": "6832419aaff704732ba3ac8e7a268dbf5c4ee012",
           "binary_key": key, "cached_build": true})
}

/// A `lab verdict --format json` report of B = `spec` against A (binary `a_key`), with the
/// fields a verdict writes; `totals` is the total Elo and its interval, the speed and search
/// parts chosen to add up to it.
fn verdict(a_key: &str, tc: &str, spec: &str, ratio: f64, speed: f64, total: [f64; 3]) -> Value {
    let search = total[0] - speed;
    json!({
        "schema_version": 2, "kind": "verdict",
        "limit": {"kind": "clock", "base_ms": 5000, "increment_ms": 50},
        "tc": tc,
        "sprt": {"elo0": -5.0, "elo1": 0.0, "alpha": 0.05, "beta": 0.05, "model": "logistic"},
        "comparison": {
            "a": {"label": "A", "revision": revision("main", "5d05aefaa1e1743aba28bb2f05b1469882e318bf", a_key)},
            "b": {"label": "B", "revision": revision(spec, "7020e6cc30170e3b7e237d661c7e36cf2eff5c17", &format!("{spec}-key"))},
            "verdict": "improvement"
        },
        "model": {"elo_per_doubling": estimate(90.0, 80.0, 100.0), "fitted_on": "main",
                  "same_binary": true, "games": 400, "date": "2026-12-02", "path": "x"},
        "speed_ratio": estimate(ratio, ratio - 0.02, ratio + 0.02),
        "speed_elo": estimate(speed, speed - 3.0, speed + 3.0),
        "search_elo": estimate(search, search - 7.0, search + 7.0),
        "total_elo": estimate(total[0], total[1], total[2]),
        "llr": 1.2, "llr_lower": -2.94, "llr_upper": 2.94, "games": 1200, "rounds": 6,
        "search": null, "decision": "undecided", "wall_time_s": 300.0, "notes": []
    })
}

fn tally(exits: u64, exceeded: u64) -> Tally {
    Tally {
        exits,
        exceeded,
        positions: 500,
        max_from_one_position: 3,
    }
}

/// A margin-safety calibration whose lazy tier exceeds `exceeded` of 10,000 exits in bucket 3,
/// split over two danger classes (9,000 and 1,000 exits, the smaller class taking
/// `class_exceeded` of them); every other cell 1 of 10,000.
fn calibration(exceeded: u64, class_exceeded: u64) -> CalibrationFile {
    let tier = |worst: Option<(u64, u64)>| {
        let bucket = |b: usize| match worst {
            Some((all, _)) if b == 3 => tally(10_000, all),
            _ => tally(10_000, 1),
        };
        TierSafety {
            by_material_bucket: (0..8).map(bucket).collect(),
            by_side_buckets: (0..8)
                .map(|_| (0..8).map(|_| tally(0, 0)).collect())
                .collect(),
            by_danger_class: Some(
                (0..8)
                    .map(|b| {
                        let total = bucket(b);
                        let small = match worst {
                            Some((_, class)) if b == 3 => class,
                            _ => 0,
                        };
                        vec![tally(9_000, total.exceeded - small), tally(1_000, small)]
                    })
                    .collect(),
            ),
        }
    };
    let exit_rate = ExitRate {
        calls: 100_000,
        exits: [40_000, 25_000, 35_000],
        by_material_bucket: (0..8).map(|_| [5_000, 3_125, 4_375]).collect(),
    };
    CalibrationFile {
        margin_safety: Some(MarginSafety {
            super_lazy: tier(None),
            lazy: tier(Some((exceeded, class_exceeded))),
        }),
        ..calibration_file(3000, 6, &["residual", "marginsafety"], 1_000_000, exit_rate)
    }
}

struct Files {
    dir: TempDir,
}

impl Files {
    fn new() -> Files {
        Files {
            dir: TempDir::new().unwrap(),
        }
    }

    fn write(&self, name: &str, value: &Value) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, serde_json::to_string_pretty(value).unwrap()).unwrap();
        path
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

fn text(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Three levels and the reference: 0.5% (lazy bucket 3 exceeds 20, 5 of them in the small
/// class), 2% (150, 60 in the small class), and a level without a calibration; the reference's
/// calibration given as a `lab calibrate` report.
fn frontier_files(files: &Files, two_percent_total: [f64; 3]) -> Vec<String> {
    let half = files.write(
        "half.json",
        &verdict(
            A_KEY,
            "5+0.05",
            "tables-0.5",
            0.95,
            -8.0,
            [-12.0, -19.0, -5.0],
        ),
    );
    let two = files.write(
        "two.json",
        &verdict(A_KEY, "5+0.05", "tables-2", 1.06, 9.0, two_percent_total),
    );
    let bare = files.write(
        "bare.json",
        &verdict(A_KEY, "5+0.05", "tables-x", 1.01, 1.5, [1.0, -5.0, 7.0]),
    );
    let half_cal = files.write("half-cal.json", &json!(calibration(20, 5)));
    let two_cal = files.write("two-cal.json", &json!(calibration(150, 60)));
    let reference_cal = files.write(
        "ref-cal.json",
        &json!({"schema_version": 2, "kind": "calibration", "origin": "main",
                "percentile": 99.0, "futility_recommended": null, "futility_current": null,
                "calibration": calibration(60, 20)}),
    );
    vec![
        "frontier".to_string(),
        "--point".to_string(),
        format!("2%={},{}", text(&two), text(&two_cal)),
        "--point".to_string(),
        format!("unmeasured={}", text(&bare)),
        "--point".to_string(),
        format!("0.5%={},{}", text(&half), text(&half_cal)),
        "--reference".to_string(),
        format!("1%={}", text(&reference_cal)),
    ]
}

fn run(args: &[String], extra: &[&str]) -> common::LabRun {
    let mut all: Vec<&str> = args.iter().map(String::as_str).collect();
    all.extend_from_slice(extra);
    lab(&all)
}

/// The worst Wilson upper bound, in percent, of a calibration made by [`calibration`]: the
/// small class of lazy bucket 3, or the bucket as a whole, whichever is larger.
fn worst_pct(exceeded: u64, class_exceeded: u64) -> f64 {
    let (_, class) = wilson_interval(class_exceeded, 1_000, Z95);
    let (_, bucket) = wilson_interval(exceeded, 10_000, Z95);
    class.max(bucket) * 100.0
}

#[test]
fn the_table_and_the_json_say_the_same_numbers_and_the_optimum_is_not_separated() {
    let files = Files::new();
    let args = frontier_files(&files, [6.0, -2.0, 14.0]);
    let json_run = run(&args, &["--format", "json"]);
    assert_eq!(json_run.code, 0, "{json_run}");
    let report = json_run.json();
    assert_eq!(report["kind"], "frontier");
    assert_eq!(report["schema_version"], 2);
    assert_eq!(report["tc"], "5+0.05");
    assert_eq!(report["reference"]["label"], "1%");
    assert_eq!(report["reference"]["engine"]["binary_key"], A_KEY);
    assert_eq!(report["reference"]["total_elo"], estimate(0.0, 0.0, 0.0));
    let labels: Vec<&str> = report["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        ["0.5%", "2%", "unmeasured"],
        "by the exceeded bound"
    );
    // 2% at +6 is the best, but its interval reaches down to -2, below the runner-up's.
    assert_eq!(
        report["optimal"],
        json!({"label": "2%", "runner_up": "unmeasured", "separated": false})
    );

    // The worst bound is the small danger class's, as `lab calibrate` states each cell.
    let two = &report["points"][1];
    let worst = &two["safety"]["worst_exceeded"];
    assert_eq!(worst["tier"], "lazy");
    assert_eq!(
        (worst["bucket"].as_u64(), worst["class"].as_u64()),
        (Some(3), Some(1))
    );
    let upper = worst["upper"].as_f64().unwrap() * 100.0;
    assert!((upper - worst_pct(150, 60)).abs() < 1e-9, "{upper}");
    let overall = two["safety"]["overall_exceeded"]["value"].as_f64().unwrap();
    assert!(
        (overall - (8.0 + 7.0 + 150.0) / 160_000.0).abs() < 1e-12,
        "{overall}"
    );
    assert_eq!(two["total_elo"], estimate(6.0, -2.0, 14.0));
    assert_eq!(two["speed_ratio"]["value"], 1.06);
    assert_eq!(two["decision"], "undecided");
    assert!(report["points"][2]["safety"].is_null());

    let terminal = run(&args, &[]);
    assert_eq!(terminal.code, 0, "{terminal}");
    let out = &terminal.stdout;
    for row in std::iter::once(&report["reference"]).chain(report["points"].as_array().unwrap()) {
        let label = row["label"].as_str().unwrap();
        let line = common::table_row(out, "lab frontier", label);
        let total = &row["total_elo"];
        let expected_total = format!(
            "{:+.1} [{:+.1}, {:+.1}]",
            total["value"].as_f64().unwrap() + 0.0,
            total["ci_low"].as_f64().unwrap() + 0.0,
            total["ci_high"].as_f64().unwrap() + 0.0
        );
        assert!(line.contains(&expected_total), "{expected_total}: {line}");
        let speed = (row["speed_ratio"]["value"].as_f64().unwrap() - 1.0) * 100.0 + 0.0;
        assert!(line.contains(&format!("{speed:+.2}%")), "{label}: {line}");
        match row["safety"]["worst_exceeded"]["upper"].as_f64() {
            Some(upper) => assert!(
                line.contains(&format!("{:.2}%", upper * 100.0)),
                "{label}: {line}"
            ),
            None => assert!(line.contains('—'), "{label}: {line}"),
        }
    }
    assert!(
        common::table_row(out, "lab frontier", "1%").contains("reference (A)"),
        "{out}"
    );
    assert!(
        out.contains("Elo-optimal: 2%, total Elo +6.0 (95% CI -2.0 to +14.0); its interval overlaps the runner-up unmeasured's +1.0 (95% CI -5.0 to +7.0): the data do not separate them."),
        "{out}"
    );
    let markdown = run(&args, &["--format", "markdown"]);
    assert_eq!(markdown.code, 0, "{markdown}");
    assert!(
        markdown.stdout.contains("the data do not separate them"),
        "{markdown}"
    );
    assert!(markdown.stdout.contains("| 0.5% |"), "{markdown}");
}

#[test]
fn an_optimum_whose_interval_clears_the_runner_up_is_said_separated() {
    let files = Files::new();
    let args = frontier_files(&files, [14.0, 8.0, 20.0]);
    let run = run(&args, &["--format", "json"]);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(
        run.json()["optimal"],
        json!({"label": "2%", "runner_up": "unmeasured", "separated": true})
    );
    let terminal = lab(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(
        terminal
            .stdout
            .contains("its interval wholly above the runner-up unmeasured's"),
        "{terminal}"
    );
}

#[test]
fn verdicts_of_another_a_or_clock_and_files_that_do_not_fit_are_refused_with_exit_2() {
    let files = Files::new();
    let one = files.write(
        "one.json",
        &verdict(A_KEY, "5+0.05", "t1", 1.02, 2.0, [1.0, -3.0, 5.0]),
    );
    let other_a = files.write(
        "other-a.json",
        &verdict(
            "0000000000other",
            "5+0.05",
            "t2",
            1.02,
            2.0,
            [1.0, -3.0, 5.0],
        ),
    );
    let other_tc = files.write(
        "other-tc.json",
        &verdict(A_KEY, "10+0.1", "t3", 1.02, 2.0, [1.0, -3.0, 5.0]),
    );
    let mut at_odds = verdict(A_KEY, "5+0.05", "t4", 1.25, 40.0, [35.0, 15.0, 55.0]);
    at_odds["games_at"] = json!("node-odds");
    at_odds["search_elo"] = Value::Null;
    at_odds["search"] = json!({"nodes_per_move": 400000, "b_nodes_per_move": 500000});
    let node_odds = files.write("node-odds.json", &at_odds);
    let calibration_path = files.write("cal.json", &json!(calibration(20, 5)));
    let no_safety = files.write(
        "no-safety.json",
        &json!(CalibrationFile {
            margin_safety: None,
            ..calibration(20, 5)
        }),
    );
    let huge = files.path("huge.json");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(65 << 20)
        .unwrap();
    let export = files.path("out.json");
    let point = |label: &str, file: &Path| format!("{label}={}", text(file));
    let with_cal =
        |label: &str, file: &Path, cal: &Path| format!("{label}={},{}", text(file), text(cal));
    for (points, expected) in [
        (
            vec![point("a", &one), point("b", &other_a)],
            vec![
                text(&other_a).to_string(),
                "comparison.a.revision.binary_key".to_string(),
                "the same A".to_string(),
            ],
        ),
        (
            vec![point("a", &one), point("b", &other_tc)],
            vec![
                text(&other_tc).to_string(),
                "tc: judged at 10+0.1".to_string(),
            ],
        ),
        (
            vec![point("a", &one), point("b", &node_odds)],
            vec![
                text(&node_odds).to_string(),
                "games_at: the verdict played its games at node odds".to_string(),
            ],
        ),
        (
            vec![point("a", &one), point("a", &one)],
            vec!["--point a: the label is given twice".to_string()],
        ),
        (
            vec![point("a", &calibration_path)],
            vec![
                text(&calibration_path).to_string(),
                "kind \"squall-calibration\", not a `lab verdict` report".to_string(),
            ],
        ),
        (
            vec![point("a", &huge)],
            vec![text(&huge).to_string(), "JSON report".to_string()],
        ),
        (
            vec![with_cal("a", &one, &no_safety)],
            vec![
                text(&no_safety).to_string(),
                "margin_safety: absent".to_string(),
            ],
        ),
        (
            vec![with_cal("a", &one, &one)],
            vec![
                text(&one).to_string(),
                "neither a calibration file".to_string(),
            ],
        ),
    ] {
        let mut args = vec!["frontier".to_string()];
        for p in &points {
            args.push("--point".to_string());
            args.push(p.clone());
        }
        let refused = run(&args, &["--export-json", text(&export)]);
        assert_eq!(refused.code, 2, "{points:?}: {refused}");
        for needle in &expected {
            assert!(
                refused.stderr.contains(needle.as_str()),
                "{needle}: {refused}"
            );
        }
        assert!(refused.stdout.is_empty(), "{refused}");
        assert!(!export.exists(), "nothing is written for a refused run");
    }
    let reference_clash = lab(&[
        "frontier",
        "--point",
        &point("1%", &one),
        "--reference",
        "1%",
    ]);
    assert_eq!(reference_clash.code, 2, "{reference_clash}");
    assert!(
        reference_clash.stderr.contains("it is the reference's"),
        "{reference_clash}"
    );
    let none = lab(&["frontier"]);
    assert_eq!(none.code, 2, "{none}");
    assert!(none.stderr.contains("--point"), "{none}");
}

#[test]
fn the_page_plots_the_frontier_escapes_labels_and_is_what_lab_report_draws() {
    let files = Files::new();
    let one = files.write(
        "one.json",
        &verdict(A_KEY, "5+0.05", "t1", 1.02, 2.0, [1.0, -3.0, 5.0]),
    );
    let calibration = files.write("cal.json", &json!(calibration(20, 5)));
    let (page, exported) = (files.path("page.html"), files.path("frontier.json"));
    let run = lab(&[
        "frontier",
        "--point",
        &format!("<b>={},{}", text(&one), text(&calibration)),
        "--reference",
        &format!("1%={}", text(&calibration)),
        "--export-html",
        text(&page),
        "--export-json",
        text(&exported),
    ]);
    assert_eq!(run.code, 0, "{run}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<svg"), "a plot is drawn");
    assert!(html.contains("The frontier"));
    assert!(html.contains("&lt;b&gt;"), "the label is escaped");
    assert!(!html.contains("<b>"), "no label reaches the page as markup");
    assert!(
        html.contains("Elo-optimal: &lt;b&gt;, total Elo +1.0"),
        "{html}"
    );
    // The table's cells are the terminal's.
    let line = common::table_row(&run.stdout, "lab frontier", "<b>");
    assert!(line.contains("+1.0 [-3.0, +5.0]"), "{line}");
    assert!(html.contains("<td>+1.0 [-3.0, +5.0]</td>"), "{html}");

    let redrawn = files.path("redrawn.html");
    let report = lab(&["report", text(&exported), "--out", text(&redrawn)]);
    assert_eq!(report.code, 0, "{report}");
    assert_eq!(std::fs::read_to_string(&redrawn).unwrap(), html);
}
