//! Tiered evaluation. One entry point, `Evaluator::evaluate(board, alpha, beta, search, ..)`
//! (`search`: which search asked, for the exit counters):
//!
//! 1. **super-lazy**: material and piece placement, both kept incrementally by the board
//!    (`crate::placement`), before any pawn work; exits when the score is outside
//!    the window by the super-lazy margins (not when a side has no pieces: pawn races and
//!    mop-up decide those endings, and only the lazy tier sees them);
//! 2. **lazy**: + pawn structure (pawn hash: structure, passers, space, each king's pawn
//!    shelter and the storm against it), the passers' race against the kings, bad trades,
//!    bishop pair, pieces attacked by pawns, mop-up against a bare king; exits by the lazy
//!    margins;
//! 3. **full**: + mobility, attack-based king safety, trapped pieces, rook/queen terms, what
//!    pieces do to passers (blockades, free paths), threats by pieces, tapered.
//!
//! Every tier's score is scaled by drawish-material detection (`drawish_scale`), computed
//! before the first exit.
//!
//! Scores are centipawns from the side to move's point of view.

mod drawish;
mod endgame;
mod full;
pub mod margins;
mod material;
mod pawns;
mod score;

pub use drawish::{bare_king_either_side, drawish_scale, pawn_race_possible, SCALE_NORMAL};
pub use pawns::PawnTable;
pub use score::S;

use crate::attacks;
use crate::board::Board;
use crate::counters::Counters;
#[cfg(feature = "calibrate")]
use crate::tier::danger_class;
use crate::tier::{material_bucket, side_bucket, SearchKind, Tier, TIERS};
use crate::types::{Color, PieceType};

/// An evaluation and where it came from.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Evaluation {
    pub score: i32,
    pub tier: Tier,
    /// Median estimate of the side to move's terms the exiting tier did not count (0 for full).
    pub positional: i32,
}

const BISHOP_PAIR: S = S(30, 50);
/// An extra minor piece against pawns, majors equal: the other side traded a piece for pawns,
/// usually a bad trade.
const EXTRA_MINOR_FOR_PAWNS: S = S(40, 20);
/// Each of a side's knights, bishops, rooks and queens attacked by an enemy pawn.
const ATTACKED_BY_PAWN: S = S(-40, -30);

/// Every per-side component of the evaluation, each from that side's own point of view.
/// Calibration and tests read it; the search only sees the combined score.
#[derive(Clone, Copy, Debug)]
pub struct Breakdown {
    pub phase: i32,
    /// Tapered material and placement of each side (the super-lazy tier).
    pub material: [i32; 2],
    /// Lazy-tier terms beyond material: pawns, passers, space, shelter, bad trades, bishop pair,
    /// pieces attacked by pawns.
    pub lazy: [i32; 2],
    /// The danger to each side's own king from the enemy's attack (the full tier's king term).
    pub king: [i32; 2],
    /// The rest of the full tier.
    pub rest: [i32; 2],
    pub scale: i32,
}

impl Breakdown {
    /// The full evaluation from `color`'s point of view.
    pub fn full_score(&self, color: Color) -> i32 {
        let (us, them) = (color.index(), (!color).index());
        let raw = self.material[us] - self.material[them] + self.lazy[us] - self.lazy[them]
            + self.king[us]
            - self.king[them]
            + self.rest[us]
            - self.rest[them];
        scaled(raw, self.scale)
    }
}

/// Evaluation state that lives across calls: the pawn hash and the tier switch.
pub struct Evaluator {
    pawns: PawnTable,
    cheap_exits: bool,
    #[cfg(feature = "calibrate")]
    calibration: Option<Box<crate::calibrate::Calibration>>,
}

impl Default for Evaluator {
    fn default() -> Self {
        Self::new()
    }
}

impl Evaluator {
    pub fn new() -> Evaluator {
        Evaluator {
            pawns: PawnTable::new(),
            cheap_exits: true,
            #[cfg(feature = "calibrate")]
            calibration: None,
        }
    }

    pub fn clear(&mut self) {
        self.pawns.clear();
    }

