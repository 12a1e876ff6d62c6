//! The HTML report of a comparison, a match, a calibration, a history, a speed-Elo fit, a
//! verdict or a frontier (`--export-html`, `lab report`): one self-contained page, inline SVG plots drawn by plotters, no script and no
//! network reference.
//! The page is always drawn from the report's JSON, so a report exported while measuring and
//! one drawn later from the stored JSON are the same bytes. One folder per page with its plots
//! (`compare/` holds the comparison page's plots, the page itself is here); `plot.rs` holds what
//! they share, `model.rs` what the comparison page reads of the JSON.

pub(crate) mod calibration;
pub(crate) mod compare;
pub(crate) mod frontier;
pub(crate) mod history;
pub(crate) mod matches;
pub(crate) mod model;
pub(crate) mod plot;
pub(crate) mod speed_elo;
pub(crate) mod verdict;

use crate::calendar::utc_minute;
use std::fmt::Write as _;

use anyhow::{bail, Context, Result};

use super::{json, Report, NO_EVAL_EXITS};
use crate::analysis::bootstrap::bootstrap_geometric_means;
use crate::schema::{LAB_JSON_SCHEMA_VERSION, MATCH_JSON_SCHEMA_VERSION};
use model::Doc;
use plot::Footer;

/// Resamples of the bootstrap plot, and the seed that makes the plot the same every time.
pub(crate) const RESAMPLES: usize = 2000;
pub(crate) const SEED: u64 = 0x5EED;

/// The page of a report that has one. Always drawn through the report's JSON text, exactly as
/// `lab report` reads it, so both give the same bytes.
pub fn render(report: &Report) -> Result<String> {
    match report {
        Report::Comparison(_)
        | Report::Match(_)
        | Report::History(_)
        | Report::SameBinary(_)
        | Report::SpeedElo(_)
        | Report::Verdict(_)
        | Report::Frontier(_) => {
            let value: serde_json::Value = serde_json::from_str(&json::render(report))
                .context("the report's own JSON does not parse")?;
            from_json(&value)
        }
        // The page of a calibration is drawn from its calibration file, which `lab report`
        // redraws alike.
        Report::Calibration(report) => from_json(&serde_json::to_value(&report.calibration)?),
        _ => bail!("an HTML report is drawn for {PAGES} only"),
    }
}

/// The reports that have a page, as errors name them.
pub(crate) const PAGES: &str =
    "compare, tiers, baseline check, match, calibrate, history, speed-elo, verdict and frontier";

/// The `schema_version` of each kind of document a page is drawn for: a document of another
/// version may keep a field's name and change its meaning, so it is refused, not drawn.
const READ_VERSIONS: [(&str, u64); 11] = [
    ("compare", LAB_JSON_SCHEMA_VERSION as u64),
    ("tiers", LAB_JSON_SCHEMA_VERSION as u64),
    ("baseline-check", LAB_JSON_SCHEMA_VERSION as u64),
    ("calibration", LAB_JSON_SCHEMA_VERSION as u64),
    ("history", LAB_JSON_SCHEMA_VERSION as u64),
    ("match", MATCH_JSON_SCHEMA_VERSION as u64),
    ("speed-elo", LAB_JSON_SCHEMA_VERSION as u64),
    ("verdict", LAB_JSON_SCHEMA_VERSION as u64),
    ("frontier", LAB_JSON_SCHEMA_VERSION as u64),
    (
        crate::verdict::models::SPEED_ELO_KIND,
        crate::verdict::models::SPEED_ELO_SCHEMA_VERSION as u64,
    ),
    (
        crate::calibration::data::KIND,
        crate::calibration::data::SCHEMA_VERSION,
    ),
];

/// Refuses a document whose `schema_version` is not the one this lab reads for its kind,
/// naming the versions it reads.
fn check_version(kind: &str, value: &serde_json::Value) -> Result<()> {
    let Some(&(_, expected)) = READ_VERSIONS.iter().find(|(known, _)| *known == kind) else {
        return Ok(());
    };
    let found = value.get("schema_version");
    if found.and_then(serde_json::Value::as_u64) == Some(expected) {
        return Ok(());
    }
    let found = match found {
        None => "no schema_version".to_string(),
        Some(version) => format!(
            "schema_version {}",
            crate::input::excerpt(&version.to_string(), 40)
        ),
    };
    let read: Vec<String> = READ_VERSIONS
        .iter()
        .map(|(kind, version)| format!("{kind} {version}"))
        .collect();
    bail!(
        "a \"{kind}\" report of {found} is not drawn: this lab reads schema_version {}",
        read.join(", ")
    )
}

