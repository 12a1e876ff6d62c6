//! `lab match A B` and `lab match merge FILES`: games between two engines and their verdict.
//! The match's flags become a `games::MatchOptions` here, every one checked before anything is
//! built.

use anyhow::{bail, Context, Result};

use crate::cli::{EloModelArg, MatchArgs, MatchCommand, MatchPlayArgs};
use crate::games::book::Book;
use crate::games::results::Shard;
use crate::games::rules::{DrawAdjudication, Limit, ResignAdjudication};
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
    let limit = limit(args)?;
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
        limit,
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

fn limit(args: &MatchPlayArgs) -> Result<Limit> {
    Ok(match (args.nodes, args.depth, args.movetime, &args.tc) {
        (Some(nodes), ..) => Limit::Nodes { nodes },
        (_, Some(depth), ..) => Limit::Depth { depth },
        (_, _, Some(movetime_ms), _) => Limit::MoveTime { movetime_ms },
        (_, _, _, tc) => Limit::parse_tc(tc.as_deref().unwrap_or(DEFAULT_TC))?,
    })
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
        _ => Exit::Undecided,
    };
    Outcome {
        report: Report::Match(Box::new(report)),
        exit,
    }
}
