//! The page of `lab history` (JSON `kind: "history"`, docs/lab-json.md): NPS per machine,
//! instructions per node and eval exit shares over the commits of the range, oldest first, each
//! with the signature changes marked; then the commits themselves. Drawn from the JSON only, so
//! `lab history --export-html` and `lab report` give the same bytes. What the JSON of an older
//! lab lacks (`machine`, `machines`, `measured_unix`) the page says it lacks.

pub(crate) mod commit_axis;
pub(crate) mod exits;
pub(crate) mod instructions;
pub(crate) mod nps;

use std::fmt::Write as _;

use anyhow::{bail, Context, Result};
use serde::Deserialize;

use crate::calendar::utc_minute;
use crate::digits::thousands;
use crate::history::store::SeriesSettings;
use crate::report::history::settings_line;
use crate::report::html::model::Machine;
use crate::report::html::plot::Footer;
use crate::report::html::{escape, fact, head, section};
use crate::report::NO_EVAL_EXITS;
use commit_axis::CommitAxis;

#[derive(Debug, Deserialize)]
struct Doc {
    range: String,
    series: String,
    machine_id: String,
    settings: SeriesSettings,
    commits_in_range: usize,
    rows: Vec<Row>,
    #[serde(default)]
    machine: Option<Machine>,
    #[serde(default)]
    machines: Option<Vec<MachineLine>>,
    /// Absent in the JSON of an older lab: no failed points.
    #[serde(default)]
    failed: Vec<Failed>,
    /// Absent in the JSON of an older lab: no steps were sought.
    #[serde(default)]
    steps: Option<Vec<Step>>,
}

#[derive(Debug, Deserialize)]
struct Step {
    metric: String,
    before: Commit,
    after: Commit,
    change_pct: f64,
    regression: bool,
    confirm: String,
}

#[derive(Debug, Deserialize)]
struct Failed {
    position: usize,
    commit: Commit,
    stage: String,
    error: String,
    failed_now: bool,
}

