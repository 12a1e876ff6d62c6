//! The margin tables in force in a revision: the marked block of `engine/src/eval/margins.rs`
//! read back (the inverse of `tables::render`), with the percentiles its source comment says
//! each bucket was chosen at. A calibration records them so its page can draw, on each
//! residual histogram, the margin the engine had and where the same percentile falls now.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::tables::{BEGIN_MARKER, END_MARKER, MARGINS_FILE};

/// One table's entries per bucket, and the percentile pair each bucket was chosen at (`None`
/// when the block's source comment does not say, as in hand-written tables).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TableInForce {
    pub lo: [i32; 8],
    pub hi: [i32; 8],
    pub p50: [i32; 8],
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percentiles: Option<[[f64; 2]; 8]>,
}

/// The three tables, named after the histogram sets they were generated from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MarginsInForce {
    pub king: TableInForce,
    pub lazy_residual: TableInForce,
    pub super_lazy_residual: TableInForce,
}

impl MarginsInForce {
    /// The table generated from the histogram set `set`.
    pub fn table(&self, set: &str) -> Option<&TableInForce> {
        match set {
            "king" => Some(&self.king),
            "lazy_residual" => Some(&self.lazy_residual),
            "super_lazy_residual" => Some(&self.super_lazy_residual),
            _ => None,
        }
    }
}

/// The tables of a source tree, or `None` when it has no marked block (an older revision).
pub fn margins_in_force(sources: &Path) -> Option<MarginsInForce> {
    parse_margins(&std::fs::read_to_string(sources.join(MARGINS_FILE)).ok()?)
}

/// The tables between the markers of `margins.rs`; `None` unless all nine rows are there.
pub fn parse_margins(source: &str) -> Option<MarginsInForce> {
    let start = source.find(BEGIN_MARKER)? + BEGIN_MARKER.len();
    let block = &source[start..start + source[start..].find(END_MARKER)?];
    let row = |name: &str| -> Option<[i32; 8]> {
        let line = block
            .lines()
            .find(|l| l.starts_with(&format!("pub const {name}:")))?;
        let list = line.split('=').nth(1)?.trim().trim_end_matches(';').trim();
        let values: Vec<i32> = list
            .strip_prefix('[')?
            .strip_suffix(']')?
            .split(',')
            .map(|v| v.trim().parse().ok())
            .collect::<Option<_>>()?;
        values.try_into().ok()
    };
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
fn comment_choices(line: &str) -> Vec<(String, [[f64; 2]; 8])> {
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

fn parse_pairs(text: &str) -> Option<[[f64; 2]; 8]> {
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
        1 => Some([pairs[0]; 8]),
        8 => pairs.try_into().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
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
    }
}
