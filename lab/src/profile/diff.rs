//! The differential flamegraph of `lab profile A --vs B`, drawn by inferno from the two runs'
//! folded stacks, whichever sampler (pprof or perf) wrote them. The stacks come from the runs
//! themselves, already parsed and checked, not from their files, which could have changed since.
//!
//! `inferno::differential` merges the two files into one line per stack with both counts, then
//! `inferno::flamegraph` draws it: frame widths are B's samples, the colour is the change of the
//! frame's self samples (the stacks ending there) from A to B (red: B spends more there, blue:
//! less, white: no change), and each frame's tooltip ends with that change as a share of B's
//! samples (`; +1.25%`). This is flamegraph.pl's convention: a callee that grew is red, its
//! callers stay white unless their own code changed.
//!
//! - **Normalised**: A's counts are scaled to B's total before the deltas are taken, so a longer
//!   run (more samples) does not paint every frame red: colours show where the *share* moved.
//! - **Comparable names**: Rust's legacy symbol hashes (`::h0123456789abcdef`) and hex addresses
//!   are dropped first; both may differ between two builds of the same function.

use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};

use super::perf::{sample_total, FoldedStack};
use crate::engine::callgrind::strip_hash;
use crate::paths::write_atomically;

/// What the two sides are called in the graph's title.
#[derive(Debug, Clone)]
pub(crate) struct DiffLabels<'a> {
    pub(crate) a: &'a str,
    pub(crate) b: &'a str,
    /// The sampler both sides were recorded with ("pprof", "perf").
    pub(crate) sampler: &'a str,
}

/// Writes the differential flamegraph of A's and B's folded stacks to `svg` (atomically).
pub(crate) fn write_differential(
    a: &[FoldedStack],
    b: &[FoldedStack],
    svg: &Path,
    labels: &DiffLabels,
) -> Result<()> {
    let drawn = render_differential(a, b, labels)?;
    write_atomically(svg, &drawn)
}

/// The most samples a side of a differential may have: inferno scales counts through `f64`
/// (exact up to 2^53) and takes percentages as `100 * count` in `isize`, which larger totals
/// would overflow. Years of sampling at the highest `--frequency`.
const MAX_DIFF_SAMPLES: u64 = 1 << 53;

/// The differential flamegraph SVG of `a` (before) and `b` (after). A side whose counts add up
/// to more than [`MAX_DIFF_SAMPLES`] is refused.
pub(crate) fn render_differential(
    a: &[FoldedStack],
    b: &[FoldedStack],
    labels: &DiffLabels,
) -> Result<Vec<u8>> {
    let total = |stacks: &[FoldedStack], label: &str| -> Result<u64> {
        let samples = sample_total(stacks).with_context(|| format!("the profile of {label}"))?;
        if samples > MAX_DIFF_SAMPLES {
            bail!(
                "the profile of {label} has {samples} samples, more than the {MAX_DIFF_SAMPLES} \
                 a differential flamegraph can draw: refused as corrupt"
            );
        }
        Ok(samples)
    };
    let a_samples = total(a, labels.a)?;
    let b_samples = total(b, labels.b)?;
    if b_samples == 0 || a_samples == 0 {
        bail!("a differential flamegraph needs samples on both sides");
    }
    let (a, b) = (comparable(a), comparable(b));
    let mut merged = Vec::new();
    let options = inferno::differential::Options {
        normalize: true,
        strip_hex: true,
    };
    inferno::differential::from_readers(options, a.as_bytes(), b.as_bytes(), &mut merged)
        .context("merging the folded stacks of A and B")?;
    let merged = String::from_utf8(merged).context("merged folded stacks are not UTF-8")?;

    let mut options = inferno::flamegraph::Options::default();
    options.title = format!(
        "{} → {}: differential flamegraph ({})",
        labels.a, labels.b, labels.sampler
    );
    options.subtitle = Some(format!(
        "widths: B's {b_samples} samples; red: B spends a larger share there, blue: smaller \
         (A scaled to B's total)"
    ));
    options.count_name = "samples".to_string();
    let mut drawn = Vec::new();
    inferno::flamegraph::from_lines(&mut options, merged.lines(), &mut drawn)
        .map_err(|error| anyhow!("drawing the differential flamegraph: {error}"))?;
    Ok(drawn)
}

