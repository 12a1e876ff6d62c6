//! Text that came from outside the lab (an engine's `id name` and output, commit subjects,
//! branch names, file contents) made safe to show. A terminal acts on escape sequences (ESC,
//! OSC, BEL) instead of printing them, and bidirectional overrides reorder what follows them,
//! so every renderer shows such characters visibly, as `\x1b` or `\u{202e}`. Markdown also
//! gives meaning to `|` in a table and to raw HTML: [`markdown_cell`] and [`code_span`] keep
//! outside text literal there.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Characters a terminal or a viewer may act on instead of showing them: the C0 and C1
/// controls, DEL, and the bidirectional marks, embeddings, overrides and isolates.
fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

fn push_visible(out: &mut String, c: char) {
    let code = u32::from(c);
    let _ = if code < 0x100 {
        write!(out, "\\x{code:02x}")
    } else {
        write!(out, "\\u{{{code:x}}}")
    };
}

fn escaped(text: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(|c| is_hidden(c) && !keep(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if is_hidden(c) && !keep(c) {
            push_visible(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// One line of outside text as it is shown: every control character, line breaks included,
/// written out as `\x..` (`\u{..}` beyond Latin-1).
pub(crate) fn visible(text: &str) -> Cow<'_, str> {
    escaped(text, |_| false)
}

/// A block of text laid out by the lab (a report, a progress line, an error) that may embed
/// outside text: its line breaks are kept, every other control character is shown as by
/// [`visible`].
pub(crate) fn visible_lines(text: &str) -> Cow<'_, str> {
    escaped(text, |c| c == '\n')
}

/// A markdown table cell that shows `text` literally: control characters as by [`visible`],
/// `|` escaped so it does not end the cell, and `&`, `<`, `>` as entities so no raw HTML
/// reaches the page (they render as the characters themselves).
pub(crate) fn markdown_cell(text: &str) -> String {
    let text = visible(text);
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '|' => out.push_str("\\|"),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            _ => out.push(c),
        }
    }
    out
}

/// A markdown paragraph the lab wrote with outside text in it (a warning naming a stored CPU
/// model): its code spans kept as CommonMark reads them (a backtick run closed by the next run
/// of the same length), and outside them every character that could start raw HTML, a link,
/// an entity or emphasis backslash-escaped, which renders it as itself. Control characters
/// are shown as by [`visible`].
pub(crate) fn markdown_prose(text: &str) -> String {
    let text = visible(text);
    let chars: Vec<char> = text.chars().collect();
    let run_at = |at: usize| chars[at..].iter().take_while(|&&c| c == '`').count();
    let mut out = String::with_capacity(text.len() + 16);
    let mut at = 0;
    while at < chars.len() {
        let c = chars[at];
        if c == '`' {
            let run = run_at(at);
            let mut close = at + run;
            let mut closed = None;
            while close < chars.len() {
                if chars[close] == '`' {
                    let length = run_at(close);
                    if length == run {
                        closed = Some(close);
                        break;
                    }
                    close += length;
                } else {
                    close += 1;
                }
            }
            match closed {
                Some(close) => {
                    out.extend(&chars[at..close + run]);
                    at = close + run;
                }
                // Backticks no run closes are literal text.
                None => {
                    for _ in 0..run {
                        out.push_str("\\`");
                    }
                    at += run;
                }
            }
            continue;
        }
        if matches!(c, '\\' | '<' | '>' | '&' | '[' | ']' | '*' | '_' | '|') {
            out.push('\\');
        }
        out.push(c);
        at += 1;
    }
    out
}

/// `text` as a markdown code span outside a table: shown literally, whatever markdown or HTML
/// it holds. The fence is one backtick longer than the longest run inside, and padded with a
/// space when the text starts or ends with a backtick, as CommonMark requires.
pub(crate) fn code_span(text: &str) -> String {
    let text = visible(text);
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') || text.is_empty() {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

/// Every string of a JSON document (keys included) as [`visible_lines`] shows it: a page drawn
/// from a stored report shows what an engine or git wrote without acting on it (a line break
/// is white space to HTML and SVG).
pub(crate) fn visible_json(value: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::String(text) => Value::String(visible_lines(text).into_owned()),
        Value::Array(items) => Value::Array(items.iter().map(visible_json).collect()),
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .map(|(key, field)| (visible_lines(key).into_owned(), visible_json(field)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prose_keeps_the_lab_s_code_spans_and_shows_outside_markup_as_itself() {
        assert_eq!(
            markdown_prose("run `lab compare a b` on <img src=x> & [click](y)"),
            "run `lab compare a b` on \\<img src=x\\> \\& \\[click\\](y)"
        );
        // An unclosed backtick is literal: what follows it is still escaped.
        assert_eq!(markdown_prose("a ` <b>"), "a \\` \\<b\\>");
        // A run closes only at a run of its own length.
        assert_eq!(markdown_prose("``a`<b>``"), "``a`<b>``");
        assert_eq!(markdown_prose("cpu_model *x*"), "cpu\\_model \\*x\\*");
        assert_eq!(markdown_prose("esc \u{1b}[0m"), "esc \\\\x1b\\[0m");
    }

    #[test]
    fn control_characters_are_shown_not_sent() {
        let name = "evil\x1b]0;title\x07\x1b[31mred\u{9b}2J\u{202e}txt.exe\r\nnext";
        assert_eq!(
            visible(name),
            "evil\\x1b]0;title\\x07\\x1b[31mred\\x9b2J\\u{202e}txt.exe\\x0d\\x0anext"
        );
        assert_eq!(visible_lines("a\x1b[2Jb\nc\td"), "a\\x1b[2Jb\nc\\x09d");
        assert!(matches!(visible("plain ünïcode ♞"), Cow::Borrowed(_)));
    }

    #[test]
    fn sanitising_twice_changes_nothing_more() {
        let once = visible("a\x1b\u{2066}b").into_owned();
        assert_eq!(visible(&once), once);
    }

    #[test]
    fn markdown_cells_keep_pipes_and_html_literal() {
        assert_eq!(
            markdown_cell("<img src=x onerror=alert(1)> | A & B\x1b"),
            "&lt;img src=x onerror=alert(1)&gt; \\| A &amp; B\\x1b"
        );
    }

    #[test]
    fn code_spans_outlast_the_backticks_inside() {
        assert_eq!(code_span("squall 1.0"), "`squall 1.0`");
        assert_eq!(code_span("a ``b`` c"), "```a ``b`` c```");
        assert_eq!(code_span("`x"), "`` `x ``");
        assert_eq!(code_span("<b>\x07"), "`<b>\\x07`");
    }

    #[test]
    fn every_string_of_a_json_document_is_made_visible() {
        let value = serde_json::json!({"name\x1b": ["a\x07\nb", 1, {"b": "\u{202e}"}]});
        assert_eq!(
            visible_json(&value),
            serde_json::json!({"name\\x1b": ["a\\x07\nb", 1, {"b": "\\u{202e}"}]})
        );
    }
}
