//! ARCHITECTURE.md's code map is a claim about the code, and this test holds it to it.
//!
//! Each row of a package's table owns the source files its first cell names (the most specific
//! path wins) and lists, in its "may depend on" cell, the modules of the same crate those files
//! may import directly: `engine (adapter, config)` allows `crate::engine::adapter` and
//! `crate::engine::config` and nothing else of `engine`. Nothing is closed transitively: a row
//! that may use `machine` may not use what `machine` uses. Every path is read: `crate::`,
//! `super::`, `self::`, a child module's name, `use` groups, and paths inside code; comments
//! and string literals are not code. A source file no row owns fails, and so does any import
//! circle between files that is not listed in [`ALLOWED_CIRCLES`] (a directory's `mod.rs` and
//! the files under it are one unit there: the parent declares them, they see its items).
//!
//! The test of the test plants each kind of miss in a copy of the sources and checks that the
//! check fails. It reads files only; nothing is compiled.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The import circles the map keeps, each the set of files (relative to the workspace) that
/// import each other in a loop, with the reason it is kept.
const ALLOWED_CIRCLES: &[(&[&str], &str)] = &[(
    &["engine/src/search/mod.rs", "engine/src/timeman.rs"],
    "the search owns the limits it is given (`Limits`, `Clock`), time management turns them \
         into the deadlines the search polls: one concern split in two files for reading",
)];

/// The packages checked, each with its code-map heading and its crates' roots.
const PACKAGES: &[Package] = &[
    Package {
        heading: "`engine/`",
        dir: "engine",
        binaries: &["src/bin/squall"],
    },
    Package {
        heading: "`lab/`",
        dir: "lab",
        binaries: &[],
    },
];

struct Package {
    heading: &'static str,
    /// The package's directory, relative to the workspace.
    dir: &'static str,
    /// Directories of binaries with modules of their own (`src/bin/<name>/main.rs`); the lab's
    /// `src/main.rs` is a binary without modules.
    binaries: &'static [&'static str],
}

/// One row of a package's code map.
#[derive(Debug)]
struct Row {
    /// Paths relative to the package directory, as written in the first cell.
    paths: Vec<String>,
    /// `None`: the row may use every module of its crate ("everything below").
    allowed: Option<BTreeMap<String, Limits>>,
}

/// What a "may depend on" item allows of its module.
#[derive(Debug, Clone, PartialEq)]
enum Limits {
    /// The whole module.
    Whole,
    /// Only these paths inside the module (`engine (adapter, callgrind::strip_hash)`).
    Only(Vec<Vec<String>>),
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the lab sits in the workspace")
        .to_path_buf()
}

/// The rows of the table under the heading that starts with `heading`, and the errors of the
/// cells it could not read (such a row allows nothing).
fn code_map(architecture: &str, heading: &str) -> Result<(Vec<Row>, Vec<String>), String> {
    let section = architecture
        .split("\n### ")
        .find(|section| section.starts_with(heading))
        .ok_or_else(|| format!("ARCHITECTURE.md has no section {heading:?}"))?;
    let mut rows = Vec::new();
    let mut errors = Vec::new();
    for line in section.lines().filter(|line| line.starts_with("| `")) {
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").collect();
        if cells.len() < 3 {
            return Err(format!("a code-map row needs three cells: {line:?}"));
        }
        let paths = cells[0]
            .split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect();
        let allowed = allowed_modules(cells[cells.len() - 1]).unwrap_or_else(|e| {
            errors.push(format!("ARCHITECTURE.md, row {}: {e}", cells[0].trim()));
            Some(BTreeMap::new())
        });
        rows.push(Row { paths, allowed });
    }
    Ok((rows, errors))
}