/// Folded stacks as text, each frame's legacy Rust hash suffix dropped: only the integer counts
/// checked by [`sample_total`] reach inferno.
fn comparable(stacks: &[FoldedStack]) -> String {
    let mut out = String::new();
    for stack in stacks {
        let frames: Vec<&str> = stack.frames.iter().map(|frame| strip_hash(frame)).collect();
        out.push_str(&frames.join(";"));
        out.push(' ');
        out.push_str(&stack.count.to_string());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::perf::parse_folded;

    /// [`render_differential`] of two folded texts.
    fn render(a: &str, b: &str) -> Result<Vec<u8>> {
        render_differential(&parse_folded(a)?, &parse_folded(b)?, &LABELS)
    }

    const LABELS: DiffLabels = DiffLabels {
        a: "old",
        b: "new",
        sampler: "test",
    };

    /// `(tooltip, fill)` of every frame of an inferno SVG.
    fn frames(svg: &str) -> Vec<(String, String)> {
        svg.split("<g>")
            .skip(1)
            .filter_map(|group| {
                let title = group.split_once("<title>")?.1.split_once("</title>")?.0;
                let fill = group.split_once("fill=\"")?.1.split_once('"')?.0;
                Some((title.to_string(), fill.to_string()))
            })
            .collect()
    }

    fn frame<'a>(frames: &'a [(String, String)], name: &str) -> &'a (String, String) {
        frames
            .iter()
            .find(|(title, _)| title.starts_with(&format!("{name} (")))
            .unwrap_or_else(|| panic!("no frame {name} in {frames:?}"))
    }

    #[test]
    fn a_frame_that_grew_is_red_and_one_that_shrank_is_blue() {
        // B ran twice as long: 40 samples against 20. Unnormalised, every frame would have
        // grown; in shares, eval went from 50% to 75% and search from 50% to 25%.
        let a = "main;search;eval::h0123456789abcdef 10\nmain;search 10\n";
        let b = "main;search;eval::hfedcba9876543210 30\nmain;search 10\n";
        let svg = String::from_utf8(render(a, b).unwrap()).unwrap();
        assert!(
            svg.contains("old → new: differential flamegraph (test)"),
            "{svg}"
        );
        assert!(svg.contains("B&apos;s 40 samples") || svg.contains("B's 40 samples"));
        let frames = frames(&svg);
        // The two builds' hashes differ: one frame, not a removed and an added one.
        let (eval_title, eval_fill) = frame(&frames, "eval");
        assert_eq!(eval_title, "eval (30 samples, 75.00%; +25.00%)");
        let (red, green, blue) = rgb(eval_fill);
        assert!(red == 255 && green < 255 && blue == green, "{eval_fill}");
        // `search`'s own samples shrank: 10 of 20, scaled to 20 of 40, now 10 of 40.
        let (search_title, search_fill) = frame(&frames, "search");
        assert_eq!(search_title, "search (40 samples, 100.00%; -25.00%)");
        let (red, green, blue) = rgb(search_fill);
        assert!(blue == 255 && red < 255 && red == green, "{search_fill}");
        let (main_title, main_fill) = frame(&frames, "main");
        assert_eq!(main_title, "main (40 samples, 100.00%; 0.00%)");
        assert_eq!(rgb(main_fill), (250, 250, 250), "no change: white");
    }

    #[test]
    fn a_shorter_b_is_scaled_too() {
        let a = "main;search;eval 30\nmain;search;movegen 10\n";
        let b = "main;search;eval 10\nmain;search;movegen 10\n";
        let svg = String::from_utf8(render(a, b).unwrap()).unwrap();
        let frames = frames(&svg);
        // B ran half as long. eval: 75% of A (15 of 20 once scaled), 50% of B.
        let (eval_title, eval_fill) = frame(&frames, "eval");
        assert_eq!(eval_title, "eval (10 samples, 50.00%; -25.00%)");
        let (red, green, blue) = rgb(eval_fill);
        assert!(blue == 255 && red < 255 && red == green, "{eval_fill}");
        let (movegen_title, movegen_fill) = frame(&frames, "movegen");
        assert_eq!(movegen_title, "movegen (10 samples, 50.00%; +25.00%)");
        assert_eq!(rgb(movegen_fill).0, 255, "{movegen_fill}");
        // Callers whose own samples did not change stay white.
        assert_eq!(rgb(&frame(&frames, "main").1), (250, 250, 250));
    }

    #[test]
    fn no_samples_on_a_side_is_an_error() {
        assert!(render("", "main 3\n").is_err());
        assert!(render("main 3\n", "main 0\n").is_err());
    }

    #[test]
    fn counts_whose_total_overflows_are_refused_on_either_side() {
        let overflow = format!("main;eval {}\nmain;search 2\n", u64::MAX - 1);
        let too_many = format!("main;eval {MAX_DIFF_SAMPLES}\nmain;search 1\n");
        for (huge, expected) in [
            (&overflow, "add up to more than"),
            (&too_many, "a differential flamegraph can draw"),
        ] {
            for (a, b, side) in [
                (huge.as_str(), "main 3\n", "old"),
                ("main 3\n", huge.as_str(), "new"),
            ] {
                let refused = format!("{:#}", render(a, b).unwrap_err());
                assert!(
                    refused.contains(&format!("the profile of {side}"))
                        && refused.contains(expected),
                    "{refused}"
                );
            }
        }
        // The limit itself is drawn.
        let most = format!("main;eval {}\nmain;search 1\n", MAX_DIFF_SAMPLES - 1);
        assert!(render(&most, "main;eval 1\n").is_ok());
        assert!(render("main;eval 1\n", &most).is_ok());
    }

    #[test]
    fn only_hashes_are_dropped_from_frames() {
        let stacks = parse_folded("x;y::h0123456789abcdef;a::hash 4\n\nmain 07\n").unwrap();
        assert_eq!(comparable(&stacks), "x;y;a::hash 4\nmain 7\n");
    }

    fn rgb(fill: &str) -> (u8, u8, u8) {
        let inner = fill
            .strip_prefix("rgb(")
            .and_then(|rest| rest.strip_suffix(')'))
            .unwrap_or_else(|| panic!("not rgb(): {fill}"));
        let parts: Vec<u8> = inner
            .split(',')
            .map(|p| p.trim().parse().unwrap())
            .collect();
        (parts[0], parts[1], parts[2])
    }
}
