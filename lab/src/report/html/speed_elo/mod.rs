//! The page of `lab speed-elo` (`--export-html`, `lab report` of its JSON or of a stored
//! model): per model, the Elo of each time odds against log2(odds) with the fitted line.

pub(crate) mod speed_fit;

use std::fmt::Write as _;

use anyhow::{Context, Result};
use serde::Deserialize;

use crate::report::html::plot::Footer;
use crate::report::html::{fact, head, section};
use speed_fit::{OddsElo, Slope};

#[derive(Deserialize)]
struct Estimate {
    value: f64,
    ci_low: f64,
    ci_high: f64,
}

#[derive(Deserialize)]
struct Point {
    odds: f64,
    elo: Estimate,
    games: u64,
}

#[derive(Deserialize)]
struct Fit {
    value: f64,
    ci_low: f64,
    ci_high: f64,
    points: Vec<Point>,
}

#[derive(Deserialize)]
struct Engine {
    spec: String,
    commit: Option<String>,
    binary: String,
}

#[derive(Deserialize)]
struct Clock {
    base_ms: u64,
    increment_ms: u64,
}

#[derive(Deserialize)]
struct Machine {
    cpu_model: String,
    cores: usize,
}

#[derive(Deserialize)]
struct Model {
    engine: Engine,
    limit: Clock,
    machine: Machine,
    elo_per_doubling: Fit,
    games: u64,
    date: String,
}

/// `2+0.02`: the clock as `--tc` takes it.
fn tc(clock: &Clock) -> String {
    let seconds = |ms: u64| {
        let text = format!("{:.3}", ms as f64 / 1000.0);
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    };
    format!("{}+{}", seconds(clock.base_ms), seconds(clock.increment_ms))
}

/// The page of a `speed-elo` report (its `models`), or of one stored model file.
pub(crate) fn page(value: &serde_json::Value) -> Result<String> {
    let models: Vec<Model> = match value.get("models") {
        Some(models) => serde_json::from_value(models.clone())
            .context("a speed-elo report whose \"models\" are not models")?,
        None => vec![serde_json::from_value(value.clone())
            .context("a speed-Elo model file without its fields")?],
    };
    let mut html = head("lab speed-elo: Elo per doubling of time");
    if models.is_empty() {
        html.push_str("<p class=\"note\">No stored model.</p>\n");
    }
    for model in &models {
        let fit = &model.elo_per_doubling;
        let engine = match &model.engine.commit {
            Some(commit) => format!("{} (commit {commit})", model.engine.spec),
            None => model.engine.spec.clone(),
        };
        let title = format!("{engine} at {}", tc(&model.limit));
        let facts = [
            fact(
                "Elo per doubling",
                &format!(
                    "{:.1} (95% CI {:.1} to {:.1})",
                    fit.value, fit.ci_low, fit.ci_high
                ),
            ),
            fact(
                "engine",
                &format!("{engine}, binary {}", model.engine.binary),
            ),
            fact("time control of A", &tc(&model.limit)),
            fact(
                "machine",
                &format!(
                    "{} ({} cores)",
                    model.machine.cpu_model, model.machine.cores
                ),
            ),
            fact(
                "games",
                &format!(
                    "{} ({})",
                    model.games,
                    fit.points
                        .iter()
                        .map(|point| format!("{} at odds {}", point.games, point.odds))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ),
            fact("date", &model.date),
        ];
        let _ = write!(
            html,
            "<h2>{}</h2>\n<table class=\"facts\">\n{}</table>\n",
            crate::report::html::escape(&title),
            facts.concat()
        );
        let points: Vec<OddsElo> = fit
            .points
            .iter()
            .filter(|point| point.odds > 0.0)
            .map(|point| OddsElo {
                log2_odds: point.odds.log2(),
                elo: point.elo.value,
                ci: (point.elo.ci_low, point.elo.ci_high),
            })
            .collect();
        let footer = Footer(format!(
            "{engine} · {} ({} cores) · fitted {}",
            model.machine.cpu_model, model.machine.cores, model.date
        ));
        section(
            &mut html,
            "Elo against doublings of time",
            "Self-play in which B has odds × A's clock (base and increment alike). Each point is \
             B's Elo at one odds with its 95% interval; the line is the fit through the origin, \
             each point weighted by the inverse of its variance; the band is the slope's 95% \
             interval.",
            Some(speed_fit::draw(
                &title,
                &points,
                &Slope {
                    value: fit.value,
                    ci: (fit.ci_low, fit.ci_high),
                },
                &footer,
            )?),
        );
    }
    html.push_str("</body>\n</html>\n");
    Ok(html)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> serde_json::Value {
        serde_json::json!({
            "kind": "lab-speed-elo", "schema_version": 1,
            "engine": {"spec": "main", "commit": "abc", "binary": "74b32d52d7ca"},
            "limit": {"kind": "clock", "base_ms": 2000, "increment_ms": 20},
            "machine": {"cpu_model": "AMD EPYC", "cores": 2, "kernel": "k",
                        "transparent_hugepages": "madvise", "governor": "unavailable"},
            "machine_id": "98dad7d66072",
            "elo_per_doubling": {"value": 95.0, "ci_low": 80.0, "ci_high": 110.0, "points": [
                {"odds": 1.5, "elo": {"value": 55.0, "ci_low": 35.0, "ci_high": 75.0}, "games": 200},
                {"odds": 2.0, "elo": {"value": 96.0, "ci_low": 76.0, "ci_high": 116.0}, "games": 200}
            ]},
            "games": 400, "date": "2026-12-02"
        })
    }

    #[test]
    fn a_report_draws_each_model_and_a_model_file_draws_itself() {
        let report = serde_json::json!({"kind": "speed-elo", "schema_version": 2,
            "models": [model(), model()], "unusable": [], "results_files": []});
        let html = page(&report).unwrap();
        assert_eq!(html.matches("<svg").count(), 2, "{html}");
        assert!(html.contains("main (commit abc) at 2+0.02"), "{html}");
        assert!(html.contains("95.0 (95% CI 80.0 to 110.0)"));
        assert!(html.contains("200 at odds 1.5, 200 at odds 2"));
        let html = page(&model()).unwrap();
        assert_eq!(html.matches("<svg").count(), 1);
    }

    #[test]
    fn clocks_read_as_tc() {
        for (base_ms, increment_ms, text) in [
            (2000, 20, "2+0.02"),
            (10_000, 100, "10+0.1"),
            (500, 0, "0.5+0"),
        ] {
            assert_eq!(
                tc(&Clock {
                    base_ms,
                    increment_ms
                }),
                text
            );
        }
    }
}
