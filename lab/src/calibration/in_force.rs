//! The margin tables in force in a revision: as its binary reports them in its bench JSON
//! (`engine.margin_tables`), with the percentiles the source comment of the marked block of
//! `engine/src/eval/margins.rs` says each bucket was chosen at. For revisions whose bench does
//! not report them, the marked block read back (the inverse of `tables::render`). A calibration
//! records them so its page can draw, on each residual histogram, the margin the engine had and
//! where the same percentile falls now. The king tables have one row per danger class of the
//! defending king (one in revisions from before danger classes).

use std::path::Path;

use serde::{Deserialize, Deserializer, Serialize};
use squall::tier::{DANGER_CLASSES, SIDE_BUCKETS};

use super::margins_source::{const_rows, marked_block, MARGINS_FILE};
use crate::engine::bench::{MarginTable, MarginTables};
use crate::input::{read_text, SOURCE};

/// Percentile pairs, one per side bucket.
pub(crate) type Percentiles = [[f64; 2]; SIDE_BUCKETS];

/// One table's entries per bucket, and the percentile pair each bucket was chosen at (`None`
/// when the block's source comment does not say, as in hand-written tables).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct TableInForce {
    pub(crate) lo: [i32; SIDE_BUCKETS],
    pub(crate) hi: [i32; SIDE_BUCKETS],
    pub(crate) p50: [i32; SIDE_BUCKETS],
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) percentiles: Option<Percentiles>,
}

impl TableInForce {
    fn entries(&self) -> MarginTable {
        MarginTable {
            lo: self.lo,
            hi: self.hi,
            p50: self.p50,
        }
    }
}

/// The three tables, named after the histogram sets they were generated from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MarginsInForce {
    /// The king table of each danger class, 1 to `DANGER_CLASSES` of them (files written
    /// before danger classes hold one table, not a list).
    #[serde(deserialize_with = "king_by_class")]
    pub(crate) king: Vec<TableInForce>,
    pub(crate) lazy_residual: TableInForce,
    pub(crate) super_lazy_residual: TableInForce,
}

/// `king`: a list of 1 to `DANGER_CLASSES` tables, or one table (one class).
fn king_by_class<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<TableInForce>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMore {
        One(Box<TableInForce>),
        ByClass(Vec<TableInForce>),
    }
    let tables = match OneOrMore::deserialize(d)? {
        OneOrMore::One(table) => vec![*table],
        OneOrMore::ByClass(tables) => tables,
    };
    if !(1..=DANGER_CLASSES).contains(&tables.len()) {
        return Err(serde::de::Error::custom(format!(
            "margins.king: {} tables, expected 1 to {DANGER_CLASSES} (one per danger class)",
            tables.len()
        )));
    }
    Ok(tables)
}

impl MarginsInForce {
    /// The table generated from the histogram set `set`; for `king`, that of danger class
    /// `class` (class 0's when the tables have fewer classes).
    pub(crate) fn table(&self, set: &str, class: usize) -> Option<&TableInForce> {
        match set {
            "king" => Some(self.king_of_class(class)),
            "lazy_residual" => Some(&self.lazy_residual),
            "super_lazy_residual" => Some(&self.super_lazy_residual),
            _ => None,
        }
    }

    /// The king table of danger class `class`: class 0's when the tables have fewer classes,
    /// as the engine reads one row for every class.
    pub(crate) fn king_of_class(&self, class: usize) -> &TableInForce {
        self.king.get(class).unwrap_or(&self.king[0])
    }
}

/// The tables in force in a calibrated binary: `reported` (its bench's `engine.margin_tables`),
/// with the percentiles of the marked block in `sources` when that block holds the same
/// entries (a comment describes only the tables below it); for revisions whose bench does not
/// report them, the marked block alone. `None` when neither is there.
pub(crate) fn margins_in_force(
    reported: Option<&MarginTables>,
    sources: Option<&Path>,
) -> Option<MarginsInForce> {
    let block = sources
        // The tree is the revision's own: a symlink to a device or a huge file reads as no block.
        .and_then(|s| read_text(&s.join(MARGINS_FILE), SOURCE).ok())
        .and_then(|source| parse_margins(&source));
    let Some(reported) = reported else {
        return block;
    };
    let table = |table: &MarginTable, written: Option<&TableInForce>| TableInForce {
        lo: table.lo,
        hi: table.hi,
        p50: table.p50,
        percentiles: written
            .filter(|w| &w.entries() == table)
            .and_then(|w| w.percentiles),
    };
    let king = &reported.king;
    Some(MarginsInForce {
        king: (0..king.lo.len())
            .map(|class| {
                let entries = MarginTable {
                    lo: king.lo[class],
                    hi: king.hi[class],
                    p50: king.p50[class],
                };
                table(&entries, block.as_ref().and_then(|b| b.king.get(class)))
            })
            .collect(),
        lazy_residual: table(
            &reported.lazy_residual,
            block.as_ref().map(|b| &b.lazy_residual),
        ),
        super_lazy_residual: table(
            &reported.super_lazy_residual,
            block.as_ref().map(|b| &b.super_lazy_residual),
        ),
    })
}

