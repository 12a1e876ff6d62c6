//! `lab match A B` and `lab match merge FILES`: games between two engines and their verdict.
//! The match's flags become a `games::MatchOptions` here, every one checked before anything is
//! built.

use anyhow::{bail, Context, Result};

use crate::cli::{EloModelArg, MatchArgs, MatchCommand, MatchPlayArgs};
use crate::games::book::Book;
use crate::games::results::Shard;
use crate::games::rules::{DrawAdjudication, Limit, ResignAdjudication, SideLimits};
use crate::games::sprt::{EloModel, Sprt};
use crate::games::{self, MatchOptions, MatchReport, Pace, Resume, RunnerConventions, SideSetup};
use crate::lab::Lab;
use crate::outcome::Outcome;
use crate::paths::NamedPath;
use crate::report::Report;

/// The default limit: fishtest's short time control.
const DEFAULT_TC: &str = "10+0.1";
const DEFAULT_GAMES: u64 = 100;
const DEFAULT_SPRT_GAMES: u64 = 40_000;

pub(crate) fn run(lab: &Lab, args: &MatchArgs) -> Result<Outcome> {
    match &args.action {
        Some(MatchCommand::Merge { files, pgn, .. }) => {
            if let Some(pgn) = pgn {
                // As a match's own PGN: the merged games are written afresh, never over a file.
                crate::paths::check_new_output("--pgn", pgn)?;
            }
            Ok(outcome(games::merge(files, pgn.as_deref())?))
        }
        None => Ok(outcome(games::run(lab, options(&args.play)?)?)),
    }
}

fn options(args: &MatchPlayArgs) -> Result<MatchOptions> {
    let limits = limits(args)?;
    let draw = DrawAdjudication::parse(&args.draw_adj)?;
    let resign = ResignAdjudication::parse(&args.resign_adj)?;
    let elo_model = match args.elo_model {
        EloModelArg::Logistic => EloModel::Logistic,
        EloModelArg::Normalized => EloModel::Normalized,
    };
    let sprt = args
        .sprt
        .as_deref()
        .map(|spec| {
            Sprt::parse(spec, elo_model).map_err(|error| anyhow::anyhow!("--sprt {spec}: {error}"))
        })
        .transpose()?;
    let default_games = if sprt.is_some() {
        DEFAULT_SPRT_GAMES
    } else {
        DEFAULT_GAMES
    };
    let games = super::max_games("--games", args.games, default_games)?;
    let shard = args
        .shard
        .as_deref()
        .map(Shard::parse)
        .transpose()?
        .unwrap_or(Shard::WHOLE);
    let [a, b] = sides(args)?;
    let book = Book::load(args.book.as_deref(), args.book_plies)?;
    let engines = [a.spec, b.spec];
    let mut uci_options = [a.options, b.options];
    uci_options[0].extend(parse_uci_options(&args.option_a, "--option-a")?);
    uci_options[1].extend(parse_uci_options(&args.option_b, "--option-b")?);
    Ok(MatchOptions {
        engines,
        uci_options,
        hash: args.hash,
        limits,
        timemargin_ms: args.timemargin,
        draw,
        resign,
        sprt,
        elo_model,
        games,
        shard,
        book,
        seed: args.seed,
        concurrency: args.concurrency,
        out: args.out.clone(),
        pgn: args.pgn.clone(),
        resume: if args.resume {
            Resume::Required
        } else {
            Resume::No
        },
        exports: super::export_paths(&args.output.export),
        conventions: RunnerConventions {
            sides: [a.setup, b.setup],
            max_moves: args.maxmoves,
            scale_nps: args.scale_nps,
        },
        report_on_interrupt: true,
        pause_at: None,
        earlier_steps: Pace::default(),
        sitting: crate::games::Sitting::now(),
        // The flags have defaults: a resume with other rules is refused by name.
        rules_kept_on_resume: crate::games::rules::RulesKept::default(),
    })
}

