//! The marked block of the engine's `engine/src/eval/margins.rs`: its markers, the block found
//! and its statements read (a constant's integers, however rustfmt wrapped it), and the block
//! replaced keeping every statement the writer does not write. `tables` writes the block,
//! `in_force` reads it back.

use anyhow::Context;

pub const BEGIN_MARKER: &str = "// BEGIN MARGIN TABLES\n";
pub const END_MARKER: &str = "// END MARGIN TABLES";
pub const MARGINS_FILE: &str = "engine/src/eval/margins.rs";

/// The comment `tables::render` starts its block with; the old one goes when a block is written.
const SOURCE_COMMENT: &str = "// source:";

/// Where the block between the markers of `source` starts and ends.
fn block_range(source: &str) -> anyhow::Result<(usize, usize)> {
    let start = source
        .find(BEGIN_MARKER)
        .context("no `// BEGIN MARGIN TABLES` marker")?
        + BEGIN_MARKER.len();
    let end = source[start..]
        .find(END_MARKER)
        .context("no `// END MARGIN TABLES` marker")?
        + start;
    Ok((start, end))
}

/// The text between the markers of `source`, when it has them.
pub(crate) fn marked_block(source: &str) -> Option<&str> {
    block_range(source)
        .ok()
        .map(|(start, end)| &source[start..end])
}

/// One statement of a block: the comment and blank lines above it, its own lines (a statement
/// rustfmt wrapped spans several), and the constant it defines.
struct Statement<'a> {
    lines: Vec<&'a str>,
    name: Option<&'a str>,
}

/// The statements of a block. Lines after the last statement form one without a name.
fn statements(block: &str) -> Vec<Statement<'_>> {
    let mut out = Vec::new();
    let mut lines = Vec::new();
    let mut name = None;
    let mut inside = false;
    for line in block.lines() {
        let code = line.trim();
        lines.push(line);
        if !inside && (code.is_empty() || code.starts_with("//")) {
            continue;
        }
        if !inside {
            inside = true;
            name = const_name(code);
        }
        if code.ends_with(';') {
            out.push(Statement {
                lines: std::mem::take(&mut lines),
                name: name.take(),
            });
            inside = false;
        }
    }
    if !lines.is_empty() {
        out.push(Statement { lines, name });
    }
    out
}

/// `NAME` of `pub const NAME: ...` (or `const`, `static`).
fn const_name(code: &str) -> Option<&str> {
    let rest = code.strip_prefix("pub ").unwrap_or(code);
    let rest = rest
        .strip_prefix("const ")
        .or_else(|| rest.strip_prefix("static "))?;
    let end = rest.find(':')?;
    Some(rest[..end].trim())
}

/// The text after the `=` of constant `name` in a marked `block`, its `;` cut off, however
/// rustfmt wrapped the statement.
fn const_list(block: &str, name: &str) -> Option<String> {
    let statement = statements(block)
        .into_iter()
        .find(|s| s.name == Some(name))?;
    let code: String = statement
        .lines
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.starts_with("//"))
        .collect();
    Some(
        code.split_once('=')?
            .1
            .trim()
            .strip_suffix(';')?
            .trim()
            .to_string(),
    )
}

/// The integers of a list's inside, `1, -2, 3` (a trailing comma allowed).
fn integers(list: &str) -> Option<Vec<i32>> {
    list.split(',')
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(|v| v.parse().ok())
        .collect()
}

/// The integers of the array constant `name` in a marked `block` (the list after its `=`),
/// however rustfmt wrapped the statement; `None` when the block has no such constant or it is
/// not a flat list of integers.
pub(crate) fn const_values(block: &str, name: &str) -> Option<Vec<i32>> {
    let list = const_list(block, name)?;
    let inner = list.strip_prefix('[')?.strip_suffix(']')?;
    if inner.trim_start().starts_with('[') {
        return None;
    }
    integers(inner)
}

