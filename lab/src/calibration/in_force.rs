//! The margin tables in force in a revision: as its binary reports them in its bench JSON
//! (`engine.margin_tables`), with the percentiles the source comment of the marked block of
//! `engine/src/eval/margins.rs` says each bucket was chosen at. For revisions whose bench does
//! not report them, the marked block read back (the inverse of `tables::render`). A calibration
//! records them so its page can draw, on each residual histogram, the margin the engine had and
//! where the same percentile falls now.

use std::path::Path;

use serde::{Deserialize, Serialize};
use squall::tier::SIDE_BUCKETS;

use super::margins_source::{const_values, marked_block, MARGINS_FILE};
use crate::engine::bench::{MarginTable, MarginTables};

/// Percentile pairs, one per side bucket.
type Percentiles = [[f64; 2]; SIDE_BUCKETS];

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
    pub(crate) king: TableInForce,
    pub(crate) lazy_residual: TableInForce,
    pub(crate) super_lazy_residual: TableInForce,
}

impl MarginsInForce {
    /// The table generated from the histogram set `set`.
    pub(crate) fn table(&self, set: &str) -> Option<&TableInForce> {
        match set {
            "king" => Some(&self.king),
            "lazy_residual" => Some(&self.lazy_residual),
            "super_lazy_residual" => Some(&self.super_lazy_residual),
            _ => None,
        }
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
        .and_then(|s| std::fs::read_to_string(s.join(MARGINS_FILE)).ok())
        .and_then(|source| parse_margins(&source));
    let Some(reported) = reported else {
        return block;
    };
    let percentiles = |table: &MarginTable, written: Option<&TableInForce>| {
        written
            .filter(|w| &w.entries() == table)
            .and_then(|w| w.percentiles)
    };
    let table = |table: &MarginTable, written: Option<&TableInForce>| TableInForce {
        lo: table.lo,
        hi: table.hi,
        p50: table.p50,
        percentiles: percentiles(table, written),
    };
    Some(MarginsInForce {
        king: table(&reported.king, block.as_ref().map(|b| &b.king)),
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

/// The tables between the markers of `margins.rs`; `None` unless all nine rows are there.
pub(crate) fn parse_margins(source: &str) -> Option<MarginsInForce> {
    let block = marked_block(source)?;
    let row =
        |name: &str| -> Option<[i32; SIDE_BUCKETS]> { const_values(block, name)?.try_into().ok() };
    let choices = block
        .lines()
        .find(|l| l.starts_with("// source:"))
        .map(comment_choices)
        .unwrap_or_default();
    let table = |prefix: &str, key: &str| -> Option<TableInForce> {
        Some(TableInForce {
            lo: row(&format!("{prefix}_LO"))?,
            hi: row(&format!("{prefix}_HI"))?,
            p50: row(&format!("{prefix}_P50"))?,
            percentiles: choices
                .iter()
                .find(|(name, _)| name == key)
                .map(|(_, pairs)| *pairs),
        })
    };
    Some(MarginsInForce {
        king: table("KING", "king")?,
        lazy_residual: table("LAZY_RESID", "lazy")?,
        super_lazy_residual: table("SUPER_LAZY_RESID", "super-lazy")?,
    })
}

/// The percentile pairs of `// source: ...; king P; lazy P; super-lazy P; medians p50` (or
/// `residuals P` for both residual tables), where P is one `pLO/pHI` for every bucket or
/// eight of them, as `tables::render` writes it.
fn comment_choices(line: &str) -> Vec<(String, Percentiles)> {
    let mut out = Vec::new();
    for part in line.split("; ").skip(1) {
        let Some((name, pairs)) = part.split_once(' ') else {
            continue;
        };
        let Some(pairs) = parse_pairs(pairs) else {
            continue;
        };
        match name {
            "residuals" => {
                out.push(("lazy".to_string(), pairs));
                out.push(("super-lazy".to_string(), pairs));
            }
            "king" | "lazy" | "super-lazy" => out.push((name.to_string(), pairs)),
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
        assert_eq!(margins.king.hi, [0; 8]);
        assert!(margins.lazy_residual.lo.iter().all(|&v| v < 0));
        let king = margins.king.percentiles.expect("king percentiles");
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
        assert_eq!(margins.king.percentiles, Some([[5.0, 95.0]; 8]));
        let lazy = margins.lazy_residual.percentiles.unwrap();
        assert_eq!((lazy[1], lazy[7]), ([2.0, 98.0], [0.5, 99.5]));
        assert_eq!(margins.super_lazy_residual.percentiles, Some(lazy));
        assert_eq!(margins.lazy_residual.hi[7], 8);
        // Hand-written tables: entries without percentiles.
        assert_eq!(
            parse_margins(&block("// hand-tuned"))
                .unwrap()
                .king
                .percentiles,
            None
        );
        assert!(parse_margins(&block("").replace("pub const KING_P50", "const X")).is_none());
        assert!(parse_margins("no markers").is_none());
        // A row rustfmt wrapped reads the same.
        let wrapped = block("").replace(
            "pub const KING_LO: [i32; 8] = [1, 2, 3, 4, 5, 6, 7, 8];",
            "pub const KING_LO: [i32; SIDE_BUCKETS] = [\n    -1, 2, 3, 4, 5, 6, 7, 8,\n];",
        );
        assert_eq!(parse_margins(&wrapped).unwrap().king.lo[0], -1);
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
        MarginTables {
            king: margins.king.entries(),
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
        // Without a source tree: the entries alone.
        let alone = margins_in_force(Some(&other), None).unwrap();
        assert_eq!(alone.king.percentiles, None);
        assert_eq!(alone.super_lazy_residual.lo, other.super_lazy_residual.lo);
        // A revision whose bench does not report them: the block read back.
        assert_eq!(margins_in_force(None, Some(tree.path())), Some(shipped));
        assert_eq!(margins_in_force(None, None), None);
    }
}
