//! The games' node budgets: A's from its clock games (stored or timed now), `--nodes`, or
//! the resumed games'; B's the same, or at node odds A's times the speed's lower end (on a
//! resume, the resumed games' odds).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::speed::Speed;
use super::{Options, Run};
use crate::analysis::compare::Comparison;
use crate::cli::VerdictCommandArgs;
use crate::digits::thousands;
use crate::games::results::{self, Header, Shard};
use crate::games::rules::{AdjudicationRules, Limit};
use crate::games::sprt::Estimate;
use crate::games::summary::SearchInGames;
use crate::games::{self, MatchOptions, MaxGames};
use crate::history::store::machine_id;
use crate::machine::Machine;
use crate::paths::LabPaths;
use crate::verdict::budgets::{self, StoredBudget};
use crate::verdict::{
    node_budget, node_odds_budget, node_odds_factor, nodes_in, typical_move_ms, BudgetFrom,
    BudgetStore, ChargedBy, ClockProbe, GamesAt, CLOCK_PROBE_GAMES, TYPICAL_MOVES_PER_CLOCK,
};

/// How the games are set up: their node budgets and where they came from, and the earlier
/// games they continue with those games' adjudication.
pub(super) struct GamesSetup {
    pub(super) a: ABudget,
    pub(super) b: u64,
    /// The clock's typical move, the rule's other factor.
    pub(super) move_ms: f64,
    pub(super) resumed: Option<PathBuf>,
    /// The games' rules: the resumed games', else as the flags give them.
    pub(super) adjudication: AdjudicationRules,
}

impl GamesSetup {
    /// The speed ratio B's games are charged and what gave it: at node odds on a resume, the
    /// factor of the budgets kept (a point; the interval it was the lower end of is not kept),
    /// else the speed measured.
    pub(super) fn charged(&self, games_at: GamesAt, speed: &Speed) -> (Estimate, ChargedBy) {
        match (games_at, &self.resumed) {
            (GamesAt::NodeOdds, Some(_)) => (
                node_odds_factor(self.a.nodes, self.b),
                ChargedBy::ResumedNodeOdds,
            ),
            _ => (speed.ratio, ChargedBy::Measured(speed.from)),
        }
    }
}

/// The earlier verdict's games `--resume` continues (at `--nodes` if given), if there are any.
pub(super) fn resumed_games(
    run: &Run,
    comparison: &Comparison,
    paths: &LabPaths,
) -> Option<Earlier> {
    let Run { args, options, .. } = *run;
    let binaries = [
        comparison.a.revision.binary_key.as_str(),
        comparison.b.revision.binary_key.as_str(),
    ];
    args.resume
        .then(|| earlier_games(&paths.root.join("match"), binaries, options, args.nodes))
        .flatten()
}

/// The games' node budgets: `earlier`'s, the games `--resume` continues ([`resumed_games`]),
/// else `--nodes`, else the budget of A's clock games (stored, or played now and stored; see
/// [`clock_games_budget`]). B's is A's, or at node odds A's times the speed ratio's lower end.
pub(super) fn games_setup(
    run: &Run,
    speed: &Speed,
    paths: &LabPaths,
    earlier: Option<Earlier>,
) -> Result<GamesSetup> {
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
    if let Some(Earlier {
        path,
        nodes: [a, b],
        adjudication,
    }) = earlier
    {
        let odds = match options.games_at {
            GamesAt::EqualNodes => String::new(),
            GamesAt::NodeOdds => format!(
                "; B × {:.4}, the node odds of the run that started them (this run's speed \
                 ratio's lower end, {:.4}, would give B {})",
                node_odds_factor(a, b).value,
                speed.ratio.ci_low,
                node_odds_budget(a, &speed.ratio).map_or_else(|| "none".to_string(), thousands)
            ),
        };
        lab.progress().line(&format!(
            "resuming the fixed-node games of {} at their budget of {} (A) and {} (B) nodes \
             per move and their adjudication ({}){odds}",
            path.display(),
            thousands(a),
            thousands(b),
            adjudication.words()
        ));
        return Ok(GamesSetup {
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
            adjudication,
        });
    }
    if args.resume {
        lab.progress().line(&nothing_to_resume(
            &paths.root.join("match"),
            binaries,
            args,
            options,
        ));
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
        options,
        Some(a_budget.nodes),
    );
    if let Some(Earlier {
        path,
        nodes: [_, earlier_b],
        ..
    }) = same_a
    {
        lab.progress().line(&format!(
            "note: {} holds earlier games of these two binaries with A at {} nodes (B at \
             {}); this run starts a results file of its own (`--resume` would continue those at \
             their budgets)",
            path.display(),
            thousands(a_budget.nodes),
            thousands(earlier_b)
        ));
    }
    Ok(GamesSetup {
        a: a_budget,
        b,
        move_ms,
        resumed: None,
        adjudication: options.adjudication.fresh,
    })
}

