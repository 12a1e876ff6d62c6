//! Files from outside the lab's control (history stores, baselines, calibration files, books,
//! match results, pools, JSON reports), read safely: only regular files, each up to a cap, so a
//! FIFO, a device or a runaway file is refused with a message instead of hanging the lab or
//! filling its memory. Also the one bounded quote of outside text in messages and reports.

use std::fmt;
use std::fs::OpenOptions;
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

const MIB: u64 = 1 << 20;

/// A kind of file the lab reads, with the most it reads of one (docs/lab-json.md, "Limits").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileCap {
    /// What the file is, as messages name it ("baseline", "book").
    pub(crate) what: &'static str,
    /// The largest size read, in bytes; larger files are refused whole.
    pub cap: u64,
}

/// One commit's measurement in the history store.
pub const STORE_FILE: FileCap = FileCap {
    what: "history store file",
    cap: 16 * MIB,
};
/// A saved baseline (`baselines/*.json`).
pub const BASELINE: FileCap = FileCap {
    what: "baseline",
    cap: 16 * MIB,
};
/// A calibration file; with replay samples it holds about 55 bytes a sample.
pub(crate) const CALIBRATION: FileCap = FileCap {
    what: "calibration file",
    cap: 512 * MIB,
};
/// An opening book (EPD or PGN), after decompression when gzipped.
pub const BOOK: FileCap = FileCap {
    what: "book",
    cap: 256 * MIB,
};
/// A position pool or `--positions` file, after decompression when gzipped.
pub(crate) const POOL: FileCap = FileCap {
    what: "pool",
    cap: 256 * MIB,
};
/// A match's results file (one line a game).
pub(crate) const RESULTS: FileCap = FileCap {
    what: "results file",
    cap: 1024 * MIB,
};
/// A file of the working tree snapshotted for `WORKTREE` (source, or an engine's network).
pub(crate) const WORKTREE_FILE: FileCap = FileCap {
    what: "working-tree file",
    cap: 1024 * MIB,
};
/// A `lab.toml` engine definition.
pub(crate) const LAB_TOML: FileCap = FileCap {
    what: "lab.toml",
    cap: MIB,
};
/// A Rust source file the lab reads or rewrites (the margin tables' `margins.rs`).
pub(crate) const SOURCE: FileCap = FileCap {
    what: "source file",
    cap: 16 * MIB,
};
/// An `exe:` engine binary, hashed to identify it in a match's settings.
pub(crate) const ENGINE_BINARY: FileCap = FileCap {
    what: "engine binary",
    cap: 1024 * MIB,
};
/// A stored speed-Elo model (`target/lab/speed-elo/`).
pub(crate) const SPEED_ELO_MODEL: FileCap = FileCap {
    what: "speed-Elo model",
    cap: MIB,
};
/// A stored node budget (`target/lab/budgets/`).
pub(crate) const NODE_BUDGET: FileCap = FileCap {
    what: "node budget",
    cap: MIB,
};
/// One process's callgrind output: its profile has a line per function and call edge.
pub(crate) const CALLGRIND_OUTPUT: FileCap = FileCap {
    what: "callgrind output",
    cap: 256 * MIB,
};
/// A record the lab wrote beside a cached build (the binary's digest).
pub(crate) const CACHE_RECORD: FileCap = FileCap {
    what: "build cache record",
    cap: MIB,
};
/// The folded stacks `squall profile` writes for `lab profile`. Distinct stacks set its size, not
/// samples (a repeated stack only raises its count): a depth-12 bench, 664 samples, is 277
/// stacks in 110 KB. 64 MiB is hundreds of times that, and bounds what `--vs` holds in memory,
/// two of them parsed at once.
pub(crate) const FOLDED_STACKS: FileCap = FileCap {
    what: "folded stacks file",
    cap: 64 * MIB,
};
/// The flamegraph SVG `squall profile` writes for `lab profile`: one element per frame drawn,
/// frames too narrow to see left out, so its size follows the folded stacks' (230 KB for the
/// profile above) and takes their cap.
pub(crate) const FLAMEGRAPH: FileCap = FileCap {
    what: "flamegraph SVG",
    cap: 64 * MIB,
};
/// A JSON report drawn by `lab report`.
pub(crate) const REPORT: FileCap = FileCap {
    what: "JSON report",
    cap: 64 * MIB,
};

