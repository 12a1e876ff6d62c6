//! `lab verdict A B --tc T --sprt elo0=E0,elo1=E1`: signature, paired speed and instructions
//! as `lab compare` measures them; the speed in Elo from the stored model; with the same
//! signature the speed decides alone, otherwise a fixed-node SPRT with shifted bounds, or with
//! `--node-odds` one where B's budget carries its speed.

mod node_budgets;
mod play;
mod speed;

use std::time::Instant;

use anyhow::{bail, Result};

use self::node_budgets::{games_setup, resumed_games};
use self::play::play;
use self::speed::{speed_alone, speed_for_games, Speed, SpeedMeter};
use super::{plan, settings};
use crate::analysis::compare::{measure_and_compare, Comparison, Thresholds};
use crate::analysis::measure::Subject;
use crate::cli::{SpeedFromArg, VerdictCommandArgs, DEFAULT_MAX_GAMES};
use crate::exit::Exit;
use crate::games::rules::{AdjudicationRules, Limit, RulesKept};
use crate::games::sprt::{EloModel, Estimate, Sprt, SprtDecision};
use crate::games::summary::NpsRatioInGames;
use crate::games::MaxGames;
use crate::history::store::machine_id;
use crate::lab::Lab;
use crate::machine::Machine;
use crate::outcome::Outcome;
use crate::paths::LabPaths;
use crate::report::Report;
use crate::schema::{Kind, LAB_JSON_SCHEMA_VERSION};
use crate::side::Side;
use crate::verdict::models::SpeedEloModel;
use crate::verdict::speed_elo::add;
use crate::verdict::{
    models, speed_tolerance, Decision, GamesAt, ModelUse, SearchGames, SpeedSource, VerdictNote,
    VerdictReport,
};

pub(crate) fn run(lab: &Lab, args: &VerdictCommandArgs) -> Result<Outcome> {
    let started = Instant::now();
    let options = Options::checked(args)?;
    let mut notes = Vec::new();
    let (comparison, paths) = measure(lab, args, args.measure.run.rounds, true)?;
    let found = model(args, &options, &comparison, &paths, &mut notes)?;
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
        path: models::model_path(&models::models_dir(&paths), model)
            .display()
            .to_string(),
    });
    let meter = SpeedMeter {
        from: options.speed_from,
        model: found.as_ref().map(|(model, _)| &model.elo_per_doubling),
    };
    let speed = Speed::of(comparison, &meter, args.measure.run.rounds)?;
    let run = Run {
        lab,
        args,
        options: &options,
        meter: &meter,
    };
    let settled = |speed: Speed, notes| Settled {
        limit: options.limit,
        sprt: options.sprt,
        comparison: speed.comparison,
        games_at: options.games_at,
        model: model_use.clone(),
        speed_from: speed.from,
        speed_ratio: speed.ratio,
        speed_in_games: speed.in_games,
        speed_elo: speed.elo,
        search_elo: None,
        llr: (0.0, options.sprt.lower(), options.sprt.upper()),
        rounds: speed.rounds,
        search: None,
        decision: SprtDecision::Continue,
        interrupted: false,
        started,
        notes,
    };

    if !speed.comparison.signature.changed {
        if options.speed_from == SpeedSource::Games && options.speed_from_given {
            notes.push(VerdictNote::NoSpeedFromGames { games: 0 });
        }
        let (speed, llr, decision) = speed_alone(&run, speed)?;
        let zero = Estimate {
            value: 0.0,
            ci_low: 0.0,
            ci_high: 0.0,
        };
        return Ok(outcome(Settled {
            search_elo: Some(zero),
            llr: (llr, options.sprt.lower(), options.sprt.upper()),
            decision,
            ..settled(speed, notes)
        }));
    }

    let tolerance = speed_tolerance(meter.model.map(|model| model.value), &options.sprt);
    let earlier = resumed_games(&run, &speed.comparison, &paths);
    // Resumed games at node odds keep B's nodes: this run's speed is not charged, so it is not
    // measured again to be charged finely.
    let mut speed = if options.games_at == GamesAt::NodeOdds && earlier.is_some() {
        speed
    } else {
        speed_for_games(&run, speed, tolerance, &mut notes)?
    };
    let setup = games_setup(&run, &speed, &paths, earlier)?;
    let played = play(&run, &mut speed, &setup, tolerance, &mut notes)?;
    Ok(outcome(Settled {
        search: Some(played.search),
        search_elo: Some(played.search_elo),
        llr: played.llr,
        decision: played.decision,
        interrupted: played.interrupted,
        ..settled(speed, notes)
    }))
}

