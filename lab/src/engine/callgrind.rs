//! Callgrind, the one place the lab runs valgrind: finding it (`LAB_VALGRIND` overrides
//! PATH), running `squall bench` under it with a timeout scaled for its slowdown, and reading
//! its output file, as a whole-run total or as per-function costs.
//!
//! The output file is parsed directly (format: valgrind's "Callgrind Format Specification"):
//! self cost is the sum of a function's cost lines; inclusive cost adds the costs of its calls
//! to other functions (direct self-recursion is skipped; mutual recursion, as in a search, can
//! still count a cost more than once, so inclusive figures of recursive functions may exceed
//! the total).

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use serde::Serialize;

use super::adapter::show_command;
use crate::input::{read_text, CALLGRIND_OUTPUT};
use crate::paths::remove_if_exists;
use crate::process::{require_success, run_with_timeout, Finished};

/// Callgrind slows the engine down by well over an order of magnitude.
pub(crate) const TIMEOUT_FACTOR: u32 = 20;

/// valgrind on PATH, or LAB_VALGRIND when set (which also lets tests simulate its absence).
pub(crate) fn find_valgrind() -> Option<PathBuf> {
    if let Some(explicit) = std::env::var_os("LAB_VALGRIND") {
        let path = PathBuf::from(explicit);
        return path.is_file().then_some(path);
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join("valgrind"))
        .find(|candidate| candidate.is_file())
}

/// What a callgrind run records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Detail {
    /// The whole run's count only.
    Total,
    /// Costs per function, without per-instruction records (smaller files).
    Functions,
}

/// One bench under callgrind: its output and the contents of the output file of the process
/// counted.
///
/// Children are followed (`--trace-children=yes`, one output file per process), so a bench
/// command with a wrapper (`taskset -c 0 {exe} bench`, whose `taskset` replaces itself by the
/// engine) or an engine that is a script starting the real binary is counted in the engine's
/// process, not the wrapper's. The process counted is the built binary's when it ran as one
/// (the largest, should it have forked); otherwise, as for a script, the process with the
/// most instructions, and a note says so.
pub(crate) struct Callgrind<'a> {
    pub(crate) valgrind: &'a Path,
    /// The bench's command line, program first (an engine adapter's `bench_command`).
    pub(crate) command: &'a [OsString],
    /// The built engine binary the command runs, directly or through a wrapper.
    pub(crate) binary: &'a Path,
    /// Where callgrind writes: one file per process, `<out_file>.<pid>`, all removed before
    /// and after the run.
    pub(crate) out_file: &'a Path,
    /// The timeout of an uninstrumented run, multiplied by [`TIMEOUT_FACTOR`].
    pub(crate) timeout: Duration,
    pub(crate) detail: Detail,
}

/// Valgrind stopped the engine at an instruction it cannot execute: the binary was most
/// likely built for the host CPU. Measurements skip instructions on this error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CannotExecute {
    pub(crate) reason: String,
}

impl std::fmt::Display for CannotExecute {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.reason)
    }
}

impl std::error::Error for CannotExecute {}

/// What valgrind prints when the engine executes an instruction it does not implement.
const UNHANDLED_INSTRUCTION: [&str; 3] = [
    "unhandled instruction bytes",
    "Unrecognised instruction",
    "signal 4 (SIGILL)",
];

/// Lines of an output file read for its `cmd:` header.
const HEADER_LINES: usize = 64;

/// One process's output file and what it says.
struct ProcessOutput {
    contents: String,
    command: String,
    total: u64,
}

/// What a callgrind run counted.
pub(crate) struct Counted {
    /// The contents of the counted process's output file.
    pub(crate) contents: String,
    pub(crate) finished: Finished,
    /// Set when the process counted is not the built binary (or the run traced several).
    pub(crate) note: Option<String>,
}

