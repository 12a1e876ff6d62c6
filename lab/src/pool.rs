//! The calibration position pool: positions from self-play games with randomised openings,
//! deduplicated and stratified so every material bucket, and both quiet and tactical
//! positions, are equally represented.
//!
//! Generation is deterministic for a given seed and count: games run in parallel, but each
//! game has its own seed and results are merged in game order.

use std::path::{Path, PathBuf};

use crate::positions::{write_pool, SplitMix};
use anyhow::{bail, Result};
use rayon::prelude::*;
use squall::movegen::{legal_moves, noisy_moves};
use squall::search::{see_ge, Limits, Searcher, Silent};
use squall::tier::{material_bucket, MATERIAL_BUCKETS};
use squall::Board;
use std::collections::HashSet;
use std::sync::atomic::AtomicBool;

/// The seed of a pool's or book's `index`-th draw: the run's seed mixed with the index by a
/// 64-bit odd constant, so neighbouring draws are unrelated.
fn draw_seed(seed: u64, index: u64) -> u64 {
    seed ^ index.wrapping_mul(0xA24B_AED4_963E_E407)
}
/// Self-play games played (in parallel) between two looks at the pool's strata or the book.
const DRAWS_PER_BATCH: usize = 64;
/// A pool keeps this many candidates per stratum for each it needs, so the final draw is a
/// sample, not the first positions found.
const CANDIDATES_PER_NEEDED: usize = 3;
/// A pool gives up after `count / POSITIONS_ASKED_PER_GAME` games (at least
/// [`MIN_POOL_GAMES`]): enough that the rarest strata fill.
const POSITIONS_ASKED_PER_GAME: usize = 4;
const MIN_POOL_GAMES: usize = 256;
/// A book gives up after this many draws per opening asked for (at least
/// [`MIN_BOOK_DRAWS`]): roughly a third of drawn openings are balanced.
const BOOK_DRAWS_PER_OPENING: u64 = 20;
const MIN_BOOK_DRAWS: u64 = 1000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PositionKind {
    /// Not in check and no capture that wins material: the stand-pat world.
    Quiet,
    /// In check, or a capture or promotion that SEE says wins material.
    Tactical,
}

impl PositionKind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            PositionKind::Quiet => "quiet",
            PositionKind::Tactical => "tactical",
        }
    }
}

#[derive(Clone, Debug)]
pub struct PoolPosition {
    pub fen: String,
    pub bucket: usize,
    pub kind: PositionKind,
}

impl PoolPosition {
    /// One EPD line: the FEN, then a comment the engine ignores.
    pub(crate) fn to_line(&self) -> String {
        format!(
            "{} ; c0 \"material_bucket={} kind={}\"",
            self.fen,
            self.bucket,
            self.kind.name()
        )
    }
}

pub fn position_kind(board: &Board) -> PositionKind {
    if board.in_check() || noisy_moves(board).iter().any(|&mv| see_ge(board, mv, 1)) {
        PositionKind::Tactical
    } else {
        PositionKind::Quiet
    }
}

/// How games are played.
#[derive(Clone, Copy, Debug)]
pub(crate) struct GameSettings {
    /// Random plies at the start of each game.
    pub(crate) random_plies: (usize, usize),
    /// Node budget per engine move: small, so games are quick but not random.
    pub(crate) nodes_per_move: u64,
    pub(crate) max_plies: usize,
}

impl Default for GameSettings {
    fn default() -> Self {
        GameSettings {
            random_plies: (4, 12),
            nodes_per_move: 1500,
            max_plies: 300,
        }
    }
}

/// Plays one self-play game and returns every position after the random opening.
pub(crate) fn play_game(seed: u64, settings: GameSettings) -> Vec<Board> {
    let mut rng = SplitMix::new(seed);
    let mut board = Board::startpos();
    let mut history: Vec<u64> = Vec::new();
    let mut searcher = Searcher::new(1);
    let stop = AtomicBool::new(false);
    let (lo, hi) = settings.random_plies;
    let random = lo + rng.below(hi - lo + 1);
    let mut positions = Vec::new();
    for ply in 0..settings.max_plies {
        let moves = legal_moves(&board);
        if moves.is_empty() || board.halfmove_clock() >= 100 || repeated(&history, &board) {
            break;
        }
        let mv = if ply < random {
            moves[rng.below(moves.len())]
        } else {
            positions.push(board);
            // A little randomness in the engine's moves too: sometimes a random second choice.
            let limits = Limits {
                nodes: Some(settings.nodes_per_move),
                ..Limits::default()
            };
            searcher.clear();
            let result = searcher.search(&board, &history, &limits, &stop, &mut Silent);
            if rng.below(10) == 0 {
                moves[rng.below(moves.len())]
            } else {
                result.best_move
            }
        };
        history.push(board.key());
        board.play(mv);
        if material_bucket(&board) == 0 && board.occupied().count() <= 3 {
            positions.push(board);
            break;
        }
    }
    positions
}