/// The flags, checked before anything is measured.
struct Options {
    sprt: Sprt,
    limit: Limit,
    max_games: MaxGames,
    speed_from: SpeedSource,
    /// `--speed-from` was given: a source that cannot be read is then said (or refused), not
    /// passed over.
    speed_from_given: bool,
    games_at: GamesAt,
    adjudication: AdjudicationFlags,
}

/// The games' adjudication as the flags leave it: each rule given (perhaps `none`), or left to
/// the resumed games, or for fresh games to `lab match`'s default.
struct AdjudicationFlags {
    /// The rules of fresh games: as given, else the defaults.
    fresh: AdjudicationRules,
    /// The rules not given, which a resume takes from the games it continues.
    kept: RulesKept,
}

impl AdjudicationFlags {
    fn checked(args: &VerdictCommandArgs) -> Result<AdjudicationFlags> {
        Ok(AdjudicationFlags {
            fresh: super::adjudication_rules(args.draw_adj.as_deref(), args.resign_adj.as_deref())?,
            kept: RulesKept {
                draw: args.draw_adj.is_none(),
                resign: args.resign_adj.is_none(),
            },
        })
    }

    /// Whether games adjudicated by `recorded` may be resumed: each rule given must be theirs.
    fn admits(&self, recorded: &AdjudicationRules) -> bool {
        self.kept.admits(&self.fresh, recorded)
    }
}

impl Options {
    fn checked(args: &VerdictCommandArgs) -> Result<Options> {
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
        let max_games = super::max_games("--max-games", args.max_games, DEFAULT_MAX_GAMES)?;
        // The games' own speed is the finest; node odds need one before the games.
        let speed_from = match args.speed_from {
            Some(SpeedFromArg::Nps) => SpeedSource::Nps,
            Some(SpeedFromArg::Instructions) => SpeedSource::Instructions,
            Some(SpeedFromArg::Games) => SpeedSource::Games,
            None if args.node_odds => SpeedSource::Nps,
            None => SpeedSource::Games,
        };
        if speed_from == SpeedSource::Games && args.node_odds {
            bail!(
                "--speed-from games reads the speed from equal-node games, but node odds need it \
                 before the games, for B's budget: use --speed-from nps or instructions with \
                 --node-odds"
            );
        }
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
        Ok(Options {
            sprt,
            limit,
            max_games,
            speed_from,
            speed_from_given: args.speed_from.is_some(),
            games_at,
            adjudication: AdjudicationFlags::checked(args)?,
        })
    }
}

