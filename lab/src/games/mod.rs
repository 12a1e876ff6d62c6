//! `lab match`: games between two engines, refereed by the lab, with the statistics OpenBench
//! and fishtest use (pentanomial counts, Elo with CIs, GSPRT).
//!
//! The pipeline: [`MatchOptions`] (the [`rules`], a [`book`] and two engine specs, each a
//! revision built through the lab's cache or `exe:PATH`) become two engine setups
//! ([`contestants`]); [`runner`] plays the scheduled games ([`game`], with the [`referee`]
//! checking every move and the lab's own clock) and appends them to the [`results`] file and
//! the PGN; [`summary`] computes the statistics ([`sprt`]) and [`trajectory`] how they moved
//! pair by pair; `report::matches` and the HTML page format them. [`merge`] pools the shards
//! of one match.

pub mod book;
pub(crate) mod conclusion;
mod contestants;
pub(crate) mod game;
mod merge;
pub(crate) mod pgn;
pub(crate) mod referee;
pub mod results;
pub mod rules;
pub(crate) mod runner;
pub(crate) mod scale;
pub mod sprt;
pub(crate) mod summary;
pub(crate) mod trajectory;
pub(crate) mod uci_process;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use serde::Serialize;

use self::book::{shuffled_order, Book, BookIdentity};
use self::conclusion::{Conclusion, Ending};
use self::contestants::Contestants;
pub(crate) use self::game::Sitting;
use self::game::{GameId, GameRecord, GameSettings};
use self::results::{
    schedule, Contestant, Header, MatchSettings, MayDiffer, NpsScale, ResultsFile, Shard,
};
use self::rules::{
    describe_limits, AdjudicationRules, DrawAdjudication, Limit, ResignAdjudication, RulesKept,
    SideLimits,
};
pub(crate) use self::runner::Pace;
use self::runner::{Arena, PgnFile, StatusScope, Stop};
use self::sprt::{EloModel, Sprt, SprtDecision};
use self::summary::{summarize, SprtState, Summary};
use self::trajectory::{trajectory, TrajectoryPoint};
use crate::digits::{format_duration, thousands};
use crate::lab::Lab;
use crate::machine::Provenance;
use crate::paths::{refuse_aliases, same_file, NamedPath};
use crate::progress::Progress;
use crate::schema::{Kind, MATCH_JSON_SCHEMA_VERSION};
use crate::side::Side;

/// Prefix of an engine given as a binary instead of a revision.
pub(crate) const EXE_PREFIX: &str = "exe:";

/// What `lab match` and `lab match merge` report.
#[derive(Debug, Clone, Serialize)]
pub struct MatchReport {
    pub(crate) schema_version: u32,
    pub(crate) kind: Kind,
    /// A, then B.
    pub(crate) engines: [Contestant; 2],
    /// Both sides' limits in words: `tc 10+0.1`, or `A nodes 5,000, B tc 10+0.1`.
    pub(crate) tc: String,
    /// A's limit (the match's, when both sides share it).
    pub(crate) limit: Limit,
    /// A's limit, then B's.
    pub(crate) limits: SideLimits,
    pub(crate) book: BookIdentity,
    pub(crate) seed: u64,
    /// The most games of the whole match (`--games`, `--max-games`); in JSON `games_budget`.
    #[serde(rename = "games_budget")]
    pub(crate) max_games: u64,
    /// Shards pooled into this report (`[1/1]` for an unsharded match).
    pub(crate) shards: Vec<Shard>,
    #[serde(flatten)]
    pub(crate) summary: Summary,
    /// Why the games stopped: budget, sprt, faults.
    pub(crate) stopped_by: &'static str,
    /// How the match ended: in the JSON, `verdict` (a sentence) and `exit_code`.
    #[serde(flatten)]
    pub(crate) conclusion: Conclusion,
    pub(crate) results_file: Option<String>,
    pub(crate) pgn_file: Option<String>,
    pub(crate) concurrency: Option<usize>,
    pub(crate) elapsed_s: Option<f64>,
    pub(crate) games_per_minute: Option<f64>,
    /// This run's own games and time, for a caller that plays its games in steps; not in the
    /// JSON, which has `elapsed_s` and `games_per_minute`.
    #[serde(skip)]
    pub(crate) pace: Pace,
    /// When and where this run's games were played (the HTML page's footer); `None` for a
    /// merge, which has `shards_started` instead.
    pub(crate) measured: Option<Provenance>,
    /// Of a merge: each shard's machine and the time its results file was started, as its
    /// header records them (in shard order; a file from a lab that did not record them is
    /// absent). Empty for a match that was played, not merged.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) shards_started: Vec<ShardStarted>,
    /// The statistics after each completed pair, thinned (the `trajectory` module).
    pub(crate) trajectory: Vec<TrajectoryPoint>,
    /// `--maxmoves`: games were drawn once each side had played this many moves.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) max_moves: Option<u32>,
    /// The draw and resign rules the games were adjudicated by.
    pub(crate) adjudication: AdjudicationRules,
    /// `--scale-nps`: how this run's clocks were scaled (`None` for a merge, whose shards
    /// each record their own).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) nps_scale: Option<NpsScale>,
}