/// The tables between the markers of `margins.rs`; `None` unless all nine are there, the king
/// tables with one row per danger class (1 to `DANGER_CLASSES`, the same count in all three)
/// or one flat row, each row of `SIDE_BUCKETS` entries.
pub(crate) fn parse_margins(source: &str) -> Option<MarginsInForce> {
    let block = marked_block(source)?;
    let rows = |name: &str| -> Option<Vec<[i32; SIDE_BUCKETS]>> {
        const_rows(block, name)?
            .into_iter()
            .map(|row| row.try_into().ok())
            .collect()
    };
    let choices = block
        .lines()
        .find(|l| l.starts_with("// source:"))
        .map(comment_choices)
        .unwrap_or_default();
    let percentiles = |key: &str| {
        choices
            .iter()
            .find(|(name, _)| name == key)
            .map(|(_, pairs)| *pairs)
    };
    let table = |prefix: &str, key: &str| -> Option<TableInForce> {
        let row = |suffix: &str| -> Option<[i32; SIDE_BUCKETS]> {
            match rows(&format!("{prefix}_{suffix}"))?.as_slice() {
                [row] => Some(*row),
                _ => None,
            }
        };
        Some(TableInForce {
            lo: row("LO")?,
            hi: row("HI")?,
            p50: row("P50")?,
            percentiles: percentiles(key),
        })
    };
    let (lo, hi, p50) = (rows("KING_LO")?, rows("KING_HI")?, rows("KING_P50")?);
    if !(1..=DANGER_CLASSES).contains(&lo.len()) || hi.len() != lo.len() || p50.len() != lo.len() {
        return None;
    }
    let king = (0..lo.len())
        .map(|class| TableInForce {
            lo: lo[class],
            hi: hi[class],
            p50: p50[class],
            percentiles: percentiles(&format!("king[{class}]")).or_else(|| percentiles("king")),
        })
        .collect();
    Some(MarginsInForce {
        king,
        lazy_residual: table("LAZY_RESID", "lazy")?,
        super_lazy_residual: table("SUPER_LAZY_RESID", "super-lazy")?,
    })
}

/// The percentile pairs of `// source: ...; king P; lazy P; super-lazy P; medians p50` (or
/// `residuals P` for both residual tables, `king[C] P` for the king table of danger class C
/// alone), where P is one `pLO/pHI` for every bucket or eight of them, as `tables::render`
/// writes it.
fn comment_choices(line: &str) -> Vec<(String, Percentiles)> {
    let mut out = Vec::new();
    for part in line.split("; ").skip(1) {
        let Some((name, pairs)) = part.split_once(' ') else {
            continue;
        };
        let Some(pairs) = parse_pairs(pairs) else {
            continue;
        };
        let king_class = name
            .strip_prefix("king[")
            .and_then(|rest| rest.strip_suffix(']'))
            .and_then(|class| class.parse::<usize>().ok())
            .filter(|&class| class < DANGER_CLASSES);
        match name {
            "residuals" => {
                out.push(("lazy".to_string(), pairs));
                out.push(("super-lazy".to_string(), pairs));
            }
            "king" | "lazy" | "super-lazy" => out.push((name.to_string(), pairs)),
            _ if king_class.is_some() => out.push((name.to_string(), pairs)),
            _ => {}
        }
    }
    out
}