#[derive(Debug, Deserialize)]
struct Row {
    commit: Commit,
    signature: u64,
    signature_changed: bool,
    nps: Nps,
    instructions_per_node: Option<f64>,
    #[serde(default)]
    instructions_skipped: Option<String>,
    eval_rates: Option<Rates>,
    #[serde(default)]
    measured_unix: Option<u64>,
    #[serde(default)]
    same_binary_as: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Commit {
    id: String,
    short: String,
    date: String,
    subject: String,
}

#[derive(Debug, Deserialize)]
struct Nps {
    median: Option<f64>,
    #[serde(default)]
    min: Option<f64>,
    #[serde(default)]
    max: Option<f64>,
}

#[derive(Debug, Deserialize)]
struct Rates {
    super_lazy: Option<f64>,
    lazy: Option<f64>,
    full: Option<f64>,
}

#[derive(Debug, Deserialize)]
struct MachineLine {
    label: String,
    this_machine: bool,
    points: Vec<Point>,
}

#[derive(Debug, Deserialize)]
struct Point {
    commit: String,
    nps: Option<f64>,
}

/// The page of a history's JSON.
pub(crate) fn page(value: &serde_json::Value) -> Result<String> {
    let doc = Doc::deserialize(value).context("the history JSON lacks a field the page reads")?;
    let (Some(oldest), Some(newest)) = (doc.rows.first(), doc.rows.last()) else {
        bail!("the history JSON has no rows: there is nothing to draw");
    };
    let axis = CommitAxis {
        commits: doc.rows.iter().map(|row| row.commit.id.clone()).collect(),
        changes: (0..doc.rows.len())
            .filter(|&i| doc.rows[i].signature_changed)
            .collect(),
    };
    let machine = match &doc.machine {
        Some(machine) => format!(
            "{} ({} cores) · {}",
            machine.cpu_model.trim(),
            machine.cores,
            doc.machine_id
        ),
        None => format!(
            "machine {} (this JSON records no description of it)",
            doc.machine_id
        ),
    };
    let commits = format!(
        "{} of {} commits in the range, {} ({}) to {} ({})",
        doc.rows.len(),
        doc.commits_in_range,
        oldest.commit.short,
        oldest.commit.date,
        newest.commit.short,
        newest.commit.date
    );
    let measured = measured(&doc.rows);
    let footer = |machine: &str| {
        Footer(format!(
            "lab history {} · {machine} · commits {} – {} · {measured}",
            doc.range, oldest.commit.date, newest.commit.date
        ))
    };

    let mut html = head(&format!("lab history {}", doc.range));
    let _ = write!(
        html,
        "<table class=\"facts\">\n{}{}{}{}{}{}{}</table>\n",
        fact("range", &doc.range),
        fact("commits", &commits),
        fact("settings", &settings_line(&doc.settings)),
        fact("machine", &machine),
        fact("series", &doc.series),
        fact("measured", &measured),
        fact("signature changes", &changes_line(&doc.rows)),
    );

    let lines = nps_lines(&doc);
    let nps_footer = if lines.len() > 1 {
        footer(&format!("{} machines, this one {machine}", lines.len()))
    } else {
        footer(&machine)
    };
    let others = lines.len().saturating_sub(1);
    let nps_text = format!(
        "The median NPS of each commit's rounds, one line per machine: this machine's and {} \
         of the store with the same toolchain and settings (a committed store gathers CI \
         runners and developers' boxes); this machine's bars span its slowest to fastest \
         round. Commits built into one engine binary share one measurement. Machines differ \
         in level; a change every machine shows is the code's. Purple lines: the bench \
         signature changed at that commit, so the search itself differs from the commit \
         before.",
        match others {
            0 => "no other machine".to_string(),
            1 => "1 other machine".to_string(),
            n => format!("{n} other machines"),
        }
    );
    section(
        &mut html,
        "NPS per machine",
        &nps_text,
        Some(nps::draw(&lines, &axis, &nps_footer)?),
    );

    let instructions: Vec<(usize, f64)> = doc
        .rows
        .iter()
        .enumerate()
        .filter_map(|(i, row)| Some((i, row.instructions_per_node.filter(|v| v.is_finite())?)))
        .collect();
    if instructions.is_empty() {
        let reason = doc
            .rows
            .iter()
            .find_map(|row| row.instructions_skipped.as_deref())
            .unwrap_or("no commit has a count");
        section(
            &mut html,
            "Instructions per node",
            &format!("Not measured ({reason}): nothing to draw."),
            None,
        );
    } else {
        let missing = doc.rows.len() - instructions.len();
        let text = format!(
            "Instructions per node under callgrind at depth {} (start-up work subtracted), one \
             line: counts depend on the binary, not on the machine.{}",
            doc.settings.instr_depth,
            if missing > 0 {
                format!(" {missing} commits have no count and no point.")
            } else {
                String::new()
            }
        );
        section(
            &mut html,
            "Instructions per node",
            &text,
            Some(instructions::draw(
                &instructions,
                doc.settings.instr_depth,
                &axis,
                &footer(&machine),
            )?),
        );
    }

    let shares: Vec<(usize, [f64; 3])> = doc
        .rows
        .iter()
        .enumerate()
        .filter_map(|(i, row)| {
            let rates = row.eval_rates.as_ref()?;
            let shares = [rates.super_lazy?, rates.lazy?, rates.full?];
            shares.iter().all(|s| s.is_finite()).then_some((i, shares))
        })
        .collect();
    if shares.is_empty() {
        section(
            &mut html,
            "Eval exit shares",
            &format!("{NO_EVAL_EXITS} Null in the JSON: nothing to draw."),
            None,
        );
    } else {
        section(
            &mut html,
            "Eval exit shares",
            "Of each commit's eval calls in the bench, the share that exits in the super-lazy, \
             lazy and full tier, stacked to 100%.",
            Some(exits::draw(&shares, &axis, &footer(&machine))?),
        );
    }

    if let Some(steps) = &doc.steps {
        steps_table(&mut html, steps);
    }
    commit_table(&mut html, &doc.rows);
    failed_table(&mut html, &doc.failed);
    html.push_str("</body>\n</html>\n");
    Ok(html)
}

/// This machine's line and the other machines', as the JSON lists them; from the rows alone
/// when the JSON is older than `machines`.
fn nps_lines(doc: &Doc) -> Vec<nps::Line> {
    let index = |commit: &str| doc.rows.iter().position(|row| row.commit.id == commit);
    let spreads = || -> Vec<(usize, f64, f64)> {
        doc.rows
            .iter()
            .enumerate()
            .filter_map(|(i, row)| {
                let (low, high) = (row.nps.min?, row.nps.max?);
                (low.is_finite() && high.is_finite() && low <= high).then_some((i, low, high))
            })
            .collect()
    };
    match &doc.machines {
        Some(machines) if !machines.is_empty() => machines
            .iter()
            .map(|line| nps::Line {
                label: if line.this_machine {
                    format!("this machine: {}", line.label)
                } else {
                    line.label.clone()
                },
                points: line
                    .points
                    .iter()
                    .filter_map(|p| Some((index(&p.commit)?, p.nps.filter(|n| n.is_finite())?)))
                    .collect(),
                spreads: if line.this_machine {
                    spreads()
                } else {
                    Vec::new()
                },
            })
            .collect(),
        _ => vec![nps::Line {
            label: format!("machine {}", doc.machine_id),
            points: doc
                .rows
                .iter()
                .enumerate()
                .filter_map(|(i, row)| Some((i, row.nps.median.filter(|n| n.is_finite())?)))
                .collect(),
            spreads: spreads(),
        }],
    }
}

/// `measured 2026-05-04 13:07 UTC – 2026-05-05 09:00 UTC`, or that the JSON does not say.
fn measured(rows: &[Row]) -> String {
    let times: Vec<u64> = rows.iter().filter_map(|row| row.measured_unix).collect();
    match (times.iter().min(), times.iter().max()) {
        (Some(first), Some(last)) if first == last => format!("measured {}", utc_minute(*first)),
        (Some(first), Some(last)) => {
            format!("measured {} – {}", utc_minute(*first), utc_minute(*last))
        }
        _ => "measurement dates not recorded".to_string(),
    }
}

fn changes_line(rows: &[Row]) -> String {
    let changes: Vec<String> = rows
        .iter()
        .enumerate()
        .filter(|(_, row)| row.signature_changed)
        .map(|(i, row)| {
            format!(
                "{} (commit {} of {}, {} nodes)",
                row.commit.short,
                i + 1,
                rows.len(),
                thousands(row.signature)
            )
        })
        .collect();
    if changes.is_empty() {
        "none".to_string()
    } else {
        changes.join("; ")
    }
}

/// The commits behind the ticks: short id, date, subject, signature.
fn commit_table(html: &mut String, rows: &[Row]) {
    html.push_str(
        "<section>\n<h2>Commits</h2>\n<table class=\"commits\">\n<tr><th>#</th><th>commit</th>\
         <th>date</th><th>subject</th><th>signature (nodes)</th></tr>\n",
    );
    for (i, row) in rows.iter().enumerate() {
        let mark = if row.signature_changed { "◆ " } else { "" };
        let commit = match &row.same_binary_as {
            Some(first) => format!("{} (binary of {first})", row.commit.short),
            None => row.commit.short.clone(),
        };
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td>{}</td><td class=\"date\">{}</td><td class=\"subject\">{}</td><td>{mark}{}</td></tr>",
            i + 1,
            escape(&commit),
            escape(&row.commit.date),
            escape(&row.commit.subject),
            thousands(row.signature)
        );
    }
    html.push_str("</table>\n</section>\n");
}