/// Why a file was not read. Its message names the file and, when the size is the problem, the
/// cap.
#[derive(Debug)]
pub(crate) struct InputError {
    pub(crate) path: PathBuf,
    pub(crate) file_cap: FileCap,
    pub(crate) problem: Problem,
}

#[derive(Debug)]
pub(crate) enum Problem {
    /// Nothing at the path (callers for whom absence is normal match on it).
    NotFound,
    /// A directory, FIFO, socket or device: named by the text.
    NotRegular(&'static str),
    /// Larger than its cap.
    TooLarge,
    /// Not UTF-8 where text was asked for.
    NotText,
    Io(io::Error),
}

impl InputError {
    pub(crate) fn is_not_found(&self) -> bool {
        matches!(self.problem, Problem::NotFound)
    }

    pub(crate) fn is_too_large(&self) -> bool {
        matches!(self.problem, Problem::TooLarge)
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let FileCap { what, cap } = self.file_cap;
        let path = self.path.display();
        match &self.problem {
            Problem::NotFound => write!(f, "cannot read the {what} {path}: no such file"),
            Problem::NotRegular(kind) => write!(
                f,
                "cannot read the {what} {path}: it is {kind}, and only regular files are read"
            ),
            Problem::TooLarge => write!(
                f,
                "cannot read the {what} {path}: it is larger than the {} cap on a {what}",
                size_text(cap)
            ),
            Problem::NotText => write!(f, "cannot read the {what} {path}: it is not UTF-8 text"),
            Problem::Io(error) => write!(f, "cannot read the {what} {path}: {error}"),
        }
    }
}

impl std::error::Error for InputError {}

/// `bytes` as the docs state the caps: whole MiB when it is a multiple, else bytes.
pub(crate) fn size_text(bytes: u64) -> String {
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else {
        format!("{bytes} bytes")
    }
}

/// The whole of the regular file at `path`, if it is at most `file_cap.cap` bytes. Symbolic links
/// are followed; what is checked is the file actually opened (its handle's metadata), so a
/// file swapped for a FIFO between the check and the read is still refused. Never blocks on a
/// FIFO and never reads more than `cap + 1` bytes.
pub(crate) fn read_bytes(path: &Path, file_cap: FileCap) -> Result<Vec<u8>, InputError> {
    let fail = |problem| InputError {
        path: path.to_path_buf(),
        file_cap,
        problem,
    };
    // Refused before opening: opening some devices has effects of its own.
    match std::fs::metadata(path) {
        Ok(metadata) if !metadata.is_file() => {
            return Err(fail(Problem::NotRegular(kind_of(&metadata.file_type()))))
        }
        Ok(_) => {}
        Err(error) => return Err(fail(io_problem(error))),
    }
    let file = OpenOptions::new()
        .read(true)
        // A FIFO put in place after the check opens at once instead of waiting for a writer.
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|error| fail(io_problem(error)))?;
    let metadata = file.metadata().map_err(|error| fail(Problem::Io(error)))?;
    if !metadata.is_file() {
        return Err(fail(Problem::NotRegular(kind_of(&metadata.file_type()))));
    }
    if metadata.len() > file_cap.cap {
        return Err(fail(Problem::TooLarge));
    }
    read_capped(file, file_cap.cap).map_err(fail)
}

/// [`read_bytes`] as UTF-8 text.
pub(crate) fn read_text(path: &Path, file_cap: FileCap) -> Result<String, InputError> {
    let bytes = read_bytes(path, file_cap)?;
    String::from_utf8(bytes).map_err(|_| InputError {
        path: path.to_path_buf(),
        file_cap,
        problem: Problem::NotText,
    })
}

