//! How the lab writes a count for a reader: digits grouped in thousands (`20,000`). A leaf, so
//! the reports and the progress lines (which may not import the reports) write counts alike.

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_groups_digits() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(4412345), "4,412,345");
        assert_eq!(thousands(u64::MAX), "18,446,744,073,709,551,615");
    }
}