impl MatchReport {
    /// An interrupted match judged again at `sprt` without a game: its SPRT state and the LLRs
    /// of its trajectory, from `games`, the games it reports in their recorded order. When
    /// `games` are not those it counts (the results file could not be read back), the
    /// trajectory is left empty rather than drawn at other bounds. It stays interrupted: the
    /// run stopped because it was asked to.
    pub(crate) fn interrupted_judged_again(&mut self, games: &[GameRecord], sprt: &Sprt) {
        debug_assert!(matches!(self.conclusion.ending, Ending::Interrupted { .. }));
        self.summary.sprt = Some(SprtState::of(sprt, &self.summary.pentanomial));
        self.trajectory = if games.len() as u64 == self.summary.games {
            trajectory(games, Some(sprt))
        } else {
            Vec::new()
        };
    }
}

/// What a side's full engine spec (`--engine-a "cmd=... name=... args=... dir=..."`) adds to
/// the short forms.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SideSetup {
    /// The PGN and report name, instead of the engine's `id name`.
    pub(crate) name: Option<String>,
    /// Arguments of the engine process.
    pub(crate) args: Vec<String>,
    /// The engine process's working directory; a relative `cmd` is found in it.
    pub(crate) dir: Option<PathBuf>,
}

/// The match-runner conventions of fastchess, cutechess-cli and OpenBench a match may use.
#[derive(Debug, Clone, Default)]
pub(crate) struct RunnerConventions {
    /// A's and B's full specs.
    pub(crate) sides: [SideSetup; 2],
    /// `--maxmoves N`: a draw once each side has played N moves.
    pub(crate) max_moves: Option<u32>,
    /// `--scale-nps REF_NPS`: both clocks scaled by REF_NPS / A's bench NPS.
    pub(crate) scale_nps: Option<u64>,
}

/// Whether a match continues an earlier results file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Resume {
    /// A new results file.
    No,
    /// `--out`, or the newest results file with these settings; none is an error.
    Required,
    /// The newest results file of the same binaries with these settings, under any names, or a
    /// new one when there is none: for commands that play several matches (an interruption
    /// leaves some not yet begun) on the commit their revision resolved to (`lab speed-elo`),
    /// where a later commit that builds the same engine must not restart the games.
    IfAnyOfTheseBinaries,
    /// This results file, whose SPRT bounds may differ from this run's: `lab verdict` shifts
    /// them by each run's new measurement of the speed. The LLR is taken anew over every
    /// recorded pair. The engines are the same binaries, whatever the revisions were called.
    Rebounded(PathBuf),
}

/// The most games a match plays (`--games`; `--max-games` of `lab verdict`): even, since each
/// opening is a pair of games. Not part of what the games are (a pair's opening follows the
/// seed and its index), so a resume may change it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MaxGames {
    /// Given on the command line: a resumed match takes it, raised to cover the pairs it has
    /// recorded, so a maximum below them plays out only an unfinished pair.
    Given(u64),
    /// The command's default: a resumed match keeps its file's maximum.
    Default(u64),
}

impl MaxGames {
    pub(crate) fn games(self) -> u64 {
        match self {
            MaxGames::Given(games) | MaxGames::Default(games) => games,
        }
    }

    /// The most games of a resumed match that recorded `recorded` and was started with `started`.
    fn resumed(self, started: u64, recorded: &[GameRecord]) -> u64 {
        let scheduled = recorded
            .iter()
            .map(|game| (game.id.pair + 1).saturating_mul(2))
            .max()
            .unwrap_or(0);
        match self {
            MaxGames::Given(games) => games.max(scheduled),
            MaxGames::Default(_) => started,
        }
    }
}

/// Where and when one merged shard was started.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ShardStarted {
    pub(crate) shard: Shard,
    #[serde(flatten)]
    pub(crate) started: Provenance,
}

