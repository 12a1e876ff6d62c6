//! `lab tables`: turns saved histograms into the engine's margin tables (Rust source), and
//! rewrites the marked block in `engine/src/eval/margins.rs` in place.

use super::data::CalibrationFile;
use anyhow::{bail, Context};
use squall::calibrate::Histogram;
use std::path::Path;

pub const BEGIN_MARKER: &str = "// BEGIN MARGIN TABLES\n";
pub const END_MARKER: &str = "// END MARGIN TABLES";
pub const MARGINS_FILE: &str = "engine/src/eval/margins.rs";

/// A low/high percentile pair; symmetric by construction unless asked otherwise.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pair {
    pub lo: f64,
    pub hi: f64,
}

impl Pair {
    pub fn new(lo: f64, hi: f64, allow_asymmetric: bool) -> anyhow::Result<Pair> {
        if !(0.0..=100.0).contains(&lo) || !(0.0..=100.0).contains(&hi) || lo >= hi {
            bail!("percentiles must satisfy 0 <= lo < hi <= 100 (got p{lo} / p{hi})");
        }
        if !allow_asymmetric && ((lo + hi) - 100.0).abs() > 1e-9 {
            bail!(
                "p{lo} / p{hi} is not symmetric: keep each bucket's pair symmetric (p5 with p95), \
                 or pass --allow-asymmetric"
            );
        }
        Ok(Pair { lo, hi })
    }
}

/// Percentile choices for every table and per-side bucket.
#[derive(Clone, Debug)]
pub struct Choice {
    pub king: [Pair; 8],
    pub lazy: [Pair; 8],
    pub super_lazy: [Pair; 8],
}

impl Choice {
    pub fn uniform(residual: Pair, king: Pair) -> Choice {
        Choice {
            king: [king; 8],
            lazy: [residual; 8],
            super_lazy: [residual; 8],
        }
    }

    /// Applies a per-bucket override to the tables it names.
    pub fn set(&mut self, target: Target, bucket: usize, pair: Pair) {
        match target {
            Target::King => self.king[bucket] = pair,
            Target::Lazy => self.lazy[bucket] = pair,
            Target::SuperLazy => self.super_lazy[bucket] = pair,
            Target::Residual => {
                self.lazy[bucket] = pair;
                self.super_lazy[bucket] = pair;
            }
        }
    }
}

/// Which tables a per-bucket override sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    King,
    Lazy,
    SuperLazy,
    /// Both residual tables (the default when no table is named).
    Residual,
}

/// Parses a `[TABLE:]B=LO:HI` per-bucket override; TABLE is `king`, `lazy`, `super-lazy` or
/// `residual` (both residual tables, the default).
pub fn parse_override(text: &str, allow_asymmetric: bool) -> anyhow::Result<(Target, usize, Pair)> {
    const FORM: &str =
        "expected [TABLE:]BUCKET=LO:HI with TABLE king, lazy, super-lazy or residual";
    let (head, pair) = text.split_once('=').context(format!("`{text}`: {FORM}"))?;
    let (target, bucket) = match head.split_once(':') {
        None => (Target::Residual, head),
        Some((table, bucket)) => {
            let target = match table.trim() {
                "king" => Target::King,
                "lazy" => Target::Lazy,
                "super-lazy" => Target::SuperLazy,
                "residual" => Target::Residual,
                other => bail!("`{text}`: unknown table `{other}`; {FORM}"),
            };
            (target, bucket)
        }
    };
    let (lo, hi) = pair.split_once(':').context(format!("`{text}`: {FORM}"))?;
    let bucket: usize = bucket
        .trim()
        .parse()
        .context(format!("`{text}`: bad bucket"))?;
    if bucket > 7 {
        bail!("`{text}`: bucket must be 0..=7");
    }
    let lo: f64 = lo
        .trim()
        .parse()
        .context(format!("`{text}`: bad low percentile"))?;
    let hi: f64 = hi
        .trim()
        .parse()
        .context(format!("`{text}`: bad high percentile"))?;
    Ok((target, bucket, Pair::new(lo, hi, allow_asymmetric)?))
}

fn row(name: &str, hists: &[Histogram], pick: impl Fn(usize) -> f64) -> anyhow::Result<String> {
    let mut values = Vec::with_capacity(8);
    for (bucket, h) in hists.iter().enumerate() {
        // An empty bucket never occurs in search; 0 keeps its margin neutral.
        values.push(h.percentile(pick(bucket)).unwrap_or(0).to_string());
    }
    if values.len() != 8 {
        bail!("{name}: expected 8 buckets, found {}", values.len());
    }
    Ok(format!(
        "pub const {name}: [i32; 8] = [{}];",
        values.join(", ")
    ))
}

