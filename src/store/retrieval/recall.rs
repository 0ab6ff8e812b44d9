//! Read-only queries behind the recall tools (`lcm_describe`, `lcm_expand`) and the scoping that
//! guards them: which conversations a session key may read, a summary's place in the DAG, the
//! original messages under it, and the summaries above a message. Nothing here writes, and
//! nothing here decides who may read what: the engine checks every row's conversation against
//! the caller's scope before returning it. Recursive walks use `UNION` (not `UNION ALL`), so a
//! damaged DAG with a cycle still terminates.

use crate::core::message::text_of_raw_json;
use crate::error::Result;
use crate::store::sql::{Row, Sql, SqlValue};

/// One summary row, as the recall tools describe it.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryRow {
    /// The summary's row id in `summaries`.
    pub id: i64,
    /// The conversation it belongs to, a row id in `conversations`.
    pub conversation_id: i64,
    /// "leaf" (covers messages) or "condensed" (covers summaries).
    pub kind: String,
    /// Its depth in the summary DAG: 0 for a leaf summary.
    pub depth: i64,
    /// "normal", "aggressive" or "fallback".
    pub level: String,
    /// The summary's text.
    pub content: String,
    /// Its size in tokens.
    pub token_count: i64,
    /// Tokens of what it was made from.
    pub source_token_count: i64,
    /// How many original messages it covers, directly or through the summaries below it.
    pub descendant_message_count: i64,
    /// How many summaries lie below it in the DAG.
    pub descendant_summary_count: i64,
    /// Time of the earliest message it covers, in ms since the epoch (None when unknown).
    pub earliest_at: Option<i64>,
    /// Time of the latest message it covers, in ms since the epoch (None when unknown).
    pub latest_at: Option<i64>,
    /// Name of the summarizer that wrote it.
    pub summarizer: String,
    /// The model that wrote it, when the summarizer named one.
    pub model: Option<String>,
    /// When it was stored, in ms since the epoch.
    pub created_at: i64,
}

/// One stored message, as the recall tools show it.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageRow {
    /// The message's row id in `messages`.
    pub id: i64,
    /// The conversation it belongs to, a row id in `conversations`.
    pub conversation_id: i64,
    /// Its position in its conversation.
    pub seq: i64,
    /// "system", "user", "assistant" or "tool".
    pub role: String,
    /// Its plain text, derived from the stored raw JSON.
    pub content: String,
    /// Its size in tokens.
    pub token_count: i64,
    /// When it happened, in ms since the epoch: the host's timestamp, or the time it was stored.
    pub timestamp: i64,
}

/// The original messages a summary covers, directly or through the summaries below it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Coverage {
    /// How many messages.
    pub messages: i64,
    /// Their tokens, summed.
    pub tokens: i64,
    /// `seq` of the first of them (None when there are none).
    pub first_seq: Option<i64>,
    /// `seq` of the last of them (None when there are none).
    pub last_seq: Option<i64>,
}

const SUMMARY_COLUMNS: &str = "id, conversation_id, kind, depth, level, content, token_count, source_token_count, \
     descendant_message_count, descendant_summary_count, earliest_at, latest_at, summarizer, model, created_at";

const MESSAGE_COLUMNS: &str = "m.id, m.conversation_id, m.seq, m.role, m.raw_json, m.token_count, COALESCE(m.host_timestamp, m.created_at)";

/// The summaries at or below `?1` (the summary itself included).
const SUBTREE_CTE: &str = "WITH RECURSIVE tree(id) AS (SELECT CAST(?1 AS bigint) UNION \
     SELECT s.source_summary_id FROM summary_sources s JOIN tree ON s.condensed_summary_id = tree.id)";
/// The messages under the summary tree [`SUBTREE_CTE`] makes, at any depth.
const COVERED: &str = "FROM messages m \
     WHERE m.id IN (SELECT message_id FROM summary_messages WHERE summary_id IN (SELECT id FROM tree))";

fn summary_from(row: &Row) -> Result<SummaryRow> {
    Ok(SummaryRow {
        id: row.int(0)?,
        conversation_id: row.int(1)?,
        kind: row.text(2)?,
        depth: row.int(3)?,
        level: row.text(4)?,
        content: row.text(5)?,
        token_count: row.int(6)?,
        source_token_count: row.int(7)?,
        descendant_message_count: row.int(8)?,
        descendant_summary_count: row.int(9)?,
        earliest_at: row.opt_int(10)?,
        latest_at: row.opt_int(11)?,
        summarizer: row.text(12)?,
        model: row.opt_text(13)?,
        created_at: row.int(14)?,
    })
}

