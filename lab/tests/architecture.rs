//! ARCHITECTURE.md's code map is a claim about the code: each row's "may depend on" cell lists
//! the modules of the same package that the row's files use directly, and what those may use is
//! allowed too (the layers below). This test reads every `crate::` path in the engine's and the
//! lab's sources and fails on an import the table does not allow, so the map cannot drift from
//! the code.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// One row of a package's code map: the source paths it covers and the modules it may use.
#[derive(Debug)]
struct Row {
    /// Paths relative to the package directory, as written in the first cell.
    paths: Vec<String>,
    /// `None`: the row may use every module ("everything below").
    allowed: Option<BTreeSet<String>>,
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the lab sits in the workspace")
        .to_path_buf()
}

/// The rows of the table under the heading that starts with `heading`.
fn code_map(architecture: &str, heading: &str) -> Vec<Row> {
    let section = architecture
        .split("\n### ")
        .find(|section| section.starts_with(heading))
        .unwrap_or_else(|| panic!("ARCHITECTURE.md has no section {heading:?}"));
    section
        .lines()
        .filter(|line| line.starts_with("| `"))
        .map(|line| {
            let cells: Vec<&str> = line.trim_matches('|').split(" | ").collect();
            assert!(
                cells.len() >= 3,
                "a code-map row needs three cells: {line:?}"
            );
            let paths = cells[0]
                .split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_string)
                .collect();
            Row {
                paths,
                allowed: allowed_modules(cells[cells.len() - 1]),
            }
        })
        .collect()
}

/// The module names of a "may depend on" cell: the first word of each comma-separated item
/// (`search (Limits, Clock)` is `search`); external crates in the cell are harmless, since they
/// never appear after `crate::`.
fn allowed_modules(cell: &str) -> Option<BTreeSet<String>> {
    if cell.contains("everything below") {
        return None;
    }
    let mut depth = 0usize;
    let mut items = vec![String::new()];
    for c in cell.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => items.push(String::new()),
            _ if depth == 0 => items.last_mut().expect("one item").push(c),
            _ => {}
        }
    }
    Some(
        items
            .iter()
            .filter_map(|item| {
                let word: String = item
                    .trim()
                    .trim_matches('`')
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                (!word.is_empty()).then_some(word)
            })
            .collect(),
    )
}

/// The module a source path belongs to: its first component under `src/`.
fn module_of(path: &str) -> Option<String> {
    let rest = path.strip_prefix("src/")?;
    let first = rest.split('/').next()?;
    Some(first.trim_end_matches(".rs").to_string())
}

/// Every module named right after `crate::` in `source`, including each top-level name of a
/// `crate::{a, b::c}` group.
fn crate_imports(source: &str) -> BTreeSet<String> {
    let mut imports = BTreeSet::new();
    for (start, _) in source.match_indices("crate::") {
        let preceding = source[..start].chars().next_back();
        if preceding.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue; // `squall_lab::` ends in `lab::`, not `crate::`; this skips `foocrate::`.
        }
        let rest = &source[start + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0usize;
            let mut item = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        imports.extend(first_identifier(&item));
                        item.clear();
                    }
                    _ => item.push(c),
                }
            }
            imports.extend(first_identifier(&item));
        } else {
            imports.extend(first_identifier(rest));
        }
    }
    imports
}

fn first_identifier(text: &str) -> Option<String> {
    let word: String = text
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    (!word.is_empty() && word != "self").then_some(word)
}

fn rust_files(path: &Path) -> Vec<PathBuf> {
    if path.is_file() {
        return vec![path.to_path_buf()];
    }
    let mut files = Vec::new();
    let mut pending = vec![path.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let entry = entry.expect("a directory entry");
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// Each row's allowed modules closed over the rows they name: a row may use what its
/// dependencies may use. `None` for rows that may use everything.
fn layers_below(rows: &[Row]) -> Vec<Option<BTreeSet<String>>> {
    let modules_of_row =
        |row: &Row| -> BTreeSet<String> { row.paths.iter().filter_map(|p| module_of(p)).collect() };
    rows.iter()
        .map(|row| {
            let mut allowed = row.allowed.clone()?;
            loop {
                let mut grown = allowed.clone();
                for other in rows {
                    if modules_of_row(other).iter().any(|m| allowed.contains(m)) {
                        if let Some(more) = &other.allowed {
                            grown.extend(more.iter().cloned());
                        }
                    }
                }
                if grown.len() == allowed.len() {
                    return Some(allowed);
                }
                allowed = grown;
            }
        })
        .collect()
}

/// Checks one package's sources against its table; returns the violations.
fn violations(package_dir: &Path, rows: &[Row]) -> Vec<String> {
    // The row owning a file is the one with the longest matching path.
    let mut owner: std::collections::BTreeMap<PathBuf, (usize, usize)> = Default::default();
    for (index, row) in rows.iter().enumerate() {
        for path in row.paths.iter().filter(|path| path.starts_with("src/")) {
            let full = package_dir.join(path);
            assert!(
                full.exists(),
                "ARCHITECTURE.md names {}, which does not exist",
                full.display()
            );
            for file in rust_files(&full) {
                let specificity = path.len();
                let entry = owner.entry(file).or_insert((index, specificity));
                if specificity > entry.1 {
                    *entry = (index, specificity);
                }
            }
        }
    }
    let below = layers_below(rows);
    let mut found = Vec::new();
    for (file, (index, _)) in &owner {
        let row = &rows[*index];
        let Some(allowed) = &below[*index] else {
            continue;
        };
        let relative = file
            .strip_prefix(package_dir)
            .expect("under the package")
            .to_string_lossy()
            .to_string();
        // A binary's `crate::` is the binary's own modules: not the library's table.
        if relative.starts_with("src/bin/") || relative == "src/main.rs" {
            continue;
        }
        let own: BTreeSet<String> = row.paths.iter().filter_map(|p| module_of(p)).collect();
        let source = fs::read_to_string(file).expect("a readable source file");
        for import in crate_imports(&source) {
            if !own.contains(&import) && !allowed.contains(&import) {
                found.push(format!(
                    "{relative} uses crate::{import}, which its row ({}) does not allow",
                    row.paths.join(", ")
                ));
            }
        }
    }
    found
}

#[test]
fn the_code_map_allows_every_import() {
    let root = workspace_root();
    let architecture = fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let mut found = Vec::new();
    for (heading, package) in [("`engine/`", "engine"), ("`lab/`", "lab")] {
        let rows = code_map(&architecture, heading);
        assert!(rows.len() > 5, "the {package} table has rows");
        found.extend(violations(&root.join(package), &rows));
    }
    assert!(
        found.is_empty(),
        "ARCHITECTURE.md's dependency table is out of date:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_reader_finds_grouped_and_nested_imports() {
    let source = "use crate::a::B;\nuse crate::{c, d::{E, F}, self};\nfn f() { crate::g::h(); }\n\
                  let x = squall_crate::z;";
    let imports: Vec<String> = crate_imports(source).into_iter().collect();
    assert_eq!(imports, ["a", "c", "d", "g"]);
    let allowed = allowed_modules("search (`Limits`, `Clock`), eval, libc (Linux)").unwrap();
    assert_eq!(
        allowed.into_iter().collect::<Vec<_>>(),
        ["eval", "libc", "search"]
    );
    assert!(allowed_modules("everything below").is_none());
}
