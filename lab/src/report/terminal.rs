//! The human report: terminal tables, warnings first.

use super::sanitize::visible_lines;
use super::{layout, Report, Style};

/// The report as the terminal shows it: any control character that came from outside (an
/// engine's name, a commit subject, a fault's line) is written out, never sent.
pub(crate) fn render(report: &Report) -> String {
    visible_lines(&layout(report, Style::Terminal)).into_owned()
}
