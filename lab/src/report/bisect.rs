//! The `lab bisect` section: what was found, what the search cost, each probe, and then the
//! comparison of the commit found with its parent in the `lab compare` layout.

use super::comparison::{render_as, Standing};
use super::signed_pct;
use super::style::Style;
use super::table::{cut, Table, SUBJECT_WIDTH};
use crate::digits::thousands;
use crate::history::bisect::{BisectReport, Metric, Probe, Role};
use crate::history::range::CommitInfo;

/// A commit and its subject; in markdown the subject is a code span, shown literally.
fn commit(commit: &CommitInfo, style: Style) -> String {
    format!("{} {}", commit.short, style.code(&commit.subject))
}

pub(crate) fn title(report: &BisectReport, style: Style) -> String {
    let threshold = match report.metric {
        Metric::Signature => "any change of the node count".to_string(),
        Metric::Instructions => format!(
            "instructions per node up by {}% or more",
            report.threshold_pct
        ),
        Metric::Nps => format!(
            "paired time per node significantly slower by more than {}%",
            report.threshold_pct
        ),
    };
    format!(
        "lab bisect --metric {}: {threshold}, relative to GOOD\nGOOD {}\nBAD  {} ({} commits after GOOD)",
        report.metric.name(),
        commit(&report.good, style),
        commit(&report.bad, style),
        report.path_length
    )
}

pub(crate) fn finding(report: &BisectReport, style: Style) -> String {
    let mut out = match (&report.first_bad, report.first_bad_among.as_slice()) {
        (Some(found), _) => format!("First bad commit: {}", commit(found, style)),
        (None, [first, .., last]) => format!(
            "The first bad commit is one of {} commits from {} to {}: {} is bad and the ones \
             before it, from {}, do not build, so the search could not split them",
            report.first_bad_among.len(),
            first.short,
            last.short,
            last.short,
            first.short
        ),
        (None, _) => {
            "No regression between GOOD and BAD: BAD is not beyond the threshold.".to_string()
        }
    };
    if !report.skipped.is_empty() {
        let skipped: Vec<String> = report
            .skipped
            .iter()
            .map(|s| format!("{} ({})", s.commit.short, s.position))
            .collect();
        out.push_str(&format!("\nSkipped (do not build): {}", skipped.join(", ")));
    }
    out
}

pub(crate) fn cost(report: &BisectReport) -> String {
    let probes = report
        .probes
        .iter()
        .filter(|p| p.role == Role::Probe)
        .count();
    format!(
        "Search: {} builds ({} built now, {} from the cache), {} measurements, {probes} bisection probes over {} commits",
        report.builds,
        report.fresh_builds,
        report.builds - report.fresh_builds,
        report.measurements,
        report.path_length
    )
}

fn figure(metric: Metric, probe: &Probe) -> String {
    match (metric, probe.value) {
        (_, None) => "—".to_string(),
        (Metric::Signature, Some(nodes)) => thousands(nodes.round() as u64),
        (Metric::Instructions, Some(per_node)) => format!("{per_node:.1}"),
        (Metric::Nps, Some(ratio)) => match probe.ci {
            Some([low, high]) if low.is_finite() && high.is_finite() => {
                format!("{ratio:.4} (CI {low:.4} – {high:.4})")
            }
            _ => format!("{ratio:.4}"),
        },
    }
}

pub(crate) const PROBE_HEADER: [&str; 6] = [
    "step",
    "commit (position)",
    "subject",
    "figure",
    "vs GOOD",
    "judged",
];

pub(crate) fn probe_rows(report: &BisectReport) -> Vec<[String; 6]> {
    report
        .probes
        .iter()
        .enumerate()
        .map(|(step, probe)| {
            let judged = match probe.role {
                Role::Reference => "reference",
                _ if probe.beyond => "bad",
                _ => "good",
            };
            [
                (step + 1).to_string(),
                format!("{} ({})", probe.commit.short, probe.position),
                cut(&probe.commit.subject, SUBJECT_WIDTH),
                figure(report.metric, probe),
                probe.change_pct.map_or_else(String::new, signed_pct),
                judged.to_string(),
            ]
        })
        .collect()
}

fn figure_name(metric: Metric) -> &'static str {
    match metric {
        Metric::Signature => "figure: bench nodes",
        Metric::Instructions => "figure: instructions per node",
        Metric::Nps => "figure: time per node relative to GOOD (paired), change: NPS",
    }
}

pub(crate) fn render(report: &BisectReport, style: Style) -> String {
    let probes = Table::new(PROBE_HEADER)
        .with_rows(probe_rows(report))
        .render(style);
    let comparison = report
        .comparison
        .as_ref()
        .map(|comparison| render_as(comparison, style, Standing::BisectionStep));
    let exit = if report.first_bad.is_some() || !report.first_bad_among.is_empty() {
        1
    } else {
        0
    };
    match style {
        Style::Terminal => {
            let mut out = format!(
                "{}\n\n{}\n{}\n\nProbes ({})\n{probes}\n",
                title(report, style),
                finding(report, style),
                cost(report),
                figure_name(report.metric)
            );
            if let Some(comparison) = comparison {
                out.push_str("\nThe commit found against its parent (lab compare):\n\n");
                out.push_str(&comparison);
            }
            out.push_str(&format!("\nBisect: exit {exit}\n"));
            out
        }
        Style::Markdown => {
            let mut out = format!(
                "## {}\n\n**{}**\n\n{}\n\n### Probes\n\n{}\n\n{probes}",
                title(report, style).replace('\n', "\n\n"),
                finding(report, style),
                cost(report),
                figure_name(report.metric)
            );
            if let Some(comparison) = comparison {
                out.push_str("\n### The commit found against its parent\n\n");
                out.push_str(&comparison.replacen("## ", "#### ", 1));
            }
            out.push_str(&format!("\n**Bisect: exit {exit}**\n"));
            out
        }
    }
}