fn repeated(history: &[u64], board: &Board) -> bool {
    history.iter().filter(|&&k| k == board.key()).count() >= 2
}

/// Counts per (material bucket, kind) of a pool.
pub fn strata(positions: &[PoolPosition]) -> [[usize; 2]; MATERIAL_BUCKETS] {
    let mut counts = [[0; 2]; MATERIAL_BUCKETS];
    for p in positions {
        counts[p.bucket][p.kind as usize] += 1;
    }
    counts
}

/// Generates a stratified pool of `count` positions. `on_progress(games, candidates)` is
/// called after each batch of games.
pub fn generate(
    count: usize,
    seed: u64,
    mut on_progress: impl FnMut(usize, usize),
) -> Vec<PoolPosition> {
    let per_stratum = count.div_ceil(2 * MATERIAL_BUCKETS);
    let mut candidates: Vec<Vec<PoolPosition>> = vec![Vec::new(); 2 * MATERIAL_BUCKETS];
    let mut seen = HashSet::new();
    let mut games = 0usize;
    let settings = GameSettings::default();
    // Stop early once every stratum is full.
    let max_games = (count / POSITIONS_ASKED_PER_GAME).max(MIN_POOL_GAMES);
    while games < max_games {
        let seeds: Vec<u64> = (games..games + DRAWS_PER_BATCH)
            .map(|g| draw_seed(seed, g as u64))
            .collect();
        let played: Vec<Vec<Board>> = seeds.par_iter().map(|&s| play_game(s, settings)).collect();
        for board in played.into_iter().flatten() {
            let key = board.key();
            if !seen.insert(key) {
                continue;
            }
            let bucket = material_bucket(&board);
            let kind = position_kind(&board);
            let slot = &mut candidates[bucket * 2 + kind as usize];
            if slot.len() < per_stratum * CANDIDATES_PER_NEEDED {
                slot.push(PoolPosition {
                    fen: board.to_fen(),
                    bucket,
                    kind,
                });
            }
        }
        games += DRAWS_PER_BATCH;
        let total: usize = candidates.iter().map(|c| c.len().min(per_stratum)).sum();
        on_progress(games, total);
        if candidates.iter().all(|c| c.len() >= per_stratum * 2) {
            break;
        }
    }
    select(candidates, count, seed)
}

/// Draws the pool from the candidates: equal shares per stratum, a short stratum's deficit
/// spread over the others of the same bucket first, then over all.
fn select(mut candidates: Vec<Vec<PoolPosition>>, count: usize, seed: u64) -> Vec<PoolPosition> {
    let mut rng = SplitMix::new(seed ^ 0x5EED);
    for c in candidates.iter_mut() {
        for i in (1..c.len()).rev() {
            c.swap(i, rng.below(i + 1));
        }
    }
    let strata = candidates.len();
    let mut quota = vec![count / strata; strata];
    for q in quota.iter_mut().take(count % strata) {
        *q += 1;
    }
    // Move unfillable quota to the sibling stratum of the same bucket, then anywhere.
    for s in 0..strata {
        let deficit = quota[s].saturating_sub(candidates[s].len());
        if deficit > 0 {
            quota[s] -= deficit;
            let sibling = s ^ 1;
            quota[sibling] += deficit;
        }
    }
    let mut leftover = 0;
    for s in 0..strata {
        let deficit = quota[s].saturating_sub(candidates[s].len());
        quota[s] -= deficit;
        leftover += deficit;
    }
    while leftover > 0 {
        let mut progressed = false;
        for s in 0..strata {
            if leftover > 0 && quota[s] < candidates[s].len() {
                quota[s] += 1;
                leftover -= 1;
                progressed = true;
            }
        }
        if !progressed {
            break;
        }
    }
    let mut pool: Vec<PoolPosition> = Vec::with_capacity(count);
    for (s, c) in candidates.iter().enumerate() {
        pool.extend(c.iter().take(quota[s]).cloned());
    }
    pool
}

/// Checks that `out` can be written before minutes of generation, and that it names no
/// existing file (a pool or book is never replaced). Missing directories are created at the
/// end, as for every file the lab writes.
pub fn check_output(out: &Path) -> Result<()> {
    let shown = out.display();
    if out.is_dir() {
        bail!("--out {shown} is a directory; give the pool file's name, e.g. {shown}/pool.epd.gz");
    }
    crate::paths::check_new_output("--out", out)
}