/// The modules a "may depend on" cell allows, each with its limits: comma-separated items,
/// each a name with an optional parenthesised list of paths inside it, each path optionally
/// followed by `: a note`. `—` allows nothing, `everything below` allows every module. Anything
/// else is refused, so that no limit is ever dropped unread.
fn allowed_modules(cell: &str) -> Result<Option<BTreeMap<String, Limits>>, String> {
    let cell = cell.trim();
    if cell == "everything below" {
        return Ok(None);
    }
    let mut allowed = BTreeMap::new();
    if cell == "—" {
        return Ok(Some(allowed));
    }
    for item in split_top_level(cell)? {
        let item = item.trim();
        let (name, limits) = match item.split_once('(') {
            None => (item, Limits::Whole),
            Some((name, rest)) => {
                let inner = rest
                    .strip_suffix(')')
                    .ok_or_else(|| format!("{item:?}: text after the limits' closing bracket"))?;
                let mut paths = Vec::new();
                for limit in split_top_level(inner)? {
                    let path = without_note(&limit).trim().trim_matches('`');
                    let segments: Vec<String> = path.split("::").map(str::to_string).collect();
                    if !segments.iter().all(|s| is_identifier(s)) {
                        return Err(format!("{item:?}: the limit {limit:?} is not a path"));
                    }
                    paths.push(segments);
                }
                (name, Limits::Only(paths))
            }
        };
        let name = name.trim().trim_matches('`');
        if !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            || name.is_empty()
        {
            return Err(format!("{item:?} is not a module name"));
        }
        allowed.insert(name.to_string(), limits);
    }
    Ok(Some(allowed))
}

/// A limit without its note: the text before the first colon that is not half of a `::`.
fn without_note(limit: &str) -> &str {
    let bytes = limit.as_bytes();
    let note = (0..bytes.len()).find(|&i| {
        bytes[i] == b':' && bytes.get(i + 1) != Some(&b':') && (i == 0 || bytes[i - 1] != b':')
    });
    note.map_or(limit, |i| &limit[..i])
}

/// `text` split at the commas outside brackets.
fn split_top_level(text: &str) -> Result<Vec<String>, String> {
    let mut depth = 0usize;
    let mut items = vec![String::new()];
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth = depth
                    .checked_sub(1)
                    .ok_or_else(|| format!("{text:?}: unbalanced brackets"))?
            }
            ',' if depth == 0 => {
                items.push(String::new());
                continue;
            }
            _ => {}
        }
        items.last_mut().expect("one item").push(c);
    }
    if depth != 0 {
        return Err(format!("{text:?}: unbalanced brackets"));
    }
    Ok(items)
}

fn is_identifier(text: &str) -> bool {
    let mut chars = text.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `source` with comments, string, byte-string and character literals blanked out (newlines
/// kept), so what remains is code.
fn code_only(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    let blank = |out: &mut String, c: char| out.push(if c == '\n' { '\n' } else { ' ' });
    let identifier_before =
        |i: usize| i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
                out.push(' ');
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0usize;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
            }
        } else if (c == 'r' || (c == 'b' && next == Some('r'))) && !identifier_before(i) && {
            let start = if c == 'b' { i + 2 } else { i + 1 };
            let hashes = chars[start.min(chars.len())..]
                .iter()
                .take_while(|&&h| h == '#')
                .count();
            chars.get(start + hashes) == Some(&'"')
        } {
            let start = if c == 'b' { i + 2 } else { i + 1 };
            let hashes = chars[start..].iter().take_while(|&&h| h == '#').count();
            let closing: String = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            let body_start = start + hashes + 1;
            let rest: String = chars[body_start..].iter().collect();
            let body_len = rest
                .find(&closing)
                .map_or(chars.len() - body_start, |bytes| {
                    rest[..bytes].chars().count()
                });
            let end = (body_start + body_len + closing.chars().count()).min(chars.len());
            for &skipped in &chars[i..end] {
                blank(&mut out, skipped);
            }
            i = end;
        } else if c == '"' {
            blank(&mut out, c);
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
                if i < chars.len() {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
            }
            if i < chars.len() {
                out.push(' ');
                i += 1;
            }
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{1F600}'), or a lifetime or label ('a), which
            // is left as code.
            let end = if next == Some('\\') {
                chars
                    .get(i + 3..)
                    .and_then(|rest| rest.iter().position(|&q| q == '\''))
                    .map(|offset| i + 3 + offset + 1)
            } else if chars.get(i + 2) == Some(&'\'') {
                Some(i + 3)
            } else {
                None
            };
            match end {
                Some(end) => {
                    for &skipped in &chars[i..end] {
                        blank(&mut out, skipped);
                    }
                    i = end;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Identifier(String),
    PathSeparator,
    Punct(char),
}

fn tokens(code: &str) -> Vec<Token> {
    let chars: Vec<char> = code.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            tokens.push(Token::Identifier(word.trim_start_matches("r#").to_string()));
        } else if c.is_ascii_digit() {
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            tokens.push(Token::PathSeparator);
            i += 2;
        } else {
            if !c.is_whitespace() {
                tokens.push(Token::Punct(c));
            }
            i += 1;
        }
    }
    tokens
}