fn describe(pairs: &[Pair; 8]) -> String {
    if pairs.iter().all(|p| p == &pairs[0]) {
        format!("p{}/p{}", pairs[0].lo, pairs[0].hi)
    } else {
        pairs
            .iter()
            .map(|p| format!("p{}/p{}", p.lo, p.hi))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The Rust source of the margin-table block (without the markers).
pub fn render(file: &CalibrationFile, origin: &str, choice: &Choice) -> anyhow::Result<String> {
    let set = |name: &str| {
        file.histogram_set(name).with_context(|| {
            format!("{origin} has no `{name}` histograms: run `calibrate residual`")
        })
    };
    let king = set("king")?;
    let lazy = set("lazy_residual")?;
    let super_lazy = set("super_lazy_residual")?;
    let k = &choice.king;
    let l = &choice.lazy;
    let s = &choice.super_lazy;
    let residuals = if l == s {
        format!("residuals {}", describe(l))
    } else {
        format!("lazy {}; super-lazy {}", describe(l), describe(s))
    };
    let lines = [
        format!(
            "// source: {origin} ({} positions, depth {}); king {}; {residuals}; medians p50",
            file.positions,
            file.depth,
            describe(k),
        ),
        row("KING_LO", &king, |b| k[b].lo)?,
        row("KING_HI", &king, |b| k[b].hi)?,
        row("KING_P50", &king, |_| 50.0)?,
        row("LAZY_RESID_LO", &lazy, |b| l[b].lo)?,
        row("LAZY_RESID_HI", &lazy, |b| l[b].hi)?,
        row("LAZY_RESID_P50", &lazy, |_| 50.0)?,
        row("SUPER_LAZY_RESID_LO", &super_lazy, |b| s[b].lo)?,
        row("SUPER_LAZY_RESID_HI", &super_lazy, |b| s[b].hi)?,
        row("SUPER_LAZY_RESID_P50", &super_lazy, |_| 50.0)?,
    ];
    Ok(lines.join("\n") + "\n")
}

/// Replaces the block between the markers of `source`.
pub fn replace_block(source: &str, block: &str) -> anyhow::Result<String> {
    let start = source
        .find(BEGIN_MARKER)
        .context("no `// BEGIN MARGIN TABLES` marker")?
        + BEGIN_MARKER.len();
    let end = source[start..]
        .find(END_MARKER)
        .context("no `// END MARGIN TABLES` marker")?
        + start;
    Ok(format!("{}{}{}", &source[..start], block, &source[end..]))
}

/// Rewrites the margin tables of the engine at `repo_root` in place, atomically.
pub fn apply(repo_root: &Path, block: &str) -> anyhow::Result<std::path::PathBuf> {
    let path = repo_root.join(MARGINS_FILE);
    let source = std::fs::read_to_string(&path).with_context(|| format!("{}", path.display()))?;
    let updated = replace_block(&source, block).with_context(|| format!("{}", path.display()))?;
    crate::paths::write_atomically(&path, updated.as_bytes())?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_must_be_symmetric_unless_allowed() {
        assert!(Pair::new(5.0, 95.0, false).is_ok());
        assert!(Pair::new(10.0, 98.0, false).is_err());
        assert!(Pair::new(10.0, 98.0, true).is_ok());
        assert!(Pair::new(60.0, 40.0, true).is_err());
        assert_eq!(
            parse_override("3=5:95", false).unwrap(),
            (Target::Residual, 3, Pair { lo: 5.0, hi: 95.0 })
        );
        assert_eq!(
            parse_override("super-lazy:6=2:98", false).unwrap(),
            (Target::SuperLazy, 6, Pair { lo: 2.0, hi: 98.0 })
        );
        assert_eq!(
            parse_override("king:0=10:90", false).unwrap().0,
            Target::King
        );
        assert!(parse_override("pawns:3=5:95", false).is_err());
        assert!(parse_override("8=5:95", false).is_err());
        assert!(parse_override("3=5", false).is_err());
        assert!(parse_override("lazy:3=10:95", false).is_err());
    }

    #[test]
    fn block_replacement_keeps_the_rest() {
        let source = "a\n// BEGIN MARGIN TABLES\nold\n// END MARGIN TABLES\nb\n";
        assert_eq!(
            replace_block(source, "new\n").unwrap(),
            "a\n// BEGIN MARGIN TABLES\nnew\n// END MARGIN TABLES\nb\n"
        );
        assert!(replace_block("no markers", "x").is_err());
    }
}