/// One side as its flags give it: the short form (a revision or `exe:PATH`) or a full spec.
#[derive(Debug, Clone, PartialEq, Eq)]
struct SideSpec {
    /// A revision or `exe:PATH`.
    spec: String,
    setup: SideSetup,
    /// `option.NAME=VALUE` pairs of a full spec.
    options: Vec<(String, String)>,
}

/// A and B: each from its `--engine-a`/`--engine-b`, or else the next positional argument.
fn sides(args: &MatchPlayArgs) -> Result<[SideSpec; 2]> {
    let mut positionals = [&args.a, &args.b].into_iter().flatten();
    let mut side = |full: &Option<String>, flag: &str, label: &str| -> Result<SideSpec> {
        match full {
            Some(spec) => parse_engine_spec(spec, flag),
            None => match positionals.next() {
                Some(spec) => Ok(SideSpec {
                    spec: spec.clone(),
                    setup: SideSetup::default(),
                    options: Vec::new(),
                }),
                None => bail!(
                    "no engine {label}: give it as a positional argument (a revision or exe:PATH) or with {flag}"
                ),
            },
        }
    };
    let a = side(&args.engine_a, "--engine-a", "A")?;
    let b = side(&args.engine_b, "--engine-b", "B")?;
    if let Some(extra) = positionals.next() {
        bail!("`{extra}`: a third engine; --engine-a and --engine-b already give a side each, so give the other as one positional argument");
    }
    Ok([a, b])
}

/// The longest full engine spec read.
const MAX_ENGINE_SPEC_BYTES: usize = 64 * 1024;

/// A full engine spec, fastchess's and cutechess-cli's `-engine` in one argument: words
/// `KEY=VALUE` separated by spaces, a value with spaces in double quotes (`args="-x 1"`).
/// Keys: `cmd=PATH` (an executable, found in `dir` when relative and `dir` is given) or
/// `rev=REVISION` (built by the lab), `name=`, `args=` (split at spaces), `dir=`,
/// `option.NAME=VALUE` (repeatable), `proto=uci`.
fn parse_engine_spec(text: &str, flag: &str) -> Result<SideSpec> {
    if text.len() > MAX_ENGINE_SPEC_BYTES {
        bail!("{flag}: the spec is longer than {MAX_ENGINE_SPEC_BYTES} bytes");
    }
    if text.chars().any(char::is_control) {
        bail!("{flag}: a spec may not contain a line break or another control character");
    }
    let mut command = None;
    let mut setup = SideSetup::default();
    let mut options: Vec<(String, String)> = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for (key, value) in
        spec_words(text).map_err(|error| anyhow::anyhow!("{flag} {text}: {error}"))?
    {
        let repeated = if key.starts_with("option.") {
            options
                .iter()
                .any(|(name, _)| format!("option.{name}") == key)
        } else {
            seen.contains(&key)
        };
        if repeated {
            bail!("{flag}: `{key}` is given twice; give it once");
        }
        if value.is_empty() && key != "args" {
            bail!("{flag}: `{key}=` needs a value");
        }
        match key.as_str() {
            "cmd" | "rev" => {
                if let Some((other, _)) = &command {
                    bail!("{flag}: give one of cmd= (an executable) and rev= (a revision), not {other}= and {key}=");
                }
                let spec = if key == "cmd" {
                    format!("exe:{}", value.strip_prefix("exe:").unwrap_or(&value))
                } else {
                    value.clone()
                };
                command = Some((key.clone(), spec));
            }
            "name" => setup.name = Some(value),
            "args" => setup.args = value.split_whitespace().map(str::to_string).collect(),
            "dir" => {
                let dir = std::path::PathBuf::from(&value);
                if !dir.is_dir() {
                    bail!("{flag}: dir={value} is not a directory");
                }
                setup.dir = Some(dir);
            }
            "proto" if value == "uci" => {}
            "proto" => bail!("{flag}: proto={value}: the lab speaks UCI only"),
            "tc" | "st" | "nodes" | "depth" => bail!(
                "{flag}: {key}= is not part of an engine spec here: give a side's own limit with --tc-a/--tc-b or --nodes-a/--nodes-b"
            ),
            option if option.starts_with("option.") => {
                let name = option.strip_prefix("option.").unwrap_or_default().trim();
                if name.is_empty() {
                    bail!("{flag}: `{key}` names no option (option.NAME=VALUE)");
                }
                options.push((name.to_string(), value.trim().to_string()));
                continue;
            }
            other => bail!(
                "{flag}: unknown key `{other}` (cmd, rev, name, args, dir, option.NAME, proto)"
            ),
        }
        seen.push(key);
    }
    let Some((_, spec)) = command else {
        bail!("{flag} {text}: no cmd=PATH (an executable) or rev=REVISION");
    };
    Ok(SideSpec {
        spec,
        setup,
        options,
    })
}

