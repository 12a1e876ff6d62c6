//! Plays the games of a match on `concurrency` worker threads, each with its own pair of engine
//! processes. The calling thread is the only writer: it appends each finished game to the
//! results file and the PGN, updates the statistics, and stops the match when the SPRT decides
//! or an engine keeps faulting.

use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use super::book::Book;
use super::game::{self, FaultRecord, GameEnd, GameId, GameRecord, GameSettings, Sitting};
use super::results::ResultsFile;
use super::sprt::{self, Sprt, SprtDecision};
use super::summary::{summarize, Summary};
use super::trajectory::PairTally;
use super::uci_process::{EngineSetup, Fault, UciProcess};
use crate::digits::thousands;
use crate::progress::Progress;
use crate::side::Side;

/// Games in a row an engine may lose to faults before the match is stopped.
pub(crate) const MAX_CONSECUTIVE_FAULTS: u32 = 3;
/// How often the writer, waiting for a game, looks whether the lab was interrupted.
const INTERRUPT_POLL: Duration = Duration::from_millis(100);
/// How often the status line's statistics are recomputed over all games.
const STATUS_REDRAW: Duration = Duration::from_secs(1);

/// Everything the workers share.
pub(crate) struct Arena {
    pub(crate) setups: [Arc<EngineSetup>; 2],
    pub(crate) settings: GameSettings,
    pub(crate) book: Book,
    /// The book's openings in the seeded order pairs take them in.
    pub(crate) order: Vec<usize>,
    pub(crate) concurrency: usize,
    /// Written into every game this run plays.
    pub(crate) sitting: Sitting,
}

/// Why the games stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Stop {
    /// Every scheduled game was played (`stopped_by` says "budget").
    MaxGames,
    Sprt(SprtDecision),
    /// An engine lost `MAX_CONSECUTIVE_FAULTS` games in a row to faults; the last reason.
    Faults {
        side: Side,
        reason: String,
    },
    /// An engine searched past its nodes or depth limit: every game would be lost the same way.
    IgnoredLimit {
        side: Side,
        reason: String,
    },
    /// SIGINT or SIGTERM while the lab reports on interrupt ([`crate::process::ReportOnInterrupt`]).
    Interrupted,
}

/// The PGN of a match, appended game by game.
pub(crate) struct PgnFile {
    path: PathBuf,
    file: File,
}

impl PgnFile {
    /// A new PGN, created exclusively: a file there may hold someone's games.
    pub(crate) fn create(path: &Path) -> Result<PgnFile> {
        if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let created = OpenOptions::new().append(true).create_new(true).open(path);
        match created {
            Ok(file) => Ok(PgnFile {
                path: path.to_path_buf(),
                file,
            }),
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => anyhow::bail!(
                "{} already exists: a match's PGN holds only its own games (so --resume can rewrite it); remove it or choose another --pgn",
                path.display()
            ),
            Err(error) => Err(error).with_context(|| format!("creating {}", path.display())),
        }
    }

    /// Rewrites the PGN from the games already recorded (the results file is the truth), then
    /// appends to it.
    pub(crate) fn rewrite(path: &Path, games: &[GameRecord]) -> Result<PgnFile> {
        let text: String = games.iter().map(|game| game.pgn.as_str()).collect();
        crate::paths::write_atomically(path, text.as_bytes())?;
        Self::append_to(path)
    }

