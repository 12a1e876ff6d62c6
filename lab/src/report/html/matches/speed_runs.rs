//! B's NPS over A's over the match: each run of consecutive games as a point with its 95%
//! interval (from its own games) as an error bar, at the run's middle game; the ratio of all the
//! games as a line with its interval as a band. Runs that leave the band by more than their
//! bars show the machine's speed drifting over the match, the case where the runs' spread, not
//! the games', bounds the ratio (`NpsRatioInGames`).

use std::fmt::Write as _;

use anyhow::Result;
use plotters::prelude::*;

use crate::digits::thousands;
use crate::games::summary::{NpsRatioInGames, NpsRatioOfRun, NpsRatioOfSitting, WiderNpsInterval};
use crate::report::html::escape;
use crate::report::html::matches::elo::BAND_OPACITY;
use crate::report::html::matches::over_games::{chart, horizontal, legend, swatch, x_end};
use crate::report::html::plot::{padded, plot_error, svg, Footer, B_COLOUR};
use crate::report::ratio_change_with_ci;

const ZERO_COLOUR: RGBColor = RGBColor(0x55, 0x55, 0x55);
const RUN_COLOUR: RGBColor = RGBColor(0x2C, 0xA0, 0x2C);
/// Half the width of an error bar's caps, in games.
const CAP_SHARE: f64 = 0.008;

/// A ratio as a percent change.
fn pct(ratio: f64) -> f64 {
    (ratio - 1.0) * 100.0
}

/// What a page says instead of the plot when [`drawable`] says no.
pub(crate) const NOT_DRAWABLE: &str =
    "The JSON's runs of consecutive games are not ratios in order within the games: not drawn.";

/// Whether the runs and the ratio of all games, read from a JSON that may come from anywhere,
/// are ratios the plot can draw: finite percent changes, each interval around its value, the
/// runs in order within the games. Else the page says so instead of drawing.
pub(crate) fn drawable(runs: &[NpsRatioOfRun], all: &NpsRatioInGames) -> bool {
    let sane = |ratio: &crate::games::sprt::Estimate| {
        [ratio.ci_low, ratio.value, ratio.ci_high]
            .iter()
            .all(|r| *r > 0.0 && pct(*r).is_finite())
            && ratio.ci_low <= ratio.value
            && ratio.value <= ratio.ci_high
    };
    sane(&all.ratio)
        && runs.iter().all(|run| sane(&run.ratio))
        && runs
            .windows(2)
            .all(|pair| pair[0].through_game < pair[1].through_game)
        && runs.last().is_some_and(|run| run.through_game <= all.games)
}

/// The sittings that played the games, each with its games and B's NPS over A's in them, as
/// an HTML table; empty below two sittings (the JSON lists none then).
pub(crate) fn sittings_table(sittings: &[NpsRatioOfSitting]) -> String {
    if sittings.len() < 2 {
        return String::new();
    }
    let mut table = String::from(
        "<table class=\"figures\">\n<tr><th>sitting</th><th>started</th><th>games</th>\
         <th>B's NPS over A's (95% CI)</th></tr>\n",
    );
    for (index, sitting) in sittings.iter().enumerate() {
        let _ = writeln!(
            table,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            index + 1,
            escape(&crate::calendar::utc_minute(sitting.sitting.0 / 1_000_000)),
            thousands(sitting.games),
            escape(&ratio_change_with_ci(&sitting.ratio))
        );
    }
    table.push_str("</table>\n");
    table
}

/// Where the interval of all the games came from, for the text under the plot's heading.
pub(crate) fn interval_words(all: &NpsRatioInGames) -> &'static str {
    match all.wider_interval() {
        Some(WiderNpsInterval::Runs(_)) => "from the runs' spread, wider than game by game",
        Some(WiderNpsInterval::Sittings(_)) => {
            "from the spread between the sittings that played the games (each run of the lab), \
             wider than game by game and than the runs' spread"
        }
        None => "game by game, at least as wide as from the runs' spread",
    }
}