/// The `KEY=VALUE` words of a spec; a value may be in double quotes, which it then may not
/// contain.
fn spec_words(text: &str) -> std::result::Result<Vec<(String, String)>, String> {
    let mut words = Vec::new();
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        let end_of_key = rest
            .find(|c: char| c == '=' || c.is_whitespace())
            .unwrap_or(rest.len());
        let key = &rest[..end_of_key];
        if !rest[end_of_key..].starts_with('=') || key.is_empty() {
            return Err(format!(
                "`{}` is not KEY=VALUE",
                rest.split_whitespace().next().unwrap_or(rest)
            ));
        }
        rest = &rest[end_of_key + 1..];
        let value;
        if let Some(quoted) = rest.strip_prefix('"') {
            let close = quoted
                .find('"')
                .ok_or_else(|| format!("the value of `{key}` opens a quote it never closes"))?;
            value = &quoted[..close];
            rest = &quoted[close + 1..];
            if rest.chars().next().is_some_and(|c| !c.is_whitespace()) {
                return Err(format!(
                    "the quoted value of `{key}` runs on past its closing quote"
                ));
            }
        } else {
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            value = &rest[..end];
            rest = &rest[end..];
        }
        words.push((key.to_string(), value.to_string()));
        rest = rest.trim_start();
    }
    Ok(words)
}

/// The files a match reads (its book; the results file it resumes) and writes (the results
/// file, the PGN) as its flags name them.
pub(crate) fn files(args: &MatchPlayArgs) -> (Vec<NamedPath>, Vec<NamedPath>) {
    let mut inputs: Vec<NamedPath> = args
        .book
        .iter()
        .map(|book| NamedPath::new("--book", book))
        .collect();
    let mut outputs = Vec::new();
    if let Some(out) = &args.out {
        let named = NamedPath::new("--out", out);
        // A resumed results file is read and then appended to: an input no export may replace.
        if args.resume {
            inputs.push(named);
        } else {
            outputs.push(named);
        }
    }
    match (&args.pgn, &args.out) {
        (Some(pgn), _) => outputs.push(NamedPath::new("--pgn", pgn)),
        (None, Some(out)) => outputs.push(NamedPath::new(
            "the PGN beside --out",
            &out.with_extension("pgn"),
        )),
        (None, None) => {}
    }
    (inputs, outputs)
}

