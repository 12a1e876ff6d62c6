//! `lab verdict A B --tc T --sprt elo0=E0,elo1=E1`: signature, paired speed and instructions
//! as `lab compare` measures them; the speed in Elo from the stored model; with the same
//! signature the speed decides alone, otherwise a fixed-node SPRT with shifted bounds.

use std::time::Instant;

use anyhow::{bail, Context, Result};

use super::{plan, settings};
use crate::analysis::compare::{compare, Comparison, Criteria, Thresholds};
use crate::analysis::measure::{measure_pair, Side, Subject};
use crate::cli::{VerdictCommandArgs, DEFAULT_INSTR_THRESHOLD_PCT, DEFAULT_THRESHOLD_PCT};
use crate::games::book::Book;
use crate::games::results::Shard;
use crate::games::rules::Limit;
use crate::games::sprt::{EloModel, Estimate, Sprt, SprtDecision};
use crate::games::{self, MatchOptions};
use crate::history::store::machine_id;
use crate::lab::Lab;
use crate::machine::Machine;
use crate::outcome::{Exit, Outcome};
use crate::report::Report;
use crate::schema::{Kind, LAB_JSON_SCHEMA_VERSION};
use crate::verdict::speed_elo::{add, speed_elo};
use crate::verdict::{
    models, node_budget, shifted_sprt, speed_decision, speed_ratio, typical_move_ms, Decision,
    ModelUse, SearchGames, VerdictReport,
};

/// The seed of the fixed-node games' opening order: fixed, so a verdict replays.
const GAMES_SEED: u64 = 1;

