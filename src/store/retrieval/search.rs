//! Search over stored messages and summaries. Patterns are always bound parameters, never spliced
//! into SQL. Two modes:
//! - `Text`: a literal string, matched as [`literal`] says (ASCII case-insensitive, from a word's
//!   start). Word-like patterns go through the FTS4 index as a phrase; patterns with CJK text
//!   (which the unicode61 tokenizer does not split into words) take a substring path over the
//!   conversation. SQL only narrows the candidates (the index, and for messages, whose text is not
//!   stored (migration 7), a necessary condition on `raw_json` from [`raw_match`]), newest first
//!   in pages; each candidate is confirmed by [`literal::find`] on its text.
//! - `FullText`: the caller's FTS4 query syntax; a malformed query is a clear error, not a crash.
//!
//! On PostgreSQL the same checks run here and the search itself is `search_pg`'s.

use crate::core::message::text_of_raw_json;
use crate::core::tokens::is_cjk;
use crate::error::{Error, Result};
use crate::store::literal::{self, PREFIX_MIN_CHARS};
use crate::store::raw_match::RawFilter;
pub use crate::store::search_hit::{SearchHit, SearchMode};
use crate::store::snippet;
use crate::store::sql::{Row, Sql, SqlValue};

use super::search_pg;

/// Longest pattern accepted, in characters.
pub const MAX_PATTERN_CHARS: usize = 1_000;

fn has_cjk(text: &str) -> bool {
    text.chars().any(is_cjk)
}

fn has_word(text: &str) -> bool {
    text.chars().any(char::is_alphanumeric)
}

/// An FTS4 phrase matching the pattern's words in order, its last word also as the start of a
/// longer one when it has [`PREFIX_MIN_CHARS`] or more: every text [`literal`] matches is among
/// the phrase's matches, and [`literal::find`] confirms each. FTS4 has no escape for `"` inside a
/// phrase; the tokenizer ignores quotes anyway, and the confirmation keeps them literal.
fn phrase(pattern: &str) -> String {
    let words = pattern.replace('"', " ");
    let last_word = words
        .rsplit(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap_or("");
    let prefix = if last_word.chars().count() >= PREFIX_MIN_CHARS {
        "*"
    } else {
        ""
    };
    format!("\"{words}{prefix}\"")
}

struct Source {
    kind: &'static str,
    table: &'static str,
    fts: &'static str,
    role: &'static str,
    /// When the row happened, for time windows: the host's timestamp of a message, the newest
    /// message a summary covers; the time it was stored when those are unknown.
    time: &'static str,
    /// Messages keep no text column: their text is derived from `raw_json` (see [`raw_match`]).
    derived: bool,
}

const SOURCES: [Source; 2] = [
    Source {
        kind: "message",
        table: "messages",
        fts: "messages_fts",
        role: "t.role",
        time: "COALESCE(t.host_timestamp, t.created_at)",
        derived: true,
    },
    Source {
        kind: "summary",
        table: "summaries",
        fts: "summaries_fts",
        role: "'summary'",
        time: "COALESCE(t.latest_at, t.created_at)",
        derived: false,
    },
];

/// Candidates read per query while confirming literal matches in Rust.
const PAGE_MIN: i64 = 64;

/// A time window in ms since the epoch: `since` inclusive, `before` exclusive.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TimeWindow {
    /// Start of the window (inclusive), in ms since the epoch; None: no lower bound.
    pub since: Option<i64>,
    /// End of the window (exclusive), in ms since the epoch; None: no upper bound.
    pub before: Option<i64>,
}

fn hit(kind: &'static str, row: &Row, snippet: String) -> Result<SearchHit> {
    Ok(SearchHit {
        kind,
        id: row.int(0)?,
        conversation_id: row.int(1)?,
        role: row.text(2)?,
        snippet,
        created_at: row.int(4)?,
    })
}

/// One source's search as SQL: a query for one page of candidates, newest first, below a bound
/// (its last two parameters: the bound, then the page size).
struct PageQuery {
    sql: String,
    params: Vec<SqlValue>,
    page: i64,
}

