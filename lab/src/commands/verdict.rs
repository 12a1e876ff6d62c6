//! `lab verdict A B --tc T --sprt elo0=E0,elo1=E1`: signature, paired speed and instructions
//! as `lab compare` measures them; the speed in Elo from the stored model; with the same
//! signature the speed decides alone, otherwise a fixed-node SPRT with shifted bounds, or with
//! `--node-odds` one where B's budget carries its speed.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};

use super::{plan, settings};
use crate::analysis::compare::{compare, Comparison, Criteria, Thresholds};
use crate::analysis::measure::{measure_pair, Subject};
use crate::cli::{
    SpeedFromArg, VerdictCommandArgs, DEFAULT_INSTR_THRESHOLD_PCT, DEFAULT_MAX_GAMES,
    DEFAULT_THRESHOLD_PCT,
};
use crate::games::results::{self, Shard};
use crate::games::rules::Limit;
use crate::games::sprt::{EloModel, Estimate, Sprt, SprtDecision};
use crate::games::{self, GameBudget, MatchOptions, Resume};
use crate::history::store::machine_id;
use crate::lab::Lab;
use crate::machine::Machine;
use crate::outcome::{Exit, Outcome};
use crate::paths::LabPaths;
use crate::report::Report;
use crate::schema::{Kind, LAB_JSON_SCHEMA_VERSION};
use crate::side::Side;
use crate::verdict::speed_elo::{add, speed_elo};
use crate::verdict::{
    games_contradict_speed, instructions_speed_ratio, models, node_budget, node_odds_budget,
    shifted_sprt, speed_decision, speed_measured_finely, speed_ratio, speed_tolerance,
    typical_move_ms, BudgetFrom, Decision, GamesAt, ModelUse, SearchGames, SpeedSource,
    VerdictNote, VerdictReport,
};

