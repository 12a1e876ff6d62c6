//! How the lab writes a count for a reader: digits grouped in thousands (`20,000`), an SPRT's
//! Elo bounds to two decimals at most, a decimal without its trailing zeros, and a duration
//! (`4m10s`). A leaf, so the reports and the progress lines (which may not import the reports)
//! write them alike.

use std::time::Duration;

/// `1h02m`, `4m10s`, `12s`.
pub(crate) fn format_duration(duration: Duration) -> String {
    let seconds = duration.as_secs();
    match seconds {
        0..60 => format!("{seconds}s"),
        60..3600 => format!("{}m{:02}s", seconds / 60, seconds % 60),
        _ => format!("{}h{:02}m", seconds / 3600, seconds % 3600 / 60),
    }
}

/// A signed decimal to `decimals` places, `+1.5` or `-0.3`. A value that rounds to zero is
/// `+0.0`, never `-0.0`: a sign the reader would take for a direction the figure does not have.
pub(crate) fn signed(value: f64, decimals: usize) -> String {
    let text = format!("{value:+.decimals$}");
    match text.strip_prefix('-') {
        Some(digits) if digits.bytes().all(|b| b == b'0' || b == b'.') => format!("+{digits}"),
        _ => text,
    }
}

/// `20000` as `20,000`.
pub(crate) fn thousands(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// An SPRT bound as given (`-1.75`, `0`, `5`) or, shifted by a measured speed, to two decimals
/// (`9.01`, not `9.013835718499607`): trailing zeros dropped, never `-0`.
pub(crate) fn elo_bound(value: f64) -> String {
    match trim_fraction_zeros(format!("{value:.2}")).as_str() {
        "-0" => "0".to_string(),
        trimmed => trimmed.to_string(),
    }
}

/// `1.500` as `1.5` and `2.00` as `2`; digits without a decimal point (`100`, `1e+05`) as they
/// are, so a whole number keeps its zeros.
pub(crate) fn trim_fraction_zeros(digits: String) -> String {
    if digits.contains('.') {
        digits
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    } else {
        digits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signed_figure_that_rounds_to_zero_has_no_minus() {
        assert_eq!(signed(-1.0e-7, 1), "+0.0");
        assert_eq!(signed(-0.0, 2), "+0.00");
        assert_eq!(signed(-0.05, 1), "-0.1");
        assert_eq!(signed(-0.04, 1), "+0.0");
        assert_eq!(signed(3.25, 0), "+3");
        assert_eq!(signed(-12.34, 1), "-12.3");
    }

    #[test]
    fn durations_read_at_a_glance() {
        assert_eq!(format_duration(Duration::from_secs(12)), "12s");
        assert_eq!(format_duration(Duration::from_secs(250)), "4m10s");
        assert_eq!(format_duration(Duration::from_secs(3720)), "1h02m");
        assert_eq!(format_duration(Duration::MAX), "5124095576030431h00m");
    }

    #[test]
    fn elo_bounds_read_as_given_or_to_two_decimals() {
        assert_eq!(elo_bound(-1.75), "-1.75");
        assert_eq!(elo_bound(0.0), "0");
        assert_eq!(elo_bound(-0.0), "0");
        assert_eq!(elo_bound(-0.001), "0");
        assert_eq!(elo_bound(5.0), "5");
        assert_eq!(elo_bound(0.5), "0.5");
        assert_eq!(elo_bound(10.0), "10");
        assert_eq!(elo_bound(9.013835718499607), "9.01");
        assert_eq!(elo_bound(-14.996), "-15");
    }

    #[test]
    fn only_a_fraction_loses_its_trailing_zeros() {
        assert_eq!(trim_fraction_zeros("1.500".into()), "1.5");
        assert_eq!(trim_fraction_zeros("2.00".into()), "2");
        assert_eq!(trim_fraction_zeros("100".into()), "100");
        assert_eq!(trim_fraction_zeros("-0.0".into()), "-0");
    }

    #[test]
    fn thousands_groups_digits() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(4412345), "4,412,345");
        assert_eq!(thousands(u64::MAX), "18,446,744,073,709,551,615");
    }
}