/// The page query of `source` for `pattern` in `mode`, within `scope` (extra SQL conditions).
fn page_query(
    source: &Source,
    scope: &str,
    pattern: &str,
    mode: SearchMode,
    limit: i64,
) -> PageQuery {
    let (fts, table) = (source.fts, source.table);
    // Full-text hits need no text here: their snippet comes from the index.
    let text = match (mode, source.derived) {
        (SearchMode::FullText, _) => "NULL",
        (SearchMode::Text, true) => "t.raw_json",
        (SearchMode::Text, false) => "t.content",
    };
    let mut columns = format!(
        "t.id, t.conversation_id, {}, {text}, t.created_at",
        source.role
    );
    if mode == SearchMode::FullText {
        columns.push_str(&format!(", snippet({fts}, '[', ']', '…', -1, 16)"));
    }
    // Whether the full-text index drives the query: full-text queries, and literal patterns
    // with words (CJK runs are not split into words, so those take the substring path).
    let index_driven = mode == SearchMode::FullText || (has_word(pattern) && !has_cjk(pattern));
    let (from, mut condition, mut params): (String, String, Vec<SqlValue>) = if index_driven {
        let query = if mode == SearchMode::FullText {
            pattern.to_owned()
        } else {
            phrase(pattern)
        };
        (
            format!("{fts} JOIN {table} t ON t.id = {fts}.docid"),
            format!("{fts} MATCH ?1"),
            vec![query.into()],
        )
    } else {
        (format!("{table} t"), "1 = 1".to_owned(), Vec::new())
    };
    if mode == SearchMode::Text {
        if source.derived {
            if let Some(filter) = RawFilter::new(pattern) {
                let (sql_filter, filter_params) = filter.sql("t.raw_json", params.len() + 1);
                condition.push_str(&format!(" AND {sql_filter}"));
                params.extend(filter_params);
            }
        } else {
            condition.push_str(&format!(
                " AND instr(lower(t.content), lower(?{})) > 0",
                params.len() + 1
            ));
            params.push(pattern.into());
        }
    }
    // A literal search confirms each candidate, so it reads pages larger than it needs.
    let page = if mode == SearchMode::Text {
        (limit * 2).max(PAGE_MIN)
    } else {
        limit
    };
    let (before, size) = (params.len() + 1, params.len() + 2);
    // Newest first by the index's own docid when the index drives the query: FTS4 returns
    // matches in docid order and takes the bound itself, so the query stops after a page. By
    // `t.id` (the same number) SQLite sorted every match first, computing each one's snippet: a
    // common word over 100K messages took minutes.
    let order = if index_driven {
        format!("{fts}.docid")
    } else {
        "t.id".to_owned()
    };
    let sql = format!("SELECT {columns} FROM {from} WHERE {order} < ?{before}{scope} AND {condition} ORDER BY {order} DESC LIMIT ?{size}");
    PageQuery { sql, params, page }
}

/// The hits of one source, newest first, at most `limit`. A literal search reads candidates in
/// pages newest first and confirms each on its text (for messages, derived from `raw_json`).
fn search_source(
    sql: &mut impl Sql,
    source: &Source,
    scope: &str,
    pattern: &str,
    mode: SearchMode,
    limit: i64,
    hits: &mut Vec<SearchHit>,
) -> Result<()> {
    let PageQuery {
        sql: query,
        params,
        page,
    } = page_query(source, scope, pattern, mode, limit);
    let mut found = 0;
    let mut below = i64::MAX;
    loop {
        let mut page_params = params.clone();
        page_params.push(below.into());
        page_params.push(page.into());
        let rows = sql.query(&query, &page_params).map_err(|err| match (mode, err) {
            (SearchMode::FullText, Error::Storage(failure)) => Error::input(
                "pattern",
                format!("invalid full-text query {pattern:?} ({failure}); use mode \"text\" to search for a literal string"),
            ),
            (_, err) => err,
        })?;
        for row in &rows {
            below = row.int(0)?;
            let content = match (mode, source.derived) {
                (SearchMode::FullText, _) => String::new(),
                (SearchMode::Text, true) => text_of_raw_json(&row.text(3)?)?,
                (SearchMode::Text, false) => row.text(3)?,
            };
            let snippet = match mode {
                // From the index's content table (for messages, the view `messages_text`).
                SearchMode::FullText => row.text(5)?,
                SearchMode::Text => match literal::find(&content, pattern) {
                    Some(at) => snippet::around(&content, at, pattern),
                    None => continue,
                },
            };
            hits.push(hit(source.kind, row, snippet)?);
            found += 1;
            if found == limit {
                return Ok(());
            }
        }
        if mode == SearchMode::FullText || (rows.len() as i64) < page {
            return Ok(());
        }
    }
}