fn parse_pairs(text: &str) -> Option<Percentiles> {
    let pairs: Vec<[f64; 2]> = text
        .split_whitespace()
        .map(|pair| {
            let (lo, hi) = pair.split_once('/')?;
            Some([
                lo.strip_prefix('p')?.parse().ok()?,
                hi.strip_prefix('p')?.parse().ok()?,
            ])
        })
        .collect::<Option<_>>()?;
    match pairs.len() {
        1 => Some([pairs[0]; SIDE_BUCKETS]),
        SIDE_BUCKETS => pairs.try_into().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::margins_source::{BEGIN_MARKER, END_MARKER};
    use super::*;

    #[test]
    fn reads_the_shipped_tables_and_their_percentiles() {
        let source = include_str!("../../../engine/src/eval/margins.rs");
        let margins = parse_margins(source).expect("the engine's margins.rs parses");
        assert_eq!(margins.king.len(), DANGER_CLASSES);
        assert_eq!(margins.king[1].hi, [0; 8]);
        assert!(margins.lazy_residual.lo.iter().all(|&v| v < 0));
        let king = margins.king[1].percentiles.expect("king percentiles");
        assert!(king.iter().all(|[lo, hi]| (lo + hi - 100.0).abs() < 1e-9));
        assert!(margins.super_lazy_residual.percentiles.is_some());
    }

    #[test]
    fn reads_uniform_and_per_bucket_choices_and_refuses_partial_blocks() {
        let rows = |prefix: &str| {
            ["LO", "HI", "P50"]
                .map(|s| format!("pub const {prefix}_{s}: [i32; 8] = [1, 2, 3, 4, 5, 6, 7, 8];\n"))
                .concat()
        };
        let block = |comment: &str| {
            format!(
                "x\n{BEGIN_MARKER}{comment}\n{}{}{}{END_MARKER}\n",
                rows("KING"),
                rows("LAZY_RESID"),
                rows("SUPER_LAZY_RESID")
            )
        };
        let margins = parse_margins(&block(
            "// source: c.json (9 positions, depth 2); king p5/p95; residuals p1/p99 p2/p98 \
             p1/p99 p1/p99 p1/p99 p1/p99 p1/p99 p0.5/p99.5; medians p50",
        ))
        .unwrap();
        assert_eq!(margins.king.len(), 1, "a flat king row is one class");
        assert_eq!(margins.king[0].percentiles, Some([[5.0, 95.0]; 8]));
        let lazy = margins.lazy_residual.percentiles.unwrap();
        assert_eq!((lazy[1], lazy[7]), ([2.0, 98.0], [0.5, 99.5]));
        assert_eq!(margins.super_lazy_residual.percentiles, Some(lazy));
        assert_eq!(margins.lazy_residual.hi[7], 8);
        // Hand-written tables: entries without percentiles.
        assert_eq!(
            parse_margins(&block("// hand-tuned")).unwrap().king[0].percentiles,
            None
        );
        assert!(parse_margins(&block("").replace("pub const KING_P50", "const X")).is_none());
        assert!(parse_margins("no markers").is_none());
        // A row rustfmt wrapped reads the same.
        let wrapped = block("").replace(
            "pub const KING_LO: [i32; 8] = [1, 2, 3, 4, 5, 6, 7, 8];",
            "pub const KING_LO: [i32; SIDE_BUCKETS] = [\n    -1, 2, 3, 4, 5, 6, 7, 8,\n];",
        );
        assert_eq!(parse_margins(&wrapped).unwrap().king[0].lo[0], -1);
        // King rows by danger class, each class's percentiles from `king[C]` (else `king`).
        let by_class = block(
            "// source: c.json (9 positions, depth 2); king[0] p5/p95; king[1] p1/p99; \
             residuals p1/p99; medians p50",
        )
        .replace(
            "pub const KING_LO: [i32; 8] = [1, 2, 3, 4, 5, 6, 7, 8];",
            "pub const KING_LO: [[i32; SIDE_BUCKETS]; DANGER_CLASSES] = [\n    \
             [1, 2, 3, 4, 5, 6, 7, 8],\n    [-9, 2, 3, 4, 5, 6, 7, 8],\n];",
        )
        .replace(
            "pub const KING_HI: [i32; 8] = [1, 2, 3, 4, 5, 6, 7, 8];",
            "pub const KING_HI: [[i32; SIDE_BUCKETS]; DANGER_CLASSES] =\n    \
             [[1, 2, 3, 4, 5, 6, 7, 8], [1, 2, 3, 4, 5, 6, 7, 9]];",
        );
        let uneven = parse_margins(&by_class);
        assert!(uneven.is_none(), "KING_P50 has one row, the others two");
        let by_class = by_class.replace(
            "pub const KING_P50: [i32; 8] = [1, 2, 3, 4, 5, 6, 7, 8];",
            "pub const KING_P50: [[i32; 8]; 2] = [[1, 2, 3, 4, 5, 6, 7, 8], [0; 8]];",
        );
        assert!(
            parse_margins(&by_class).is_none(),
            "`[0; 8]` is not a row of integers"
        );
        let by_class = by_class.replace("[0; 8]]", "[0, 0, 0, 0, 0, 0, 0, 0]]");
        let margins = parse_margins(&by_class).unwrap();
        assert_eq!(margins.king.len(), 2);
        assert_eq!((margins.king[1].lo[0], margins.king[1].hi[7]), (-9, 9));
        assert_eq!(margins.king[0].percentiles, Some([[5.0, 95.0]; 8]));
        assert_eq!(margins.king[1].percentiles, Some([[1.0, 99.0]; 8]));
        assert_eq!(margins.king_of_class(1), &margins.king[1]);
        let three = by_class.replace(
            "[-9, 2, 3, 4, 5, 6, 7, 8],",
            "[-9, 2, 3, 4, 5, 6, 7, 8], [1, 1, 1, 1, 1, 1, 1, 1],",
        );
        assert!(
            parse_margins(&three).is_none(),
            "more classes than the engine has"
        );
    }

    #[test]
    fn a_recorded_single_king_table_reads_as_one_class() {
        let table = serde_json::json!({"lo": vec![1; 8], "hi": vec![2; 8], "p50": vec![0; 8]});
        let old = serde_json::json!({
            "king": table, "lazy_residual": table, "super_lazy_residual": table
        });
        let margins: MarginsInForce = serde_json::from_value(old).unwrap();
        assert_eq!(margins.king.len(), 1);
        assert_eq!(
            margins.king_of_class(1).hi,
            [2; 8],
            "class 0's table for every class"
        );
        let written = serde_json::to_value(&margins).unwrap();
        assert!(written["king"].is_array());
        assert_eq!(
            serde_json::from_value::<MarginsInForce>(written).unwrap(),
            margins
        );
        let none = serde_json::json!({
            "king": [], "lazy_residual": table, "super_lazy_residual": table
        });
        let error = serde_json::from_value::<MarginsInForce>(none)
            .unwrap_err()
            .to_string();
        assert!(error.contains("margins.king: 0 tables"), "{error}");
    }

    /// A source tree whose marked block holds the shipped tables.
    fn shipped_tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(MARGINS_FILE);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, include_str!("../../../engine/src/eval/margins.rs")).unwrap();
        dir
    }

    fn reported(margins: &MarginsInForce) -> MarginTables {
        let rows = |row: fn(&TableInForce) -> [i32; 8]| margins.king.iter().map(row).collect();
        MarginTables {
            king: crate::engine::bench::KingMarginTable {
                lo: rows(|t| t.lo),
                hi: rows(|t| t.hi),
                p50: rows(|t| t.p50),
            },
            lazy_residual: margins.lazy_residual.entries(),
            super_lazy_residual: margins.super_lazy_residual.entries(),
        }
    }

    #[test]
    fn the_binary_s_tables_come_first_with_the_block_s_percentiles_when_they_match() {
        let tree = shipped_tree();
        let shipped = parse_margins(include_str!("../../../engine/src/eval/margins.rs")).unwrap();
        // The binary reports the block's tables: its entries, the block's percentiles.
        let same = margins_in_force(Some(&reported(&shipped)), Some(tree.path())).unwrap();
        assert_eq!(same, shipped);
        // The binary reports other entries than the block holds: they win, and the block's
        // comment, which describes other tables, lends no percentiles to the table that differs.
        let mut other = reported(&shipped);
        other.lazy_residual.hi[3] += 1;
        let binary = margins_in_force(Some(&other), Some(tree.path())).unwrap();
        assert_eq!(binary.lazy_residual.hi, other.lazy_residual.hi);
        assert_eq!(binary.lazy_residual.percentiles, None);
        assert_eq!(binary.king, shipped.king);
        // A king row of one class differs: only that class loses its percentiles.
        let mut one_class = reported(&shipped);
        one_class.king.lo[1][0] -= 1;
        let binary = margins_in_force(Some(&one_class), Some(tree.path())).unwrap();
        assert_eq!(binary.king[0], shipped.king[0]);
        assert_eq!(binary.king[1].lo[0], shipped.king[1].lo[0] - 1);
        assert_eq!(binary.king[1].percentiles, None);
        // Without a source tree: the entries alone.
        let alone = margins_in_force(Some(&other), None).unwrap();
        assert_eq!(alone.king[0].percentiles, None);
        assert_eq!(alone.super_lazy_residual.lo, other.super_lazy_residual.lo);
        // A revision whose bench does not report them: the block read back.
        assert_eq!(margins_in_force(None, Some(tree.path())), Some(shipped));
        assert_eq!(margins_in_force(None, None), None);
    }
}