    /// With `false`, every call runs the full tier (`squall bench --full-eval`).
    pub fn set_cheap_exits(&mut self, enabled: bool) {
        self.cheap_exits = enabled;
    }

    /// Evaluates `board` for the side to move, exiting early in a cheap tier when its score is
    /// outside `(alpha, beta)` by that tier's margin. `search` only decides where the exit is
    /// counted.
    #[inline]
    pub fn evaluate(
        &mut self,
        board: &Board,
        alpha: i32,
        beta: i32,
        search: SearchKind,
        counters: &mut Counters,
    ) -> Evaluation {
        counters.eval_calls += 1;
        self.pawns.prefetch(board);
        let us = board.side_to_move();
        let (my_bucket, opp_bucket) = (side_bucket(board, us), side_bucket(board, !us));
        let mut lookup = margins::Lookup::new(board, my_bucket, opp_bucket);
        let material_bucket = material_bucket(board);
        let phase = material::phase(board);
        let scale = drawish::drawish_scale(board);
        // A drawish scale shrinks the full score and its residual alike, so a cheap score scaled
        // the same way stays within the same margins: the cheap tiers exit on scaled scores.
        let cheap = self.cheap_exits;
        #[cfg(feature = "calibrate")]
        let full_for_calibration = if cheap {
            self.sample_call(board, alpha, beta, search)
        } else {
            None
        };

        let material = super_lazy_score(board, phase);
        if cheap {
            let score = scaled(material, scale);
            #[cfg_attr(not(feature = "calibrate"), allow(unused_variables))]
            if let Some(failed_high) = lookup
                .super_lazy_exit(score, alpha, beta)
                // A side without pieces (a bare king too) leaves material alone blind to the
                // passer race and the mop-up, which the lazy tier sees. Checked only when the
                // score would exit: most calls do not get that far.
                .filter(|_| !drawish::pawn_race_possible(board))
            {
                counters.record_exit(
                    Tier::SuperLazy,
                    search,
                    material_bucket,
                    my_bucket,
                    opp_bucket,
                );
                #[cfg(feature = "calibrate")]
                self.sample_exit(
                    board,
                    Tier::SuperLazy,
                    failed_high,
                    alpha,
                    beta,
                    full_for_calibration,
                );
                let positional = margins::super_lazy_positional(lookup.pair());
                return Evaluation {
                    score,
                    tier: Tier::SuperLazy,
                    positional: scaled(positional, scale),
                };
            }
        }

        let entry = self.pawns.probe(board);
        let lazy = material + lazy_balance(board, &entry, phase);
        if cheap {
            let score = scaled(lazy, scale);
            #[cfg_attr(not(feature = "calibrate"), allow(unused_variables))]
            if let Some(failed_high) = lookup.lazy_exit(score, alpha, beta) {
                counters.record_exit(Tier::Lazy, search, material_bucket, my_bucket, opp_bucket);
                #[cfg(feature = "calibrate")]
                self.sample_exit(
                    board,
                    Tier::Lazy,
                    failed_high,
                    alpha,
                    beta,
                    full_for_calibration,
                );
                let positional = margins::lazy_positional(lookup.pair());
                return Evaluation {
                    score,
                    tier: Tier::Lazy,
                    positional: scaled(positional, scale),
                };
            }
        }

        let score = full_score(board, &entry, lazy, phase, scale);
        counters.record_exit(Tier::Full, search, material_bucket, my_bucket, opp_bucket);
        Evaluation {
            score,
            tier: Tier::Full,
            positional: 0,
        }
    }

    /// The lazy tier's score for the side to move (material, pawn hash, lazy terms), with the
    /// fixed-cost checks the cheap tiers run. For benchmarks: it never exits or scales.
    pub fn lazy_only(&mut self, board: &Board) -> i32 {
        let phase = material::phase(board);
        std::hint::black_box(fixed_cost_checks(board));
        let entry = self.pawns.probe(board);
        super_lazy_score(board, phase) + lazy_balance(board, &entry, phase)
    }

