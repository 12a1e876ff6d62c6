//! Revisions from before the lab existed: their workspace manifest names members (`lab`) that
//! their tree lacks, so cargo refuses to build anything in it. The lab then builds the engine
//! package alone: the root `Cargo.toml` of the snapshot keeps everything (profiles, shared
//! package fields) except the member lists, which name only `engine`. The engine binary does
//! not depend on the other members, so it is the binary the revision's workspace would build.

use anyhow::Result;
use git2::{Oid, Repository};

/// The engine package's directory, the one member a narrowed workspace keeps.
pub(crate) const ENGINE_DIR: &str = "engine";

pub(crate) struct Standalone {
    /// The root manifest with `members` and `default-members` narrowed to the engine.
    pub(crate) manifest: Vec<u8>,
    /// The members the revision's workspace names that its tree does not hold.
    pub(crate) missing: Vec<String>,
}

/// The manifest that builds the engine alone, when the workspace of `tree` names a member its
/// tree lacks; `None` when the workspace is whole (or not one this can read: cargo's own error
/// then explains).
pub(crate) fn standalone_manifest(repo: &Repository, tree: Oid) -> Result<Option<Standalone>> {
    let tree = repo.find_tree(tree)?;
    let Some(entry) = tree.get_name("Cargo.toml") else {
        return Ok(None);
    };
    let Ok(blob) = repo.find_blob(entry.id()) else {
        return Ok(None);
    };
    let Ok(text) = std::str::from_utf8(blob.content()) else {
        return Ok(None);
    };
    let has_package = |member: &str| {
        tree.get_path(std::path::Path::new(&format!("{member}/Cargo.toml")))
            .is_ok()
    };
    Ok(narrow(text, has_package))
}

/// [`standalone_manifest`] on the text of a root manifest; `has_package` tells whether the tree
/// holds a package at a member path.
fn narrow(text: &str, has_package: impl Fn(&str) -> bool) -> Option<Standalone> {
    let section = workspace_section(text)?;
    let members = find_array(text, section.clone(), "members")?;
    let missing: Vec<String> = members
        .values
        .iter()
        .filter(|member| !is_glob(member) && !has_package(member))
        .cloned()
        .collect();
    if missing.is_empty() || !has_package(ENGINE_DIR) {
        return None;
    }
    let engine_only = format!("[\"{ENGINE_DIR}\"]");
    let mut spans = vec![members.span];
    if let Some(defaults) = find_array(text, section, "default-members") {
        spans.push(defaults.span);
    }
    spans.sort_by_key(|span| span.start);
    let mut manifest = String::with_capacity(text.len());
    let mut copied = 0;
    for span in spans {
        manifest.push_str(&text[copied..span.start]);
        manifest.push_str(&engine_only);
        copied = span.end;
    }
    manifest.push_str(&text[copied..]);
    Some(Standalone {
        manifest: manifest.into_bytes(),
        missing,
    })
}

fn is_glob(member: &str) -> bool {
    member.contains(['*', '?', '['])
}

/// The byte range of the `[workspace]` table's body: from its header to the next table header.
fn workspace_section(text: &str) -> Option<std::ops::Range<usize>> {
    let mut offset = 0;
    let mut start = None;
    for line in text.split_inclusive('\n') {
        let header = line.trim();
        if header.starts_with('[') {
            let name = header.split('#').next().unwrap_or("").trim();
            if start.is_some() {
                return start.map(|start| start..offset);
            }
            if name == "[workspace]" {
                start = Some(offset + line.len());
            }
        }
        offset += line.len();
    }
    start.map(|start| start..text.len())
}

struct StringArray {
    /// From the opening `[` to just after the closing `]`.
    span: std::ops::Range<usize>,
    values: Vec<String>,
}

/// The array of strings assigned to `key` within `section` of `text`.
fn find_array(text: &str, section: std::ops::Range<usize>, key: &str) -> Option<StringArray> {
    let mut offset = section.start;
    for line in text[section.clone()].split_inclusive('\n') {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        if let Some(rest) = trimmed.strip_prefix(key) {
            let after_key = rest.trim_start();
            if let Some(value) = after_key.strip_prefix('=') {
                let value = value.trim_start();
                if value.starts_with('[') {
                    let open = offset + indent + key.len() + (rest.len() - value.len());
                    return parse_string_array(text, open);
                }
            }
        }
        offset += line.len();
    }
    None
}

