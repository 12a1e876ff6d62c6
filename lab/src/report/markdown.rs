//! `--format markdown`: for a CI job summary or a pull-request comment.

use super::sanitize::visible_lines;
use super::{layout, Report, Style};

/// The report in markdown: control characters from outside are written out, and outside text
/// is a code span or an escaped table cell, so no raw HTML or stray `|` reaches the page.
pub(crate) fn render(report: &Report) -> String {
    visible_lines(&layout(report, Style::Markdown)).into_owned()
}