/// The page of a stored JSON report, chosen by its `kind`. Every string of the report is made
/// visible first (see [`super::sanitize`]): an engine's name or a commit subject reaches the
/// page's text and its plots without a control character.
pub fn from_json(value: &serde_json::Value) -> Result<String> {
    let value = &super::sanitize::visible_json(value);
    if let Some(kind) = value.get("kind").and_then(|kind| kind.as_str()) {
        check_version(kind, value)?;
    }
    match value.get("kind").and_then(|kind| kind.as_str()) {
        Some("compare" | "tiers" | "baseline-check") => page(&Doc::from_json(value)?),
        Some("match") => matches::page(&matches::model::MatchDoc::from_json(value)?),
        Some(crate::calibration::data::KIND) => calibration::page(value),
        // `lab calibrate --format json` holds the calibration file it drew.
        Some("calibration") => calibration::page(
            value
                .get("calibration")
                .context("a calibration report without its \"calibration\" file")?,
        ),
        Some("history") => history::page(value),
        Some("speed-elo") => speed_elo::page(value),
        Some(crate::verdict::models::SPEED_ELO_KIND) => speed_elo::page(value),
        Some("verdict") => verdict::page(value),
        Some("frontier") => frontier::page(value),
        Some("same-binary") => Ok(same_binary_page(value)),
        Some(kind) => bail!(
            "an HTML report is drawn for {PAGES}, not for kind \"{}\"",
            crate::input::excerpt(kind, 80)
        ),
        None => bail!("not a lab JSON report (no \"kind\" field; see docs/lab-json.md)"),
    }
}

/// The page of a comparison that measured nothing: its one line.
fn same_binary_page(value: &serde_json::Value) -> String {
    let text = |side: &str, field: &str| {
        value[side][field]
            .as_str()
            .map(|text| crate::input::excerpt(text, 200).into_owned())
            .unwrap_or_default()
    };
    let name = |side: &str| {
        let id = value[side]["commit"]
            .as_str()
            .map_or_else(|| text(side, "tree"), |commit| commit.to_string());
        format!(
            "{} ({})",
            text(side, "spec"),
            crate::input::short_commit(&id)
        )
    };
    let line = super::same_binary_sentence(
        &name("a"),
        &name("b"),
        value["binary_key"].as_str().unwrap_or(""),
    );
    let mut html = head("lab compare: one engine binary");
    let _ = writeln!(html, "<p class=\"note\">{}</p>", escape(&line));
    html.push_str("</body>\n</html>\n");
    html
}

