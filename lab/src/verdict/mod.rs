//! `lab verdict A B`: one decision for speed and strength. A change does two things: it changes
//! the search tree (its node signature), and it changes how fast nodes are searched. The speed
//! is measured by paired rounds, by callgrind's exact instructions per node
//! (`--speed-from instructions`), or with equal nodes by default by the games' own NPS, and
//! turned into Elo by the engine's exchange rate ([`speed_elo`]);
//! the search is measured by fixed-node games, which replay exactly and do not feel the
//! machine's load. No formatting.
//!
//! The rules, stated once (docs/verdict.md says the same):
//! - **Same signature**: the same tree, so no games. The speed's Elo `X ± σ` (σ read from its
//!   95% interval) is judged as one normal observation by a fixed-sample test at the SPRT's
//!   error rates ([`speed_decision`]): H1 when `X - z(1-α)·σ ≥ elo0`, H0 when
//!   `X + z(1-β)·σ ≤ elo1`. Neither asks for more rounds. The normal GSPRT's LLR is reported
//!   beside it, for reference only: one observation's LLR cannot reach Wald's bounds while σ
//!   is wide.
//! - **Different signatures**: a fixed-node SPRT between A and B, at a node budget matching the
//!   time control, whose bounds are shifted by the speed's Elo: B's total is `search + speed`,
//!   so `total ≥ elo1` is `search ≥ elo1 - speed`. The shift is the lower end of the speed's
//!   95% interval: the speed is credited only what it surely gives, so a change is never
//!   accepted on a speed gain the measurement cannot vouch for.
//! - **Different signatures, `--node-odds`**: the speed is given to B as nodes instead of Elo.
//!   A plays at the budget, B at the budget times the lower end of the speed ratio's 95%
//!   interval (the same rule: only what the speed surely gives), and the games' Elo is the
//!   total, judged against the bounds as given. No model is needed, and no sum is assumed: the
//!   Elo of equal-node play and the Elo of self-play time odds need not add up for a change whose
//!   worth is mostly speed (docs/verdict.md).

pub mod budgets;
pub(crate) mod frontier;
pub mod models;
pub mod speed_elo;
mod stored;

use serde::{Deserialize, Serialize};

use crate::analysis::compare::{Comparison, SpeedEloEstimate};
use crate::games::rules::Limit;
use crate::games::sprt::{Estimate, Sprt, SprtDecision, Z_95};
use crate::games::summary::WiderNpsInterval;
use crate::games::MatchReport;
use crate::paths::LabPaths;
use crate::schema::Kind;

/// Moves a clock's base time is spread over for the typical time of one move: the node budget
/// of a fixed-node verdict is NPS × (base / this + increment).
pub(crate) const TYPICAL_MOVES_PER_CLOCK: u64 = 40;

/// The typical thinking time of one move under `limit`, in milliseconds; `None` for limits
/// without a clock.
pub(crate) fn typical_move_ms(limit: &Limit) -> Option<f64> {
    match *limit {
        Limit::Clock {
            base_ms,
            increment_ms,
        } => Some(base_ms as f64 / TYPICAL_MOVES_PER_CLOCK as f64 + increment_ms as f64),
        Limit::MoveTime { movetime_ms } => Some(movetime_ms as f64),
        Limit::Nodes { .. } | Limit::Depth { .. } => None,
    }
}

/// The games of A against itself at the verdict's clock that measure how long A thinks per
/// move there, for the games' node budget: four openings, both colours. The mean follows the
/// games' lengths (squall's mean time a move differs by a quarter between games at 5+0.05),
/// and the budget is kept once measured, so eight are worth their two minutes at 5+0.05.
pub(crate) const CLOCK_PROBE_GAMES: u64 = 8;

/// The nodes per move that match `limit` for an engine searching `nps` nodes per second; at
/// least 1. `None` for limits without a clock or an unusable NPS.
pub(crate) fn node_budget(nps: f64, limit: &Limit) -> Option<u64> {
    nodes_in(nps, typical_move_ms(limit)?)
}

/// The nodes an engine searching `nps` nodes per second searches in `ms` milliseconds; at
/// least 1. `None` for an unusable NPS or time.
pub(crate) fn nodes_in(nps: f64, ms: f64) -> Option<u64> {
    whole_nodes(nps * ms / 1000.0)
}

/// A node count rounded to a whole budget of at least 1; `None` when not positive and finite.
fn whole_nodes(nodes: f64) -> Option<u64> {
    (nodes.is_finite() && nodes > 0.0).then(|| (nodes.round() as u64).max(1))
}

