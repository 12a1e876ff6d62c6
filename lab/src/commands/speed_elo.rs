//! `lab speed-elo REV --tc T [--odds 1.5,2] [--games N]`: time-odds self-play, the fit of Elo
//! per doubling of time, stored for the machine; `--show` lists the stored models.

use anyhow::{bail, Context, Result};

use crate::calendar::today_utc;
use crate::cli::{SpeedEloArgs, DEFAULT_GAMES_PER_ODDS};
use crate::games::rules::{Limit, RulesKept};
use crate::games::{self, MatchOptions, Resume};
use crate::history::store::machine_id;
use crate::input::short_key;
use crate::lab::Lab;
use crate::machine::Machine;
use crate::outcome::Outcome;
use crate::paths::LabPaths;
use crate::report::Report;
use crate::schema::{Kind, LAB_JSON_SCHEMA_VERSION};
use crate::verdict::models::{
    self, ModelEngine, SpeedEloModel, SPEED_ELO_KIND, SPEED_ELO_SCHEMA_VERSION,
};
use crate::verdict::speed_elo::{fit, FitError, OddsPoint};
use crate::verdict::SpeedEloReport;

/// The largest time odds: beyond, the clock of B leaves the range `--tc` accepts anyway.
const MAX_ODDS: f64 = 64.0;

pub(crate) fn run(lab: &Lab, args: &SpeedEloArgs) -> Result<Outcome> {
    let paths = lab_paths(lab)?;
    let dir = models::models_dir(&paths);
    if args.show {
        return Ok(Outcome::clean(Report::SpeedElo(Box::new(show(&dir)))));
    }
    let (Some(rev), Some(tc)) = (&args.rev, &args.tc) else {
        bail!("lab speed-elo needs REV and --tc (or --show)");
    };
    let base = Limit::parse_tc(tc)?;
    let all_odds = checked_odds(&args.odds)?;
    let games = super::max_games("--games", args.games, DEFAULT_GAMES_PER_ODDS)?;
    // The rules of an odds not begun: as given (or the defaults), then the first odds' own, so
    // that a fit begun before the games were adjudicated goes on as it began.
    let mut rules =
        super::adjudication_rules(args.draw_adj.as_deref(), args.resign_adj.as_deref())?;
    let kept = RulesKept {
        draw: args.resume && args.draw_adj.is_none(),
        resign: args.resume && args.resign_adj.is_none(),
    };
    let pinned = pinned(lab, rev)?;
    let mut points = Vec::new();
    let mut results_files = Vec::new();
    let mut engine = None;
    for (index, &odds) in all_odds.iter().enumerate() {
        lab.progress().line(&format!(
            "speed-elo: odds {odds} ({} of {}): B gets {}",
            index + 1,
            all_odds.len(),
            scaled(&base, odds)?
        ));
        let mut options = MatchOptions::self_play(
            [pinned.clone(), pinned.clone()],
            [base, scaled(&base, odds)?],
            games,
            args.concurrency,
            super::export_paths(&args.output.export),
        )?;
        options.draw = rules.draw;
        options.resign = rules.resign;
        if args.resume {
            options.resume = Resume::IfAnyOfTheseBinaries;
            options.rules_kept_on_resume = kept;
        }
        let report = games::run(lab, options)?;
        if index == 0 {
            rules = report.adjudication;
        } else if report.adjudication != rules {
            bail!(
                "odds {odds} was played with other adjudication than the first odds ({} against \
                 {}), so its points are not of one fit; no model. Give both rules \
                 (--draw-adj, --resign-adj) to resume only games played by them",
                report.adjudication.words(),
                rules.words()
            );
        }
        let elo = report.summary.elo.with_context(|| {
            format!(
                "odds {odds}: the Elo is unbounded after {} games (every pair won or lost): \
                 play more games or smaller odds",
                report.summary.games
            )
        })?;
        points.push(OddsPoint {
            odds,
            elo,
            games: report.summary.games,
        });
        results_files.extend(report.results_file.clone());
        let first = engine.get_or_insert_with(|| report.engines[0].clone());
        if first.binary != report.engines[0].binary {
            bail!(
                "odds {odds} played another engine than the first odds (binary {} against {}): \
                 {rev} changed during the fit (WORKTREE edited?), so its points are not of one \
                 engine; no model. Fit a commit",
                short_key(&report.engines[0].binary),
                short_key(&first.binary)
            );
        }
    }
    let elo_per_doubling = fit(&points).map_err(|error| match error {
        FitError::NoUsablePoint => {
            anyhow::anyhow!("no odds gave an Elo with a usable interval: play more games per odds")
        }
        FitError::BadOdds(odds) => anyhow::anyhow!("odds {odds} is not above 0"),
    })?;
    let engine = engine.context("no odds were played")?;
    let machine = Machine::current();
    let model = SpeedEloModel {
        kind: SPEED_ELO_KIND.to_string(),
        schema_version: SPEED_ELO_SCHEMA_VERSION,
        engine: ModelEngine {
            spec: rev.clone(),
            commit: engine.commit.clone(),
            binary: engine.binary.clone(),
        },
        limit: base,
        machine_id: machine_id(&machine),
        machine,
        games: points.iter().map(|p| p.games).sum(),
        elo_per_doubling: elo_per_doubling.clone(),
        date: today_utc('-'),
    };
    let stored = models::save(&dir, &model)?;
    Ok(Outcome::clean(Report::SpeedElo(Box::new(SpeedEloReport {
        schema_version: LAB_JSON_SCHEMA_VERSION,
        kind: Kind::SpeedElo,
        elo_per_doubling: Some(elo_per_doubling),
        models: vec![model],
        unusable: Vec::new(),
        stored: Some(stored.display().to_string()),
        results_files,
    }))))
}