impl Callgrind<'_> {
    fn pattern_name(&self) -> Result<String> {
        self.out_file
            .file_name()
            .and_then(|name| name.to_str())
            .map(|name| format!("{name}."))
            .ok_or_else(|| {
                anyhow!(
                    "callgrind output path {} has no UTF-8 name",
                    self.out_file.display()
                )
            })
    }

    /// The output files of this run's processes.
    fn outputs(&self) -> Result<Vec<PathBuf>> {
        let dir = self.out_file.parent().unwrap_or_else(|| Path::new("."));
        let prefix = self.pattern_name()?;
        let mut files = Vec::new();
        for entry in std::fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
            let entry = entry?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if name
                .strip_prefix(&prefix)
                .is_some_and(|pid| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
            {
                files.push(entry.path());
            }
        }
        files.sort();
        Ok(files)
    }

    fn remove_outputs(&self) -> Result<()> {
        for file in self.outputs()? {
            remove_if_exists(&file)?;
        }
        Ok(())
    }

    /// Runs the bench under callgrind and reads the output file of the process counted.
    pub(crate) fn run(&self) -> Result<Counted> {
        self.remove_outputs()?;
        let counted = self.run_and_read();
        self.remove_outputs()?;
        counted
    }

    fn run_and_read(&self) -> Result<Counted> {
        let mut command = Command::new(self.valgrind);
        command.arg("--tool=callgrind").arg("--trace-children=yes");
        let shown = show_command(self.command);
        let what = match self.detail {
            Detail::Total => format!("callgrind on `{shown}`"),
            Detail::Functions => {
                command.arg("--dump-instr=no");
                format!("callgrind (per function) on `{shown}`")
            }
        };
        command
            .arg(format!(
                "--callgrind-out-file={}%p",
                self.out_file.with_file_name(self.pattern_name()?).display()
            ))
            .args(self.command);
        let finished = run_with_timeout(command, self.timeout * TIMEOUT_FACTOR, &what)?;
        if !finished.status.success() {
            let stderr = String::from_utf8_lossy(&finished.stderr);
            if UNHANDLED_INSTRUCTION.iter().any(|m| stderr.contains(m)) {
                return Err(CannotExecute {
                    reason: "valgrind cannot execute this binary: illegal instruction; likely \
                             built with -march=native; give a build without it, e.g. ARCH=... \
                             in lab.toml"
                        .to_string(),
                }
                .into());
            }
        }
        require_success(&finished, &what)?;
        let mut outputs = Vec::new();
        for path in self.outputs()? {
            // The engine's processes write these, with `--trace-children` as many as it starts.
            let contents = read_text(&path, CALLGRIND_OUTPUT)?;
            let command = contents
                .lines()
                .take(HEADER_LINES)
                .find_map(|line| line.strip_prefix("cmd:"))
                .unwrap_or("")
                .trim()
                .to_string();
            // A process that did not finish its dump (none should) has no total: left out.
            if let Ok(total) = parse_total(&contents) {
                outputs.push(ProcessOutput {
                    contents,
                    command,
                    total,
                });
            }
        }
        let (chosen, note) = choose(&outputs, self.binary, is_script(self.binary))
            .ok_or_else(|| anyhow!("{what} wrote no output file with an instruction count"))?;
        Ok(Counted {
            contents: outputs.swap_remove(chosen).contents,
            finished,
            note,
        })
    }

    /// Per-function costs of the counted process.
    pub(crate) fn functions(&self) -> Result<FunctionCosts> {
        parse_functions(&self.run()?.contents)
    }
}

/// Whether `binary` is an interpreter script (`#!`) rather than a program image: its process
/// then runs the interpreter, and the engine is one of its children.
fn is_script(binary: &Path) -> bool {
    use std::io::Read;
    let mut start = [0u8; 2];
    std::fs::File::open(binary)
        .and_then(|mut file| file.read_exact(&mut start))
        .is_ok_and(|()| &start == b"#!")
}

/// The output to count and, when it is not plainly the built binary's, why it was chosen: the
/// built binary's process (the largest of them), unless the binary is a script; else the
/// process with the most instructions.
fn choose(
    outputs: &[ProcessOutput],
    binary: &Path,
    script: bool,
) -> Option<(usize, Option<String>)> {
    let binary_text = binary.to_string_lossy();
    // The command line names the program as it was started: the path given, or absolute.
    let absolute = std::path::absolute(binary).unwrap_or_else(|_| binary.to_path_buf());
    let names = [
        binary_text.to_string(),
        absolute.to_string_lossy().into_owned(),
    ];
    let runs_binary = |command: &str| {
        names
            .iter()
            .any(|name| command == name || command.starts_with(&format!("{name} ")))
    };
    let largest = |candidates: &mut dyn Iterator<Item = usize>| {
        candidates.max_by_key(|&i| (outputs[i].total, std::cmp::Reverse(i)))
    };
    if !script {
        if let Some(index) =
            largest(&mut (0..outputs.len()).filter(|&i| runs_binary(&outputs[i].command)))
        {
            return Some((index, None));
        }
    }
    let index = largest(&mut (0..outputs.len()))?;
    let command = &outputs[index].command;
    let why = if script {
        format!("{binary_text} is a script")
    } else {
        format!("no traced process ran {binary_text}")
    };
    Some((
        index,
        Some(format!(
            "counted `{command}`, the process with the most instructions of {} traced, not the \
             built binary: {why}",
            outputs.len()
        )),
    ))
}