/// What A's games against itself at the verdict's clock showed ([`CLOCK_PROBE_GAMES`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) struct ClockProbe {
    pub(crate) games: u64,
    /// Moves of both sides (both are A).
    pub(crate) moves: u64,
    /// From `go` to `bestmove`, as the lab's clock saw it.
    pub(crate) mean_time_ms: f64,
    /// As the engine reported them; `None` when it reported none.
    pub(crate) nodes_per_move: Option<f64>,
}

/// The largest LLR a speed-only decision reports. An exact speed (an instruction count) near
/// zero has an Elo interval of almost no width, so the LLR runs to 10^15 or to infinity, which
/// JSON cannot hold; at this cap the speed is already certain against any bounds.
pub(crate) const SPEED_LLR_CAP: f64 = 1000.0;

/// The speed term's decision when the signatures are equal. The speed's Elo `X` is one normal
/// observation with σ read from its 95% interval, judged with the SPRT's error rates as a
/// fixed-sample test: H1 when `X - z(1-α)·σ ≥ elo0` (so at elo0 it is accepted with probability
/// at most α), H0 when `X + z(1-β)·σ ≤ elo1` (at elo1, at most β); when both hold, the nearer
/// hypothesis by the LLR's sign; when neither, undecided. The LLR returned is the normal GSPRT's,
/// `(elo1 - elo0)·(2X - elo0 - elo1)/(2σ²)`, for the report, within ±`SPEED_LLR_CAP`.
pub(crate) fn speed_decision(speed_elo: &Estimate, sprt: &Sprt) -> (f64, SprtDecision) {
    let sigma = (speed_elo.ci_high - speed_elo.ci_low) / (2.0 * Z_95);
    let centred = 2.0 * speed_elo.value - sprt.elo0 - sprt.elo1;
    let llr = if sigma > 0.0 {
        (sprt.elo1 - sprt.elo0) * centred / (2.0 * sigma * sigma)
    } else if centred > 0.0 {
        f64::INFINITY
    } else if centred < 0.0 {
        f64::NEG_INFINITY
    } else {
        0.0
    }
    .clamp(-SPEED_LLR_CAP, SPEED_LLR_CAP);
    let sigma = sigma.max(0.0);
    let h1 = speed_elo.value - upper_normal_quantile(sprt.alpha) * sigma >= sprt.elo0;
    let h0 = speed_elo.value + upper_normal_quantile(sprt.beta) * sigma <= sprt.elo1;
    let decision = match (h1, h0) {
        (true, false) => SprtDecision::AcceptH1,
        (false, true) => SprtDecision::AcceptH0,
        (true, true) if centred >= 0.0 => SprtDecision::AcceptH1,
        (true, true) => SprtDecision::AcceptH0,
        (false, false) => SprtDecision::Continue,
    };
    (llr, decision)
}

/// `z` with P(Z > z) = `p` for a standard normal Z, `p` in (0, 0.5): √2·erfc⁻¹(2p) (statrs).
fn upper_normal_quantile(p: f64) -> f64 {
    std::f64::consts::SQRT_2 * statrs::function::erf::erfc_inv(2.0 * p)
}

/// The SPRT the fixed-node games play when the signatures differ: the bounds less the lower end
/// of the speed's 95% interval.
pub(crate) fn shifted_sprt(sprt: &Sprt, speed_elo: &Estimate) -> Sprt {
    Sprt {
        elo0: sprt.elo0 - speed_elo.ci_low,
        elo1: sprt.elo1 - speed_elo.ci_low,
        ..*sprt
    }
}

/// Without a speed-Elo model (node odds need none), the precision a speed ratio is asked for:
/// ±1%. At the 115–240 Elo per doubling this engine's self-play has measured, 1% is 1.6–3.4
/// Elo: about half the 5-Elo gap of the usual bounds, what [`speed_tolerance`] asks with a model.
const SPEED_RATIO_TOLERANCE_WITHOUT_MODEL: f64 = 1.01;

/// How far, in doublings of speed, a speed ratio may be off before it matters to the bounds:
/// half the bounds' gap at the model's slope, or ±1% without a model.
pub(crate) fn speed_tolerance(elo_per_doubling: Option<f64>, sprt: &Sprt) -> f64 {
    match elo_per_doubling {
        Some(k) => (sprt.elo1 - sprt.elo0) / 2.0 / k.abs(),
        None => SPEED_RATIO_TOLERANCE_WITHOUT_MODEL.log2(),
    }
}