fn message_from(row: &Row) -> Result<MessageRow> {
    Ok(MessageRow {
        id: row.int(0)?,
        conversation_id: row.int(1)?,
        seq: row.int(2)?,
        role: row.text(3)?,
        content: text_of_raw_json(&row.text(4)?)?,
        token_count: row.int(5)?,
        timestamp: row.int(6)?,
    })
}

/// The first row `query` returns, read by `from`; None when it returns none.
fn first<T>(
    sql: &mut impl Sql,
    query: &str,
    params: &[SqlValue],
    from: impl Fn(&Row) -> Result<T>,
) -> Result<Option<T>> {
    sql.query_row(query, params)?.as_ref().map(from).transpose()
}

/// Every row `query` returns, in its order, read by `from`.
fn every<T>(
    sql: &mut impl Sql,
    query: &str,
    params: &[SqlValue],
    from: impl Fn(&Row) -> Result<T>,
) -> Result<Vec<T>> {
    sql.query(query, params)?.iter().map(from).collect()
}

/// The id (first column) of every row `query` returns, in its order.
fn ids(sql: &mut impl Sql, query: &str, params: &[SqlValue]) -> Result<Vec<i64>> {
    every(sql, query, params, |r| r.int(0))
}

/// The count (first column of the one row) `query` returns; 0 without a row.
fn count(sql: &mut impl Sql, query: &str, params: &[SqlValue]) -> Result<i64> {
    Ok(first(sql, query, params, |r| r.int(0))?.unwrap_or(0))
}

/// Whether `query` returns a row.
fn exists(sql: &mut impl Sql, query: &str, params: &[SqlValue]) -> Result<bool> {
    Ok(sql.query_row(query, params)?.is_some())
}

/// The conversations (active and archived) whose session key starts with `prefix`. Compared
/// with `substr`, not `LIKE`, so `%` and `_` in a key are plain characters.
pub fn conversations_with_key_prefix(sql: &mut impl Sql, prefix: &str) -> Result<Vec<i64>> {
    ids(
        sql,
        "SELECT id FROM conversations WHERE substr(session_key, 1, length(?1)) = ?1 ORDER BY id",
        &[prefix.into()],
    )
}

/// The conversations (active and archived) of exactly this session key.
pub fn conversations_with_key(sql: &mut impl Sql, key: &str) -> Result<Vec<i64>> {
    ids(
        sql,
        "SELECT id FROM conversations WHERE session_key = ?1 ORDER BY id",
        &[key.into()],
    )
}

/// The session key of a conversation.
pub fn conversation_key(sql: &mut impl Sql, conversation_id: i64) -> Result<Option<String>> {
    first(
        sql,
        "SELECT session_key FROM conversations WHERE id = ?1",
        &[conversation_id.into()],
        |r| r.text(0),
    )
}

/// The summary with this row id, if it exists.
pub fn summary(sql: &mut impl Sql, id: i64) -> Result<Option<SummaryRow>> {
    let query = format!("SELECT {SUMMARY_COLUMNS} FROM summaries WHERE id = ?1");
    first(sql, &query, &[id.into()], summary_from)
}

/// The message with this row id, if it exists.
pub fn message(sql: &mut impl Sql, id: i64) -> Result<Option<MessageRow>> {
    let query = format!("SELECT {MESSAGE_COLUMNS} FROM messages m WHERE m.id = ?1");
    first(sql, &query, &[id.into()], message_from)
}

/// The summaries a condensed summary was built from, oldest first.
pub fn child_summaries(sql: &mut impl Sql, id: i64) -> Result<Vec<SummaryRow>> {
    let query = format!(
        "SELECT {SUMMARY_COLUMNS} FROM summaries WHERE id IN (SELECT source_summary_id FROM summary_sources WHERE condensed_summary_id = ?1) \
         ORDER BY COALESCE(earliest_at, created_at), id"
    );
    every(sql, &query, &[id.into()], summary_from)
}

/// The summaries built on this one.
pub fn parent_summaries(sql: &mut impl Sql, id: i64) -> Result<Vec<i64>> {
    ids(sql, "SELECT condensed_summary_id FROM summary_sources WHERE source_summary_id = ?1 ORDER BY condensed_summary_id", &[id.into()])
}

/// How many messages a leaf summary covers directly.
pub fn direct_message_count(sql: &mut impl Sql, id: i64) -> Result<i64> {
    count(
        sql,
        "SELECT COUNT(*) FROM summary_messages WHERE summary_id = ?1",
        &[id.into()],
    )
}

