//! Files the lab reads but did not write: a FIFO, a device or a file over its cap is refused
//! (or, in the history store, skipped with a warning) instead of hanging the lab or filling
//! its memory; bad opening books are refused naming the line.

use std::ffi::CString;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use squall_lab::baseline;
use squall_lab::calibration::data::CalibrationFile;
use squall_lab::games::book::Book;
use squall_lab::history::store::{Series, SeriesSettings, Stored};
use squall_lab::input;
use squall_lab::machine::{Machine, Toolchain};
use squall_lab::positions;

fn fifo(path: &Path) -> PathBuf {
    let name = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: `name` is a NUL-terminated path that outlives the call.
    let made = unsafe { libc::mkfifo(name.as_ptr(), 0o600) };
    assert_eq!(made, 0, "mkfifo {}", path.display());
    path.to_path_buf()
}

fn zero_link(path: &Path) -> PathBuf {
    std::os::unix::fs::symlink("/dev/zero", path).unwrap();
    path.to_path_buf()
}

/// A sparse file one byte over `cap`: no disk space, but too large to be read.
fn over_cap(path: &Path, cap: u64) -> PathBuf {
    fs::File::create(path).unwrap().set_len(cap + 1).unwrap();
    path.to_path_buf()
}

fn series(store: &Path) -> Series {
    let series = Series::new(
        store,
        Machine {
            cpu_model: "test cpu".to_string(),
            cores: 2,
            kernel: None,
            transparent_hugepages: None,
            governor: None,
        },
        Toolchain {
            rustc: "rustc 1.0".to_string(),
            rustflags: String::new(),
            target_features: Vec::new(),
        },
        SeriesSettings {
            engine: "squall".to_string(),
            depth: None,
            rounds: 2,
            instr_depth: 6,
            instructions: false,
            features: Vec::new(),
            engine_definition: None,
        },
    );
    fs::create_dir_all(&series.dir).unwrap();
    series
}

fn unusable(stored: Stored) -> String {
    match stored {
        Stored::Unusable(why) => why,
        Stored::Found(_) => panic!("found"),
        Stored::Missing => panic!("missing"),
        Stored::Failed(_) => panic!("failed"),
    }
}

#[test]
fn the_history_store_skips_fifos_devices_and_huge_files_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let series = series(dir.path());
    fifo(&series.path("a"));
    zero_link(&series.path("b"));
    over_cap(&series.path("c"), input::STORE_FILE.cap);
    fs::create_dir(series.path("d")).unwrap();
    let why = unusable(series.load("a"));
    assert!(why.contains("a FIFO") && why.contains("a.json"), "{why}");
    let why = unusable(series.load("b"));
    assert!(why.contains("a character device"), "{why}");
    let why = unusable(series.load("c"));
    assert!(why.contains("16 MiB cap"), "{why}");
    let why = unusable(series.load("d"));
    assert!(why.contains("a directory"), "{why}");
    assert!(matches!(series.load("e"), Stored::Missing));
    // A link to a regular file is followed.
    let stored = dir.path().join("elsewhere.json");
    fs::write(&stored, "{}").unwrap();
    std::os::unix::fs::symlink(&stored, series.path("f")).unwrap();
    let why = unusable(series.load("f"));
    assert!(why.contains("corrupt"), "{why}");
}

