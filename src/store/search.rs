//! Search over stored messages and summaries. Patterns are always bound parameters, never spliced
//! into SQL. Two modes:
//! - `Text`: a literal string, case-insensitive for ASCII. Word-like patterns go through the FTS4
//!   index as a phrase and are confirmed by a substring check; patterns with CJK text (which the
//!   unicode61 tokenizer does not split into words) take a substring path over the conversation.
//! - `FullText`: the caller's FTS4 query syntax; a malformed query is a clear error, not a crash.

use serde::Serialize;

use crate::core::tokens::is_cjk;
use crate::error::{Error, Result};
use crate::store::sql::{Row, Sql, SqlValue};

/// Longest pattern accepted, in characters.
pub const MAX_PATTERN_CHARS: usize = 1_000;
const SNIPPET_CHARS: usize = 80;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchMode {
    Text,
    FullText,
}

impl SearchMode {
    pub fn parse(name: &str) -> Result<SearchMode> {
        match name {
            "text" => Ok(SearchMode::Text),
            "full_text" => Ok(SearchMode::FullText),
            other => Err(Error::input("mode", format!("unknown search mode {other:?} (expected \"text\" or \"full_text\")"))),
        }
    }
}

/// One match.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    /// "message" or "summary".
    pub kind: &'static str,
    pub id: i64,
    pub conversation_id: i64,
    /// Message role, or "summary".
    pub role: String,
    pub snippet: String,
    pub created_at: i64,
}

fn has_cjk(text: &str) -> bool {
    text.chars().any(is_cjk)
}

fn has_word(text: &str) -> bool {
    text.chars().any(char::is_alphanumeric)
}

/// An FTS4 phrase matching the pattern's words in order. FTS4 has no escape for `"` inside a
/// phrase; the tokenizer ignores quotes anyway, and the substring check keeps them literal.
fn phrase(pattern: &str) -> String {
    format!("\"{}\"", pattern.replace('"', " "))
}

/// A window of the content around the first case-insensitive occurrence of `pattern`.
fn snippet_around(content: &str, pattern: &str) -> String {
    let lower = content.to_ascii_lowercase();
    let start_byte = lower.find(&pattern.to_ascii_lowercase()).unwrap_or(0);
    let start_char = content[..start_byte].chars().count();
    let from = start_char.saturating_sub(SNIPPET_CHARS / 2);
    let text: String = content.chars().skip(from).take(SNIPPET_CHARS + pattern.chars().count()).collect();
    let prefix = if from > 0 { "…" } else { "" };
    let suffix = if from + text.chars().count() < content.chars().count() { "…" } else { "" };
    format!("{prefix}{}{suffix}", text.replace('\n', " "))
}

struct Source {
    kind: &'static str,
    table: &'static str,
    fts: &'static str,
    role: &'static str,
    /// When the row happened, for time windows: the host's timestamp of a message, the newest
    /// message a summary covers; the time it was stored when those are unknown.
    time: &'static str,
}

const SOURCES: [Source; 2] = [
    Source { kind: "message", table: "messages", fts: "messages_fts", role: "t.role", time: "COALESCE(t.host_timestamp, t.created_at)" },
    Source { kind: "summary", table: "summaries", fts: "summaries_fts", role: "'summary'", time: "COALESCE(t.latest_at, t.created_at)" },
];

/// A time window in ms since the epoch: `since` inclusive, `before` exclusive.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TimeWindow {
    pub since: Option<i64>,
    pub before: Option<i64>,
}

fn hit(kind: &'static str, row: &Row, snippet: String) -> Result<SearchHit> {
    Ok(SearchHit { kind, id: row.int(0)?, conversation_id: row.int(1)?, role: row.text(2)?, snippet, created_at: row.int(4)? })
}

/// Searches the given conversations (all when empty), newest first, at most `limit` hits.
pub fn search(sql: &mut impl Sql, conversations: &[i64], pattern: &str, mode: SearchMode, limit: usize) -> Result<Vec<SearchHit>> {
    let scope = if conversations.is_empty() { None } else { Some(conversations) };
    let mut hits = search_in(sql, scope, pattern, mode, limit, TimeWindow::default())?;
    hits.truncate(limit.clamp(1, 500));
    Ok(hits)
}

