//! `lab tables`: turns saved histograms into the engine's margin tables (Rust source), and
//! rewrites the marked block in `engine/src/eval/margins.rs` in place. The block holds other
//! calibrated constants too (QSearch futility's base margins): the rewrite replaces the tables
//! it writes and keeps every other statement of the block.

use super::data::CalibrationFile;
use super::margins_source::{replace_block, MARGINS_FILE};
use anyhow::{bail, Context};
use squall::calibrate::Histogram;
use squall::tier::{DANGER_CLASSES, SIDE_BUCKETS};
use std::path::Path;

/// The fewest samples a bucket's histogram needs before its percentiles become margins: below
/// that a tail percentile is one or two chance positions.
pub(crate) const MIN_SAMPLES_PER_BUCKET: u64 = 100;

/// The fewest samples that must lie at or beyond each chosen tail percentile (`n * p / 100` for
/// the low one, `n * (100 - p) / 100` for the high one), so a margin never rests on a handful
/// of positions: p1 needs 500 samples, p0.1 needs 5,000.
pub(crate) const MIN_TAIL_SAMPLES: f64 = 5.0;

/// The largest margin entry, in centipawns: every term the tables bound is far smaller (the
/// calibrated tables stay within 300), and larger entries would switch the lazy exits off.
pub(crate) const MARGIN_LIMIT: i32 = 2000;

/// A low/high percentile pair; symmetric by construction unless asked otherwise.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pair {
    pub(crate) lo: f64,
    pub(crate) hi: f64,
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

/// Percentile choices for every table and per-side bucket, the king tables' per danger class.
#[derive(Clone, Debug)]
pub struct Choice {
    pub(crate) king: [[Pair; SIDE_BUCKETS]; DANGER_CLASSES],
    pub(crate) lazy: [Pair; SIDE_BUCKETS],
    pub(crate) super_lazy: [Pair; SIDE_BUCKETS],
}

impl Choice {
    pub fn uniform(residual: Pair, king: Pair) -> Choice {
        Choice {
            king: [[king; SIDE_BUCKETS]; DANGER_CLASSES],
            lazy: [residual; SIDE_BUCKETS],
            super_lazy: [residual; SIDE_BUCKETS],
        }
    }

