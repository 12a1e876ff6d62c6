//! Text from outside the lab, end to end: an engine's `id name` and a commit subject full of
//! terminal escapes, HTML and pipes are shown literally in the terminal, markdown and HTML
//! reports and in the progress lines; an engine's over-long line is a garbage fault that costs
//! the lab at most the line limit; option names and values are checked against the engine's
//! declarations; one pair reports its Elo as undefined.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use common::{FakeRepo, LabRun};

/// An engine name that a terminal would act on, and that markdown would take as HTML and a
/// table's column break.
const EVIL_NAME: &str = "evil\x1b]0;owned\x07\x1b[31m <img src=x onerror=alert(1)> | pipe";
/// How the reports show it.
const SHOWN_NAME: &str = "evil\\x1b]0;owned\\x07\\x1b[31m <img src=x onerror=alert(1)> | pipe";

fn fake_uci() -> String {
    format!("exe:{}", common::fake_uci_path().display())
}

/// Writes an executable shell script into the repository's directory.
fn script(repo: &FakeRepo, name: &str, body: &str) -> PathBuf {
    let path = repo.path().join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// The fake engine behind a filter that rewrites its `uci` reply: its `id name` becomes
/// `name`, and `extra` lines come before `uciok`.
fn wrapped_fake(repo: &FakeRepo, file: &str, name: &str, extra: &str) -> String {
    let body = format!(
        "NAME=$(printf '{}')\nEXTRA=$(printf '{}')\n\"{}\" | while IFS= read -r line; do\n  \
         case \"$line\" in\n    \"id name \"*) printf 'id name %s\\n' \"$NAME\" ;;\n    \
         uciok) [ -n \"$EXTRA\" ] && printf '%s\\n' \"$EXTRA\"; echo uciok ;;\n    \
         *) printf '%s\\n' \"$line\" ;;\n  esac\ndone\n",
        printf_escaped(name),
        printf_escaped(extra),
        common::fake_uci_path().display()
    );
    format!("exe:{}", script(repo, file, &body).display())
}

/// `text` as a printf format that prints it: control bytes as octal escapes, `%` doubled, `'`
/// closed and reopened.
fn printf_escaped(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        match c {
            '%' => out.push_str("%%"),
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("'\\''"),
            '\n' => out.push_str("\\n"),
            c if c.is_ascii_control() => out.push_str(&format!("\\{:03o}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

fn assert_no_raw_controls(what: &str, text: &str) {
    let raw: Vec<char> = text
        .chars()
        .filter(|&c| c.is_control() && c != '\n')
        .collect();
    assert!(raw.is_empty(), "{what} holds raw {raw:?}:\n{text}");
}

fn play(repo: &FakeRepo, a: &str, b: &str, extra: &[&str]) -> LabRun {
    let mut args = vec!["match", a, b, "--nodes", "1", "--concurrency", "1"];
    args.extend_from_slice(extra);
    repo.lab(&args)
}

#[test]
fn an_engine_name_with_escapes_is_shown_literally_in_every_report() {
    let repo = FakeRepo::new();
    let evil = wrapped_fake(&repo, "evil.sh", EVIL_NAME, "");
    let markdown = repo.path().join("match.md");
    let html = repo.path().join("match.html");
    let run = play(
        &repo,
        &fake_uci(),
        &evil,
        &[
            "--games",
            "2",
            "--export-markdown",
            markdown.to_str().unwrap(),
            "--export-html",
            html.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code, 0, "{run}");
    assert_no_raw_controls("the terminal report", &run.stdout);
    assert_no_raw_controls("the progress lines", &run.stderr);
    assert!(run.stdout.contains(SHOWN_NAME), "{run}");

    let markdown = std::fs::read_to_string(markdown).unwrap();
    assert_no_raw_controls("the markdown", &markdown);
    assert!(
        markdown.contains(&format!("B = `{SHOWN_NAME}`")),
        "the name is a code span:\n{markdown}"
    );
    assert!(!markdown.contains("\n<img"), "{markdown}");

    let html = std::fs::read_to_string(html).unwrap();
    assert_no_raw_controls("the HTML page", &html);
    assert!(!html.contains("<img"), "raw HTML reached the page");
    assert!(html.contains("evil\\x1b]0;owned\\x07"), "shown visibly");

    // One pair has no variance yet: no "+0.0 ± 0.0".
    let elo = run
        .stdout
        .lines()
        .find(|line| line.contains("Elo (logistic)"))
        .unwrap_or_else(|| panic!("no Elo row:\n{run}"));
    assert!(elo.contains("too few pairs (1)"), "{elo}");
    assert!(!run.stdout.contains("± 0.0"), "{run}");
    assert!(!run.stderr.contains("-0.0"), "{run}");

    // fastchess's block names the engine on its `Results of` line, visibly too.
    let fastchess = play(
        &repo,
        &fake_uci(),
        &evil,
        &["--games", "2", "--format", "fastchess"],
    );
    assert_eq!(fastchess.code, 0, "{fastchess}");
    assert_no_raw_controls("the fastchess block", &fastchess.stdout);
    assert!(
        fastchess
            .stdout
            .contains(&format!("Results of {SHOWN_NAME}")),
        "{fastchess}"
    );
}

#[test]
fn markdown_tables_keep_outside_text_in_its_cell() {
    let repo = FakeRepo::new();
    repo.write("engine/src/revision.txt", "1\n");
    repo.commit("add <script>alert(1)</script> | a pipe \x1b[2J and `ticks`");
    let run = repo.lab(&[
        "history",
        "HEAD~1..HEAD",
        "--rounds",
        "2",
        "--no-instructions",
        "--quiet",
        "--format",
        "markdown",
    ]);
    assert_eq!(run.code, 0, "{run}");
    assert_no_raw_controls("the history markdown", &run.stdout);
    assert!(!run.stdout.contains("<script>"), "{run}");
    let row = run
        .stdout
        .lines()
        .find(|line| line.contains("alert(1)"))
        .unwrap_or_else(|| panic!("no row with the subject:\n{run}"));
    assert!(
        row.contains("add &lt;script&gt;alert(1)&lt;/script&gt; \\| a pipe \\x1b[2J"),
        "{row}"
    );
    // Eight columns: the escaped pipe does not open a ninth.
    let unescaped_pipes = row.matches('|').count() - row.matches("\\|").count();
    assert_eq!(unescaped_pipes, 9, "{row}");

    let terminal = repo.lab(&[
        "history",
        "HEAD~1..HEAD",
        "--rounds",
        "2",
        "--no-instructions",
        "--quiet",
    ]);
    assert_eq!(terminal.code, 0, "{terminal}");
    assert_no_raw_controls("the history table", &terminal.stdout);
    assert!(terminal.stdout.contains("a pipe \\x1b[2J"), "{terminal}");
}

/// A UCI engine in shell that answers `go` with one line of `bytes` bytes and nothing else.
fn long_liner(repo: &FakeRepo, bytes: u64) -> String {
    let body = format!(
        "while IFS= read -r line; do\n  case \"$line\" in\n    \
         uci) echo 'id name long-liner'; echo uciok ;;\n    \
         isready) echo readyok ;;\n    \
         go*) head -c {bytes} /dev/zero | tr '\\0' a; echo ;;\n    \
         quit) exit 0 ;;\n  esac\ndone\n"
    );
    format!("exe:{}", script(repo, "long.sh", &body).display())
}

fn results(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn a_line_over_the_limit_is_a_garbage_fault() {
    let repo = FakeRepo::new();
    let out = repo.path().join("long.jsonl");
    // 8 MiB on one line: a fault as soon as the limit is passed, long before the move time.
    let run = repo.lab(&[
        "match",
        &fake_uci(),
        &long_liner(&repo, 8 << 20),
        "--movetime",
        "30000",
        "--games",
        "2",
        "--concurrency",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{run}");
    let games: Vec<_> = results(&out)
        .into_iter()
        .filter(|line| !line["fault"].is_null())
        .collect();
    assert_eq!(games.len(), 2, "{run}");
    for game in games {
        let fault = &game["fault"];
        assert_eq!(fault["side"], "B", "{game}");
        let text = fault.to_string();
        assert!(text.contains("\"kind\":\"garbage\""), "{text:.500}");
        assert!(
            text.contains("(a line over the limit of 1048576 bytes)"),
            "{text:.500}"
        );
        assert!(text.len() < 4000, "a fault of {} bytes", text.len());
    }
}

#[test]
fn options_are_checked_against_what_the_engine_declared() {
    let repo = FakeRepo::new();
    let fake = fake_uci();
    let value = play(&repo, &fake, &fake, &["--option-b", "Hash=16 value 99"]);
    assert_eq!(value.code, 2, "{value}");
    assert!(
        value.stderr.contains(
            "option `Hash` is a spin (an integer from 1 to 1024), so `16 value 99` is not a value of it"
        ),
        "{value}"
    );
    let unknown = play(&repo, &fake, &fake, &["--option-a", "Contempt=5"]);
    assert_eq!(unknown.code, 2, "{unknown}");
    assert!(
        unknown.stderr.contains(
            "has no UCI option `Contempt` (it declares: Behaviour, FaultAfter, Seed, Gate, Info, Hash, Threads)"
        ),
        "{unknown}"
    );
    let combo = play(&repo, &fake, &fake, &["--option-a", "Behaviour=sideways"]);
    assert_eq!(combo.code, 2, "{combo}");
    assert!(
        combo.stderr.contains("is a combo of first-legal"),
        "{combo}"
    );

    // `option name type type string` declares an option named `type`; a declaration whose
    // name is empty declares nothing.
    let odd = wrapped_fake(
        &repo,
        "odd.sh",
        "odd",
        "option name type type string default x\noption name type string",
    );
    let named_type = play(
        &repo,
        &fake,
        &odd,
        &["--games", "2", "--option-b", "type=y", "--format", "json"],
    );
    assert_eq!(named_type.code, 0, "{named_type}");
    let empty = play(&repo, &fake, &odd, &["--games", "2", "--option-b", "=y"]);
    assert_eq!(empty.code, 2, "{empty}");
    assert!(empty.stderr.contains("expected NAME=VALUE"), "{empty}");
    let listed = play(&repo, &fake, &odd, &["--option-b", "string=y"]);
    assert_eq!(listed.code, 2, "{listed}");
    assert!(
        listed.stderr.contains(
            "(it declares: Behaviour, FaultAfter, Seed, Gate, Info, Hash, Threads, type)"
        ),
        "{listed}"
    );
}
