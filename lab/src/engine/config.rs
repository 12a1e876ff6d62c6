//! `lab.toml`: which engine the lab measures and how to build and bench it
//! (docs/lab-toml.md).
//!
//! Without a `lab.toml` (and without `--config`), the engine is squall, built by the lab's own
//! `cargo build` and benched with the squall bench protocol ([`Engine::Squall`]).

use std::fmt;
use std::ops::Range;
use std::path::{Component, Path, PathBuf};

use anyhow::Result;
use serde::Deserialize;
use toml::Spanned;

/// The file the lab reads at the repository root when no `--config` is given.
pub(crate) const CONFIG_FILE: &str = "lab.toml";
/// The placeholder for the file name the build must produce and the bench runs.
pub(crate) const EXE_PLACEHOLDER: &str = "{exe}";
/// The placeholder for the search depth in a bench command.
pub(crate) const DEPTH_PLACEHOLDER: &str = "{depth}";
/// `build` when `lab.toml` gives none: what an OpenBench worker runs.
pub(crate) const DEFAULT_BUILD: &str = "make -j EXE={exe}";
/// `bench` when `lab.toml` gives none: what an OpenBench worker runs.
pub(crate) const DEFAULT_BENCH: &str = "{exe} bench";
/// The engine name a `squall-json` engine must have: the lab builds the cargo package `squall`.
pub(crate) const SQUALL_NAME: &str = "squall";
/// Characters a bench command may not contain: it is split on whitespace and run without a
/// shell, so quoting, expansion, redirection and pipes would silently not do what they say.
pub(crate) const SHELL_ONLY_CHARACTERS: &[char] =
    &['\'', '"', '\\', '$', '`', '|', '&', ';', '<', '>'];

/// How the engine reports a bench: `format =` in `lab.toml`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BenchProtocol {
    /// Free text, read as OpenBench's client reads it (see [`crate::engine::openbench`]).
    OpenBench,
    /// `squall bench --json` (docs/bench-protocol.md).
    SquallJson,
}

impl BenchProtocol {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            BenchProtocol::OpenBench => "openbench",
            BenchProtocol::SquallJson => "squall-json",
        }
    }
}

impl fmt::Display for BenchProtocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The engine under test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Engine {
    /// squall, built with the lab's own `cargo build --release -p squall [--features ...]` and
    /// benched with `squall bench --json`: what the lab does without a `lab.toml`. Only this
    /// engine has the protocol features that calibration, `lab tiers` and `lab tables` need.
    Squall,
    /// Any engine built and benched the way OpenBench does it.
    OpenBench(OpenBenchEngine),
}

/// An engine with OpenBench's conventions: `build` run by `sh -c` in `build_dir` produces the
/// file `{exe}`, and `bench` prints the node count and speed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenBenchEngine {
    /// A plain identifier: letters, digits, `-`, `_`, `.`, starting with a letter or digit.
    pub(crate) name: String,
    /// Relative to the repository root, normal components only; empty for the root itself.
    pub build_dir: PathBuf,
    /// A shell command containing `{exe}`.
    pub build: String,
    /// A command containing `{exe}` and perhaps `{depth}`, split on whitespace (no shell).
    pub bench: String,
}

impl OpenBenchEngine {
    /// The build command with `{exe}` replaced by `exe`.
    pub(crate) fn build_command(&self, exe: &str) -> String {
        self.build.replace(EXE_PLACEHOLDER, exe)
    }

    /// `build_dir` for messages: `.` for the root.
    pub(crate) fn build_dir_display(&self) -> String {
        if self.build_dir.as_os_str().is_empty() {
            ".".to_string()
        } else {
            self.build_dir.display().to_string()
        }
    }
}

/// Where the configuration came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ConfigSource {
    /// No `lab.toml` and no `--config`: squall, as the lab always measured it.
    Default,
    File(PathBuf),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabConfig {
    pub engine: Engine,
    pub(crate) source: ConfigSource,
}

