//! `lab frontier`: the margin tables' exceeded rate against what they are worth in Elo. Each
//! point is one level of the tables judged by `lab verdict` against one reference engine A,
//! with the candidate's margin-safety calibration beside it; the reference is A itself, 0 Elo
//! by definition. The rows are ordered by the worst exceeded bound, and the Elo-optimal row is
//! named with whether its total's interval clears the runner-up's. No formatting: the terminal,
//! markdown, JSON and HTML reports all lay out this one [`FrontierReport`].

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::calibration::data::{CalibrationFile, KIND as CALIBRATION_KIND};
use crate::calibration::figures::{overall_exceeded, overall_exit_shares, worst_exceeded_bound};
use crate::games::sprt::Sprt;
use crate::input::excerpt;
use crate::schema::{Kind, LAB_JSON_SCHEMA_VERSION};
use crate::verdict::{Decision, SpeedSource};

/// A figure with its two-sided 95% interval. A verdict writes an estimate it could not bound
/// (every game pair won or lost) as `null`: `None` here.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) struct Interval {
    pub(crate) value: Option<f64>,
    pub(crate) ci_low: Option<f64>,
    pub(crate) ci_high: Option<f64>,
}

impl Interval {
    /// A figure known exactly: the reference's Elo against itself.
    fn exact(value: f64) -> Interval {
        Interval {
            value: Some(value),
            ci_low: Some(value),
            ci_high: Some(value),
        }
    }

    fn from_rate((value, low, high): (f64, f64, f64)) -> Interval {
        Interval {
            value: Some(value),
            ci_low: Some(low),
            ci_high: Some(high),
        }
    }

    /// Every present number finite and the present bounds around the value.
    fn is_consistent(&self) -> bool {
        let finite = [self.value, self.ci_low, self.ci_high]
            .into_iter()
            .flatten()
            .all(f64::is_finite);
        let ordered = match (self.ci_low, self.value, self.ci_high) {
            (Some(low), Some(value), Some(high)) => low <= value && value <= high,
            (Some(low), None, Some(high)) => low <= high,
            _ => true,
        };
        finite && ordered
    }
}

/// An engine as a verdict records it: the revision as given, its commit and the build cache
/// key of its binary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct EngineId {
    pub(crate) spec: String,
    pub(crate) commit: Option<String>,
    pub(crate) binary_key: String,
}

/// The cell of the worst exceeded bound.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct WorstCell {
    /// The Wilson 95% upper bound of the cell's exceeded rate, as a fraction.
    pub(crate) upper: f64,
    pub(crate) tier: String,
    pub(crate) bucket: usize,
    /// The king's danger class; `None` for a cell of the material-bucket table.
    pub(crate) class: Option<usize>,
    pub(crate) exceeded: u64,
    pub(crate) exits: u64,
}

/// What a row's calibration says of its margins' safety.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Safety {
    /// The calibration file or `lab calibrate` report it was read from.
    pub(crate) file: String,
    /// `None` when the cheap tiers never exited.
    pub(crate) worst_exceeded: Option<WorstCell>,
    /// Both cheap tiers' exceeded share over their exits, fractions with a Wilson interval.
    pub(crate) overall_exceeded: Option<Interval>,
    /// The share of eval calls exiting in the super-lazy, lazy and full tier.
    pub(crate) exit_shares: Option<[f64; 3]>,
}

impl Safety {
    fn upper(&self) -> Option<f64> {
        self.worst_exceeded.as_ref().map(|cell| cell.upper)
    }
}

/// One row of the frontier: a point (B of its verdict) or the reference (A).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct FrontierRow {
    pub(crate) label: String,
    pub(crate) engine: EngineId,
    /// The verdict the point was read from; `None` for the reference.
    pub(crate) verdict_file: Option<String>,
    pub(crate) safety: Option<Safety>,
    /// B's speed over the reference's, as its verdict measured it (`speed_from`).
    pub(crate) speed_ratio: Interval,
    #[serde(default)]
    pub(crate) speed_from: SpeedSource,
    pub(crate) speed_elo: Interval,
    pub(crate) search_elo: Interval,
    pub(crate) total_elo: Interval,
    pub(crate) games: u64,
    /// The verdict's bounds and decision; `None` for the reference.
    pub(crate) sprt: Option<Sprt>,
    pub(crate) decision: Option<Decision>,
}

