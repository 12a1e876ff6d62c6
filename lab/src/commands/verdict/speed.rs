//! The speed a verdict charges: the paired rounds' NPS or instructions, or the games' own NPS,
//! in Elo by the model; the rounds measured again while too coarse or, alone, undecided.

use anyhow::{Context, Result};

use super::{measure, Run};
use crate::analysis::compare::Comparison;
use crate::cli::VerdictCommandArgs;
use crate::digits::signed;
use crate::games::sprt::{Estimate, SprtDecision};
use crate::games::summary::NpsRatioInGames;
use crate::lab::Lab;
use crate::verdict::speed_elo::{speed_elo, EloPerDoubling};
use crate::verdict::{
    instructions_speed_ratio, speed_decision, speed_measured_finely, speed_ratio, SpeedSource,
    VerdictNote,
};

/// Turns a comparison into the speed ratio the verdict charges and, with a model, its Elo.
pub(super) struct SpeedMeter<'a> {
    pub(super) from: SpeedSource,
    pub(super) model: Option<&'a EloPerDoubling>,
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
pub(super) struct Speed {
    pub(super) comparison: Comparison,
    pub(super) ratio: Estimate,
    pub(super) elo: Option<Estimate>,
    pub(super) rounds: u32,
    /// What measured `ratio`: with `--speed-from games`, the paired NPS until the games are
    /// read.
    pub(super) from: SpeedSource,
    /// The games' ratio `ratio` was read from, when it was.
    pub(super) in_games: Option<NpsRatioInGames>,
}

impl Speed {
    pub(super) fn of(comparison: Comparison, meter: &SpeedMeter, rounds: u32) -> Result<Speed> {
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
            in_games: None,
        })
    }

    /// The speed as `games` games showed it (B's NPS over A's, game by game), in Elo by the
    /// model.
    pub(super) fn read_from_games(
        &mut self,
        meter: &SpeedMeter,
        in_games: &NpsRatioInGames,
    ) -> Result<()> {
        let model = meter.model.context("equal-node games need the model")?;
        self.elo = Some(
            speed_elo(model, in_games.ratio)
                .context("the games' NPS ratio is not a positive finite number")?,
        );
        self.ratio = in_games.ratio;
        self.from = SpeedSource::Games;
        self.in_games = Some(*in_games);
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
        let (comparison, _) = measure(lab, args, rounds, false)?;
        Speed::of(
            comparison.with_instructions_of(&self.comparison),
            meter,
            rounds,
        )
    }
}

/// The same signature: the speed decides alone, with more rounds while it is undecided. The
/// speed as last measured, the LLR and the decision.
pub(super) fn speed_alone(run: &Run, mut speed: Speed) -> Result<(Speed, f64, SprtDecision)> {
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
            "speed Elo {} (95% CI {} to {}) is undecided: measuring again with {rounds} rounds",
            signed(elo.value, 1),
            signed(elo.ci_low, 1),
            signed(elo.ci_high, 1)
        ));
        speed = speed.again(lab, args, meter, rounds)?;
        (llr, decision) = speed_decision(&elo_of(&speed), &options.sprt);
    }
    Ok((speed, llr, decision))
}

/// Different signatures: the speed measured again while its interval is too wide to credit
/// at the bounds' gap; a note if it stays so.
pub(super) fn speed_for_games(
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
