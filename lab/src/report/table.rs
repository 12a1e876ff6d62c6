//! The one table helper: a header and rows of text, laid out as a terminal table (comfy-table,
//! figures right-aligned) or as a markdown table. A cell may hold outside text (an engine's
//! name, a commit subject): both layouts show it literally (see [`super::sanitize`]).

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::CellAlignment;

use super::sanitize::{markdown_cell, visible};

/// How a table is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Terminal,
    Markdown,
}

#[derive(Debug, Clone, Default)]
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(header: impl IntoIterator<Item = impl Into<String>>) -> Self {
        Self {
            header: header.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    pub fn row(&mut self, cells: impl IntoIterator<Item = impl Into<String>>) {
        self.rows.push(cells.into_iter().map(Into::into).collect());
    }

    pub fn with_rows<R>(mut self, rows: impl IntoIterator<Item = R>) -> Self
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
    pub fn render(&self, style: Style) -> String {
        match style {
            Style::Terminal => self.terminal(),
            Style::Markdown => self.markdown(),
        }
    }

    /// Labels in the first column, figures right-aligned in the others.
    pub fn terminal(&self) -> String {
        let mut table = comfy_table::Table::new();
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

    pub fn markdown(&self) -> String {
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
    fn terminal_figures_are_right_aligned() {
        let table = Table::new(["figure", "value"]).with_rows([["x", "1"], ["y", "1000"]]);
        let text = table.terminal();
        assert!(
            text.contains("│    1 │") || text.contains("    1 "),
            "{text}"
        );
    }
}