/// A path as written, and the module scope it was written in (the file's module path and any
/// inline `mod` around it).
#[derive(Debug)]
struct WrittenPath {
    segments: Vec<String>,
    scope: Vec<String>,
    /// The modules declared by `mod name;` or `mod name {` in that scope.
    children: BTreeSet<String>,
}

/// Every path of `source` that may name a module of the crate: `use` trees expanded, and
/// paths in code starting with `crate`, `super`, `self` or a child module's name.
fn written_paths(source: &str, file_module: &[String]) -> Vec<WrittenPath> {
    let tokens = tokens(&code_only(source));
    // The modules each scope declares, so a relative first segment can be told from a type.
    let mut declared: BTreeMap<Vec<String>, BTreeSet<String>> = BTreeMap::new();
    {
        let mut scopes: Vec<(Vec<String>, usize)> = vec![(file_module.to_vec(), 0)];
        let mut depth = 0usize;
        for (i, token) in tokens.iter().enumerate() {
            match token {
                Token::Identifier(word) if word == "mod" => {
                    if let (Some(Token::Identifier(name)), Some(Token::Punct(after))) =
                        (tokens.get(i + 1), tokens.get(i + 2))
                    {
                        let scope = scopes.last().expect("the file's scope").0.clone();
                        declared
                            .entry(scope.clone())
                            .or_default()
                            .insert(name.clone());
                        if *after == '{' {
                            let mut inner = scope;
                            inner.push(name.clone());
                            scopes.push((inner, depth + 1));
                        }
                    }
                }
                Token::Punct('{') => depth += 1,
                Token::Punct('}') => {
                    if scopes.len() > 1 && scopes.last().expect("a scope").1 == depth {
                        scopes.pop();
                    }
                    depth = depth.saturating_sub(1);
                }
                _ => {}
            }
        }
    }
    let no_children = BTreeSet::new();
    let mut found = Vec::new();
    let mut scopes: Vec<(Vec<String>, usize)> = vec![(file_module.to_vec(), 0)];
    let mut depth = 0usize;
    let mut i = 0;
    while i < tokens.len() {
        let scope = &scopes.last().expect("the file's scope").0;
        let children = declared.get(scope).unwrap_or(&no_children);
        match &tokens[i] {
            Token::Identifier(word) if word == "mod" => {
                if let (Some(Token::Identifier(name)), Some(Token::Punct('{'))) =
                    (tokens.get(i + 1), tokens.get(i + 2))
                {
                    let mut inner = scope.clone();
                    inner.push(name.clone());
                    depth += 1;
                    scopes.push((inner, depth));
                    i += 3;
                    continue;
                }
            }
            Token::Identifier(word) if word == "use" => {
                let mut paths = Vec::new();
                let end = use_tree(&tokens, i + 1, &[], &mut paths);
                for segments in paths {
                    found.push(WrittenPath {
                        segments,
                        scope: scope.clone(),
                        children: children.clone(),
                    });
                }
                i = end.max(i + 1);
                continue;
            }
            Token::Identifier(word)
                if matches!(tokens.get(i + 1), Some(Token::PathSeparator))
                    && !matches!(
                        i.checked_sub(1).map(|p| &tokens[p]),
                        Some(Token::PathSeparator | Token::Punct('$'))
                    )
                    && (["crate", "super", "self"].contains(&word.as_str())
                        || children.contains(word)) =>
            {
                let mut segments = vec![word.clone()];
                let mut j = i + 1;
                while let (Some(Token::PathSeparator), Some(Token::Identifier(next))) =
                    (tokens.get(j), tokens.get(j + 1))
                {
                    segments.push(next.clone());
                    j += 2;
                }
                found.push(WrittenPath {
                    segments,
                    scope: scope.clone(),
                    children: children.clone(),
                });
                i = j;
                continue;
            }
            Token::Punct('{') => depth += 1,
            Token::Punct('}') => {
                if scopes.len() > 1 && scopes.last().expect("a scope").1 == depth {
                    scopes.pop();
                }
                depth = depth.saturating_sub(1);
            }
            _ => {}
        }
        i += 1;
    }
    found
}

