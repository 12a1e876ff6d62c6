//! The bench protocol (docs/bench-protocol.md): the arguments of `squall bench --json`, and
//! reading and checking its report. The engine adapter runs it.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};
use squall::tier::{DANGER_CLASSES, MATERIAL_BUCKETS, SIDE_BUCKETS, TIERS};

use crate::process::{require_success, run_with_timeout};

/// The newest bench protocol version this lab understands (docs/bench-protocol.md).
pub(crate) const BENCH_SCHEMA_VERSION: u64 = 2;
/// The oldest it still reads: old revisions must stay measurable.
pub(crate) const OLDEST_BENCH_SCHEMA_VERSION: u64 = 1;
/// The first version whose eval counters split the exits by search.
const BY_SEARCH_SINCE: u64 = 2;

#[derive(Debug, Clone, Deserialize)]
pub struct BenchReport {
    #[allow(
        dead_code,
        reason = "required: serde refuses a bench report without it"
    )]
    pub(crate) schema_version: u64,
    pub(crate) engine: ReportedEngine,
    pub(crate) depth: u32,
    pub(crate) positions: Vec<PositionResult>,
    pub(crate) totals: Totals,
    pub(crate) eval: EvalCounters,
}

/// What an engine is: its name, version and cargo features, as its bench reports them. A
/// measurement, a comparison's sides and a calibration file carry it as it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineIdentity {
    pub name: String,
    pub version: String,
    pub features: Vec<String>,
}

/// The `engine` object of a bench report: the engine's identity (a report without `features`
/// has none) and the calibrated constants it was compiled with.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ReportedEngine {
    pub(crate) name: String,
    pub(crate) version: String,
    #[serde(default)]
    pub(crate) features: Vec<String>,
    /// The margin tables compiled into the binary; `None` from revisions that predate the field.
    #[serde(default)]
    pub(crate) margin_tables: Option<MarginTables>,
    /// QSearch futility's base margins by stand-pat tier; `None` before the field.
    #[serde(default)]
    pub(crate) futility_base_margin_by_source: Option<[i32; TIERS]>,
}

impl ReportedEngine {
    /// The engine's identity, without the constants.
    pub(crate) fn into_identity(self) -> EngineIdentity {
        EngineIdentity {
            name: self.name,
            version: self.version,
            features: self.features,
        }
    }
}

/// One margin table as the engine reports it: its low, high and median entry per side bucket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct MarginTable {
    pub(crate) lo: [i32; SIDE_BUCKETS],
    pub(crate) hi: [i32; SIDE_BUCKETS],
    pub(crate) p50: [i32; SIDE_BUCKETS],
}

/// The king tables as the engine reports them: one row per danger class of the defending king
/// (1 to `DANGER_CLASSES`), each by the attacker's side bucket. Binaries from before danger
/// classes report one flat row per table, read as one class.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawKingTable")]
pub(crate) struct KingMarginTable {
    pub(crate) lo: Vec<[i32; SIDE_BUCKETS]>,
    pub(crate) hi: Vec<[i32; SIDE_BUCKETS]>,
    pub(crate) p50: Vec<[i32; SIDE_BUCKETS]>,
}

/// `engine.margin_tables.king` before its shape is checked.
#[derive(Deserialize)]
struct RawKingTable {
    lo: serde_json::Value,
    hi: serde_json::Value,
    p50: serde_json::Value,
}

impl TryFrom<RawKingTable> for KingMarginTable {
    type Error = String;

    fn try_from(raw: RawKingTable) -> std::result::Result<Self, String> {
        let table = KingMarginTable {
            lo: king_rows("lo", raw.lo)?,
            hi: king_rows("hi", raw.hi)?,
            p50: king_rows("p50", raw.p50)?,
        };
        if table.hi.len() != table.lo.len() || table.p50.len() != table.lo.len() {
            return Err(format!(
                "engine.margin_tables.king: lo, hi and p50 hold {}, {} and {} danger classes; \
                 expected the same number",
                table.lo.len(),
                table.hi.len(),
                table.p50.len()
            ));
        }
        Ok(table)
    }
}