/// A's and B's limits: a side's own flag (`--tc-a`, `--nodes-b`, ...) overrides the
/// match-wide limit for that side only. One side's own limit with neither a match-wide limit nor
/// the other side's own is refused: the other side's default clock would be a guess.
fn limits(args: &MatchPlayArgs) -> Result<SideLimits> {
    let shared = match (args.nodes, args.depth, args.movetime, &args.tc) {
        (Some(nodes), ..) => Some(Limit::Nodes { nodes }),
        (_, Some(depth), ..) => Some(Limit::Depth { depth }),
        (_, _, Some(movetime_ms), _) => Some(Limit::MoveTime { movetime_ms }),
        (_, _, _, Some(tc)) => Some(Limit::parse_tc(tc)?),
        (_, _, _, None) => None,
    };
    let own = |tc: &Option<String>, nodes: Option<u64>, flag: &str| -> Result<Option<Limit>> {
        Ok(match (tc, nodes) {
            (Some(tc), _) => Some(Limit::parse_tc_flag(&format!("--tc-{flag}"), tc)?),
            (None, Some(nodes)) => Some(Limit::Nodes { nodes }),
            (None, None) => None,
        })
    };
    let own_limits = [
        own(&args.tc_a, args.nodes_a, "a")?,
        own(&args.tc_b, args.nodes_b, "b")?,
    ];
    match (shared, own_limits) {
        (Some(shared), [a, b]) => Ok([a.unwrap_or(shared), b.unwrap_or(shared)]),
        (None, [Some(a), Some(b)]) => Ok([a, b]),
        (None, [None, None]) => Ok([Limit::parse_tc(DEFAULT_TC)?; 2]),
        (None, [Some(_), None]) => bail!(
            "--tc-a/--nodes-a give A a limit of its own: give B's too (--tc-b or --nodes-b) or a match-wide limit (--tc, --nodes, --depth or --movetime) for B"
        ),
        (None, [None, Some(_)]) => bail!(
            "--tc-b/--nodes-b give B a limit of its own: give A's too (--tc-a or --nodes-a) or a match-wide limit (--tc, --nodes, --depth or --movetime) for A"
        ),
    }
}

/// `NAME=VALUE` flags; a line break would end the `setoption` line and smuggle in a command.
fn parse_uci_options(specs: &[String], flag: &str) -> Result<Vec<(String, String)>> {
    specs
        .iter()
        .map(|spec| {
            let (name, value) = spec
                .split_once('=')
                .filter(|(name, _)| !name.trim().is_empty())
                .with_context(|| format!("{flag} {spec}: expected NAME=VALUE"))?;
            if spec.contains('\n') || spec.contains('\r') {
                bail!("{flag}: an option may not contain a line break");
            }
            Ok((name.trim().to_string(), value.trim().to_string()))
        })
        .collect()
}