/// Searches exactly the given conversations (every conversation when `None`; nothing when the
/// list is empty, so an empty scope can never widen to all), within a time window. Returns up to
/// `limit` hits of each kind (messages, summaries), newest first: the caller decides how to mix
/// them.
pub fn search_in(
    sql: &mut impl Sql,
    conversations: Option<&[i64]>,
    pattern: &str,
    mode: SearchMode,
    limit: usize,
    window: TimeWindow,
) -> Result<Vec<SearchHit>> {
    if let (Some(since), Some(before)) = (window.since, window.before) {
        if since >= before {
            return Err(Error::input("since", "must be earlier than before"));
        }
    }
    if pattern.trim().is_empty() {
        return Err(Error::input("pattern", "must not be empty"));
    }
    if pattern.chars().count() > MAX_PATTERN_CHARS {
        return Err(Error::input("pattern", format!("is longer than {MAX_PATTERN_CHARS} characters")));
    }
    // Stored text shows NUL as U+2400 (SQLite's text functions and MATCH stop at NUL), so a
    // pattern does the same: "a\0b" finds what was stored from "a\0b" instead of failing.
    let pattern: &str = &pattern.replace('\0', "\u{2400}");
    let scope = match conversations {
        None => String::new(),
        Some([]) => return Ok(Vec::new()),
        // Integers formatted by us, never caller text.
        Some(ids) => format!(" AND t.conversation_id IN ({})", ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",")),
    };
    let limit = limit.clamp(1, 500) as i64;
    let mut hits = Vec::new();
    for source in &SOURCES {
        let mut scope = scope.clone();
        if let Some(since) = window.since {
            scope.push_str(&format!(" AND {} >= {since}", source.time));
        }
        if let Some(before) = window.before {
            scope.push_str(&format!(" AND {} < {before}", source.time));
        }
        let columns = format!("t.id, t.conversation_id, {}, t.content, t.created_at", source.role);
        let (query, params): (String, Vec<SqlValue>) = match mode {
            SearchMode::FullText => (
                format!(
                    "SELECT {columns}, snippet({fts}, '[', ']', '…', -1, 16) FROM {fts} JOIN {table} t ON t.id = {fts}.docid \
                     WHERE {fts} MATCH ?1{scope} ORDER BY t.id DESC LIMIT ?2",
                    fts = source.fts,
                    table = source.table
                ),
                vec![pattern.into(), limit.into()],
            ),
            SearchMode::Text if has_word(pattern) && !has_cjk(pattern) => (
                format!(
                    "SELECT {columns} FROM {fts} JOIN {table} t ON t.id = {fts}.docid \
                     WHERE {fts} MATCH ?1 AND instr(lower(t.content), lower(?2)) > 0{scope} ORDER BY t.id DESC LIMIT ?3",
                    fts = source.fts,
                    table = source.table
                ),
                vec![phrase(pattern).into(), pattern.into(), limit.into()],
            ),
            SearchMode::Text => (
                format!(
                    "SELECT {columns} FROM {table} t WHERE instr(lower(t.content), lower(?1)) > 0{scope} ORDER BY t.id DESC LIMIT ?2",
                    table = source.table
                ),
                vec![pattern.into(), limit.into()],
            ),
        };
        let rows = sql.query(&query, &params).map_err(|err| match (mode, err) {
            (SearchMode::FullText, Error::Storage(reason)) => Error::input(
                "pattern",
                format!("invalid full-text query {pattern:?} ({reason}); use mode \"text\" to search for a literal string"),
            ),
            (_, err) => err,
        })?;
        for row in &rows {
            let snippet = match mode {
                SearchMode::FullText => row.text(5)?,
                SearchMode::Text => snippet_around(&row.text(3)?, pattern),
            };
            hits.push(hit(source.kind, row, snippet)?);
        }
    }
    hits.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
    Ok(hits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phrases_escape_quotes_and_snippets_respect_char_boundaries() {
        assert_eq!(phrase(r#"say "hi""#), r#""say  hi ""#);
        let s = snippet_around("前面的文字静默后面的文字", "静默");
        assert!(s.contains("静默"));
        assert!(has_cjk("静默") && !has_cjk("plain"));
    }

    #[test]
    fn a_pattern_with_nul_searches_for_the_stored_rendering_instead_of_failing() {
        let mut sql = crate::store::native::NativeSql::in_memory().unwrap();
        crate::store::schema::migrate(&mut sql, 0).unwrap();
        for mode in [SearchMode::Text, SearchMode::FullText] {
            let result = search(&mut sql, &[], "A\0", mode, 10);
            assert!(matches!(result, Ok(ref hits) if hits.is_empty()), "{mode:?}: {result:?}");
        }
    }
}