/// Whether the speed the games themselves showed (B's NPS over A's, game by game, with its 95%
/// interval) contradicts the speed ratio the verdict charged by enough to matter: the two
/// intervals do not meet, and the two ratios differ by more than `tolerance` doublings
/// ([`speed_tolerance`], the precision [`speed_measured_finely`] asks of the speed). Then the
/// bench's positions or machine state do not stand for the games', and the speed the verdict
/// credits, taken from the bench, may be off by that much.
pub(crate) fn games_contradict_speed(
    charged: &Estimate,
    in_games: &Estimate,
    tolerance: f64,
) -> bool {
    let apart = in_games.ci_high < charged.ci_low || in_games.ci_low > charged.ci_high;
    let doublings_apart = (in_games.value / charged.value).log2().abs();
    apart && doublings_apart.is_finite() && doublings_apart > tolerance
}

/// Whether the games' decision rests on a speed their own NPS contradicts
/// ([`games_contradict_speed`]) in the decision's favour: H1 when B was charged more speed
/// than its games showed (more nodes at node odds, a larger shift with equal nodes), H0 when
/// less. Such a decision is withheld; one against the error stands, since correcting the speed
/// would only strengthen it.
pub(crate) fn decision_rests_on_contradicted_speed(
    decision: SprtDecision,
    charged: &Estimate,
    in_games: &Estimate,
    tolerance: f64,
) -> bool {
    if !games_contradict_speed(charged, in_games, tolerance) {
        return false;
    }
    let charged_too_much = in_games.ci_high < charged.ci_low;
    match decision {
        SprtDecision::AcceptH1 => charged_too_much,
        SprtDecision::AcceptH0 => !charged_too_much,
        SprtDecision::Continue => false,
    }
}

/// Whether the speed is measured finely enough to credit it: the ratio interval's half-width
/// in doublings (more rounds narrow it) is at most `tolerance` ([`speed_tolerance`]). Under
/// load a few rounds give an interval whose lower end charges a change tens of Elo it may not
/// cost.
pub(crate) fn speed_measured_finely(ratio: &Estimate, tolerance: f64) -> bool {
    let half_width = (ratio.ci_high / ratio.ci_low).log2() / 2.0;
    half_width.is_finite() && half_width <= tolerance
}

/// B's nodes per move with node odds: A's budget times the lower end of the speed ratio's 95%
/// interval (the speed is credited only what it surely gives); at least 1.
pub(crate) fn node_odds_budget(a_nodes: u64, ratio: &Estimate) -> Option<u64> {
    whole_nodes(a_nodes as f64 * ratio.ci_low)
}

/// What a verdict found beside its figures; report/ words it (`report::findings`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum VerdictNote {
    /// The speed-Elo model was fitted on another engine tree (`spec`), not on A's binary.
    ModelOfAnotherTree { spec: String },
    /// After `rounds` rounds the speed ratio's interval is still wider than [`speed_tolerance`].
    SpeedTooCoarse { ratio: Estimate, rounds: u32 },
    /// Every pair of the `games` was won or lost: the search's Elo has no finite estimate.
    SearchEloUnbounded { games: u64 },
    /// B's NPS over A's in the `games` games (`in_games`) contradicts the speed ratio the
    /// verdict charged (`charged`, as `by` gave it): see [`games_contradict_speed`].
    GamesContradictSpeed {
        charged: Estimate,
        by: ChargedBy,
        in_games: Estimate,
        games: u64,
    },
    /// The games' SPRT accepted H1 (`h1`) or H0, but on a speed their NPS contradicts in that
    /// decision's favour ([`decision_rests_on_contradicted_speed`]): the verdict is undecided.
    DecisionWithheld { h1: bool },
    /// The games so far are past the H1 (`h1`) or the H0 bound, but the run was interrupted:
    /// it gives no decision ([`Decision::Interrupted`]).
    InterruptedPastBound { h1: bool },
    /// `--speed-from games`, but no speed was read from games: the signatures are equal (no
    /// game is played, `games` 0), or too few of the `games` were played to show one. The
    /// paired NPS is the speed.
    NoSpeedFromGames { games: u64 },
    /// The speed from the games by default, but `games` games went by without both sides
    /// reporting their nodes and time: the paired NPS is the speed.
    GamesShowNoSpeed { games: u64 },
}

/// What gave the speed ratio a verdict's games were charged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChargedBy {
    /// This run's measurement.
    Measured(SpeedSource),
    /// At node odds on `--resume`: the factor of the resumed games' budgets, B's over A's, which
    /// the run that started them took from its speed ratio's lower end. This run's speed does
    /// not change the nodes B plays at, so it is not what the games were charged.
    ResumedNodeOdds,
}

/// The speed ratio node budgets give B, a point: B's nodes per move over A's.
pub(crate) fn node_odds_factor(a_nodes: u64, b_nodes: u64) -> Estimate {
    let factor = b_nodes as f64 / a_nodes as f64;
    Estimate {
        value: factor,
        ci_low: factor,
        ci_high: factor,
    }
}