fn outcome(report: MatchReport) -> Outcome {
    Outcome {
        exit: report.conclusion.exit(),
        report: Report::Match(Box::new(report)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        play: MatchPlayArgs,
    }

    fn limits_of(flags: &[&str]) -> Result<SideLimits> {
        let mut argv = vec!["lab", "A", "B"];
        argv.extend_from_slice(flags);
        limits(&Flags::try_parse_from(argv)?.play)
    }

    #[test]
    fn a_side_flag_overrides_the_match_wide_limit_for_that_side_only() {
        let nodes = |nodes| Limit::Nodes { nodes };
        let tc = |spec| Limit::parse_tc(spec).unwrap();
        assert_eq!(limits_of(&[]).unwrap(), [tc(DEFAULT_TC); 2]);
        assert_eq!(limits_of(&["--nodes", "5000"]).unwrap(), [nodes(5000); 2]);
        assert_eq!(
            limits_of(&["--tc", "8+0.08", "--nodes-b", "5000"]).unwrap(),
            [tc("8+0.08"), nodes(5000)]
        );
        assert_eq!(
            limits_of(&["--nodes", "5000", "--tc-a", "1+0.01"]).unwrap(),
            [tc("1+0.01"), nodes(5000)]
        );
        assert_eq!(
            limits_of(&["--tc-a", "10+0.1", "--tc-b", "20+0.2"]).unwrap(),
            [tc("10+0.1"), tc("20+0.2")]
        );
        assert_eq!(
            limits_of(&["--depth", "6", "--nodes-a", "100"]).unwrap(),
            [nodes(100), Limit::Depth { depth: 6 }]
        );
    }

    fn sides_of(flags: &[&str]) -> Result<[SideSpec; 2]> {
        let mut argv = vec!["lab"];
        argv.extend_from_slice(flags);
        sides(&Flags::try_parse_from(argv)?.play)
    }

    #[test]
    fn a_full_engine_spec_gives_command_name_args_dir_and_options() {
        let dir = std::env::temp_dir();
        let dir_text = dir.display().to_string();
        let spec = format!(
            r#"cmd=./engine name="dev build" args="--threads 1  -q" dir={dir_text} option.Hash=64 option.Threads=1 proto=uci"#
        );
        let [a, b] = sides_of(&["--engine-a", &spec, "HEAD"]).unwrap();
        assert_eq!(a.spec, "exe:./engine");
        assert_eq!(a.setup.name.as_deref(), Some("dev build"));
        assert_eq!(a.setup.args, ["--threads", "1", "-q"]);
        assert_eq!(a.setup.dir.as_deref(), Some(dir.as_path()));
        let option = |name: &str, value: &str| (name.to_string(), value.to_string());
        assert_eq!(a.options, [option("Hash", "64"), option("Threads", "1")]);
        assert_eq!(b.spec, "HEAD");
        assert_eq!(b.setup, SideSetup::default());
        // B's full spec with A positional; a revision by rev=.
        let [a, b] = sides_of(&["exe:/bin/true", "--engine-b", "rev=HEAD~1 name=base"]).unwrap();
        assert_eq!(
            (a.spec.as_str(), b.spec.as_str()),
            ("exe:/bin/true", "HEAD~1")
        );
        assert_eq!(b.setup.name.as_deref(), Some("base"));
        // Both full: no positional.
        let [a, b] =
            sides_of(&["--engine-a", "cmd=/bin/a", "--engine-b", "cmd=exe:/bin/b"]).unwrap();
        assert_eq!(
            (a.spec.as_str(), b.spec.as_str()),
            ("exe:/bin/a", "exe:/bin/b")
        );
    }

    #[test]
    fn bad_engine_specs_are_refused_by_key() {
        for (flags, expected) in [
            (&["--engine-a", "name=x", "HEAD"][..], "no cmd=PATH"),
            (
                &["--engine-a", "cmd=a rev=HEAD", "HEAD"],
                "not cmd= and rev=",
            ),
            (
                &["--engine-a", "cmd=a cmd=b", "HEAD"],
                "`cmd` is given twice",
            ),
            (
                &["--engine-a", "cmd=a option.Hash=1 option.Hash=2", "HEAD"],
                "`option.Hash` is given twice",
            ),
            (
                &["--engine-a", "cmd=a colour=red", "HEAD"],
                "unknown key `colour`",
            ),
            (&["--engine-a", "cmd=a name=\"open", "HEAD"], "never closes"),
            (
                &["--engine-a", "cmd=a stray", "HEAD"],
                "`stray` is not KEY=VALUE",
            ),
            (&["--engine-a", "cmd=a\nquit", "HEAD"], "line break"),
            (&["--engine-a", "cmd=a tc=10+0.1", "HEAD"], "--tc-a"),
            (&["--engine-a", "cmd=a proto=xboard", "HEAD"], "UCI only"),
            (
                &["--engine-a", "cmd=a dir=/no/such/dir", "HEAD"],
                "not a directory",
            ),
            (
                &["--engine-a", "cmd=a option.=1", "HEAD"],
                "names no option",
            ),
            (&["HEAD"], "no engine B"),
            (&[], "no engine A"),
            (&["--engine-a", "cmd=a", "HEAD", "HEAD~1"], "a third engine"),
        ] {
            let error = format!("{:#}", sides_of(flags).unwrap_err());
            assert!(error.contains(expected), "{flags:?}: {error}");
        }
    }

    #[test]
    fn contradictory_or_one_sided_limits_are_refused_by_flag() {
        let one_sided = limits_of(&["--nodes-a", "5000"]).unwrap_err().to_string();
        assert!(one_sided.contains("give B's too"), "{one_sided}");
        let one_sided = limits_of(&["--tc-b", "1+0"]).unwrap_err().to_string();
        assert!(one_sided.contains("give A's too"), "{one_sided}");
        let both = limits_of(&["--tc-a", "1+0", "--nodes-a", "5"])
            .unwrap_err()
            .to_string();
        assert!(
            both.contains("--nodes-a") && both.contains("--tc-a"),
            "{both}"
        );
        let bad = limits_of(&["--nodes", "5", "--tc-b", "0+1"])
            .unwrap_err()
            .to_string();
        assert!(bad.starts_with("--tc-b 0+1:"), "{bad}");
    }
}