#[test]
fn every_reader_refuses_what_is_not_a_regular_file_under_its_cap() {
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| dir.path().join(name);
    let fifo_json = fifo(&at("fifo.json"));
    let zero_json = zero_link(&at("zero.json"));
    let cases: Vec<(&str, anyhow::Result<()>)> = vec![
        ("baseline FIFO", baseline::load(&fifo_json).map(drop)),
        ("baseline device", baseline::load(&zero_json).map(drop)),
        (
            "baseline over cap",
            baseline::load(&over_cap(&at("big-baseline.json"), input::BASELINE.cap)).map(drop),
        ),
        (
            "calibration FIFO",
            CalibrationFile::load(&fifo_json).map(drop),
        ),
        (
            "calibration device",
            CalibrationFile::load(&zero_json).map(drop),
        ),
        (
            "book FIFO",
            Book::load(Some(&fifo(&at("fifo.pgn"))), None).map(drop),
        ),
        (
            "book device",
            Book::load(Some(&zero_link(&at("zero.epd"))), None).map(drop),
        ),
        (
            "book over cap",
            Book::load(Some(&over_cap(&at("big.epd"), input::BOOK.cap)), None).map(drop),
        ),
        (
            "results FIFO",
            squall_lab::games::results::read(&fifo(&at("results.jsonl"))).map(drop),
        ),
        (
            "pool device",
            positions::read_pool(&zero_link(&at("zero-pool.epd"))).map(drop),
        ),
        (
            "lab.toml FIFO",
            squall_lab::engine::config::load(dir.path(), Some(&fifo(&at("lab.toml")))).map(drop),
        ),
        (
            "speed-Elo model device",
            squall_lab::verdict::models::load(&zero_link(&at("model.json"))).map(drop),
        ),
        (
            "node budget FIFO",
            squall_lab::verdict::budgets::load(&fifo(&at("budget.json"))).map(drop),
        ),
    ];
    for (case, result) in cases {
        let error = format!("{:#}", result.expect_err(case));
        let named = ["a FIFO", "a character device", "MiB cap"]
            .iter()
            .any(|kind| error.contains(kind));
        assert!(named, "{case}: {error}");
    }
}

#[test]
fn a_gzip_book_is_capped_once_decompressed() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bomb.epd.gz");
    let mut encoder = flate2::write::GzEncoder::new(
        fs::File::create(&path).unwrap(),
        flate2::Compression::fast(),
    );
    let block = vec![b'\n'; 1 << 20];
    for _ in 0..=input::BOOK.cap >> 20 {
        encoder.write_all(&block).unwrap();
    }
    encoder.finish().unwrap();
    assert!(fs::metadata(&path).unwrap().len() < input::BOOK.cap);
    let error = format!("{:#}", Book::load(Some(&path), None).unwrap_err());
    assert!(
        error.contains("256 MiB cap") && error.contains("decompressed"),
        "{error}"
    );
}

fn lab(args: &[&str]) -> (i32, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_lab"))
        .arg("--quiet")
        .args(args)
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn lab_report_of_a_fifo_or_device_exits_2_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("page.html");
    let out_arg = out.to_str().unwrap();
    for (input, kind) in [
        (fifo(&dir.path().join("report.json")), "a FIFO"),
        (
            zero_link(&dir.path().join("zero.json")),
            "a character device",
        ),
    ] {
        let (code, stderr) = lab(&["report", input.to_str().unwrap(), "--out", out_arg]);
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains(kind), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(!out.exists());
    }
}

