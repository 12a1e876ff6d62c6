//! A small JSON writer for the binary's reports (bench, calibrate). The engine crate has no
//! dependencies, so it writes its JSON by hand; keys keep their insertion order.

use std::fmt::Write as _;

/// Just enough JSON for the bench report. Keys keep their insertion order so the output reads
/// in the order the protocol document lists the fields.
pub enum Json {
    Bool(bool),
    Int(i64),
    UInt(u64),
    Str(String),
    Array(Vec<Json>),
    Object(Vec<(&'static str, Json)>),
}

impl Json {
    fn is_container(&self) -> bool {
        matches!(self, Json::Array(_) | Json::Object(_))
    }

    /// Pretty-prints with two-space indentation; an array of scalars stays on one line so the
    /// 8 x 8 x 3 exit table remains readable.
    pub fn write(&self, out: &mut String, indent: usize) {
        match self {
            Json::Bool(value) => out.push_str(if *value { "true" } else { "false" }),
            Json::Int(value) => {
                let _ = write!(out, "{value}");
            }
            Json::UInt(value) => {
                let _ = write!(out, "{value}");
            }
            Json::Str(value) => write_string(out, value),
            Json::Array(items) if !items.iter().any(Json::is_container) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    item.write(out, indent);
                }
                out.push(']');
            }
            Json::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    out.push_str(if i > 0 { ",\n" } else { "\n" });
                    push_indent(out, indent + 1);
                    item.write(out, indent + 1);
                }
                out.push('\n');
                push_indent(out, indent);
                out.push(']');
            }
            Json::Object(fields) if fields.is_empty() => out.push_str("{}"),
            Json::Object(fields) => {
                out.push('{');
                for (i, (key, value)) in fields.iter().enumerate() {
                    out.push_str(if i > 0 { ",\n" } else { "\n" });
                    push_indent(out, indent + 1);
                    write_string(out, key);
                    out.push_str(": ");
                    value.write(out, indent + 1);
                }
                out.push('\n');
                push_indent(out, indent);
                out.push('}');
            }
        }
    }
}

fn push_indent(out: &mut String, level: usize) {
    for _ in 0..level {
        out.push_str("  ");
    }
}

/// A JSON string literal: quotes, backslashes and control characters escaped; other characters,
/// non-ASCII included, are valid JSON as UTF-8 and pass through.
fn write_string(out: &mut String, value: &str) {
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

impl Json {
    /// Pretty-printed, newline-terminated.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, 0);
        out.push('\n');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn string_literal(value: &str) -> String {
        let mut out = String::new();
        write_string(&mut out, value);
        out
    }

    #[test]
    fn escapes_strings() {
        assert_eq!(string_literal("plain"), "\"plain\"");
        assert_eq!(string_literal("a\"b\\c"), "\"a\\\"b\\\\c\"");
        assert_eq!(string_literal("line\nnext\ttab"), "\"line\\nnext\\ttab\"");
        assert_eq!(string_literal("\u{1}\u{1f}"), "\"\\u0001\\u001f\"");
        assert_eq!(string_literal("é♞"), "\"é♞\"");
    }

    #[test]
    fn nests_and_keeps_scalar_arrays_inline() {
        let value = Json::Object(vec![
            ("a", Json::Array(vec![Json::Int(-1), Json::UInt(2)])),
            ("b", Json::Array(vec![Json::Array(vec![Json::Bool(true)])])),
            ("c", Json::Object(vec![])),
            ("d", Json::Array(vec![])),
        ]);
        let mut out = String::new();
        value.write(&mut out, 0);
        assert_eq!(
            out,
            "{\n  \"a\": [-1, 2],\n  \"b\": [\n    [true]\n  ],\n  \"c\": {},\n  \"d\": []\n}"
        );
    }
}