/// Reads the use tree starting at `tokens[start]` under `prefix` into `paths`; returns the
/// index after it.
fn use_tree(
    tokens: &[Token],
    start: usize,
    prefix: &[String],
    paths: &mut Vec<Vec<String>>,
) -> usize {
    let mut segments = prefix.to_vec();
    let mut i = start;
    loop {
        match tokens.get(i) {
            Some(Token::Identifier(word))
                if word == "self" && !prefix.is_empty() && segments.len() == prefix.len() =>
            {
                // `a::{self, b}`: the module itself.
                paths.push(segments.clone());
                i += 1;
                return skip_rename(tokens, i);
            }
            Some(Token::Identifier(word)) => {
                segments.push(word.clone());
                i += 1;
                if matches!(tokens.get(i), Some(Token::PathSeparator)) {
                    i += 1;
                    continue;
                }
                paths.push(segments);
                return skip_rename(tokens, i);
            }
            Some(Token::Punct('*')) => {
                paths.push(segments);
                return i + 1;
            }
            Some(Token::Punct('{')) => {
                i += 1;
                loop {
                    match tokens.get(i) {
                        Some(Token::Punct('}')) => return i + 1,
                        Some(Token::Punct(',')) => i += 1,
                        None => return i,
                        Some(_) => {
                            let after = use_tree(tokens, i, &segments, paths);
                            i = after.max(i + 1);
                        }
                    }
                }
            }
            Some(Token::PathSeparator) => i += 1, // `use ::std::x`
            _ => return i,
        }
    }
}

fn skip_rename(tokens: &[Token], i: usize) -> usize {
    match (tokens.get(i), tokens.get(i + 1)) {
        (Some(Token::Identifier(word)), Some(Token::Identifier(_))) if word == "as" => i + 2,
        _ => i,
    }
}

/// One crate of a package: the directory its module paths start from and its root file.
struct Crate {
    dir: PathBuf,
    root: PathBuf,
}

impl Crate {
    /// The module path of a file of this crate (`[]` for the root).
    fn module_of(&self, file: &Path) -> Vec<String> {
        if file == self.root {
            return Vec::new();
        }
        let relative = file.strip_prefix(&self.dir).expect("a file of the crate");
        let mut segments: Vec<String> = relative
            .iter()
            .map(|part| part.to_string_lossy().to_string())
            .collect();
        let last = segments.pop().expect("a file name");
        if last != "mod.rs" {
            segments.push(last.trim_end_matches(".rs").to_string());
        }
        segments
    }

    /// The file of a module path, if the crate has one.
    fn file_of(&self, module: &[String]) -> Option<PathBuf> {
        if module.is_empty() {
            return Some(self.root.clone());
        }
        let mut base = self.dir.clone();
        for segment in module {
            base.push(segment);
        }
        let file = base.with_extension("rs");
        if file.is_file() {
            return Some(file);
        }
        let file = base.join("mod.rs");
        file.is_file().then_some(file)
    }
}