fn page(doc: &Doc) -> Result<String> {
    let (a_name, b_name) = (doc.a.revision_name(), doc.b.revision_name());
    let (machine, date) = provenance(doc);
    let footer = Footer(format!("A = {a_name} · B = {b_name} · {machine} · {date}"));
    let labels = (format!("A = {a_name}"), format!("B = {b_name}"));
    let labels = (labels.0.as_str(), labels.1.as_str());

    let mut html = head(&format!("lab {}: A = {a_name}, B = {b_name}", doc.kind));
    let _ = write!(
        html,
        "<table class=\"facts\">\n{}{}{}{}{}{}{}{}</table>\n",
        fact("A", &format!("{a_name}, {} engine", doc.a.engine.name)),
        fact("B", &format!("{b_name}, {} engine", doc.b.engine.name)),
        fact("machine", &machine),
        fact("date", &date),
        fact("speed", &speed_summary(doc)),
        doc.speed_elo.as_ref().map_or_else(String::new, |elo| fact(
            "speed in Elo",
            &super::comparison::speed_elo_words(elo)
        )),
        fact("instructions", &instructions_summary(doc)),
        fact("verdict", &doc.change),
    );
    html.push_str(&figures_table(doc));
    for (class, lines) in [("warning", &doc.warnings), ("note", &doc.notes)] {
        for line in lines {
            let _ = writeln!(html, "<p class=\"{class}\">{}</p>", escape(line));
        }
    }

    section(
        &mut html,
        "NPS per round",
        "Each round's NPS of A and of B, in the order the ABBA pairs ran. A round the machine \
         disturbed shows as both sides dropping together; a change shows as B apart from A in \
         every round.",
        Some(compare::nps_rounds::draw(
            &doc.a.rounds(),
            &doc.b.rounds(),
            labels,
            &footer,
        )?),
    );

    let (ratios, source) = round_ratios(doc);
    let bootstrap = match (&doc.speed.cost_ratio, ratios.is_empty()) {
        (Some(cost), false) => {
            let resamples = bootstrap_geometric_means(&ratios, RESAMPLES, SEED);
            let lines = compare::bootstrap::Lines {
                estimate: cost.estimate.unwrap_or(f64::NAN),
                ci: cost.ci_low.zip(cost.ci_high),
                confidence: cost.confidence,
                threshold_pct: doc.settings.threshold_pct,
            };
            Some(compare::bootstrap::draw(&resamples, &lines, &footer)?)
        }
        _ => None,
    };
    let explanation = format!(
        "The B/A time-per-node ratios of the {} rounds ({source}) resampled {RESAMPLES} times \
         with replacement (fixed seed), each resample's geometric mean counted. The verdict \
         reads the t interval (green), not this histogram: with few rounds a bootstrap is too \
         narrow. Red lines: the regression and improvement thresholds.",
        ratios.len()
    );
    section(
        &mut html,
        "Speed ratio: bootstrap distribution",
        if bootstrap.is_some() {
            &explanation
        } else {
            "No paired timings: there is no speed ratio to draw."
        },
        bootstrap,
    );

    match (&doc.a.eval, &doc.b.eval) {
        (Some(a), Some(b)) => {
            section(
                &mut html,
                "Eval exits by tier and material bucket",
                "Of each material bucket's eval calls, the share that exits in each tier, A \
                 beside B.",
                Some(compare::exit_shares::draw(
                    &a.by_material_bucket,
                    &b.by_material_bucket,
                    labels,
                    &footer,
                )?),
            );
            let heatmap = (!a.by_side_buckets.is_empty() && !b.by_side_buckets.is_empty())
                .then(|| {
                    compare::side_buckets::draw(
                        &a.by_side_buckets,
                        &b.by_side_buckets,
                        labels,
                        &footer,
                    )
                })
                .transpose()?;
            section(
                &mut html,
                "Eval exits by side buckets",
                if heatmap.is_some() {
                    "For each pair of material buckets (the evaluated side's and its \
                     opponent's), the share of eval calls that exit in a cheap tier (super-lazy \
                     or lazy): A, B, and B − A in percentage points. Grey: never evaluated."
                } else {
                    "The JSON has no per-side-bucket exits (by_side_buckets)."
                },
                heatmap,
            );
        }
        _ => section(
            &mut html,
            "Eval exits",
            &format!("{NO_EVAL_EXITS} Null in the JSON: nothing to draw."),
            None,
        ),
    }

    match &doc.functions {
        Some(functions) if !functions.movers.is_empty() => section(
            &mut html,
            "Function movers",
            if functions.why.as_deref() == Some("instructions-moved") {
                "Instructions per node moved with the same signature: the functions whose self \
                 cost (callgrind Ir, from the instruction count's own runs) changed most from A \
                 to B, in percent of A's total: red costs B more, green less."
            } else {
                "The functions whose self cost (callgrind Ir) changed most from A to B, in \
                 percent of A's total: red costs B more, green less."
            },
            Some(compare::movers::draw(
                &functions.movers,
                functions.depth,
                &footer,
            )?),
        ),
        Some(_) => section(
            &mut html,
            "Function movers",
            "No function's cost moved.",
            None,
        ),
        None => section(
            &mut html,
            "Function movers",
            "Not measured: instructions per node did not move by 0.1% or more with the same \
             signature; run compare with --functions for per-function instruction movers.",
            None,
        ),
    }
    html.push_str("</body>\n</html>\n");
    Ok(html)
}

/// The rounds' ratios the bootstrap resamples, and where they come from. A JSON from before
/// `round_ratios` was recorded falls back to whole-run NPS ratios, which the page says.
fn round_ratios(doc: &Doc) -> (Vec<f64>, &'static str) {
    if let Some(ratios) = &doc.speed.round_ratios {
        return (ratios.clone(), "per-round medians of the paired ratios");
    }
    let ratios = doc
        .a
        .nps
        .runs
        .iter()
        .zip(&doc.b.nps.runs)
        .filter_map(|(a, b)| Some(a.as_ref()? / b.as_ref()?))
        .filter(|r| r.is_finite() && *r > 0.0)
        .collect();
    (
        ratios,
        "A's over B's whole-run NPS per round: this JSON does not record round_ratios",
    )
}