    /// The full evaluation for the side to move, whatever the window: exactly the score the
    /// full tier of `evaluate` returns.
    pub fn full(&mut self, board: &Board) -> i32 {
        let phase = material::phase(board);
        let entry = self.pawns.probe(board);
        let lazy = super_lazy_score(board, phase) + lazy_balance(board, &entry, phase);
        full_score(board, &entry, lazy, phase, drawish::drawish_scale(board))
    }

    /// Each tier's score for the side to move as `evaluate` computes it: the super-lazy and lazy
    /// scores as their exits test them, and the full score (replay samples, tests).
    pub fn tier_scores(&mut self, board: &Board) -> [i32; TIERS] {
        let phase = material::phase(board);
        let scale = drawish::drawish_scale(board);
        let entry = self.pawns.probe(board);
        let material = super_lazy_score(board, phase);
        let lazy = material + lazy_balance(board, &entry, phase);
        [
            scaled(material, scale),
            scaled(lazy, scale),
            full_score(board, &entry, lazy, phase, scale),
        ]
    }

    /// Every per-side component (calibration, tests).
    pub fn breakdown(&mut self, board: &Board) -> Breakdown {
        let phase = material::phase(board);
        let entry = self.pawns.probe(board);
        let lazy = lazy_terms(board, &entry);
        let full = full_tier(board, &entry);
        Breakdown {
            phase,
            material: per_side(|c| material::side_material(board, c).taper(phase)),
            lazy: per_side(|c| lazy[c.index()].taper(phase)),
            king: per_side(|c| full.king[c.index()].taper(phase)),
            rest: per_side(|c| full.rest[c.index()].taper(phase)),
            scale: drawish::drawish_scale(board),
        }
    }
}

#[cfg(feature = "calibrate")]
impl Evaluator {
    /// Turns sampling on (a `calibrate` run) and returns what the previous run collected.
    pub fn start_calibration(
        &mut self,
        modes: crate::calibrate::Modes,
    ) -> Option<Box<crate::calibrate::Calibration>> {
        self.calibration
            .replace(Box::new(crate::calibrate::Calibration::new(modes)))
    }

    pub fn calibration(&mut self) -> Option<&mut crate::calibrate::Calibration> {
        self.calibration.as_deref_mut()
    }

    pub fn take_calibration(&mut self) -> Option<Box<crate::calibrate::Calibration>> {
        self.calibration.take()
    }

    /// Records the residual histograms and offers the call to the replay samples, and returns
    /// the full score when margin safety needs it.
    fn sample_call(
        &mut self,
        board: &Board,
        alpha: i32,
        beta: i32,
        search: SearchKind,
    ) -> Option<i32> {
        let modes = self.calibration.as_ref()?.modes;
        let race = drawish::pawn_race_possible(board);
        if modes.residual {
            let breakdown = self.breakdown(board);
            self.calibration
                .as_mut()?
                .record_residuals(board, &breakdown, !race);
        }
        if modes.samples.is_some() {
            self.offer_sample(board, alpha, beta, search, race);
        }
        modes.margin_safety.then(|| self.full(board))
    }

    /// Offers the call to its material bucket's reservoir; the tier scores are computed only
    /// for a call the reservoir keeps.
    fn offer_sample(
        &mut self,
        board: &Board,
        alpha: i32,
        beta: i32,
        search: SearchKind,
        race: bool,
    ) {
        let Some(mut calibration) = self.calibration.take() else {
            return;
        };
        let position = calibration.position;
        if let Some(samples) = calibration.samples.as_mut() {
            let us = board.side_to_move();
            samples.offer(material_bucket(board), || {
                let [super_lazy, lazy, full] = self.tier_scores(board);
                crate::calibrate::Sample {
                    position,
                    search,
                    my_bucket: side_bucket(board, us) as u8,
                    opp_bucket: side_bucket(board, !us) as u8,
                    my_class: danger_class(board, us) as u8,
                    opp_class: danger_class(board, !us) as u8,
                    alpha,
                    beta,
                    super_lazy,
                    lazy,
                    full,
                    race,
                }
            });
        }
        self.calibration = Some(calibration);
    }