/// A's budget and where it came from.
pub(super) struct ABudget {
    pub(super) nodes: u64,
    pub(super) from: BudgetFrom,
    /// A's fastest bench NPS, the rule's first factor (a stored budget's NPS is the one it
    /// was made with).
    pub(super) nps: f64,
    pub(super) clock_probe: Option<ClockProbe>,
    pub(super) store: Option<BudgetStore>,
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
            Err(error) => crate::progress::warning(&format!(
                "warning: {error:#}; timing A's clock games again, and replacing it"
            )),
        }
    }
    let probe = clock_probe(run)?;
    let Some(nodes) = nodes_in(nps, probe.mean_time_ms) else {
        progress.line(&format!(
            "the clock games timed no move: the budget takes the clock's typical move \
             (base/{TYPICAL_MOVES_PER_CLOCK} + inc) instead"
        ));
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
        MaxGames::Given(CLOCK_PROBE_GAMES),
        args.concurrency,
        crate::commands::export_paths(&args.output.export),
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

/// Where A's budget came from, in words for the progress line.
pub(super) fn budget_words(a: &ABudget, move_ms: f64) -> String {
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

/// An earlier verdict's games: its results file, A's and B's budgets and its adjudication.
pub(super) struct Earlier {
    path: PathBuf,
    nodes: [u64; 2],
    adjudication: AdjudicationRules,
}

/// The newest results file of an earlier verdict between these binaries that this run may
/// continue ([`resumable`]). Its budgets and adjudication are kept, so that its games pool
/// with the new ones.
fn earlier_games(
    match_dir: &Path,
    binaries: [&str; 2],
    options: &Options,
    given: Option<u64>,
) -> Option<Earlier> {
    let (newest, _) = results::newest(match_dir, |header| {
        let [a, b] = &header.settings.engines;
        (a.binary == binaries[0] && b.binary == binaries[1])
            .then(|| resumable(header, options, given))
            .flatten()
    });
    newest.map(|(path, (nodes, adjudication))| Earlier {
        path,
        nodes,
        adjudication,
    })
}

/// A's and B's budgets and the adjudication of a verdict's results file whose games this run
/// could continue but for the engines: fixed-node games with an SPRT, at one budget for both
/// sides (equal nodes) or at two (node odds), adjudicated by rules the flags could give and
/// allow, the whole match; with `given` (`--nodes`) only games at that budget for A.
fn resumable(
    header: &Header,
    options: &Options,
    given: Option<u64>,
) -> Option<([u64; 2], AdjudicationRules)> {
    let settings = &header.settings;
    let [Limit::Nodes { nodes }, Limit::Nodes { nodes: b_nodes }] = settings.limits else {
        return None;
    };
    let adjudication = settings.adjudication();
    let same_kind = match options.games_at {
        GamesAt::EqualNodes => nodes == b_nodes,
        GamesAt::NodeOdds => nodes != b_nodes,
    };
    let same_budget = given.is_none_or(|given| given == nodes);
    (same_kind
        && same_budget
        && adjudication.in_range()
        && options.adjudication.admits(&adjudication)
        && settings.sprt.is_some()
        && header.shard == Shard::WHOLE)
        .then_some(([nodes, b_nodes], adjudication))
}

/// What `--resume` says when no earlier verdict's games can be continued: the games start
/// afresh; and when a verdict of this B against another A is on disk that this run could
/// otherwise continue (the base, `main` say, has moved since it was paused), which file holds
/// it and, when that A was a commit, the command that continues it.
fn nothing_to_resume(
    match_dir: &Path,
    binaries: [&str; 2],
    args: &VerdictCommandArgs,
    options: &Options,
) -> String {
    let short = crate::input::short_key;
    let mut conditions = vec![match options.games_at {
        GamesAt::EqualNodes => "at equal nodes".to_string(),
        GamesAt::NodeOdds => "at node odds".to_string(),
    }];
    conditions.extend(
        args.nodes
            .map(|nodes| format!("with A at {} nodes", thousands(nodes))),
    );
    if args.draw_adj.is_some() || args.resign_adj.is_some() {
        conditions.push("adjudicated as given".to_string());
    }
    let mut words = format!(
        "--resume: no earlier verdict's games between these binaries (A {}, B {}) {}; the \
         games start afresh",
        short(binaries[0]),
        short(binaries[1]),
        conditions.join(", ")
    );
    let (other_base, _) = results::newest(match_dir, |header| {
        let [a, b] = &header.settings.engines;
        (b.binary == binaries[1] && a.binary != binaries[0])
            .then(|| resumable(header, options, args.nodes))
            .flatten()
            .map(|_| a.commit.clone())
    });
    if let Some((path, base)) = other_base {
        words.push_str(&format!(
            ". {} holds a verdict of this B against another A",
            path.display()
        ));
        match base.as_deref().and_then(commit_prefix) {
            Some(base) => words.push_str(&format!(
                ", {base}: `{}` continues it",
                resume_command(base, args, options)
            )),
            None => words.push_str(" (not a commit)"),
        }
    }
    words
}

/// `lab verdict BASE B --tc T --resume`, with the flags of this run that choose which games
/// are resumed.
fn resume_command(base: &str, args: &VerdictCommandArgs, options: &Options) -> String {
    let mut command = format!(
        "lab verdict {base} {} --tc {}",
        commit_prefix(&args.b).unwrap_or(&args.b),
        args.tc
    );
    if options.games_at == GamesAt::NodeOdds {
        command.push_str(" --node-odds");
    }
    if let Some(nodes) = args.nodes {
        command.push_str(&format!(" --nodes {nodes}"));
    }
    for (flag, rule) in [
        ("--draw-adj", &args.draw_adj),
        ("--resign-adj", &args.resign_adj),
    ] {
        if let Some(rule) = rule {
            command.push_str(&format!(" {flag} {rule}"));
        }
    }
    command.push_str(" --resume");
    command
}

/// A commit id as a command takes it, shortened as the lab shows commits; `None` for anything
/// else.
fn commit_prefix(revision: &str) -> Option<&str> {
    let is_commit = revision.len() == 40 && revision.bytes().all(|b| b.is_ascii_hexdigit());
    is_commit.then(|| crate::input::short_commit(revision))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::compare::{baseline_against_a_copy, Criteria, Thresholds};
    use crate::games::sprt::{EloModel, Sprt, SprtDecision};
    use crate::verdict::{
        decision_rests_on_contradicted_speed, games_contradict_speed, speed_tolerance, SpeedSource,
    };

    fn estimate(value: f64, ci_low: f64, ci_high: f64) -> Estimate {
        Estimate {
            value,
            ci_low,
            ci_high,
        }
    }

    /// This run's paired speed, +10% (+5% to +15%), over a stored measurement (only the ratio
    /// is read here).
    fn speed() -> Speed {
        let thresholds = Thresholds {
            threshold_pct: 1.0,
            instr_threshold_pct: 0.5,
        };
        let comparison = baseline_against_a_copy(
            crate::schema::Kind::Compare,
            thresholds,
            Criteria::local(false),
            |_| {},
        );
        Speed {
            comparison,
            ratio: estimate(1.10, 1.05, 1.15),
            elo: None,
            rounds: 6,
            from: SpeedSource::Nps,
            in_games: None,
        }
    }

    /// Games at A 400,000 and B 480,000 nodes: × 1.2, the lower end of an earlier run's speed.
    fn setup(resumed: bool) -> GamesSetup {
        GamesSetup {
            a: ABudget {
                nodes: 400_000,
                from: if resumed {
                    BudgetFrom::Resumed
                } else {
                    BudgetFrom::Given
                },
                nps: 2e6,
                clock_probe: None,
                store: None,
            },
            b: 480_000,
            move_ms: 70.0,
            resumed: resumed.then(|| PathBuf::from("earlier.jsonl")),
            adjudication: AdjudicationRules {
                draw: None,
                resign: None,
            },
        }
    }

    /// Resumed at node odds, B plays at the kept budgets' × 1.2, whatever this run measures:
    /// that is the speed its games are checked against. Games showing +20% agree with it; by
    /// this run's +5% to +15% they would have been called a contradiction, and an H1 resting on
    /// nodes B's games do not show (+5%) would have stood.
    #[test]
    fn resumed_games_at_node_odds_are_charged_the_odds_they_kept() {
        let speed = speed();
        let (charged, by) = setup(true).charged(GamesAt::NodeOdds, &speed);
        assert_eq!(by, ChargedBy::ResumedNodeOdds);
        assert_eq!(
            (charged.value, charged.ci_low, charged.ci_high),
            (1.2, 1.2, 1.2)
        );
        let bounds = Sprt::new(-5.0, 0.0, 0.05, 0.05, EloModel::Logistic).unwrap();
        let tolerance = speed_tolerance(None, &bounds);
        let as_played = estimate(1.20, 1.19, 1.21);
        assert!(!games_contradict_speed(&charged, &as_played, tolerance));
        assert!(games_contradict_speed(&speed.ratio, &as_played, tolerance));
        let slower = estimate(1.05, 1.04, 1.06);
        assert!(decision_rests_on_contradicted_speed(
            SprtDecision::AcceptH1,
            &charged,
            &slower,
            tolerance
        ));
        assert!(!decision_rests_on_contradicted_speed(
            SprtDecision::AcceptH1,
            &speed.ratio,
            &slower,
            tolerance
        ));
        // Fresh games at node odds, and resumed ones at equal nodes, are charged this run's speed.
        for (setup, games_at) in [
            (setup(false), GamesAt::NodeOdds),
            (setup(true), GamesAt::EqualNodes),
        ] {
            let (charged, by) = setup.charged(games_at, &speed);
            assert_eq!(by, ChargedBy::Measured(SpeedSource::Nps));
            assert_eq!(charged, speed.ratio);
        }
    }
}