/// The machine and date of the measurement, or of this rendering, said to be such.
fn provenance(doc: &Doc) -> (String, String) {
    match &doc.measured {
        Some(measured) => measured_on(
            measured.hostname.as_deref(),
            &measured.machine.cpu_model,
            measured.machine.cores,
            measured.measured_unix,
        ),
        None => {
            let here = crate::machine::Machine::current();
            (
                format!(
                    "{} ({} cores): the machine this page was drawn on, the JSON records none",
                    here.cpu_model, here.cores
                ),
                "measurement date not recorded".to_string(),
            )
        }
    }
}

/// `host, CPU (N cores)` of a recorded measurement.
fn machine_of(hostname: Option<&str>, cpu: &str, cores: usize) -> String {
    let host = hostname.map_or_else(String::new, |h| format!("{h}, "));
    format!("{host}{cpu} ({cores} cores)")
}

/// The machine and date lines of a recorded measurement.
fn measured_on(hostname: Option<&str>, cpu: &str, cores: usize, unix: u64) -> (String, String) {
    (
        machine_of(hostname, cpu, cores),
        format!("measured {}", utc_minute(unix)),
    )
}

fn speed_summary(doc: &Doc) -> String {
    let Some(cost) = &doc.speed.cost_ratio else {
        return "no paired timings".to_string();
    };
    let estimate = cost
        .estimate
        .map_or_else(|| "—".to_string(), |e| format!("{e:.4}"));
    let interval = match (cost.ci_low, cost.ci_high) {
        (Some(low), Some(high)) => {
            format!("{:.0}% CI {low:.4} – {high:.4}", cost.confidence * 100.0)
        }
        _ => "no CI".to_string(),
    };
    let judged = if doc.speed.comparable {
        doc.speed.change.clone()
    } else {
        "not comparable, not judged".to_string()
    };
    format!(
        "B/A time per node {estimate} ({interval}, {} rounds, {} pairs, threshold {}%, {} rounds run): {judged}",
        cost.rounds, doc.speed.pairing, doc.settings.threshold_pct, doc.settings.rounds
    )
}

/// The figures table, the same cells the terminal prints (`report::comparison::figure_rows`).
fn figures_table(doc: &Doc) -> String {
    let Some(figures) = &doc.figures else {
        return "<p class=\"note\">This JSON does not record the figures table (it comes from \
                an older lab).</p>\n"
            .to_string();
    };
    let rows = super::comparison::figure_rows(
        figures,
        (doc.a.nps.runs.len(), doc.b.nps.runs.len()),
        doc.a.instructions.depth.or(doc.b.instructions.depth),
    );
    let mut table = String::from("<table class=\"figures\">\n<tr>");
    for name in super::comparison::FIGURES_HEADER {
        let _ = write!(table, "<th>{}</th>", escape(name));
    }
    table.push_str("</tr>\n");
    for row in rows {
        table.push_str("<tr>");
        for cell in row {
            let _ = write!(table, "<td>{}</td>", escape(&cell));
        }
        table.push_str("</tr>\n");
    }
    table.push_str("</table>\n");
    table
}

/// The instructions line of the terminal report, from the JSON.
fn instructions_summary(doc: &Doc) -> String {
    let Some(instructions) = &doc.instructions else {
        return "not recorded in this JSON".to_string();
    };
    let top_mover = doc
        .functions
        .as_ref()
        .filter(|functions| functions.why.as_deref() == Some("instructions-moved"))
        .and_then(|functions| functions.movers.first())
        .map(|mover| {
            format!(
                "{} ({})",
                mover.function,
                super::functions::describe_delta(mover.self_delta, mover.self_delta_pct_of_total)
            )
        });
    let sentence =
        super::comparison::instructions_sentence(&super::comparison::InstructionsFacts {
            skipped: doc.a.instructions.skipped_reason.as_deref().or(doc
                .b
                .instructions
                .skipped_reason
                .as_deref()),
            change_pct: instructions.per_node_change_pct,
            flagged: instructions.flagged,
            threshold_pct: doc.settings.instr_threshold_pct.unwrap_or(f64::NAN),
            signature_changed: doc.signature.as_ref().is_some_and(|s| s.changed),
            comparable: instructions.comparable,
            change: instructions.change,
            top_mover,
        });
    sentence
        .strip_prefix("Instructions: ")
        .unwrap_or(&sentence)
        .to_string()
}

/// The page up to its heading, `title` in both.
fn head(title: &str) -> String {
    let title = escape(title);
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{title}</h1>\n"
    )
}

fn fact(name: &str, value: &str) -> String {
    format!(
        "<tr><th>{}</th><td>{}</td></tr>\n",
        escape(name),
        escape(value)
    )
}

fn section(html: &mut String, title: &str, text: &str, svg: Option<String>) {
    section_with(html, title, text, svg, "");
}