    fn sample_exit(
        &mut self,
        board: &Board,
        tier: Tier,
        failed_high: bool,
        alpha: i32,
        beta: i32,
        full: Option<i32>,
    ) {
        if let (Some(calibration), Some(full)) = (self.calibration.as_mut(), full) {
            calibration.record_exit(board, tier, failed_high, alpha, beta, full);
        }
    }
}

fn per_side(f: impl Fn(Color) -> i32) -> [i32; 2] {
    [f(Color::White), f(Color::Black)]
}

/// The super-lazy tier's score for the side to move, with the fixed-cost checks it runs
/// (benchmarks: the cost of a super-lazy exit).
pub fn super_lazy_only(board: &Board) -> i32 {
    let phase = material::phase(board);
    std::hint::black_box(fixed_cost_checks(board));
    super_lazy_score(board, phase)
}

/// The checks `evaluate` runs before the super-lazy tier may exit, combined so the benchmark
/// entry points pay for them as the search does (`bare_king_either_side` runs inside
/// `lazy_terms`).
fn fixed_cost_checks(board: &Board) -> i32 {
    drawish::drawish_scale(board) + i32::from(drawish::pawn_race_possible(board))
}

/// The super-lazy tier: tapered material and placement balance for the side to move.
#[inline(never)]
fn super_lazy_score(board: &Board, phase: i32) -> i32 {
    material::balance(board, board.side_to_move(), phase)
}

/// The lazy tier's terms beyond material, as a balance for the side to move.
#[inline(always)]
fn lazy_balance(board: &Board, entry: &pawns::PawnEntry, phase: i32) -> i32 {
    let terms = lazy_terms(board, entry);
    let us = board.side_to_move();
    (terms[us.index()] - terms[(!us).index()]).taper(phase)
}

/// The full score for the side to move from the lazy score and the full tier's terms.
#[inline(always)]
fn full_score(board: &Board, entry: &pawns::PawnEntry, lazy: i32, phase: i32, scale: i32) -> i32 {
    let full = full_tier(board, entry);
    let (us, them) = (
        board.side_to_move().index(),
        (!board.side_to_move()).index(),
    );
    let positional =
        (full.king[us] + full.rest[us] - full.king[them] - full.rest[them]).taper(phase);
    scaled(lazy + positional, scale)
}

/// A score under a drawish scale (`SCALE_NORMAL` keeps all of it).
#[inline(always)]
pub fn scaled(score: i32, scale: i32) -> i32 {
    score * scale / SCALE_NORMAL
}

/// The lazy tier's terms beyond material, per side.
#[inline(never)]
fn lazy_terms(board: &Board, entry: &pawns::PawnEntry) -> [S; 2] {
    let mut terms = entry.score;
    if drawish::bare_king_either_side(board) {
        for color in Color::BOTH {
            terms[color.index()] += endgame::mop_up(board, color);
        }
    }
    for color in Color::BOTH {
        terms[color.index()] += entry.shelter[color.index()]
            + entry.space(board, color)
            + pawns::passer_race(board, color, entry.passed[color.index()]);
        let ours = board.material(color);
        let theirs = board.material(!color);
        if ours.count(PieceType::Bishop) >= 2 {
            terms[color.index()] += BISHOP_PAIR;
        }
        let minors =
            |m: &crate::board::Material| m.count(PieceType::Knight) + m.count(PieceType::Bishop);
        let majors =
            |m: &crate::board::Material| m.count(PieceType::Rook) + 2 * m.count(PieceType::Queen);
        if majors(ours) == majors(theirs) && minors(ours) > minors(theirs) {
            terms[color.index()] += EXTRA_MINOR_FOR_PAWNS;
        }
        let pieces =
            board.color(color) & !board.pieces(PieceType::Pawn) & !board.pieces(PieceType::King);
        let pawn_attacks = attacks::pawn_set(!color, board.colored(!color, PieceType::Pawn));
        terms[color.index()] += ATTACKED_BY_PAWN * (pieces & pawn_attacks).count() as i32;
    }
    terms
}

/// The full tier's terms, per side.
#[inline(never)]
fn full_tier(board: &Board, entry: &pawns::PawnEntry) -> full::FullTerms {
    full::full_terms(board, entry.passed)
}
