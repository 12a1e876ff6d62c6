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
use crate::games::summary::{NpsRatioInGames, SearchInGames, MIN_GAMES_FOR_NPS_RATIO};
use crate::games::{self, GameBudget, MatchOptions, MatchReport, Resume};
use crate::history::store::machine_id;
use crate::lab::Lab;
use crate::machine::Machine;
use crate::outcome::{Exit, Outcome};
use crate::paths::LabPaths;
use crate::report::Report;
use crate::schema::{Kind, LAB_JSON_SCHEMA_VERSION};
use crate::side::Side;
use crate::verdict::budgets::{self, StoredBudget};
use crate::verdict::models::SpeedEloModel;
use crate::verdict::speed_elo::{add, speed_elo, EloPerDoubling};
use crate::verdict::{
    decision_rests_on_contradicted_speed, games_contradict_speed, instructions_speed_ratio, models,
    node_budget, node_odds_budget, nodes_in, shifted_sprt, speed_decision, speed_measured_finely,
    speed_ratio, speed_tolerance, typical_move_ms, BudgetFrom, BudgetStore, ClockProbe, Decision,
    GamesAt, ModelUse, SearchGames, SpeedSource, VerdictNote, VerdictReport, CLOCK_PROBE_GAMES,
    GAMES_PER_SPEED_UPDATE,
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
    let settled = |speed: Speed, notes| Findings {
        limit: options.limit,
        sprt: options.sprt,
        comparison: speed.comparison,
        games_at: options.games_at,
        model: model_use.clone(),
        speed_from: speed.from,
        speed_ratio: speed.ratio,
        speed_games: speed.games,
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
        if options.speed_from == SpeedSource::Games {
            notes.push(VerdictNote::NoSpeedFromGames { games: 0 });
        }
        let (speed, llr, decision) = speed_alone(&run, speed)?;
        let zero = Estimate {
            value: 0.0,
            ci_low: 0.0,
            ci_high: 0.0,
        };
        return Ok(outcome(Findings {
            search_elo: Some(zero),
            llr: (llr, options.sprt.lower(), options.sprt.upper()),
            decision,
            ..settled(speed, notes)
        }));
    }

    let tolerance = speed_tolerance(meter.model.map(|model| model.value), &options.sprt);
    let mut speed = speed_for_games(&run, speed, tolerance, &mut notes)?;
    let budgets = budgets(&run, &speed, &paths)?;
    let played = play(&run, &mut speed, &budgets, tolerance, &mut notes)?;
    Ok(outcome(Findings {
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
    max_games: GameBudget,
    speed_from: SpeedSource,
    games_at: GamesAt,
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
            SpeedFromArg::Games => SpeedSource::Games,
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
            games_at,
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

/// Turns a comparison into the speed ratio the verdict charges and, with a model, its Elo.
struct SpeedMeter<'a> {
    from: SpeedSource,
    model: Option<&'a EloPerDoubling>,
}

impl SpeedMeter<'_> {
    fn read(&self, comparison: &Comparison) -> Result<(Estimate, Option<Estimate>)> {
        let ratio = match self.from {
            // The games' own speed is read as they are played; the paired rounds stand in.
            SpeedSource::Nps | SpeedSource::Games => speed_ratio(comparison).context(
                "the paired speed has no interval (too few rounds with pairs): no verdict from it",
            )?,
            SpeedSource::Instructions => instructions_speed_ratio(comparison).map_err(|why| {
                anyhow::anyhow!(
                    "--speed-from instructions: {why}; no verdict from it (`--speed-from nps` \
                     measures the speed by paired rounds instead)"
                )
            })?,
        };
        let elo = match self.model {
            Some(model) => Some(
                speed_elo(model, ratio)
                    .context("the speed ratio is not a positive finite number")?,
            ),
            None => None,
        };
        Ok((ratio, elo))
    }
}

/// A and B as measured so far, and the speed read from them.
struct Speed {
    comparison: Comparison,
    ratio: Estimate,
    elo: Option<Estimate>,
    rounds: u32,
    /// What measured `ratio`: with `--speed-from games`, the paired NPS until the games are
    /// read.
    from: SpeedSource,
    /// The games the ratio was read from, when it was.
    games: Option<u64>,
}

impl Speed {
    fn of(comparison: Comparison, meter: &SpeedMeter, rounds: u32) -> Result<Speed> {
        let (ratio, elo) = meter.read(&comparison)?;
        let from = match meter.from {
            SpeedSource::Games => SpeedSource::Nps,
            source => source,
        };
        Ok(Speed {
            comparison,
            ratio,
            elo,
            rounds,
            from,
            games: None,
        })
    }

    /// The speed as `games` games showed it (B's NPS over A's, game by game), in Elo by the
    /// model.
    fn read_from_games(&mut self, meter: &SpeedMeter, in_games: &NpsRatioInGames) -> Result<()> {
        let model = meter.model.context("equal-node games need the model")?;
        self.elo = Some(
            speed_elo(model, in_games.ratio)
                .context("the games' NPS ratio is not a positive finite number")?,
        );
        self.ratio = in_games.ratio;
        self.from = SpeedSource::Games;
        self.games = Some(in_games.games);
        Ok(())
    }

    /// Measured again with more paired rounds, keeping the first instruction count (more
    /// rounds narrow only a measured NPS interval; an instruction count is exact).
    fn again(
        self,
        lab: &Lab,
        args: &VerdictCommandArgs,
        meter: &SpeedMeter,
        rounds: u32,
    ) -> Result<Speed> {
        let instructions = self.comparison.instructions;
        let (mut comparison, _) = measure(lab, args, rounds, false)?;
        comparison.instructions = instructions;
        Speed::of(comparison, meter, rounds)
    }
}

/// The same signature: the speed decides alone, with more rounds while it is undecided. The
/// speed as last measured, the LLR and the decision.
fn speed_alone(run: &Run, mut speed: Speed) -> Result<(Speed, f64, SprtDecision)> {
    let Run {
        lab,
        args,
        options,
        meter,
    } = *run;
    let elo_of = |speed: &Speed| speed.elo.expect("the speed alone needs the model");
    let (mut llr, mut decision) = speed_decision(&elo_of(&speed), &options.sprt);
    while decision == SprtDecision::Continue
        && speed.from == SpeedSource::Nps
        && speed.rounds < args.max_rounds
    {
        let rounds = (speed.rounds * 2).min(args.max_rounds);
        let elo = elo_of(&speed);
        lab.progress().line(&format!(
            "speed Elo {:+.1} (95% CI {:+.1} to {:+.1}) is undecided: measuring again with {rounds} rounds",
            elo.value, elo.ci_low, elo.ci_high
        ));
        speed = speed.again(lab, args, meter, rounds)?;
        (llr, decision) = speed_decision(&elo_of(&speed), &options.sprt);
    }
    Ok((speed, llr, decision))
}

/// Different signatures: the speed measured again while its interval is too wide to credit
/// at the bounds' gap; a note if it stays so.
fn speed_for_games(
    run: &Run,
    mut speed: Speed,
    tolerance: f64,
    notes: &mut Vec<VerdictNote>,
) -> Result<Speed> {
    let Run {
        lab,
        args,
        options,
        meter,
    } = *run;
    // With the speed from the games, the paired rounds only stand in until the first reading.
    let bench_charged = options.speed_from == SpeedSource::Nps;
    while bench_charged
        && !speed_measured_finely(&speed.ratio, tolerance)
        && speed.rounds < args.max_rounds
    {
        let rounds = (speed.rounds * 2).min(args.max_rounds);
        lab.progress().line(&format!(
            "speed ratio {:.4} (95% CI {:.4} to {:.4}) is too coarse to credit at bounds {} apart: \
             measuring again with {rounds} rounds",
            speed.ratio.value,
            speed.ratio.ci_low,
            speed.ratio.ci_high,
            options.sprt.elo1 - options.sprt.elo0
        ));
        speed = speed.again(lab, args, meter, rounds)?;
    }
    if options.speed_from != SpeedSource::Games && !speed_measured_finely(&speed.ratio, tolerance) {
        notes.push(VerdictNote::SpeedTooCoarse {
            ratio: speed.ratio,
            rounds: speed.rounds,
        });
    }
    Ok(speed)
}

/// The games' node budgets, where they came from, and the earlier games they continue.
struct Budgets {
    a: ABudget,
    b: u64,
    /// The clock's typical move, the rule's other factor.
    move_ms: f64,
    resumed: Option<PathBuf>,
}

/// The games' budgets: an earlier verdict's with `--resume` (at `--nodes` if given), else
/// `--nodes`, else the budget of A's clock games (stored, or played now and stored; see
/// [`clock_games_budget`]). B's is A's, or at node odds A's times the speed ratio's lower end.
fn budgets(run: &Run, speed: &Speed, paths: &LabPaths) -> Result<Budgets> {
    let Run {
        lab, args, options, ..
    } = *run;
    // The fastest of A's runs: load only ever slows a run, so the fastest is the nearest to
    // the machine's own speed, and a busy machine does not shrink the games' budget.
    let nps = speed.comparison.a.nps.max;
    let move_ms = typical_move_ms(&options.limit).expect("a clock has a typical move time");
    let binaries = [
        speed.comparison.a.revision.binary_key.as_str(),
        speed.comparison.b.revision.binary_key.as_str(),
    ];
    let earlier = args
        .resume
        .then(|| {
            earlier_games(
                &paths.root.join("match"),
                binaries,
                options.games_at,
                args.nodes,
            )
        })
        .flatten();
    if let Some((path, [a, b])) = earlier {
        lab.progress().line(&format!(
            "resuming the fixed-node games of {} at their budget of {a} (A) and {b} (B) nodes \
             per move",
            path.display()
        ));
        return Ok(Budgets {
            a: ABudget {
                nodes: a,
                from: BudgetFrom::Resumed,
                nps,
                clock_probe: None,
                store: None,
            },
            b,
            move_ms,
            resumed: Some(path),
        });
    }
    let a_budget = match args.nodes {
        Some(nodes) => ABudget {
            nodes,
            from: BudgetFrom::Given,
            nps,
            clock_probe: None,
            store: None,
        },
        None => clock_games_budget(run, nps, binaries[0], paths)?,
    };
    let b = match options.games_at {
        GamesAt::EqualNodes => a_budget.nodes,
        GamesAt::NodeOdds => node_odds_budget(a_budget.nodes, &speed.ratio).with_context(|| {
            format!(
                "the speed ratio's lower end {} gives B no node budget",
                speed.ratio.ci_low
            )
        })?,
    };
    // A budget kept from earlier clock games makes a rerun play games already on disk.
    let same_a = earlier_games(
        &paths.root.join("match"),
        binaries,
        options.games_at,
        Some(a_budget.nodes),
    );
    if let Some((path, [_, earlier_b])) = same_a {
        lab.progress().line(&format!(
            "note: {} holds earlier games of these two binaries with A at {} nodes (B at \
             {earlier_b}); this run starts a results file of its own (`--resume` would continue \
             those at their budgets)",
            path.display(),
            a_budget.nodes
        ));
    }
    Ok(Budgets {
        a: a_budget,
        b,
        move_ms,
        resumed: None,
    })
}

/// A's budget and where it came from.
struct ABudget {
    nodes: u64,
    from: BudgetFrom,
    /// A's fastest bench NPS, the rule's first factor (a stored budget's NPS is the one it
    /// was made with).
    nps: f64,
    clock_probe: Option<ClockProbe>,
    store: Option<BudgetStore>,
}

/// A's budget from its clock games: the one stored for A's binary at this clock on this
/// machine (unless `--new-budget`), else A's fastest bench NPS (`nps`) × A's mean time per move
/// in [`CLOCK_PROBE_GAMES`] games against itself, played now and stored. If those games timed
/// no move, the clock's typical move instead (not stored). A stored file that cannot be used
/// is said and replaced.
fn clock_games_budget(run: &Run, nps: f64, binary: &str, paths: &LabPaths) -> Result<ABudget> {
    let Run {
        lab, args, options, ..
    } = *run;
    let progress = lab.progress();
    let dir = budgets::budgets_dir(paths);
    let machine = machine_id(&Machine::current());
    if !args.new_budget {
        match budgets::find(&dir, &machine, binary, &options.limit) {
            Ok(Some((stored, path))) => {
                progress.line(&format!(
                    "A's budget at {}: {} nodes per move, from its clock games of {} ({}; \
                     --new-budget plays them again)",
                    options.limit.pgn_time_control(),
                    stored.nodes_per_move,
                    crate::calendar::utc_minute(stored.measured_unix),
                    path.display()
                ));
                return Ok(ABudget {
                    nodes: stored.nodes_per_move,
                    from: BudgetFrom::Stored,
                    nps: stored.nps,
                    clock_probe: Some(stored.clock_probe),
                    store: Some(BudgetStore {
                        path: path.display().to_string(),
                        measured_unix: stored.measured_unix,
                    }),
                });
            }
            Ok(None) => {}
            Err(error) => progress.line(&format!(
                "warning: {error:#}; timing A's clock games again, and replacing it"
            )),
        }
    }
    let probe = clock_probe(run)?;
    let Some(nodes) = nodes_in(nps, probe.mean_time_ms) else {
        progress.line(
            "the clock games timed no move: the budget takes the clock's typical move \
             (base/40 + inc) instead",
        );
        let nodes = node_budget(nps, &options.limit)
            .with_context(|| format!("A's measured NPS {nps} gives no node budget"))?;
        return Ok(ABudget {
            nodes,
            from: BudgetFrom::Speed,
            nps,
            clock_probe: Some(probe),
            store: None,
        });
    };
    let stored = StoredBudget {
        kind: budgets::NODE_BUDGET_KIND.to_string(),
        schema_version: budgets::NODE_BUDGET_SCHEMA_VERSION,
        machine_id: machine,
        binary: binary.to_string(),
        limit: options.limit,
        nodes_per_move: nodes,
        nps,
        clock_probe: probe,
        measured_unix: crate::machine::Provenance::here_now().measured_unix,
    };
    let path = budgets::save(&dir, &stored)?;
    Ok(ABudget {
        nodes,
        from: BudgetFrom::ClockGames,
        nps,
        clock_probe: Some(probe),
        store: Some(BudgetStore {
            path: path.display().to_string(),
            measured_unix: stored.measured_unix,
        }),
    })
}

/// A against itself at the verdict's clock, [`CLOCK_PROBE_GAMES`] games: how long A thinks
/// per move in the games the fixed-node ones stand for. An engine's time manager spends what
/// it likes of a clock; a rule such as `base / 40 + inc` can miss it by half.
fn clock_probe(run: &Run) -> Result<ClockProbe> {
    let Run {
        lab, args, options, ..
    } = *run;
    lab.progress().line(&format!(
        "timing A's moves at {}: {CLOCK_PROBE_GAMES} games of A against itself",
        options.limit.pgn_time_control()
    ));
    let games = MatchOptions::self_play(
        [args.a.clone(), args.a.clone()],
        [options.limit, options.limit],
        GameBudget::Given(CLOCK_PROBE_GAMES),
        args.concurrency,
        super::export_paths(&args.output.export),
    )?;
    // An interrupt here ends the lab at once (exit 130): these games report nothing alone.
    let report = games::run(lab, games)?;
    let sides = &report.summary.search_in_games;
    let moves = sides[0].moves + sides[1].moves;
    let weighted = |of: fn(&SearchInGames) -> Option<f64>| -> Option<f64> {
        let (sum, count) = sides
            .iter()
            .fold((0.0, 0), |(sum, count), side| match of(side) {
                Some(value) => (sum + value * side.moves as f64, count + side.moves),
                None => (sum, count),
            });
        (count > 0).then(|| sum / count as f64)
    };
    let mean_time_ms = weighted(|side| side.mean_time_ms).unwrap_or(0.0);
    let nodes_per_move = weighted(|side| side.nodes_per_move);
    lab.progress().line(&format!(
        "A's moves at {}: {mean_time_ms:.1} ms each over {moves} moves",
        options.limit.pgn_time_control()
    ));
    Ok(ClockProbe {
        games: report.summary.games,
        moves,
        mean_time_ms,
        nodes_per_move,
    })
}

/// What the fixed-node games decided.
struct Played {
    search: SearchGames,
    /// The games' Elo (with node odds, the total).
    search_elo: Estimate,
    /// The LLR with its lower and upper bound.
    llr: (f64, f64, f64),
    decision: SprtDecision,
    interrupted: bool,
}

/// The fixed-node SPRT: with equal nodes at bounds shifted by the speed's surely gained Elo,
/// at node odds at the bounds as given.
fn play(
    run: &Run,
    speed: &mut Speed,
    budgets: &Budgets,
    tolerance: f64,
    notes: &mut Vec<VerdictNote>,
) -> Result<Played> {
    let Run {
        lab, args, options, ..
    } = *run;
    let (nodes, b_nodes, sprt) = (budgets.a.nodes, budgets.b, options.sprt);
    let budget = budget_words(&budgets.a, budgets.move_ms);
    match options.games_at {
        GamesAt::EqualNodes => {
            let shifted = games_sprt(options, speed);
            lab.progress().line(&format!(
                "signatures differ: fixed-node SPRT at {nodes} nodes per move ({budget}), bounds \
                 [{:.2}, {:.2}] after the speed's {:+.2} Elo{}",
                shifted.elo0,
                shifted.elo1,
                sprt.elo0 - shifted.elo0,
                if options.speed_from == SpeedSource::Games {
                    format!(
                        " (paired NPS, until the games' own speed is read after \
                         {GAMES_PER_SPEED_UPDATE} games)"
                    )
                } else {
                    String::new()
                }
            ));
        }
        GamesAt::NodeOdds => lab.progress().line(&format!(
            "signatures differ: fixed-node SPRT at node odds, A {nodes} and B {b_nodes} nodes \
             per move (A: {budget}; B: × its speed ratio's 95% lower end, {:.4}), bounds \
             [{:.2}, {:.2}] as given: the games' Elo is the total",
            speed.ratio.ci_low, sprt.elo0, sprt.elo1
        )),
    }
    let report = if options.speed_from == SpeedSource::Games {
        games_reading_their_speed(run, speed, budgets, notes)?
    } else {
        games::run(
            lab,
            games_options(
                args,
                budgets,
                games_sprt(options, speed),
                options.max_games,
                budgets.resumed.as_deref(),
            )?,
        )?
    };
    let played_sprt = games_sprt(options, speed);
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
        if games_contradict_speed(&speed.ratio, &in_games.ratio, tolerance) {
            notes.push(VerdictNote::GamesContradictSpeed {
                charged: speed.ratio,
                source: speed.from,
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
            decision_rests_on_contradicted_speed(decision, &speed.ratio, &in_games.ratio, tolerance)
        });
    if contradicted {
        notes.push(VerdictNote::DecisionWithheld {
            h1: decision == SprtDecision::AcceptH1,
        });
        decision = SprtDecision::Continue;
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
    Ok(Played {
        search: SearchGames {
            nodes_per_move: nodes,
            budget_from: budgets.a.from,
            clock_probe: budgets.a.clock_probe,
            budget_store: budgets.a.store.clone(),
            b_nodes_per_move: b_nodes,
            nps: budgets.a.nps,
            typical_move_ms: budgets.move_ms,
            shifted_sprt: played_sprt,
            games: Box::new(report),
        },
        search_elo,
        llr,
        decision,
        interrupted,
    })
}

/// Where A's budget came from, in words for the progress line.
fn budget_words(a: &ABudget, move_ms: f64) -> String {
    let probe_ms = a.clock_probe.map_or(0.0, |probe| probe.mean_time_ms);
    match a.from {
        BudgetFrom::Speed => format!("A's {:.0} NPS × {move_ms} ms", a.nps),
        BudgetFrom::ClockGames => format!(
            "A's {:.0} NPS × {probe_ms:.1} ms, its mean move in clock games",
            a.nps
        ),
        BudgetFrom::Stored => format!(
            "A's {:.0} NPS × {probe_ms:.1} ms, its mean move in stored clock games",
            a.nps
        ),
        BudgetFrom::Given => "--nodes".to_string(),
        BudgetFrom::Resumed => "the resumed games'".to_string(),
    }
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

/// The fixed-node games at `budgets`, judged by `sprt`, `games` of them, continuing `resume`.
fn games_options(
    args: &VerdictCommandArgs,
    budgets: &Budgets,
    sprt: Sprt,
    games: GameBudget,
    resume: Option<&Path>,
) -> Result<MatchOptions> {
    let mut options = MatchOptions::self_play(
        [args.a.clone(), args.b.clone()],
        [
            Limit::Nodes {
                nodes: budgets.a.nodes,
            },
            Limit::Nodes { nodes: budgets.b },
        ],
        games,
        args.concurrency,
        super::export_paths(&args.output.export),
    )?;
    options.sprt = Some(sprt);
    // A verdict's games take hours: an interrupt still gives the verdict of the games so far.
    options.report_on_interrupt = true;
    if let Some(path) = resume {
        options.resume = Resume::Rebounded(path.to_path_buf());
    }
    Ok(options)
}

/// `--speed-from games`: the games in steps of [`GAMES_PER_SPEED_UPDATE`], each step judged at
/// bounds shifted by the speed all games so far showed (the paired NPS before the first
/// reading). A decision, or the budget's end, is judged again with the speed of every game,
/// and the games go on when that undoes the decision. `speed` ends as the games' own.
fn games_reading_their_speed(
    run: &Run,
    speed: &mut Speed,
    budgets: &Budgets,
    notes: &mut Vec<VerdictNote>,
) -> Result<MatchReport> {
    let Run {
        lab,
        args,
        options,
        meter,
    } = *run;
    let mut resume = budgets.resumed.clone();
    let mut pause_at = GAMES_PER_SPEED_UPDATE;
    loop {
        let mut step = games_options(
            args,
            budgets,
            games_sprt(options, speed),
            options.max_games,
            resume.as_deref(),
        )?;
        step.pause_at = Some(pause_at);
        let report = games::run(lab, step)?;
        let recorded = report.summary.games;
        // A resumed file may keep its own budget (no `--max-games`).
        let total = report.games_budget;
        let Some(in_games) = &report.summary.nps_ratio_in_games else {
            if recorded >= MIN_GAMES_FOR_NPS_RATIO {
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
            notes.push(VerdictNote::NoSpeedFromGames { games: recorded });
            return Ok(report);
        };
        // Interrupted, the report stands as judged: with the speed it was judged at.
        if report.exit_code == crate::process::INTERRUPTED_EXIT {
            return Ok(report);
        }
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
            "B's NPS over A's in {} games: {}; bounds now [{:.2}, {:.2}]{}",
            crate::digits::thousands(in_games.games),
            crate::report::ratio_change_with_ci(&in_games.ratio),
            shifted.elo0,
            shifted.elo1,
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

/// What a verdict found, before it becomes the report.
struct Findings {
    limit: Limit,
    sprt: Sprt,
    comparison: Comparison,
    games_at: GamesAt,
    model: Option<ModelUse>,
    speed_from: SpeedSource,
    speed_ratio: Estimate,
    speed_games: Option<u64>,
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
        speed_games: verdict.speed_games,
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
