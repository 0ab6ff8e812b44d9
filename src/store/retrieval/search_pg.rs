//! Search on PostgreSQL, with the tool semantics of [`crate::store::search`] on SQLite:
//! - `Text`: a literal string, matched as [`literal`] says. The trigram index narrows the
//!   candidates to those containing the pattern anywhere (`ILIKE`, which also serves CJK: a
//!   pattern of 3 or more characters uses the index, a shorter one scans the rows the
//!   conversation scope leaves), newest first in pages, and each candidate is confirmed by
//!   [`literal::find`] exactly as on SQLite (ILIKE folds more than ASCII and ignores words).
//! - `FullText`: the caller's FTS4 query syntax (words, `"phrases"`, `prefix*`, AND, OR, NOT,
//!   parentheses, `NEAR` and `NEAR/N`, the column filter `content:`), translated by [`tsquery`]
//!   into a `tsquery` over the generated search vector
//!   (`lcm_simple`: words split and lowercased, diacritics folded, as SQLite's unicode61 does).
//!   A malformed query is a clear error naming the pattern.
//!
//! Must not: splice caller text into SQL (patterns are bound parameters; only integers formatted
//! here go into the SQL text), or be reached on SQLite.

use crate::error::{Error, Result};
use crate::store::literal;
use crate::store::search_hit::{SearchHit, SearchMode};
use crate::store::snippet;
use crate::store::sql::{Sql, SqlValue};

struct Source {
    kind: &'static str,
    table: &'static str,
    text: &'static str,
    role: &'static str,
    time: &'static str,
}

const SOURCES: [Source; 2] = [
    Source {
        kind: "message",
        table: "messages",
        text: "t.search_text",
        role: "t.role",
        time: "COALESCE(t.host_timestamp, t.created_at)",
    },
    Source {
        kind: "summary",
        table: "summaries",
        text: "t.content",
        role: "'summary'",
        time: "COALESCE(t.latest_at, t.created_at)",
    },
];

/// Candidates read per query while confirming literal matches in Rust.
const PAGE_MIN: i64 = 64;

/// `pattern` as an `ILIKE` operand matching it anywhere (`\` escapes `%`, `_` and itself).
fn like_anywhere(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 2);
    out.push('%');
    for c in pattern.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('%');
    out
}

/// A POSIX regular expression (for `~*`) that every text [`literal`] matches `pattern` in
/// also matches: the pattern's characters taken literally, after a character that is not a
/// letter or digit (or the start) when its first must start a word, and before one (or the end)
/// when its last must end one. None when neither edge is checked (`ILIKE` says as much). It
/// keeps a pattern found only inside words (`rror`) from paging through every row that
/// contains it; [`literal::find`] still decides.
fn word_regex(pattern: &str) -> Option<String> {
    let edges = literal::Edges::of(pattern);
    if !edges.start && !edges.end {
        return None;
    }
    let mut out = String::with_capacity(pattern.len() + 32);
    if edges.start {
        out.push_str("(^|[^[:alnum:]])");
    }
    for c in pattern.chars() {
        // Every character that means something in an ARE, escaped; a backslash before a
        // letter or digit would itself mean something, and none is escaped.
        if "\\^$.|?*+()[]{}".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    if edges.end {
        out.push_str("([^[:alnum:]]|$)");
    }
    Some(out)
}

/// The words of a term as the tokenizer splits them (runs of letters and digits), quoted for
/// `to_tsquery`.
fn lexemes(term: &str) -> Vec<String> {
    term.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| format!("'{w}'"))
        .collect()
}

/// FTS4's distance for a bare `NEAR`: at most 10 terms between the two operands.
const NEAR_DEFAULT: usize = 10;
/// The largest `NEAR/N` translated: each allowed distance is an alternative in the `tsquery`.
const NEAR_MAX: usize = 100;