/// The rows of the array constant `name`: a list of lists of integers (`[[1, 2], [3, 4]]`), or
/// a flat list read as one row; `None` when the block has no such constant or it is neither.
pub(crate) fn const_rows(block: &str, name: &str) -> Option<Vec<Vec<i32>>> {
    let list = const_list(block, name)?;
    let inner = list.strip_prefix('[')?.strip_suffix(']')?.trim();
    if !inner.starts_with('[') {
        return Some(vec![integers(inner)?]);
    }
    let mut rows = Vec::new();
    let mut rest = inner;
    loop {
        rest = rest.trim_start().trim_start_matches(',').trim_start();
        if rest.is_empty() {
            return Some(rows);
        }
        let (row, after) = rest.strip_prefix('[')?.split_once(']')?;
        if row.contains('[') {
            return None;
        }
        rows.push(integers(row)?);
        rest = after;
    }
}

/// Replaces the block between the markers of `source` with `block`, keeping each statement of
/// the old block that `block` does not define (with the comments above it) after the new rows:
/// a writer drops only what it writes again. The old `// source:` comment goes with the tables
/// it described.
pub(crate) fn replace_block(source: &str, block: &str) -> anyhow::Result<String> {
    let (start, end) = block_range(source)?;
    let written: Vec<&str> = statements(block).iter().filter_map(|s| s.name).collect();
    let mut kept = String::new();
    for statement in statements(&source[start..end]) {
        if statement.name.is_some_and(|name| written.contains(&name)) {
            continue;
        }
        for line in statement.lines {
            if !line.starts_with(SOURCE_COMMENT) {
                kept.push_str(line);
                kept.push('\n');
            }
        }
    }
    Ok(format!(
        "{}{block}{kept}{}",
        &source[..start],
        &source[end..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_replacement_keeps_the_rest() {
        let source = "a\n// BEGIN MARGIN TABLES\n// source: old\npub const A: [i32; 2] = [1, 2];\n\
                      // END MARGIN TABLES\nb\n";
        assert_eq!(
            replace_block(source, "// source: new\npub const A: [i32; 2] = [3, 4];\n").unwrap(),
            "a\n// BEGIN MARGIN TABLES\n// source: new\npub const A: [i32; 2] = [3, 4];\n\
             // END MARGIN TABLES\nb\n"
        );
        assert!(replace_block("no markers", "x").is_err());
    }

    #[test]
    fn block_replacement_keeps_the_statements_it_does_not_write() {
        // The tables as rustfmt may wrap them, and a constant of someone else's with its doc.
        let source = "x\n// BEGIN MARGIN TABLES\n// source: old.json\n\
                      pub const KING_LO: [i32; SIDE_BUCKETS] = [\n    -1000, -1000,\n];\n\
                      /// QSearch futility.\n\
                      pub const FUTILITY_BASE_MARGIN_BY_SOURCE: [i32; TIERS] = [350, 175, 100];\n\
                      pub const KING_HI: [i32; SIDE_BUCKETS] = [1, 2];\n\
                      // END MARGIN TABLES\ny\n";
        let block = "// source: new.json\npub const KING_LO: [i32; SIDE_BUCKETS] = [5, 6];\n\
                     pub const KING_HI: [i32; SIDE_BUCKETS] = [7, 8];\n";
        let updated = replace_block(source, block).unwrap();
        assert_eq!(
            updated,
            format!(
                "x\n// BEGIN MARGIN TABLES\n{block}/// QSearch futility.\n\
                 pub const FUTILITY_BASE_MARGIN_BY_SOURCE: [i32; TIERS] = [350, 175, 100];\n\
                 // END MARGIN TABLES\ny\n"
            )
        );
        // Applying again changes nothing: nothing is kept twice.
        assert_eq!(replace_block(&updated, block).unwrap(), updated);
        let old = marked_block(source).unwrap();
        assert_eq!(
            const_values(old, "KING_LO"),
            Some(vec![-1000, -1000]),
            "a wrapped statement reads"
        );
        assert_eq!(
            const_values(old, "FUTILITY_BASE_MARGIN_BY_SOURCE"),
            Some(vec![350, 175, 100])
        );
        assert_eq!(const_values(old, "KING"), None);
        assert_eq!(const_rows(old, "KING_LO"), Some(vec![vec![-1000, -1000]]));
    }

    #[test]
    fn nested_rows_read_however_they_are_wrapped() {
        let block = "pub const A: [[i32; 2]; 2] = [\n    [1, -2],\n    [3, 4],\n];\n\
                     pub const B: [[i32; 2]; 2] =\n    [[5, 6], [7, 8]];\n\
                     pub const C: [[i32; 2]; 1] = [[9, 10]];\n\
                     pub const D: [[i32; 2]; 2] = [[1, 2], [x, 4]];\n\
                     pub const E: [[i32; 2]; 1] = [[[1]]];\n";
        assert_eq!(const_rows(block, "A"), Some(vec![vec![1, -2], vec![3, 4]]));
        assert_eq!(const_rows(block, "B"), Some(vec![vec![5, 6], vec![7, 8]]));
        assert_eq!(const_rows(block, "C"), Some(vec![vec![9, 10]]));
        assert_eq!(const_rows(block, "D"), None);
        assert_eq!(const_rows(block, "E"), None);
        assert_eq!(
            const_values(block, "A"),
            None,
            "a nested list is not a flat one"
        );
    }

    #[test]
    fn applying_to_the_shipped_margins_keeps_the_futility_margins() {
        let source = include_str!("../../../engine/src/eval/margins.rs");
        let block = marked_block(source).unwrap();
        // The source comment and the nine tables, each statement with all its lines.
        let table = |name: Option<&str>| {
            name.is_some_and(|n| n.ends_with("_LO") || n.ends_with("_HI") || n.ends_with("_P50"))
        };
        let tables: String = statements(block)
            .iter()
            .filter(|s| table(s.name))
            .flat_map(|s| &s.lines)
            .filter(|l| l.starts_with("// source:") || !l.trim_start().starts_with("//"))
            .map(|l| format!("{l}\n"))
            .collect();
        assert!(tables.starts_with("// source:"), "{tables}");
        // Whatever the shipped tables hold: LAZY_RESID_LO's second entry one lower.
        let lazy_lo = const_values(source, "LAZY_RESID_LO").unwrap();
        let (row, changed) = (
            format!("[{}, {},", lazy_lo[0], lazy_lo[1]),
            format!("[{}, {},", lazy_lo[0], lazy_lo[1] - 1),
        );
        let edited: String = tables
            .lines()
            .map(|l| {
                if l.contains("LAZY_RESID_LO:") && !l.contains("SUPER") {
                    format!("{}\n", l.replacen(&row, &changed, 1))
                } else {
                    format!("{l}\n")
                }
            })
            .collect();
        let rewritten = replace_block(source, &edited).unwrap();
        assert_ne!(rewritten, source);
        assert_eq!(
            const_values(&rewritten, "FUTILITY_BASE_MARGIN_BY_SOURCE"),
            const_values(source, "FUTILITY_BASE_MARGIN_BY_SOURCE")
        );
        assert!(const_values(source, "FUTILITY_BASE_MARGIN_BY_SOURCE").is_some());
        assert_eq!(
            const_values(&rewritten, "LAZY_RESID_LO").unwrap()[..2],
            [lazy_lo[0], lazy_lo[1] - 1]
        );
        assert_eq!(
            const_rows(&rewritten, "KING_LO"),
            const_rows(source, "KING_LO")
        );
        // With the old tables back, the file is the shipped one byte for byte.
        assert_eq!(replace_block(&rewritten, &tables).unwrap(), source);
    }
}