/// One of the king table's rows: a flat row of `SIDE_BUCKETS` integers (one class), or 1 to
/// `DANGER_CLASSES` such rows.
fn king_rows(
    name: &str,
    value: serde_json::Value,
) -> std::result::Result<Vec<[i32; SIDE_BUCKETS]>, String> {
    let field = format!("engine.margin_tables.king.{name}");
    let row = |value: &serde_json::Value, field: &str| -> std::result::Result<_, String> {
        serde_json::from_value::<[i32; SIDE_BUCKETS]>(value.clone())
            .map_err(|_| format!("{field}: expected a row of {SIDE_BUCKETS} integers (32-bit)"))
    };
    let Some(items) = value.as_array() else {
        return Err(format!("{field}: expected an array"));
    };
    if items.first().is_some_and(serde_json::Value::is_number) {
        return Ok(vec![row(&value, &field)?]);
    }
    if !(1..=DANGER_CLASSES).contains(&items.len()) {
        return Err(format!(
            "{field}: {} rows, expected 1 to {DANGER_CLASSES} (one per danger class)",
            items.len()
        ));
    }
    items
        .iter()
        .enumerate()
        .map(|(class, item)| row(item, &format!("{field}[{class}]")))
        .collect()
}

/// `engine.margin_tables`, named after the histogram sets the tables are generated from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct MarginTables {
    pub(crate) king: KingMarginTable,
    pub(crate) lazy_residual: MarginTable,
    pub(crate) super_lazy_residual: MarginTable,
}

/// How long the one-ply bench that reports a binary's constants may take: it searches for
/// milliseconds, so this only bounds a hang.
const CONSTANTS_BENCH_TIMEOUT: Duration = Duration::from_secs(120);

