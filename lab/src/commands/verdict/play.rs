//! The fixed-node SPRT: its bounds shifted by the speed (or as given at node odds), and with
//! `--speed-from games` its steps, each judged at the speed of the games so far.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use super::node_budgets::{budget_words, GamesSetup};
use super::speed::Speed;
use super::{Options, Run};
use crate::cli::VerdictCommandArgs;
use crate::exit::Exit;
use crate::games::game::GameRecord;
use crate::games::rules::Limit;
use crate::games::sprt::{Estimate, Sprt, SprtDecision};
use crate::games::summary::{summarize, NpsRatioInGames, MIN_GAMES_FOR_NPS_RATIO};
use crate::games::{self, results, MatchOptions, MatchReport, MaxGames, Pace, Resume};
use crate::verdict::{
    decision_rests_on_contradicted_speed, games_contradict_speed, shifted_sprt, ChargedBy, GamesAt,
    SearchGames, SpeedSource, VerdictNote, GAMES_PER_SPEED_UPDATE,
};

/// What the fixed-node games decided.
pub(super) struct GamesDecided {
    pub(super) search: SearchGames,
    /// The games' Elo (with node odds, the total).
    pub(super) search_elo: Estimate,
    /// The LLR with its lower and upper bound.
    pub(super) llr: (f64, f64, f64),
    pub(super) decision: SprtDecision,
    pub(super) interrupted: bool,
}

