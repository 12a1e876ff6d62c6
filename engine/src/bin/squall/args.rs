//! The command-line helpers the subcommands share: numeric options read strictly, an option
//! given twice refused, the shared limits, and the positions file of `--positions`.

use squall::{bench, Board};

/// The largest `--hash`, matching the UCI `Hash` option's maximum.
pub const MAX_HASH_MB: usize = 4096;

/// A numeric option's value: ASCII digits only (no sign, space or exponent, which `str::parse`
/// would take), within `min..=max`.
pub fn parse_count(option: &str, text: &str, min: u64, max: u64) -> Result<u64, String> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "bad {option} `{text}`: expected a number {min}..={max} (digits only, no sign)"
        ));
    }
    text.parse::<u64>()
        .ok()
        .filter(|n| (min..=max).contains(n))
        .ok_or(format!(
            "{option} `{text}` is out of range: expected {min}..={max}"
        ))
}

/// Refuses an option given twice, which would otherwise silently keep the last value.
pub fn once(seen: &mut Vec<&'static str>, option: &'static str) -> Result<(), String> {
    if seen.contains(&option) {
        return Err(format!("{option} is given twice; give it once"));
    }
    seen.push(option);
    Ok(())
}

/// The deepest `--depth` of bench and calibrate: the search's ply limit.
pub const MAX_SEARCH_DEPTH: u64 = 64;

/// Reads a positions file (`--positions`): plain UTF-8 text, one FEN or EPD per line
/// (`bench::parse_positions`). A gzip file is named as such: the lab decompresses its `.gz`
/// pools before they reach the engine, which reads only plain text.
pub fn read_positions(path: &str) -> Result<Vec<Board>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
    if bytes.starts_with(&[0x1f, 0x8b]) {
        return Err(format!(
            "{path}: gzip-compressed; squall reads plain-text FEN/EPD (the lab decompresses \
             .gz pools itself; here, `gunzip -k {path}` first)"
        ));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        format!(
            "{path}: not UTF-8 text (bad byte at offset {}); squall reads plain-text FEN/EPD",
            e.utf8_error().valid_up_to()
        )
    })?;
    let positions = bench::parse_positions(&text)
        .map_err(|(line, reason)| format!("{path}:{line}: {reason}"))?;
    if positions.is_empty() {
        return Err(format!("{path}: no positions"));
    }
    Ok(positions)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_plain_digits_in_range() {
        assert_eq!(parse_count("--depth", "012", 1, 64), Ok(12));
        for text in [
            "+5",
            "-1",
            "0",
            "65",
            " 5",
            "5 ",
            "1e1",
            "",
            "99999999999999999999",
        ] {
            let error = parse_count("--depth", text, 1, 64).unwrap_err();
            assert!(error.contains("--depth"), "{text:?}: {error}");
        }
        let mut seen = Vec::new();
        assert!(once(&mut seen, "--depth").is_ok());
        assert!(once(&mut seen, "--depth").unwrap_err().contains("twice"));
    }
}