/// The `engine` object of a one-ply bench of `binary`: what it says about itself, with the
/// calibrated constants it was compiled with where its protocol has them.
pub(crate) fn reported_engine(binary: &Path) -> Result<ReportedEngine> {
    let mut command = Command::new(binary);
    command.args(bench_args(Some(1), false, None));
    let what = format!("the bench of {}", binary.display());
    let finished = run_with_timeout(command, CONSTANTS_BENCH_TIMEOUT, &what)?;
    require_success(&finished, &what)?;
    Ok(parse_bench(&finished.stdout)
        .with_context(|| format!("reading {what}"))?
        .engine)
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct PositionResult {
    pub(crate) fen: String,
    pub(crate) nodes: u64,
    pub(crate) time_ns: u64,
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Totals {
    pub(crate) nodes: u64,
    pub(crate) time_ns: u64,
}

/// Exits in protocol order: super-lazy, lazy, full.
pub type TierCounts = [u64; 3];

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EvalCounters {
    pub calls: u64,
    pub exits: Exits,
    pub by_material_bucket: Vec<TierCounts>,
    pub by_side_buckets: Vec<Vec<TierCounts>>,
    /// Each tier's exits split between the main search and quiescence: `None` before bench
    /// schema_version 2 (and in baselines saved from such a bench).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by_search: Option<ExitsBySearch>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExitsBySearch {
    pub(crate) main: SearchExits,
    pub quiescence: SearchExits,
}

/// The exits of the evaluations one search asked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchExits {
    pub exits: Exits,
    pub(crate) by_material_bucket: Vec<TierCounts>,
}

impl EvalCounters {
    /// What is wrong with the split by search, as `(field, problem)`: each search has 8
    /// material buckets summing to its exits, and main + quiescence is every exit.
    pub(crate) fn by_search_problem(&self) -> Option<(String, String)> {
        let split = self.by_search.as_ref()?;
        for (name, search) in [("main", &split.main), ("quiescence", &split.quiescence)] {
            let field = format!("eval.by_search.{name}");
            if search.by_material_bucket.len() != 8 {
                return Some((
                    format!("{field}.by_material_bucket"),
                    format!(
                        "{} rows; the protocol has 8",
                        search.by_material_bucket.len()
                    ),
                ));
            }
            if sum_rows(&search.by_material_bucket) != Some(search.exits.as_array()) {
                return Some((
                    format!("{field}.by_material_bucket"),
                    "its rows do not sum to the search's exits".to_string(),
                ));
            }
        }
        let added = add_counts(
            split.main.exits.as_array(),
            split.quiescence.exits.as_array(),
        );
        if added != Some(self.exits.as_array()) {
            return Some((
                "eval.by_search".to_string(),
                "main + quiescence is not every exit (eval.exits)".to_string(),
            ));
        }
        None
    }
}

fn add_counts(a: TierCounts, b: TierCounts) -> Option<TierCounts> {
    Some([
        a[0].checked_add(b[0])?,
        a[1].checked_add(b[1])?,
        a[2].checked_add(b[2])?,
    ])
}

fn sum_rows(rows: &[TierCounts]) -> Option<TierCounts> {
    rows.iter()
        .try_fold([0; 3], |sum: TierCounts, row| add_counts(sum, *row))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exits {
    pub super_lazy: u64,
    pub lazy: u64,
    pub full: u64,
}

impl Exits {
    pub fn as_array(&self) -> TierCounts {
        [self.super_lazy, self.lazy, self.full]
    }
}

pub(crate) fn bench_args(
    depth: Option<u32>,
    full_eval: bool,
    positions: Option<&Path>,
) -> Vec<String> {
    let mut args = vec!["bench".to_string(), "--json".to_string()];
    if let Some(positions) = positions {
        args.push("--positions".to_string());
        args.push(positions.display().to_string());
    }
    if let Some(depth) = depth {
        args.push("--depth".to_string());
        args.push(depth.to_string());
    }
    if full_eval {
        args.push("--full-eval".to_string());
    }
    args
}

pub fn parse_bench(stdout: &[u8]) -> Result<BenchReport> {
    let value: serde_json::Value = serde_json::from_slice(stdout).map_err(|e| {
        anyhow!(
            "the engine's bench output is not JSON ({e}); it starts with: {:?}",
            String::from_utf8_lossy(&stdout[..stdout.len().min(200)])
        )
    })?;
    let version = match value
        .get("schema_version")
        .and_then(serde_json::Value::as_u64)
    {
        Some(version @ OLDEST_BENCH_SCHEMA_VERSION..=BENCH_SCHEMA_VERSION) => version,
        Some(other) => bail!(
            "the engine speaks bench schema_version {other}; this lab understands \
             {OLDEST_BENCH_SCHEMA_VERSION} to {BENCH_SCHEMA_VERSION}"
        ),
        None => bail!("the engine's bench JSON has no schema_version"),
    };
    let report: BenchReport = serde_json::from_value(value).with_context(|| {
        format!("the engine's bench JSON does not match schema_version {version}")
    })?;
    if version >= BY_SEARCH_SINCE && report.eval.by_search.is_none() {
        bail!("the engine's bench JSON (schema_version {version}) lacks eval.by_search");
    }
    validate(&report)?;
    Ok(report)
}

fn validate(report: &BenchReport) -> Result<()> {
    if report.positions.is_empty() {
        bail!("the engine's bench reported no positions");
    }
    let Some(position_nodes) = report
        .positions
        .iter()
        .try_fold(0u64, |sum, p| sum.checked_add(p.nodes))
    else {
        bail!("the engine's bench positions' node counts overflow");
    };
    if position_nodes != report.totals.nodes {
        bail!(
            "the engine's bench totals.nodes ({}) is not the sum of its positions' nodes ({position_nodes})",
            report.totals.nodes
        );
    }
    if report.eval.by_material_bucket.len() != MATERIAL_BUCKETS
        || report.eval.by_side_buckets.len() != SIDE_BUCKETS
    {
        bail!("the engine's bench eval buckets are not {MATERIAL_BUCKETS} rows");
    }
    if let Some((field, problem)) = report.eval.by_search_problem() {
        bail!("the engine's bench {field}: {problem}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_unknown_schema() {
        let error = parse_bench(br#"{"schema_version": 3}"#).unwrap_err();
        assert!(error.to_string().contains("schema_version 3"), "{error}");
        assert!(parse_bench(b"Nodes searched: 5").is_err());
    }

    fn document(engine: serde_json::Value) -> Vec<u8> {
        let rows = vec![[0u64; 3]; 8];
        serde_json::json!({
            "schema_version": 1,
            "engine": engine,
            "depth": 1,
            "positions": [{"fen": "x", "nodes": 5, "time_ns": 1}],
            "totals": {"nodes": 5, "time_ns": 1},
            "eval": {
                "calls": 0,
                "exits": {"super_lazy": 0, "lazy": 0, "full": 0},
                "by_material_bucket": rows,
                "by_side_buckets": vec![rows.clone(); 8],
            },
        })
        .to_string()
        .into_bytes()
    }

    #[test]
    fn reads_the_calibrated_constants_and_their_absence_in_older_revisions() {
        let old = parse_bench(&document(
            serde_json::json!({"name": "squall", "version": "0.1.0"}),
        ))
        .unwrap();
        assert_eq!(old.engine.margin_tables, None);
        assert_eq!(old.engine.futility_base_margin_by_source, None);
        let table = |base: i32| {
            let row = |v: i32| vec![v; 8];
            serde_json::json!({"lo": row(base), "hi": row(base + 1), "p50": row(base + 2)})
        };
        let new = parse_bench(&document(serde_json::json!({
            "name": "squall",
            "version": "0.1.0",
            "margin_tables": {
                "king": table(0), "lazy_residual": table(10), "super_lazy_residual": table(20)
            },
            "futility_base_margin_by_source": [350, 175, 100],
        })))
        .unwrap();
        let tables = new.engine.margin_tables.unwrap();
        assert_eq!(tables.king.lo, vec![[0; 8]], "a flat king row is one class");
        assert_eq!(
            (
                tables.king.hi[0][7],
                tables.lazy_residual.p50[0],
                tables.super_lazy_residual.lo[3]
            ),
            (1, 12, 20)
        );
        assert_eq!(
            new.engine.futility_base_margin_by_source,
            Some([350, 175, 100])
        );
    }

    #[test]
    fn reads_king_rows_by_danger_class_and_refuses_bad_shapes() {
        let row = |v: i32| vec![v; 8];
        let flat = |v: i32| serde_json::json!({"lo": row(v), "hi": row(v), "p50": row(v)});
        let with_king = |king: serde_json::Value| {
            parse_bench(&document(serde_json::json!({
                "name": "squall",
                "version": "0.1.0",
                "margin_tables": {
                    "king": king, "lazy_residual": flat(10), "super_lazy_residual": flat(20)
                },
            })))
        };
        let nested = with_king(serde_json::json!({
            "lo": [row(-1), row(-5)], "hi": [row(1), row(2)], "p50": [row(0), row(0)]
        }))
        .unwrap();
        let king = nested.engine.margin_tables.unwrap().king;
        assert_eq!((king.lo.len(), king.lo[1][3], king.hi[1][0]), (2, -5, 2));
        let error = |king: serde_json::Value| format!("{:#}", with_king(king).unwrap_err());
        let classes = squall::tier::DANGER_CLASSES;
        let too_many = error(serde_json::json!({
            "lo": vec![row(0); classes + 1], "hi": [row(0)], "p50": [row(0)]
        }));
        let expected = format!(
            "engine.margin_tables.king.lo: {} rows, expected 1 to {classes}",
            classes + 1
        );
        assert!(too_many.contains(&expected), "{too_many}");
        let short = error(serde_json::json!({
            "lo": [row(0), vec![0; 7]], "hi": [row(0), row(0)], "p50": [row(0), row(0)]
        }));
        assert!(
            short.contains("engine.margin_tables.king.lo[1]: expected a row of 8 integers"),
            "{short}"
        );
        let uneven = error(serde_json::json!({
            "lo": [row(0), row(0)], "hi": row(0), "p50": [row(0), row(0)]
        }));
        assert!(uneven.contains("2, 1 and 2 danger classes"), "{uneven}");
        let empty = error(serde_json::json!({"lo": [], "hi": [], "p50": []}));
        assert!(empty.contains("king.lo: 0 rows"), "{empty}");
        let scalar = error(serde_json::json!({"lo": 3, "hi": row(0), "p50": row(0)}));
        assert!(
            scalar.contains("engine.margin_tables.king.lo: expected an array"),
            "{scalar}"
        );
    }

    /// A bench report of one position whose exits are `[3, 2, 5]`, all in material bucket 0;
    /// `by_search` is spliced in as given.
    fn sample(version: u64, by_search: Option<&str>) -> Vec<u8> {
        let rows = |first: &str| {
            let mut rows = vec![first.to_string()];
            rows.extend(std::iter::repeat_n("[0, 0, 0]".to_string(), 7));
            format!("[{}]", rows.join(", "))
        };
        let side_row = format!("[{}]", ["[0, 0, 0]"; 8].join(", "));
        let by_search = by_search.map_or_else(String::new, |s| format!(r#", "by_search": {s}"#));
        format!(
            r#"{{"schema_version": {version},
                "engine": {{"name": "squall", "version": "0.1.0", "features": []}},
                "depth": 3, "hash_mb": 16, "full_eval": false,
                "positions": [{{"fen": "8/8/8/8/8/8/8/K6k w - - 0 1", "nodes": 7, "time_ns": 9}}],
                "totals": {{"nodes": 7, "time_ns": 9, "nps": 1}},
                "eval": {{"calls": 10, "exits": {{"super_lazy": 3, "lazy": 2, "full": 5}},
                          "by_material_bucket": {}, "by_side_buckets": [{}]{by_search}}}}}"#,
            rows("[3, 2, 5]"),
            vec![side_row; 8].join(", ")
        )
        .into_bytes()
    }

    fn split(main: [u64; 3], quiescence: [u64; 3]) -> String {
        let search = |[super_lazy, lazy, full]: [u64; 3]| {
            let mut rows = vec![format!("[{super_lazy}, {lazy}, {full}]")];
            rows.extend(std::iter::repeat_n("[0, 0, 0]".to_string(), 7));
            format!(
                r#"{{"exits": {{"super_lazy": {super_lazy}, "lazy": {lazy}, "full": {full}}},
                    "by_material_bucket": [{}]}}"#,
                rows.join(", ")
            )
        };
        format!(
            r#"{{"main": {}, "quiescence": {}}}"#,
            search(main),
            search(quiescence)
        )
    }

    #[test]
    fn reads_the_split_by_search() {
        let report = parse_bench(&sample(2, Some(&split([1, 2, 1], [2, 0, 4])))).unwrap();
        let by_search = report.eval.by_search.expect("schema 2 has the split");
        assert_eq!(by_search.main.exits.as_array(), [1, 2, 1]);
        assert_eq!(by_search.quiescence.by_material_bucket[0], [2, 0, 4]);
    }

    #[test]
    fn an_old_schema_bench_has_no_split_and_still_parses() {
        let report = parse_bench(&sample(1, None)).unwrap();
        assert_eq!(report.eval.exits.as_array(), [3, 2, 5]);
        assert!(report.eval.by_search.is_none());
    }

    #[test]
    fn refuses_a_missing_or_inconsistent_split() {
        let error = parse_bench(&sample(2, None)).unwrap_err();
        assert!(
            error.to_string().contains("lacks eval.by_search"),
            "{error}"
        );
        // One quiescence full exit too many: main + quiescence is not every exit.
        let error = parse_bench(&sample(2, Some(&split([1, 2, 1], [2, 0, 5])))).unwrap_err();
        assert!(error.to_string().contains("main + quiescence"), "{error}");
    }
}