/// The decision of a verdict, as the exit code says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Decision {
    /// H1 accepted: B is at least as good as the upper bound says (exit 0).
    H1,
    /// H0 accepted: B is worse than the lower bound allows (exit 1).
    H0,
    /// Neither, within the rounds or games allowed (exit 3).
    Undecided,
    /// SIGINT or SIGTERM ended the games: the report is of the games so far (exit 130), with
    /// no decision even when they are past a bound (a note says so), since the run stopped on
    /// request and a shell loop around it must stop too; `--resume` continues them.
    Interrupted,
}

impl Decision {
    pub(crate) fn from_sprt(decision: SprtDecision) -> Decision {
        match decision {
            SprtDecision::AcceptH1 => Decision::H1,
            SprtDecision::AcceptH0 => Decision::H0,
            SprtDecision::Continue => Decision::Undecided,
        }
    }

    /// The decision of games whose SPRT says `decision`, `interrupted` or not.
    pub(crate) fn of_games(decision: SprtDecision, interrupted: bool) -> Decision {
        if interrupted {
            Decision::Interrupted
        } else {
            Decision::from_sprt(decision)
        }
    }
}

/// The speed-Elo model a verdict used, and whose it is.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ModelUse {
    /// Elo per doubling of time with its 95% interval.
    pub(crate) elo_per_doubling: Estimate,
    /// The revision or executable it was fitted on.
    pub(crate) fitted_on: String,
    /// Whether it was fitted on A's own binary; otherwise another engine tree's model.
    pub(crate) same_binary: bool,
    pub(crate) games: u64,
    pub(crate) date: String,
    pub(crate) path: String,
}

/// How a verdict's games give B its speed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum GamesAt {
    /// Both sides at one node budget: the games weigh the search alone, and the speed is added
    /// in Elo by the model. Reports from before the choice existed played so.
    #[default]
    EqualNodes,
    /// B at A's budget times its speed ratio's lower end: the games' Elo is the total.
    NodeOdds,
}

/// Where A's node budget came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum BudgetFrom {
    /// A's fastest bench NPS × the clock's typical time per move (`base /`
    /// [`TYPICAL_MOVES_PER_CLOCK`] `+ inc`). Reports
    /// from before the choice existed were budgeted so, and a verdict whose clock games
    /// measured no time is.
    #[default]
    Speed,
    /// A's fastest bench NPS × A's mean time per move in its games against itself at the clock
    /// (`SearchGames::clock_probe`).
    ClockGames,
    /// `--nodes`.
    Given,
    /// The earlier verdict's games that `--resume` continued.
    Resumed,
    /// An earlier verdict's `ClockGames` budget of A's binary at this clock on this machine,
    /// stored (`budgets`), so that the same verdict run again plays the same games.
    Stored,
}

/// Where a budget from A's clock games is kept: written by the verdict that played them, read
/// by later ones.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct BudgetStore {
    pub(crate) path: String,
    /// When the clock games were played, seconds since the Unix epoch.
    pub(crate) measured_unix: u64,
}

/// The fixed-node games of a verdict whose signatures differ.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct SearchGames {
    /// A's nodes per move: by default A's fastest bench NPS × its mean time per move in
    /// clock games (`budget_from`).
    pub(crate) nodes_per_move: u64,
    pub(crate) budget_from: BudgetFrom,
    /// The clock games that timed A's moves (`BudgetFrom::ClockGames`, and the stored ones of
    /// `BudgetFrom::Stored`).
    pub(crate) clock_probe: Option<ClockProbe>,
    /// Where that budget is kept (`ClockGames`: stored by this run; `Stored`: read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) budget_store: Option<BudgetStore>,
    /// B's: the same with equal nodes; with node odds, A's times the speed ratio's lower end.
    pub(crate) b_nodes_per_move: u64,
    pub(crate) nps: f64,
    pub(crate) typical_move_ms: f64,
    /// The SPRT the games played: with equal nodes, the user's bounds less the speed's surely
    /// gained Elo; with node odds, the user's bounds.
    pub(crate) shifted_sprt: Sprt,
    #[serde(rename = "match")]
    pub(crate) games: Box<MatchReport>,
}

