//! The page of a match (`lab match --export-html`, `lab match merge --export-html`, `lab report`
//! of a match's JSON): the facts of the match, the SPRT's LLR between its bounds, B's Elo with
//! its interval as the games accrued (both from the JSON's `trajectory`, computed in
//! `games::trajectory`), the pentanomial counts, and B's NPS over A's in runs of consecutive
//! games (the JSON's `nps_ratio_by_run`).

pub(crate) mod elo;
pub(crate) mod llr;
pub(crate) mod model;
pub(crate) mod over_games;
pub(crate) mod pentanomial;
pub(crate) mod speed_runs;

use std::fmt::Write as _;

use anyhow::Result;

use crate::calendar::utc_minute;
use crate::games::sprt::{EloModel, MIN_PAIRS_FOR_ESTIMATES, PENTANOMIAL_CELLS};
use crate::games::summary::SprtState;
use crate::report::findings::played_alike;
use crate::report::html::plot::Footer;
use crate::report::html::{escape, fact, head, machine_of, section, section_with};
use crate::report::matches::{decision, estimate, los, pace, search_rows, shards};
use elo::EloPoint;
use model::{MatchDoc, MatchEngine, ShardStarted};

/// The machine and date lines of a match: where its games finished, or for a merge, each
/// distinct machine with its shards and when the shards were started.
fn played_on(doc: &MatchDoc) -> (String, String) {
    if let Some(measured) = &doc.measured {
        return (
            machine_of(
                measured.hostname.as_deref(),
                &measured.machine.cpu_model,
                measured.machine.cores,
            ),
            format!("games finished {}", utc_minute(measured.measured_unix)),
        );
    }
    let Some((first, last)) = doc
        .shards_started
        .iter()
        .map(|shard| shard.started.measured_unix)
        .fold(None, |span: Option<(u64, u64)>, at| {
            Some(span.map_or((at, at), |(lo, hi)| (lo.min(at), hi.max(at))))
        })
    else {
        return (
            "not recorded (results files written by a lab that did not record their machine)"
                .to_string(),
            "not recorded".to_string(),
        );
    };
    let mut machines: Vec<(String, Vec<String>)> = Vec::new();
    for ShardStarted { shard, started } in &doc.shards_started {
        let machine = machine_of(
            started.hostname.as_deref(),
            &started.machine.cpu_model,
            started.machine.cores,
        );
        let shard = format!("{}/{}", shard.index, shard.count);
        match machines.iter_mut().find(|(known, _)| *known == machine) {
            Some((_, shards)) => shards.push(shard),
            None => machines.push((machine, vec![shard])),
        }
    }
    let unrecorded: Vec<String> = doc
        .shards
        .iter()
        .filter(|shard| {
            !doc.shards_started
                .iter()
                .any(|started| started.shard.index == shard.index)
        })
        .map(|shard| format!("{}/{}", shard.index, shard.count))
        .collect();
    let mut machine = machines
        .iter()
        .map(|(machine, shards)| {
            if machines.len() == 1 && unrecorded.is_empty() {
                machine.clone()
            } else {
                format!("{machine}: shards {}", shards.join(" "))
            }
        })
        .collect::<Vec<_>>()
        .join("; ");
    if !unrecorded.is_empty() {
        machine.push_str(&format!("; shards {}: not recorded", unrecorded.join(" ")));
    }
    let date = if first == last {
        format!("shards started {}", utc_minute(first))
    } else {
        format!(
            "shards started {} to {}",
            utc_minute(first),
            utc_minute(last)
        )
    };
    (machine, date)
}

/// Said instead of the trajectory plots of a JSON from before the trajectory was recorded.
const NO_TRAJECTORY: &str =
    "This JSON was written by a lab that did not record the trajectory: nothing to draw.";