/// The row with the highest total Elo, and whether the data separate it from the next best.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Optimal {
    pub(crate) label: String,
    pub(crate) runner_up: Option<String>,
    /// The optimum's total interval lies wholly above the runner-up's: false when they overlap
    /// or either is unbounded.
    pub(crate) separated: bool,
}

/// `lab frontier`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrontierReport {
    pub(crate) schema_version: u32,
    pub(crate) kind: Kind,
    /// The time control every verdict was judged at.
    pub(crate) tc: String,
    pub(crate) reference: FrontierRow,
    /// Ordered by the worst exceeded bound; points without a calibration last, by label.
    pub(crate) points: Vec<FrontierRow>,
    pub(crate) optimal: Optimal,
}

impl FrontierReport {
    /// The reference and the points in the frontier's order, the reference placed by its own
    /// exceeded bound.
    pub(crate) fn rows(&self) -> Vec<&FrontierRow> {
        let mut rows: Vec<&FrontierRow> = std::iter::once(&self.reference)
            .chain(&self.points)
            .collect();
        rows.sort_by(|a, b| order(a, b));
        rows
    }
}

/// By the worst exceeded bound, rows without one last; then by label.
fn order(a: &FrontierRow, b: &FrontierRow) -> std::cmp::Ordering {
    let key = |row: &FrontierRow| row.safety.as_ref().and_then(Safety::upper);
    match (key(a), key(b)) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    }
    .then_with(|| a.label.cmp(&b.label))
}

/// `--point LABEL=VERDICT_JSON[,CALIBRATION_JSON]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PointInput {
    pub(crate) label: String,
    pub(crate) verdict: PathBuf,
    pub(crate) calibration: Option<PathBuf>,
}

/// `--reference LABEL[=CALIBRATION_JSON]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReferenceInput {
    pub(crate) label: String,
    pub(crate) calibration: Option<PathBuf>,
}

/// The label the reference row has without `--reference`.
pub(crate) const DEFAULT_REFERENCE_LABEL: &str = "reference";

/// Reads every point's verdict and calibration, checks that they share one A and one time
/// control, and orders the frontier. Any file that is not what it should be is an error naming
/// it and the field.
pub(crate) fn frontier(
    points: &[PointInput],
    reference: &ReferenceInput,
) -> Result<FrontierReport> {
    if points.is_empty() {
        bail!("lab frontier needs at least one --point LABEL=VERDICT_JSON[,CALIBRATION_JSON]");
    }
    for (index, point) in points.iter().enumerate() {
        let earlier = points[..index].iter().any(|p| p.label == point.label);
        if earlier || point.label == reference.label {
            bail!(
                "--point {}: the label is given twice{}; each row needs its own",
                excerpt(&point.label, 80),
                if earlier {
                    ""
                } else {
                    " (it is the reference's)"
                }
            );
        }
    }
    let mut read: Vec<(&PointInput, VerdictDoc)> = Vec::with_capacity(points.len());
    for point in points {
        read.push((point, load_verdict(&point.verdict)?));
    }
    let (first, first_doc) = &read[0];
    for (point, doc) in &read[1..] {
        let (a, first_a) = (&doc.comparison.a.revision, &first_doc.comparison.a.revision);
        if a.binary_key != first_a.binary_key {
            bail!(
                "{}: comparison.a.revision.binary_key: A is {}, but A of {} is {}: every point \
                 must be judged against the same A",
                point.verdict.display(),
                describe(a),
                first.verdict.display(),
                describe(first_a)
            );
        }
        if doc.tc != first_doc.tc {
            bail!(
                "{}: tc: judged at {}, but {} at {}: every point must be judged at the same \
                 time control",
                point.verdict.display(),
                excerpt(&doc.tc, 40),
                first.verdict.display(),
                excerpt(&first_doc.tc, 40)
            );
        }
    }
    let mut rows = Vec::with_capacity(read.len());
    for (point, doc) in read.iter() {
        rows.push(FrontierRow {
            label: point.label.clone(),
            engine: doc.comparison.b.revision.clone(),
            verdict_file: Some(point.verdict.display().to_string()),
            safety: point.calibration.as_deref().map(load_safety).transpose()?,
            speed_ratio: doc.speed_ratio,
            speed_from: doc.speed_from,
            speed_elo: doc.speed_elo,
            search_elo: doc.search_elo,
            total_elo: doc.total_elo,
            games: doc.games,
            sprt: Some(doc.sprt),
            decision: Some(doc.decision),
        });
    }
    rows.sort_by(order);
    let reference = FrontierRow {
        label: reference.label.clone(),
        engine: first_doc.comparison.a.revision.clone(),
        verdict_file: None,
        safety: reference
            .calibration
            .as_deref()
            .map(load_safety)
            .transpose()?,
        speed_ratio: Interval::exact(1.0),
        speed_from: first_doc.speed_from,
        speed_elo: Interval::exact(0.0),
        search_elo: Interval::exact(0.0),
        total_elo: Interval::exact(0.0),
        games: 0,
        sprt: None,
        decision: None,
    };
    let mut report = FrontierReport {
        schema_version: LAB_JSON_SCHEMA_VERSION,
        kind: Kind::Frontier,
        tc: first_doc.tc.clone(),
        reference,
        points: rows,
        optimal: Optimal {
            label: String::new(),
            runner_up: None,
            separated: false,
        },
    };
    report.optimal = optimal(&report.rows());
    Ok(report)
}