/// A path written in a file, resolved from the crate's root, or `None` for another crate's.
fn resolve(path: &WrittenPath) -> Option<Vec<String>> {
    let mut segments = path.segments.iter().peekable();
    let mut absolute = match segments.peek().map(|s| s.as_str()) {
        Some("crate") => {
            segments.next();
            Vec::new()
        }
        Some("super" | "self") => {
            let mut scope = path.scope.clone();
            while let Some(word) = segments.peek() {
                match word.as_str() {
                    "super" => {
                        scope.pop();
                    }
                    "self" => {}
                    _ => break,
                }
                segments.next();
            }
            scope
        }
        Some(first) if path.children.contains(first) => path.scope.clone(),
        _ => return None,
    };
    absolute.extend(segments.cloned());
    Some(absolute)
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
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

/// One file's import of a module of its own crate.
struct Import {
    from: PathBuf,
    /// The module path it names, from the crate's root.
    path: Vec<String>,
    /// The file that path leads to (the deepest module file on it).
    to: PathBuf,
}

/// The imports between files of `package_dir`'s crates.
fn imports(package_dir: &Path, binaries: &[&str]) -> Vec<Import> {
    let src = package_dir.join("src");
    let binaries: Vec<Crate> = binaries
        .iter()
        .map(|dir| Crate {
            dir: package_dir.join(dir),
            root: package_dir.join(dir).join("main.rs"),
        })
        .collect();
    let library = Crate {
        dir: src.clone(),
        root: src.join("lib.rs"),
    };
    let main = Crate {
        dir: src.clone(),
        root: src.join("main.rs"),
    };
    let mut found = Vec::new();
    for file in rust_files(&src) {
        let krate = binaries
            .iter()
            .find(|binary| file.starts_with(&binary.dir))
            .unwrap_or(if file == main.root { &main } else { &library });
        let module = krate.module_of(&file);
        let Ok(source) = fs::read_to_string(&file) else {
            continue;
        };
        for written in written_paths(&source, &module) {
            let Some(path) = resolve(&written) else {
                continue;
            };
            let to = (0..=path.len())
                .rev()
                .find_map(|len| krate.file_of(&path[..len]))
                .expect("the crate's root");
            found.push(Import {
                from: file.clone(),
                path,
                to,
            });
        }
    }
    found
}

/// Whether `module` is `file` or a module file that encloses it: the crate's root, or the
/// `mod.rs` of one of its directories. A module and its children are one unit: the parent
/// declares them, they see its items.
fn is_module_of(module: &Path, file: &Path) -> bool {
    if module == file {
        return true;
    }
    let Some(name) = module.file_name().and_then(|name| name.to_str()) else {
        return false;
    };
    matches!(name, "mod.rs" | "lib.rs" | "main.rs")
        && module.parent().is_some_and(|dir| file.starts_with(dir))
}

/// A limit is checked only on a module of the row's own crate: limits written on anything else
/// (an external crate, a misspelt module) would be dropped unread, so they are refused.
fn unchecked_limits(package_dir: &Path, package: &Package, rows: &[Row]) -> Vec<String> {
    let mut found = Vec::new();
    for row in rows {
        let Some(allowed) = &row.allowed else {
            continue;
        };
        let Some(first) = row.paths.iter().find(|path| path.starts_with("src/")) else {
            continue;
        };
        let crate_dir = package
            .binaries
            .iter()
            .find(|binary| first.starts_with(*binary))
            .map_or_else(
                || package_dir.join("src"),
                |binary| package_dir.join(binary),
            );
        for (name, limits) in allowed {
            let is_module = crate_dir.join(format!("{name}.rs")).is_file()
                || crate_dir.join(name).join("mod.rs").is_file();
            if matches!(limits, Limits::Only(_)) && !is_module {
                found.push(format!(
                    "ARCHITECTURE.md, row {}: limits on {name}, which is not a module of the \
                     row's crate, cannot be checked; name what it uses in the description",
                    row.paths.join(", ")
                ));
            }
        }
    }
    found
}

/// Checks the sources of every package under `root` against `root`'s ARCHITECTURE.md; returns
/// each violation as a sentence naming the file.
fn check(root: &Path) -> Vec<String> {
    let architecture = match fs::read_to_string(root.join("ARCHITECTURE.md")) {
        Ok(text) => text,
        Err(e) => return vec![format!("ARCHITECTURE.md: {e}")],
    };
    let mut found = Vec::new();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let relative = |file: &Path| {
        file.strip_prefix(root)
            .expect("under the workspace")
            .to_string_lossy()
            .to_string()
    };
    for package in PACKAGES {
        let rows = match code_map(&architecture, package.heading) {
            Ok((rows, errors)) => {
                found.extend(errors);
                rows
            }
            Err(e) => {
                found.push(e);
                continue;
            }
        };
        let package_dir = root.join(package.dir);
        found.extend(unchecked_limits(&package_dir, package, &rows));
        // The row owning a file is the one with the longest matching path.
        let mut owner: BTreeMap<PathBuf, (usize, usize)> = BTreeMap::new();
        for (index, row) in rows.iter().enumerate() {
            for path in row.paths.iter().filter(|path| path.starts_with("src/")) {
                let full = package_dir.join(path);
                if !full.exists() {
                    found.push(format!(
                        "ARCHITECTURE.md names {}/{path}, which does not exist",
                        package.dir
                    ));
                    continue;
                }
                let files = if full.is_file() {
                    vec![full]
                } else {
                    rust_files(&full)
                };
                for file in files {
                    let entry = owner.entry(file).or_insert((index, path.len()));
                    if path.len() > entry.1 {
                        *entry = (index, path.len());
                    }
                }
            }
        }
        for file in rust_files(&package_dir.join("src")) {
            if !owner.contains_key(&file) {
                found.push(format!(
                    "{}: no row of ARCHITECTURE.md's code map owns this file",
                    relative(&file)
                ));
            }
        }
        for import in imports(&package_dir, package.binaries) {
            let (from, to) = (relative(&import.from), relative(&import.to));
            if !is_module_of(&import.to, &import.from) && !is_module_of(&import.from, &import.to) {
                graph.entry(from.clone()).or_default().insert(to.clone());
            }
            let Some(&(row_index, _)) = owner.get(&import.from) else {
                continue; // reported above
            };
            if owner.get(&import.to).map(|&(index, _)| index) == Some(row_index) {
                continue; // the row's own files
            }
            let Some(allowed) = &rows[row_index].allowed else {
                continue;
            };
            let written = import.path.join("::");
            let Some((module, inside)) = import.path.split_first() else {
                found.push(format!("{from} imports its crate's root"));
                continue;
            };
            let verdict = match allowed.get(module) {
                None => Err(format!("does not name {module}")),
                Some(Limits::Whole) => Ok(()),
                Some(Limits::Only(paths)) => {
                    if paths.iter().any(|limit| inside.starts_with(limit)) {
                        Ok(())
                    } else {
                        let limits: Vec<String> = paths.iter().map(|p| p.join("::")).collect();
                        Err(format!("allows only {module} ({})", limits.join(", ")))
                    }
                }
            };
            if let Err(why) = verdict {
                found.push(format!(
                    "{from} imports crate::{written}: its row ({}) {why}",
                    rows[row_index].paths.join(", ")
                ));
            }
        }
    }
    let allowed: Vec<BTreeSet<String>> = ALLOWED_CIRCLES
        .iter()
        .map(|(files, _)| files.iter().map(|f| f.to_string()).collect())
        .collect();
    let circles = circles(&graph);
    for circle in &circles {
        if !allowed.contains(circle) {
            found.push(format!(
                "import circle not listed in ALLOWED_CIRCLES: {}",
                circle.iter().cloned().collect::<Vec<_>>().join(" <-> ")
            ));
        }
    }
    for circle in &allowed {
        if !circles.contains(circle) {
            found.push(format!(
                "ALLOWED_CIRCLES lists a circle the code no longer has: {}",
                circle.iter().cloned().collect::<Vec<_>>().join(" <-> ")
            ));
        }
    }
    found.sort();
    found.dedup();
    found
}

/// The strongly connected components of more than one file (Tarjan's algorithm).
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    struct State<'g> {
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        components: Vec<BTreeSet<String>>,
    }
    fn visit<'g>(state: &mut State<'g>, node: &'g str) {
        let next = state.index.len();
        state.index.insert(node, next);
        state.low.insert(node, next);
        state.stack.push(node);
        state.on_stack.insert(node);
        if let Some(targets) = state.graph.get(node) {
            for target in targets {
                let target = target.as_str();
                if !state.index.contains_key(target) {
                    visit(state, target);
                    let low = state.low[target].min(state.low[node]);
                    state.low.insert(node, low);
                } else if state.on_stack.contains(target) {
                    let low = state.index[target].min(state.low[node]);
                    state.low.insert(node, low);
                }
            }
        }
        if state.low[node] == state.index[node] {
            let mut component = BTreeSet::new();
            while let Some(member) = state.stack.pop() {
                state.on_stack.remove(member);
                component.insert(member.to_string());
                if member == node {
                    break;
                }
            }
            if component.len() > 1 {
                state.components.push(component);
            }
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        components: Vec::new(),
    };
    for node in graph.keys() {
        if !state.index.contains_key(node.as_str()) {
            visit(&mut state, node);
        }
    }
    state.components
}

