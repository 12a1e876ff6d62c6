//! `lab match --format cutechess`: the result lines cutechess-cli prints at the end of a match,
//! for the scripts that scrape them (OpenBench's old client split the `Score of` line at its
//! colon and read the 1st, 3rd and 5th words as wins, losses and draws).
//!
//! The engine under test comes first, as OpenBench passes its dev engine first: the score, the
//! Elo and the SPRT are B's, as in the lab's own report. The Elo, its interval and the LOS are
//! the lab's pentanomial figures; where the lab's other formats withhold them (too few pairs)
//! or they do not exist (a zero-width interval) the line says `nan`, as cutechess-cli does for an undefined figure,
//! so no scraper reads a number the games cannot support.

use super::sanitize::visible;
use crate::digits::trim_fraction_zeros;
use crate::games::sprt::SprtDecision;
use crate::games::summary::Summary;
use crate::games::MatchReport;

/// The lines, each ending with a newline.
pub(crate) fn render(report: &MatchReport) -> String {
    lines(
        [&report.engines[0].name, &report.engines[1].name],
        &report.summary,
    )
}

/// The lines of a match between A and B (`names`) that ended with `summary`.
fn lines(names: [&str; 2], summary: &Summary) -> String {
    let (a, b) = (name(names[0]), name(names[1]));
    let wdl = summary.wdl;
    let games = wdl.games();
    let score = wdl.score().unwrap_or(f64::NAN);
    let mut text = format!(
        "Score of {b} vs {a}: {} - {} - {}  [{score:.3}] {games}\n",
        wdl.wins, wdl.losses, wdl.draws
    );
    // The figures every other format withholds below the lab's least pairs read `nan` here too.
    let elo = summary
        .elo
        .filter(|elo| !summary.too_few_pairs && elo.half_width() > 0.0);
    let (diff, margin) = elo.map_or((f64::NAN, f64::NAN), |elo| (elo.value, elo.half_width()));
    let los = match elo {
        Some(_) => summary.los.map_or(f64::NAN, |los| los * 100.0),
        None => f64::NAN,
    };
    let draw_ratio = if games == 0 {
        f64::NAN
    } else {
        wdl.draws as f64 * 100.0 / games as f64
    };
    text.push_str(&format!(
        "Elo difference: {} +/- {}, LOS: {} %, DrawRatio: {} %\n",
        fixed1(diff),
        fixed1(margin),
        fixed1(los),
        fixed1(draw_ratio)
    ));
    if let Some(sprt) = &summary.sprt {
        let mut line = format!(
            "SPRT: llr {} ({}%), lbound {}, ubound {}",
            significant3(sprt.llr),
            fixed1(sprt.llr / sprt.upper * 100.0),
            significant3(sprt.lower),
            significant3(sprt.upper)
        );
        match sprt.result {
            SprtDecision::AcceptH0 => line.push_str(" - H0 was accepted"),
            SprtDecision::AcceptH1 => line.push_str(" - H1 was accepted"),
            SprtDecision::Continue => {}
        }
        text.push_str(&line);
        text.push('\n');
    }
    text.push_str("Finished match\n");
    text
}

/// An engine's name as a scraper can split the line: control characters written out, and no
/// colon, which would end the `Score of` line's names early.
fn name(text: &str) -> String {
    visible(text).replace(':', "_")
}

/// `%.1f`, with `nan` for a figure that does not exist.
fn fixed1(value: f64) -> String {
    if value.is_finite() {
        format!("{:.1}", value + 0.0)
    } else {
        "nan".to_string()
    }
}

/// printf's `%.3g` (Qt's `'g'` with precision 3): three significant digits, trailing zeros
/// dropped, an exponent below 1e-4 or from 1e3 on.
fn significant3(value: f64) -> String {
    if !value.is_finite() {
        return "nan".to_string();
    }
    if value == 0.0 {
        return "0".to_string();
    }
    let scientific = format!("{value:.2e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if !(-4..3).contains(&exponent) {
        let sign = if exponent < 0 { '-' } else { '+' };
        return format!(
            "{}e{sign}{:02}",
            trim_fraction_zeros(mantissa.to_string()),
            exponent.abs()
        );
    }
    let decimals = (2 - exponent).max(0) as usize;
    trim_fraction_zeros(format!("{value:.decimals$}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::sprt::Estimate;
    use crate::games::summary::{decided_sample, summarize};

    #[test]
    fn the_lines_are_cutechess_clis() {
        let summary = decided_sample();
        let upper = summary.sprt.as_ref().unwrap().upper;
        assert_eq!(
            lines(["base", "dev"], &summary),
            format!(
                "Score of dev vs base: 30 - 20 - 50  [0.550] 100\n\
                 Elo difference: 34.9 +/- 40.9, LOS: 95.1 %, DrawRatio: 50.0 %\n\
                 SPRT: llr 2.95 ({:.1}%), lbound -2.94, ubound 2.94 - H1 was accepted\n\
                 Finished match\n",
                2.9512 / upper * 100.0
            )
        );
    }

    #[test]
    fn undefined_figures_are_nan_never_a_zero_width_interval() {
        let mut summary = summarize(&[], None);
        summary.wdl.wins = 2;
        summary.games = 2;
        summary.pairs = 1;
        summary.elo = Some(Estimate {
            value: 190.8,
            ci_low: 190.8,
            ci_high: 190.8,
        });
        summary.los = Some(1.0);
        assert_eq!(
            lines(["A", "B"], &summary),
            "Score of B vs A: 2 - 0 - 0  [1.000] 2\n\
             Elo difference: nan +/- nan, LOS: nan %, DrawRatio: 0.0 %\n\
             Finished match\n"
        );
    }

    #[test]
    fn an_interval_the_other_formats_withhold_for_too_few_pairs_is_nan_here_too() {
        let mut summary = decided_sample();
        summary.too_few_pairs = true;
        summary.sprt = None;
        let text = lines(["A", "B"], &summary);
        assert!(
            text.contains("Elo difference: nan +/- nan, LOS: nan %"),
            "{text}"
        );
    }

    #[test]
    fn three_significant_digits_as_printf_g() {
        for (value, printed) in [
            (2.944_438_979, "2.94"),
            (-2.944_438_979, "-2.94"),
            (0.5, "0.5"),
            (0.0, "0"),
            (12.345, "12.3"),
            (123.4, "123"),
            (999.6, "1e+03"),
            (1234.0, "1.23e+03"),
            (0.000_123_4, "0.000123"),
            (0.000_012_34, "1.23e-05"),
            (-1.0, "-1"),
        ] {
            assert_eq!(significant3(value), printed, "{value}");
        }
    }

    #[test]
    fn names_keep_the_score_line_splittable() {
        assert_eq!(name("dev: v2"), "dev_ v2");
        assert_eq!(name("a\u{1b}[31m"), "a\\x1b[31m");
    }
}