/// The changes of level beyond the noise, each with the command that would confirm it.
fn steps_table(html: &mut String, steps: &[Step]) {
    html.push_str("<section>\n<h2>Steps</h2>\n");
    if steps.is_empty() {
        html.push_str(
            "<p>No change of level beyond the noise between neighbouring segments (NPS by 1%, \
             instructions per node by 0.5%, and by more than the rounds' spread).</p>\n\
             </section>\n",
        );
        return;
    }
    html.push_str(
        "<p>Changes of level beyond the noise between neighbouring segments, as asv detects \
         them; bisect a regression, compare an improvement.</p>\n<table class=\"commits\">\n\
         <tr><th>from</th><th>to</th><th>metric</th><th>change</th><th>confirm with</th></tr>\n",
    );
    for step in steps {
        let kind = if step.regression {
            "regression"
        } else {
            "improvement"
        };
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:+.1}% ({kind})</td><td><code>{}</code></td></tr>",
            escape(&step.before.short),
            escape(&step.after.short),
            escape(&step.metric.replace('_', " ")),
            step.change_pct,
            escape(&step.confirm)
        );
    }
    html.push_str("</table>\n</section>\n");
}

/// The commits that could not be built or measured, with the end of each error; nothing when
/// every commit was measured.
fn failed_table(html: &mut String, failed: &[Failed]) {
    if failed.is_empty() {
        return;
    }
    let _ = writeln!(
        html,
        "<section>\n<h2>Failed points</h2>\n<p>{} selected commit(s) could not be built or \
         measured; the plots leave them out. <code>lab history --retry-failed</code> tries them \
         again.</p>\n<table class=\"commits\">\n<tr><th>#</th><th>commit</th><th>date</th>\
         <th>subject</th><th>failed</th><th>end of the error</th></tr>",
        failed.len()
    );
    for failure in failed {
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td>{}</td><td class=\"date\">{}</td><td class=\"subject\">{}</td><td>{}{}</td><td><pre>{}</pre></td></tr>",
            failure.position.saturating_add(1),
            escape(&failure.commit.short),
            escape(&failure.commit.date),
            escape(&failure.commit.subject),
            escape(&failure.stage),
            if failure.failed_now { " (now)" } else { "" },
            escape(&failure.error)
        );
    }
    html.push_str("</table>\n</section>\n");
}
