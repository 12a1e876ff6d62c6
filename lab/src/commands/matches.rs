//! `lab match A B` and `lab match merge FILES`: games between two engines and their verdict.
//! The match's flags become a `games::MatchOptions` here, every one checked before anything is
//! built.

use anyhow::{bail, Context, Result};

use crate::cli::{EloModelArg, MatchArgs, MatchCommand, MatchPlayArgs};
use crate::games::book::Book;
use crate::games::results::Shard;
use crate::games::rules::{DrawAdjudication, Limit, ResignAdjudication, SideLimits};
use crate::games::sprt::{EloModel, Sprt};
use crate::games::{self, MatchOptions, MatchReport};
use crate::lab::Lab;
use crate::outcome::{Exit, Outcome};
use crate::paths::NamedPath;
use crate::report::Report;

/// The default limit: fishtest's short time control.
const DEFAULT_TC: &str = "10+0.1";
const DEFAULT_GAMES: u64 = 100;
const DEFAULT_SPRT_GAMES: u64 = 40_000;

pub fn run(lab: &Lab, args: &MatchArgs) -> Result<Outcome> {
    match &args.action {
        Some(MatchCommand::Merge { files, pgn, .. }) => {
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
    let games = args.games.unwrap_or(if sprt.is_some() {
        DEFAULT_SPRT_GAMES
    } else {
        DEFAULT_GAMES
    });
    if !games.is_multiple_of(2) {
        bail!("--games {games}: a game pair is 2 games, so the budget must be even");
    }
    let shard = args
        .shard
        .as_deref()
        .map(Shard::parse)
        .transpose()?
        .unwrap_or(Shard::WHOLE);
    let book = Book::load(args.book.as_deref(), args.book_plies)?;
    let engines = [
        args.a.clone().unwrap_or_default(),
        args.b.clone().unwrap_or_default(),
    ];
    let uci_options = [
        parse_uci_options(&args.option_a, "--option-a")?,
        parse_uci_options(&args.option_b, "--option-b")?,
    ];
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
        resume: args.resume,
        exports: super::export_paths(&args.output.export),
        report_on_interrupt: true,
    })
}

/// The files a match reads (its book; the results file it resumes) and writes (the results
/// file, the PGN) as its flags name them.
pub fn files(args: &MatchPlayArgs) -> (Vec<NamedPath>, Vec<NamedPath>) {
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
    let exit = match report.exit_code {
        0 => Exit::Clean,
        1 => Exit::Regression,
        crate::process::INTERRUPTED_EXIT => Exit::Interrupted,
        _ => Exit::Undecided,
    };
    Outcome {
        report: Report::Match(Box::new(report)),
        exit,
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