    /// Applies a per-bucket override to the tables it names.
    pub(crate) fn set(&mut self, target: Target, bucket: usize, pair: Pair) {
        match target {
            Target::King(None) => self.king.iter_mut().for_each(|row| row[bucket] = pair),
            Target::King(Some(class)) => self.king[class][bucket] = pair,
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
pub(crate) enum Target {
    /// The king table of one danger class (`kingC`), or of every class (`king`).
    King(Option<usize>),
    Lazy,
    SuperLazy,
    /// Both residual tables (the default when no table is named).
    Residual,
}

/// Parses a `[TABLE:]B=LO:HI` per-bucket override; TABLE is `king` (every danger class),
/// `kingC` (danger class C alone), `lazy`, `super-lazy` or `residual` (both residual tables,
/// the default).
pub(crate) fn parse_override(
    text: &str,
    allow_asymmetric: bool,
) -> anyhow::Result<(Target, usize, Pair)> {
    const FORM: &str = "expected [TABLE:]BUCKET=LO:HI with TABLE king, king0, king1, lazy, \
         super-lazy or residual";
    let (head, pair) = text.split_once('=').context(format!("`{text}`: {FORM}"))?;
    let (target, bucket) = match head.split_once(':') {
        None => (Target::Residual, head),
        Some((table, bucket)) => {
            let target = match table.trim() {
                "king" => Target::King(None),
                "lazy" => Target::Lazy,
                "super-lazy" => Target::SuperLazy,
                "residual" => Target::Residual,
                other => match other.strip_prefix("king").map(str::parse::<usize>) {
                    Some(Ok(class)) if class < DANGER_CLASSES => Target::King(Some(class)),
                    Some(_) => bail!(
                        "`{text}`: `{other}`: the danger class must be 0..={}; {FORM}",
                        DANGER_CLASSES - 1
                    ),
                    None => bail!("`{text}`: unknown table `{other}`; {FORM}"),
                },
            };
            (target, bucket)
        }
    };
    let (lo, hi) = pair.split_once(':').context(format!("`{text}`: {FORM}"))?;
    let bucket: usize = bucket
        .trim()
        .parse()
        .context(format!("`{text}`: bad bucket"))?;
    if bucket >= SIDE_BUCKETS {
        bail!("`{text}`: bucket must be 0..={}", SIDE_BUCKETS - 1);
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

/// One table row: the percentile `pick(bucket)` of each bucket, each checked by [`entry`].
fn row_values(
    name: &str,
    set: &str,
    hists: &[Histogram],
    pick: impl Fn(usize) -> f64,
) -> anyhow::Result<[i32; SIDE_BUCKETS]> {
    if hists.len() != SIDE_BUCKETS {
        bail!(
            "{name}: expected {SIDE_BUCKETS} buckets of `{set}`, found {}",
            hists.len()
        );
    }
    let mut values = [0; SIDE_BUCKETS];
    for (bucket, (value, h)) in values.iter_mut().zip(hists).enumerate() {
        *value = entry(name, set, bucket, h, pick(bucket))?;
    }
    Ok(values)
}

fn list(values: &[i32]) -> String {
    let items: Vec<String> = values.iter().map(i32::to_string).collect();
    format!("[{}]", items.join(", "))
}

/// One flat table row as a statement.
fn row(
    name: &str,
    set: &str,
    hists: &[Histogram],
    pick: impl Fn(usize) -> f64,
) -> anyhow::Result<String> {
    let values = row_values(name, set, hists, pick)?;
    Ok(format!(
        "pub const {name}: [i32; SIDE_BUCKETS] = {};",
        list(&values)
    ))
}

/// The widest line rustfmt leaves alone (its default `max_width`).
const LINE_WIDTH: usize = 100;
/// The widest array literal rustfmt keeps on one line (its default `array_width`).
const ARRAY_WIDTH: usize = 60;

/// A king table, one row per danger class, laid out as rustfmt lays it out: an array literal
/// wider than `ARRAY_WIDTH` one row per line, else on one line with the statement when it fits,
/// else on the next line. A row (8 entries within `MARGIN_LIMIT`) is never wider.
fn rows_statement(name: &str, rows: &[[i32; SIDE_BUCKETS]]) -> String {
    let head = format!("pub const {name}: [[i32; SIDE_BUCKETS]; DANGER_CLASSES] =");
    let items: Vec<String> = rows.iter().map(|r| list(r)).collect();
    let array = format!("[{}]", items.join(", "));
    // rustfmt's array width counts what is between the brackets.
    let one_line = array.len() - 2 <= ARRAY_WIDTH;
    let statement = format!("{head} {array};");
    if one_line && statement.len() <= LINE_WIDTH {
        statement
    } else if one_line {
        format!("{head}\n    {array};")
    } else {
        let rows: String = items.iter().map(|r| format!("    {r},\n")).collect();
        format!("{head} [\n{rows}];")
    }
}

/// The entry of table `name` for `bucket`: percentile `p` of its histogram `h` (of the set
/// `set`), refused unless the bucket has enough samples, the percentile lies inside the
/// recorded range, and the value is within [`MARGIN_LIMIT`].
pub(crate) fn entry(
    name: &str,
    set: &str,
    bucket: usize,
    h: &Histogram,
    p: f64,
) -> anyhow::Result<i32> {
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
    Ok(value)
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

/// The name a calibration file goes by in the tables' source comment: its file name.
pub(crate) fn origin(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

fn describe(pairs: &[Pair; SIDE_BUCKETS]) -> String {
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

/// The king histograms by danger class as the tables read them. A bucket of class c >= 1 with
/// fewer than `MIN_SAMPLES_PER_BUCKET` samples is read from class c - 1's: an attacker's army
/// of that bucket rarely or never brings that many pieces to the king (bucket 0 has none), so
/// its own entries could not be measured, and the cell takes the calmer class's margins.
pub(crate) fn king_histograms(file: &CalibrationFile) -> Option<Vec<Vec<Histogram>>> {
    let mut by_class = file.king_histograms_by_class()?;
    for class in 1..by_class.len() {
        for bucket in 0..SIDE_BUCKETS.min(by_class[class].len()) {
            if by_class[class][bucket].count() < MIN_SAMPLES_PER_BUCKET {
                if let Some(calmer) = by_class[class - 1].get(bucket).cloned() {
                    by_class[class][bucket] = calmer;
                }
            }
        }
    }
    Some(by_class)
}

/// The king rows of every danger class (LO, HI, P50): each class's from its own histograms;
/// a class the file has no histograms for (a file from an engine without danger classes)
/// gets class 0's rows, which only a choice identical to class 0's may ask for.
fn king_rows(
    file: &CalibrationFile,
    origin: &str,
    choice: &Choice,
) -> anyhow::Result<[[[i32; SIDE_BUCKETS]; DANGER_CLASSES]; 3]> {
    let by_class = king_histograms(file)
        .with_context(|| format!("{origin} has no `king` histograms: record them with `lab calibrate REV --modes residual`"))?;
    let mut rows = [[[0; SIDE_BUCKETS]; DANGER_CLASSES]; 3];
    for class in 0..DANGER_CLASSES {
        let pairs = &choice.king[class];
        let Some(hists) = by_class.get(class) else {
            if pairs != &choice.king[0] {
                bail!(
                    "{origin} has king histograms for {} danger class(es), so the king table \
                     of class {class} is class 0's: its percentiles cannot differ from class \
                     0's; calibrate with an engine that reports danger classes",
                    by_class.len()
                );
            }
            for table in &mut rows {
                table[class] = table[0];
            }
            continue;
        };
        let set = if class == 0 {
            "king".to_string()
        } else {
            format!("king[{class}]")
        };
        rows[0][class] = row_values("KING_LO", &set, hists, |b| pairs[b].lo)?;
        rows[1][class] = row_values("KING_HI", &set, hists, |b| pairs[b].hi)?;
        rows[2][class] = row_values("KING_P50", &set, hists, |_| 50.0)?;
    }
    Ok(rows)
}

/// The king tables' percentiles in the source comment: `king P` when every danger class has
/// the same, else `king[0] P; king[1] P`.
fn describe_king(choice: &Choice) -> String {
    if choice.king.iter().all(|row| row == &choice.king[0]) {
        format!("king {}", describe(&choice.king[0]))
    } else {
        choice
            .king
            .iter()
            .enumerate()
            .map(|(class, row)| format!("king[{class}] {}", describe(row)))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// The Rust source of the margin-table block (without the markers).
pub fn render(file: &CalibrationFile, origin: &str, choice: &Choice) -> anyhow::Result<String> {
    let set = |name: &str| {
        file.histogram_set(name).with_context(|| {
            format!("{origin} has no `{name}` histograms: record them with `lab calibrate REV --modes residual`")
        })
    };
    let [king_lo, king_hi, king_p50] = king_rows(file, origin, choice)?;
    let lazy = set("lazy_residual")?;
    let super_lazy = set("super_lazy_residual")?;
    let l = &choice.lazy;
    let s = &choice.super_lazy;
    let residuals = if l == s {
        format!("residuals {}", describe(l))
    } else {
        format!("lazy {}; super-lazy {}", describe(l), describe(s))
    };
    let lines = [
        format!(
            "// source: {} ({} positions, depth {}); {}; {residuals}; medians p50",
            safe_origin(origin),
            file.positions,
            file.depth,
            describe_king(choice),
        ),
        rows_statement("KING_LO", &king_lo),
        rows_statement("KING_HI", &king_hi),
        rows_statement("KING_P50", &king_p50),
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

/// Rewrites the margin tables of the engine at `repo_root` in place, atomically.
pub(crate) fn apply(repo_root: &Path, block: &str) -> anyhow::Result<std::path::PathBuf> {
    let path = repo_root.join(MARGINS_FILE);
    let source = crate::input::read_text(&path, crate::input::SOURCE)?;
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
            Target::King(None)
        );
        assert_eq!(
            parse_override("king1:0=10:90", false).unwrap().0,
            Target::King(Some(1))
        );
        let last = DANGER_CLASSES - 1;
        let error = parse_override(&format!("king{DANGER_CLASSES}:0=10:90"), false)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains(&format!("danger class must be 0..={last}")),
            "{error}"
        );
        assert!(parse_override("kings:0=10:90", false).is_err());
        assert!(parse_override("pawns:3=5:95", false).is_err());
        assert!(parse_override("8=5:95", false).is_err());
        assert!(parse_override("3=5", false).is_err());
        assert!(parse_override("lazy:3=10:95", false).is_err());
    }

    #[test]
    fn king_overrides_address_every_class_or_one() {
        let pair = |low: f64| Pair {
            lo: low,
            hi: 100.0 - low,
        };
        let mut choice = Choice::uniform(pair(2.0), pair(5.0));
        choice.set(Target::King(None), 3, pair(1.0));
        choice.set(Target::King(Some(1)), 4, pair(10.0));
        assert_eq!(
            (choice.king[0][3], choice.king[1][3]),
            (pair(1.0), pair(1.0))
        );
        assert_eq!(
            (choice.king[0][4], choice.king[1][4]),
            (pair(5.0), pair(10.0))
        );
        let calm = "p5/p95 p5/p95 p5/p95 p1/p99 p5/p95 p5/p95 p5/p95 p5/p95";
        let expected: Vec<String> = (0..DANGER_CLASSES)
            .map(|class| match class {
                1 => "king[1] p5/p95 p5/p95 p5/p95 p1/p99 p10/p90 p5/p95 p5/p95 p5/p95".to_string(),
                _ => format!("king[{class}] {calm}"),
            })
            .collect();
        assert_eq!(describe_king(&choice), expected.join("; "));
    }

    #[test]
    fn king_rows_are_laid_out_as_rustfmt_lays_them_out() {
        let short = rows_statement("KING_HI", &[[0; 8], [0; 8]]);
        assert_eq!(
            short,
            "pub const KING_HI: [[i32; SIDE_BUCKETS]; DANGER_CLASSES] =\n    \
             [[0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0]];"
        );
        // Short enough for one line as an array, too long with the statement.
        let p50 = rows_statement("KING_P50", &[[0, 0, 0, -1, 0, -2, -2, 0]; 2]);
        assert_eq!(
            p50,
            "pub const KING_P50: [[i32; SIDE_BUCKETS]; DANGER_CLASSES] =\n    \
             [[0, 0, 0, -1, 0, -2, -2, 0], [0, 0, 0, -1, 0, -2, -2, 0]];"
        );
        // At rustfmt's array width (60 between the brackets), and one past it.
        let at = rows_statement("K", &[[10; 8], [10, 10, 0, 0, 0, 0, 0, 0]]);
        assert!(
            at.ends_with("=\n    [[10, 10, 10, 10, 10, 10, 10, 10], [10, 10, 0, 0, 0, 0, 0, 0]];")
        );
        let past = rows_statement("K", &[[10; 8], [10, 10, 10, 0, 0, 0, 0, 0]]);
        assert!(past.ends_with(
            "= [\n    [10, 10, 10, 10, 10, 10, 10, 10],\n    [10, 10, 10, 0, 0, 0, 0, 0],\n];"
        ));
        // Wider than rustfmt's array width, though it would fit a line.
        let wide = rows_statement("KING_HI", &[[18, 21, 21, 24, 24, 27, 32, 30], [67; 8]]);
        assert_eq!(
            wide,
            "pub const KING_HI: [[i32; SIDE_BUCKETS]; DANGER_CLASSES] = [\n    \
             [18, 21, 21, 24, 24, 27, 32, 30],\n    [67, 67, 67, 67, 67, 67, 67, 67],\n];"
        );
        let long = rows_statement("KING_LO", &[[-100; 8], [-1000; 8]]);
        assert!(long.ends_with(
            "= [\n    [-100, -100, -100, -100, -100, -100, -100, -100],\n    \
             [-1000, -1000, -1000, -1000, -1000, -1000, -1000, -1000],\n];"
        ));
        let one = rows_statement("K", &[[1; 8]]);
        assert_eq!(
            one,
            "pub const K: [[i32; SIDE_BUCKETS]; DANGER_CLASSES] = [[1, 1, 1, 1, 1, 1, 1, 1]];"
        );
    }
}