pub(crate) fn page(doc: &MatchDoc) -> Result<String> {
    let [a, b] = &doc.engines;
    let (machine, date) = played_on(doc);
    let footer = Footer(format!(
        "A = {} · B = {} · {machine} · {date}",
        a.name, b.name
    ));
    let title = format!("lab match: A = {}, B = {}", a.name, b.name);
    let mut html = head(&title);
    let side = |engine: &MatchEngine| match &engine.commit {
        Some(commit) => format!("{} [{}, commit {commit}]", engine.name, engine.spec),
        None => format!("{} [{}]", engine.name, engine.spec),
    };
    let shards = shards(&doc.shards);
    let facts = [
        fact("A", &side(a)),
        fact("B", &side(b)),
        fact("time control", &doc.tc),
        fact(
            "book",
            &format!(
                "{}, {} openings, seed {}",
                doc.book.source, doc.book.openings, doc.seed
            ),
        ),
    ];
    let adjudication = doc
        .adjudication
        .map(|rules| fact("adjudication", &rules.words()));
    let facts = facts.into_iter().chain(adjudication).chain([
        fact(
            "games",
            &format!(
                "{} of a budget of {} ({} complete pairs){shards}",
                doc.games, doc.max_games, doc.pairs
            ),
        ),
        fact(
            "B: wins / draws / losses",
            &format!("{} / {} / {}", doc.wdl.wins, doc.wdl.draws, doc.wdl.losses),
        ),
        fact(
            &format!("pentanomial [{}]", PENTANOMIAL_CELLS.join(", ")),
            &format!("{:?}", doc.pentanomial.0),
        ),
        fact("Elo of B (logistic)", &estimate(doc.elo, &doc.pentanomial)),
        fact(
            "nElo of B (normalized)",
            &estimate(doc.nelo, &doc.pentanomial),
        ),
        fact("LOS", &los(doc.los, &doc.pentanomial)),
        fact(
            "SPRT",
            &sprt_summary(doc.sprt.as_ref(), doc.games_per_minute),
        ),
    ]);
    let facts: String = facts.collect();
    let searches: Vec<String> = search_rows(&doc.search_in_games, doc.nps_ratio_in_games.as_ref())
        .iter()
        .map(|[name, value]| fact(name, value))
        .collect();
    let closing = [
        fact("verdict", &doc.conclusion),
        fact("machine", &machine),
        fact("date", &date),
    ];
    let _ = write!(
        html,
        "<table class=\"facts\">\n{}{}{}</table>\n",
        facts,
        searches.concat(),
        closing.concat()
    );
    if let Some(warning) = played_alike(doc.alike) {
        let _ = writeln!(html, "<p class=\"warning\">{}</p>", escape(&warning));
    }

    // A merge pools its shards' games by pair; a match keeps them as they finished.
    let games_order = if doc.results_file.is_some() {
        "in the order the games finished (the results file's order)"
    } else {
        "the shards' games pooled in pair order"
    };
    let order = format!("after each complete pair, {games_order}");
    let points = doc.trajectory.as_deref();
    let thinned = points.is_some_and(|p| p.last().is_some_and(|last| last.pairs > p.len() as u64));
    let thinning = if thinned {
        " The trajectory is thinned to evenly spaced pairs, the first and last kept."
    } else {
        ""
    };

    let (llr_text, llr_plot) = match (&doc.sprt, points) {
        (None, _) => (
            "No SPRT was set (lab match --sprt elo0=…,elo1=…): there is no log-likelihood \
             ratio to draw."
                .to_string(),
            None,
        ),
        (Some(_), None) => (NO_TRAJECTORY.to_string(), None),
        (Some(sprt), Some(points)) => {
            let line: Vec<(f64, f64)> = points
                .iter()
                .filter_map(|p| Some((p.games as f64, p.llr?)))
                .collect();
            if line.is_empty() {
                ("No complete pair yet: nothing to draw.".to_string(), None)
            } else {
                let test = llr::Test {
                    lower: sprt.lower,
                    upper: sprt.upper,
                    hypotheses: format!(
                        "H0: elo0 = {}, H1: elo1 = {} ({})",
                        crate::digits::elo_bound(sprt.test.elo0),
                        crate::digits::elo_bound(sprt.test.elo1),
                        sprt.test.model
                    ),
                    decision: decision(sprt.result),
                };
                (
                    format!(
                        "The GSPRT's log-likelihood ratio {order}. It accepts H1 (B is stronger \
                         by elo1) when it reaches the upper bound, H0 at the lower bound \
                         (α = {}, β = {}); the black point is where the games stopped.{thinning}",
                        sprt.test.alpha, sprt.test.beta
                    ),
                    Some(llr::draw(&line, &test, &footer)?),
                )
            }
        }
    };
    section(
        &mut html,
        "SPRT: log-likelihood ratio over games",
        &llr_text,
        llr_plot,
    );

    let (elo_text, elo_plot) = match points {
        None => (NO_TRAJECTORY.to_string(), None),
        Some(points) => {
            // The band starts where the page's text gives an interval: no report reads one
            // from fewer pairs.
            let band: Vec<EloPoint> = points
                .iter()
                .filter(|p| p.pairs >= MIN_PAIRS_FOR_ESTIMATES)
                .filter_map(|p| {
                    Some(EloPoint {
                        games: p.games as f64,
                        elo: p.elo?,
                        low: p.elo_low?,
                        high: p.elo_high?,
                    })
                })
                .collect();
            if band.is_empty() {
                (
                    "B's Elo had no interval yet (fewer than ten complete pairs, or B won or \
                     lost every pair): nothing to draw."
                        .to_string(),
                    None,
                )
            } else {
                let hypotheses = doc
                    .sprt
                    .as_ref()
                    .filter(|sprt| sprt.test.model == EloModel::Logistic)
                    .map(|sprt| (sprt.test.elo0, sprt.test.elo1));
                let (svg, clipped) = elo::draw(&band, hypotheses, &footer)?;
                let clipping = if clipped {
                    " The axis fits the later 90% of the points: the wider intervals of the \
                     first pairs are cut at its edge."
                } else {
                    ""
                };
                (
                    format!(
                        "B's logistic Elo and its 95% interval (from the pentanomial counts) \
                         {order}. Where the band leaves 0, the difference is significant at that \
                         point (a look at a running interval, not a test).{clipping}{thinning}"
                    ),
                    Some(svg),
                )
            }
        }
    };
    section(&mut html, "Elo over games", &elo_text, elo_plot);

    let (penta_text, penta_plot) = if doc.pairs == 0 {
        ("No complete pair: no pentanomial counts.", None)
    } else {
        (
            "Each pair plays one opening twice with colours swapped; the bars count the pairs \
             by B's two results (L loss, D draw, W win, in either order). The statistics above \
             are computed from these counts.",
            Some(pentanomial::draw(&doc.pentanomial.0, &footer)?),
        )
    };
    section(&mut html, "Pentanomial counts", penta_text, penta_plot);

    let (speed_text, speed_plot) = match &doc.nps_ratio_in_games {
        Some(all) if !doc.nps_ratio_by_run.is_empty() => {
            if speed_runs::drawable(&doc.nps_ratio_by_run, all) {
                (
                    format!(
                        "B's NPS over A's in each of {} runs of consecutive games ({games_order}; \
                         the games in which both sides reported nodes and time), with its 95% \
                         interval from the run's own games, and over all the games, its interval \
                         {}. Both engines search in turn in a game, so load common to both \
                         cancels; runs that leave the band by more than their bars show the \
                         machine treating the two binaries differently over the match, and then \
                         the runs' spread is the interval, or the sittings' (the lab's runs that \
                         played the games, listed below when recorded) when theirs is wider \
                         (docs/verdict.md).",
                        doc.nps_ratio_by_run.len(),
                        speed_runs::interval_words(all)
                    ),
                    Some(speed_runs::draw(&doc.nps_ratio_by_run, all, &footer)?),
                )
            } else {
                (speed_runs::NOT_DRAWABLE.to_string(), None)
            }
        }
        _ => (
            "Fewer than 100 games in which both sides reported nodes and time: too few for \
             runs of consecutive games to draw."
                .to_string(),
            None,
        ),
    };
    section_with(
        &mut html,
        "Speed over the games",
        &speed_text,
        speed_plot,
        &speed_runs::sittings_table(&doc.nps_ratio_by_sitting),
    );
    html.push_str("</body>\n</html>\n");
    Ok(html)
}