/// `lab verdict A B`: one decision for speed and strength.
#[derive(Debug, Clone, Serialize)]
pub struct VerdictReport {
    pub(crate) schema_version: u32,
    pub(crate) kind: Kind,
    /// The clock the verdict is for.
    pub(crate) limit: Limit,
    pub(crate) tc: String,
    /// The bounds as given.
    pub(crate) sprt: Sprt,
    /// Signature, paired speed and instructions of A and B.
    pub(crate) comparison: Box<Comparison>,
    /// How the games gave B its speed (none are played when the signatures are equal).
    pub(crate) games_at: GamesAt,
    /// `None` only with node odds when this machine has no model for the clock: the games'
    /// Elo is the total without one.
    pub(crate) model: Option<ModelUse>,
    /// What `speed_ratio` was measured by.
    pub(crate) speed_from: SpeedSource,
    /// B's speed as a ratio of A's with its 95% interval: nodes per second, paired; or A's
    /// instructions per node over B's, exact.
    pub(crate) speed_ratio: Estimate,
    /// With `speed_from: games`, the games `speed_ratio` was read from (all of them, an
    /// interrupted run's too); `None` otherwise.
    pub(crate) speed_games: Option<u64>,
    /// With `speed_from: games`, when the interval came from the spread of runs of
    /// consecutive games (the widest), the runs; `None` otherwise.
    #[serde(default)]
    pub(crate) speed_runs: Option<u64>,
    /// With `speed_from: games`, when the interval came from the spread between the sittings
    /// that played the games (the widest), the sittings; `None` otherwise.
    #[serde(default)]
    pub(crate) speed_sittings: Option<u64>,
    /// The speed at the model's Elo per doubling; `None` without a model.
    pub(crate) speed_elo: Option<Estimate>,
    /// The equal-node games' Elo; 0 ± 0 when the signatures are equal (the same search);
    /// `None` with node odds, whose games weigh search and speed together.
    pub(crate) search_elo: Option<Estimate>,
    /// Search plus speed Elo; with node odds, the games' Elo.
    pub(crate) total_elo: Estimate,
    /// The LLR that decided (the speed's when no game was played, else the games') and its
    /// bounds.
    pub(crate) llr: f64,
    pub(crate) llr_lower: f64,
    pub(crate) llr_upper: f64,
    pub(crate) games: u64,
    /// The games' `games_to_decision`: the games a decision is expected to take from here.
    pub(crate) games_to_decision: Option<u64>,
    /// Measured rounds of the paired speed runs behind `speed_ratio`.
    pub(crate) rounds: u32,
    pub(crate) search: Option<SearchGames>,
    pub(crate) decision: Decision,
    pub(crate) wall_time_s: f64,
    pub(crate) notes: Vec<VerdictNote>,
}

impl VerdictReport {
    /// Whether B played at the node odds of the games `--resume` continued, not at this run's
    /// speed ratio's lower end (`speed_ratio` is then this run's, for reference).
    pub(crate) fn node_odds_resumed(&self) -> bool {
        self.games_at == GamesAt::NodeOdds
            && self
                .search
                .as_ref()
                .is_some_and(|search| search.budget_from == BudgetFrom::Resumed)
    }

    /// The interval wider than game by game that bounded the games' speed charged, if one did.
    pub(crate) fn speed_wider_interval(&self) -> Option<WiderNpsInterval> {
        wider_interval(self.speed_runs, self.speed_sittings)
    }
}

/// The wider interval a verdict's JSON names: its sittings, else its runs.
pub(crate) fn wider_interval(runs: Option<u64>, sittings: Option<u64>) -> Option<WiderNpsInterval> {
    sittings
        .map(WiderNpsInterval::Sittings)
        .or(runs.map(WiderNpsInterval::Runs))
}

/// `lab speed-elo`: the model just fitted (and stored), or with `--show` every stored one.
#[derive(Debug, Clone, Serialize)]
pub struct SpeedEloReport {
    pub(crate) schema_version: u32,
    pub(crate) kind: Kind,
    /// The fitted model's slope, with its points; `None` for `--show`.
    pub(crate) elo_per_doubling: Option<speed_elo::EloPerDoubling>,
    pub(crate) models: Vec<models::SpeedEloModel>,
    /// Stored files that could not be read, with why.
    pub(crate) unusable: Vec<(String, String)>,
    /// Where the fitted model was stored.
    pub(crate) stored: Option<String>,
    /// The results file of each odds' games.
    pub(crate) results_files: Vec<String>,
}

/// What the comparison's speed change is worth in Elo under this machine's stored model (one
/// fitted on A's binary first); `None` without a model or a paired speed interval.
pub(crate) fn comparison_speed_elo(
    comparison: &Comparison,
    paths: &LabPaths,
) -> Option<SpeedEloEstimate> {
    let machine = crate::history::store::machine_id(&crate::machine::Machine::current());
    let dir = models::models_dir(paths);
    let (model, same_binary) =
        models::find(&dir, &machine, &comparison.a.revision.binary_key, None)?;
    let ratio = speed_ratio(comparison)?;
    let elo = speed_elo::speed_elo(&model.elo_per_doubling, ratio)?;
    Some(SpeedEloEstimate {
        value: elo.value,
        ci_low: elo.ci_low,
        ci_high: elo.ci_high,
        speed_ratio: ratio.value,
        tc: model.limit.pgn_time_control(),
        elo_per_doubling: model.elo_per_doubling.value,
        model_of: model.engine.commit.unwrap_or(model.engine.spec),
        same_binary,
        games: model.games,
    })
}

