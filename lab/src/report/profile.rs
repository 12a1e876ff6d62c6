//! The `lab profile` report: each run's figures and the key frames' sample shares.

use super::signed_pct;
use super::style::Style;
use super::table::Table;
use crate::profile::{ProfileOutput, ProfileRun};

fn pct(fraction: f64) -> String {
    format!("{:.1}%", fraction * 100.0)
}

/// `[frame, inclusive, self]` for one run, or `[frame, A, B, delta]` for two.
fn rows(output: &ProfileOutput) -> Table {
    match &output.b {
        None => Table::new(["frame", "inclusive", "self", "samples (incl.)"]).with_rows(
            output.a.frames.iter().map(|f| {
                vec![
                    f.frame.clone(),
                    pct(f.inclusive),
                    pct(f.self_share),
                    f.inclusive_samples.to_string(),
                ]
            }),
        ),
        Some(b) => Table::new(["frame", "A incl.", "B incl.", "delta", "A self", "B self"])
            .with_rows(output.a.frames.iter().zip(&b.frames).map(|(a, b)| {
                vec![
                    a.frame.clone(),
                    pct(a.inclusive),
                    pct(b.inclusive),
                    format!("{:+.2} pp", (b.inclusive - a.inclusive) * 100.0),
                    pct(a.self_share),
                    pct(b.self_share),
                ]
            })),
    }
}

fn describe_run(label: &str, run: &ProfileRun) -> String {
    let commit = run.commit.as_deref().map_or(String::new(), |c| {
        format!(" ({})", crate::input::short_commit(c))
    });
    format!(
        "{label}{}{commit}: profile run time {:.2} s (engine: {} ms), {} samples by {} at {} ({} Hz requested), {} nodes\n  flamegraph: {}\n  folded stacks: {}",
        run.spec,
        run.run_time_s,
        run.engine_profile_time_ms
            .map_or("?".to_string(), |ms| ms.to_string()),
        run.samples,
        run.sampler,
        run.effective_hz
            .map_or("an unknown rate".to_string(), |hz| format!("{hz:.0} Hz effective")),
        run.frequency,
        run.nodes.map_or("?".to_string(), |n| n.to_string()),
        run.svg.display(),
        run.folded.display(),
    )
}

/// The terminal and markdown report; JSON is the serde form of [`ProfileOutput`].
pub(crate) fn render(output: &ProfileOutput, style: Style) -> String {
    let table = rows(output);
    let (a_label, b_label) = if output.b.is_some() {
        ("A = ", "B = ")
    } else {
        ("", "")
    };
    let mut out = format!("lab profile\n{}\n", describe_run(a_label, &output.a));
    if let Some(b) = &output.b {
        out.push_str(&format!("{}\n", describe_run(b_label, b)));
        let change = b.run_time_s / output.a.run_time_s.max(1e-9) - 1.0;
        out.push_str(&format!(
            "profile run time B vs A: {}\n",
            signed_pct(change * 100.0)
        ));
    }
    if let Some(diff) = &output.diff_svg {
        out.push_str(&format!(
            "differential flamegraph A → B (widths: B; red: larger share in B, blue: smaller): {}\n",
            diff.display()
        ));
    }
    out.push_str("\nSample shares (inclusive: stacks containing the frame; self: leaf frame)\n");
    match style {
        Style::Markdown => {
            out.push('\n');
            out.push_str(&table.markdown());
        }
        Style::Terminal => {
            out.push_str(&table.terminal());
            out.push('\n');
        }
    }
    out
}