pub(crate) fn run(lab: &Lab, args: &VerdictCommandArgs) -> Result<Outcome> {
    let started = Instant::now();
    let sprt = Sprt::parse(&args.sprt, EloModel::Logistic)
        .map_err(|error| anyhow::anyhow!("--sprt {}: {error}", args.sprt))?;
    let limit = Limit::parse_tc(&args.tc)?;
    if args.max_rounds < args.measure.run.rounds {
        bail!(
            "--max-rounds {} is below --rounds {}: the rounds only grow",
            args.max_rounds,
            args.measure.run.rounds
        );
    }
    let max_games = match args.max_games {
        Some(games) if !games.is_multiple_of(2) => {
            bail!("--max-games {games}: a game pair is 2 games, so the budget must be even")
        }
        Some(games) => GameBudget::Given(games),
        None => GameBudget::Default(DEFAULT_MAX_GAMES),
    };
    let speed_from = match args.speed_from {
        SpeedFromArg::Nps => SpeedSource::Nps,
        SpeedFromArg::Instructions => SpeedSource::Instructions,
    };
    if speed_from == SpeedSource::Instructions && args.measure.run.no_instructions {
        bail!(
            "--speed-from instructions counts instructions with callgrind: it cannot go with \
             --no-instructions"
        );
    }
    let games_at = if args.node_odds {
        GamesAt::NodeOdds
    } else {
        GamesAt::EqualNodes
    };
    let mut notes = Vec::new();
    let (mut comparison, paths) = measure(lab, args, args.measure.run.rounds, true)?;
    let model_dir = models::models_dir(&paths);
    let match_dir = paths.root.join("match");
    let machine = machine_id(&Machine::current());
    let a_binary = comparison.a.revision.binary_key.clone();
    let found = models::find(&model_dir, &machine, &a_binary, Some(&limit));
    // Node odds carry the speed in the games; the speed alone (same signature) and the sum of
    // equal-node games and speed both need the model's exchange rate.
    let model_needed = games_at == GamesAt::EqualNodes || !comparison.signature.changed;
    if found.is_none() && model_needed {
        bail!(
            "no speed-Elo model for this machine at {}: fit one with `lab speed-elo {} --tc {}` \
             (stored models: `lab speed-elo --show`){}",
            limit.pgn_time_control(),
            args.a,
            args.tc,
            if comparison.signature.changed {
                "; or play the games at node odds (`--node-odds`), which need none"
            } else {
                ""
            }
        );
    }
    if let Some((model, false)) = &found {
        notes.push(VerdictNote::ModelOfAnotherTree {
            spec: model.engine.spec.clone(),
        });
    }
    let pinned = pinned(args, &comparison);
    let args = &pinned;
    let model_use = found.as_ref().map(|(model, same_binary)| ModelUse {
        elo_per_doubling: Estimate {
            value: model.elo_per_doubling.value,
            ci_low: model.elo_per_doubling.ci_low,
            ci_high: model.elo_per_doubling.ci_high,
        },
        fitted_on: model
            .engine
            .commit
            .clone()
            .unwrap_or_else(|| model.engine.spec.clone()),
        same_binary: *same_binary,
        games: model.games,
        date: model.date.clone(),
        path: models::model_path(&model_dir, model).display().to_string(),
    });
    let elo_per_doubling = found
        .as_ref()
        .map(|(model, _)| model.elo_per_doubling.value);
    let tolerance = speed_tolerance(elo_per_doubling, &sprt);
    let speed_of = |comparison: &Comparison| -> Result<(Estimate, Option<Estimate>)> {
        let ratio = match speed_from {
            SpeedSource::Nps => speed_ratio(comparison).context(
                "the paired speed has no interval (too few rounds with pairs): no verdict from it",
            )?,
            SpeedSource::Instructions => instructions_speed_ratio(comparison).map_err(|why| {
                anyhow::anyhow!(
                    "--speed-from instructions: {why}; no verdict from it (`--speed-from nps` \
                     measures the speed by paired rounds instead)"
                )
            })?,
        };
        let elo = match &found {
            Some((model, _)) => Some(
                speed_elo(&model.elo_per_doubling, ratio)
                    .context("the speed ratio is not a positive finite number")?,
            ),
            None => None,
        };
        Ok((ratio, elo))
    };
    let (mut ratio, mut speed) = speed_of(&comparison)?;
    let mut rounds = args.measure.run.rounds;

    if !comparison.signature.changed {
        let elo_of = |speed: Option<Estimate>| speed.expect("the speed alone needs the model");
        let (mut llr, mut decision) = speed_decision(&elo_of(speed), &sprt);
        // More rounds narrow only a measured NPS interval; an instruction count is exact.
        while decision == SprtDecision::Continue
            && speed_from == SpeedSource::Nps
            && rounds < args.max_rounds
        {
            rounds = (rounds * 2).min(args.max_rounds);
            let elo = elo_of(speed);
            lab.progress().line(&format!(
                "speed Elo {:+.1} (95% CI {:+.1} to {:+.1}) is undecided: measuring again with {rounds} rounds",
                elo.value, elo.ci_low, elo.ci_high
            ));
            let instructions = comparison.instructions.clone();
            let (again, _) = measure(lab, args, rounds, false)?;
            comparison = again;
            comparison.instructions = instructions;
            (ratio, speed) = speed_of(&comparison)?;
            (llr, decision) = speed_decision(&elo_of(speed), &sprt);
        }
        let zero = Estimate {
            value: 0.0,
            ci_low: 0.0,
            ci_high: 0.0,
        };
        return Ok(outcome(Findings {
            limit,
            sprt,
            comparison,
            games_at,
            model: model_use,
            speed_from,
            speed_ratio: ratio,
            speed_elo: speed,
            search_elo: Some(zero),
            llr: (llr, sprt.lower(), sprt.upper()),
            rounds,
            search: None,
            decision,
            interrupted: false,
            started,
            notes,
        }));
    }

    while speed_from == SpeedSource::Nps
        && !speed_measured_finely(&ratio, tolerance)
        && rounds < args.max_rounds
    {
        rounds = (rounds * 2).min(args.max_rounds);
        lab.progress().line(&format!(
            "speed ratio {:.4} (95% CI {:.4} to {:.4}) is too coarse to credit at bounds {} apart: \
             measuring again with {rounds} rounds",
            ratio.value,
            ratio.ci_low,
            ratio.ci_high,
            sprt.elo1 - sprt.elo0
        ));
        let instructions = comparison.instructions.clone();
        let (again, _) = measure(lab, args, rounds, false)?;
        comparison = again;
        comparison.instructions = instructions;
        (ratio, speed) = speed_of(&comparison)?;
    }
    if !speed_measured_finely(&ratio, tolerance) {
        notes.push(VerdictNote::SpeedTooCoarse { ratio, rounds });
    }

    // The fastest of A's runs: load only ever slows a run, so the fastest is the nearest to
    // the machine's own speed, and a busy machine does not shrink the games' budget.
    let nps = comparison.a.nps.max;
    let move_ms = typical_move_ms(&limit).expect("a clock has a typical move time");
    let (measured_nodes, budget_from) = match args.nodes {
        Some(nodes) => (nodes, BudgetFrom::Given),
        None => (
            node_budget(nps, &limit)
                .with_context(|| format!("A's measured NPS {nps} gives no node budget"))?,
            BudgetFrom::Speed,
        ),
    };
    let binaries = [
        comparison.a.revision.binary_key.as_str(),
        comparison.b.revision.binary_key.as_str(),
    ];
    let measured_b_nodes = match games_at {
        GamesAt::EqualNodes => measured_nodes,
        GamesAt::NodeOdds => node_odds_budget(measured_nodes, &ratio).with_context(|| {
            format!(
                "the speed ratio's lower end {} gives B no node budget",
                ratio.ci_low
            )
        })?,
    };
    let earlier = if args.resume {
        earlier_games(&match_dir, binaries, games_at, args.nodes)
    } else {
        None
    };
    let ([nodes, b_nodes], budget_from) = match &earlier {
        Some((path, [a_nodes, b_nodes])) => {
            let this_run = match budget_from {
                BudgetFrom::Given => "--nodes",
                _ => "this run's speed",
            };
            lab.progress().line(&format!(
                "resuming the fixed-node games of {} at their budget of {a_nodes} (A) and \
                 {b_nodes} (B) nodes per move ({this_run} gives {measured_nodes} and \
                 {measured_b_nodes})",
                path.display()
            ));
            ([*a_nodes, *b_nodes], BudgetFrom::Resumed)
        }
        None => ([measured_nodes, measured_b_nodes], budget_from),
    };
    let budget = match budget_from {
        BudgetFrom::Speed => format!("A's {nps:.0} NPS × {move_ms} ms"),
        BudgetFrom::Given => "--nodes".to_string(),
        BudgetFrom::Resumed => "the resumed games'".to_string(),
    };
    let played_sprt = match (games_at, speed) {
        (GamesAt::EqualNodes, Some(speed)) => {
            let shifted = shifted_sprt(&sprt, &speed);
            lab.progress().line(&format!(
                "signatures differ: fixed-node SPRT at {nodes} nodes per move ({budget}), bounds \
                 [{:.2}, {:.2}] after the speed's {:+.2} Elo",
                shifted.elo0, shifted.elo1, speed.ci_low
            ));
            shifted
        }
        (GamesAt::EqualNodes, None) => unreachable!("equal nodes need the model, checked above"),
        (GamesAt::NodeOdds, _) => {
            lab.progress().line(&format!(
                "signatures differ: fixed-node SPRT at node odds, A {nodes} and B {b_nodes} nodes \
                 per move (A: {budget}; B: × its speed ratio's 95% lower end, {:.4}), bounds \
                 [{:.2}, {:.2}] as given: the games' Elo is the total",
                ratio.ci_low, sprt.elo0, sprt.elo1
            ));
            sprt
        }
    };
    let mut options = MatchOptions::self_play(
        [args.a.clone(), args.b.clone()],
        [Limit::Nodes { nodes }, Limit::Nodes { nodes: b_nodes }],
        max_games,
        args.concurrency,
        super::export_paths(&args.output.export),
    )?;
    options.sprt = Some(played_sprt);
    // A verdict's games take hours: an interrupt still gives the verdict of the games so far.
    options.report_on_interrupt = true;
    if let Some((path, _)) = earlier {
        options.resume = Resume::Rebounded(path);
    }
    let report = games::run(lab, options)?;
    let interrupted = report.exit_code == crate::process::INTERRUPTED_EXIT;
    let alike = report.summary.alike;
    if alike.in_every_pair() {
        bail!(
            "the fixed-node games were the same moves in all {} pairs checked, though the benches' \
             signatures differ: A and B do not play as they bench (a default or an option the \
             bench sets and UCI does not?), so these games cannot weigh the search; no verdict. \
             The games are kept in {}",
            alike.checked,
            report.results_file.as_deref().unwrap_or("the match directory")
        );
    }
    if let Some(in_games) = &report.summary.nps_ratio_in_games {
        if games_contradict_speed(&ratio, &in_games.ratio, tolerance) {
            notes.push(VerdictNote::GamesContradictSpeed {
                charged: ratio,
                source: speed_from,
                in_games: in_games.ratio,
                games: in_games.games,
            });
        }
    }
    let state = report
        .summary
        .sprt
        .as_ref()
        .context("the fixed-node games report no SPRT state")?;
    let (llr, decision) = ((state.llr, state.lower, state.upper), state.result);
    let search_elo = report.summary.elo.unwrap_or_else(|| {
        notes.push(VerdictNote::SearchEloUnbounded {
            games: report.summary.games,
        });
        let sign = report.summary.score.map_or(0.0, |s| (s - 0.5).signum());
        Estimate {
            value: sign * f64::INFINITY,
            ci_low: f64::NEG_INFINITY,
            ci_high: f64::INFINITY,
        }
    });
    Ok(outcome(Findings {
        limit,
        sprt,
        comparison,
        games_at,
        model: model_use,
        speed_from,
        speed_ratio: ratio,
        speed_elo: speed,
        search_elo: Some(search_elo),
        llr,
        rounds,
        search: Some(SearchGames {
            nodes_per_move: nodes,
            budget_from,
            b_nodes_per_move: b_nodes,
            nps,
            typical_move_ms: move_ms,
            shifted_sprt: played_sprt,
            games: Box::new(report),
        }),
        decision,
        interrupted,
        started,
        notes,
    }))
}