/// `rev` as the commit it names now, resolved once: a fit plays for hours, and a name that
/// moves meanwhile (a commit to HEAD or the branch) must move none of its odds. An `exe:` and
/// WORKTREE stay as given (the worktree has no commit).
fn pinned(lab: &Lab, rev: &str) -> Result<String> {
    if rev.starts_with(crate::games::EXE_PREFIX) {
        return Ok(rev.to_string());
    }
    let session = lab.lock()?;
    let revision = crate::engine::revision::resolve(session.repo(), rev, session.paths())?;
    Ok(revision
        .commit
        .map_or_else(|| rev.to_string(), |commit| commit.to_string()))
}

/// Every stored model, and the files that are not one.
fn show(dir: &std::path::Path) -> SpeedEloReport {
    let mut report = SpeedEloReport {
        schema_version: LAB_JSON_SCHEMA_VERSION,
        kind: Kind::SpeedElo,
        elo_per_doubling: None,
        models: Vec::new(),
        unusable: Vec::new(),
        stored: None,
        results_files: Vec::new(),
    };
    for (path, model) in models::list(dir) {
        match model {
            Ok(model) => report.models.push(model),
            Err(error) => report
                .unusable
                .push((path.display().to_string(), format!("{error:#}"))),
        }
    }
    report
}

/// The cache of the lab's repository, or of the current directory without one.
fn lab_paths(lab: &Lab) -> Result<LabPaths> {
    match lab.workdir() {
        Ok(workdir) => Ok(workdir.paths),
        Err(_) => Ok(LabPaths::new(
            &std::env::current_dir().context("reading the current directory")?,
        )),
    }
}

/// The odds as given, each finite, above 0, not 1 and at most [`MAX_ODDS`], none twice.
fn checked_odds(odds: &[f64]) -> Result<Vec<f64>> {
    if odds.is_empty() {
        bail!("--odds: give at least one time odds, e.g. --odds 2 or --odds 1.5,2");
    }
    let mut checked: Vec<f64> = Vec::with_capacity(odds.len());
    for &value in odds {
        if !(value.is_finite() && value > 0.0 && value <= MAX_ODDS) {
            bail!("--odds {value}: each odds must be above 0 and at most {MAX_ODDS}");
        }
        if value == 1.0 {
            bail!("--odds 1: equal clocks say nothing of what time is worth");
        }
        if checked.contains(&value) {
            bail!("--odds {value} is given twice");
        }
        checked.push(value);
    }
    Ok(checked)
}

/// `base` with its base time and increment multiplied by `odds`, in whole milliseconds.
fn scaled(base: &Limit, odds: f64) -> Result<Limit> {
    let Limit::Clock {
        base_ms,
        increment_ms,
    } = *base
    else {
        bail!("--tc must be a clock (BASE+INC)");
    };
    let scale = |ms: u64| (ms as f64 * odds).round() as u64;
    let scaled_base = scale(base_ms);
    if scaled_base == 0 {
        bail!("--odds {odds}: B's base time rounds to 0 ms");
    }
    Ok(Limit::Clock {
        base_ms: scaled_base,
        increment_ms: scale(increment_ms),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn odds_scale_both_parts_of_the_clock() {
        let base = Limit::parse_tc("2+0.02").unwrap();
        assert_eq!(
            scaled(&base, 2.0).unwrap(),
            Limit::Clock {
                base_ms: 4000,
                increment_ms: 40
            }
        );
        assert_eq!(
            scaled(&base, 1.5).unwrap(),
            Limit::Clock {
                base_ms: 3000,
                increment_ms: 30
            }
        );
        assert!(scaled(&Limit::Nodes { nodes: 5 }, 2.0).is_err());
    }

    #[test]
    fn odds_are_checked() {
        assert_eq!(checked_odds(&[1.5, 2.0]).unwrap(), vec![1.5, 2.0]);
        for bad in [
            vec![],
            vec![1.0],
            vec![0.0],
            vec![-2.0],
            vec![f64::NAN],
            vec![2.0, 2.0],
        ] {
            assert!(checked_odds(&bad).is_err(), "{bad:?}");
        }
    }
}