/// What `lab match A B` plays: every setting parsed and checked, the book loaded.
#[derive(Debug, Clone)]
pub(crate) struct MatchOptions {
    /// A, then B: a revision (anything git understands, or WORKTREE) or `exe:PATH`.
    pub(crate) engines: [String; 2],
    /// The UCI options of A and of B, `(name, value)`; each must be one the engine declares.
    pub(crate) uci_options: [Vec<(String, String)>; 2],
    /// Hash in MB, sent to an engine that has the option.
    pub(crate) hash: Option<u32>,
    /// A's limit, then B's; the game loop gives each engine its own.
    pub(crate) limits: SideLimits,
    /// How far past its clock (or movetime) an engine may answer before it loses on time.
    pub(crate) timemargin_ms: u64,
    pub(crate) draw: Option<DrawAdjudication>,
    pub(crate) resign: Option<ResignAdjudication>,
    pub(crate) sprt: Option<Sprt>,
    pub(crate) elo_model: EloModel,
    /// The most games of the whole match.
    pub(crate) games: MaxGames,
    pub(crate) shard: Shard,
    pub(crate) book: Book,
    /// Seed of the opening order.
    pub(crate) seed: u64,
    /// Games played at once (default: the number of cores).
    pub(crate) concurrency: Option<u32>,
    /// The results file (default: a fresh one under the match directory, or with `resume`
    /// the newest there with these settings).
    pub(crate) out: Option<PathBuf>,
    /// The PGN (default: beside the results file).
    pub(crate) pgn: Option<PathBuf>,
    /// Whether to continue the games of an existing results file played with the same settings.
    pub(crate) resume: Resume,
    /// The other files this run writes (the report's exports): the match's files may not be
    /// any of them.
    pub(crate) exports: Vec<NamedPath>,
    pub(crate) conventions: RunnerConventions,
    /// On SIGINT or SIGTERM during the games, end them and report the games so far (exit 130)
    /// rather than exit at once: `lab match`, whose report is the games.
    pub(crate) report_on_interrupt: bool,
    /// A run that plays its games in steps (`lab verdict --speed-from games`): this run ends
    /// once this many games are recorded. The results file keeps the whole maximum, so any later
    /// `--resume` plays on to it, and the status line counts to it (its total and its ETA).
    pub(crate) pause_at: Option<u64>,
    /// The games this run's earlier steps played and the time they took, so that a step's
    /// status line and expected duration pace by the whole run.
    pub(crate) earlier_steps: Pace,
    /// The run of the lab the games are played in: a run in steps keeps one for all of them.
    pub(crate) sitting: Sitting,
    /// The adjudication rules a resumed results file keeps as recorded (`lab speed-elo`'s
    /// rules not given).
    pub(crate) rules_kept_on_resume: RulesKept,
}

impl MatchOptions {
    /// The games the verdict commands play: `engines` at `limits`, the default book in a
    /// fixed order (so a rerun replays the openings), no adjudication, no options; the fields
    /// a command needs otherwise are set over this.
    pub(crate) fn self_play(
        engines: [String; 2],
        limits: SideLimits,
        games: MaxGames,
        concurrency: Option<u32>,
        exports: Vec<NamedPath>,
    ) -> Result<Self> {
        Ok(MatchOptions {
            engines,
            uci_options: [Vec::new(), Vec::new()],
            hash: None,
            limits,
            timemargin_ms: 0,
            draw: None,
            resign: None,
            sprt: None,
            elo_model: EloModel::Logistic,
            games,
            shard: Shard::WHOLE,
            book: Book::load(None, None)?,
            seed: SELF_PLAY_SEED,
            concurrency,
            out: None,
            pgn: None,
            resume: Resume::No,
            exports,
            conventions: RunnerConventions::default(),
            report_on_interrupt: false,
            pause_at: None,
            earlier_steps: Pace::default(),
            sitting: Sitting::now(),
            rules_kept_on_resume: RulesKept::default(),
        })
    }
}

/// The opening order of [`MatchOptions::self_play`]: fixed, so a rerun replays the openings.
const SELF_PLAY_SEED: u64 = 1;