/// What a verdict found, before it becomes the report.
struct Findings {
    limit: Limit,
    sprt: Sprt,
    comparison: Comparison,
    games_at: GamesAt,
    model: Option<ModelUse>,
    speed_from: SpeedSource,
    speed_ratio: Estimate,
    speed_elo: Option<Estimate>,
    /// The games' Elo (with node odds, the total), or 0 ± 0 when no game was played.
    search_elo: Option<Estimate>,
    /// The LLR with its lower and upper bound.
    llr: (f64, f64, f64),
    rounds: u32,
    search: Option<SearchGames>,
    decision: SprtDecision,
    /// The games were interrupted before the SPRT decided.
    interrupted: bool,
    started: Instant,
    notes: Vec<VerdictNote>,
}

/// The newest results file of an earlier verdict between these binaries: fixed-node games
/// with an SPRT, at one budget for both sides (equal nodes) or at two (node odds). Its budgets
/// are kept, so that its games pool with the new ones; with `given` (`--nodes`) only games at
/// that budget for A.
fn earlier_games(
    match_dir: &Path,
    binaries: [&str; 2],
    games_at: GamesAt,
    given: Option<u64>,
) -> Option<(PathBuf, [u64; 2])> {
    let (newest, _) = results::newest(match_dir, |header| {
        let settings = &header.settings;
        let [Limit::Nodes { nodes }, Limit::Nodes { nodes: b_nodes }] = settings.limits else {
            return None;
        };
        let same_engines =
            settings.engines[0].binary == binaries[0] && settings.engines[1].binary == binaries[1];
        let same_kind = match games_at {
            GamesAt::EqualNodes => nodes == b_nodes,
            GamesAt::NodeOdds => nodes != b_nodes,
        };
        let same_budget = given.is_none_or(|given| given == nodes);
        (same_kind
            && same_budget
            && same_engines
            && settings.sprt.is_some()
            && header.shard == Shard::WHOLE)
            .then_some([nodes, b_nodes])
    });
    newest
}

