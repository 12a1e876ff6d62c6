//! `lab tables`: turns saved histograms into the engine's margin tables (Rust source), and
//! rewrites the marked block in `engine/src/eval/margins.rs` in place.

use super::data::CalibrationFile;
use anyhow::{bail, Context};
use squall::calibrate::Histogram;
use std::path::Path;

pub const BEGIN_MARKER: &str = "// BEGIN MARGIN TABLES\n";
pub const END_MARKER: &str = "// END MARGIN TABLES";
pub const MARGINS_FILE: &str = "engine/src/eval/margins.rs";

/// The fewest samples a bucket's histogram needs before its percentiles become margins: below
/// that a tail percentile is one or two chance positions.
pub const MIN_SAMPLES_PER_BUCKET: u64 = 100;

/// The fewest samples that must lie at or beyond each chosen tail percentile (`n * p / 100` for
/// the low one, `n * (100 - p) / 100` for the high one), so a margin never rests on a handful
/// of positions: p1 needs 500 samples, p0.1 needs 5,000.
pub const MIN_TAIL_SAMPLES: f64 = 5.0;

/// The largest margin entry, in centipawns: every term the tables bound is far smaller (the
/// calibrated tables stay within 300), and larger entries would switch the lazy exits off.
pub const MARGIN_LIMIT: i32 = 2000;

/// A low/high percentile pair; symmetric by construction unless asked otherwise.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pair {
    pub lo: f64,
    pub hi: f64,
}

impl Pair {
    pub fn new(lo: f64, hi: f64, allow_asymmetric: bool) -> anyhow::Result<Pair> {
        let inside = |p: f64| p > 0.0 && p < 100.0;
        if !inside(lo) || !inside(hi) || lo >= hi {
            bail!(
                "percentiles must satisfy 0 < lo < hi < 100 (got p{lo} / p{hi}): p0 and p100 \
                 are the extreme samples, not a margin"
            );
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

/// One table row: the percentile `pick(bucket)` of each bucket, refused unless the bucket has
/// enough samples, the percentile lies inside the recorded range, and the value is within
/// [`MARGIN_LIMIT`].
fn row(
    name: &str,
    set: &str,
    hists: &[Histogram],
    pick: impl Fn(usize) -> f64,
) -> anyhow::Result<String> {
    if hists.len() != 8 {
        bail!(
            "{name}: expected 8 buckets of `{set}`, found {}",
            hists.len()
        );
    }
    let mut values = Vec::with_capacity(8);
    for (bucket, h) in hists.iter().enumerate() {
        let p = pick(bucket);
        let n = h.count();
        let place = format!("{name} bucket {bucket} (`{set}` histogram, {n} samples)");
        if n < MIN_SAMPLES_PER_BUCKET {
            bail!(
                "{place}: too few samples, at least {MIN_SAMPLES_PER_BUCKET} per bucket \
                 (MIN_SAMPLES_PER_BUCKET); calibrate on a larger pool or a deeper search"
            );
        }
        let tail = n as f64 * p.min(100.0 - p) / 100.0;
        if p != 50.0 && tail < MIN_TAIL_SAMPLES {
            bail!(
                "{place}: p{p} rests on {tail:.1} samples beyond it, at least \
                 {MIN_TAIL_SAMPLES} needed (MIN_TAIL_SAMPLES); pick a percentile nearer p50 \
                 or calibrate on more positions"
            );
        }
        let value = h.percentile(p).context("empty histogram")?;
        let hi = h.lo + h.bins.len() as i32;
        if value < h.lo || value >= hi {
            bail!(
                "{place}: p{p} lies in the histogram's {} (outside [{}, {hi})), so its value \
                 is unknown; pick a percentile nearer p50",
                if value < h.lo {
                    "underflow"
                } else {
                    "overflow"
                },
                h.lo
            );
        }
        if value.abs() > MARGIN_LIMIT {
            bail!(
                "{place}: p{p} is {value} cp, beyond the sane range of +-{MARGIN_LIMIT} cp \
                 (MARGIN_LIMIT) for a margin entry"
            );
        }
        values.push(value.to_string());
    }
    Ok(format!(
        "pub const {name}: [i32; 8] = [{}];",
        values.join(", ")
    ))
}

/// The calibration file's name as it may appear in a source comment: letters, digits and
/// `._-` only (anything else becomes `_`), at most 64 characters, so no user-supplied byte
/// can end the comment or add a line.
pub fn safe_origin(name: &str) -> String {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if safe.is_empty() {
        "calibration file".to_string()
    } else {
        safe
    }
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
            "// source: {} ({} positions, depth {}); king {}; {residuals}; medians p50",
            safe_origin(origin),
            file.positions,
            file.depth,
            describe(k),
        ),
        row("KING_LO", "king", &king, |b| k[b].lo)?,
        row("KING_HI", "king", &king, |b| k[b].hi)?,
        row("KING_P50", "king", &king, |_| 50.0)?,
        row("LAZY_RESID_LO", "lazy_residual", &lazy, |b| l[b].lo)?,
        row("LAZY_RESID_HI", "lazy_residual", &lazy, |b| l[b].hi)?,
        row("LAZY_RESID_P50", "lazy_residual", &lazy, |_| 50.0)?,
        row(
            "SUPER_LAZY_RESID_LO",
            "super_lazy_residual",
            &super_lazy,
            |b| s[b].lo,
        )?,
        row(
            "SUPER_LAZY_RESID_HI",
            "super_lazy_residual",
            &super_lazy,
            |b| s[b].hi,
        )?,
        row(
            "SUPER_LAZY_RESID_P50",
            "super_lazy_residual",
            &super_lazy,
            |_| 50.0,
        )?,
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
