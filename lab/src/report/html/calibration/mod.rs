//! The page of a calibration (`lab calibrate ... --export-html`, `lab report` of a
//! `squall-calibration` file): the residual histograms with the margins in force, margin
//! safety per tier and bucket, and the exit-rate heatmap. Drawn from the calibration file
//! alone, so the export and `lab report` of the saved file give the same bytes.

pub(crate) mod exit_heatmap;
pub(crate) mod margin_safety;
pub(crate) mod residuals;

use std::fmt::Write as _;

use anyhow::Result;

use crate::calibration::data::CalibrationFile;
use crate::calibration::figures::{exit_shares, residual_panels, safety_rates, SHOWN_PERCENT};
use crate::calibration::summary::TARGET_UPPER;
use crate::report::html::plot::Footer;
use crate::report::html::{fact, head, measured_on, section};

pub(crate) fn page(value: &serde_json::Value) -> Result<String> {
    let file = CalibrationFile::from_value(value.clone(), "the calibration file")?;
    let lab = file.lab.as_ref();
    let revision = lab.map_or_else(
        || "revision not recorded (a file of squall calibrate)".to_string(),
        |lab| {
            format!(
                "{} (tree {})",
                lab.revision,
                crate::input::short_commit(&lab.tree)
            )
        },
    );
    let (machine, date) = match lab.and_then(|lab| lab.measured.as_ref()) {
        Some(m) => measured_on(
            m.hostname.as_deref(),
            &m.machine.cpu_model,
            m.machine.cores,
            m.measured_unix,
        ),
        None => (
            "machine not recorded".to_string(),
            "date not recorded".to_string(),
        ),
    };
    let run = format!("{} positions, depth {}", file.positions, file.depth);
    let footer = Footer(format!("{revision} · {run} · {machine} · {date}"));

    let mut html = head(&format!("lab calibrate: {revision}"));
    let engine = format!(
        "{} {} [{}]",
        file.engine.name,
        file.engine.version,
        file.engine.features.join(",")
    );
    let search = format!(
        "{run}, hash {} MB, {} nodes, modes {}",
        file.hash_mb,
        file.nodes,
        file.modes.join(",")
    );
    let pool = lab.map_or_else(
        || "not recorded".to_string(),
        |lab| {
            let shards = if lab.shard_count == 1 {
                "the whole pool".to_string()
            } else {
                format!("shard(s) {:?} of {}", lab.shards, lab.shard_count)
            };
            format!("{} ({} positions; {shards})", lab.pool, lab.pool_positions)
        },
    );
    let margins = match lab {
        Some(lab) if lab.margins.is_some() => {
            "engine/src/eval/margins.rs of the calibrated tree".to_string()
        }
        Some(_) => {
            "not recorded (a file of an older lab, or a tree without the marked block)".to_string()
        }
        None => "not recorded".to_string(),
    };
    let _ = write!(
        html,
        "<table class=\"facts\">\n{}{}{}{}{}{}{}</table>\n",
        fact("revision", &revision),
        fact("engine", &engine),
        fact("pool", &pool),
        fact("search", &search),
        fact("margins in force", &margins),
        fact("machine", &machine),
        fact("date", &date),
    );

    let panels = residual_panels(&file);
    section(
        &mut html,
        "Residual histograms",
        &if panels.is_empty() {
            "No residual histograms: calibrate with --modes residual.".to_string()
        } else {
            format!(
                "Each bucket's distribution of what a cheap tier cannot see, in 1-cp bins; the \
                 central {SHOWN_PERCENT}% of the samples is drawn and the rest counted as \
                 clipped. Red: the LO and HI entries of the margin tables the revision ran \
                 with; green: this calibration's values at the percentiles those entries were \
                 chosen at. Green apart from red means the tables no longer match the \
                 distribution (`lab tables` regenerates them)."
            )
        },
        (!panels.is_empty())
            .then(|| residuals::draw(&panels, &footer))
            .transpose()?,
    );

    let safety = safety_rates(&file);
    section(
        &mut html,
        "Margin safety",
        &if safety.is_some() {
            format!(
                "Per cheap tier and material bucket, the share of its exits that the full \
                 evaluation contradicts (exceeded / exits, written above each bar), with the \
                 Wilson 95% interval. The target is an upper bound at or below {}%: red bars \
                 miss it.",
                TARGET_UPPER * 100.0
            )
        } else {
            "No margin safety counts: calibrate with --modes marginsafety.".to_string()
        },
        safety
            .as_ref()
            .map(|tiers| margin_safety::draw(tiers, &footer))
            .transpose()?,
    );

    section(
        &mut html,
        "Exit rate by tier and material bucket",
        "Of each material bucket's eval calls, the share that exits in each tier (the columns \
         add up to 100%). Grey: a bucket never evaluated. The calibration file counts exits by \
         material bucket only.",
        Some(exit_heatmap::draw(&exit_shares(&file), &footer)?),
    );
    html.push_str("</body>\n</html>\n");
    Ok(html)
}