#[test]
fn the_code_map_allows_every_import() {
    let found = check(&workspace_root());
    assert!(
        found.is_empty(),
        "ARCHITECTURE.md's code map does not match the code:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_reader_resolves_every_kind_of_path() {
    let source = r##"
        use crate::a::B;
        use crate::{c, d::{self, E, f::G}};
        use super::super::h::I;
        use self::child::J;
        use child::K as L;
        mod child;
        fn f() { crate::m::n(); super::o::p(); let s = "crate::q::r"; /* crate::s */ }
        // crate::t
        let raw = r#"use crate::u;"#; let c = '{'; let x = squall_crate::z;
        mod tests { use super::*; use super::super::v::W; }
        fn g<'a>(x: &'a str) { pub(crate) fn h() { $crate::y::z(); } }
        use crate::after::Tests;
    "##;
    let module = ["outer".to_string(), "file".to_string()];
    let resolved: Vec<String> = written_paths(source, &module)
        .iter()
        .filter_map(resolve)
        .map(|path| path.join("::"))
        .collect();
    assert_eq!(
        resolved,
        [
            "a::B",
            "c",
            "d",
            "d::E",
            "d::f::G",
            "h::I",
            "outer::file::child::J",
            "outer::file::child::K",
            "m::n",
            "outer::o::p",
            "outer::file",
            "outer::v::W",
            "after::Tests",
        ]
    );
}

