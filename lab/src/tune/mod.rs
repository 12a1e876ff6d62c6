//! `lab tune`: replays a calibration's sampled evaluation calls (`--modes samples`) under
//! candidate margin tables with no search, predicting each tier's exit share and exceeded rate
//! per material bucket; `--search` picks the percentiles of the same run's histograms that
//! maximise the cheap exits under a limit on every exceeded rate. `report::tune` formats it.

pub(crate) mod predict;
pub mod samples;
pub mod search;

use std::path::Path;

use anyhow::{Context, Result};
use serde::Serialize;
use squall::tier::MATERIAL_BUCKETS;

use crate::calibration::in_force::{parse_margins, MarginsInForce};
use crate::calibration::margins_source::{BEGIN_MARKER, END_MARKER};
use crate::calibration::tables::{self, Choice};
use crate::calibration::CalibrationFile;
use crate::schema::{Kind, LAB_JSON_SCHEMA_VERSION};
use predict::{predict, ExitTables, Prediction};
use samples::Samples;
use search::SearchResult;

/// A calibration file with its samples.
pub struct Replay {
    pub file: CalibrationFile,
    pub samples: Samples,
}

/// Said when a calibration file holds no samples.
pub(crate) const NO_SAMPLES: &str = "no `samples` field: record the sampled evaluation calls with \
     `lab calibrate REV --modes samples` (with `residual` too for percentile tables, --lo/--hi, and --search)";

impl Replay {
    /// Reads a calibration file (checked as `lab tables` checks it) and its `samples` field.
    pub fn load(path: &Path) -> Result<Replay> {
        let origin = path.display().to_string();
        let text = crate::input::read_text(path, crate::input::CALIBRATION)?;
        let value: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| anyhow::anyhow!("{origin}: not a calibration file: {e}"))?;
        let file = CalibrationFile::from_value(value, &origin)?;
        let field = file
            .samples
            .as_ref()
            .with_context(|| format!("{origin}: {NO_SAMPLES}"))?;
        let samples = Samples::from_file(field).map_err(|e| anyhow::anyhow!("{origin}: {e:#}"))?;
        Ok(Replay { file, samples })
    }
}

/// The nine tables of a margins.rs file, or of its marked block alone (as `lab tables` prints
/// it, with or without the markers); `None` unless all nine rows are there.
pub(crate) fn tables_from_source(source: &str) -> Option<MarginsInForce> {
    parse_margins(source)
        .or_else(|| parse_margins(&format!("{BEGIN_MARKER}{source}\n{END_MARKER}\n")))
}

/// The block `lab tables` writes for `choice` from the replay's histograms, and its tables.
pub(crate) fn tables_for_choice(
    replay: &Replay,
    origin: &str,
    choice: &Choice,
) -> Result<(String, MarginsInForce)> {
    let block = tables::render(&replay.file, origin, choice)?;
    let margins = tables_from_source(&block).context("the rendered tables do not read back")?;
    Ok((block, margins))
}

/// What was replayed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct SamplesSummary {
    pub(crate) capacity: u64,
    pub(crate) seed: u64,
    /// Calls offered to each bucket's reservoir.
    pub(crate) seen: [u64; MATERIAL_BUCKETS],
    /// Samples held per bucket.
    pub(crate) sampled: [u64; MATERIAL_BUCKETS],
    /// Distinct positions among all samples.
    pub(crate) positions: u64,
    /// The calibration's depth and positions.
    pub(crate) depth: i32,
    pub(crate) run_positions: u64,
}

/// `lab tune --search`: the search and the tables it chose, for `lab tables`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct TuneSearch {
    #[serde(flatten)]
    pub(crate) result: SearchResult,
    /// The arguments after `lab tables FILE` that write the chosen tables.
    pub(crate) lab_tables_args: Vec<String>,
    /// The whole command, FILE being the samples file (it holds the histograms).
    pub(crate) lab_tables_command: String,
    /// The marked block those tables are (what `lab tables` prints).
    pub(crate) block: String,
}