/// The SQL condition limiting a search to `ids` (integers formatted here, never caller text).
/// A filter, never what drives the query (the unary `+`): the index drives a word search and a
/// newest-first scan a substring search, so either stops after a page. Driven by the
/// conversation's index, SQLite read all of its messages and sorted the matches before the LIMIT.
fn conversation_scope(ids: &[i64]) -> String {
    format!(
        " AND +t.conversation_id IN ({})",
        ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
    )
}

/// Searches the given conversations (all when empty), newest first, at most `limit` hits.
pub fn search(
    sql: &mut impl Sql,
    conversations: &[i64],
    pattern: &str,
    mode: SearchMode,
    limit: usize,
) -> Result<Vec<SearchHit>> {
    let scope = if conversations.is_empty() {
        None
    } else {
        Some(conversations)
    };
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
        return Err(Error::input(
            "pattern",
            format!("is longer than {MAX_PATTERN_CHARS} characters"),
        ));
    }
    // Stored text shows NUL as U+2400 (SQLite's text functions and MATCH stop at NUL), so a
    // pattern does the same: "a\0b" finds what was stored from "a\0b" instead of failing.
    let pattern: &str = &pattern.replace('\0', "\u{2400}");
    let scope = match conversations {
        None => String::new(),
        Some([]) => return Ok(Vec::new()),
        Some(ids) => conversation_scope(ids),
    };
    let limit = limit.clamp(1, 500) as i64;
    // The module's one decision on the dialect: PostgreSQL searches its own way (`search_pg`).
    if sql.dialect().is_postgres() {
        return search_pg::search_in(
            sql,
            conversations,
            pattern,
            mode,
            limit,
            window.since,
            window.before,
        );
    }
    let mut hits = Vec::new();
    for source in &SOURCES {
        let mut scope = scope.clone();
        if let Some(since) = window.since {
            scope.push_str(&format!(" AND {} >= {since}", source.time));
        }
        if let Some(before) = window.before {
            scope.push_str(&format!(" AND {} < {before}", source.time));
        }
        search_source(sql, source, &scope, pattern, mode, limit, &mut hits)?;
    }
    hits.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
    Ok(hits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phrases_escape_quotes_and_cjk_is_detected() {
        assert_eq!(phrase(r#"say "hi""#), r#""say  hi ""#);
        assert_eq!(
            phrase("pars"),
            r#""pars*""#,
            "a last word of 3 letters or more is also a prefix"
        );
        assert_eq!(phrase("fix the parser"), r#""fix the parser*""#);
        assert_eq!(phrase("ok"), r#""ok""#, "a shorter one is a whole word");
        assert_eq!(
            phrase("parser."),
            r#""parser.""#,
            "a pattern ending in punctuation ends its last word"
        );
        assert!(has_cjk("静默") && !has_cjk("plain"));
    }

    /// A search reads one page of candidates newest first straight from the index, never
    /// sorting every match (and computing every match's snippet) before its LIMIT.
    #[test]
    fn a_page_of_index_matches_is_read_in_order_without_sorting_every_match() {
        let mut sql = crate::store::native::NativeSql::in_memory().unwrap();
        crate::store::schema::migrate(&mut sql, 0).unwrap();
        for source in &SOURCES {
            for (mode, pattern) in [
                (SearchMode::FullText, "common"),
                (SearchMode::Text, "common word"),
                (SearchMode::Text, "静默"),
            ] {
                let PageQuery {
                    sql: query,
                    mut params,
                    page,
                    ..
                } = page_query(source, &conversation_scope(&[1, 2]), pattern, mode, 10);
                params.extend([i64::MAX.into(), page.into()]);
                let plan = sql
                    .query(&format!("EXPLAIN QUERY PLAN {query}"), &params)
                    .unwrap();
                let details: Vec<String> = plan.iter().map(|r| r.text(3).unwrap()).collect();
                assert!(!details.is_empty(), "no plan for {query}");
                assert!(
                    !details.iter().any(|d| d.contains("TEMP B-TREE")),
                    "{} {mode:?}: sorts every match ({details:?}): {query}",
                    source.kind
                );
            }
        }
    }

    #[test]
    fn a_pattern_with_nul_searches_for_the_stored_rendering_instead_of_failing() {
        let mut sql = crate::store::native::NativeSql::in_memory().unwrap();
        crate::store::schema::migrate(&mut sql, 0).unwrap();
        for mode in [SearchMode::Text, SearchMode::FullText] {
            let result = search(&mut sql, &[], "A\0", mode, 10);
            assert!(
                matches!(result, Ok(ref hits) if hits.is_empty()),
                "{mode:?}: {result:?}"
            );
        }
    }
}