pub(crate) fn draw(
    runs: &[NpsRatioOfRun],
    all: &NpsRatioInGames,
    footer: &Footer,
) -> Result<String> {
    let all_label = format!(
        "all {} games: {}",
        thousands(all.games),
        ratio_change_with_ci(&all.ratio)
    );
    let all_label = all_label.as_str();
    let games = all.games as f64;
    let middles: Vec<f64> = runs
        .iter()
        .scan(0u64, |start, run| {
            let middle = (*start + run.through_game) as f64 / 2.0;
            *start = run.through_game;
            Some(middle)
        })
        .collect();
    let (lo, hi) = runs
        .iter()
        .flat_map(|run| [run.ratio.ci_low, run.ratio.ci_high])
        .chain([all.ratio.ci_low, all.ratio.ci_high, 1.0])
        .map(pct)
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), y| {
            (lo.min(y), hi.max(y))
        });
    let (lo, hi) = padded(lo, hi, 0.05);
    let run_games = runs.first().map_or(0, |run| run.through_game);
    let runs_label = format!(
        "each run of about {run_games} consecutive games: geometric mean, 95% interval from its \
         games"
    );
    let zero_label = "0: equal speed";
    let cap = CAP_SHARE * x_end(games);
    svg((1200, 420), footer, |area| {
        let mut chart = chart(
            area,
            "B's NPS over A's in runs of consecutive games",
            games,
            (lo, hi),
            "B's NPS over A's (% change)",
            &|y| format!("{y:+.1}%"),
            &[all_label, zero_label, &runs_label],
        )?;
        let band_style = B_COLOUR.mix(BAND_OPACITY).filled();
        let band = vec![
            (0.0, pct(all.ratio.ci_low)),
            (x_end(games), pct(all.ratio.ci_low)),
            (x_end(games), pct(all.ratio.ci_high)),
            (0.0, pct(all.ratio.ci_high)),
        ];
        chart
            .draw_series([Polygon::new(band, band_style)])
            .map_err(plot_error)?;
        chart
            .draw_series([horizontal(pct(all.ratio.value), games, B_COLOUR, 2)])
            .map_err(plot_error)?
            .label(all_label)
            .legend(|(x, y)| swatch(x, y, B_COLOUR, 2));
        chart
            .draw_series([horizontal(0.0, games, ZERO_COLOUR, 1)])
            .map_err(plot_error)?
            .label(zero_label)
            .legend(|(x, y)| swatch(x, y, ZERO_COLOUR, 1));
        let bars = runs.iter().zip(&middles).flat_map(|(run, &x)| {
            let (low, high) = (pct(run.ratio.ci_low), pct(run.ratio.ci_high));
            [
                vec![(x, low), (x, high)],
                vec![(x - cap, low), (x + cap, low)],
                vec![(x - cap, high), (x + cap, high)],
            ]
        });
        chart
            .draw_series(bars.map(|path| PathElement::new(path, RUN_COLOUR.stroke_width(1))))
            .map_err(plot_error)?;
        chart
            .draw_series(
                runs.iter().zip(&middles).map(|(run, &x)| {
                    Circle::new((x, pct(run.ratio.value)), 4, RUN_COLOUR.filled())
                }),
            )
            .map_err(plot_error)?
            .label(runs_label.as_str())
            .legend(|(x, y)| Circle::new((x + 8, y), 4, RUN_COLOUR.filled()));
        legend(&mut chart)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::sprt::Estimate;
    use crate::games::summary::NpsIntervalFrom;
    use crate::report::html::plot::{count, test_footer};

    fn estimate(value: f64, half: f64) -> Estimate {
        Estimate {
            value,
            ci_low: value - half,
            ci_high: value + half,
        }
    }

    #[test]
    fn runs_that_are_not_ratios_are_not_drawable() {
        let run = |through_game: u64, ratio: Estimate| NpsRatioOfRun {
            through_game,
            ratio,
        };
        let all = NpsRatioInGames {
            ratio: estimate(0.994, 0.002),
            games: 400,
            runs: 2,
            sittings: 0,
            interval_from: NpsIntervalFrom::Games,
        };
        let good = [
            run(200, estimate(0.99, 0.01)),
            run(400, estimate(1.0, 0.01)),
        ];
        assert!(drawable(&good, &all));
        let huge = [run(200, estimate(1e308, 1e300)), good[1]];
        assert!(
            !drawable(&huge, &all),
            "a percent change of 1e310 is no axis"
        );
        let negative = [run(200, estimate(-1.0, 0.1)), good[1]];
        assert!(!drawable(&negative, &all));
        let inverted = [run(200, estimate(1.0, -0.1)), good[1]];
        assert!(!drawable(&inverted, &all));
        assert!(!drawable(&[good[1], good[0]], &all), "out of order");
        let mut fewer = all;
        fewer.games = 300;
        assert!(!drawable(&good, &fewer), "runs past the games");
        assert!(!drawable(&[], &all), "no runs");
    }

    #[test]
    fn each_run_is_a_point_with_an_error_bar_beside_the_band_of_all_games() {
        let runs: Vec<NpsRatioOfRun> = (1..=20)
            .map(|i| NpsRatioOfRun {
                through_game: 200 * i,
                ratio: estimate(if i <= 10 { 0.99 } else { 0.998 }, 0.003),
            })
            .collect();
        let all = NpsRatioInGames {
            ratio: estimate(0.994, 0.002),
            games: 4000,
            runs: 20,
            sittings: 0,
            interval_from: NpsIntervalFrom::Runs,
        };
        let svg = draw(&runs, &all, &test_footer()).unwrap();
        crate::report::html::plot::assert_readable(&svg);
        // A point per run and one in the legend; three strokes per error bar.
        assert_eq!(count(&svg, "<circle"), 20 + 1, "{svg}");
        assert_eq!(count(&svg, "stroke=\"#2CA02C\" stroke-width=\"1\""), 20 * 3);
        assert_eq!(count(&svg, "<polygon"), 1, "the band of all games: {svg}");
        assert!(svg.contains("all 4,000 games"));
        assert!(svg.contains("each run of about 200 consecutive games"));
        assert!(svg.contains("-0.6%") || svg.contains("-1.0%"), "{svg}");
    }

    #[test]
    fn the_sittings_are_listed_from_two_with_when_each_started() {
        use crate::games::Sitting;
        let sitting = |start_s: u64, games, value| NpsRatioOfSitting {
            sitting: Sitting(start_s * 1_000_000),
            games,
            ratio: estimate(value, 0.002),
        };
        let one = [sitting(1_764_547_200, 1_426, 0.9983)];
        assert_eq!(sittings_table(&one), "");
        let table = sittings_table(&[one[0], sitting(1_764_554_400, 1_472, 0.9881)]);
        assert_eq!(table.matches("<tr><td>").count(), 2, "{table}");
        assert!(
            table.contains("<td>1</td><td>2025-12-01 00:00 UTC</td><td>1,426</td><td>-0.17%"),
            "{table}"
        );
        assert!(table.contains("<td>2</td><td>2025-12-01 02:00 UTC</td><td>1,472</td>"));
        // A file's absurd start still reads as a date.
        let absurd = sittings_table(&[
            one[0],
            NpsRatioOfSitting {
                sitting: Sitting(u64::MAX),
                ..one[0]
            },
        ]);
        assert_eq!(absurd.matches("<tr><td>").count(), 2);
    }

    proptest::proptest! {
        /// Whatever a JSON claims of its sittings (it is read from outside), the table has a
        /// row for each from two on, and nothing in it opens a tag of its own.
        #[test]
        fn any_sittings_give_one_plain_row_each(
            sittings in proptest::collection::vec(
                (proptest::num::u64::ANY, proptest::num::u64::ANY, -1e308f64..1e308),
                0..12,
            )
        ) {
            let sittings: Vec<NpsRatioOfSitting> = sittings
                .iter()
                .map(|&(start, games, value)| NpsRatioOfSitting {
                    sitting: crate::games::Sitting(start),
                    games,
                    ratio: estimate(value, 0.0),
                })
                .collect();
            let table = sittings_table(&sittings);
            let rows = if sittings.len() < 2 { 0 } else { sittings.len() };
            proptest::prop_assert_eq!(table.matches("<tr><td>").count(), rows);
            proptest::prop_assert_eq!(table.matches('<').count(), if rows == 0 { 0 } else {
                // <table>, the header row's <tr> and 4 <th> with their closings, </table>,
                // and per row <tr>, 4 <td> with closings.
                2 + 2 + 8 + rows * 10
            });
            let row = crate::report::matches::sittings_row(&sittings);
            proptest::prop_assert_eq!(row.is_some(), rows > 0);
        }
    }
}