/// What `lab pool generate` wrote.
#[derive(Debug, Clone)]
pub(crate) struct PoolWritten {
    pub(crate) requested: usize,
    pub(crate) positions: usize,
    pub(crate) path: PathBuf,
    pub(crate) seconds: f64,
    /// `[quiet, tactical]` positions per material bucket.
    pub(crate) strata: [[usize; 2]; MATERIAL_BUCKETS],
}

/// What `lab pool generate --book` wrote.
#[derive(Debug, Clone)]
pub(crate) struct BookWritten {
    pub(crate) openings: usize,
    pub(crate) path: PathBuf,
    pub(crate) seconds: f64,
    /// Openings drawn to find them.
    pub(crate) tried: u64,
}

/// `lab pool generate`: generates the pool and writes it.
pub(crate) fn generate_command(
    count: usize,
    seed: u64,
    out: &Path,
    progress: &crate::progress::Progress,
) -> Result<PoolWritten> {
    check_output(out)?;
    let started = std::time::Instant::now();
    progress.line(&format!(
        "generating {count} positions (seed {seed}) on {} threads ...",
        rayon::current_num_threads()
    ));
    let positions = generate(count, seed, |games, filled| {
        progress.line(&format!("  {games} games, {filled}/{count} positions"));
    });
    write_pool(out, &pool_text(&positions, count, seed))?;
    Ok(PoolWritten {
        requested: count,
        positions: positions.len(),
        path: out.to_path_buf(),
        seconds: started.elapsed().as_secs_f64(),
        strata: strata(&positions),
    })
}

/// Plies of a book opening, chosen per opening in this range.
const BOOK_PLIES: (usize, usize) = (8, 12);
/// Opening moves are drawn among those whose short search is within this many centipawns of
/// the best, so openings vary without giving material away.
const BOOK_MOVE_SPREAD_CP: i32 = 40;
/// Nodes of the short search that scores each candidate opening move.
const BOOK_MOVE_NODES: u64 = 1000;
/// Depth of the search that judges a finished opening, and the largest score it may show.
const BOOK_CHECK_DEPTH: i32 = 8;
const BOOK_MAX_SCORE_CP: i32 = 50;

/// A balanced opening: 8 to 12 plies of plausible moves from the start position whose depth-8
/// score is within 50 cp. Deterministic per seed; `None` when it turned out unbalanced.
pub(crate) fn book_opening(seed: u64) -> Option<(Board, i32)> {
    let mut rng = SplitMix::new(seed);
    let mut board = Board::startpos();
    let mut searcher = Searcher::new(1);
    let stop = AtomicBool::new(false);
    let plies = BOOK_PLIES.0 + rng.below(BOOK_PLIES.1 - BOOK_PLIES.0 + 1);
    let mut history: Vec<u64> = Vec::new();
    for _ in 0..plies {
        let moves = legal_moves(&board);
        let limits = Limits {
            nodes: Some(BOOK_MOVE_NODES),
            ..Limits::default()
        };
        let mut scored = Vec::with_capacity(moves.len());
        for &mv in moves.iter() {
            let mut child = board;
            child.play(mv);
            if legal_moves(&child).is_empty() {
                continue;
            }
            searcher.clear();
            history.push(board.key());
            let result = searcher.search(&child, &history, &limits, &stop, &mut Silent);
            history.pop();
            scored.push((mv, -result.score_cp));
        }
        let best = scored.iter().map(|&(_, score)| score).max()?;
        let candidates: Vec<_> = scored
            .iter()
            .filter(|&&(_, score)| score >= best - BOOK_MOVE_SPREAD_CP)
            .collect();
        let &(mv, _) = candidates[rng.below(candidates.len())];
        history.push(board.key());
        board.play(mv);
    }
    searcher.clear();
    let result = searcher.search(
        &board,
        &history,
        &Limits::depth(BOOK_CHECK_DEPTH),
        &stop,
        &mut Silent,
    );
    (result.score_cp.abs() <= BOOK_MAX_SCORE_CP).then_some((board, result.score_cp))
}