/// `lab match A B`. The revisions come from the lab's repository; two `exe:` engines need none
/// (the match files then go under ./target/lab/match/ when there is no repository).
pub(crate) fn run(lab: &Lab, options: MatchOptions) -> Result<MatchReport> {
    let progress = lab.progress();
    let MatchOptions {
        engines: specs,
        uci_options,
        hash,
        limits,
        timemargin_ms,
        draw,
        resign,
        sprt,
        elo_model,
        games,
        shard,
        book,
        seed,
        concurrency,
        out,
        pgn,
        resume,
        exports,
        conventions,
        report_on_interrupt,
        pause_at,
        earlier_steps,
        sitting,
        rules_kept_on_resume,
    } = options;
    let RunnerConventions {
        sides,
        max_moves,
        scale_nps,
    } = conventions;

    let contestants =
        Contestants::prepare(lab, &specs, &sides, &uci_options, (hash, limits), progress)?;
    let identities = contestants.identities.clone();
    let mut settings = MatchSettings {
        engines: identities.clone(),
        limits,
        book: book.identity.clone(),
        seed,
        draw_adjudication: draw,
        resign_adjudication: resign,
        timemargin_ms,
        games: games.games(),
        sprt,
        elo_model,
        max_moves,
        scale_nps,
    };
    let concurrency = concurrency.map_or_else(
        || std::thread::available_parallelism().map_or(1, usize::from),
        |n| n as usize,
    );

    let match_dir = contestants.paths.root.join("match");
    let may_differ = MayDiffer {
        bounds_and_names: matches!(resume, Resume::Rebounded(_) | Resume::IfAnyOfTheseBinaries),
        rules_kept: rules_kept_on_resume,
    };
    let resumed = match (resume, &out) {
        (Resume::No, _) => None,
        (Resume::Rebounded(path), _) => Some(path),
        (_, Some(path)) => Some(path.clone()),
        (Resume::Required, None) => Some(newest_match(&match_dir, &settings, shard, may_differ)?),
        (Resume::IfAnyOfTheseBinaries, None) => {
            newest_match_of_these_binaries(&match_dir, &settings, shard, may_differ)
        }
    };
    let resume = resumed.is_some();
    let Opened {
        results,
        mut recorded,
        shard: header_shard,
        nps_scale,
    } = match resumed {
        Some(path) => {
            let continued = Continued {
                max_games: games,
                shard,
                may_differ,
                scale_nps: scale_nps.is_some(),
            };
            continued.open(&path, &mut settings, &exports, progress)?
        }
        None => {
            let nps_scale = scale_nps
                .map(|reference| {
                    progress.line(&format!(
                        "--scale-nps {reference}: measuring A's bench speed ({concurrency} at once)"
                    ));
                    scale::measure(
                        &contestants.bench_binary,
                        sides[0].dir.as_deref(),
                        concurrency,
                        reference,
                    )
                })
                .transpose()?;
            let header = Header::new(settings.clone(), shard, nps_scale);
            Opened {
                results: new_results(&match_dir, out.as_deref(), &specs, &header, &exports)?,
                recorded: Vec::new(),
                shard,
                nps_scale,
            }
        }
    };
    let pgn_path = pgn.unwrap_or_else(|| results.path().with_extension("pgn"));
    let (mut results, mut pgn) = open_pgn(
        results,
        &pgn_path,
        exports,
        resume.then_some(recorded.as_slice()),
    )?;

    // A shard plays its share whatever its own LLR says: the test is judged on the pooled pairs.
    let stop_on = if shard == Shard::WHOLE {
        sprt.as_ref()
    } else {
        None
    };
    let jobs = until_pause(
        unplayed(&settings, header_shard, &recorded, stop_on),
        recorded.len(),
        pause_at,
    );
    let played_limits = played_limits(limits, nps_scale.as_ref(), progress);
    let arena = Arc::new(Arena {
        setups: contestants.setups,
        settings: GameSettings {
            limits: played_limits,
            timemargin: Duration::from_millis(timemargin_ms),
            draw: settings.draw_adjudication,
            resign: settings.resign_adjudication,
            max_moves,
            names: [identities[0].name.clone(), identities[1].name.clone()],
            site: host_name(),
        },
        order: shuffled_order(book.openings.len(), seed),
        book,
        concurrency: concurrency.min(jobs.len().max(1)),
        sitting,
    });
    // A resumed match's first step paces by its latest recorded games; a later step of the
    // same run by the run's own earlier steps.
    let paced_before = if earlier_steps.games > 0 {
        earlier_steps
    } else {
        Pace::of_recorded(&recorded, arena.concurrency).unwrap_or_default()
    };
    progress.line(&format!(
        "lab match: {} vs {}, {}, {} games to play{} ({} recorded), concurrency {}, expected \
         duration {}; results {}, PGN {}",
        identities[0].name,
        identities[1].name,
        describe_limits(&played_limits),
        thousands(jobs.len() as u64),
        match pause_at {
            Some(_) => format!(" in this step of {} games", thousands(settings.games)),
            None => String::new(),
        },
        thousands(recorded.len() as u64),
        arena.concurrency,
        expected_duration(
            &limits,
            jobs.len(),
            arena.concurrency,
            paced_before,
            stop_on.is_some()
        ),
        results.path().display(),
        pgn.path().display()
    ));
    let started = Instant::now();
    let played_before = recorded.len();
    let interrupt_guard = report_on_interrupt.then(crate::process::ReportOnInterrupt::start);
    let stop = runner::play(
        arena,
        jobs,
        &mut recorded,
        (&mut results, &mut pgn),
        stop_on,
        StatusScope {
            horizon: pause_at.map(|_| settings.games),
            paced_before,
        },
        progress,
    )?;
    drop(interrupt_guard);
    let elapsed = started.elapsed();
    let files = format!("{} and {}", results.path().display(), pgn.path().display());
    match &stop {
        Stop::IgnoredLimit { side, reason } => bail!(
            "stopped: engine {} ignores its limit ({}): every game would be lost the same way, so the match ends at its first move (last: {reason}); the {} finished games are in {files}",
            side_label(*side),
            played_limits[side.index()],
            recorded.len(),
        ),
        Stop::Faults { side, reason } => bail!(
            "stopped: engine {} faulted in {} games in a row (last: {reason}); the {} finished games are in {files}",
            side_label(*side),
            runner::MAX_CONSECUTIVE_FAULTS,
            recorded.len(),
        ),
        _ => {}
    }
    let run = RunPlayed {
        results: results.path(),
        pgn: pgn.path(),
        games: recorded.len() - played_before,
        concurrency,
        elapsed,
        nps_scale,
    };
    Ok(run.report(&settings, shard, &recorded, &stop))
}

/// What one `lab match` run played, for its report.
struct RunPlayed<'a> {
    results: &'a Path,
    pgn: &'a Path,
    /// Games played by this run (not those it resumed).
    games: usize,
    concurrency: usize,
    elapsed: Duration,
    nps_scale: Option<NpsScale>,
}