/// `args` with A and B as the first measurement resolved them (their commits): a branch that
/// moves during a long verdict moves neither its later rounds nor its games. `WORKTREE` has no
/// commit and stays as named.
fn pinned(args: &VerdictCommandArgs, comparison: &Comparison) -> VerdictCommandArgs {
    let mut pinned = args.clone();
    if let Some(commit) = &comparison.a.revision.commit {
        pinned.a.clone_from(commit);
    }
    if let Some(commit) = &comparison.b.revision.commit {
        pinned.b.clone_from(commit);
    }
    pinned
}

/// A and B measured as `lab compare` measures them, `rounds` paired rounds; instructions only
/// when asked (the re-measurements of an undecided speed keep the first count). Also the
/// lab's directories.
fn measure(
    lab: &Lab,
    args: &VerdictCommandArgs,
    rounds: u32,
    instructions: bool,
) -> Result<(Comparison, LabPaths)> {
    let session = lab.lock()?;
    let (repo, paths, progress) = (session.repo(), session.paths(), session.progress());
    let a = crate::engine::revision::resolve(repo, &args.a, paths)?;
    let b = crate::engine::revision::resolve(repo, &args.b, paths)?;
    let mut measure = args.measure.clone();
    measure.run.rounds = rounds;
    measure.run.no_instructions |= !instructions;
    let (plan, positions) = plan(&session, &measure)?;
    let a_binary = session.build(&a, &measure.run.features)?;
    let b_binary = session.build(&b, &measure.run.features)?;
    let (a_measured, b_measured) = measure_pair(
        &Subject::new(Side::A, "A", &a, &a_binary),
        &Subject::new(Side::B, "B", &b, &b_binary),
        &plan,
        paths,
        progress,
    )?;
    let thresholds = Thresholds {
        threshold_pct: DEFAULT_THRESHOLD_PCT,
        instr_threshold_pct: DEFAULT_INSTR_THRESHOLD_PCT,
    };
    let mut comparison = compare(
        Kind::Compare,
        settings(&measure, thresholds, positions),
        &a_measured,
        &b_measured,
        Criteria::local(false),
    );
    comparison.measured = Some(crate::machine::Provenance::here_now());
    Ok((comparison, paths.clone()))
}

