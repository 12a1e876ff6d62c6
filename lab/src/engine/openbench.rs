//! The `openbench` bench format: an engine's free-text bench output read exactly as OpenBench's
//! client reads it, and the bench command that produces it.
//!
//! OpenBench's rule, reproduced here: the output lines are scanned from the last to the first;
//! in each, every run of characters other than ASCII letters, digits and spaces becomes one
//! space; then, ignoring case, the leftmost match of `N nodes`, `nodes N` or
//! `nodes searched N` gives the node count and the leftmost match of `N nps`, `nps N` or
//! `nodes second N` the speed (spaces between words: one or more). Each figure is taken from
//! the last line that has it, independently of the other. Like OpenBench, words are not
//! delimited (`123 nodesx` counts as `123 nodes`), and the leftmost match wins even across
//! figures: in `nodes 12 nps 34` the speed is `12 nps`, 12. (Checked against OpenBench's
//! Python on thousands of generated lines while this was written.)

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::engine::config::{DEPTH_PLACEHOLDER, EXE_PLACEHOLDER};
use crate::process::tail_section;

/// Lines of output quoted when the figures cannot be read or the bench fails.
const QUOTED_LINES: usize = 8;

/// What one bench reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BenchFigures {
    pub(crate) nodes: u64,
    /// Nodes per second, as the engine computed it.
    pub(crate) nps: u64,
}

/// Reads the node count and speed from bench output by OpenBench's rule (see the module
/// documentation). Fails, quoting the last lines, when either is missing, zero (no search
/// measures zero nodes or zero speed) or beyond 64 bits.
pub(crate) fn parse_bench_output(output: &str) -> Result<BenchFigures> {
    let mut nodes = None;
    let mut nps = None;
    for line in output.trim().split('\n').rev() {
        let line = normalise(line);
        if nodes.is_none() {
            nodes = find_figure(&line, &NODES_PATTERNS).map(str::to_string);
        }
        if nps.is_none() {
            nps = find_figure(&line, &NPS_PATTERNS).map(str::to_string);
        }
        if nodes.is_some() && nps.is_some() {
            break;
        }
    }
    let quoted = || tail_section(output.as_bytes(), QUOTED_LINES);
    let (nodes, nps) = match (nodes, nps) {
        (Some(nodes), Some(nps)) => (nodes, nps),
        (None, None) => bail!(
            "the bench output has neither a node count nor a speed (OpenBench reads `N nodes`, \
             `nodes N` or `nodes searched N`, and `N nps`, `nps N` or `nodes second N`){}",
            quoted()
        ),
        (None, Some(_)) => bail!(
            "the bench output has no node count (OpenBench reads `N nodes`, `nodes N` or \
             `nodes searched N`){}",
            quoted()
        ),
        (Some(_), None) => bail!(
            "the bench output has no speed (OpenBench reads `N nps`, `nps N` or \
             `nodes second N`){}",
            quoted()
        ),
    };
    let nodes = figure_value(&nodes, "node count", &quoted)?;
    let nps = figure_value(&nps, "speed (nodes per second)", &quoted)?;
    Ok(BenchFigures { nodes, nps })
}

fn figure_value(digits: &str, what: &str, quoted: &dyn Fn() -> String) -> Result<u64> {
    let value: u64 = match digits.parse() {
        Ok(value) => value,
        Err(_) => bail!(
            "the bench's {what} {digits} does not fit in 64 bits{}",
            quoted()
        ),
    };
    if value == 0 {
        bail!(
            "the bench reports a {what} of 0, which no search measures{}",
            quoted()
        );
    }
    Ok(value)
}