#[test]
fn lab_report_reads_a_calibration_as_large_as_calibrations_are_read_and_no_other_report() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("page.html");
    let padding = " ".repeat(65 << 20);
    let padded = |name: &str, kind: &str| {
        let path = dir.path().join(name);
        fs::write(
            &path,
            format!("{{\"kind\":\"{kind}\",{padding}\"schema_version\":1}}"),
        )
        .unwrap();
        path
    };
    let compare = padded("compare.json", "compare");
    let (code, stderr) = lab(&[
        "report",
        compare.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("only a calibration may be larger (up to 512 MiB)"),
        "{stderr}"
    );
    let calibration = padded("calibration.json", "squall-calibration");
    let (code, stderr) = lab(&[
        "report",
        calibration.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    // Read whole, then refused for what it lacks, not for its size.
    assert_eq!(code, 2, "{stderr}");
    assert!(!stderr.contains("larger"), "{stderr}");
    assert!(stderr.contains("cannot draw"), "{stderr}");
    assert!(!out.exists());
}

fn book_error(name: &str, text: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    fs::write(&path, text).unwrap();
    let error = Book::load(Some(&path), None).expect_err(text);
    format!("{error:#}")
}

const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -";

#[test]
fn bad_books_are_refused_naming_the_line() {
    // Text that is no PGN game at all.
    let error = book_error("notes.pgn", "\nhello, these are my notes\n");
    assert!(error.contains("notes.pgn:2: game 1"), "{error}");
    assert!(error.contains("neither moves nor a FEN tag"), "{error}");
    let error = book_error(
        "two.pgn",
        "[Event \"a\"]\n\n1. e4 e5 *\n\n[Event \"b\"]\n\n*\n",
    );
    assert!(error.contains("two.pgn:5: game 2"), "{error}");

    let drawn = format!("{START} 0 1\n{START} 100 80\n");
    let error = book_error("fifty.epd", &drawn);
    assert!(error.contains("fifty.epd:2:"), "{error}");
    assert!(error.contains("fifty-move rule"), "{error}");
    let error = book_error("ops.epd", &format!("{START} hmvc 120; id \"x\";\n"));
    assert!(
        error.contains("ops.epd:1:") && error.contains("fifty-move"),
        "{error}"
    );

    let error = book_error("bare.epd", "4k3/8/8/8/8/8/8/4K3 w - - 0 1\n");
    assert!(error.contains("bare.epd:1:"), "{error}");
    assert!(error.contains("material to mate"), "{error}");
    let error = book_error("bishop.epd", "4k3/8/8/8/8/8/8/2B1K3 b - -\n");
    assert!(error.contains("material to mate"), "{error}");

    let error = book_error("huge.epd", &format!("{START} 99999999999 1\n"));
    assert!(error.contains("huge.epd:1:"), "{error}");
    assert!(error.contains("halfmove clock 99999999999"), "{error}");
    let error = book_error("zero.epd", &format!("{START} 0 0\n"));
    assert!(error.contains("fullmove number `0`"), "{error}");
    let error = book_error("one.epd", &format!("{START} 5\n"));
    assert!(error.contains("without a fullmove number"), "{error}");
    let error = book_error(
        "fen.pgn",
        "[FEN \"4k3/8/8/8/8/8/4P3/4K3 w - - 150 1\"]\n\n*\n",
    );
    assert!(error.contains("fen.pgn:1: game 1: FEN tag"), "{error}");
}

#[test]
fn epd_errors_quote_the_line_as_written() {
    let line = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN w KQkq - bm e4; id \"no rook\";";
    let error = book_error("typo.epd", &format!("# a book\n{line}\n"));
    assert!(error.contains(&format!("typo.epd:2: `{line}`")), "{error}");
    assert!(!error.contains(" 0 1"), "a rebuilt FEN: {error}");
    // A long line is quoted in part, cut on a character boundary.
    let long = format!(
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN w KQkq - {}",
        "é".repeat(500)
    );
    let error = book_error("long.epd", &long);
    assert!(error.contains("long.epd:1: `rnbqkbnr"), "{error}");
    assert!(error.contains('…') && error.len() < 400, "{error}");
}

#[test]
fn good_books_still_load_with_their_counters() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("good.epd");
    fs::write(
        &path,
        format!("{START} 12 30\n{START} hmvc 3; fmvn 7;\n{START} bm e4;\n"),
    )
    .unwrap();
    let book = Book::load(Some(&path), None).unwrap();
    let fens: Vec<&str> = book.openings.iter().map(|o| o.fen.as_str()).collect();
    assert_eq!(
        fens,
        [
            format!("{START} 12 30"),
            format!("{START} 3 7"),
            format!("{START} 0 1")
        ]
    );
    let pgn = dir.path().join("fen-only.pgn");
    fs::write(
        &pgn,
        "[FEN \"4k3/8/8/8/8/8/4P3/4K3 w - - 0 1\"]\n[SetUp \"1\"]\n\n*\n",
    )
    .unwrap();
    assert_eq!(Book::load(Some(&pgn), None).unwrap().openings.len(), 1);
}