/// A page of the messages a leaf summary covers directly, in conversation order.
pub fn direct_messages(
    sql: &mut impl Sql,
    id: i64,
    offset: i64,
    limit: i64,
) -> Result<Vec<MessageRow>> {
    let query = format!(
        "SELECT {MESSAGE_COLUMNS} FROM summary_messages sm JOIN messages m ON m.id = sm.message_id WHERE sm.summary_id = ?1 \
         ORDER BY m.seq LIMIT ?2 OFFSET ?3"
    );
    every(
        sql,
        &query,
        &[id.into(), limit.into(), offset.into()],
        message_from,
    )
}

/// The original messages under a summary, at any depth.
pub fn coverage(sql: &mut impl Sql, id: i64) -> Result<Coverage> {
    let query = format!(
        "{SUBTREE_CTE} SELECT COUNT(*), COALESCE(SUM(m.token_count), 0), MIN(m.seq), MAX(m.seq) {COVERED}"
    );
    let coverage = first(sql, &query, &[id.into()], |row| {
        Ok(Coverage {
            messages: row.int(0)?,
            tokens: row.int(1)?,
            first_seq: row.opt_int(2)?,
            last_seq: row.opt_int(3)?,
        })
    })?;
    Ok(coverage.unwrap_or_default())
}

/// A page of the original messages under a summary, at any depth, in conversation order.
pub fn covered_messages(
    sql: &mut impl Sql,
    id: i64,
    offset: i64,
    limit: i64,
) -> Result<Vec<MessageRow>> {
    let query = format!(
        "{SUBTREE_CTE} SELECT {MESSAGE_COLUMNS} {COVERED} ORDER BY m.seq LIMIT ?2 OFFSET ?3"
    );
    every(
        sql,
        &query,
        &[id.into(), limit.into(), offset.into()],
        message_from,
    )
}

/// The ids and conversations of the first `limit` original messages under a summary, at any
/// depth, in conversation order: [`covered_messages`] without reading the messages.
pub fn covered_message_ids(sql: &mut impl Sql, id: i64, limit: i64) -> Result<Vec<(i64, i64)>> {
    let query =
        format!("{SUBTREE_CTE} SELECT m.id, m.conversation_id {COVERED} ORDER BY m.seq LIMIT ?2");
    sql.query(&query, &[id.into(), limit.into()])?
        .iter()
        .map(|row| Ok((row.int(0)?, row.int(1)?)))
        .collect()
}

/// The summaries above a message (the leaf that covers it, and every summary built on that),
/// lowest first, each with whether it is in the current view.
pub fn summaries_above_message(
    sql: &mut impl Sql,
    message_id: i64,
) -> Result<Vec<(i64, i64, bool)>> {
    every(
        sql,
        "WITH RECURSIVE up(id) AS (SELECT summary_id FROM summary_messages WHERE message_id = ?1 UNION \
         SELECT ss.condensed_summary_id FROM summary_sources ss JOIN up ON ss.source_summary_id = up.id) \
         SELECT s.id, s.depth, EXISTS (SELECT 1 FROM context_items c WHERE c.summary_id = s.id) FROM summaries s \
         WHERE s.id IN (SELECT id FROM up) ORDER BY s.depth, s.id",
        &[message_id.into()],
        |r| Ok((r.int(0)?, r.int(1)?, r.int(2)? != 0)),
    )
}

/// Whether a message is itself an item of the current view.
pub fn message_in_view(sql: &mut impl Sql, message_id: i64) -> Result<bool> {
    exists(
        sql,
        "SELECT 1 FROM context_items WHERE message_id = ?1",
        &[message_id.into()],
    )
}

/// Whether a summary is itself an item of the current view.
pub fn summary_in_view(sql: &mut impl Sql, summary_id: i64) -> Result<bool> {
    exists(
        sql,
        "SELECT 1 FROM context_items WHERE summary_id = ?1",
        &[summary_id.into()],
    )
}

/// How many messages the conversation holds (its `seq` runs 1..=this).
pub fn message_total(sql: &mut impl Sql, conversation_id: i64) -> Result<i64> {
    count(
        sql,
        "SELECT COUNT(*) FROM messages WHERE conversation_id = ?1",
        &[conversation_id.into()],
    )
}

/// The message at `seq` in a conversation (the one after a hit, for delegated recall).
pub fn message_at_seq(
    sql: &mut impl Sql,
    conversation_id: i64,
    seq: i64,
) -> Result<Option<MessageRow>> {
    let query = format!(
        "SELECT {MESSAGE_COLUMNS} FROM messages m WHERE m.conversation_id = ?1 AND m.seq = ?2"
    );
    first(
        sql,
        &query,
        &[conversation_id.into(), seq.into()],
        message_from,
    )
}