/// Reads the `summary:` (or, in newer valgrind, `totals:`) line's first event count, which is
/// `Ir` with callgrind's default events.
pub(crate) fn parse_total(contents: &str) -> Result<u64> {
    let line = contents
        .lines()
        .find(|line| line.starts_with("summary:"))
        .or_else(|| contents.lines().find(|line| line.starts_with("totals:")))
        .ok_or_else(|| anyhow!("callgrind output has no summary/totals line"))?;
    line.split_whitespace()
        .nth(1)
        .and_then(|count| count.parse().ok())
        .ok_or_else(|| anyhow!("cannot read the instruction count in callgrind line {line:?}"))
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Cost {
    #[serde(rename = "self")]
    pub self_ir: u64,
    pub inclusive: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct FunctionCosts {
    /// The whole run's `Ir` (summary/totals line, or the sum of self costs).
    pub(crate) total: u64,
    pub(crate) functions: HashMap<String, Cost>,
}

/// Parses a callgrind output file into per-function costs of its `Ir` event.
pub(crate) fn parse_functions(contents: &str) -> Result<FunctionCosts> {
    let mut positions = 1usize;
    let mut ir_index = 0usize;
    let mut names: HashMap<String, String> = HashMap::new();
    let mut current: Option<String> = None;
    let mut callee: Option<String> = None;
    let mut pending_call = false;
    let mut summary: Option<u64> = None;
    let mut costs: HashMap<String, Cost> = HashMap::new();
    // Resolves `(id) name` definitions and `(id)` references of fn=/cfn= lines.
    let mut function = |value: &str| -> String {
        let value = value.trim();
        if let Some(rest) = value.strip_prefix('(') {
            if let Some((id, name)) = rest.split_once(')') {
                let name = name.trim();
                if name.is_empty() {
                    return names.get(id).cloned().unwrap_or_else(|| format!("({id})"));
                }
                let short = shorten_symbol(name);
                names.insert(id.to_string(), short.clone());
                return short;
            }
        }
        shorten_symbol(value)
    };
    for line in contents.lines() {
        let Some(first) = line.bytes().next() else {
            continue;
        };
        if first.is_ascii_digit() || matches!(first, b'+' | b'-' | b'*') {
            let ir = line
                .split_whitespace()
                .nth(positions + ir_index)
                .map_or(Ok(0), str::parse::<u64>)
                .with_context(|| format!("bad callgrind cost line {line:?}"))?;
            let Some(name) = &current else {
                continue;
            };
            let entry = costs.entry(name.clone()).or_default();
            if pending_call {
                pending_call = false;
                if callee.as_ref() != Some(name) {
                    entry.inclusive += ir;
                }
            } else {
                entry.self_ir += ir;
                entry.inclusive += ir;
            }
        } else if let Some(value) = line.strip_prefix("fn=") {
            current = Some(function(value));
        } else if let Some(value) = line.strip_prefix("cfn=") {
            callee = Some(function(value));
        } else if line.starts_with("calls=") {
            pending_call = true;
        } else if let Some(value) = line.strip_prefix("positions:") {
            positions = value.split_whitespace().count().max(1);
        } else if let Some(value) = line.strip_prefix("events:") {
            ir_index = value
                .split_whitespace()
                .position(|event| event == "Ir")
                .ok_or_else(|| anyhow!("callgrind output has no Ir event: {line:?}"))?;
        } else if let Some(value) = line
            .strip_prefix("summary:")
            .or_else(|| line.strip_prefix("totals:"))
        {
            summary = value
                .split_whitespace()
                .nth(ir_index)
                .and_then(|n| n.parse().ok());
        }
    }
    if costs.is_empty() {
        bail!("callgrind output names no functions");
    }
    let total = summary.unwrap_or_else(|| costs.values().map(|c| c.self_ir).sum());
    Ok(FunctionCosts {
        total,
        functions: costs,
    })
}

/// A readable name: Rust symbol hashes (`::h0123456789abcdef`) dropped, and a still-mangled
/// legacy symbol (`_ZN...E`) decoded to its path.
pub(crate) fn shorten_symbol(name: &str) -> String {
    let name = name.trim();
    let demangled = demangle_legacy(name).unwrap_or_else(|| name.to_string());
    strip_hash(&demangled).to_string()
}

/// `a::b::h0123456789abcdef` → `a::b`: a legacy Rust symbol without its hash.
pub(crate) fn strip_hash(name: &str) -> &str {
    match name.rsplit_once("::") {
        Some((path, hash))
            if hash.len() == 17
                && hash.starts_with('h')
                && hash[1..].bytes().all(|b| b.is_ascii_hexdigit()) =>
        {
            path
        }
        _ => name,
    }
}

/// `_ZN6squall4eval7drawish13drawish_scale17h0123456789abcdefE` → `squall::eval::drawish::
/// drawish_scale::h0123456789abcdef` (valgrind usually demangles already; this covers the rest).
fn demangle_legacy(name: &str) -> Option<String> {
    let mut rest = name.strip_prefix("_ZN")?.strip_suffix('E')?;
    let mut parts = Vec::new();
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let length: usize = rest[..digits].parse().ok()?;
        let part = rest.get(digits..digits + length)?;
        parts.push(
            part.replace("$LT$", "<")
                .replace("$GT$", ">")
                .replace("$u20$", " ")
                .replace("$RF$", "&")
                .replace("$C$", ",")
                .replace("..", "::"),
        );
        rest = &rest[digits + length..];
    }
    Some(parts.join("::"))
}

/// A small callgrind output file for the parsers' tests.
#[cfg(test)]
pub(crate) const SAMPLE: &str = "\
version: 1
creator: callgrind-3.19.0
positions: line
events: Ir
summary: 1000

ob=(1) /bin/squall
fl=(1) ???
fn=(1) squall::main
0 100
cfn=(2) _ZN6squall13drawish_check17h0123456789abcdefE
calls=10 0
0 600
fn=(2)
0 550
cfn=(2)
calls=1 0
0 50
fn=(3) squall::search::negamax::h00112233445566ff
+3 250
-1 100
";

#[cfg(test)]
mod tests {
    use super::*;

    fn output(command: &str, total: u64) -> ProcessOutput {
        ProcessOutput {
            contents: String::new(),
            command: command.to_string(),
            total,
        }
    }

    #[test]
    fn the_built_binary_is_counted_else_the_largest_process_with_a_note() {
        let engine = Path::new("/cache/bin/key/engine");
        // `taskset -c 0 {exe} bench`: taskset replaced itself by the engine, one process.
        let outputs = [output("/cache/bin/key/engine bench 5", 6_000_000)];
        assert_eq!(choose(&outputs, engine, false), Some((0, None)));
        // A binary that forks a helper: the binary's own process, even if smaller.
        let outputs = [
            output("/usr/bin/helper --x", 9_000_000),
            output("/cache/bin/key/engine bench", 6_000_000),
            output("/cache/bin/key/engine bench", 100),
        ];
        assert_eq!(choose(&outputs, engine, false), Some((1, None)));
        // A script that starts the real engine: the engine's process, with a note.
        let outputs = [
            output("/cache/bin/key/engine bench", 229_356),
            output("/opt/real-engine bench", 6_125_767),
        ];
        let (index, note) = choose(&outputs, engine, true).unwrap();
        assert_eq!(index, 1);
        let note = note.unwrap();
        assert!(
            note.contains("counted `/opt/real-engine bench`") && note.contains("is a script"),
            "{note}"
        );
        // A prefix of another path is not the binary.
        let outputs = [output("/cache/bin/key/engine2 bench", 5)];
        let (_, note) = choose(&outputs, engine, false).unwrap();
        assert!(note.unwrap().contains("no traced process ran"));
        assert_eq!(choose(&[], engine, false), None);
    }

    #[test]
    fn reads_callgrind_summary_and_totals() {
        assert_eq!(parse_total("events: Ir\nsummary: 12345\n").unwrap(), 12345);
        assert_eq!(parse_total("events: Ir\ntotals: 777 1\n").unwrap(), 777);
        assert!(parse_total("events: Ir\n").is_err());
    }

    #[test]
    fn parses_self_and_inclusive_costs() {
        let costs = parse_functions(SAMPLE).unwrap();
        assert_eq!(costs.total, 1000);
        assert_eq!(
            costs.functions["squall::main"],
            Cost {
                self_ir: 100,
                inclusive: 700
            }
        );
        let drawish = costs.functions["squall::drawish_check"];
        assert_eq!(drawish.self_ir, 550);
        // The recursive call is not added again.
        assert_eq!(drawish.inclusive, 550);
        assert_eq!(costs.functions["squall::search::negamax"].self_ir, 350);
    }

    #[test]
    fn shortens_symbols() {
        assert_eq!(
            shorten_symbol("_ZN6squall4eval7drawish13drawish_scale17h0123456789abcdefE"),
            "squall::eval::drawish::drawish_scale"
        );
        assert_eq!(
            shorten_symbol("squall::eval::Evaluator::full_tier::h0123456789abcdef"),
            "squall::eval::Evaluator::full_tier"
        );
        assert_eq!(shorten_symbol("0x0000000000001234"), "0x0000000000001234");
    }
}