/// The row of the highest total Elo (the first in the frontier's order on a tie), and whether
/// its interval lies wholly above the next best's. Rows whose total is unbounded are not
/// ranked; the reference, 0 exactly, always is.
pub(crate) fn optimal(rows: &[&FrontierRow]) -> Optimal {
    let mut ranked: Vec<(&FrontierRow, f64)> = rows
        .iter()
        .filter_map(|row| Some((*row, row.total_elo.value?)))
        .collect();
    // Stable: equal totals keep the frontier's order.
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
    let Some(&(best, _)) = ranked.first() else {
        return Optimal {
            label: String::new(),
            runner_up: None,
            separated: false,
        };
    };
    let runner_up = ranked.get(1).map(|(row, _)| *row);
    let separated =
        runner_up.is_some_and(
            |next| match (best.total_elo.ci_low, next.total_elo.ci_high) {
                (Some(low), Some(high)) => low > high,
                _ => false,
            },
        );
    Optimal {
        label: best.label.clone(),
        runner_up: runner_up.map(|row| row.label.clone()),
        separated,
    }
}

fn describe(engine: &EngineId) -> String {
    let commit = engine.commit.as_deref().unwrap_or("no commit");
    format!(
        "{} ({}, binary {})",
        excerpt(&engine.spec, 80),
        crate::input::short_commit(commit),
        crate::input::short_key(&engine.binary_key)
    )
}

/// What a frontier reads of a `lab verdict` JSON report.
#[derive(Deserialize)]
struct VerdictDoc {
    tc: String,
    sprt: Sprt,
    comparison: ComparisonDoc,
    speed_ratio: Interval,
    /// Absent in reports from before `--speed-from`, which measured NPS.
    #[serde(default)]
    speed_from: SpeedSource,
    speed_elo: Interval,
    search_elo: Interval,
    total_elo: Interval,
    games: u64,
    decision: Decision,
}

#[derive(Deserialize)]
struct ComparisonDoc {
    a: SideDoc,
    b: SideDoc,
}

#[derive(Deserialize)]
struct SideDoc {
    revision: EngineId,
}

/// A JSON document of at most `file_cap`'s size.
fn read_json(path: &Path, file_cap: crate::input::FileCap) -> Result<serde_json::Value> {
    let text = crate::input::read_text(path, file_cap)?;
    serde_json::from_str(&text).with_context(|| format!("{}: not JSON", path.display()))
}