    fn append_to(path: &Path) -> Result<PgnFile> {
        let file = OpenOptions::new()
            .append(true)
            .open(path)
            .with_context(|| format!("opening {}", path.display()))?;
        Ok(PgnFile {
            path: path.to_path_buf(),
            file,
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    fn append(&mut self, game: &GameRecord) -> Result<()> {
        self.file
            .write_all(game.pgn.as_bytes())
            .with_context(|| format!("appending to {}", self.path.display()))
    }
}

/// Games played and the time they took.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Pace {
    pub(crate) games: u64,
    pub(crate) elapsed: Duration,
}

/// Recorded games a resumed run paces by before its own: the latest, so a machine that has
/// become slower or faster since the first games shows in the first ETA.
pub(crate) const RECORDED_PACE_GAMES: usize = 100;

impl Pace {
    /// The last [`RECORDED_PACE_GAMES`] of `recorded` as `concurrency` workers play them: each
    /// game's own duration shared among the workers. `None` without recorded games.
    pub(crate) fn of_recorded(recorded: &[GameRecord], concurrency: usize) -> Option<Pace> {
        let latest = &recorded[recorded.len().saturating_sub(RECORDED_PACE_GAMES)..];
        if latest.is_empty() {
            return None;
        }
        let total_ms = latest
            .iter()
            .fold(0u64, |sum, game| sum.saturating_add(game.duration_ms));
        Some(Pace {
            games: latest.len() as u64,
            elapsed: Duration::from_millis(total_ms).div_f64(concurrency.max(1) as f64),
        })
    }

    /// The time a game takes at this pace; `None` before any game.
    pub(crate) fn per_game(self) -> Option<Duration> {
        (self.games > 0).then(|| self.per_game_with(0, Duration::ZERO))
    }

    /// The time a game took over these games and `played` more in `elapsed`.
    fn per_game_with(self, played: u64, elapsed: Duration) -> Duration {
        self.elapsed
            .saturating_add(elapsed)
            .div_f64(self.games.saturating_add(played).max(1) as f64)
    }
}

/// What the status line counts to and paces by beyond this run's own games.
pub(crate) struct StatusScope {
    /// The match's most games, when the run pauses before them.
    pub(crate) horizon: Option<u64>,
    /// Games played before this step that the ETA paces by too: the earlier steps of the same
    /// run, or a resumed match's last recorded games. A step's first games alone read slow
    /// (the engines starting), and every step would open on an ETA hours off.
    pub(crate) paced_before: Pace,
}

/// Plays `jobs`, appending each finished game to `games`, the results file and the PGN.
/// `sprt` stops the match as soon as its LLR crosses a bound.
pub(crate) fn play(
    arena: Arc<Arena>,
    jobs: Vec<GameId>,
    games: &mut Vec<GameRecord>,
    files: (&mut ResultsFile, &mut PgnFile),
    sprt: Option<&Sprt>,
    scope: StatusScope,
    progress: &Progress,
) -> Result<Stop> {
    let (results, pgn) = files;
    let StatusScope {
        horizon,
        paced_before,
    } = scope;
    let total = (games.len() + jobs.len()) as u64;
    let shown = horizon.map_or(total, |horizon| horizon.max(total));
    let queue = Arc::new(Mutex::new(VecDeque::from(jobs)));
    let stop = Arc::new(AtomicBool::new(false));
    let (sender, receiver) = mpsc::channel::<(GameRecord, Handover)>();
    let workers: Vec<_> = (0..arena.concurrency)
        .map(|_| {
            let (arena, queue, stop, sender) = (
                Arc::clone(&arena),
                Arc::clone(&queue),
                Arc::clone(&stop),
                sender.clone(),
            );
            thread::spawn(move || worker(&arena, &queue, &stop, &sender))
        })
        .collect();
    drop(sender);

    let status = progress.status(shown);
    let started = Instant::now();
    let already = games.len();
    let mut consecutive_faults = [0u32; 2];
    let mut pairs = PairTally::default();
    for game in games.iter() {
        pairs.add(game);
    }
    let mut last_redraw: Option<Instant> = None;
    let mut ending = Stop::MaxGames;
    let mut failure = None;
    loop {
        let received = receiver.recv_timeout(INTERRUPT_POLL);
        let interrupted = crate::process::interrupted();
        let (game, _handover) = match received {
            Ok(received) => received,
            Err(mpsc::RecvTimeoutError::Timeout) if !interrupted => continue,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                stop_interrupted(&stop, &mut ending);
                break;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        };
        // The interrupt ended the engines: a game with a fault may be that end, a loss the
        // engine did not make, so it is left to --resume to play again. A game without one
        // ended on the board and is kept.
        if interrupted && game.fault.is_some() {
            stop_interrupted(&stop, &mut ending);
            break;
        }
        if let Err(error) = results.append(&game).and_then(|()| pgn.append(&game)) {
            stop.store(true, Ordering::Relaxed);
            failure = Some(error);
            break;
        }
        if let Some(FaultRecord {
            side,
            fault: Fault::IgnoredLimit { .. },
        }) = &game.fault
        {
            if ending == Stop::MaxGames {
                stop.store(true, Ordering::Relaxed);
                ending = Stop::IgnoredLimit {
                    side: *side,
                    reason: game.reason.clone(),
                };
            }
        }
        for side in [Side::A, Side::B] {
            match &game.fault {
                Some(FaultRecord { side: faulty, .. }) if *faulty == side => {
                    consecutive_faults[side.index()] += 1;
                }
                _ => consecutive_faults[side.index()] = 0,
            }
            if consecutive_faults[side.index()] >= MAX_CONSECUTIVE_FAULTS
                && ending == Stop::MaxGames
            {
                stop.store(true, Ordering::Relaxed);
                ending = Stop::Faults {
                    side,
                    reason: game.reason.clone(),
                };
            }
        }
        let completed_pair = pairs.add(&game);
        games.push(game);
        if let (Some(test), true) = (sprt, completed_pair) {
            let decision = test.decide(test.llr(&pairs.pentanomial));
            if decision != SprtDecision::Continue && ending == Stop::MaxGames {
                stop.store(true, Ordering::Relaxed);
                ending = Stop::Sprt(decision);
            }
        }
        // The full summary walks every game: redraw the status at most every STATUS_REDRAW.
        let last = games.len() as u64 == total || ending != Stop::MaxGames;
        if last || last_redraw.is_none_or(|at: Instant| at.elapsed() >= STATUS_REDRAW) {
            last_redraw = Some(Instant::now());
            let played = (games.len() - already) as u64;
            let remaining = shown.saturating_sub(games.len() as u64);
            let per_game = paced_before.per_game_with(played, started.elapsed());
            let summary = summarize(games, sprt);
            let line = status_line(&summary, shown, remaining, per_game);
            status.update(games.len() as u64, &line, last);
        }
        if interrupted {
            stop_interrupted(&stop, &mut ending);
            break;
        }
    }
    stop.store(true, Ordering::Relaxed);
    // Games still queued are dropped with their handovers, which frees the workers waiting.
    drop(receiver);
    for worker in workers {
        let _ = worker.join();
    }
    status.finish();
    match failure {
        Some(error) => Err(error),
        None => Ok(ending),
    }
}

fn stop_interrupted(stop: &AtomicBool, ending: &mut Stop) {
    stop.store(true, Ordering::Relaxed);
    if *ending == Stop::MaxGames {
        *ending = Stop::Interrupted;
    }
}

/// Handed to the writer with each game; dropped once the writer is done with the game (recorded
/// it, decided the SPRT and fault stops), which lets the worker that played it take the next.
struct Handover(mpsc::Sender<()>);

impl Drop for Handover {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}

fn worker(
    arena: &Arena,
    queue: &Mutex<VecDeque<GameId>>,
    stop: &AtomicBool,
    sender: &mpsc::Sender<(GameRecord, Handover)>,
) {
    let mut engines: [Option<UciProcess>; 2] = [None, None];
    let (done, recorded) = mpsc::channel();
    while !stop.load(Ordering::Relaxed) {
        let Some(id) = queue.lock().ok().and_then(|mut queue| queue.pop_front()) else {
            break;
        };
        let opening_index = Book::opening_index(&arena.order, id.pair);
        let opening = &arena.book.openings[opening_index];
        let mut startup: Option<(Side, Fault)> = None;
        for side in [Side::A, Side::B] {
            if engines[side.index()].is_none() {
                match UciProcess::start(Arc::clone(&arena.setups[side.index()])) {
                    Ok(engine) => engines[side.index()] = Some(engine),
                    Err(fault) => {
                        startup = Some((side, fault));
                        break;
                    }
                }
            }
        }
        let mut record = if let Some((side, fault)) = startup {
            game::forfeit(id, opening_index, opening, side, fault, &arena.settings)
        } else if let [Some(a), Some(b)] = &mut engines {
            match game::play([a, b], id, opening_index, opening, &arena.settings, stop) {
                GameEnd::Finished { record, restart } => {
                    if let Some(side) = restart {
                        engines[side.index()] = None;
                    }
                    *record
                }
                GameEnd::Stopped => break,
            }
        } else {
            continue;
        };
        record.sitting = Some(arena.sitting);
        // Waits until the writer has recorded the game and judged the stop, so a decided
        // match starts no game after its decision.
        if sender.send((record, Handover(done.clone()))).is_err() || recorded.recv().is_err() {
            break;
        }
    }
}

/// `games 120/1000  B +30 =60 -30  [2, 15, 30, 11, 2]  Elo +3.5 ± 20.1  LLR 0.41 (-2.94, 2.94)  ETA 4m10s`
///
/// The ETA is the time to the last game, or to the SPRT's decision when that is expected
/// sooner (`SprtState::games_to_decision`); then the line says so and how many games that is.
fn status_line(summary: &Summary, total: u64, remaining: u64, per_game: Duration) -> String {
    let mut line = format!(
        "games {}/{}  B +{} ={} -{}  [{}]",
        thousands(summary.games),
        thousands(total),
        summary.wdl.wins,
        summary.wdl.draws,
        summary.wdl.losses,
        summary
            .pentanomial
            .0
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    );
    if summary.too_few_pairs {
        line.push_str(&format!(
            "  Elo {}",
            sprt::too_few_pairs_text(summary.pairs)
        ));
    } else if let Some(elo) = summary.elo {
        line.push_str(&format!(
            "  Elo {} ± {:.1} (n={})",
            crate::digits::signed(elo.in_tenths().value, 1),
            elo.half_width(),
            summary.pairs
        ));
    }
    if let Some(sprt) = &summary.sprt {
        line.push_str(&format!(
            "  LLR {:.2} ({:.2}, {:.2})",
            sprt.llr, sprt.lower, sprt.upper
        ));
    }
    let to_decision = summary
        .sprt
        .as_ref()
        .and_then(|state| state.games_to_decision)
        .filter(|&games| games < remaining);
    let games_left = to_decision.unwrap_or(remaining);
    let eta = crate::progress::steps_time(per_game, games_left);
    line.push_str(&format!("  ETA {}", crate::digits::format_duration(eta)));
    if let Some(games) = to_decision {
        line.push_str(&format!(
            " (~{} more games expected to a decision)",
            thousands(games)
        ));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_paces_by_the_run_not_by_its_own_first_games() {
        // 200 games in 10 minutes, then a step's first 2 games in 20 s (engines starting).
        let earlier = Pace {
            games: 200,
            elapsed: Duration::from_secs(600),
        };
        let per_game = earlier.per_game_with(2, Duration::from_secs(20));
        assert_eq!(per_game, Duration::from_secs(620).div_f64(202.0));
        assert_eq!(
            Pace::default().per_game_with(2, Duration::from_secs(20)),
            Duration::from_secs(10)
        );
        assert_eq!(
            Pace::default().per_game_with(0, Duration::from_secs(20)),
            Duration::from_secs(20)
        );
    }

    #[test]
    fn a_resume_paces_by_its_latest_recorded_games_shared_among_the_workers() {
        let game = |duration_ms| {
            let mut game = crate::games::summary::tests::blank_game();
            game.duration_ms = duration_ms;
            game
        };
        assert_eq!(Pace::of_recorded(&[], 2), None);
        // Older games played slower; only the latest RECORDED_PACE_GAMES count.
        let mut recorded = vec![game(60_000); 50];
        recorded.extend(vec![game(4_000); RECORDED_PACE_GAMES]);
        let pace = Pace::of_recorded(&recorded, 2).unwrap();
        assert_eq!(pace.games, RECORDED_PACE_GAMES as u64);
        assert_eq!(pace.per_game(), Some(Duration::from_secs(2)));
        assert_eq!(
            Pace::of_recorded(&recorded[..3], 1).unwrap().per_game(),
            Some(Duration::from_secs(60))
        );
        assert_eq!(Pace::default().per_game(), None);
        // A file's absurd durations pace an absurd ETA, not a panic.
        let absurd = Pace::of_recorded(&[game(u64::MAX), game(u64::MAX)], 2).unwrap();
        assert!(absurd.per_game_with(1, Duration::MAX) > Duration::ZERO);
    }

    #[test]
    fn the_status_line_groups_counts_as_the_reports_do() {
        let mut summary = summarize(&[], None);
        summary.games = 1234;
        let line = status_line(&summary, 20_000, 18_766, Duration::from_secs(1));
        assert!(line.starts_with("games 1,234/20,000  B +0 =0 -0"), "{line}");
        assert!(line.ends_with("ETA 5h12m"), "{line}");
    }
}