/// `lab pool generate --book`: `count` distinct balanced openings, one EPD line each.
pub(crate) fn book_command(
    count: usize,
    seed: u64,
    out: &Path,
    progress: &crate::progress::Progress,
) -> Result<BookWritten> {
    check_output(out)?;
    let started = std::time::Instant::now();
    progress.line(&format!(
        "generating {count} openings (seed {seed}) on {} threads ...",
        rayon::current_num_threads()
    ));
    let mut seen = HashSet::new();
    let mut lines = Vec::with_capacity(count);
    let mut tried = 0u64;
    let batch = DRAWS_PER_BATCH as u64;
    let max_tries = (count as u64)
        .saturating_mul(BOOK_DRAWS_PER_OPENING)
        .max(MIN_BOOK_DRAWS);
    while lines.len() < count && tried < max_tries {
        let openings: Vec<Option<(Board, i32)>> = (tried..tried + batch)
            .into_par_iter()
            .map(|i| book_opening(draw_seed(seed, i)))
            .collect();
        tried += batch;
        for (board, score) in openings.into_iter().flatten() {
            if lines.len() < count && seen.insert(board.key()) {
                lines.push(format!("{} ; c0 \"score={score:+}\"", board.to_fen()));
            }
        }
        progress.line(&format!(
            "  {tried} drawn, {}/{count} openings",
            lines.len()
        ));
    }
    if lines.len() < count {
        bail!(
            "only {} balanced openings in {tried} tries; ask for fewer",
            lines.len()
        );
    }
    let mut text = format!(
        "# squall lab opening book: {count} openings, seed {seed}, {}-{} plies of moves within \
         {BOOK_MOVE_SPREAD_CP} cp of the best, depth-{BOOK_CHECK_DEPTH} score within \
         {BOOK_MAX_SCORE_CP} cp (score from the side to move)\n",
        BOOK_PLIES.0, BOOK_PLIES.1
    );
    for line in &lines {
        text.push_str(line);
        text.push('\n');
    }
    write_pool(out, &text)?;
    Ok(BookWritten {
        openings: count,
        path: out.to_path_buf(),
        seconds: started.elapsed().as_secs_f64(),
        tried,
    })
}

/// The pool file's contents: a header comment, then one EPD line per position.
pub fn pool_text(positions: &[PoolPosition], count: usize, seed: u64) -> String {
    let mut text = format!(
        "# squall calibration pool: {} positions (requested {count}), seed {seed}, \
         stratified by material bucket x quiet/tactical\n",
        positions.len()
    );
    let counts = strata(positions);
    for (bucket, c) in counts.iter().enumerate() {
        text.push_str(&format!(
            "# bucket {bucket}: quiet {} tactical {}\n",
            c[PositionKind::Quiet as usize],
            c[PositionKind::Tactical as usize]
        ));
    }
    for p in positions {
        text.push_str(&p.to_line());
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn book_openings_are_deterministic_balanced_and_in_range() {
        let mut balanced = 0;
        for seed in 0..4 {
            let first = book_opening(seed);
            let again = book_opening(seed);
            assert_eq!(
                first.map(|(board, score)| (board.key(), score)),
                again.map(|(board, score)| (board.key(), score)),
                "seed {seed} is deterministic"
            );
            let Some((board, score)) = first else {
                continue;
            };
            balanced += 1;
            assert!(score.abs() <= BOOK_MAX_SCORE_CP);
            let plies = (usize::from(board.fullmove_number()) - 1) * 2
                + usize::from(board.side_to_move() == squall::Color::Black);
            assert!(
                (BOOK_PLIES.0..=BOOK_PLIES.1).contains(&plies),
                "{plies} plies"
            );
        }
        assert!(balanced > 0, "some of four draws are balanced");
    }

    #[test]
    fn games_are_deterministic_per_seed() {
        let settings = GameSettings {
            max_plies: 40,
            ..GameSettings::default()
        };
        let a: Vec<u64> = play_game(7, settings).iter().map(Board::key).collect();
        let b: Vec<u64> = play_game(7, settings).iter().map(Board::key).collect();
        assert_eq!(a, b);
        assert!(!a.is_empty());
    }

    #[test]
    fn selection_balances_strata_and_moves_deficits() {
        let make = |bucket, kind, n: usize| {
            (0..n)
                .map(|i| PoolPosition {
                    fen: format!("{bucket}-{i}"),
                    bucket,
                    kind,
                })
                .collect::<Vec<_>>()
        };
        let mut candidates = Vec::new();
        for b in 0..MATERIAL_BUCKETS {
            candidates.push(make(b, PositionKind::Quiet, if b == 0 { 2 } else { 50 }));
            candidates.push(make(b, PositionKind::Tactical, 50));
        }
        let pool = select(candidates, 160, 1);
        assert_eq!(pool.len(), 160);
        let counts = strata(&pool);
        // Bucket 0 quiet had only 2: its tactical sibling takes the rest of the bucket's share.
        assert_eq!(counts[0], [2, 18]);
        for c in counts.iter().skip(1) {
            assert_eq!(c[0] + c[1], 20);
        }
    }
}
