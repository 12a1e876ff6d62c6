//! The clock and the calendar: now since the Unix epoch, and civil dates from Unix time, for
//! stamps, PGN headers and build notes. A leaf, so any module may date something without
//! depending on the module that first needed it.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Now, as time since the Unix epoch; zero on a clock set before 1970.
pub(crate) fn since_epoch() -> Duration {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
}

/// Now, in whole seconds since the Unix epoch; 0 on a clock set before 1970.
pub(crate) fn now_unix() -> u64 {
    since_epoch().as_secs()
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// The UTC date of Unix time `unix` (seconds, negative before 1970), year, month and day
/// joined by `separator`: `2026-05-04` with `'-'`, `2026.05.04` (PGN's Date) with `'.'`.
pub(crate) fn utc_date(unix: i64, separator: char) -> String {
    let (year, month, day) = civil_from_days(unix.div_euclid(86_400));
    format!("{year:04}{separator}{month:02}{separator}{day:02}")
}

/// Today's UTC date as [`utc_date`] writes it; 1970-01-01 on a clock set before 1970.
pub(crate) fn today_utc(separator: char) -> String {
    utc_date(i64::try_from(now_unix()).unwrap_or(i64::MAX), separator)
}

/// `2026-05-04 13:07 UTC`: a Unix time to the minute.
pub(crate) fn utc_minute(unix: u64) -> String {
    let (year, month, day) = civil_from_days((unix / 86_400) as i64);
    let seconds = unix % 86_400;
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        seconds / 3600,
        seconds / 60 % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_follow_the_calendar() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(20_787), (2026, 11, 30));
        assert_eq!(
            utc_minute(20_787 * 86_400 + 13 * 3600 + 7 * 60 + 59),
            "2026-11-30 13:07 UTC"
        );
        assert_eq!(utc_date(20_787 * 86_400 + 86_399, '-'), "2026-11-30");
        assert_eq!(utc_date(11_016 * 86_400, '.'), "2000.02.29");
        assert_eq!(utc_date(-1, '-'), "1969-12-31");
    }
}