/// One of OpenBench's three forms: `N word`, `word N`, `word1 word2 N`.
enum Pattern {
    NumberThen(&'static str),
    Then(&'static str),
    ThenThen(&'static str, &'static str),
}

/// In OpenBench's order: at a given position the first form that matches wins.
const NODES_PATTERNS: [Pattern; 3] = [
    Pattern::NumberThen("nodes"),
    Pattern::Then("nodes"),
    Pattern::ThenThen("nodes", "searched"),
];
const NPS_PATTERNS: [Pattern; 3] = [
    Pattern::NumberThen("nps"),
    Pattern::Then("nps"),
    Pattern::ThenThen("nodes", "second"),
];

/// The line with every run of characters other than ASCII letters, digits and spaces replaced
/// by one space, lower-cased (OpenBench matches ignoring case).
fn normalise(line: &str) -> Vec<u8> {
    let mut normal = Vec::with_capacity(line.len());
    let mut in_run = false;
    for byte in line.bytes() {
        if byte.is_ascii_alphanumeric() || byte == b' ' {
            normal.push(byte.to_ascii_lowercase());
            in_run = false;
        } else if !in_run {
            normal.push(b' ');
            in_run = true;
        }
    }
    normal
}

/// The digits of the leftmost match of any pattern in `line` (a regex search of the patterns'
/// alternation, then the first digit run of the match).
fn find_figure<'a>(line: &'a [u8], patterns: &[Pattern]) -> Option<&'a str> {
    for start in 0..line.len() {
        for pattern in patterns {
            let digits = match *pattern {
                // Inside a run of digits a number matches only if the whole run does, which
                // was tried at its first digit: skipping the rest keeps a long run linear.
                Pattern::NumberThen(_) if start > 0 && line[start - 1].is_ascii_digit() => None,
                Pattern::NumberThen(word) => {
                    let digits = digit_run(line, start);
                    (!digits.is_empty())
                        .then(|| spaces_then_word(line, start + digits.len(), word))
                        .flatten()
                        .map(|_| digits)
                }
                Pattern::Then(word) => {
                    word_at(line, start, word).and_then(|end| spaces_then_digits(line, end))
                }
                Pattern::ThenThen(first, second) => word_at(line, start, first)
                    .and_then(|end| spaces_then_word(line, end, second))
                    .and_then(|end| spaces_then_digits(line, end)),
            };
            if let Some(digits) = digits {
                return std::str::from_utf8(digits).ok();
            }
        }
    }
    None
}

fn digit_run(line: &[u8], start: usize) -> &[u8] {
    let length = line[start..]
        .iter()
        .take_while(|byte| byte.is_ascii_digit())
        .count();
    &line[start..start + length]
}

/// The end of `word` when it starts at `at`.
fn word_at(line: &[u8], at: usize, word: &str) -> Option<usize> {
    line.get(at..)?
        .starts_with(word.as_bytes())
        .then_some(at + word.len())
}

/// The end of one or more spaces from `at`, if there is at least one.
fn skip_spaces(line: &[u8], at: usize) -> Option<usize> {
    let spaces = line
        .get(at..)?
        .iter()
        .take_while(|&&byte| byte == b' ')
        .count();
    (spaces > 0).then_some(at + spaces)
}

fn spaces_then_word(line: &[u8], at: usize, word: &str) -> Option<usize> {
    word_at(line, skip_spaces(line, at)?, word)
}

fn spaces_then_digits(line: &[u8], at: usize) -> Option<&[u8]> {
    let digits = digit_run(line, skip_spaces(line, at)?);
    (!digits.is_empty()).then_some(digits)
}

/// The argv of a bench: `template` split on whitespace (no shell, so no quoting: the
/// configuration refuses quotes and other shell syntax), `{exe}` replaced by `binary` (made
/// absolute) and `{depth}` by `depth`. Without a depth, every argument that contains
/// `{depth}` is left out, so `{exe} bench {depth}` runs `EXE bench`, as OpenBench does. A depth
/// for a template without `{depth}` is an error: that engine's bench takes no depth.
pub(crate) fn bench_argv(
    template: &str,
    binary: &Path,
    depth: Option<u32>,
) -> Result<Vec<OsString>> {
    if depth.is_some() && !template.contains(DEPTH_PLACEHOLDER) {
        bail!(
            "a depth was asked for, but the engine's bench takes no depth: its bench command \
             \"{template}\" has no {DEPTH_PLACEHOLDER}"
        );
    }
    let binary = absolute(binary)?;
    let binary = binary
        .to_str()
        .with_context(|| format!("the engine path {} is not UTF-8", binary.display()))?;
    let argv: Vec<OsString> = template
        .split_whitespace()
        .filter(|word| depth.is_some() || !word.contains(DEPTH_PLACEHOLDER))
        .map(|word| {
            let word = word.replace(EXE_PLACEHOLDER, binary);
            match depth {
                Some(depth) => word.replace(DEPTH_PLACEHOLDER, &depth.to_string()),
                None => word,
            }
            .into()
        })
        .collect();
    if argv.is_empty() {
        bail!("the bench command \"{template}\" is empty");
    }
    Ok(argv)
}

