//! End to end on the real engine: a commit that adds redundant work to a hot function, without
//! changing the search, must be flagged as a regression with an unchanged signature; the same
//! engine built by its Makefile and read in the openbench format must show the same signature;
//! `lab verdict` judges it by its speed alone and draws its page; `lab tiers` on the unpatched
//! engine must show its cheap tiers saving instructions per node; and `lab match` plays the
//! real engine's UCI loop without a fault.
//!
//! It clones the committed state of this workspace, so it needs the engine committed, and it
//! builds the engine twice in release mode: minutes, hence `#[ignore]`. Run it with
//!
//! ```text
//! cargo test --release -p squall-lab --test real_engine -- --ignored --nocapture
//! ```
//!
//! Knobs (environment):
//! - `LAB_E2E_FILE` (default `engine/src/eval/mod.rs`) and `LAB_E2E_FUNCTION` (default
//!   `pub fn evaluate(`): where the busy loop goes, at the start of that function's body;
//! - `LAB_E2E_WORK` (default 40: about 2.5% slower and +1.2% instructions per node on the
//!   first engine): iterations of the busy loop per call;
//! - `LAB_E2E_PATCH`: a unified diff to apply instead of the busy loop;
//! - `LAB_E2E_DEPTH` (default 6) and `LAB_E2E_INSTR_DEPTH` (default 4): bench depths;
//! - `LAB_E2E_SOURCE`: the repository to clone (default: this workspace).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use git2::{ApplyLocation, Diff, IndexAddOption, Repository, Signature};

#[path = "common/speed_elo.rs"]
mod speed_elo;
use speed_elo::store_stand_in_model;

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_string())
}

fn insert_busy_loop(clone: &Path) {
    let file = env_or("LAB_E2E_FILE", "engine/src/eval/mod.rs");
    let function = env_or("LAB_E2E_FUNCTION", "pub fn evaluate(");
    let work = env_or("LAB_E2E_WORK", "40");
    let path = clone.join(&file);
    let source = fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {file}: {e}"));
    let start = source
        .find(&function)
        .unwrap_or_else(|| panic!("no `{function}` in {file}"));
    let body = start + source[start..].find('{').expect("function body") + 1;
    let busy_loop = format!(
        "\n    {{\n        let mut lab_e2e_busy = 0u64;\n        for lab_e2e_i in 0..{work}u64 {{\n            \
         lab_e2e_busy = std::hint::black_box(lab_e2e_busy.wrapping_add(lab_e2e_i));\n        }}\n        \
         std::hint::black_box(lab_e2e_busy);\n    }}\n"
    );
    fs::write(
        &path,
        format!("{}{busy_loop}{}", &source[..body], &source[body..]),
    )
    .unwrap();
}

fn apply_patch(repo: &Repository, patch: &Path) {
    let text = fs::read(patch).unwrap_or_else(|e| panic!("reading {}: {e}", patch.display()));
    let diff = Diff::from_buffer(&text).expect("a unified diff");
    repo.apply(&diff, ApplyLocation::WorkDir, None)
        .expect("patch applies");
}

fn commit_all(repo: &Repository, message: &str) {
    let mut index = repo.index().unwrap();
    index.add_all(["*"], IndexAddOption::DEFAULT, None).unwrap();
    index.update_all(["*"], None).unwrap();
    index.write().unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let signature = Signature::now("Lab E2E", "lab@example.com").unwrap();
    let parent = repo.head().unwrap().peel_to_commit().unwrap();
    repo.commit(
        Some("HEAD"),
        &signature,
        &signature,
        message,
        &tree,
        &[&parent],
    )
    .unwrap();
}

