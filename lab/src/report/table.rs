//! The one table helper: a header and rows of text, laid out as a terminal table (comfy-table,
//! figures right-aligned, cells wrapped to fit the terminal's width) or as a markdown table. A cell may hold outside text (an engine's
//! name, a commit subject): both layouts show it literally (see [`super::sanitize`]).

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, ContentArrangement};

use super::sanitize::{markdown_cell, visible};

/// Longest commit subject a table shows in full; longer ones are cut with an ellipsis.
pub(crate) const SUBJECT_WIDTH: usize = 48;

/// `text` cut to `width` characters, an ellipsis marking the cut.
pub(crate) fn cut(text: &str, width: usize) -> String {
    let mut shown: String = text.chars().take(width).collect();
    if text.chars().count() > width {
        shown.push('…');
    }
    shown
}

/// The layout a table is rendered in; [`super::style`] holds what else differs.
pub use super::style::Style;

/// `header` and `rows` laid out in `style`: [`Table::render`] of a fixed number of columns.
pub(crate) fn render_rows<const N: usize>(
    style: Style,
    header: [&str; N],
    rows: impl IntoIterator<Item = [String; N]>,
) -> String {
    Table::new(header).with_rows(rows).render(style)
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub(crate) fn new(header: impl IntoIterator<Item = impl Into<String>>) -> Self {
        Self {
            header: header.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    pub(crate) fn row(&mut self, cells: impl IntoIterator<Item = impl Into<String>>) {
        self.rows.push(cells.into_iter().map(Into::into).collect());
    }

    pub(crate) fn with_rows<R>(mut self, rows: impl IntoIterator<Item = R>) -> Self
    where
        R: IntoIterator,
        R::Item: Into<String>,
    {
        for row in rows {
            self.row(row);
        }
        self
    }

    /// The table without a trailing newline in the terminal style, with one in markdown.
    pub(crate) fn render(&self, style: Style) -> String {
        match style {
            Style::Terminal => self.terminal(),
            Style::Markdown => self.markdown(),
        }
    }

    /// Labels in the first column, figures right-aligned in the others; on a terminal, the
    /// cells wrapped to fit its width. Printed to a pipe or a file, the table keeps its natural
    /// width, so the text is the same on every machine.
    pub(crate) fn terminal(&self) -> String {
        self.terminal_within(None)
    }

    /// [`Self::terminal`] laid out within `width` columns when given (cells wrapped at their
    /// words), otherwise within the terminal's width when stdout is one.
    pub(crate) fn terminal_within(&self, width: Option<u16>) -> String {
        let mut table = comfy_table::Table::new();
        table.set_content_arrangement(ContentArrangement::Dynamic);
        if let Some(width) = width {
            table.set_width(width);
        }
        let shown = |cells: &[String]| -> Vec<String> {
            cells
                .iter()
                .map(|cell| visible(cell).into_owned())
                .collect()
        };
        table
            .load_preset(UTF8_FULL_CONDENSED)
            .set_header(shown(&self.header));
        for row in &self.rows {
            table.add_row(shown(row));
        }
        for index in 1..table.column_count() {
            if let Some(column) = table.column_mut(index) {
                column.set_cell_alignment(CellAlignment::Right);
            }
        }
        table.to_string()
    }

    pub(crate) fn markdown(&self) -> String {
        let line = |cells: &[String]| {
            let cells: Vec<String> = cells.iter().map(|cell| markdown_cell(cell)).collect();
            format!("| {} |\n", cells.join(" | "))
        };
        let mut out = format!(
            "{}|{}\n",
            line(&self.header),
            " --- |".repeat(self.header.len())
        );
        for row in &self.rows {
            out.push_str(&line(row));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_has_a_header_rule_and_one_line_per_row() {
        let table = Table::new(["figure", "A"]).with_rows([["nodes", "5"], ["NPS", "7"]]);
        assert_eq!(
            table.markdown(),
            "| figure | A |\n| --- | --- |\n| nodes | 5 |\n| NPS | 7 |\n"
        );
    }

    #[test]
    fn outside_text_in_a_cell_stays_in_its_cell() {
        let table = Table::new(["engine", "games"]).with_rows([["a | <b>\x1b[31m", "2"]]);
        assert_eq!(
            table.markdown(),
            "| engine | games |\n| --- | --- |\n| a \\| &lt;b&gt;\\x1b[31m | 2 |\n"
        );
        let text = table.terminal();
        assert!(text.contains("a | <b>\\x1b[31m"), "{text}");
        assert!(!text.contains('\x1b'), "{text}");
    }

    #[test]
    fn a_wide_table_fits_the_width_it_is_given_and_keeps_every_word() {
        let subject = "eval: a fixed cost added to drawish_scale, which every evaluate call pays";
        let table = Table::new(["figure", "A", "B", "B vs A"]).with_rows([
            [
                subject,
                "1,234,567",
                "1,240,000",
                "+0.44% (95% CI -0.10% to +0.98%)",
            ],
            ["instructions per node", "2,345.6", "2,356.4", "+0.46%"],
        ]);
        let natural = table.terminal_within(None);
        let widest = |text: &str| text.lines().map(|l| l.chars().count()).max().unwrap_or(0);
        assert!(widest(&natural) > 80, "{natural}");
        let fitted = table.terminal_within(Some(80));
        assert!(widest(&fitted) <= 80, "{fitted}");
        for word in subject.split(' ').chain(["+0.44%", "2,356.4"]) {
            assert!(fitted.contains(word), "{word} lost:\n{fitted}");
        }
    }

    #[test]
    fn cut_marks_a_cut_with_an_ellipsis_and_keeps_short_text() {
        assert_eq!(cut("short", 8), "short");
        assert_eq!(cut("ééééé", 5), "ééééé");
        assert_eq!(cut("a long subject", 6), "a long…");
    }

    #[test]
    fn terminal_figures_are_right_aligned() {
        let table = Table::new(["figure", "value"]).with_rows([["x", "1"], ["y", "1000"]]);
        let text = table.terminal();
        assert!(
            text.contains("│    1 │") || text.contains("    1 "),
            "{text}"
        );
    }
}