/// `lab tune`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TuneReport {
    pub(crate) schema_version: u32,
    pub(crate) kind: Kind,
    /// The samples file.
    pub(crate) file: String,
    /// Where the candidate tables came from.
    pub(crate) candidate: String,
    pub(crate) samples: SamplesSummary,
    pub(crate) prediction: Prediction,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) search: Option<TuneSearch>,
}

impl TuneReport {
    /// The prediction of `tables` (described by `candidate`) on the replay of `file`; tables
    /// the engine could not use are refused ([`ExitTables::check`]), the error naming `candidate`.
    pub(crate) fn new(
        replay: &Replay,
        file: &str,
        candidate: String,
        tables: &MarginsInForce,
    ) -> Result<TuneReport> {
        let exit_tables = ExitTables::from(tables);
        exit_tables
            .check()
            .map_err(|e| anyhow::anyhow!("{candidate}: {e:#}"))?;
        let s = &replay.samples;
        Ok(TuneReport {
            schema_version: LAB_JSON_SCHEMA_VERSION,
            kind: Kind::Tune,
            file: file.to_string(),
            candidate,
            samples: SamplesSummary {
                capacity: s.capacity,
                seed: s.seed,
                seen: s.seen,
                sampled: std::array::from_fn(|b| s.by_material_bucket[b].len() as u64),
                positions: s.positions() as u64,
                depth: replay.file.depth,
                run_positions: replay.file.positions,
            },
            prediction: predict(s, &exit_tables),
            search: None,
        })
    }
}

/// `lab tune FILE --search`: the search, its tables rendered as `lab tables` renders them, and
/// the prediction of exactly those tables. `max_exceeded` is a fraction.
pub(crate) fn search_report(replay: &Replay, path: &Path, max_exceeded: f64) -> Result<TuneReport> {
    if replay.file.histograms.is_none() {
        anyhow::bail!(
            "{}: no histograms: --search {}",
            path.display(),
            search::NEEDS_HISTOGRAMS
        );
    }
    let result = search::search(&replay.file, &replay.samples, max_exceeded)?;
    let choice = result.choice();
    let (block, tables) = tables_for_choice(replay, &tables::origin(path), &choice)?;
    let args = search::tables_args(&choice);
    let command = std::iter::once("lab tables".to_string())
        .chain(std::iter::once(shell_word(&path.display().to_string())))
        .chain(args.iter().map(|a| shell_word(a)))
        .collect::<Vec<_>>()
        .join(" ");
    let file = path.display().to_string();
    let mut report = TuneReport::new(
        replay,
        &file,
        format!(
            "search (every exceeded upper bound <= {}%)",
            100.0 * max_exceeded
        ),
        &tables,
    )?;
    report.search = Some(TuneSearch {
        result,
        lab_tables_args: args,
        lab_tables_command: command,
        block,
    });
    Ok(report)
}

/// `word` as one shell word: as it is when it needs no quoting, else single-quoted.
fn shell_word(word: &str) -> String {
    let plain = word
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_./:=,+@%".contains(c));
    if plain && !word.is_empty() {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_read_from_a_file_or_a_bare_block() {
        let source = include_str!("../../../engine/src/eval/margins.rs");
        let whole = tables_from_source(source).unwrap();
        let block = crate::calibration::margins_source::marked_block(source).unwrap();
        assert_eq!(tables_from_source(block), Some(whole));
        assert_eq!(tables_from_source("nothing"), None);
    }

    #[test]
    fn shell_words_are_quoted_only_when_needed() {
        assert_eq!(shell_word("cal.json"), "cal.json");
        assert_eq!(shell_word("super-lazy:3=2:98"), "super-lazy:3=2:98");
        assert_eq!(shell_word("my file's.json"), r"'my file'\''s.json'");
    }
}
