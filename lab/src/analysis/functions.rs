//! `lab compare --functions`: the functions whose instruction cost (callgrind `Ir`) moved most
//! between two binaries. A fixed cost added to a cheap function shows up here by name even when
//! NPS noise hides it.

use std::collections::BTreeMap;
use std::path::Path;
use std::thread;
use std::time::Duration;

use anyhow::{anyhow, bail, Result};
use serde::Serialize;

use crate::engine::adapter::{BenchRequest, EngineAdapter};
use crate::engine::callgrind::{find_valgrind, Callgrind, Cost, Detail, FunctionCosts};
use crate::paths::LabPaths;
use crate::progress::Progress;

/// Why a comparison lists function movers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FunctionsWhy {
    /// `--functions` asked for them.
    Requested,
    /// Instructions per node moved with the same signature: the movers name where (from the
    /// instruction count's own callgrind runs, no extra run).
    InstructionsMoved,
}

#[derive(Debug, Clone, Serialize)]
pub struct FunctionsComparison {
    pub why: FunctionsWhy,
    /// `None`: the engine's default bench (an engine whose bench takes no depth).
    pub depth: Option<u32>,
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
pub(crate) fn compare_functions(
    depth: Option<u32>,
    a: &FunctionCosts,
    b: &FunctionCosts,
    top: usize,
    why: FunctionsWhy,
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
        why,
        depth,
        a_total: a.total,
        b_total: b.total,
        functions_counted,
        movers,
    }
}

/// Callgrind runs of both binaries' benches at once, then the ranking. Any binary with symbols
/// works; `depth` is `None` for an engine whose bench takes none.
#[allow(clippy::too_many_arguments)]
pub(crate) fn measure_functions(
    adapter: &dyn EngineAdapter,
    binaries: [&Path; 2],
    depth: Option<u32>,
    positions: Option<&Path>,
    top: usize,
    timeout: Duration,
    paths: &LabPaths,
    progress: &Progress,
) -> Result<FunctionsComparison> {
    let valgrind = find_valgrind()
        .ok_or_else(|| anyhow!("--functions needs valgrind (callgrind), which was not found"))?;
    let task = progress.spinner(&match depth {
        Some(depth) => {
            format!("counting instructions per function under callgrind (depth {depth})")
        }
        None => "counting instructions per function under callgrind (depth the engine's default)"
            .to_string(),
    });
    let request = BenchRequest {
        depth,
        full_eval: false,
        positions,
    };
    let commands = [
        adapter.bench_command(binaries[0], &request)?,
        adapter.bench_command(binaries[1], &request)?,
    ];
    let counts: Result<Vec<FunctionCosts>> = thread::scope(|scope| {
        let handles: Vec<_> = commands
            .iter()
            .zip(["A", "B"])
            .zip(binaries)
            .map(|((command, label), binary)| {
                let out_file = paths.scratch.join(format!(
                    "callgrind-functions-{}-{label}.out",
                    std::process::id()
                ));
                let valgrind = &valgrind;
                scope.spawn(move || {
                    Callgrind {
                        valgrind,
                        command,
                        binary,
                        out_file: &out_file,
                        timeout,
                        detail: Detail::Functions,
                    }
                    .functions()
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
    Ok(compare_functions(
        depth,
        &counts[0],
        &counts[1],
        top,
        FunctionsWhy::Requested,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::engine::callgrind::SAMPLE;

    #[test]
    fn ranks_the_largest_self_change_first() {
        let a = crate::engine::callgrind::parse_functions(SAMPLE).unwrap();
        let mut b = a.clone();
        b.functions
            .get_mut("squall::drawish_check")
            .unwrap()
            .self_ir += 31;
        b.functions.get_mut("squall::main").unwrap().self_ir -= 5;
        let comparison = compare_functions(Some(4), &a, &b, 2, FunctionsWhy::Requested);
        assert_eq!(comparison.movers.len(), 2);
        assert_eq!(comparison.functions_counted, 3);
        assert_eq!(comparison.movers[0].function, "squall::drawish_check");
        assert_eq!(comparison.movers[0].self_delta, 31);
        assert!((comparison.movers[0].self_delta_pct_of_total - 3.1).abs() < 1e-9);
        assert_eq!(comparison.movers[1].self_delta, -5);
    }
}