impl LabConfig {
    /// squall with the lab's own build, as without a `lab.toml`.
    pub(crate) fn squall_default() -> LabConfig {
        LabConfig {
            engine: Engine::Squall,
            source: ConfigSource::Default,
        }
    }
}

/// Reads `explicit` (`--config FILE`, which must exist) or else `<repo_root>/lab.toml` when
/// there is one; without either, [`LabConfig::squall_default`].
pub fn load(repo_root: &Path, explicit: Option<&Path>) -> Result<LabConfig> {
    let file = match explicit {
        Some(file) => file.to_path_buf(),
        None => {
            let file = repo_root.join(CONFIG_FILE);
            if file.symlink_metadata().is_err() {
                return Ok(LabConfig::squall_default());
            }
            file
        }
    };
    let text = crate::input::read_text(&file, crate::input::LAB_TOML)?;
    parse(&text, &file)
}

/// Parses and checks the text of a `lab.toml`; `file` names it in errors, which give the line
/// where the problem is whenever the toml parser reports one.
pub(crate) fn parse(text: &str, file: &Path) -> Result<LabConfig> {
    let raw: RawConfig = toml::from_str(text).map_err(|error| {
        let place = error
            .span()
            .map(|span| location(text, span))
            .unwrap_or_default();
        anyhow::anyhow!("{}{place}: {}", file.display(), error.message().trim_end())
    })?;
    let problem = |span: Range<usize>, message: String| {
        anyhow::anyhow!("{}{}: {message}", file.display(), location(text, span))
    };
    let engine = raw.engine;
    let name_span = engine.name.span();
    let name = engine.name.into_inner();
    check_name(&name).map_err(|message| problem(name_span.clone(), message))?;
    let protocol = match &engine.format {
        None => BenchProtocol::OpenBench,
        Some(format) => match format.get_ref().as_str() {
            "openbench" => BenchProtocol::OpenBench,
            "squall-json" => BenchProtocol::SquallJson,
            other => {
                return Err(problem(
                    format.span(),
                    format!(
                        "unknown format \"{other}\": expected \"openbench\" or \"squall-json\""
                    ),
                ))
            }
        },
    };
    let engine = match protocol {
        BenchProtocol::SquallJson => {
            // The lab builds squall-protocol engines itself (with the cargo features that
            // calibration and profiling need) and runs `bench --json` with its own arguments, so
            // a command here would be silently ignored: refuse it instead.
            for (key, value) in [
                ("build-dir", &engine.build_dir),
                ("build", &engine.build),
                ("bench", &engine.bench),
            ] {
                if let Some(value) = value {
                    return Err(problem(
                        value.span(),
                        format!(
                            "`{key}` is not used with format = \"squall-json\": the lab builds \
                             such an engine itself with `cargo build --release -p squall \
                             [--features ...]` and runs `squall bench --json` with its own \
                             arguments; remove the key, or use format = \"openbench\" to build \
                             and bench with commands"
                        ),
                    ));
                }
            }
            if name != SQUALL_NAME {
                return Err(problem(
                    name_span,
                    format!(
                        "format = \"squall-json\" is built as the cargo package \
                         \"{SQUALL_NAME}\", so the name must be \"{SQUALL_NAME}\", not \"{name}\""
                    ),
                ));
            }
            Engine::Squall
        }
        BenchProtocol::OpenBench => {
            let build_dir = match &engine.build_dir {
                None => PathBuf::new(),
                Some(dir) => check_build_dir(dir.get_ref())
                    .map_err(|message| problem(dir.span(), message))?,
            };
            let build = match engine.build {
                None => DEFAULT_BUILD.to_string(),
                Some(build) => {
                    let span = build.span();
                    let build = build.into_inner();
                    check_build(&build).map_err(|message| problem(span, message))?;
                    build
                }
            };
            let bench = match engine.bench {
                None => DEFAULT_BENCH.to_string(),
                Some(bench) => {
                    let span = bench.span();
                    let bench = bench.into_inner();
                    check_bench(&bench).map_err(|message| problem(span, message))?;
                    bench
                }
            };
            Engine::OpenBench(OpenBenchEngine {
                name,
                build_dir,
                build,
                bench,
            })
        }
    };
    Ok(LabConfig {
        engine,
        source: ConfigSource::File(file.to_path_buf()),
    })
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    engine: RawEngine,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawEngine {
    name: Spanned<String>,
    build_dir: Option<Spanned<String>>,
    build: Option<Spanned<String>>,
    bench: Option<Spanned<String>>,
    format: Option<Spanned<String>>,
}

/// `:LINE:COLUMN` of the byte offset `span.start` in `text` (both from 1).
fn location(text: &str, span: Range<usize>) -> String {
    let start = span.start.min(text.len());
    let before = text.get(..start).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before
        .rsplit('\n')
        .next()
        .map_or(1, |last| last.chars().count() + 1);
    format!(":{line}:{column}")
}

fn check_name(name: &str) -> std::result::Result<(), String> {
    let mut chars = name.chars();
    let plain = chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if plain {
        Ok(())
    } else {
        Err(format!(
            "name \"{name}\" is not a plain name: use letters, digits, '-', '_' and '.', \
             starting with a letter or digit"
        ))
    }
}

/// The build directory as normal components (empty for the root); refuses absolute paths and
/// `..`, which would leave the revision's tree.
pub(crate) fn check_build_dir(dir: &str) -> std::result::Result<PathBuf, String> {
    if dir.is_empty() {
        return Err("build-dir is empty: use \".\" for the repository root".to_string());
    }
    let mut normal = PathBuf::new();
    for component in Path::new(dir).components() {
        match component {
            Component::Normal(part) => normal.push(part),
            Component::CurDir => {}
            Component::ParentDir => {
                return Err(format!(
                    "build-dir \"{dir}\" leaves the repository: '..' is not allowed"
                ))
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(format!(
                    "build-dir \"{dir}\" is absolute: give it relative to the repository root"
                ))
            }
        }
    }
    Ok(normal)
}

fn check_build(build: &str) -> std::result::Result<(), String> {
    if build.trim().is_empty() {
        return Err("build is empty".to_string());
    }
    if !build.contains(EXE_PLACEHOLDER) {
        return Err(format!(
            "build \"{build}\" does not mention {EXE_PLACEHOLDER}: the lab names the file the \
             build must produce (as OpenBench passes EXE=...), e.g. \"{DEFAULT_BUILD}\""
        ));
    }
    if build.contains(DEPTH_PLACEHOLDER) {
        return Err(format!(
            "build \"{build}\" mentions {DEPTH_PLACEHOLDER}, which only the bench command takes"
        ));
    }
    Ok(())
}

fn check_bench(bench: &str) -> std::result::Result<(), String> {
    if !bench.contains(EXE_PLACEHOLDER) {
        return Err(format!(
            "bench \"{bench}\" does not mention {EXE_PLACEHOLDER}, the engine binary, e.g. \
             \"{DEFAULT_BENCH}\""
        ));
    }
    if let Some(bad) = bench.chars().find(|c| SHELL_ONLY_CHARACTERS.contains(c)) {
        return Err(format!(
            "bench \"{bench}\" contains '{bad}': the bench command is split on whitespace and \
             run without a shell, so quotes, escapes, variables, pipes and redirections are not \
             available"
        ));
    }
    let mut rest = bench;
    while let Some(open) = rest.find('{') {
        let after = &rest[open..];
        let placeholder = after.find('}').map_or(after, |close| &after[..=close]);
        if placeholder != EXE_PLACEHOLDER && placeholder != DEPTH_PLACEHOLDER {
            return Err(format!(
                "bench \"{bench}\" has the unknown placeholder \"{placeholder}\": only \
                 {EXE_PLACEHOLDER} and {DEPTH_PLACEHOLDER} are replaced"
            ));
        }
        rest = &after[placeholder.len()..];
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_text(text: &str) -> Result<LabConfig> {
        parse(text, Path::new("dir/lab.toml"))
    }

    fn error(text: &str) -> String {
        format!("{:#}", parse_text(text).expect_err("an error"))
    }

    fn openbench(text: &str) -> OpenBenchEngine {
        match parse_text(text).unwrap().engine {
            Engine::OpenBench(engine) => engine,
            Engine::Squall => panic!("squall for {text}"),
        }
    }

    #[test]
    fn defaults_are_openbench_s() {
        let engine = openbench("[engine]\nname = \"myengine\"\n");
        assert_eq!(
            engine,
            OpenBenchEngine {
                name: "myengine".to_string(),
                build_dir: PathBuf::new(),
                build: "make -j EXE={exe}".to_string(),
                bench: "{exe} bench".to_string(),
            }
        );
        assert_eq!(engine.build_command("lab-engine"), "make -j EXE=lab-engine");
        assert_eq!(engine.build_dir_display(), ".");
    }

    #[test]
    fn every_key_is_read() {
        let engine = openbench(
            "[engine]\nname = \"Ethereal-13\"\nbuild-dir = \"./src/\"\n\
             build = \"make EXE={exe} CC=clang\"\nbench = \"{exe} bench {depth}\"\n\
             format = \"openbench\"\n",
        );
        assert_eq!(engine.name, "Ethereal-13");
        assert_eq!(engine.build_dir, PathBuf::from("src"));
        assert_eq!(engine.build, "make EXE={exe} CC=clang");
        assert_eq!(engine.bench, "{exe} bench {depth}");
        let dot = openbench("[engine]\nname = \"e\"\nbuild-dir = \".\"\n");
        assert_eq!(dot.build_dir, PathBuf::new());
    }

    #[test]
    fn squall_json_is_the_lab_s_own_squall() {
        let config = parse_text("[engine]\nname = \"squall\"\nformat = \"squall-json\"\n").unwrap();
        assert_eq!(config.engine, Engine::Squall);
        assert_eq!(
            config.source,
            ConfigSource::File(PathBuf::from("dir/lab.toml"))
        );

        let message = error(
            "[engine]\nname = \"squall\"\nformat = \"squall-json\"\nbuild = \"make EXE={exe}\"\n",
        );
        assert!(message.starts_with("dir/lab.toml:4:"), "{message}");
        assert!(
            message.contains("`build` is not used with format = \"squall-json\""),
            "{message}"
        );
        let message = error("[engine]\nformat = \"squall-json\"\nname = \"other\"\n");
        assert!(message.starts_with("dir/lab.toml:3:"), "{message}");
        assert!(message.contains("the name must be \"squall\""), "{message}");
    }

    #[test]
    fn unknown_keys_are_named_with_their_line() {
        let message = error("[engine]\nname = \"e\"\nbiuld = \"make\"\n");
        assert!(message.starts_with("dir/lab.toml:3:"), "{message}");
        assert!(message.contains("unknown field `biuld`"), "{message}");
        let message = error("[engine]\nname = \"e\"\n\n[extra]\nx = 1\n");
        assert!(message.contains("unknown field `extra`"), "{message}");
        assert!(message.starts_with("dir/lab.toml:4:"), "{message}");
    }

    #[test]
    fn syntax_errors_and_missing_keys_name_the_file() {
        let message = error("[engine\nname = \"e\"\n");
        assert!(message.starts_with("dir/lab.toml:1:"), "{message}");
        let message = error("[engine]\nbuild = \"make EXE={exe}\"\n");
        assert!(message.starts_with("dir/lab.toml"), "{message}");
        assert!(message.contains("missing field `name`"), "{message}");
        let message = error("");
        assert!(message.contains("missing field `engine`"), "{message}");
        let message = error("[engine]\nname = 3\n");
        assert!(message.starts_with("dir/lab.toml:2:"), "{message}");
    }

    #[test]
    fn bad_build_dirs_are_refused() {
        for (dir, expected) in [
            ("../x", "'..' is not allowed"),
            ("src/../../x", "'..' is not allowed"),
            ("/abs/src", "is absolute"),
            ("", "is empty"),
        ] {
            let message = error(&format!("[engine]\nname = \"e\"\nbuild-dir = \"{dir}\"\n"));
            assert!(message.starts_with("dir/lab.toml:3:"), "{dir}: {message}");
            assert!(message.contains(expected), "{dir}: {message}");
        }
    }

    #[test]
    fn the_build_must_name_the_exe() {
        let message = error("[engine]\nname = \"e\"\nbuild = \"make -j\"\n");
        assert!(message.starts_with("dir/lab.toml:3:"), "{message}");
        assert!(message.contains("does not mention {exe}"), "{message}");
        let message = error("[engine]\nname = \"e\"\nbuild = \"make EXE={exe} D={depth}\"\n");
        assert!(
            message.contains("only the bench command takes"),
            "{message}"
        );
    }

    #[test]
    fn the_bench_is_checked() {
        for (bench, expected) in [
            ("./engine bench", "does not mention {exe}"),
            ("{exe} bench > out", "contains '>'"),
            ("{exe} \"bench 13\"", "contains '\"'"),
            ("{exe} bench {dpeth}", "unknown placeholder \"{dpeth}\""),
            ("{exe} bench {", "unknown placeholder \"{\""),
        ] {
            let message = error(&format!("[engine]\nname = \"e\"\nbench = '{bench}'\n"));
            assert!(message.starts_with("dir/lab.toml:3:"), "{bench}: {message}");
            assert!(message.contains(expected), "{bench}: {message}");
        }
        let engine = openbench("[engine]\nname = \"e\"\nbench = \"taskset -c 0 {exe} bench\"\n");
        assert_eq!(engine.bench, "taskset -c 0 {exe} bench");
    }

    #[test]
    fn bad_formats_and_names_are_refused() {
        let message = error("[engine]\nname = \"e\"\nformat = \"uci\"\n");
        assert!(message.starts_with("dir/lab.toml:3:"), "{message}");
        assert!(message.contains("unknown format \"uci\""), "{message}");
        for name in ["", "my engine", "-x", "a/b"] {
            let message = error(&format!("[engine]\nname = \"{name}\"\n"));
            assert!(message.starts_with("dir/lab.toml:2:"), "{name}: {message}");
            assert!(message.contains("is not a plain name"), "{name}: {message}");
        }
    }

    #[test]
    fn the_repository_s_lab_toml_says_what_the_lab_does_without_one() {
        let text = include_str!("../../../lab.toml");
        let config = parse(text, Path::new("lab.toml")).unwrap();
        assert_eq!(config.engine, LabConfig::squall_default().engine);
        // The same engine through its Makefile, as OpenBench builds it.
        let engine = openbench("[engine]\nname = \"squall\"\n");
        assert_eq!(engine.build_command("lab-engine"), "make -j EXE=lab-engine");
    }

    #[test]
    fn load_falls_back_to_squall_and_reads_the_root_file() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(load(dir.path(), None).unwrap(), LabConfig::squall_default());
        let missing = dir.path().join("other.toml");
        let message = format!("{:#}", load(dir.path(), Some(&missing)).unwrap_err());
        assert!(message.contains("other.toml"), "{message}");
        std::fs::write(dir.path().join(CONFIG_FILE), "[engine]\nname = \"x\"\n").unwrap();
        let config = load(dir.path(), None).unwrap();
        assert!(
            matches!(&config.engine, Engine::OpenBench(engine) if engine.name == "x"),
            "{config:?}"
        );
        assert_eq!(
            config.source,
            ConfigSource::File(dir.path().join(CONFIG_FILE))
        );
    }
}