/// Reads a TOML array of plain strings starting at `open` (a `[`): strings in double or single
/// quotes, commas, whitespace and comments. Anything else gives `None`.
fn parse_string_array(text: &str, open: usize) -> Option<StringArray> {
    let bytes = text.as_bytes();
    let mut values = Vec::new();
    let mut at = open + 1;
    while at < bytes.len() {
        match bytes[at] {
            b']' => {
                return Some(StringArray {
                    span: open..at + 1,
                    values,
                })
            }
            b' ' | b'\t' | b'\r' | b'\n' | b',' => at += 1,
            b'#' => {
                while at < bytes.len() && bytes[at] != b'\n' {
                    at += 1;
                }
            }
            quote @ (b'"' | b'\'') => {
                let end = at + 1 + text[at + 1..].find(char::from(quote))?;
                let value = &text[at + 1..end];
                if quote == b'"' && value.contains('\\') {
                    return None;
                }
                values.push(value.to_string());
                at = end + 1;
            }
            _ => return None,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn narrowed(text: &str, present: &[&str]) -> Option<String> {
        narrow(text, |member| present.contains(&member))
            .map(|standalone| String::from_utf8(standalone.manifest).unwrap())
    }

    #[test]
    fn narrows_members_and_default_members_keeping_the_rest() {
        let text = "[workspace]\nresolver = \"2\"\nmembers = [\"engine\", \"lab\", \"benches\"]\n\
                    default-members = [\"engine\", \"lab\"]\n\n[workspace.package]\nversion = \"0.1.0\"\n\n\
                    [profile.release]\nlto = \"fat\"\n";
        let standalone = narrow(text, |m| ["engine", "benches"].contains(&m)).unwrap();
        assert_eq!(standalone.missing, ["lab"]);
        let out = String::from_utf8(standalone.manifest).unwrap();
        assert_eq!(
            out,
            "[workspace]\nresolver = \"2\"\nmembers = [\"engine\"]\ndefault-members = [\"engine\"]\n\n\
             [workspace.package]\nversion = \"0.1.0\"\n\n[profile.release]\nlto = \"fat\"\n"
        );
    }

    #[test]
    fn reads_multi_line_arrays_with_comments() {
        let text = "[package]\nname = \"x\"\n[workspace] # the workspace\nmembers = [\n  \"engine\", # core\n  'lab',\n]\n";
        let section = workspace_section(text).unwrap();
        let members = find_array(text, section, "members").unwrap();
        assert_eq!(members.values, ["engine", "lab"]);
        assert_eq!(&text[members.span.clone()][..1], "[");
        assert!(text[members.span].ends_with(']'));
    }

    #[test]
    fn a_whole_workspace_or_an_unreadable_one_is_left_alone() {
        let text = "[workspace]\nmembers = [\"engine\", \"lab\"]\n";
        assert!(narrowed(text, &["engine", "lab"]).is_none());
        // Without the engine there is nothing to build alone.
        assert!(narrowed(text, &["lab"]).is_none());
        assert!(narrowed("[package]\nname = \"squall\"\n", &[]).is_none());
        let escaped = "[workspace]\nmembers = [\"en\\u0067ine\"]\n";
        assert!(find_array(escaped, workspace_section(escaped).unwrap(), "members").is_none());
        // `members-extra` is not `members`.
        let other = "[workspace]\nmembers-extra = [\"x\"]\n";
        assert!(find_array(other, workspace_section(other).unwrap(), "members").is_none());
    }

    mod properties {
        use super::super::*;
        use proptest::prelude::*;

        /// Each property takes milliseconds at this count.
        const CASES: u32 = 256;

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(CASES))]

            /// Whatever a revision's manifest holds, reading it never panics.
            #[test]
            fn any_manifest_text_is_read_without_panicking(text in any::<String>()) {
                let _ = narrow(&text, |member| member == ENGINE_DIR);
                let prefixed = format!("[workspace]\nmembers = [{text}\n");
                let _ = narrow(&prefixed, |member| member == ENGINE_DIR);
            }

            /// A workspace with members the tree lacks is narrowed to the engine, names exactly
            /// the missing members, and keeps every other byte of the manifest.
            #[test]
            fn narrowing_keeps_everything_but_the_member_lists(
                members in proptest::collection::vec("[a-z]{1,8}", 0..6),
                present in proptest::collection::vec(any::<bool>(), 6),
                head in "[a-z =\"\n]{0,40}",
                tail in "[a-z =\"\n]{0,40}",
            ) {
                let mut members = members;
                members.push(ENGINE_DIR.to_string());
                let list: Vec<String> = members.iter().map(|m| format!("\"{m}\"")).collect();
                let before = format!("[package]\n{head}\n[workspace]\nresolver = \"2\"\nmembers = [");
                let after = format!("]\n\n[profile.release]\n{tail}\n");
                let text = format!("{before}{}{after}", list.join(", "));
                let is_present = |member: &str| {
                    member == ENGINE_DIR
                        || members
                            .iter()
                            .position(|m| m == member)
                            .is_some_and(|i| present[i])
                };
                let missing: Vec<String> =
                    members.iter().filter(|m| !is_present(m)).cloned().collect();
                match narrow(&text, is_present) {
                    None => prop_assert!(missing.is_empty()),
                    Some(standalone) => {
                        prop_assert_eq!(standalone.missing, missing);
                        let manifest = String::from_utf8(standalone.manifest).unwrap();
                        prop_assert_eq!(manifest, format!("{before}\"{ENGINE_DIR}\"{after}"));
                    }
                }
            }
        }
    }
}