/// Everything `reader` gives, refused when it is more than `cap` bytes (a file that grew since
/// its size was read, a decompressed stream).
pub(crate) fn read_capped(reader: impl Read, cap: u64) -> Result<Vec<u8>, Problem> {
    let mut bytes = Vec::new();
    reader
        .take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(Problem::Io)?;
    if bytes.len() as u64 > cap {
        return Err(Problem::TooLarge);
    }
    Ok(bytes)
}

fn io_problem(error: io::Error) -> Problem {
    if error.kind() == io::ErrorKind::NotFound {
        Problem::NotFound
    } else {
        Problem::Io(error)
    }
}

fn kind_of(kind: &std::fs::FileType) -> &'static str {
    if kind.is_dir() {
        "a directory"
    } else {
        special_file_kind(kind)
    }
}

/// What a file that is neither a regular file, a directory nor a symbolic link is, for messages.
pub(crate) fn special_file_kind(kind: &std::fs::FileType) -> &'static str {
    if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_char_device() {
        "a character device"
    } else {
        "not a regular file"
    }
}

/// `text` in at most `max_chars` characters: cut on a character boundary, the last one `…`
/// when anything was cut. The one way the lab shortens outside text for a message or a report.
pub(crate) fn excerpt(text: &str, max_chars: usize) -> std::borrow::Cow<'_, str> {
    if text.char_indices().nth(max_chars).is_none() {
        return std::borrow::Cow::Borrowed(text);
    }
    let kept = prefix_chars(text, max_chars.saturating_sub(1));
    std::borrow::Cow::Owned(format!("{kept}…"))
}

/// How many characters of a commit or tree id a reader is shown.
pub(crate) const SHORT_COMMIT_CHARS: usize = 10;
/// How many characters of a build's cache key a reader is shown.
pub(crate) const SHORT_KEY_CHARS: usize = 12;

/// A commit or tree id as a reader is shown it: its first `SHORT_COMMIT_CHARS` characters.
pub(crate) fn short_commit(id: &str) -> &str {
    prefix_chars(id, SHORT_COMMIT_CHARS)
}

/// A build's cache key as a reader is shown it: its first `SHORT_KEY_CHARS` characters.
pub(crate) fn short_key(key: &str) -> &str {
    prefix_chars(key, SHORT_KEY_CHARS)
}

/// The first `max_chars` characters of `text`, cut on a character boundary, without a mark:
/// for identifiers shortened by design (`short_commit`, `short_key`).
pub(crate) fn prefix_chars(text: &str, max_chars: usize) -> &str {
    match text.char_indices().nth(max_chars) {
        None => text,
        Some((end, _)) => &text[..end],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpts_cut_on_characters() {
        assert_eq!(excerpt("abc", 3), "abc");
        assert_eq!(excerpt("abcd", 3), "ab…");
        assert_eq!(excerpt("éééé", 3), "éé…");
        assert_eq!(prefix_chars("日本語", 2), "日本");
        assert_eq!(prefix_chars("ab", 10), "ab");
    }

    #[test]
    fn only_regular_files_under_the_cap_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let small = dir.path().join("small");
        std::fs::write(&small, "12345").unwrap();
        let file_cap = FileCap {
            what: "test file",
            cap: 5,
        };
        assert_eq!(read_text(&small, file_cap).unwrap(), "12345");
        let large = FileCap { cap: 4, ..file_cap };
        let error = read_text(&small, large).unwrap_err();
        assert!(matches!(error.problem, Problem::TooLarge), "{error}");
        assert!(error.to_string().contains("4 bytes cap"), "{error}");
        let error = read_text(dir.path(), file_cap).unwrap_err();
        assert!(error.to_string().contains("a directory"), "{error}");
        let error = read_text(Path::new("/dev/zero"), file_cap).unwrap_err();
        assert!(error.to_string().contains("a character device"), "{error}");
        assert!(read_text(&dir.path().join("absent"), file_cap)
            .unwrap_err()
            .is_not_found());
        let error = read_capped(&b"123456"[..], 5).unwrap_err();
        assert!(matches!(error, Problem::TooLarge));
    }
}
