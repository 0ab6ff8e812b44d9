//! Epoch milliseconds to a fixed UTC text (`2026-05-01 10:00 UTC`) for prompts and rendered
//! summaries. Always UTC and minute precision so the same state renders the same bytes on every
//! machine; it must not consult a clock or a time zone.

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (H. Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// `YYYY-MM-DD HH:MM UTC`.
pub(crate) fn utc_minute(ms: i64) -> String {
    let secs = ms.div_euclid(1_000);
    let days = secs.div_euclid(86_400);
    let in_day = secs.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        in_day / 3_600,
        (in_day % 3_600) / 60
    )
}

/// `from A to B`, `at A` when both ends are the same minute, or `time unknown`.
pub(crate) fn span(earliest_ms: Option<i64>, latest_ms: Option<i64>) -> String {
    match (earliest_ms.map(utc_minute), latest_ms.map(utc_minute)) {
        (Some(a), Some(b)) if a == b => format!("at {a}"),
        (Some(a), Some(b)) => format!("from {a} to {b}"),
        (Some(a), None) | (None, Some(a)) => format!("at {a}"),
        (None, None) => "time unknown".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants_in_utc() {
        assert_eq!(utc_minute(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc_minute(1_700_000_000_000), "2023-11-14 22:13 UTC");
        assert_eq!(utc_minute(951_825_600_000), "2000-02-29 12:00 UTC");
        assert_eq!(utc_minute(-60_000), "1969-12-31 23:59 UTC");
        // Extreme values format without panicking.
        let _ = utc_minute(i64::MAX);
        let _ = utc_minute(i64::MIN);
    }

    #[test]
    fn spans_collapse_equal_ends() {
        assert_eq!(span(Some(0), Some(59_000)), "at 1970-01-01 00:00 UTC");
        assert_eq!(
            span(Some(0), Some(3_600_000)),
            "from 1970-01-01 00:00 UTC to 1970-01-01 01:00 UTC"
        );
        assert_eq!(span(None, None), "time unknown");
    }
}