fn outcome(verdict: Findings) -> Outcome {
    let decision = match Decision::from_sprt(verdict.decision) {
        Decision::Undecided if verdict.interrupted => Decision::Interrupted,
        decision => decision,
    };
    let exit = match decision {
        Decision::H1 => Exit::Clean,
        Decision::H0 => Exit::Regression,
        Decision::Undecided => Exit::Undecided,
        Decision::Interrupted => Exit::Interrupted,
    };
    let games = verdict
        .search
        .as_ref()
        .map_or(0, |search| search.games.summary.games);
    let games_to_decision = verdict
        .search
        .as_ref()
        .and_then(|search| search.games.summary.sprt.as_ref())
        .and_then(|sprt| sprt.games_to_decision);
    let (llr, llr_lower, llr_upper) = verdict.llr;
    let games_played = verdict.search.is_some();
    let (search_elo, total_elo) = match (verdict.games_at, verdict.search_elo, verdict.speed_elo) {
        (GamesAt::NodeOdds, Some(games), _) if games_played => (None, games),
        (_, Some(search), Some(speed)) => (Some(search), add(search, speed)),
        _ => unreachable!("the search's Elo is known, and without node odds so is the speed's"),
    };
    let report = VerdictReport {
        schema_version: LAB_JSON_SCHEMA_VERSION,
        kind: Kind::Verdict,
        limit: verdict.limit,
        tc: verdict.limit.pgn_time_control(),
        sprt: verdict.sprt,
        comparison: Box::new(verdict.comparison),
        games_at: verdict.games_at,
        model: verdict.model,
        speed_from: verdict.speed_from,
        speed_ratio: verdict.speed_ratio,
        speed_elo: verdict.speed_elo,
        search_elo,
        total_elo,
        llr,
        llr_lower,
        llr_upper,
        games,
        games_to_decision,
        rounds: verdict.rounds,
        search: verdict.search,
        decision,
        wall_time_s: verdict.started.elapsed().as_secs_f64(),
        notes: verdict.notes,
    };
    Outcome {
        report: Report::Verdict(Box::new(report)),
        exit,
    }
}