/// What a verdict's speed term is measured by.
/// Reports from before the choice existed measured NPS: the default when the field is absent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum SpeedSource {
    /// Paired ABBA rounds of nodes per second, with a Student-t interval: what the clock feels,
    /// and what load and a noisy machine blur.
    #[default]
    Nps,
    /// Callgrind's instructions per node of the bench, A's over B's: deterministic, so exact,
    /// but blind to what costs time without instructions (cache misses, mispredicted branches).
    Instructions,
    /// B's NPS over A's in the verdict's own equal-node games, game by game: the positions the
    /// games reach, with the load of concurrent games falling on both sides alike. Known only
    /// as the games go: the bounds move with it every [`GAMES_PER_SPEED_UPDATE`] games.
    Games,
}

/// With the speed from the games, how many games are played between two readings of it (and
/// the bounds it shifts). The games' speed is close to its final value after a few hundred.
pub(crate) const GAMES_PER_SPEED_UPDATE: u64 = 200;

/// B's speed over A's as callgrind counts it: A's instructions per node over B's, exact (its
/// interval is the point). Why not, when the comparison has no comparable count.
pub(crate) fn instructions_speed_ratio(comparison: &Comparison) -> Result<Estimate, String> {
    let instructions = &comparison.instructions;
    if !instructions.comparable {
        return Err(
            "A and B were built by different toolchains: their instruction counts do not compare"
                .to_string(),
        );
    }
    let per_node = instructions.per_node_ratio.ok_or_else(|| {
        let skipped = [&comparison.a, &comparison.b]
            .into_iter()
            .find_map(|side| side.instructions.skipped_reason.clone());
        match skipped {
            Some(reason) => format!("no instruction count: {reason}"),
            None => "no instruction count per node for both sides at one depth".to_string(),
        }
    })?;
    let ratio = 1.0 / per_node;
    if !(ratio.is_finite() && ratio > 0.0) {
        return Err(format!(
            "the instructions-per-node ratio {per_node} is not a positive finite number"
        ));
    }
    Ok(Estimate {
        value: ratio,
        ci_low: ratio,
        ci_high: ratio,
    })
}