/// `left NEAR/n right` as a `tsquery`: the two operands in either order with at most `n` words
/// between them (FTS4's meaning), as the alternatives `<1>` to `<n+1>` each way.
fn near(left: &str, right: &str, n: usize) -> String {
    let ways: Vec<String> = (1..=n + 1)
        .flat_map(|d| {
            [
                format!("{left} <{d}> {right}"),
                format!("{right} <{d}> {left}"),
            ]
        })
        .collect();
    format!("({})", ways.join(" | "))
}

/// The distance a `NEAR` operator allows, when `term` is one (`NEAR`, `NEAR/N`).
fn near_operator(term: &str) -> Option<std::result::Result<usize, String>> {
    if term == "NEAR" {
        return Some(Ok(NEAR_DEFAULT));
    }
    let digits = term
        .strip_prefix("NEAR/")
        .filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))?;
    Some(match digits.parse::<usize>() {
        Ok(n) if n <= NEAR_MAX => Ok(n),
        _ => Err(format!(
            "{term}: PostgreSQL search takes NEAR/0 to NEAR/{NEAR_MAX}"
        )),
    })
}

/// Translates an FTS4 MATCH query into `to_tsquery` syntax, or says why it is not one.
fn tsquery(query: &str) -> std::result::Result<String, String> {
    #[derive(PartialEq)]
    enum Last {
        Start,
        Operand,
        Operator,
    }
    let mut out: Vec<String> = Vec::new();
    let mut last = Last::Start;
    let mut depth = 0usize;
    let mut chars = query.chars().peekable();
    // NEAR's operands are single terms or phrases: the last one pushed, while it is the last
    // thing pushed; and a NEAR waiting for its right operand (its left one, its distance, and
    // whether that left one ends a NEAR already in `out`, as `b` in `a NEAR b NEAR c`).
    let mut nearable: Option<String> = None;
    let mut pending_near: Option<(String, usize, bool)> = None;
    const NEAR_OPERANDS: &str = "NEAR must stand between two terms or phrases";
    let push_operand = |out: &mut Vec<String>,
                        last: &mut Last,
                        nearable: &mut Option<String>,
                        pending: &mut Option<(String, usize, bool)>,
                        operand: String| {
        match pending.take() {
            // FTS4's `a NEAR b NEAR c`: a near b, and b near c.
            Some((left, n, true)) => {
                out.push("&".to_owned());
                out.push(near(&left, &operand, n));
            }
            Some((left, n, false)) => {
                out.pop();
                out.push(near(&left, &operand, n));
            }
            None => {
                if *last == Last::Operand {
                    out.push("&".to_owned());
                }
                out.push(operand.clone());
            }
        }
        *last = Last::Operand;
        *nearable = Some(operand);
    };
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        if c == '"' {
            chars.next();
            let mut phrase = String::new();
            let mut closed = false;
            for d in chars.by_ref() {
                if d == '"' {
                    closed = true;
                    break;
                }
                phrase.push(d);
            }
            if !closed {
                return Err("a phrase's closing quote is missing".to_owned());
            }
            let words = lexemes(&phrase);
            if !words.is_empty() {
                push_operand(
                    &mut out,
                    &mut last,
                    &mut nearable,
                    &mut pending_near,
                    format!("({})", words.join(" <-> ")),
                );
            }
            continue;
        }
        if pending_near.is_some() && (c == '(' || c == ')') {
            return Err(NEAR_OPERANDS.to_owned());
        }
        nearable = nearable.filter(|_| c != '(' && c != ')');
        if c == '(' {
            chars.next();
            if last == Last::Operand {
                out.push("&".to_owned());
            }
            out.push("(".to_owned());
            depth += 1;
            last = Last::Start;
            continue;
        }
        if c == ')' {
            chars.next();
            if depth == 0 || last != Last::Operand {
                return Err("a parenthesis does not match or encloses nothing".to_owned());
            }
            depth -= 1;
            out.push(")".to_owned());
            last = Last::Operand;
            continue;
        }
        let mut term = String::new();
        while let Some(&d) = chars.peek() {
            if d.is_whitespace() || d == '"' || d == '(' || d == ')' {
                break;
            }
            term.push(d);
            chars.next();
        }
        if let Some(n) = near_operator(&term) {
            let n = n?;
            let left = match (nearable.take(), &pending_near) {
                (Some(left), None) if last == Last::Operand => left,
                _ => return Err(NEAR_OPERANDS.to_owned()),
            };
            let chained = out.last().is_some_and(|o| *o != left);
            pending_near = Some((left, n, chained));
            last = Last::Operator;
            continue;
        }
        if pending_near.is_some() && matches!(term.as_str(), "AND" | "OR" | "NOT") {
            return Err(NEAR_OPERANDS.to_owned());
        }
        match term.as_str() {
            "AND" | "OR" | "NOT" => {
                nearable = None;
                if last != Last::Operand {
                    return Err(format!("{term} must follow a term"));
                }
                out.push(
                    match term.as_str() {
                        "AND" => "&",
                        "OR" => "|",
                        _ => "& !",
                    }
                    .to_owned(),
                );
                last = Last::Operator;
            }
            _ => {
                let (negated, body) = match term.strip_prefix('-') {
                    Some(rest) if last == Last::Operand => (true, rest),
                    _ => (false, term.as_str()),
                };
                // FTS4's column filter: the tables' one column is `content` (any case).
                let body = match body.split_once(':') {
                    Some((column, rest)) if column.eq_ignore_ascii_case("content") => rest,
                    _ => body,
                };
                let (body, prefix) = match body.strip_suffix('*') {
                    Some(rest) => (rest, true),
                    None => (body, false),
                };
                let mut words = lexemes(body);
                if words.is_empty() {
                    continue;
                }
                if prefix {
                    if let Some(w) = words.last_mut() {
                        w.push_str(":*");
                    }
                }
                let operand = if words.len() == 1 {
                    words.remove(0)
                } else {
                    format!("({})", words.join(" <-> "))
                };
                if negated {
                    out.push("& !".to_owned());
                    out.push(operand);
                    last = Last::Operand;
                    nearable = None;
                } else {
                    push_operand(
                        &mut out,
                        &mut last,
                        &mut nearable,
                        &mut pending_near,
                        operand,
                    );
                }
            }
        }
    }
    if pending_near.is_some() {
        return Err(NEAR_OPERANDS.to_owned());
    }
    if depth != 0 {
        return Err("a parenthesis is not closed".to_owned());
    }
    if last == Last::Operator {
        return Err("the query ends with an operator".to_owned());
    }
    if out.is_empty() {
        return Err("the query has no words".to_owned());
    }
    Ok(out.join(" "))
}