fn kind_of(value: &serde_json::Value) -> String {
    match value.get("kind") {
        Some(serde_json::Value::String(kind)) => format!("kind {:?}", excerpt(kind, 40)),
        Some(other) => format!("kind {}", excerpt(&other.to_string(), 40)),
        None => "no kind".to_string(),
    }
}

fn load_verdict(path: &Path) -> Result<VerdictDoc> {
    let value = read_json(path, crate::input::REPORT)?;
    if value.get("kind").and_then(serde_json::Value::as_str) != Some(Kind::Verdict.name()) {
        bail!(
            "{}: kind: a document of {}, not a `lab verdict` report (kind \"verdict\", from \
             `lab verdict A B --format json` or --export-json)",
            path.display(),
            kind_of(&value)
        );
    }
    check_schema_version(path, &value)?;
    let at_node_odds = value.get("games_at").and_then(serde_json::Value::as_str)
        == Some("node-odds")
        && value.get("search").is_some_and(|search| !search.is_null());
    if at_node_odds {
        bail!(
            "{}: games_at: the verdict played its games at node odds, which weigh search and \
             speed together, and a frontier row shows them apart: judge the point with equal \
             nodes (`lab verdict` without --node-odds)",
            path.display()
        );
    }
    let doc: VerdictDoc = serde_json::from_value(value)
        .with_context(|| format!("{}: not a verdict report of this lab", path.display()))?;
    for (field, figure) in [
        ("speed_ratio", doc.speed_ratio),
        ("speed_elo", doc.speed_elo),
        ("search_elo", doc.search_elo),
        ("total_elo", doc.total_elo),
    ] {
        if !figure.is_consistent() {
            bail!(
                "{}: {field}: {:?} is not an estimate inside its interval",
                path.display(),
                figure
            );
        }
    }
    if !doc
        .speed_ratio
        .value
        .is_some_and(|ratio| ratio > 0.0 && doc.speed_ratio.ci_low.is_some_and(|low| low > 0.0))
    {
        bail!(
            "{}: speed_ratio: a speed ratio is a positive number with a positive interval",
            path.display()
        );
    }
    Ok(doc)
}

fn check_schema_version(path: &Path, value: &serde_json::Value) -> Result<()> {
    let version = value.get("schema_version");
    if version.and_then(serde_json::Value::as_u64) != Some(u64::from(LAB_JSON_SCHEMA_VERSION)) {
        bail!(
            "{}: schema_version: {}, but this lab reads schema_version {LAB_JSON_SCHEMA_VERSION}",
            path.display(),
            version.map_or_else(
                || "absent".to_string(),
                |v| excerpt(&v.to_string(), 40).into()
            )
        );
    }
    Ok(())
}

/// A calibration file (`lab calibrate --out`) or a `lab calibrate --format json` report,
/// which holds its file as `calibration`.
fn load_calibration(path: &Path) -> Result<CalibrationFile> {
    let mut value = read_json(path, crate::input::CALIBRATION)?;
    let origin = path.display().to_string();
    match value.get("kind").and_then(serde_json::Value::as_str) {
        Some(CALIBRATION_KIND) => CalibrationFile::from_value(value, &origin),
        Some(kind) if kind == Kind::Calibration.name() => {
            check_schema_version(path, &value)?;
            let file = value
                .get_mut("calibration")
                .map(serde_json::Value::take)
                .with_context(|| format!("{origin}: calibration: absent from the report"))?;
            CalibrationFile::from_value(file, &format!("{origin}: calibration"))
        }
        _ => bail!(
            "{origin}: kind: a document of {}, neither a calibration file (kind \
             \"{CALIBRATION_KIND}\") nor a `lab calibrate` report (kind \"calibration\")",
            kind_of(&value)
        ),
    }
}