/// A section whose plot is followed by `after`, HTML the caller has escaped.
fn section_with(html: &mut String, title: &str, text: &str, svg: Option<String>, after: &str) {
    let _ = write!(
        html,
        "<section>\n<h2>{}</h2>\n<p>{}</p>\n",
        escape(title),
        escape(text)
    );
    if let Some(svg) = svg {
        let _ = writeln!(html, "<figure>{}</figure>", responsive(svg.trim()));
    }
    html.push_str(after);
    html.push_str("</section>\n");
}

/// A plot as the page shows it: as wide as the page (its `viewBox` keeps its proportions), but
/// never narrower than it was drawn, so its smallest text (`plot::MIN_TEXT_PX`) is never below
/// 12 px at 100% zoom; a narrower window scrolls the figure instead.
fn responsive(svg: &str) -> String {
    let drawn_width = svg
        .strip_prefix("<svg width=\"")
        .and_then(|rest| rest.split('"').next())
        .and_then(|width| width.parse::<u32>().ok());
    match drawn_width {
        Some(width) => svg.replacen(
            "<svg ",
            &format!("<svg class=\"plot\" style=\"min-width:{width}px\" "),
            1,
        ),
        None => svg.to_string(),
    }
}

/// `text` as HTML text or an attribute value, its control characters other than line breaks
/// (white space to HTML) shown as by [`super::sanitize::visible_lines`].
pub(crate) fn escape(text: &str) -> String {
    let text = super::sanitize::visible_lines(text);
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font-family:sans-serif;margin:2em;max-width:1250px;color:#222}\
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}\
table.facts th{text-align:left;padding-right:1em;font-weight:600}\
table.commits,table.figures{border-collapse:collapse}table.figures td,table.figures th{padding:2px 8px;text-align:left}table.commits td,table.commits th{padding:2px 8px;text-align:left}\
table.commits td{white-space:nowrap;vertical-align:top}table.commits td.subject{white-space:normal}\
p.warning{color:#9a3412}p.note{color:#555}figure{margin:0;overflow-x:auto}\
svg.plot{display:block;width:100%;height:auto}";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_and_dates_are_utc() {
        assert_eq!(escape("<a & \"b\">"), "&lt;a &amp; &quot;b&quot;&gt;");
        assert_eq!(escape("x\x1b]0;t\x07"), "x\\x1b]0;t\\x07");
        assert_eq!(utc_minute(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc_minute(951_782_400 + 3_723), "2000-02-29 01:02 UTC");
    }

    #[test]
    fn a_plot_fills_the_page_but_never_shrinks_below_its_drawn_size() {
        let svg = plot::svg((900, 400), &plot::test_footer(), |_| Ok(())).unwrap();
        let shown = responsive(svg.trim());
        assert!(
            shown.starts_with(
                "<svg class=\"plot\" style=\"min-width:900px\" width=\"900\" height=\"400\" viewBox=\"0 0 900 400\""
            ),
            "{shown}"
        );
        assert!(STYLE.contains("svg.plot{display:block;width:100%;height:auto}"));
    }

    #[test]
    fn a_comparison_page_says_the_speed_in_elo_the_terminal_says() {
        let mut report: serde_json::Value =
            serde_json::from_str(include_str!("../../../tests/golden/compare_local.json")).unwrap();
        let elo = serde_json::json!({
            "value": 2.1, "ci_low": 1.1, "ci_high": 3.2, "speed_ratio": 1.021, "tc": "2+0.02",
            "elo_per_doubling": 70.3, "model_of": "1a2b3c4d5e", "same_binary": true, "games": 800
        });
        report["speed_elo"] = elo.clone();
        let page = from_json(&report).unwrap();
        let estimate = serde_json::from_value(elo).unwrap();
        let words = escape(&crate::report::comparison::speed_elo_words(&estimate));
        assert!(
            words.contains("+2.10% NPS ≈ +2.1 Elo at 2+0.02 (95% CI +1.1 to +3.2"),
            "{words}"
        );
        assert!(page.contains(&words), "the page lacks: {words}");
    }

    #[test]
    fn a_json_of_another_kind_is_refused_by_name() {
        let error = from_json(&serde_json::json!({"kind": "bench"})).unwrap_err();
        assert!(
            error.to_string().contains("not for kind \"bench\""),
            "{error}"
        );
        let error = from_json(&serde_json::json!([1, 2])).unwrap_err();
        assert!(error.to_string().contains("no \"kind\""), "{error}");
    }
}
