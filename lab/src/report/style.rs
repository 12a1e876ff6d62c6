//! The two text layouts a report section is written for, and the few things they write
//! differently: tables (see [`super::table`]), outside text shown literally, emphasis,
//! paragraphs, headings, call-outs and a block a reader may fold away. A section is one function
//! over a `Style`; what it says is the same in both.

use super::sanitize::{code_span, markdown_prose};

/// How a report is laid out as text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Plain lines and aligned tables for a terminal or a log.
    Terminal,
    /// A CI job summary or a pull-request comment.
    Markdown,
}

impl Style {
    /// Outside text (a revision's spec, an engine's name) shown literally: as it is on a
    /// terminal (control characters are written out for the whole report), a code span in
    /// markdown.
    pub(crate) fn code(self, text: &str) -> String {
        match self {
            Style::Terminal => text.to_string(),
            Style::Markdown => code_span(text),
        }
    }

    /// Outside text within the lab's own words (a stored date, a baseline's CPU model): as it
    /// is on a terminal, with markdown's markup characters escaped in markdown.
    pub(crate) fn prose(self, text: &str) -> String {
        match self {
            Style::Terminal => text.to_string(),
            Style::Markdown => markdown_prose(text),
        }
    }

    /// A line a reader should not miss: bold in markdown.
    pub(crate) fn emphasis(self, text: &str) -> String {
        match self {
            Style::Terminal => text.to_string(),
            Style::Markdown => format!("**{text}**"),
        }
    }

    /// A paragraph: one line on a terminal, set apart by a blank line in markdown.
    pub(crate) fn paragraph(self, text: &str) -> String {
        match self {
            Style::Terminal => format!("{text}\n"),
            Style::Markdown => format!("{text}\n\n"),
        }
    }

    /// A sub-section's heading within a report.
    pub(crate) fn heading(self, text: &str) -> String {
        match self {
            Style::Terminal => format!("{text}\n"),
            Style::Markdown => format!("### {text}\n\n"),
        }
    }

    /// A table's title: a line of its own above it on a terminal; in markdown a heading, since
    /// a line directly above a table would run into it.
    pub(crate) fn table_heading(self, text: &str) -> String {
        match self {
            Style::Terminal => format!("\n{text}\n"),
            Style::Markdown => format!("\n#### {text}\n\n"),
        }
    }

    /// A problem with the measurement, shown before any figure.
    pub(crate) fn warning(self, text: &str) -> String {
        match self {
            Style::Terminal => format!("!! WARNING: {text}\n"),
            // A warning may quote a stored file (a baseline's CPU model).
            Style::Markdown => format!("> **Warning:** {}\n\n", markdown_prose(text)),
        }
    }

    /// Something the reader should know that is not a problem.
    pub(crate) fn note(self, text: &str) -> String {
        match self {
            Style::Terminal => format!("note: {text}\n"),
            Style::Markdown => format!("> **Note:** {}\n\n", markdown_prose(text)),
        }
    }

    /// Detail a reader may skip, after a table: under its summary line on a terminal, folded
    /// away in markdown.
    pub(crate) fn folded(self, summary: &str, body: &str) -> String {
        match self {
            Style::Terminal => format!("\n{summary}\n{body}"),
            Style::Markdown => {
                format!("\n<details><summary>{summary}</summary>\n\n{body}\n</details>\n\n")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_call_outs_show_a_stored_file_s_markup_as_text() {
        let warning = Style::Markdown.warning("CPU: <img src=x> (baseline) vs [a](b)");
        assert!(
            warning.contains(r"CPU: \<img src=x\> (baseline) vs \[a\](b)"),
            "{warning}"
        );
        let note = Style::Markdown.note("run `lab compare <a> b`");
        assert!(note.contains("run `lab compare <a> b`"), "{note}");
        assert_eq!(Style::Terminal.prose("<b>"), "<b>");
    }
}