#[test]
#[ignore = "builds the real engine twice in release mode (minutes)"]
fn redundant_work_in_a_hot_function_is_a_regression_with_an_unchanged_signature() {
    let workspace = match std::env::var_os("LAB_E2E_SOURCE") {
        Some(source) => PathBuf::from(source),
        None => Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("lab/ has a parent")
            .to_path_buf(),
    };
    let dir = tempfile::tempdir().unwrap();
    let repo = Repository::clone(&workspace.to_string_lossy(), dir.path()).unwrap_or_else(|e| {
        panic!(
            "cloning {} (is the engine committed?): {e}",
            workspace.display()
        )
    });

    match std::env::var_os("LAB_E2E_PATCH") {
        Some(patch) => apply_patch(&repo, Path::new(&patch)),
        None => insert_busy_loop(dir.path()),
    }
    commit_all(&repo, "redundant work in a hot function");

    let depth = env_or("LAB_E2E_DEPTH", "6");
    let instr_depth = env_or("LAB_E2E_INSTR_DEPTH", "4");
    let measure = ["--depth", &depth, "--instr-depth", &instr_depth];
    let (code, report, context) = lab_json(dir.path(), &["compare", "HEAD~1", "HEAD"], &measure);
    assert_eq!(code, Some(1), "expected a regression (exit 1)\n{context}");
    assert_eq!(report["signature"]["changed"], false, "{context}");
    assert_eq!(report["verdict"], "regression", "{context}");
    let squall_json_signature = report["a"]["signature"].clone();

    // The verdict of the same pair, with a stand-in speed-Elo model stored for this machine
    // (a real fit takes hundreds of games): same signature, so no games, and its HTML page.
    store_stand_in_model(dir.path());
    let page = dir.path().join("target").join("verdict.html");
    let page_arg = page.to_string_lossy().into_owned();
    let (code, report, context) = lab_json(
        dir.path(),
        &[
            "verdict",
            "HEAD~1",
            "HEAD",
            "--tc",
            "2+0.02",
            "--max-rounds",
            "6",
            "--no-instructions",
            "--export-html",
            &page_arg,
        ],
        &measure,
    );
    assert!(matches!(code, Some(0 | 1 | 3)), "{context}");
    assert_eq!(report["kind"], "verdict", "{context}");
    assert_eq!(report["games"], 0, "{context}");
    assert!(report["search"].is_null(), "{context}");
    // A second measurement of a 2.5% slowdown: its sign is the machine's to give, its shape
    // is the lab's.
    assert!(report["speed_elo"]["value"].as_f64().is_some(), "{context}");
    assert_eq!(report["search_elo"]["value"], 0.0, "{context}");
    let html = fs::read_to_string(&page).expect("the verdict's page");
    assert!(
        html.contains("The Elo split") && html.contains("no game played"),
        "{html}"
    );

    // The same engine through OpenBench's convention (the root Makefile, `squall bench` read as
    // text): both adapters must see the same search.
    let config = dir.path().join("target").join("openbench.toml");
    fs::create_dir_all(config.parent().unwrap()).unwrap();
    fs::write(
        &config,
        "[engine]\nname = \"squall\"\nformat = \"openbench\"\n\
         bench = \"{exe} bench --depth {depth}\"\n",
    )
    .unwrap();
    let config = config.to_string_lossy().into_owned();
    let (code, report, context) = lab_json(
        dir.path(),
        &["--config", &config, "bench", "HEAD~1"],
        &measure,
    );
    assert_eq!(code, Some(0), "{context}");
    assert_eq!(
        report["revision"]["signature"], squall_json_signature,
        "the openbench format reads the node count squall's JSON reports\n{context}"
    );
    assert!(report["revision"]["eval"].is_null(), "{context}");

    // The same binary (cached now) with its tiers on against --full-eval: the cheap tiers
    // must pay for themselves in instructions per node, which no machine noise can fake.
    let (code, report, context) = lab_json(dir.path(), &["tiers", "HEAD~1"], &measure);
    assert_eq!(code, Some(0), "{context}");
    assert_eq!(report["a"]["eval"]["exits"]["super_lazy"], 0, "{context}");
    assert_eq!(report["a"]["eval"]["exits"]["lazy"], 0, "{context}");
    let ratio = report["instructions"]["per_node_ratio"].as_f64();
    assert!(
        ratio.is_some_and(|r| r < 0.95),
        "tiers on should cost at least 5% fewer instructions per node than --full-eval\n{context}"
    );

    // Games on the real engine (cached binary): its UCI loop, the referee and the PGN.
    let output = Command::new(env!("CARGO_BIN_EXE_lab"))
        .arg("--repo")
        .arg(dir.path())
        .args(["match", "HEAD~1", "HEAD~1", "--depth", "3", "--games", "4"])
        .args(["--option-a", "FullEval=true", "--format", "json"])
        .output()
        .expect("running lab match");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let context = format!(
        "stdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    eprintln!("{stdout}");
    assert_eq!(output.status.code(), Some(0), "{context}");
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("a JSON match report");
    assert_eq!(report["games"], 4, "{context}");
    assert_eq!(report["pairs"], 2, "{context}");
    assert_eq!(report["faults"], serde_json::json!([0, 0]), "{context}");
    // Under a depth limit the lab asks for one thread, so the games replay.
    assert_eq!(
        report["engines"][0]["options"],
        serde_json::json!([["Threads", "1"], ["FullEval", "true"]]),
        "{context}"
    );
}

/// Runs `lab --repo REPO COMMAND... --format json --rounds 6 MEASURE...`: its exit code, its JSON
/// report, and both output streams for assertion messages (also printed: `--nocapture` shows
/// the reports).
fn lab_json(
    repo: &Path,
    command: &[&str],
    measure: &[&str],
) -> (Option<i32>, serde_json::Value, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_lab"))
        .arg("--repo")
        .arg(repo)
        .args(command)
        .args(["--format", "json", "--rounds", "6"])
        .args(measure)
        .output()
        .expect("running lab");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let context = format!("stdout:\n{stdout}\nstderr:\n{stderr}");
    eprintln!("{stdout}");
    let report =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("no JSON report ({e})\n{context}"));
    (output.status.code(), report, context)
}