impl RunPlayed<'_> {
    /// The report of all `recorded` games, with this run's files, pace and clock scaling.
    fn report(
        self,
        settings: &MatchSettings,
        shard: Shard,
        recorded: &[GameRecord],
        stop: &Stop,
    ) -> MatchReport {
        let elapsed = self.elapsed.as_secs_f64();
        let mut report = build_report(settings, vec![shard], recorded, stop);
        report.results_file = Some(self.results.display().to_string());
        report.pgn_file = Some(self.pgn.display().to_string());
        report.concurrency = Some(self.concurrency);
        report.elapsed_s = Some(elapsed);
        report.games_per_minute = (elapsed > 0.0).then(|| self.games as f64 * 60.0 / elapsed);
        report.pace = Pace {
            games: self.games as u64,
            elapsed: self.elapsed,
        };
        report.measured = Some(Provenance::here_now());
        if let Some(scale) = self.nps_scale {
            report.tc = format!(
                "{} (factor {:.4}: A's bench {} NPS here, reference {})",
                report.tc, scale.factor, scale.measured_nps, scale.reference_nps
            );
            report.nps_scale = Some(scale);
        }
        if *stop == Stop::Interrupted {
            report.conclusion = Conclusion::of_match(Ending::Interrupted {
                played: recorded.len() as u64,
                max_games: settings.games,
            });
        } else if shard != Shard::WHOLE {
            report.conclusion = Conclusion::of_match(Ending::ShardFinished { shard });
        }
        report
    }
}

/// The limits the games are played at: `limits`, or with `--scale-nps` both clocks scaled by
/// the match's factor (said once on the progress line).
fn played_limits(
    limits: SideLimits,
    nps_scale: Option<&NpsScale>,
    progress: &Progress,
) -> SideLimits {
    let Some(scale) = nps_scale else {
        return limits;
    };
    let scaled = scale::scale_limits(limits, scale.factor);
    progress.line(&format!(
        "--scale-nps: A's bench {} NPS, factor {:.4}: {} becomes {}",
        scale.measured_nps,
        scale.factor,
        describe_limits(&limits),
        describe_limits(&scaled)
    ));
    scaled
}

/// A new results file: `out`, or `A-vs-B.jsonl` (numbered when taken, and never one of the
/// `exports`) under the match directory.
fn new_results(
    match_dir: &Path,
    out: Option<&Path>,
    specs: &[String; 2],
    header: &Header,
    exports: &[NamedPath],
) -> Result<ResultsFile> {
    match out {
        Some(path) => ResultsFile::create(path, header),
        None => {
            let taken = |path: &Path| exports.iter().any(|export| same_file(path, &export.path));
            ResultsFile::create_numbered(match_dir, &results_stem(specs), header, taken)
        }
    }
}

/// A setting that differs, by name; an adjudication rule with the flag that gives the
/// recorded one, so the games can be continued as they were played.
fn recorded_rule(name: &str, recorded: &MatchSettings) -> String {
    let rules = recorded.adjudication();
    let flag = |flag: &str, spec: Option<String>| {
        let spec = spec.unwrap_or_else(|| "none".to_string());
        format!("{name}: recorded `{flag} {spec}`")
    };
    match name {
        "draw_adjudication" if rules.in_range() => flag("--draw-adj", rules.draw_spec()),
        "resign_adjudication" if rules.in_range() => flag("--resign-adj", rules.resign_spec()),
        _ => name.to_string(),
    }
}

/// A match's results file, open for appending, with the games it holds.
struct Opened {
    results: ResultsFile,
    recorded: Vec<GameRecord>,
    /// The shard its header names.
    shard: Shard,
    /// The clock scaling the match started with.
    nps_scale: Option<NpsScale>,
}

/// How a match continues an earlier results file.
struct Continued {
    max_games: MaxGames,
    shard: Shard,
    /// The settings that may differ from the file's; adjudication rules that may are the
    /// file's from then on.
    may_differ: MayDiffer,
    /// Whether this run asks for `--scale-nps`.
    scale_nps: bool,
}

