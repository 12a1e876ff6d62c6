//! `lab profile` on the real engine: the flamegraph names each eval tier as its own frame; and on
//! a fake `squall profile` (built like the real one, with `--features profile`), what the lab
//! does with an engine's output files that it cannot trust.
//!
//! The real-engine tests build this workspace's engine (the uncommitted WORKTREE) with `--features profile` in
//! release mode, which takes a few minutes cold; the binary is cached under target/lab/ after.
//! Sampling is statistical and the kernel's timer tick caps the rate (often 250 Hz): the lazy
//! tier holds well under 1% of samples, so the run is long enough for a few of them (depth 11,
//! about 1000 samples) and the test retries deeper when a tier is still missing.

mod common;

use std::path::Path;
use std::process::Command;

use common::svg::svg_titles;
use common::FakeRepo;

const TIERS: [&str; 3] = ["super_lazy_score", "lazy_terms", "full_tier"];

/// `lab profile ARGS... --out SVG` on this workspace; its stdout, once it exited 0.
fn lab_profile(args: &[&str], svg: &Path) -> String {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_lab"))
        .arg("--repo")
        .arg(workspace)
        .arg("profile")
        .args(args)
        .arg("--out")
        .arg(svg)
        .output()
        .expect("running lab");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert_eq!(
        output.status.code(),
        Some(0),
        "stdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

#[test]
fn the_flamegraph_holds_a_frame_for_each_eval_tier() {
    let out = tempfile::tempdir().unwrap();
    let svg = out.path().join("profile.svg");
    let mut missing = Vec::new();
    for depth in ["11", "12", "12"] {
        let stdout = lab_profile(&["WORKTREE", "--depth", depth], &svg);
        assert!(stdout.contains("profile run time"), "{stdout}");
        assert!(stdout.contains("full_tier"), "{stdout}");
        let contents = std::fs::read_to_string(&svg).expect("the SVG was written");
        assert!(contents.starts_with("<?xml"), "not an SVG");
        assert!(svg.with_extension("folded").is_file());
        missing = TIERS
            .iter()
            .filter(|tier| !contents.contains(*tier))
            .collect();
        if missing.is_empty() {
            return;
        }
        eprintln!("depth {depth}: no samples yet in {missing:?}; retrying deeper");
    }
    panic!("the flamegraph has no frame for {missing:?}");
}

/// `--vs`: A's and B's flamegraphs and the differential one, whose frame widths are B's samples
/// and whose tooltips carry the change from A. Both sides are WORKTREE here (one cached build):
/// the sampling noise still gives frames that moved.
#[test]
fn vs_writes_a_differential_flamegraph() {
    let out = tempfile::tempdir().unwrap();
    let svg = out.path().join("a.svg");
    let stdout = lab_profile(
        &[
            "WORKTREE", "--vs", "WORKTREE", "--depth", "10", "--format", "json",
        ],
        &svg,
    );
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("JSON on stdout");
    let diff = out.path().join("a-vs-WORKTREE-vs.diff.svg");
    assert_eq!(json["diff_svg"], diff.to_str().unwrap(), "{json:#}");
    for side in ["a", "b"] {
        assert_eq!(json[side]["sampler"], "pprof");
        let hz = json[side]["effective_hz"]
            .as_f64()
            .expect("an effective rate");
        // The kernel tick caps pprof's timer (often 250 Hz); never above the requested 997.
        assert!(hz > 10.0 && hz <= 997.0 * 1.1, "{side}: {hz} Hz");
    }
    let titles = svg_titles(&std::fs::read_to_string(&diff).expect("the differential SVG"));
    let b_samples = json["b"]["samples"].as_u64().unwrap();
    assert!(
        titles.contains(&format!("all ({b_samples} samples, 100%)")),
        "widths are B's samples: {:?}",
        &titles[..titles.len().min(5)]
    );
    let frame = |name: &str| {
        titles
            .iter()
            .find(|t| t.starts_with(&format!("{name} (")))
            .unwrap_or_else(|| panic!("no {name} frame in {titles:?}"))
    };
    // Every frame's tooltip ends with its change: `; +0.43%)`, `; -1.07%)` or `; 0.00%)`.
    for name in ["negamax", "evaluate", "full_tier"] {
        let title = frame(name);
        assert!(title.ends_with("%)") && title.contains("%; "), "{title}");
    }
    assert!(
        titles
            .iter()
            .any(|t| t.contains("%; +") || t.contains("%; -")),
        "some frame moved between the runs"
    );
    let leftovers: Vec<_> = std::fs::read_dir(out.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

/// A stand-in for `squall profile`: like it, it creates (truncates) its `--out` and `--folded`
/// files before the bench, then does what `FAKE_PROFILE` says. Its SVG names its process id, so
/// two runs' files differ.
const FAKE_PROFILER: &str = r#"
use std::io::Write;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) != Some("profile") {
        eprintln!("usage: squall profile --out SVG --folded FILE");
        std::process::exit(2);
    }
    let value = |name: &str| {
        let at = args.iter().position(|a| a == name).expect(name);
        args[at + 1].clone()
    };
    let (svg, folded) = (value("--out"), value("--folded"));
    let mut svg_file = std::fs::File::create(&svg).unwrap();
    let mut folded_file = std::fs::File::create(&folded).unwrap();
    match std::env::var("FAKE_PROFILE").unwrap_or_default().as_str() {
        "crash" => {
            eprintln!("fake profiler: simulated crash");
            std::process::exit(101);
        }
        "hang" => loop {
            std::thread::sleep(std::time::Duration::from_secs(1));
        },
        "device" => {
            drop(folded_file);
            std::fs::remove_file(&folded).unwrap();
            std::os::unix::fs::symlink("/dev/zero", &folded).unwrap();
        }
        "huge" => folded_file.set_len(65 << 20).unwrap(),
        "overflow" => {
            writeln!(folded_file, "main;negamax {}\nmain;negamax;evaluate 2", u64::MAX - 1).unwrap()
        }
        _ => writeln!(folded_file, "main;negamax;evaluate;full_tier 3\nmain;negamax 1").unwrap(),
    }
    if std::env::var("FAKE_PROFILE").as_deref() != Ok("empty-svg") {
        write!(svg_file, "<?xml version=\"1.0\"?><svg>pid {}</svg>", std::process::id()).unwrap();
    }
    println!("Nodes searched: 1000\nSearch time: 10 ms\nProfile time: 12 ms");
}
"#;

/// A repository whose engine is [`FAKE_PROFILER`] with a `profile` feature, in two commits.
fn fake_profiler_repo() -> FakeRepo {
    let repo = FakeRepo::new();
    repo.write(
        "engine/Cargo.toml",
        "[package]\nname = \"squall\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
         [features]\nprofile = []\n\n[[bin]]\nname = \"squall\"\npath = \"src/main.rs\"\n",
    );
    repo.write("engine/src/main.rs", FAKE_PROFILER);
    repo.commit("a fake squall profile");
    repo.write("lab/README.md", "a second commit\n");
    repo.commit("a second commit");
    repo
}

#[test]
fn a_failed_or_refused_profile_leaves_the_last_good_files() {
    let repo = fake_profiler_repo();
    let out = tempfile::tempdir().unwrap();
    let svg = out.path().join("flame.svg");
    let folded = out.path().join("flame.folded");
    let svg_arg = svg.to_str().unwrap();
    let good = repo.lab(&["profile", "HEAD", "--out", svg_arg]);
    assert_eq!(good.code, 0, "{good}");
    let (good_svg, good_folded) = (
        std::fs::read_to_string(&svg).unwrap(),
        std::fs::read_to_string(&folded).unwrap(),
    );
    assert!(good_svg.contains("<svg>pid "), "{good_svg}");
    assert_eq!(
        good_folded,
        "main;negamax;evaluate;full_tier 3\nmain;negamax 1\n"
    );
    for (mode, expected) in [
        ("crash", "exit code 101"),
        ("hang", "did not finish within 2 s"),
        (
            "device",
            "it is a character device, and only regular files are read",
        ),
        ("huge", "larger than the 64 MiB cap"),
        ("overflow", "add up to more than 18446744073709551615"),
        ("empty-svg", "that is not an SVG"),
    ] {
        let run = repo.lab_with_env(
            &["profile", "HEAD", "--out", svg_arg, "--timeout", "2"],
            &[("FAKE_PROFILE", mode)],
        );
        assert_eq!(run.code, 2, "{mode}: {run}");
        assert!(run.stderr.contains(expected), "{mode}: {run}");
        assert!(
            run.stderr
                .lines()
                .filter(|l| l.starts_with("error:"))
                .count()
                == 1,
            "{mode}: one error\n{run}"
        );
        assert_eq!(std::fs::read_to_string(&svg).unwrap(), good_svg, "{mode}");
        assert_eq!(
            std::fs::read_to_string(&folded).unwrap(),
            good_folded,
            "{mode}"
        );
    }
    let mut left: Vec<String> = std::fs::read_dir(out.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        ["flame.folded", "flame.svg"],
        "no temporaries beside the outputs"
    );
    let scratch = repo.cache_entries("tmp");
    assert!(
        scratch.iter().all(|name| !name.starts_with("profile-")),
        "the engine's directories are removed: {scratch:?}"
    );
}

/// `HEAD~1` and `HEAD^1` are one file name (`HEAD_1`): B's files get `-vs` instead of
/// replacing A's, and the differential compares the two runs.
#[test]
fn specs_with_one_file_name_keep_both_profiles() {
    let repo = fake_profiler_repo();
    let run = repo.lab(&["profile", "HEAD~1", "--vs", "HEAD^1", "--format", "json"]);
    assert_eq!(run.code, 0, "{run}");
    let json = run.json();
    let dir = repo.cache("profile");
    assert_eq!(json["a"]["svg"], dir.join("HEAD_1.svg").to_str().unwrap());
    assert_eq!(
        json["b"]["svg"],
        dir.join("HEAD_1-vs.svg").to_str().unwrap()
    );
    assert_eq!(
        json["b"]["folded"],
        dir.join("HEAD_1-vs.folded").to_str().unwrap()
    );
    assert_eq!(
        json["diff_svg"],
        dir.join("HEAD_1-vs-HEAD_1-vs.diff.svg").to_str().unwrap()
    );
    let a_svg = std::fs::read_to_string(dir.join("HEAD_1.svg")).unwrap();
    let b_svg = std::fs::read_to_string(dir.join("HEAD_1-vs.svg")).unwrap();
    assert_ne!(a_svg, b_svg, "two runs, two flamegraphs");
    assert!(
        dir.join("HEAD_1.folded").is_file() && dir.join("HEAD_1-vs-HEAD_1-vs.diff.svg").is_file()
    );

    // `--out x.folded` would write the flamegraph and its stacks to one file: refused first.
    let out = tempfile::tempdir().unwrap();
    let clash = out.path().join("x.folded");
    let refused = repo.lab(&["profile", "HEAD", "--out", clash.to_str().unwrap()]);
    assert_eq!(refused.code, 2, "{refused}");
    assert!(refused.stderr.contains("is the same file as"), "{refused}");
    assert!(
        !refused.stderr.contains("engine of"),
        "refused before the build\n{refused}"
    );
    assert!(!clash.exists());
}