/// One source's hits, newest first, at most `limit`; `scope` is extra SQL conditions.
fn search_source(
    sql: &mut impl Sql,
    source: &Source,
    scope: &str,
    pattern: &str,
    mode: SearchMode,
    limit: i64,
    hits: &mut Vec<SearchHit>,
) -> Result<()> {
    let Source {
        table, text, role, ..
    } = source;
    let (query, mut params, page) = match mode {
        SearchMode::Text => {
            let (words, regex) = match word_regex(pattern) {
                Some(regex) => (format!(" AND {text} ~* ?4"), vec![SqlValue::from(regex)]),
                None => (String::new(), Vec::new()),
            };
            (
                format!("SELECT t.id, t.conversation_id, {role}, {text}, t.created_at FROM {table} t \
                         WHERE {text} ILIKE ?1 ESCAPE '\\'{words} AND t.id < ?2{scope} ORDER BY t.id DESC LIMIT ?3"),
                [vec![SqlValue::from(like_anywhere(pattern)), SqlValue::Null, SqlValue::Null], regex].concat(),
                (limit * 2).max(PAGE_MIN),
            )
        }
        SearchMode::FullText => {
            let translated = tsquery(pattern).map_err(|why| {
                Error::input("pattern", format!("invalid full-text query {pattern:?} ({why}); use mode \"text\" to search for a literal string"))
            })?;
            (
                format!("SELECT t.id, t.conversation_id, {role}, \
                           ts_headline('lcm_simple', {text}, to_tsquery('lcm_simple', ?1), 'StartSel=[, StopSel=], MaxWords=16, MinWords=4, MaxFragments=1, FragmentDelimiter=…'), \
                           t.created_at FROM {table} t \
                         WHERE t.search_tsv @@ to_tsquery('lcm_simple', ?1) AND t.id < ?2{scope} ORDER BY t.id DESC LIMIT ?3"),
                vec![SqlValue::from(translated), SqlValue::Null, SqlValue::Null],
                limit,
            )
        }
    };
    let mut found = 0;
    let mut below = i64::MAX;
    loop {
        // ?1 the pattern, ?2 the bound, ?3 the page, ?4 the word regex when there is one.
        params[1] = below.into();
        params[2] = page.into();
        let rows = sql.query(&query, &params)?;
        for row in &rows {
            below = row.int(0)?;
            let content = row.text(3)?;
            let snippet = match mode {
                SearchMode::FullText => content,
                SearchMode::Text => match literal::find(&content, pattern) {
                    Some(at) => snippet::around(&content, at, pattern),
                    None => continue,
                },
            };
            hits.push(SearchHit {
                kind: source.kind,
                id: row.int(0)?,
                conversation_id: row.int(1)?,
                role: row.text(2)?,
                snippet,
                created_at: row.int(4)?,
            });
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

/// [`crate::store::search::search_in`] on PostgreSQL, after its checks: `conversations` the
/// conversations to search (every one when None), `since`/`before` the time window.
pub(super) fn search_in(
    sql: &mut impl Sql,
    conversations: Option<&[i64]>,
    pattern: &str,
    mode: SearchMode,
    limit: i64,
    since: Option<i64>,
    before: Option<i64>,
) -> Result<Vec<SearchHit>> {
    // No unary `+` here: PostgreSQL's planner picks by its statistics, not by that hint.
    let scope = conversations
        .map(|ids| {
            format!(
                " AND t.conversation_id IN ({})",
                ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
            )
        })
        .unwrap_or_default();
    let mut hits = Vec::new();
    for source in &SOURCES {
        let mut scope = scope.clone();
        if let Some(since) = since {
            scope.push_str(&format!(" AND {} >= {since}", source.time));
        }
        if let Some(before) = before {
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
    fn fts4_queries_become_tsqueries_with_the_same_meaning() {
        assert_eq!(tsquery("build AND error").unwrap(), "'build' & 'error'");
        assert_eq!(tsquery("build error").unwrap(), "'build' & 'error'");
        assert_eq!(tsquery("build OR error").unwrap(), "'build' | 'error'");
        assert_eq!(tsquery("build NOT error").unwrap(), "'build' & ! 'error'");
        assert_eq!(tsquery("build -error").unwrap(), "'build' & ! 'error'");
        assert_eq!(
            tsquery("\"main rs\" comp*").unwrap(),
            "('main' <-> 'rs') & 'comp':*"
        );
        assert_eq!(
            tsquery("src/main.rs").unwrap(),
            "('src' <-> 'main' <-> 'rs')"
        );
        assert_eq!(tsquery("(a OR b) c").unwrap(), "( 'a' | 'b' ) & 'c'");
        assert_eq!(tsquery("it's").unwrap(), "('it' <-> 's')");
    }

    #[test]
    fn near_pairs_its_two_operands_in_either_order_within_its_distance() {
        assert_eq!(
            tsquery("a NEAR/0 b").unwrap(),
            "('a' <1> 'b' | 'b' <1> 'a')"
        );
        assert_eq!(
            tsquery("a NEAR/1 b").unwrap(),
            "('a' <1> 'b' | 'b' <1> 'a' | 'a' <2> 'b' | 'b' <2> 'a')"
        );
        let bare = tsquery("a NEAR b").unwrap();
        assert!(
            bare.contains("'a' <11> 'b'") && !bare.contains("<12>"),
            "a bare NEAR allows 10 words between: {bare}"
        );
        assert_eq!(
            tsquery("x \"a b\" NEAR/0 c* y").unwrap(),
            "'x' & (('a' <-> 'b') <1> 'c':* | 'c':* <1> ('a' <-> 'b')) & 'y'"
        );
        // A chain: a near b, and b near c.
        assert_eq!(
            tsquery("a NEAR/0 b NEAR/0 c").unwrap(),
            "('a' <1> 'b' | 'b' <1> 'a') & ('b' <1> 'c' | 'c' <1> 'b')"
        );
        assert_eq!(
            tsquery("(a NEAR/0 b) OR c").unwrap(),
            "( ('a' <1> 'b' | 'b' <1> 'a') ) | 'c'"
        );
        // Lower case is a word, as in FTS4.
        assert_eq!(tsquery("a near b").unwrap(), "'a' & 'near' & 'b'");
    }

    #[test]
    fn the_content_column_filter_is_the_whole_text() {
        assert_eq!(tsquery("content:alpha").unwrap(), "'alpha'");
        assert_eq!(
            tsquery("CONTENT:alp* -content:beta").unwrap(),
            "'alp':* & ! 'beta'"
        );
        // Not a column: its words, as FTS4 reads them.
        assert_eq!(tsquery("foo:bar").unwrap(), "('foo' <-> 'bar')");
    }

    #[test]
    fn malformed_fts4_queries_are_refused_with_a_reason() {
        for bad in [
            "a NEAR",
            "NEAR a",
            "a NEAR NEAR b",
            "a NEAR (b)",
            "(a NEAR) b",
            "a NEAR OR b",
            "a OR NEAR b",
            "a NEAR/101 b",
            "a NEAR/99999999999999999999999 b",
        ] {
            assert_eq!(
                tsquery(bad),
                Err(if bad.contains("NEAR/") {
                    format!(
                        "{}: PostgreSQL search takes NEAR/0 to NEAR/100",
                        bad.split(' ').nth(1).unwrap()
                    )
                } else {
                    "NEAR must stand between two terms or phrases".to_owned()
                }),
                "{bad:?}"
            );
        }
        for bad in [
            "\"unbalanced",
            "(a",
            "a)",
            "OR a",
            "a AND",
            "()",
            "  ",
            "\"\"",
        ] {
            assert!(
                tsquery(bad).is_err(),
                "{bad:?} was accepted as {:?}",
                tsquery(bad)
            );
        }
    }

    #[test]
    fn word_regexes_take_the_pattern_literally_between_the_edges_it_needs() {
        assert_eq!(
            word_regex("Error").as_deref(),
            Some("(^|[^[:alnum:]])Error")
        );
        assert_eq!(
            word_regex("ok").as_deref(),
            Some("(^|[^[:alnum:]])ok([^[:alnum:]]|$)")
        );
        assert_eq!(
            word_regex("f(1) *x").as_deref(),
            Some("(^|[^[:alnum:]])f\\(1\\) \\*x([^[:alnum:]]|$)")
        );
        assert_eq!(
            word_regex(".rs").as_deref(),
            Some("\\.rs([^[:alnum:]]|$)"),
            "a short last word ends one"
        );
        assert_eq!(word_regex("(main.rs)").as_deref(), None, "no edge to check");
        assert_eq!(
            word_regex("a.b\\c^$|?+[]{}").as_deref(),
            Some("(^|[^[:alnum:]])a\\.b\\\\c\\^\\$\\|\\?\\+\\[\\]\\{\\}")
        );
        assert_eq!(word_regex("静默"), None, "CJK matches anywhere");
    }

    #[test]
    fn like_patterns_escape_their_wildcards() {
        assert_eq!(like_anywhere("50%_a\\b"), "%50\\%\\_a\\\\b%");
    }
}