/// The margin-safety figures of a calibration, as `lab calibrate` states them.
fn load_safety(path: &Path) -> Result<Safety> {
    let file = load_calibration(path)?;
    if file.margin_safety.is_none() {
        bail!(
            "{}: margin_safety: absent; calibrate with --modes residual,marginsafety",
            path.display()
        );
    }
    Ok(Safety {
        file: path.display().to_string(),
        worst_exceeded: worst_exceeded_bound(&file).map(|cell| WorstCell {
            upper: cell.upper,
            tier: cell.tier.to_string(),
            bucket: cell.bucket,
            class: cell.class,
            exceeded: cell.exceeded,
            exits: cell.exits,
        }),
        overall_exceeded: overall_exceeded(&file).map(|all| Interval::from_rate(all.rate)),
        exit_shares: overall_exit_shares(&file),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(label: &str, upper: Option<f64>, total: (f64, f64, f64)) -> FrontierRow {
        FrontierRow {
            label: label.to_string(),
            engine: EngineId {
                spec: label.to_string(),
                commit: None,
                binary_key: label.to_string(),
            },
            verdict_file: None,
            safety: upper.map(|upper| Safety {
                file: String::new(),
                worst_exceeded: Some(WorstCell {
                    upper,
                    tier: "lazy".to_string(),
                    bucket: 0,
                    class: None,
                    exceeded: 1,
                    exits: 100,
                }),
                overall_exceeded: None,
                exit_shares: None,
            }),
            speed_ratio: Interval::exact(1.0),
            speed_from: SpeedSource::Nps,
            speed_elo: Interval::exact(0.0),
            search_elo: Interval::exact(0.0),
            total_elo: Interval::from_rate(total),
            games: 0,
            sprt: None,
            decision: None,
        }
    }

    #[test]
    fn rows_go_by_the_exceeded_bound_and_rows_without_one_last_by_label() {
        let rows = [
            row("z", None, (0.0, 0.0, 0.0)),
            row("two", Some(0.02), (0.0, 0.0, 0.0)),
            row("a", None, (0.0, 0.0, 0.0)),
            row("half", Some(0.005), (0.0, 0.0, 0.0)),
        ];
        let mut sorted: Vec<&FrontierRow> = rows.iter().collect();
        sorted.sort_by(|a, b| order(a, b));
        let labels: Vec<&str> = sorted.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(labels, ["half", "two", "a", "z"]);
    }

    #[test]
    fn the_optimum_is_separated_only_when_its_interval_clears_the_runner_up() {
        let reference = row("ref", Some(0.01), (0.0, 0.0, 0.0));
        let overlapping = row("two", Some(0.02), (6.0, -1.0, 13.0));
        let optimum = optimal(&[&reference, &overlapping]);
        assert_eq!(optimum.label, "two");
        assert_eq!(optimum.runner_up.as_deref(), Some("ref"));
        assert!(!optimum.separated, "-1 is below the reference's 0");

        let clear = row("two", Some(0.02), (12.0, 3.0, 21.0));
        let worse = row("half", Some(0.005), (-9.0, -15.0, -3.0));
        let optimum = optimal(&[&worse, &reference, &clear]);
        assert_eq!(optimum.label, "two");
        assert!(optimum.separated);

        // The reference is the optimum when every point loses Elo.
        let optimum = optimal(&[&worse, &reference]);
        assert_eq!(optimum.label, "ref");
        assert_eq!(optimum.runner_up.as_deref(), Some("half"));
        assert!(optimum.separated, "0 is above -3");

        // An unbounded total is not ranked, and an unbounded interval separates nothing.
        let mut unbounded = row("wild", None, (0.0, 0.0, 0.0));
        unbounded.total_elo = Interval {
            value: None,
            ci_low: None,
            ci_high: None,
        };
        let mut open = row("open", None, (5.0, 0.0, 9.0));
        open.total_elo.ci_low = None;
        let optimum = optimal(&[&reference, &unbounded, &open]);
        assert_eq!(optimum.label, "open");
        assert!(!optimum.separated);
    }

    #[test]
    fn intervals_are_checked_for_order_and_finiteness() {
        assert!(Interval::from_rate((1.0, 0.5, 2.0)).is_consistent());
        assert!(!Interval::from_rate((1.0, 1.5, 2.0)).is_consistent());
        assert!(!Interval::from_rate((1.0, 0.5, f64::INFINITY)).is_consistent());
        let unbounded = Interval {
            value: None,
            ci_low: None,
            ci_high: None,
        };
        assert!(unbounded.is_consistent());
    }
}