fn sprt_summary(sprt: Option<&SprtState>, games_per_minute: Option<f64>) -> String {
    match sprt {
        None => "none (no --sprt)".to_string(),
        Some(sprt) => format!(
            "[{}, {}] ({}, α={}, β={}): LLR {:.2} (bounds {:.2}, {:.2}) → {}{}",
            crate::digits::elo_bound(sprt.test.elo0),
            crate::digits::elo_bound(sprt.test.elo1),
            sprt.test.model,
            sprt.test.alpha,
            sprt.test.beta,
            sprt.llr,
            sprt.lower,
            sprt.upper,
            decision(sprt.result),
            pace(sprt.games_to_decision, games_per_minute)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::summary::Alike;

    /// A merged match's JSON whose shards were started on `started` (host, Unix time), in
    /// shard order; `None`: a file that did not record it.
    fn merged(started: &[Option<(&str, u64)>]) -> MatchDoc {
        let count = started.len();
        let shards: Vec<serde_json::Value> = (1..=count)
            .map(|index| serde_json::json!({"index": index, "count": count}))
            .collect();
        let recorded: Vec<serde_json::Value> = started
            .iter()
            .enumerate()
            .filter_map(|(index, started)| {
                let (host, unix) = (*started)?;
                Some(serde_json::json!({
                    "shard": {"index": index + 1, "count": count},
                    "measured_unix": unix, "hostname": host,
                    "machine": {"cpu_model": "Test CPU", "cores": 4}
                }))
            })
            .collect();
        let value = serde_json::json!({
            "schema_version": 1, "kind": "match",
            "engines": [{"spec": "A", "name": "a"}, {"spec": "B", "name": "b"}],
            "tc": "nodes 1", "book": {"source": "built-in", "openings": 2}, "seed": 1,
            "games_budget": 4, "shards": shards, "games": 0, "pairs": 0,
            "wdl": {"wins": 0, "draws": 0, "losses": 0}, "pentanomial": [0, 0, 0, 0, 0],
            "elo": null, "sprt": null, "verdict": "0 of 4 games played",
            "shards_started": recorded, "trajectory": null
        });
        MatchDoc::from_json(&value).unwrap()
    }

    #[test]
    fn a_merge_names_each_shards_machine_and_start() {
        let doc = merged(&[
            Some(("runner-1", 86_400)),
            Some(("runner-2", 86_400 + 3_600)),
        ]);
        let (machine, date) = played_on(&doc);
        assert_eq!(
            machine,
            "runner-1, Test CPU (4 cores): shards 1/2; runner-2, Test CPU (4 cores): shards 2/2"
        );
        assert_eq!(
            date,
            "shards started 1970-01-02 00:00 UTC to 1970-01-02 01:00 UTC"
        );
        let page = page(&doc).unwrap();
        assert!(page.contains(&machine) && page.contains(&date), "{page}");
        assert!(!page.contains("not recorded"), "{page}");

        let doc = merged(&[Some(("one", 0)), Some(("one", 0))]);
        assert_eq!(
            played_on(&doc),
            (
                "one, Test CPU (4 cores)".to_string(),
                "shards started 1970-01-01 00:00 UTC".to_string()
            )
        );
    }

    #[test]
    fn a_match_played_alike_says_so_on_its_page() {
        let mut doc = merged(&[Some(("one", 0))]);
        let warning = "played the same moves in all 12 pairs checked";
        doc.alike = Alike {
            checked: 12,
            identical: 12,
        };
        assert!(page(&doc).unwrap().contains(warning));
        doc.alike.identical = 11;
        assert!(!page(&doc).unwrap().contains("played the same moves"));
    }

    #[test]
    fn shards_that_record_no_machine_are_named() {
        let doc = merged(&[None, Some(("one", 0))]);
        assert_eq!(
            played_on(&doc).0,
            "one, Test CPU (4 cores): shards 2/2; shards 1/2: not recorded"
        );
        let doc = merged(&[None]);
        assert!(played_on(&doc).0.contains("did not record their machine"));
    }
}