#[test]
fn the_cell_reader_keeps_every_limit() {
    let allowed = allowed_modules(
        "search (`Limits`, `Clock`), engine (adapter, callgrind::strip_hash: a note, `bench`: \
         its positions), libc",
    )
    .unwrap()
    .unwrap();
    let path = |p: &str| p.split("::").map(str::to_string).collect::<Vec<_>>();
    assert_eq!(
        allowed["search"],
        Limits::Only(vec![path("Limits"), path("Clock")])
    );
    assert_eq!(
        allowed["engine"],
        Limits::Only(vec![
            path("adapter"),
            path("callgrind::strip_hash"),
            path("bench")
        ])
    );
    assert_eq!(allowed["libc"], Limits::Whole);
    assert!(allowed_modules("everything below").unwrap().is_none());
    assert!(allowed_modules("—").unwrap().unwrap().is_empty());
    assert!(allowed_modules("engine (the engine's hooks)").is_err());
    assert!(allowed_modules("engine (adapter) and more").is_err());
}

/// A copy of the workspace's ARCHITECTURE.md and sources, for planting misses in.
fn copy_of_sources() -> tempfile::TempDir {
    let root = workspace_root();
    let copy = tempfile::tempdir().expect("a temporary directory");
    fs::copy(
        root.join("ARCHITECTURE.md"),
        copy.path().join("ARCHITECTURE.md"),
    )
    .expect("ARCHITECTURE.md copied");
    for package in PACKAGES {
        let src = root.join(package.dir).join("src");
        for file in rust_files(&src) {
            let target = copy
                .path()
                .join(file.strip_prefix(&root).expect("in the workspace"));
            fs::create_dir_all(target.parent().expect("a directory")).expect("directory made");
            fs::copy(&file, &target).expect("file copied");
        }
    }
    copy
}

