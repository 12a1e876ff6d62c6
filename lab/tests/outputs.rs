//! Where the lab's output goes: a file named through a symbolic link is written where the link
//! points, a FIFO is written in place (never replaced by a file), and standard output that
//! fails (a full disk, a reader that has gone) ends the run with a documented code, not a
//! panic.

mod common;

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn golden_report() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/compare_local.json")
}

fn report_to(out: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_lab"));
    command
        .args(["report"])
        .arg(golden_report())
        .arg("--out")
        .arg(out);
    command
}

#[test]
fn a_page_named_through_a_link_replaces_the_linked_file_and_keeps_the_link() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("pages")).unwrap();
    let page = dir.path().join("pages/compare.html");
    fs::write(&page, "old").unwrap();
    let link = dir.path().join("latest.html");
    std::os::unix::fs::symlink("pages/compare.html", &link).unwrap();
    let run = common::LabRun::from(report_to(&link).output().unwrap());
    assert_eq!(run.code, 0, "{run}");
    assert!(fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(fs::read_to_string(&page)
        .unwrap()
        .starts_with("<!DOCTYPE html>"));
}

#[test]
fn a_page_written_into_a_fifo_goes_through_it() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("page.fifo");
    common::mkfifo(&fifo);
    let (sender, received) = std::sync::mpsc::channel();
    {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut page = String::new();
            fs::File::open(&fifo)
                .unwrap()
                .read_to_string(&mut page)
                .unwrap();
            let _ = sender.send(page);
        });
    }
    let run = common::LabRun::from(report_to(&fifo).output().unwrap());
    assert_eq!(run.code, 0, "{run}");
    assert!(
        !fs::metadata(&fifo).unwrap().is_file(),
        "the FIFO was replaced"
    );
    // A page that missed the FIFO leaves its reader waiting: a bounded wait fails instead.
    let page = received
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("the page came through the FIFO");
    assert!(page.starts_with("<!DOCTYPE html>"));
}

/// `--out /dev/stdout` with standard output redirected to a file (`>> "$GITHUB_STEP_SUMMARY"`):
/// the page is appended to the stream, the file is not replaced by a rename.
#[test]
fn a_page_written_to_dev_stdout_is_appended_to_the_redirected_file() {
    let dir = tempfile::tempdir().unwrap();
    let summary = dir.path().join("summary.md");
    fs::write(&summary, "earlier step\n").unwrap();
    let appended = fs::OpenOptions::new().append(true).open(&summary).unwrap();
    let output = report_to(Path::new("/dev/stdout"))
        .stdout(appended)
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let written = fs::read_to_string(&summary).unwrap();
    assert!(
        written.starts_with("earlier step\n<!DOCTYPE html>"),
        "{written}"
    );

    let piped = report_to(Path::new("/dev/stdout")).output().unwrap();
    assert_eq!(piped.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&piped.stdout).starts_with("<!DOCTYPE html>"));
}

#[test]
fn standard_output_on_a_full_disk_is_an_error_line() {
    let Ok(full) = fs::OpenOptions::new().write(true).open("/dev/full") else {
        eprintln!("no /dev/full: skipping");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let output = report_to(&dir.path().join("page.html"))
        .stdout(full)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("error: writing the report to standard output"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn standard_output_closed_by_its_reader_exits_141_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = report_to(&dir.path().join("page.html"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The reader goes before the lab has drawn the page, as `| head -0` would.
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(141), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_timeout_outside_one_second_to_a_week_is_refused_when_parsed() {
    for (args, value) in [
        (&["bench", "--timeout"][..], "0"),
        (&["bench", "--timeout"][..], "604801"),
        (&["profile", "--timeout"][..], "18446744073709551615"),
        (&["history", "HEAD~1..HEAD", "--timeout"][..], "0"),
    ] {
        let mut all = args.to_vec();
        all.push(value);
        let run = common::lab(&all);
        assert_eq!(run.code, 2, "{all:?}: {run}");
        assert!(
            run.stderr.contains("--timeout") && run.stderr.contains("1..=604800"),
            "{all:?}: {run}"
        );
    }
}
