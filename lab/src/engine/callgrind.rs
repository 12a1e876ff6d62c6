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
use crate::paths::remove_if_exists;
use crate::process::{require_success, run_with_timeout, Finished};

/// Callgrind slows the engine down by well over an order of magnitude.
pub const TIMEOUT_FACTOR: u32 = 20;

/// valgrind on PATH, or LAB_VALGRIND when set (which also lets tests simulate its absence).
pub fn find_valgrind() -> Option<PathBuf> {
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
pub enum Detail {
    /// The whole run's count only.
    Total,
    /// Costs per function, without per-instruction records (smaller files).
    Functions,
}

/// One bench process under callgrind: its output and the contents of callgrind's output file.
pub struct Callgrind<'a> {
    pub valgrind: &'a Path,
    /// The bench's command line, program first (an engine adapter's `bench_command`).
    pub command: &'a [OsString],
    /// Where callgrind writes; removed before and after the run.
    pub out_file: &'a Path,
    /// The timeout of an uninstrumented run, multiplied by [`TIMEOUT_FACTOR`].
    pub timeout: Duration,
    pub detail: Detail,
}

impl Callgrind<'_> {
    fn run(&self) -> Result<(Finished, String)> {
        remove_if_exists(self.out_file)?;
        let mut command = Command::new(self.valgrind);
        command.arg("--tool=callgrind");
        let shown = show_command(self.command);
        let what = match self.detail {
            Detail::Total => format!("callgrind on `{shown}`"),
            Detail::Functions => {
                command.arg("--dump-instr=no");
                format!("callgrind (per function) on `{shown}`")
            }
        };
        command
            .arg(format!("--callgrind-out-file={}", self.out_file.display()))
            .args(self.command);
        let finished = run_with_timeout(command, self.timeout * TIMEOUT_FACTOR, &what)?;
        require_success(&finished, &what)?;
        let contents = std::fs::read_to_string(self.out_file)
            .with_context(|| format!("reading callgrind output {}", self.out_file.display()))?;
        remove_if_exists(self.out_file)?;
        Ok((finished, contents))
    }

    /// Total instructions (`Ir`) of the run, and the run's output for the adapter to read.
    pub fn total(&self) -> Result<(u64, Finished)> {
        let (finished, contents) = self.run()?;
        Ok((parse_total(&contents)?, finished))
    }

    /// Per-function costs of the run.
    pub fn functions(&self) -> Result<FunctionCosts> {
        let (_, contents) = self.run()?;
        parse_functions(&contents)
    }
}

/// Reads the `summary:` (or, in newer valgrind, `totals:`) line's first event count, which is
/// `Ir` with callgrind's default events.
pub fn parse_total(contents: &str) -> Result<u64> {
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
pub struct FunctionCosts {
    /// The whole run's `Ir` (summary/totals line, or the sum of self costs).
    pub total: u64,
    pub functions: HashMap<String, Cost>,
}

/// Parses a callgrind output file into per-function costs of its `Ir` event.
pub fn parse_functions(contents: &str) -> Result<FunctionCosts> {
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
pub fn shorten_symbol(name: &str) -> String {
    let name = name.trim();
    let demangled = demangle_legacy(name).unwrap_or_else(|| name.to_string());
    strip_hash(&demangled).to_string()
}

/// `a::b::h0123456789abcdef` → `a::b`: a legacy Rust symbol without its hash.
pub fn strip_hash(name: &str) -> &str {
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