fn absolute(path: &Path) -> Result<PathBuf> {
    if path.is_absolute() {
        return Ok(path.to_path_buf());
    }
    Ok(std::env::current_dir()
        .context("reading the current directory")?
        .join(path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn figures(output: &str) -> BenchFigures {
        parse_bench_output(output).unwrap_or_else(|e| panic!("{e:#}\n{output}"))
    }

    fn failure(output: &str) -> String {
        format!("{:#}", parse_bench_output(output).expect_err("an error"))
    }

    #[test]
    fn squall_s_bench() {
        let output = "\
Position: 1/2 rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1
info depth 13 nodes 1234 nps 99
Position: 2/2 r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1

===========================
Total time (ms) : 1858
Nodes searched: 8662985
Nodes/second: 4662119
";
        assert_eq!(
            figures(output),
            BenchFigures {
                nodes: 8_662_985,
                nps: 4_662_119
            }
        );
    }

    #[test]
    fn stockfish_s_bench() {
        let output = "\
info string NNUE evaluation using nn-1111cefa1111.nnue enabled
info depth 13 seldepth 18 multipv 1 score cp 32 nodes 333 nps 111 hashfull 0 tbhits 0 time 3 pv e2e4
bestmove e2e4 ponder c7c5

===========================
Total time (ms) : 1250
Nodes searched  : 1234567
Nodes/second    : 987654
";
        assert_eq!(
            figures(output),
            BenchFigures {
                nodes: 1_234_567,
                nps: 987_654
            }
        );
    }

    #[test]
    fn ethereal_s_one_line_bench() {
        let output = "\
Bench [#  1]             20 score           15360 nodes      1451 nps
Bench [# 50]             20 score            2222 nodes       333 nps
OVERALL: 1234567 nodes 987654 nps
";
        // "Bench: ..." with a colon reads the same.
        assert_eq!(
            figures(output),
            BenchFigures {
                nodes: 1_234_567,
                nps: 987_654
            }
        );
        assert_eq!(
            figures("Bench: 1234567 nodes 987654 nps"),
            BenchFigures {
                nodes: 1_234_567,
                nps: 987_654
            }
        );
    }

    #[test]
    fn case_is_ignored() {
        assert_eq!(
            figures("123 NODES 456 NPS"),
            BenchFigures {
                nodes: 123,
                nps: 456
            }
        );
        assert_eq!(
            figures("NODES: 77\nNps=88\n"),
            BenchFigures { nodes: 77, nps: 88 }
        );
    }

    #[test]
    fn the_last_line_with_each_figure_wins_independently() {
        let output = "\
position 1: nodes 1000 nps 50
position 2: nodes 2000 nps 60
total nodes 3000
speed 70 nps
";
        assert_eq!(
            figures(output),
            BenchFigures {
                nodes: 3000,
                nps: 70
            }
        );
        // The total comes before a trailing line that has only a speed: the nodes are still
        // the total's.
        let output = "nodes 9 nps 9\nTotal: 5000 nodes\n4000 nps\n";
        assert_eq!(
            figures(output),
            BenchFigures {
                nodes: 5000,
                nps: 4000
            }
        );
    }

    #[test]
    fn within_a_line_the_leftmost_match_wins() {
        // `nodes 10` starts before `20 nodes`.
        assert_eq!(figures("nodes 10 20 nodes nps 5").nodes, 10);
        // Non-alphanumerics separate like spaces: `nodes:12` is `nodes 12`.
        assert_eq!(figures("nodes:12,nps:34").nodes, 12);
        // OpenBench's quirk, kept: in `nodes 12 nps 34` the leftmost speed match is `12 nps`.
        assert_eq!(figures("nodes:12,nps:34").nps, 12);
        assert_eq!(figures("nodes: 12 | speed: 34 nps").nps, 34);
        // A number glued to letters still counts from its first digit, as in a regex search.
        assert_eq!(figures("x42 nodes 7 nps").nodes, 42);
    }

    #[test]
    fn missing_figures_are_errors_quoting_the_output() {
        let message = failure("Nodes searched: 100\nTotal time: 5 ms\n");
        assert!(message.contains("has no speed"), "{message}");
        assert!(message.contains("Total time: 5 ms"), "{message}");
        let message = failure("Nodes/second: 100\n");
        assert!(message.contains("has no node count"), "{message}");
        let message = failure("Segmentation fault\n\u{0}\u{ff}garbage");
        assert!(
            message.contains("neither a node count nor a speed"),
            "{message}"
        );
        assert!(message.contains("Segmentation fault"), "{message}");
        let message = failure("");
        assert!(message.contains("neither"), "{message}");
        // A word glued to the number before it does not count; to the one after, it does
        // (`123nodes 456nps` has `nodes 456`, as OpenBench reads it, and no speed).
        let message = failure("123nodes 456nps");
        assert!(message.contains("has no speed"), "{message}");
    }

    #[test]
    fn impossible_figures_are_errors() {
        let message = failure("0 nodes 100 nps");
        assert!(message.contains("node count of 0"), "{message}");
        let message = failure("10 nodes 0 nps");
        assert!(
            message.contains("speed (nodes per second) of 0"),
            "{message}"
        );
        let message = failure("99999999999999999999999 nodes 1 nps");
        assert!(message.contains("does not fit in 64 bits"), "{message}");
    }

    #[test]
    fn bench_argv_substitutes_and_splits() {
        let binary = Path::new("/cache/bin/engine");
        let argv = bench_argv("{exe} bench", binary, None).unwrap();
        assert_eq!(argv, ["/cache/bin/engine", "bench"]);
        let argv = bench_argv("{exe}   bench  {depth}", binary, Some(13)).unwrap();
        assert_eq!(argv, ["/cache/bin/engine", "bench", "13"]);
        let argv = bench_argv("{exe} bench --depth={depth} x", binary, None).unwrap();
        assert_eq!(argv, ["/cache/bin/engine", "bench", "x"]);
        let message = format!(
            "{:#}",
            bench_argv("{exe} bench", binary, Some(5)).unwrap_err()
        );
        assert!(message.contains("bench takes no depth"), "{message}");
        let relative = bench_argv("{exe} bench", Path::new("rel/engine"), None).unwrap();
        assert!(Path::new(&relative[0]).is_absolute(), "{relative:?}");
    }

    #[test]
    fn a_long_run_of_digits_is_read_once_and_a_number_is_its_whole_run() {
        // Quadratic in the run's length if every digit began a new try: hours at megabytes.
        let output = format!("Bench: 5 nodes 10 nps\n{}\n", "7".repeat(1 << 20));
        assert_eq!(figures(&output), BenchFigures { nodes: 5, nps: 10 });
        assert_eq!(
            figures("x123456 nodes 789 nps"),
            BenchFigures {
                nodes: 123456,
                nps: 789
            }
        );
    }

    proptest! {
        #[test]
        fn never_panics(text in ".{0,400}") {
            let _ = parse_bench_output(&text);
        }

        #[test]
        fn never_panics_on_bench_like_text(
            lines in proptest::collection::vec(
                "([0-9]{0,25}|nodes|NPS|searched|second|[ :/=,]{1,3}|[a-z]{1,5}){0,8}",
                0..8,
            )
        ) {
            let _ = parse_bench_output(&lines.join("\n"));
        }

        #[test]
        fn finds_the_figures_of_a_total_line(
            nodes in 1u64..u64::MAX,
            nps in 1u64..u64::MAX,
            noise in "[a-z :]{0,20}",
            earlier in 0u64..1000,
        ) {
            // `noise` never forms a figure of its own: every form needs digits.
            let output = format!(
                "{noise}\ninfo nodes {earlier} nps {earlier}\nBench: {nodes} nodes {nps} nps\n{noise}"
            );
            prop_assert_eq!(parse_bench_output(&output).unwrap(), BenchFigures { nodes, nps });
        }
    }
}
