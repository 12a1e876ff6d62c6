//! The `compare --functions` section: top movers by change of self cost.

use crate::analysis::functions::{FunctionsComparison, FunctionsWhy};
use crate::digits::thousands;

/// `+3.1 M Ir`, `-850.0 k Ir`, `+12 Ir`.
pub(crate) fn format_ir_delta(delta: i64) -> String {
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
pub(crate) fn describe_delta(delta: i64, pct_of_total: f64) -> String {
    format!("{}, {pct_of_total:+.2}% of total", format_ir_delta(delta))
}

/// `[function, A self, B self, self change, inclusive change]` rows, largest mover first.
pub(crate) fn mover_rows(comparison: &FunctionsComparison) -> Vec<[String; 5]> {
    comparison
        .movers
        .iter()
        .map(|mover| {
            [
                mover.function.clone(),
                thousands(mover.a.self_ir),
                thousands(mover.b.self_ir),
                describe_delta(mover.self_delta, mover.self_delta_pct_of_total),
                describe_delta(mover.inclusive_delta, mover.inclusive_delta_pct_of_total),
            ]
        })
        .collect()
}

pub(crate) const MOVER_HEADER: [&str; 5] = [
    "function",
    "A self Ir",
    "B self Ir",
    "self change",
    "inclusive change",
];

pub(crate) fn title(comparison: &FunctionsComparison) -> String {
    let why = match comparison.why {
        FunctionsWhy::Requested => "Top",
        FunctionsWhy::InstructionsMoved => {
            "Instructions per node moved with the same signature; where: top"
        }
    };
    format!(
        "{why} {} function movers (callgrind Ir at depth {}, {} functions; % of A's total {})",
        comparison.movers.len(),
        super::describe_depth(comparison.depth),
        comparison.functions_counted,
        thousands(comparison.a_total)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas_read_in_units_of_ir() {
        assert_eq!(describe_delta(3_100_000, 1.8), "+3.1 M Ir, +1.80% of total");
        assert_eq!(format_ir_delta(-850_000), "-850.0 k Ir");
        assert_eq!(format_ir_delta(12), "+12 Ir");
    }
}
