//! `--format json`: the serde form of the report structs, documented in docs/lab-json.md.

use super::Report;

pub fn render(report: &Report) -> String {
    let rendered = match report {
        Report::Comparison(comparison) => serde_json::to_string_pretty(comparison),
        Report::Bench(bench) => serde_json::to_string_pretty(bench),
        Report::Baseline(baseline) => serde_json::to_string_pretty(baseline),
        Report::Match(report) => serde_json::to_string_pretty(report),
    };
    // Serialising plain structs of numbers and strings cannot fail; NaN becomes null.
    rendered.unwrap_or_else(|error| format!("{{\"error\": \"{error}\"}}")) + "\n"
}
