//! Time in a question: "yesterday", "last week", "in the last 3 days", "before 2026-05-01". A
//! relative phrase is read against an anchor the caller passes in — the newest stored time in
//! the caller's reach, so "last week" means the week before the conversation's latest message,
//! and the answer never depends on a clock. The window is a preference, not a filter: the
//! engine ranks the semantic candidates inside it first; the lexical search keeps the caller's
//! own `since`/`before`.
//!
//! Pure. English phrases and ISO dates only; anything else gives no window.

use crate::core::ask::terms::mentions;

const DAY: i64 = 86_400_000;

/// A time window in ms since the epoch: `since` inclusive, `before` exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// Start of the window (ms since the epoch, inclusive); `None` for no lower bound.
    pub since: Option<i64>,
    /// End of the window (ms since the epoch, exclusive); `None` for no upper bound.
    pub before: Option<i64>,
}

impl Window {
    /// Whether `at` (ms since the epoch) falls inside the window.
    pub fn contains(&self, at: i64) -> bool {
        self.since.is_none_or(|s| at >= s) && self.before.is_none_or(|b| at < b)
    }
}

fn start_of_day(ms: i64) -> i64 {
    ms.div_euclid(DAY) * DAY
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The first ISO date (`YYYY-MM-DD`) after `word` in `lower`, as ms at its UTC midnight.
fn date_after(lower: &str, word: &str) -> Option<i64> {
    let at = lower.find(word)? + word.len();
    let rest = lower[at..].trim_start();
    let date = rest.get(..10)?;
    let b = date.as_bytes();
    if b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let y: i64 = date[..4].parse().ok()?;
    let m: i64 = date[5..7].parse().ok()?;
    let d: i64 = date[8..10].parse().ok()?;
    ((1..=12).contains(&m) && (1..=31).contains(&d)).then(|| days_from_civil(y, m, d) * DAY)
}

/// "last 3 days" / "past 2 weeks": the number and the unit's length in days.
fn last_n(lower: &str) -> Option<i64> {
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    words.windows(3).find_map(|w| {
        if w[0] != "last" && w[0] != "past" {
            return None;
        }
        let n: i64 = w[1].parse().ok().filter(|n| (1..=3650).contains(n))?;
        let unit = match w[2].trim_end_matches('s') {
            "day" => 1,
            "week" => 7,
            "month" => 31,
            _ => return None,
        };
        Some(n * unit)
    })
}

/// The window a question's time phrase names, relative to `anchor` (ms), if it names one.
pub fn window_of(question: &str, anchor: i64) -> Option<Window> {
    let lower = question.to_lowercase();
    let has = |phrase: &str| mentions(&lower, phrase);
    let today = start_of_day(anchor);
    if let Some(days) = last_n(&lower) {
        return Some(Window {
            since: Some(anchor - days * DAY),
            before: None,
        });
    }
    let (since, before) = (date_after(&lower, "since "), date_after(&lower, "before "));
    let after = date_after(&lower, "after ").map(|d| d + DAY);
    if since.is_some() || before.is_some() || after.is_some() {
        return Some(Window {
            since: since.or(after),
            before,
        });
    }
    let relative = if has("yesterday") {
        (today - DAY, Some(today))
    } else if has("today") {
        (today, None)
    } else if has("last week") {
        (today - 14 * DAY, Some(today))
    } else if has("this week") || has("past week") {
        (today - 7 * DAY, None)
    } else if has("last month") {
        (today - 62 * DAY, Some(today))
    } else if has("this month") || has("past month") {
        (today - 31 * DAY, None)
    } else {
        return None;
    };
    Some(Window {
        since: Some(relative.0),
        before: relative.1,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_phrases_and_iso_dates_become_windows_around_the_anchor() {
        let anchor = days_from_civil(2026, 5, 10) * DAY + 15 * 3_600_000;
        let day = |d| days_from_civil(2026, 5, d) * DAY;
        assert_eq!(
            window_of("What did we decide yesterday?", anchor),
            Some(Window {
                since: Some(day(9)),
                before: Some(day(10))
            })
        );
        assert_eq!(
            window_of("what changed in the last 3 days", anchor),
            Some(Window {
                since: Some(anchor - 3 * DAY),
                before: None
            })
        );
        assert_eq!(
            window_of("anything before 2026-05-01 about the port?", anchor),
            Some(Window {
                since: None,
                before: Some(day(1))
            })
        );
        assert_eq!(
            window_of("why did we drop the retry wrapper?", anchor),
            None
        );
        assert_eq!(window_of("before 2026-13-45", anchor), None);
        assert!(window_of("last week", anchor).unwrap().contains(day(1)));
    }
}