/// Appends `line` to `file` of the copy (creating it); returns what the file held, to restore.
fn plant(copy: &Path, file: &str, line: &str) -> Option<String> {
    let path = copy.join(file);
    let original = fs::read_to_string(&path).ok();
    let mut source = original.clone().unwrap_or_default();
    source.push('\n');
    source.push_str(line);
    source.push('\n');
    fs::write(&path, source).expect("planted");
    original
}

fn restore(copy: &Path, file: &str, original: Option<String>) {
    let path = copy.join(file);
    match original {
        Some(text) => fs::write(&path, text).expect("restored"),
        None => fs::remove_file(&path).expect("removed"),
    }
}

/// Each miss the previous check let through, planted alone in a copy of the sources: the check
/// names it.
#[test]
fn the_check_fails_on_each_planted_miss() {
    let misses: [(&str, &str, &str); 5] = [
        // A `super::super::` path: the lab's engine layer reaching up to the reports.
        (
            "lab/src/engine/build.rs",
            "use super::super::report::Report;",
            "lab/src/engine/build.rs imports crate::report::Report",
        ),
        // A file no row names.
        (
            "lab/src/unlisted.rs",
            "use crate::paths::Paths;",
            "lab/src/unlisted.rs: no row",
        ),
        // Allowed only through another row's allowance (engine -> machine -> analysis).
        (
            "lab/src/engine/build.rs",
            "use crate::analysis::measure::Subject;",
            "lab/src/engine/build.rs imports crate::analysis::measure::Subject",
        ),
        // The engine's central layering: eval below search.
        (
            "engine/src/eval/mod.rs",
            "use crate::search::Limits;",
            "engine/src/eval/mod.rs imports crate::search::Limits",
        ),
        // A module the row names, outside the row's parenthesised limits.
        (
            "lab/src/lab.rs",
            "use crate::engine::callgrind::find_valgrind;",
            "lab/src/lab.rs imports crate::engine::callgrind::find_valgrind",
        ),
    ];
    let copy = copy_of_sources();
    assert_eq!(check(copy.path()), Vec::<String>::new(), "the copy passes");
    for (file, line, expected) in misses {
        let original = plant(copy.path(), file, line);
        let found = check(copy.path());
        assert!(
            found
                .iter()
                .any(|violation| violation.starts_with(expected)),
            "planting {line:?} in {file} was not caught; the check found {found:#?}"
        );
        restore(copy.path(), file, original);
        assert_eq!(check(copy.path()), Vec::<String>::new(), "{file} restored");
    }
}

/// A circle between two files of the same row is caught, although each import is allowed.
#[test]
fn the_check_fails_on_an_unlisted_circle() {
    let copy = copy_of_sources();
    plant(
        copy.path(),
        "lab/src/engine/bench.rs",
        "use crate::engine::callgrind::find_valgrind;",
    );
    plant(
        copy.path(),
        "lab/src/engine/callgrind.rs",
        "use super::bench::BenchRun;",
    );
    let found = check(copy.path());
    assert!(
        found.iter().any(
            |violation| violation.starts_with("import circle not listed")
                && violation.contains("lab/src/engine/bench.rs")
                && violation.contains("lab/src/engine/callgrind.rs")
        ),
        "{found:#?}"
    );
}