/// The speed-Elo model of this machine at the verdict's clock, and whether it was fitted on
/// A's binary; an error when the verdict needs one and there is none.
fn model(
    args: &VerdictCommandArgs,
    options: &Options,
    comparison: &Comparison,
    paths: &LabPaths,
    notes: &mut Vec<VerdictNote>,
) -> Result<Option<(SpeedEloModel, bool)>> {
    let machine = machine_id(&Machine::current());
    let a_binary = &comparison.a.revision.binary_key;
    let found = models::find(
        &models::models_dir(paths),
        &machine,
        a_binary,
        Some(&options.limit),
    );
    // Node odds carry the speed in the games; the speed alone (same signature) and the sum of
    // equal-node games and speed both need the model's exchange rate.
    let needed = options.games_at == GamesAt::EqualNodes || !comparison.signature.changed;
    if found.is_none() && needed {
        bail!(
            "no speed-Elo model for this machine at {}: fit one with `lab speed-elo {} --tc {}` \
             (stored models: `lab speed-elo --show`){}",
            options.limit.pgn_time_control(),
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
    Ok(found)
}

/// What every step of one verdict reads: the lab, the flags (A and B pinned to the commits the
/// first measurement resolved), their checked options and the speed meter.
#[derive(Clone, Copy)]
struct Run<'a> {
    lab: &'a Lab,
    args: &'a VerdictCommandArgs,
    options: &'a Options,
    meter: &'a SpeedMeter<'a>,
}

/// What a verdict settled, before it becomes the report: its figures, decision and notes.
struct Settled {
    limit: Limit,
    sprt: Sprt,
    comparison: Comparison,
    games_at: GamesAt,
    model: Option<ModelUse>,
    speed_from: SpeedSource,
    speed_ratio: Estimate,
    speed_in_games: Option<NpsRatioInGames>,
    speed_elo: Option<Estimate>,
    /// The games' Elo (with node odds, the total), or 0 ± 0 when no game was played.
    search_elo: Option<Estimate>,
    /// The LLR with its lower and upper bound.
    llr: (f64, f64, f64),
    rounds: u32,
    search: Option<SearchGames>,
    decision: SprtDecision,
    /// SIGINT or SIGTERM ended the games (the decision is then `Interrupted`, whatever the LLR).
    interrupted: bool,
    started: Instant,
    notes: Vec<VerdictNote>,
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
    let (mut comparison, _, _) = measure_and_compare(
        Kind::Compare,
        settings(&measure, Thresholds::DEFAULT, positions),
        (
            &Subject::new(Side::A, "A", &a, &a_binary),
            &Subject::new(Side::B, "B", &b, &b_binary),
        ),
        &plan,
        paths,
        progress,
    )?;
    comparison.measured = Some(crate::machine::Provenance::here_now());
    Ok((comparison, paths.clone()))
}

/// The exit code that says `decision`.
fn exit(decision: Decision) -> Exit {
    match decision {
        Decision::H1 => Exit::Clean,
        Decision::H0 => Exit::Regression,
        Decision::Undecided => Exit::Undecided,
        Decision::Interrupted => Exit::Interrupted,
    }
}

fn outcome(settled: Settled) -> Outcome {
    let decision = Decision::of_games(settled.decision, settled.interrupted);
    let exit = exit(decision);
    let games = settled
        .search
        .as_ref()
        .map_or(0, |search| search.games.summary.games);
    let games_to_decision = settled
        .search
        .as_ref()
        .and_then(|search| search.games.summary.sprt.as_ref())
        .and_then(|sprt| sprt.games_to_decision);
    let (llr, llr_lower, llr_upper) = settled.llr;
    let games_played = settled.search.is_some();
    let (search_elo, total_elo) = match (settled.games_at, settled.search_elo, settled.speed_elo) {
        (GamesAt::NodeOdds, Some(games), _) if games_played => (None, games),
        (_, Some(search), Some(speed)) => (Some(search), add(search, speed)),
        _ => unreachable!("the search's Elo is known, and without node odds so is the speed's"),
    };
    let report = VerdictReport {
        schema_version: LAB_JSON_SCHEMA_VERSION,
        kind: Kind::Verdict,
        limit: settled.limit,
        tc: settled.limit.pgn_time_control(),
        sprt: settled.sprt,
        comparison: Box::new(settled.comparison),
        games_at: settled.games_at,
        model: settled.model,
        speed_from: settled.speed_from,
        speed_ratio: settled.speed_ratio,
        speed_games: settled.speed_in_games.map(|in_games| in_games.games),
        speed_runs: settled
            .speed_in_games
            .and_then(|in_games| in_games.runs_if_wider()),
        speed_sittings: settled
            .speed_in_games
            .and_then(|in_games| in_games.sittings_if_wider()),
        speed_elo: settled.speed_elo,
        search_elo,
        total_elo,
        llr,
        llr_lower,
        llr_upper,
        games,
        games_to_decision,
        rounds: settled.rounds,
        search: settled.search,
        decision,
        wall_time_s: settled.started.elapsed().as_secs_f64(),
        notes: settled.notes,
    };
    Outcome {
        report: Report::Verdict(Box::new(report)),
        exit,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An interrupt is a stop the user asked for: games past a bound when it came still end as
    /// interrupted, exit 130, as their match report (`search.match`) says they ended; a shell
    /// loop around the verdict stops with it.
    #[test]
    fn an_interrupted_verdict_exits_130_whatever_its_games_llr() {
        for sprt in [
            SprtDecision::AcceptH1,
            SprtDecision::AcceptH0,
            SprtDecision::Continue,
        ] {
            let decision = Decision::of_games(sprt, true);
            assert_eq!(decision, Decision::Interrupted, "{sprt:?}");
            assert_eq!(exit(decision), Exit::Interrupted);
            assert_eq!(exit(decision).code(), 130);
        }
        assert_eq!(
            exit(Decision::of_games(SprtDecision::AcceptH1, false)),
            Exit::Clean
        );
        assert_eq!(
            exit(Decision::of_games(SprtDecision::AcceptH0, false)),
            Exit::Regression
        );
        assert_eq!(
            exit(Decision::of_games(SprtDecision::Continue, false)),
            Exit::Undecided
        );
    }
}
