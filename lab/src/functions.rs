//! `lab compare --functions`: per-function instruction counts (callgrind `Ir`) of both
//! revisions and the functions whose cost moved most. A fixed cost added to a cheap function
//! shows up here by name even when NPS noise hides it.
//!
//! The callgrind output file is parsed directly (format: valgrind's "Callgrind Format
//! Specification"): self cost is the sum of a function's cost lines; inclusive cost adds the
//! costs of its calls to other functions (direct self-recursion is skipped; mutual recursion,
//! as in a search, can still count a cost more than once, so inclusive figures of recursive
//! functions may exceed the total).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::process::Command;
use std::thread;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use serde::Serialize;

use crate::paths::{remove_if_exists, LabPaths};
use crate::process::{require_success, run_with_timeout};
use crate::progress::Progress;
use crate::run::find_valgrind;

/// Callgrind slows the engine down by well over an order of magnitude.
const CALLGRIND_TIMEOUT_FACTOR: u32 = 20;

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
pub fn parse_callgrind_functions(contents: &str) -> Result<FunctionCosts> {
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

fn strip_hash(name: &str) -> &str {
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

/// Runs `binary bench --json --depth DEPTH [--positions FILE]` under callgrind and reads its
/// per-function costs.
pub fn count_functions(
    valgrind: &Path,
    binary: &Path,
    depth: u32,
    positions: Option<&Path>,
    out_file: &Path,
    timeout: Duration,
) -> Result<FunctionCosts> {
    remove_if_exists(out_file)?;
    let mut command = Command::new(valgrind);
    command
        .arg("--tool=callgrind")
        .arg("--dump-instr=no")
        .arg(format!("--callgrind-out-file={}", out_file.display()))
        .arg(binary)
        .args(crate::run::bench_args(Some(depth), false, positions));
    let what = format!("callgrind (per function) on `{} bench`", binary.display());
    let finished = run_with_timeout(command, timeout * CALLGRIND_TIMEOUT_FACTOR, &what)?;
    require_success(&finished, &what)?;
    let contents = std::fs::read_to_string(out_file)
        .with_context(|| format!("reading callgrind output {}", out_file.display()))?;
    remove_if_exists(out_file)?;
    parse_callgrind_functions(&contents)
}

#[derive(Debug, Clone, Serialize)]
pub struct FunctionsComparison {
    pub depth: u32,
    pub a_total: u64,
    pub b_total: u64,
    /// Functions named in either run.
    pub functions_counted: usize,
    /// The top movers by absolute change of self cost, largest first.
    pub movers: Vec<FunctionMover>,
}

#[derive(Debug, Clone, Serialize)]
pub struct FunctionMover {
    pub function: String,
    pub a: Cost,
    pub b: Cost,
    /// B minus A, in `Ir`.
    pub self_delta: i64,
    pub inclusive_delta: i64,
    /// The deltas as percentages of A's total `Ir`.
    pub self_delta_pct_of_total: f64,
    pub inclusive_delta_pct_of_total: f64,
}

/// Ranks every function by the absolute change of its self cost.
pub fn compare_functions(
    depth: u32,
    a: &FunctionCosts,
    b: &FunctionCosts,
    top: usize,
) -> FunctionsComparison {
    let names: BTreeMap<&String, ()> = a
        .functions
        .keys()
        .chain(b.functions.keys())
        .map(|name| (name, ()))
        .collect();
    let pct = |delta: i64| delta as f64 / a.total.max(1) as f64 * 100.0;
    let mut movers: Vec<FunctionMover> = names
        .keys()
        .map(|name| {
            let a_cost = a.functions.get(*name).copied().unwrap_or_default();
            let b_cost = b.functions.get(*name).copied().unwrap_or_default();
            let self_delta = b_cost.self_ir as i64 - a_cost.self_ir as i64;
            let inclusive_delta = b_cost.inclusive as i64 - a_cost.inclusive as i64;
            FunctionMover {
                function: (*name).clone(),
                a: a_cost,
                b: b_cost,
                self_delta,
                inclusive_delta,
                self_delta_pct_of_total: pct(self_delta),
                inclusive_delta_pct_of_total: pct(inclusive_delta),
            }
        })
        .collect();
    // Stable: ties keep name order.
    movers.sort_by_key(|mover| std::cmp::Reverse(mover.self_delta.unsigned_abs()));
    let functions_counted = movers.len();
    movers.truncate(top);
    FunctionsComparison {
        depth,
        a_total: a.total,
        b_total: b.total,
        functions_counted,
        movers,
    }
}

/// Callgrind runs of both binaries at once, then the ranking.
pub fn measure_functions(
    binaries: [&Path; 2],
    depth: u32,
    positions: Option<&Path>,
    top: usize,
    timeout: Duration,
    paths: &LabPaths,
    progress: &Progress,
) -> Result<FunctionsComparison> {
    let valgrind = find_valgrind()
        .ok_or_else(|| anyhow!("--functions needs valgrind (callgrind), which was not found"))?;
    let task = progress.spinner(&format!(
        "counting instructions per function under callgrind (depth {depth})"
    ));
    let counts: Result<Vec<FunctionCosts>> = thread::scope(|scope| {
        let handles: Vec<_> = binaries
            .iter()
            .zip(["A", "B"])
            .map(|(binary, label)| {
                let out_file = paths.scratch.join(format!(
                    "callgrind-functions-{}-{label}.out",
                    std::process::id()
                ));
                let valgrind = &valgrind;
                scope.spawn(move || {
                    count_functions(valgrind, binary, depth, positions, &out_file, timeout)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|_| bail!("callgrind worker panicked"))
            })
            .collect()
    });
    task.finish();
    let counts = counts?;
    Ok(compare_functions(depth, &counts[0], &counts[1], top))
}

/// `+3.1 M Ir`, `-850.0 k Ir`, `+12 Ir`.
pub fn format_ir_delta(delta: i64) -> String {
    let sign = if delta < 0 { '-' } else { '+' };
    let magnitude = delta.unsigned_abs() as f64;
    if magnitude >= 1e9 {
        format!("{sign}{:.2} G Ir", magnitude / 1e9)
    } else if magnitude >= 1e6 {
        format!("{sign}{:.1} M Ir", magnitude / 1e6)
    } else if magnitude >= 1e3 {
        format!("{sign}{:.1} k Ir", magnitude / 1e3)
    } else {
        format!("{sign}{magnitude} Ir")
    }
}

/// "drawish_scale +3.1 M Ir, +1.80% of total".
pub fn describe_delta(delta: i64, pct_of_total: f64) -> String {
    format!("{}, {pct_of_total:+.2}% of total", format_ir_delta(delta))
}

/// `[function, A self, B self, self change, inclusive change]` rows, largest mover first.
pub fn mover_rows(comparison: &FunctionsComparison) -> Vec<[String; 5]> {
    comparison
        .movers
        .iter()
        .map(|mover| {
            [
                mover.function.clone(),
                crate::report::thousands(mover.a.self_ir),
                crate::report::thousands(mover.b.self_ir),
                describe_delta(mover.self_delta, mover.self_delta_pct_of_total),
                describe_delta(mover.inclusive_delta, mover.inclusive_delta_pct_of_total),
            ]
        })
        .collect()
}

pub const MOVER_HEADER: [&str; 5] = [
    "function",
    "A self Ir",
    "B self Ir",
    "self change",
    "inclusive change",
];

pub fn title(comparison: &FunctionsComparison) -> String {
    format!(
        "Top {} function movers (callgrind Ir at depth {}, {} functions; % of A's total {})",
        comparison.movers.len(),
        comparison.depth,
        comparison.functions_counted,
        crate::report::thousands(comparison.a_total)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
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

    #[test]
    fn parses_self_and_inclusive_costs() {
        let costs = parse_callgrind_functions(SAMPLE).unwrap();
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
    fn ranks_the_largest_self_change_first() {
        let a = parse_callgrind_functions(SAMPLE).unwrap();
        let mut b = a.clone();
        b.functions
            .get_mut("squall::drawish_check")
            .unwrap()
            .self_ir += 31;
        b.functions.get_mut("squall::main").unwrap().self_ir -= 5;
        let comparison = compare_functions(4, &a, &b, 2);
        assert_eq!(comparison.movers.len(), 2);
        assert_eq!(comparison.functions_counted, 3);
        assert_eq!(comparison.movers[0].function, "squall::drawish_check");
        assert_eq!(comparison.movers[0].self_delta, 31);
        assert!((comparison.movers[0].self_delta_pct_of_total - 3.1).abs() < 1e-9);
        assert_eq!(comparison.movers[1].self_delta, -5);
        assert_eq!(describe_delta(3_100_000, 1.8), "+3.1 M Ir, +1.80% of total");
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
