//! `--format json`: the serde form of the report structs, documented in docs/lab-json.md.

use super::Report;

pub(crate) fn render(report: &Report) -> String {
    let rendered = match report {
        Report::Comparison(comparison) => serde_json::to_string_pretty(comparison),
        Report::Bench(bench) => serde_json::to_string_pretty(bench),
        Report::Baseline(baseline) => serde_json::to_string_pretty(baseline),
        Report::Profile(output) => serde_json::to_string_pretty(output),
        Report::Match(report) => serde_json::to_string_pretty(report),
        // A calibration's samples and bins: one line per array of numbers.
        Report::Calibration(report) => {
            return crate::calibration::json_rows::to_json_text(report)
                .unwrap_or_else(|error| format!("{{\"error\": \"{error}\"}}\n"));
        }
        Report::History(report) => serde_json::to_string_pretty(report),
        Report::Bisect(report) => serde_json::to_string_pretty(report),
        Report::Tune(report) => serde_json::to_string_pretty(report),
        Report::SpeedElo(report) => serde_json::to_string_pretty(report),
        Report::Verdict(report) => serde_json::to_string_pretty(report),
        Report::Frontier(report) => serde_json::to_string_pretty(report),
        Report::SameBinary(output) => serde_json::to_string_pretty(output),
        // Commands that print text take no --format; as JSON their text is one string.
        Report::Text(text) => serde_json::to_string_pretty(text),
    };
    // Serialising plain structs of numbers and strings cannot fail; NaN becomes null.
    rendered.unwrap_or_else(|error| format!("{{\"error\": \"{error}\"}}")) + "\n"
}