/// B's speed over A's, from the comparison's paired time-per-node ratio (B/A, above 1 slower).
pub(crate) fn speed_ratio(comparison: &Comparison) -> Option<Estimate> {
    let cost = comparison.speed.cost_ratio?;
    let ratio = Estimate {
        value: 1.0 / cost.estimate,
        ci_low: 1.0 / cost.ci_high,
        ci_high: 1.0 / cost.ci_low,
    };
    let usable = [ratio.value, ratio.ci_low, ratio.ci_high]
        .iter()
        .all(|x| x.is_finite() && *x > 0.0);
    usable.then_some(ratio)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::sprt::EloModel;

    fn sprt() -> Sprt {
        Sprt::new(-5.0, 0.0, 0.05, 0.05, EloModel::Logistic).unwrap()
    }

    fn estimate(value: f64, half_width: f64) -> Estimate {
        Estimate {
            value,
            ci_low: value - half_width,
            ci_high: value + half_width,
        }
    }

    /// At 155 Elo per doubling, bounds 5 apart ask for the ratio within about ±1.1%: ±1% is
    /// fine enough, ±5% (a loaded machine's six rounds) is not, and neither is no interval.
    /// Only intervals that do not meet contradict, and only by more than half the bounds' gap
    /// in Elo; an exact ratio is a point interval.
    #[test]
    fn the_games_contradict_the_speed_only_when_the_intervals_do_not_meet_by_enough_elo() {
        let exact = Estimate {
            value: 1.237,
            ci_low: 1.237,
            ci_high: 1.237,
        };
        let games = |low: f64, high: f64| Estimate {
            value: (low + high) / 2.0,
            ci_low: low,
            ci_high: high,
        };
        let contradict = |charged: &Estimate, in_games: &Estimate| {
            games_contradict_speed(charged, in_games, speed_tolerance(Some(130.0), &sprt()))
        };
        assert!(!contradict(&exact, &games(1.163, 1.309)));
        assert!(contradict(&exact, &games(1.05, 1.20)));
        assert!(contradict(&exact, &games(1.24, 1.30)));
        // Apart, but by 2.1 Elo at 130 per doubling: less than half of a 5-Elo gap.
        assert!(!contradict(&exact, &games(1.2401, 1.2613)));
        let measured = games(1.20, 1.33);
        assert!(!contradict(&measured, &games(1.05, 1.20)));
        assert!(contradict(&measured, &games(1.05, 1.19)));
    }

    /// The 2% tables' node-odds verdict: charged +3.62% by instructions, +0.33% (−0.22% to
    /// +0.88%) in 443 games. An H1 there rests on nodes B did not earn; an H0 stands.
    #[test]
    fn a_decision_in_the_favour_of_a_contradicted_speed_is_withheld_and_one_against_it_stands() {
        let point = |value: f64| Estimate {
            value,
            ci_low: value,
            ci_high: value,
        };
        let in_games = Estimate {
            value: 1.0033,
            ci_low: 0.9978,
            ci_high: 1.0088,
        };
        let tolerance = speed_tolerance(None, &sprt());
        let rests = |decision, charged: &Estimate, in_games: &Estimate| {
            decision_rests_on_contradicted_speed(decision, charged, in_games, tolerance)
        };
        let over = point(1.0362);
        assert!(rests(SprtDecision::AcceptH1, &over, &in_games));
        assert!(!rests(SprtDecision::AcceptH0, &over, &in_games));
        assert!(!rests(SprtDecision::Continue, &over, &in_games));
        // Charged less than the games showed: an H0 is what the error favours.
        let under = point(0.97);
        assert!(rests(SprtDecision::AcceptH0, &under, &in_games));
        assert!(!rests(SprtDecision::AcceptH1, &under, &in_games));
        // Within 1% of the games (no model): no contradiction, every decision stands.
        let near = point(1.012);
        assert!(!rests(SprtDecision::AcceptH1, &near, &in_games));
    }

    #[test]
    fn the_speed_is_fine_enough_when_its_own_half_width_is_within_half_the_gap() {
        let ratio = |low: f64, high: f64| Estimate {
            value: (low + high) / 2.0,
            ci_low: low,
            ci_high: high,
        };
        let at = |k: f64| speed_tolerance(Some(k), &sprt());
        assert!(speed_measured_finely(&ratio(0.99, 1.01), at(155.0)));
        assert!(!speed_measured_finely(&ratio(0.95, 1.05), at(155.0)));
        assert!(speed_measured_finely(&ratio(0.95, 1.05), at(20.0)));
        assert!(!speed_measured_finely(&ratio(0.0, 1.05), at(155.0)));
        // Without a model: ±1% of the ratio.
        let without = speed_tolerance(None, &sprt());
        assert!(speed_measured_finely(&ratio(0.995, 1.012), without));
        assert!(!speed_measured_finely(&ratio(0.98, 1.02), without));
    }

    #[test]
    fn node_odds_give_b_the_speed_it_surely_has() {
        let ratio = Estimate {
            value: 1.25,
            ci_low: 1.2,
            ci_high: 1.3,
        };
        assert_eq!(node_odds_budget(400_000, &ratio), Some(480_000));
        let exact = Estimate {
            value: 0.9,
            ci_low: 0.9,
            ci_high: 0.9,
        };
        assert_eq!(node_odds_budget(400_000, &exact), Some(360_000));
        assert_eq!(node_odds_budget(1, &exact), Some(1), "at least one node");
        let unusable = Estimate {
            value: 1.0,
            ci_low: f64::NAN,
            ci_high: 1.0,
        };
        assert_eq!(node_odds_budget(400_000, &unusable), None);
    }

    #[test]
    fn node_budgets_follow_the_clock() {
        let clock = Limit::parse_tc("2+0.02").unwrap();
        assert_eq!(typical_move_ms(&clock), Some(70.0));
        assert_eq!(node_budget(5_000_000.0, &clock), Some(350_000));
        let tc = Limit::parse_tc("10+0.1").unwrap();
        assert_eq!(node_budget(4_000_000.0, &tc), Some(1_400_000));
        assert_eq!(node_budget(4_000_000.0, &Limit::Nodes { nodes: 5 }), None);
        assert_eq!(node_budget(f64::NAN, &tc), None);
        assert_eq!(node_budget(0.0, &tc), None);
        assert_eq!(node_budget(1e-9, &tc), Some(1), "at least one node");
    }

    #[test]
    fn a_clear_slowdown_is_rejected_and_a_clear_gain_accepted() {
        // -20 ± 4 Elo is far below elo0 = -5.
        let (llr, decision) = speed_decision(&estimate(-20.0, 4.0), &sprt());
        assert!(llr < sprt().lower(), "{llr}");
        assert_eq!(decision, SprtDecision::AcceptH0);
        let (_, decision) = speed_decision(&estimate(3.0, 2.0), &sprt());
        assert_eq!(decision, SprtDecision::AcceptH1);
    }

    #[test]
    fn normal_quantiles_match_the_table() {
        assert!((upper_normal_quantile(0.05) - 1.644_853_626_951).abs() < 1e-8);
        assert!((upper_normal_quantile(0.025) - Z_95).abs() < 1e-8);
        assert!((upper_normal_quantile(0.01) - 2.326_347_874_041).abs() < 1e-8);
        assert!((upper_normal_quantile(0.2) - 0.841_621_233_573).abs() < 1e-8);
    }

    #[test]
    fn an_interval_far_below_the_bounds_is_h0_however_wide() {
        // A 20% slowdown under a loose model: -92 Elo, 95% CI -130 to -60. The normal GSPRT's
        // LLR of one observation stays near -1.4 with bounds only 5 Elo apart; the interval is
        // still far below elo1.
        let far = Estimate {
            value: -91.8,
            ci_low: -129.9,
            ci_high: -60.0,
        };
        let (llr, decision) = speed_decision(&far, &sprt());
        assert!(llr > sprt().lower(), "{llr}");
        assert_eq!(decision, SprtDecision::AcceptH0);
    }

    #[test]
    fn a_wide_interval_between_the_bounds_is_undecided() {
        let (llr, decision) = speed_decision(&estimate(-2.0, 30.0), &sprt());
        assert!(llr.abs() < 1.0, "{llr}");
        assert_eq!(decision, SprtDecision::Continue);
    }

    #[test]
    fn the_llr_is_the_normal_gsprt_and_certain_observations_decide() {
        // X = elo1: LLR = (elo1 - elo0)² / (2σ²); σ = 1 here.
        let half = Z_95;
        let (llr, _) = speed_decision(&estimate(0.0, half), &sprt());
        assert!((llr - 12.5).abs() < 1e-9, "{llr}");
        // The midpoint of the bounds is no evidence either way.
        let (llr, decision) = speed_decision(&estimate(-2.5, 30.0), &sprt());
        assert!(llr.abs() < 1e-12);
        assert_eq!(decision, SprtDecision::Continue);
        let exact = Estimate {
            value: -1.0,
            ci_low: -1.0,
            ci_high: -1.0,
        };
        assert_eq!(speed_decision(&exact, &sprt()).1, SprtDecision::AcceptH1);
        // No width at all, or almost none: a finite LLR at the cap, which JSON can carry.
        assert_eq!(speed_decision(&exact, &sprt()).0, SPEED_LLR_CAP);
        let nearly = Estimate {
            value: 9.4e-7,
            ci_low: 7.9e-7,
            ci_high: 1.1e-6,
        };
        assert_eq!(
            speed_decision(&nearly, &sprt()),
            (SPEED_LLR_CAP, SprtDecision::AcceptH1)
        );
        let slower = Estimate {
            value: -30.0,
            ci_low: -30.0,
            ci_high: -30.0,
        };
        assert_eq!(
            speed_decision(&slower, &sprt()),
            (-SPEED_LLR_CAP, SprtDecision::AcceptH0)
        );
    }

    #[test]
    fn the_games_bounds_move_by_the_surely_gained_speed() {
        let shifted = shifted_sprt(&sprt(), &estimate(3.0, 2.0));
        assert_eq!((shifted.elo0, shifted.elo1), (-6.0, -1.0));
        assert_eq!(shifted.alpha, sprt().alpha);
        // A slowdown raises the bar the search must clear.
        let slower = shifted_sprt(&sprt(), &estimate(-4.0, 1.0));
        assert_eq!((slower.elo0, slower.elo1), (0.0, 5.0));
    }

    proptest::proptest! {
        /// Whatever NPS, time or speed ratio the measurements give (engine output, stored
        /// reports), a budget is a whole number of nodes, at least 1, or none.
        #[test]
        fn any_measurement_gives_a_whole_budget_or_none(
            nps in proptest::num::f64::ANY,
            ms in proptest::num::f64::ANY,
            a_nodes in proptest::num::u64::ANY,
            low in proptest::num::f64::ANY,
        ) {
            if let Some(nodes) = nodes_in(nps, ms) {
                proptest::prop_assert!(nodes >= 1);
                proptest::prop_assert!(nps * ms > 0.0);
            }
            let ratio = Estimate { value: low, ci_low: low, ci_high: low };
            if let Some(nodes) = node_odds_budget(a_nodes, &ratio) {
                proptest::prop_assert!(nodes >= 1 && a_nodes > 0 && low > 0.0);
            }
        }
    }
}