impl Continued {
    /// Opens `path` if it was played with `settings` as this shard, and sets the settings'
    /// most games to the resumed match's. The header is rewritten when that maximum changed, or the
    /// bounds this run judges at: the file then reads alone (`lab match merge`) as its last
    /// run judged it.
    fn open(
        &self,
        path: &Path,
        settings: &mut MatchSettings,
        exports: &[NamedPath],
        progress: &Progress,
    ) -> Result<Opened> {
        refuse_aliases(&[NamedPath::new("the resumed results file", path)], exports)?;
        let (mut file, mut header, games) = ResultsFile::resume(path)?;
        let changed = results::resume_differences(&header.settings, settings, self.may_differ);
        if !changed.is_empty() {
            bail!(
                "cannot resume {}: it was played with other settings ({}); start a new match with another --out",
                path.display(),
                changed
                    .iter()
                    .map(|name| recorded_rule(name, &header.settings))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        if header.shard != self.shard {
            bail!(
                "cannot resume {}: it is shard {}/{}, not {}/{}",
                path.display(),
                header.shard.index,
                header.shard.count,
                self.shard.index,
                self.shard.count
            );
        }
        if self.scale_nps && header.nps_scale.is_none() {
            bail!(
                "cannot resume {}: its header records no clock scaling for --scale-nps",
                path.display()
            );
        }
        progress.line(&format!(
            "resuming {} ({} games recorded)",
            path.display(),
            thousands(games.len() as u64)
        ));
        settings.games = self.max_games.resumed(header.settings.games, &games);
        let kept = self.may_differ.rules_kept;
        if kept.draw || kept.resign {
            let recorded = header.settings.adjudication();
            if !recorded.in_range() {
                bail!(
                    "cannot resume {}: its adjudication ({}) is not one the flags could give",
                    path.display(),
                    recorded.words()
                );
            }
            // A rule not kept is the file's already: the settings differ in none but these.
            if recorded != settings.adjudication() {
                progress.line(&format!(
                    "keeping the resumed games' adjudication: {}",
                    recorded.words()
                ));
            }
            settings.draw_adjudication = recorded.draw;
            settings.resign_adjudication = recorded.resign;
        }
        let rebounded = self.may_differ.bounds_and_names
            && settings.sprt.is_some()
            && settings.sprt != header.settings.sprt;
        if rebounded {
            header.settings.sprt = settings.sprt;
        }
        let max_games_changed = settings.games != header.settings.games;
        if max_games_changed {
            progress.line(&format!(
                "the budget is now {} games (it was {}{})",
                thousands(settings.games),
                thousands(header.settings.games),
                if settings.games > self.max_games.games() {
                    ", and the recorded pairs need this many"
                } else {
                    ""
                }
            ));
            header.settings.games = settings.games;
        }
        if rebounded || max_games_changed {
            file.replace_header(&header)?;
        }
        Ok(Opened {
            results: file,
            recorded: games,
            shard: header.shard,
            // The factor the match started with: measured again, the clocks would change
            // mid-match.
            nps_scale: header.nps_scale,
        })
    }
}

/// The PGN beside the results: rewritten from the `resumed` games, or new. None of the match's
/// files may be one of the `exports`; a new results file is discarded if the PGN cannot be
/// opened (it holds only its header).
fn open_pgn(
    results: ResultsFile,
    pgn_path: &Path,
    exports: Vec<NamedPath>,
    resumed: Option<&[GameRecord]>,
) -> Result<(ResultsFile, PgnFile)> {
    let mut outputs = vec![
        NamedPath::new("the results file", results.path()),
        NamedPath::new("the PGN", pgn_path),
    ];
    outputs.extend(exports);
    let opened = refuse_aliases(&[], &outputs).and_then(|()| match resumed {
        Some(recorded) => PgnFile::rewrite(pgn_path, recorded),
        None => PgnFile::create(pgn_path),
    });
    match opened {
        Ok(pgn) => Ok((results, pgn)),
        Err(error) if resumed.is_none() => {
            results.discard()?;
            Err(error)
        }
        Err(error) => Err(error),
    }
}

/// The scheduled games of this shard not yet recorded; none when a resumed match's SPRT had
/// already decided.
fn unplayed(
    settings: &MatchSettings,
    shard: Shard,
    recorded: &[GameRecord],
    stop_on: Option<&Sprt>,
) -> Vec<GameId> {
    let decided = stop_on.is_some_and(|_| {
        summarize(recorded, stop_on)
            .sprt
            .is_some_and(|state| state.result != SprtDecision::Continue)
    });
    if decided {
        return Vec::new();
    }
    let done: std::collections::HashSet<_> = recorded.iter().map(|game| game.id).collect();
    schedule(settings.games, shard)
        .into_iter()
        .filter(|id| !done.contains(id))
        .collect()
}

/// The share of `unplayed` (in schedule order) this run plays: all of it, or with `pause_at`
/// only the games that bring the `recorded` ones up to it.
fn until_pause(mut unplayed: Vec<GameId>, recorded: usize, pause_at: Option<u64>) -> Vec<GameId> {
    if let Some(pause_at) = pause_at {
        let room = usize::try_from(pause_at)
            .unwrap_or(usize::MAX)
            .saturating_sub(recorded);
        unplayed.truncate(room);
    }
    unplayed
}

/// The plan's expected duration in words: at the pace of games already played when there are
/// some (`paced_before`: this run's earlier steps or the latest recorded games), else each
/// game's expected time shared among the workers; or why there is none.
fn expected_duration(
    limits: &SideLimits,
    games: usize,
    concurrency: usize,
    paced_before: Pace,
    sequential: bool,
) -> String {
    let (total, pace_words) = match (paced_before.per_game(), rules::expected_game_time(limits)) {
        (Some(per_game), _) => (
            crate::progress::steps_time(per_game, games as u64),
            format!(
                " at the pace of the last {} games",
                thousands(paced_before.games)
            ),
        ),
        (None, Some(game)) => {
            let rounds = games.div_ceil(concurrency.max(1)) as u32;
            (game.saturating_mul(rounds), String::new())
        }
        (None, None) => {
            return "unknown (a nodes or depth limit takes what the machine takes)".to_string()
        }
    };
    let total = format_duration(total);
    if sequential {
        format!("at most about {total}{pace_words} (the SPRT may stop sooner)")
    } else {
        format!("about {total}{pace_words}")
    }
}

fn build_report(
    settings: &MatchSettings,
    shards: Vec<Shard>,
    games: &[GameRecord],
    stop: &Stop,
) -> MatchReport {
    let summary = summarize(games, settings.sprt.as_ref());
    let played = games.len() as u64;
    let max_games = settings.games;
    let ending = match summary.sprt.as_ref().map(|state| state.result) {
        Some(SprtDecision::AcceptH1) => Ending::AcceptedH1,
        Some(SprtDecision::AcceptH0) => Ending::AcceptedH0,
        Some(SprtDecision::Continue) if played >= max_games => Ending::BudgetSpent,
        // An interrupted match, a shard's share or a merge of some shards: how far it got.
        Some(SprtDecision::Continue) => Ending::Undecided { played, max_games },
        None if played >= max_games => Ending::Finished,
        None => Ending::Played { played, max_games },
    };
    let mut tc = describe_limits(&settings.limits);
    if let Some(reference) = settings.scale_nps {
        tc.push_str(&format!(" scaled to {reference} NPS"));
    }
    if let Some(max_moves) = settings.max_moves {
        tc.push_str(&format!(", maxmoves {max_moves}"));
    }
    MatchReport {
        schema_version: MATCH_JSON_SCHEMA_VERSION,
        kind: Kind::Match,
        engines: settings.engines.clone(),
        tc,
        limit: settings.limits[0],
        limits: settings.limits,
        book: settings.book.clone(),
        seed: settings.seed,
        max_games: settings.games,
        shards,
        summary,
        stopped_by: match stop {
            Stop::MaxGames => "budget",
            Stop::Sprt(_) => "sprt",
            Stop::Faults { .. } | Stop::IgnoredLimit { .. } => "faults",
            Stop::Interrupted => "interrupted",
        },
        conclusion: Conclusion::of_match(ending),
        results_file: None,
        pgn_file: None,
        concurrency: None,
        elapsed_s: None,
        games_per_minute: None,
        pace: Pace::default(),
        measured: None,
        shards_started: Vec::new(),
        trajectory: trajectory(games, settings.sprt.as_ref()),
        max_moves: settings.max_moves,
        adjudication: settings.adjudication(),
        nps_scale: None,
    }
}

/// `A-vs-B`: the name of a new results file under the match directory, numbered by
/// `ResultsFile::create_numbered` when taken.
fn results_stem(specs: &[String; 2]) -> String {
    let slug = |spec: &str| -> String {
        let name = spec
            .strip_prefix(EXE_PREFIX)
            .map_or(spec, |path| path.rsplit('/').next().unwrap_or(path));
        name.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "._-".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    format!("{}-vs-{}", slug(&specs[0]), slug(&specs[1]))
}

/// The newest results file under `dir` played with `settings`, but for the most games, as shard
/// `shard`.
fn newest_match(
    dir: &Path,
    settings: &MatchSettings,
    shard: Shard,
    may_differ: MayDiffer,
) -> Result<PathBuf> {
    let (newest, others) = results::newest(dir, |header| {
        (header.shard == shard
            && results::resume_differences(&header.settings, settings, may_differ).is_empty())
        .then_some(())
    });
    match newest {
        Some((path, ())) => Ok(path),
        None => bail!(
            "--resume: no match with these settings under {} ({others} other results files there); name one with --out",
            dir.display()
        ),
    }
}

/// The newest results file of this shard whose settings differ from `settings` at most in the
/// budget and the engines' names (and SPRT bounds, which a match without an SPRT has none of),
/// and in the adjudication rules `may_differ` keeps.
fn newest_match_of_these_binaries(
    dir: &Path,
    settings: &MatchSettings,
    shard: Shard,
    may_differ: MayDiffer,
) -> Option<PathBuf> {
    let (newest, _) = results::newest(dir, |header| {
        // Rules a file keeps must be ones the flags could give (not a hand-edited header's).
        let rules = header.settings.adjudication();
        (header.shard == shard
            && rules.in_range()
            && results::resume_differences(&header.settings, settings, may_differ).is_empty())
        .then_some(())
    });
    newest.map(|(path, ())| path)
}

fn host_name() -> String {
    crate::machine::hostname().unwrap_or_else(|| "?".to_string())
}

fn side_label(side: Side) -> &'static str {
    match side {
        Side::A => "A",
        Side::B => "B",
    }
}

pub(crate) use self::merge::merge;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_paused_run_plays_the_next_games_in_schedule_order_up_to_the_pause() {
        let unplayed: Vec<GameId> = schedule(20, Shard::WHOLE).split_off(5);
        // Five recorded (the third pair unfinished): a pause at 9 plays that pair's other half
        // and the next pairs, four games in all.
        let share = until_pause(unplayed.clone(), 5, Some(9));
        assert_eq!(share, unplayed[..4].to_vec());
        assert_eq!(share[0], GameId { pair: 2, game: 1 });
        // No pause: all of them; a pause already reached: none, whatever is recorded past it.
        assert_eq!(until_pause(unplayed.clone(), 5, None), unplayed);
        assert!(until_pause(unplayed.clone(), 5, Some(5)).is_empty());
        assert!(until_pause(unplayed, 7, Some(3)).is_empty());
    }

    /// A results file's header line of shard `index`/2, started on `host` at `unix`.
    fn shard_header(index: u32, started: Option<(&str, u64)>) -> String {
        let started = started.map_or(String::new(), |(host, unix)| {
            format!(
                r#","started":{{"measured_unix":{unix},"hostname":"{host}","machine":{{"cpu_model":"Test CPU","cores":4}}}}"#
            )
        });
        format!(
            r#"{{"kind":"lab-match-results","schema_version":1,"shard":{{"index":{index},"count":2}},"settings":{{"engines":[{{"spec":"HEAD","name":"squall A","binary":"k1","commit":"c1","options":[]}},{{"spec":"HEAD","name":"squall B","binary":"k1","commit":"c1","options":[]}}],"limits":[{{"kind":"nodes","nodes":5000}},{{"kind":"nodes","nodes":5000}}],"book":{{"source":"built-in","digest":"d","openings":2000,"plies":null}},"seed":1,"draw_adjudication":null,"resign_adjudication":null,"timemargin_ms":0,"games":100,"sprt":null,"elo_model":"logistic"}}{started}}}"#
        ) + "\n"
    }

    fn merged(headers: &[String]) -> serde_json::Value {
        let dir = tempfile::tempdir().unwrap();
        let files: Vec<PathBuf> = headers
            .iter()
            .enumerate()
            .map(|(index, header)| {
                let path = dir.path().join(format!("shard-{index}.jsonl"));
                std::fs::write(&path, header).unwrap();
                path
            })
            .collect();
        let report = merge(&files, None).unwrap();
        serde_json::to_value(&report).unwrap()
    }

    /// A verdict judges its interrupted games once more at the bounds every game's speed gives:
    /// the LLR its report states and the one its trajectory (the page's plot) ends at are the
    /// same, and the match still says it was interrupted.
    #[test]
    fn an_interrupted_match_judged_again_ends_its_trajectory_at_the_llr_it_states() {
        use self::game::GameResult;
        let header: Header = serde_json::from_str(shard_header(1, None).trim()).unwrap();
        let first = Sprt::new(-5.0, 0.0, 0.05, 0.05, EloModel::Logistic).unwrap();
        let settings = MatchSettings {
            sprt: Some(first),
            ..header.settings
        };
        // B wins its game as White every fourth pair and loses it the pair after, else both
        // games are drawn: even, so the LLR moves with the bounds.
        let games: Vec<GameRecord> = (0..40u64)
            .flat_map(|pair| {
                [0u8, 1].map(|game| GameRecord {
                    id: GameId { pair, game },
                    result: match (pair % 4, game) {
                        (0, 1) => GameResult::WhiteWins,
                        (1, 1) => GameResult::BlackWins,
                        _ => GameResult::Draw,
                    },
                    ..summary::tests::blank_game()
                })
            })
            .collect();
        let mut report = build_report(&settings, vec![Shard::WHOLE], &games, &Stop::Interrupted);
        report.conclusion = Conclusion::of_match(Ending::Interrupted {
            played: 80,
            max_games: 100,
        });
        let before = report.summary.sprt.as_ref().unwrap().llr;
        let shifted = Sprt::new(-15.0, -10.0, 0.05, 0.05, EloModel::Logistic).unwrap();
        report.interrupted_judged_again(&games, &shifted);
        let state = report.summary.sprt.as_ref().unwrap();
        assert_eq!(state.test, shifted);
        assert!((state.llr - before).abs() > 0.1, "{} {before}", state.llr);
        assert_eq!(report.trajectory.last().unwrap().llr, Some(state.llr));
        assert_eq!(report.conclusion.exit(), crate::exit::Exit::Interrupted);
        // Games that are not the report's: no plot at other bounds.
        report.interrupted_judged_again(&games[..10], &shifted);
        assert!(report.trajectory.is_empty());
    }

    #[test]
    fn a_merge_carries_each_shards_machine_and_start() {
        // Given in reverse shard order: the report lists them by shard.
        let report = merged(&[
            shard_header(2, Some(("runner-2", 86_400 + 3_600))),
            shard_header(1, Some(("runner-1", 86_400))),
        ]);
        assert!(report["measured"].is_null(), "{report}");
        let started = report["shards_started"].as_array().unwrap();
        assert_eq!(started.len(), 2, "{report}");
        assert_eq!(started[0]["shard"]["index"], 1);
        assert_eq!(started[0]["hostname"], "runner-1");
        assert_eq!(started[0]["measured_unix"], 86_400);
        assert_eq!(started[1]["hostname"], "runner-2");
        assert_eq!(started[1]["machine"]["cpu_model"], "Test CPU");
    }

    #[test]
    fn a_merge_of_files_that_record_no_machine_lists_the_others() {
        let report = merged(&[shard_header(1, None), shard_header(2, Some(("one", 0)))]);
        let started = report["shards_started"].as_array().unwrap();
        assert_eq!(started.len(), 1, "{report}");
        assert_eq!(started[0]["shard"]["index"], 2);
        let report = merged(&[shard_header(1, None)]);
        assert!(report.get("shards_started").is_none(), "{report}");
    }
}