/// The fixed-node SPRT: with equal nodes at bounds shifted by the speed's surely gained Elo,
/// at node odds at the bounds as given.
pub(super) fn play(
    run: &Run,
    speed: &mut Speed,
    setup: &GamesSetup,
    tolerance: f64,
    notes: &mut Vec<VerdictNote>,
) -> Result<GamesDecided> {
    let Run {
        lab, args, options, ..
    } = *run;
    let (nodes, b_nodes, sprt) = (setup.a.nodes, setup.b, options.sprt);
    let budget = budget_words(&setup.a, setup.move_ms);
    // Resumed games read their own speed before the first step, not after it.
    let resumed_speed = match (&setup.resumed, options.speed_from) {
        (Some(path), SpeedSource::Games) => read_recorded_speed(run, speed, path)?,
        _ => None,
    };
    match options.games_at {
        GamesAt::EqualNodes => {
            let shifted = games_sprt(options, speed);
            lab.progress().line(&format!(
                "signatures differ: fixed-node SPRT at {} nodes per move ({budget}; \
                 adjudication {}), bounds [{:.2}, {:.2}] after the speed's {:+.2} Elo{}",
                crate::digits::thousands(nodes),
                setup.adjudication.words(),
                shifted.elo0,
                shifted.elo1,
                sprt.elo0 - shifted.elo0,
                match (options.speed_from, resumed_speed) {
                    (
                        SpeedSource::Games,
                        Some(RecordedSpeed {
                            in_games,
                            search_elo,
                            ..
                        }),
                    ) => format!(
                        " (B's NPS over A's in {} resumed games: {}, {}){}",
                        crate::digits::thousands(in_games.games),
                        crate::report::ratio_change_with_ci(&in_games.ratio),
                        crate::report::nps_interval_words(in_games.wider_interval()),
                        so_far_words(search_elo, speed.elo)
                    ),
                    (SpeedSource::Games, None) => format!(
                        " (paired NPS, until the games' own speed is read after \
                         {GAMES_PER_SPEED_UPDATE} games)"
                    ),
                    _ => String::new(),
                }
            ));
        }
        GamesAt::NodeOdds => lab.progress().line(&format!(
            "signatures differ: fixed-node SPRT at node odds, A {} and B {} nodes per move (A: \
             {budget}; B: × {}; adjudication {}), bounds [{:.2}, {:.2}] as given: the games' \
             Elo is the total",
            crate::digits::thousands(nodes),
            crate::digits::thousands(b_nodes),
            match setup.charged(options.games_at, speed) {
                (odds, ChargedBy::ResumedNodeOdds) => format!(
                    "{:.4}, the resumed games' odds: the speed ratio's 95% lower end of the \
                     run that started them",
                    odds.value
                ),
                _ => format!("its speed ratio's 95% lower end, {:.4}", speed.ratio.ci_low),
            },
            setup.adjudication.words(),
            sprt.elo0,
            sprt.elo1
        )),
    }
    let report = if options.speed_from == SpeedSource::Games {
        games_reading_their_speed(run, speed, setup, resumed_speed, notes)?
    } else {
        games::run(
            lab,
            games_options(
                args,
                setup,
                games_sprt(options, speed),
                options.max_games,
                setup.resumed.as_deref(),
            )?,
        )?
    };
    let played_sprt = games_sprt(options, speed);
    let interrupted = report.conclusion.exit() == Exit::Interrupted;
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
    // What B's games were charged: at node odds on a resume, the nodes B played at.
    let (charged, by) = setup.charged(options.games_at, speed);
    if let Some(in_games) = &report.summary.nps_ratio_in_games {
        if games_contradict_speed(&charged, &in_games.ratio, tolerance) {
            notes.push(VerdictNote::GamesContradictSpeed {
                charged,
                by,
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
    let (llr, mut decision) = ((state.llr, state.lower, state.upper), state.result);
    let contradicted = report
        .summary
        .nps_ratio_in_games
        .as_ref()
        .is_some_and(|in_games| {
            decision_rests_on_contradicted_speed(decision, &charged, &in_games.ratio, tolerance)
        });
    if contradicted {
        notes.push(VerdictNote::DecisionWithheld {
            h1: decision == SprtDecision::AcceptH1,
        });
        decision = SprtDecision::Continue;
    }
    if interrupted && decision != SprtDecision::Continue {
        notes.push(VerdictNote::InterruptedPastBound {
            h1: decision == SprtDecision::AcceptH1,
        });
    }
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
    Ok(GamesDecided {
        search: SearchGames {
            nodes_per_move: nodes,
            budget_from: setup.a.from,
            clock_probe: setup.a.clock_probe,
            budget_store: setup.a.store.clone(),
            b_nodes_per_move: b_nodes,
            nps: setup.a.nps,
            typical_move_ms: setup.move_ms,
            shifted_sprt: played_sprt,
            games: Box::new(report),
        },
        search_elo,
        llr,
        decision,
        interrupted,
    })
}

/// The games' SPRT: with equal nodes the bounds less the speed's surely gained Elo, at node
/// odds the bounds as given.
fn games_sprt(options: &Options, speed: &Speed) -> Sprt {
    match (options.games_at, speed.elo) {
        (GamesAt::EqualNodes, Some(elo)) => shifted_sprt(&options.sprt, &elo),
        (GamesAt::EqualNodes, None) => unreachable!("equal nodes need the model, checked above"),
        (GamesAt::NodeOdds, _) => options.sprt,
    }
}

/// The fixed-node games at `setup`'s node budgets, judged by `sprt`, `games` of them, continuing
/// `resume`.
fn games_options(
    args: &VerdictCommandArgs,
    setup: &GamesSetup,
    sprt: Sprt,
    games: MaxGames,
    resume: Option<&Path>,
) -> Result<MatchOptions> {
    let mut options = MatchOptions::self_play(
        [args.a.clone(), args.b.clone()],
        [
            Limit::Nodes {
                nodes: setup.a.nodes,
            },
            Limit::Nodes { nodes: setup.b },
        ],
        games,
        args.concurrency,
        crate::commands::export_paths(&args.output.export),
    )?;
    options.sprt = Some(sprt);
    options.draw = setup.adjudication.draw;
    options.resign = setup.adjudication.resign;
    // A verdict's games take hours: an interrupt still gives the verdict of the games so far.
    options.report_on_interrupt = true;
    if let Some(path) = resume {
        options.resume = Resume::Rebounded(path.to_path_buf());
    }
    Ok(options)
}

/// The speed of the resumed games in `path`, read into `speed`; `None` when too few of them
/// show one (the paired NPS goes on standing in).
fn read_recorded_speed(run: &Run, speed: &mut Speed, path: &Path) -> Result<Option<RecordedSpeed>> {
    let (_, games, _) = results::read(path)?;
    let summary = summarize(&games, None);
    let Some(in_games) = summary.nps_ratio_in_games else {
        return Ok(None);
    };
    speed.read_from_games(run.meter, &in_games)?;
    Ok(Some(RecordedSpeed {
        recorded: summary.games,
        in_games,
        search_elo: summary.elo,
    }))
}

/// The games of `report`'s results file, in their recorded order; none when it cannot be read
/// back (said: the report then draws no LLR rather than one at other bounds).
fn read_back(report: &MatchReport) -> Vec<GameRecord> {
    let Some(path) = &report.results_file else {
        return Vec::new();
    };
    match results::read(Path::new(path)) {
        Ok((_, games, _)) => games,
        Err(error) => {
            crate::progress::warning(&format!(
                "warning: the games of {path} were not read back to draw their LLR: {error:#}"
            ));
            Vec::new()
        }
    }
}

/// The verdict's total so far at a step's end, as its report would split it: `; so far: total
/// Elo …, search Elo … + speed Elo …`; nothing before the games bound an Elo.
fn so_far_words(search: Option<Estimate>, speed: Option<Estimate>) -> String {
    let (Some(search), Some(speed)) = (search, speed) else {
        return String::new();
    };
    let estimate = crate::report::verdict::estimate;
    format!(
        "; so far: total Elo {}, search Elo {} + speed Elo {}",
        estimate(crate::verdict::speed_elo::add(search, speed)),
        estimate(search),
        estimate(speed)
    )
}

/// The speed read from resumed games before the first step.
#[derive(Clone, Copy)]
struct RecordedSpeed {
    /// The games in the results file.
    recorded: u64,
    in_games: NpsRatioInGames,
    /// The resumed games' Elo; `None` before they bound one.
    search_elo: Option<Estimate>,
}

/// `--speed-from games`: the games in steps of [`GAMES_PER_SPEED_UPDATE`], each step judged at
/// bounds shifted by the speed all games so far showed (the paired NPS before the first
/// reading; `resumed_speed`, the resumed games', was read already). A decision, or the budget's
/// end, is judged again with the speed of every game, and the games go on when that undoes
/// the decision. `speed` ends as the games' own.
fn games_reading_their_speed(
    run: &Run,
    speed: &mut Speed,
    setup: &GamesSetup,
    resumed_speed: Option<RecordedSpeed>,
    notes: &mut Vec<VerdictNote>,
) -> Result<MatchReport> {
    let Run {
        lab,
        args,
        options,
        meter,
    } = *run;
    let mut resume = setup.resumed.clone();
    let mut pause_at = resumed_speed.map_or(0, |read| read.recorded) + GAMES_PER_SPEED_UPDATE;
    let mut earlier_steps = Pace::default();
    let sitting = games::Sitting::now();
    loop {
        let mut step = games_options(
            args,
            setup,
            games_sprt(options, speed),
            options.max_games,
            resume.as_deref(),
        )?;
        step.pause_at = Some(pause_at);
        step.earlier_steps = earlier_steps;
        step.sitting = sitting;
        let report = games::run(lab, step)?;
        earlier_steps = Pace {
            games: earlier_steps.games + report.pace.games,
            elapsed: earlier_steps.elapsed + report.pace.elapsed,
        };
        let recorded = report.summary.games;
        // A resumed file may keep its own budget (no `--max-games`).
        let total = report.max_games;
        // Interrupted: judged once more, without a game, at the speed of every game played, so
        // that the speed, the bounds, the LLR and its plot reported are one reading (as a
        // resume would judge them before its first game).
        if report.conclusion.exit() == Exit::Interrupted {
            let mut report = report;
            if let Some(in_games) = report.summary.nps_ratio_in_games {
                speed.read_from_games(meter, &in_games)?;
                let shifted = games_sprt(options, speed);
                let recorded = read_back(&report);
                report.interrupted_judged_again(&recorded, &shifted);
                // The report matters more than the header: a failure is said, not fatal.
                if let Some(path) = &report.results_file {
                    if let Err(error) = results::rewrite_bounds(Path::new(path), shifted) {
                        crate::progress::warning(&format!(
                            "warning: the bounds were not written into {path}: {error:#}"
                        ));
                    }
                }
            }
            return Ok(report);
        }
        let Some(in_games) = &report.summary.nps_ratio_in_games else {
            if recorded < MIN_GAMES_FOR_NPS_RATIO {
                notes.push(VerdictNote::NoSpeedFromGames { games: recorded });
                return Ok(report);
            }
            if options.speed_from_given {
                bail!(
                    "--speed-from games: {recorded} games, and too few of them had both sides \
                     report their nodes and time to show a speed; the games are kept in {}: \
                     continue them with `--resume --speed-from nps`",
                    report
                        .results_file
                        .as_deref()
                        .unwrap_or("the match directory")
                );
            }
            // The default source: the paired NPS goes on standing in, for the rest of them.
            notes.push(VerdictNote::GamesShowNoSpeed { games: recorded });
            let rest = games_options(
                args,
                setup,
                games_sprt(options, speed),
                options.max_games,
                report.results_file.as_deref().map(Path::new),
            )?;
            return games::run(lab, rest);
        };
        let before = speed.elo;
        speed.read_from_games(meter, in_games)?;
        let decided = report
            .summary
            .sprt
            .as_ref()
            .is_some_and(|state| state.result != SprtDecision::Continue);
        let stopped = decided || recorded >= total;
        if stopped && speed.elo == before {
            return Ok(report);
        }
        let shifted = games_sprt(options, speed);
        lab.progress().line(&format!(
            "B's NPS over A's in {} games: {}, {}; bounds now [{:.2}, {:.2}]{}{}",
            crate::digits::thousands(in_games.games),
            crate::report::ratio_change_with_ci(&in_games.ratio),
            crate::report::nps_interval_words(in_games.wider_interval()),
            shifted.elo0,
            shifted.elo1,
            so_far_words(report.summary.elo, speed.elo),
            if stopped {
                ": judging the games again with it"
            } else {
                ""
            }
        ));
        resume = report.results_file.as_deref().map(PathBuf::from);
        // Judged again without a game when stopped; else the next step.
        pause_at = if stopped {
            recorded
        } else {
            recorded + GAMES_PER_SPEED_UPDATE
        };
    }
}
