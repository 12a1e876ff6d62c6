//! The page of `lab history` end to end on the fake engine: written by every run (to
//! target/lab/history.html) and by `--export-html`, the same bytes `lab report` draws from the
//! history's JSON; the signature change marked at its commit in every plot; a second machine's
//! series in the store drawn as a second NPS line; missing figures said in a sentence.

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use common::browser::{render_headless, screenshot, self_contained_svgs};
use common::{FakeRepo, LabRun};
use squall_lab::history::store::machine_id;
use squall_lab::machine::Machine;

/// The signature markers' colour (report/html/commit_axis.rs).
const MARKER: &str = "stroke=\"#9467BD\"";

fn valgrind_available() -> bool {
    std::process::Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Five commits, the third changing the bench's node count (the signature), the fourth with a
/// long subject; returns their ids.
fn five_commits_with_a_signature_change(repo: &FakeRepo) -> Vec<String> {
    let mut commits = Vec::new();
    for step in 1..=5 {
        if step == 3 {
            repo.set_constant("NODES_PER_POSITION", "1100");
        }
        repo.write("engine/src/revision.txt", &format!("{step}\n"));
        // One long subject: the commit table's layout squeezes the other columns.
        let subject = match step {
            4 => format!("step 4: {}", "a subject that runs on and on ".repeat(12)),
            _ => format!("step {step}"),
        };
        commits.push(repo.commit(subject.trim()).to_string());
    }
    commits
}

fn history(repo: &FakeRepo, range: &str, store: &Path, extra: &[&str]) -> LabRun {
    let mut args = vec![
        "history",
        range,
        "--rounds",
        "2",
        "--store",
        store.to_str().unwrap(),
    ];
    if valgrind_available() {
        args.extend(["--instr-depth", "1"]);
    } else {
        args.push("--no-instructions");
    }
    args.extend(extra);
    repo.lab(&args)
}

/// `lab report JSON --out HTML`.
fn lab_report(repo: &FakeRepo, json: &Path, html: &Path) -> LabRun {
    repo.lab(&[
        "report",
        json.to_str().unwrap(),
        "--out",
        html.to_str().unwrap(),
    ])
}

/// The SVG elements of a page, in order.
fn svgs(page: &str) -> Vec<&str> {
    page.split("<svg")
        .skip(1)
        .map(|svg| svg.split("</svg>").next().unwrap())
        .collect()
}

fn attribute(element: &str, name: &str) -> Option<f64> {
    let start = element.find(&format!(" {name}=\""))? + name.len() + 3;
    let end = start + element[start..].find('"')?;
    element[start..end].parse().ok()
}

/// The x of the tick labelled with `commit`'s short id.
fn tick_x(svg: &str, commit: &str) -> f64 {
    // plotters writes a text element's content on a line of its own.
    let label = format!(">\n{}\n</text>", &commit[..7]);
    let end = svg
        .find(&label)
        .unwrap_or_else(|| panic!("no tick {label}"));
    let start = svg[..end].rfind("<text").unwrap();
    attribute(&svg[start..end], "x").unwrap()
}

/// The x of every signature marker: the vertical lines of the marker colour taller than the
/// legend's sample.
fn marker_xs(svg: &str) -> Vec<f64> {
    svg.split("<polyline")
        .skip(1)
        .filter(|element| element.split("/>").next().unwrap().contains(MARKER))
        .filter_map(|element| {
            let points = element.split("points=\"").nth(1)?.split('"').next()?;
            let xy: Vec<(f64, f64)> = points
                .split_whitespace()
                .filter_map(|p| {
                    let (x, y) = p.split_once(',')?;
                    Some((x.parse().ok()?, y.parse().ok()?))
                })
                .collect();
            let [(x0, y0), (x1, y1)] = xy[..] else {
                return None;
            };
            (x0 == x1 && (y0 - y1).abs() > 20.0).then_some(x0)
        })
        .collect()
}

/// The stored files of the series `name` in `store`, rewritten as `machine`'s: the copy a CI
/// runner would have committed. Its NPS is halved, and `skip` commits are left out.
fn copy_series_as_another_machine(store: &Path, name: &str, skip: &[&str]) -> String {
    let mut machine = Machine::current();
    machine.cpu_model = "CI runner CPU".to_string();
    machine.cores = 64;
    let id = machine_id(&machine);
    let (_, rest) = name.split_once('-').unwrap();
    let other = format!("{id}-{rest}");
    fs::create_dir_all(store.join(&other)).unwrap();
    for entry in fs::read_dir(store.join(name)).unwrap() {
        let path = entry.unwrap().path();
        if skip
            .iter()
            .any(|commit| path.ends_with(format!("{commit}.json")))
        {
            continue;
        }
        let mut stored: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        stored["machine"] = serde_json::to_value(&machine).unwrap();
        stored["machine_id"] = id.clone().into();
        // Per run, per position.
        for run in stored["measurement"]["runs_time_ns"]
            .as_array_mut()
            .unwrap()
        {
            for time in run.as_array_mut().unwrap() {
                *time = (time.as_u64().unwrap() * 2).into();
            }
        }
        fs::write(
            store.join(&other).join(path.file_name().unwrap()),
            stored.to_string(),
        )
        .unwrap();
    }
    other
}

#[test]
fn a_history_page_marks_the_signature_change_and_draws_each_machine() {
    let repo = FakeRepo::new();
    let commits = five_commits_with_a_signature_change(&repo);
    let store = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("history.json");
    let html = out.path().join("history.html");
    let run = history(
        &repo,
        "HEAD~5..HEAD",
        store.path(),
        &[
            "--export-json",
            json.to_str().unwrap(),
            "--export-html",
            html.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code, 0, "{run}");
    let exported = fs::read_to_string(&html).unwrap();
    // Every run writes the page to the cache too, and says where.
    let default_page = repo.cache("history.html");
    assert!(
        run.stderr
            .contains(&format!("history page: {}", default_page.display())),
        "{run}"
    );
    assert_eq!(fs::read_to_string(&default_page).unwrap(), exported);

    let plots = if valgrind_available() { 3 } else { 2 };
    assert_eq!(self_contained_svgs(&exported), plots, "{exported}");
    if plots == 2 {
        assert!(exported.contains("Not measured ("), "{exported}");
    }
    assert!(exported.contains("<title>lab history HEAD~5..HEAD</title>"));
    assert!(
        exported.contains("5 of 5 commits in the range"),
        "{exported}"
    );
    assert!(
        exported.contains("measured 2"),
        "the date comes from the JSON"
    );
    assert!(exported.contains(&format!("{} (commit 3 of 5", &commits[2][..10])));
    // In every plot, one marker, at the tick of the commit whose signature changed.
    for svg in svgs(&exported) {
        let markers = marker_xs(svg);
        assert_eq!(markers.len(), 1, "{svg}");
        assert!(
            (markers[0] - tick_x(svg, &commits[2])).abs() <= 1.0,
            "{svg}"
        );
        assert!((markers[0] - tick_x(svg, &commits[1])).abs() > 10.0);
    }

    let redrawn = out.path().join("redrawn.html");
    let report = lab_report(&repo, &json, &redrawn);
    assert_eq!(report.code, 0, "{report}");
    assert_eq!(
        fs::read(&redrawn).unwrap(),
        exported.as_bytes(),
        "lab report draws the page the history wrote"
    );
    render_headless(&redrawn, plots, 5);
    // Every text at least 12 px at 100% zoom, and no commit's date over two lines.
    if let Some(dates) = common::browser::assert_readable_layout(&redrawn) {
        assert_eq!(dates, 5);
    }

    // A CI runner's series of the same toolchain and settings, lacking commit 4, and one file
    // of it corrupt: a second NPS line over the three commits it holds.
    let series = serde_json::from_str::<serde_json::Value>(&fs::read_to_string(&json).unwrap())
        .unwrap()["series"]
        .as_str()
        .unwrap()
        .to_string();
    let other = copy_series_as_another_machine(store.path(), &series, &[&commits[3]]);
    fs::write(
        store
            .path()
            .join(&other)
            .join(format!("{}.json", commits[0])),
        "{ corrupt",
    )
    .unwrap();
    let again = history(&repo, "HEAD~5..HEAD", store.path(), &["--format", "json"]);
    assert_eq!(again.code, 0, "{again}");
    assert!(again.stderr.contains("is corrupt"), "{again}");
    let report = again.json();
    assert_eq!(report["measured"], 0, "{again}");
    let machines = report["machines"].as_array().unwrap();
    assert_eq!(machines.len(), 2, "{again}");
    assert_eq!(machines[0]["this_machine"], true);
    assert_eq!(machines[0]["points"].as_array().unwrap().len(), 5);
    assert!(machines[1]["label"]
        .as_str()
        .unwrap()
        .starts_with("CI runner CPU (64 cores)"));
    let points: Vec<&str> = machines[1]["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["commit"].as_str().unwrap())
        .collect();
    assert_eq!(points, [&commits[1], &commits[2], &commits[4]]);
    // Its runs took twice as long: half the NPS of this machine's.
    let this_nps = machines[0]["points"][1]["nps"].as_f64().unwrap();
    let other_nps = machines[1]["points"][0]["nps"].as_f64().unwrap();
    assert!((other_nps * 2.0 / this_nps - 1.0).abs() < 1e-6, "{again}");

    let page = fs::read_to_string(repo.cache("history.html")).unwrap();
    let nps = svgs(&page)[0];
    assert!(nps.contains("NPS per commit on 2 machines"), "{nps}");
    // Five points of this machine (blue), three of the runner's (orange).
    assert_eq!(nps.matches("<circle").count(), 5 + 3, "{nps}");
    assert_eq!(nps.matches("fill=\"#FF7F0E\"").count(), 3, "{nps}");
    assert!(nps.contains("CI runner CPU (64 cores)"));
}

#[test]
fn a_history_without_instructions_or_exits_says_so_instead_of_plotting() {
    let repo = FakeRepo::new();
    five_commits_with_a_signature_change(&repo);
    let store = tempfile::tempdir().unwrap();
    let run = history(
        &repo,
        "HEAD~2..HEAD",
        store.path(),
        &["--no-instructions", "--format", "json"],
    );
    assert_eq!(run.code, 0, "{run}");
    // As an openbench engine's history reads, written by a lab before `machine`, `machines`
    // and `measured_unix`.
    let mut stored = run.json();
    for row in stored["rows"].as_array_mut().unwrap() {
        row["eval_rates"] = serde_json::Value::Null;
        row.as_object_mut().unwrap().remove("measured_unix");
    }
    for field in ["machine", "machines"] {
        stored.as_object_mut().unwrap().remove(field);
    }
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("old.json");
    fs::write(&json, stored.to_string()).unwrap();
    let html = out.path().join("old.html");
    let report = lab_report(&repo, &json, &html);
    assert_eq!(report.code, 0, "{report}");
    let page = fs::read_to_string(&html).unwrap();
    assert_eq!(self_contained_svgs(&page), 1, "only NPS: {page}");
    assert!(
        page.contains("Not measured (disabled by --no-instructions)"),
        "{page}"
    );
    assert!(page.contains("Eval exits: not reported"), "{page}");
    assert!(page.contains("measurement dates not recorded"), "{page}");
    assert!(page.contains("records no description of it"), "{page}");
    // The NPS line comes from the rows: a point per commit.
    assert_eq!(svgs(&page)[0].matches("<circle").count(), 2, "{page}");

    // A history without rows, or with a row lacking its NPS, is one error line.
    for broken in [
        {
            let mut doc = stored.clone();
            doc["rows"] = serde_json::json!([]);
            (doc, "has no rows")
        },
        {
            let mut doc = stored.clone();
            doc["rows"][0].as_object_mut().unwrap().remove("nps");
            (doc, "lacks a field")
        },
    ] {
        let (doc, says) = broken;
        fs::write(&json, doc.to_string()).unwrap();
        let run = lab_report(&repo, &json, &html);
        assert_eq!(run.code, 2, "{run}");
        assert_eq!(run.stderr.lines().count(), 1, "{run}");
        assert!(run.stderr.contains(says), "{run}");
    }
}

/// Writes docs/img/html-history-*.png from a history of the fake engine: speed, instruction
/// and exit changes, one signature change, and a second machine. Run by hand:
/// `cargo test -p squall-lab --test html_history -- --ignored screenshots`.
#[test]
#[ignore]
fn screenshots() {
    let repo = FakeRepo::new();
    for (step, change) in [
        (1, None),
        (2, Some(("WORK_PER_NODE", "215"))),
        (3, None),
        (4, Some(("NODES_PER_POSITION", "1100"))),
        (5, Some(("WORK_PER_NODE", "190"))),
        (6, None),
        (7, Some(("WORK_PER_NODE", "200"))),
        (8, None),
    ] {
        if let Some((name, value)) = change {
            repo.set_constant(name, value);
        }
        if step == 4 {
            // New margins: another search, and more exits in the super-lazy tier.
            repo.set_constant("SUPER_LAZY_PERCENT", "52");
        }
        repo.write("engine/src/revision.txt", &format!("{step}\n"));
        repo.commit(&format!("step {step}"));
    }
    let store = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("history.json");
    // The runner's series holds the newest five commits, this machine's (after the second run)
    // all eight.
    let first = history(
        &repo,
        "HEAD~5..HEAD",
        store.path(),
        &["--export-json", json.to_str().unwrap()],
    );
    assert_eq!(first.code, 0, "{first}");
    let series = serde_json::from_str::<serde_json::Value>(&fs::read_to_string(&json).unwrap())
        .unwrap()["series"]
        .as_str()
        .unwrap()
        .to_string();
    copy_series_as_another_machine(store.path(), &series, &[]);
    let run = history(&repo, "HEAD~8..HEAD", store.path(), &[]);
    assert_eq!(run.code, 0, "{run}");
    let page = fs::read_to_string(repo.cache("history.html")).unwrap();
    let docs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/img");
    for (svg, name, height) in svgs(&page)
        .into_iter()
        .zip(["nps", "instructions", "exits"])
        .zip([440, 400, 420])
        .map(|((svg, name), height)| (svg, name, height))
    {
        let alone = out.path().join(format!("{name}.html"));
        fs::write(
            &alone,
            format!("<!DOCTYPE html><html><body style=\"margin:0\"><svg{svg}</svg></body></html>"),
        )
        .unwrap();
        let png = docs.join(format!("html-history-{name}.png"));
        assert!(screenshot(&alone, &png, 1000, height), "{}", png.display());
    }
}
