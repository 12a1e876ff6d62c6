//! How the lab writes a count for a reader: digits grouped in thousands (`20,000`), and an
//! SPRT's Elo bounds to two decimals at most. A leaf, so the reports and the progress lines
//! (which may not import the reports) write them alike.

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
    let fixed = format!("{value:.2}");
    let trimmed = fixed.trim_end_matches('0').trim_end_matches('.');
    match trimmed {
        "-0" | "" => "0".to_string(),
        _ => trimmed.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn thousands_groups_digits() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(4412345), "4,412,345");
        assert_eq!(thousands(u64::MAX), "18,446,744,073,709,551,615");
    }
}