pub fn run(lab: &Lab, args: &VerdictCommandArgs) -> Result<Outcome> {
    let started = Instant::now();
    let sprt = Sprt::parse(&args.sprt, EloModel::Logistic)
        .map_err(|error| anyhow::anyhow!("--sprt {}: {error}", args.sprt))?;
    let limit = Limit::parse_tc(&args.tc)?;
    if args.max_rounds < args.measure.rounds {
        bail!(
            "--max-rounds {} is below --rounds {}: the rounds only grow",
            args.max_rounds,
            args.measure.rounds
        );
    }
    if !args.max_games.is_multiple_of(2) {
        bail!(
            "--max-games {}: a game pair is 2 games, so the budget must be even",
            args.max_games
        );
    }
    let mut notes = Vec::new();
    let (mut comparison, model_dir) = measure(lab, args, args.measure.rounds, true)?;
    let machine = machine_id(&Machine::current());
    let a_binary = comparison.a.revision.binary_key.clone();
    let (model, same_binary) = models::find(&model_dir, &machine, &a_binary, Some(&limit))
        .with_context(|| {
            format!(
                "no speed-Elo model for this machine at {}: fit one with `lab speed-elo {} --tc {}` \
                 (stored models: `lab speed-elo --show`)",
                limit.pgn_time_control(),
                args.a,
                args.tc
            )
        })?;
    if !same_binary {
        notes.push(format!(
            "the speed-Elo model was fitted on another engine tree ({}), not on A's binary",
            model.engine.spec
        ));
    }
    let model_use = ModelUse {
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
        same_binary,
        games: model.games,
        date: model.date.clone(),
        path: models::model_path(&model_dir, &model).display().to_string(),
    };
    let speed_of = |comparison: &Comparison| -> Result<(Estimate, Estimate)> {
        let ratio = speed_ratio(comparison).context(
            "the paired speed has no interval (too few rounds with pairs): no verdict from it",
        )?;
        let elo = speed_elo(&model.elo_per_doubling, ratio)
            .context("the speed ratio is not a positive finite number")?;
        Ok((ratio, elo))
    };
    let (mut ratio, mut speed) = speed_of(&comparison)?;
    let mut rounds = args.measure.rounds;

    if !comparison.signature.changed {
        let (mut llr, mut decision) = speed_decision(&speed, &sprt);
        while decision == SprtDecision::Continue && rounds < args.max_rounds {
            rounds = (rounds * 2).min(args.max_rounds);
            lab.progress().line(&format!(
                "speed Elo {:+.1} (95% CI {:+.1} to {:+.1}) is undecided: measuring again with {rounds} rounds",
                speed.value, speed.ci_low, speed.ci_high
            ));
            let instructions = comparison.instructions.clone();
            let (again, _) = measure(lab, args, rounds, false)?;
            comparison = again;
            comparison.instructions = instructions;
            (ratio, speed) = speed_of(&comparison)?;
            (llr, decision) = speed_decision(&speed, &sprt);
        }
        let search_elo = Estimate {
            value: 0.0,
            ci_low: 0.0,
            ci_high: 0.0,
        };
        return Ok(outcome(VerdictReport {
            schema_version: LAB_JSON_SCHEMA_VERSION,
            kind: Kind::Verdict,
            limit,
            tc: limit.pgn_time_control(),
            sprt,
            comparison: Box::new(comparison),
            model: model_use,
            speed_ratio: ratio,
            speed_elo: speed,
            search_elo,
            total_elo: speed,
            llr,
            llr_lower: sprt.lower(),
            llr_upper: sprt.upper(),
            games: 0,
            rounds,
            search: None,
            decision: Decision::from_sprt(decision),
            wall_time_s: started.elapsed().as_secs_f64(),
            notes,
        }));
    }

    let nps = comparison.a.nps.median;
    let move_ms = typical_move_ms(&limit).expect("a clock has a typical move time");
    let nodes = node_budget(nps, &limit)
        .with_context(|| format!("A's measured NPS {nps} gives no node budget"))?;
    let shifted = shifted_sprt(&sprt, &speed);
    lab.progress().line(&format!(
        "signatures differ: fixed-node SPRT at {nodes} nodes per move (A's {nps:.0} NPS × {move_ms} ms), \
         bounds [{:.2}, {:.2}] after the speed's {:+.2} Elo",
        shifted.elo0, shifted.elo1, speed.ci_low
    ));
    let report = games::run(
        lab,
        MatchOptions {
            engines: [args.a.clone(), args.b.clone()],
            uci_options: [Vec::new(), Vec::new()],
            hash: None,
            limits: [Limit::Nodes { nodes }; 2],
            timemargin_ms: 0,
            draw: None,
            resign: None,
            sprt: Some(shifted),
            elo_model: EloModel::Logistic,
            games: args.max_games,
            shard: Shard::WHOLE,
            book: Book::load(None, None)?,
            seed: GAMES_SEED,
            concurrency: args.concurrency,
            out: None,
            pgn: None,
            resume: false,
            exports: super::export_paths(&args.output.export),
            report_on_interrupt: false,
        },
    )?;
    let state = report
        .summary
        .sprt
        .as_ref()
        .context("the fixed-node games report no SPRT state")?;
    let (llr, llr_lower, llr_upper, decision) = (state.llr, state.lower, state.upper, state.result);
    let search_elo = report.summary.elo.unwrap_or_else(|| {
        notes.push(format!(
            "the search's Elo is unbounded after {} games (every pair won or lost)",
            report.summary.games
        ));
        let sign = report.summary.score.map_or(0.0, |s| (s - 0.5).signum());
        Estimate {
            value: sign * f64::INFINITY,
            ci_low: f64::NEG_INFINITY,
            ci_high: f64::INFINITY,
        }
    });
    let games = report.summary.games;
    Ok(outcome(VerdictReport {
        schema_version: LAB_JSON_SCHEMA_VERSION,
        kind: Kind::Verdict,
        limit,
        tc: limit.pgn_time_control(),
        sprt,
        comparison: Box::new(comparison),
        model: model_use,
        speed_ratio: ratio,
        speed_elo: speed,
        search_elo,
        total_elo: add(search_elo, speed),
        llr,
        llr_lower,
        llr_upper,
        games,
        rounds,
        search: Some(SearchGames {
            nodes_per_move: nodes,
            nps,
            typical_move_ms: move_ms,
            shifted_sprt: shifted,
            games: Box::new(report),
        }),
        decision: Decision::from_sprt(decision),
        wall_time_s: started.elapsed().as_secs_f64(),
        notes,
    }))
}

/// A and B measured as `lab compare` measures them, `rounds` paired rounds; instructions only
/// when asked (the re-measurements of an undecided speed keep the first count). Also the
/// directory of the stored speed-Elo models.
fn measure(
    lab: &Lab,
    args: &VerdictCommandArgs,
    rounds: u32,
    instructions: bool,
) -> Result<(Comparison, std::path::PathBuf)> {
    let session = lab.lock()?;
    let (repo, paths, progress) = (session.repo(), session.paths(), session.progress());
    let a = crate::engine::revision::resolve(repo, &args.a, paths)?;
    let b = crate::engine::revision::resolve(repo, &args.b, paths)?;
    let mut measure = args.measure.clone();
    measure.rounds = rounds;
    measure.no_instructions |= !instructions;
    let (plan, positions) = plan(&session, &measure)?;
    let a_binary = session.build(&a, &measure.features)?;
    let b_binary = session.build(&b, &measure.features)?;
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
    comparison.measured = Some(crate::analysis::provenance::Provenance::here_now());
    Ok((comparison, models::models_dir(paths)))
}

fn outcome(report: VerdictReport) -> Outcome {
    let exit = match report.decision {
        Decision::H1 => Exit::Clean,
        Decision::H0 => Exit::Regression,
        Decision::Undecided => Exit::Undecided,
    };
    Outcome {
        report: Report::Verdict(Box::new(report)),
        exit,
    }
}
