//! Read-only queries that describe what is stored: the summary DAG (each summary's level, depth,
//! children and the range of original messages it covers), a summary's direct children, the
//! messages under a summary, single messages, and the compaction event log. The base of the
//! `lcm_describe` / `lcm_expand` recall tools and of the demo page. Nothing here writes, and no
//! query here runs on the per-turn path.

use serde::Serialize;

use crate::core::message::text_of_raw_json;
use crate::error::{Error, Result};
use crate::store::sql::{Row, Sql, SqlValue};

pub use super::event_rows::EventOutcome;
use super::event_rows::OUTCOME_COLUMNS;
use super::inspect_pg;

/// One summary, described: everything but its text.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SummaryInfo {
    /// The summary's row id in `summaries`.
    pub id: i64,
    /// "leaf" (covers messages) or "condensed" (covers summaries).
    pub kind: String,
    /// Its depth in the summary DAG: 0 for a leaf summary.
    pub depth: i64,
    /// "normal", "aggressive" or "fallback".
    pub level: String,
    /// The summary's size in tokens.
    pub tokens: i64,
    /// Tokens of what it was made from (`source_token_count`).
    pub source_tokens: i64,
    /// Name of the summarizer that wrote it.
    pub summarizer: String,
    /// When it was stored, in ms since the epoch.
    pub created_at: i64,
    /// Direct children: summary ids for a condensed summary, message ids for a leaf.
    pub children: Vec<i64>,
    /// The original messages it covers, by `seq` (first and last), and how many.
    pub first_seq: Option<i64>,
    /// The last message's `seq`, see `first_seq`.
    pub last_seq: Option<i64>,
    /// How many original messages it covers.
    pub message_count: i64,
    /// Whether the summary itself is in the active context (else a deeper summary covers it).
    pub in_context: bool,
}

/// A stored message, as `expand` returns it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageInfo {
    /// The message's row id in `messages`.
    pub id: i64,
    /// Its position in its conversation.
    pub seq: i64,
    /// "system", "user", "assistant" or "tool".
    pub role: String,
    /// The plain-text rendering.
    pub content: String,
    /// Its size in tokens.
    pub tokens: i64,
    /// When it was stored, in ms since the epoch.
    pub created_at: i64,
    /// The leaf summary that covers it, if it was summarized.
    pub summary_id: Option<i64>,
}

/// One row of the compaction log.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EventInfo {
    /// The event's row id in `compaction_events`.
    pub id: i64,
    /// The pass and how it came out.
    #[serde(flatten)]
    pub event: EventOutcome,
    /// The summary the pass stored, a row id in `summaries`.
    pub summary_id: Option<i64>,
    /// Details of the decision or pass, as JSON.
    pub telemetry_json: Option<String>,
    /// How many decisions the row stands for: a run of unchanged skipped trigger decisions
    /// shares one row (schema 11); 1 for every other event.
    pub repeats: i64,
    /// When the latest decision of a run was made (its inputs are `tokens_before` and
    /// `telemetry_json`); None for a row that stands for one event.
    pub last_at: Option<i64>,
}

const SEP: char = '\u{1f}';

fn ids(text: Option<String>) -> Result<Vec<i64>> {
    let Some(text) = text else {
        return Ok(Vec::new());
    };
    text.split(SEP)
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.parse::<i64>()
                .map_err(|_| Error::unexpected_data(format!("bad id {s:?} in a child list")))
        })
        .collect()
}

/// Every summary of a leaf's or condensed summary's subtree reaches its messages through leaves;
/// the covered range is computed from the leaves under it with a recursive query.
const SUMMARY_COLUMNS: &str = "s.id, s.kind, s.depth, s.level, s.token_count, s.source_token_count, s.summarizer, s.created_at, \
     CASE WHEN s.kind = 'leaf' \
       THEN (SELECT group_concat(message_id, char(31)) FROM (SELECT sm.message_id FROM summary_messages sm JOIN messages m ON m.id = sm.message_id WHERE sm.summary_id = s.id ORDER BY m.seq)) \
       ELSE (SELECT group_concat(source_summary_id, char(31)) FROM (SELECT source_summary_id FROM summary_sources WHERE condensed_summary_id = s.id ORDER BY source_summary_id)) END, \
     (WITH RECURSIVE under(id) AS (SELECT s.id UNION SELECT ss.source_summary_id FROM summary_sources ss JOIN under ON ss.condensed_summary_id = under.id) \
       SELECT MIN(m.seq) || ',' || MAX(m.seq) || ',' || COUNT(*) FROM under JOIN summary_messages sm ON sm.summary_id = under.id JOIN messages m ON m.id = sm.message_id), \
     EXISTS (SELECT 1 FROM context_items ci WHERE ci.summary_id = s.id)";

/// The module's one decision on the dialect: PostgreSQL's [`SUMMARY_COLUMNS`] (`inspect_pg`).
fn summary_columns(sql: &impl Sql) -> &'static str {
    if sql.dialect().is_postgres() {
        inspect_pg::SUMMARY_COLUMNS
    } else {
        SUMMARY_COLUMNS
    }
}

fn summary_from_row(row: &Row) -> Result<SummaryInfo> {
    let range = row.opt_text(9)?.unwrap_or_default();
    let mut parts = range.split(',').map(|p| p.parse::<i64>().ok());
    let (first_seq, last_seq, message_count) = (
        parts.next().flatten(),
        parts.next().flatten(),
        parts.next().flatten().unwrap_or(0),
    );
    Ok(SummaryInfo {
        id: row.int(0)?,
        kind: row.text(1)?,
        depth: row.int(2)?,
        level: row.text(3)?,
        tokens: row.int(4)?,
        source_tokens: row.int(5)?,
        summarizer: row.text(6)?,
        created_at: row.int(7)?,
        children: ids(row.opt_text(8)?)?,
        first_seq,
        last_seq,
        message_count,
        in_context: row.int(10)? != 0,
    })
}

/// Every summary of a conversation, oldest first.
pub fn summaries(sql: &mut impl Sql, conversation_id: i64) -> Result<Vec<SummaryInfo>> {
    let columns = summary_columns(sql);
    let rows = sql.query(
        &format!("SELECT {columns} FROM summaries s WHERE s.conversation_id = ?1 ORDER BY s.id"),
        &[conversation_id.into()],
    )?;
    rows.iter().map(summary_from_row).collect()
}

/// One summary of a conversation, with its text; None when the conversation has no such summary.
pub fn summary(
    sql: &mut impl Sql,
    conversation_id: i64,
    summary_id: i64,
) -> Result<Option<(SummaryInfo, String)>> {
    let row = sql.query_row(
        &format!(
            "SELECT {}, s.content FROM summaries s WHERE s.conversation_id = ?1 AND s.id = ?2",
            summary_columns(sql)
        ),
        &[conversation_id.into(), summary_id.into()],
    )?;
    row.map(|row| Ok((summary_from_row(&row)?, row.text(11)?)))
        .transpose()
}

const MESSAGE_COLUMNS: &str = "m.id, m.seq, m.role, m.raw_json, m.token_count, m.created_at, (SELECT summary_id FROM summary_messages WHERE message_id = m.id LIMIT 1)";

fn message_from_row(row: &Row) -> Result<MessageInfo> {
    Ok(MessageInfo {
        id: row.int(0)?,
        seq: row.int(1)?,
        role: row.text(2)?,
        content: text_of_raw_json(&row.text(3)?)?,
        tokens: row.int(4)?,
        created_at: row.int(5)?,
        summary_id: row.opt_int(6)?,
    })
}

/// The messages a leaf summary covers, from `after_seq` on, in order, at most `limit`.
pub fn leaf_messages(
    sql: &mut impl Sql,
    summary_id: i64,
    after_seq: i64,
    limit: i64,
) -> Result<Vec<MessageInfo>> {
    messages_after(
        sql,
        "",
        "summary_messages sm JOIN messages m ON m.id = sm.message_id WHERE sm.summary_id = ?1 AND",
        summary_id,
        after_seq,
        limit,
    )
}

/// The original messages under a summary (through every level of the DAG) with `seq > after_seq`,
/// in order, at most `limit`.
pub fn covered_messages(
    sql: &mut impl Sql,
    summary_id: i64,
    after_seq: i64,
    limit: i64,
) -> Result<Vec<MessageInfo>> {
    messages_after(
        sql,
        UNDER_CTE,
        "under JOIN summary_messages sm ON sm.summary_id = under.id JOIN messages m ON m.id = sm.message_id WHERE",
        summary_id,
        after_seq,
        limit,
    )
}

/// The summaries at or below `?1` (the summary itself included), as `under`.
const UNDER_CTE: &str = "WITH RECURSIVE under(id) AS (SELECT CAST(?1 AS bigint) UNION SELECT ss.source_summary_id FROM summary_sources ss JOIN under ON ss.condensed_summary_id = under.id) ";

/// A page of the messages of summary `summary_id` (`?1`): `with` and `from_where` name where they
/// come from and open the `WHERE` clause; the page holds the ones with `seq > after_seq`, in
/// order, at most `limit`.
fn messages_after(
    sql: &mut impl Sql,
    with: &str,
    from_where: &str,
    summary_id: i64,
    after_seq: i64,
    limit: i64,
) -> Result<Vec<MessageInfo>> {
    let rows = sql.query(
        &format!(
            "{with}SELECT {MESSAGE_COLUMNS} FROM {from_where} m.seq > ?2 ORDER BY m.seq LIMIT ?3"
        ),
        &[summary_id.into(), after_seq.into(), limit.into()],
    )?;
    rows.iter().map(message_from_row).collect()
}

/// One message of a conversation by id.
pub fn message(
    sql: &mut impl Sql,
    conversation_id: i64,
    message_id: i64,
) -> Result<Option<MessageInfo>> {
    let row = sql.query_row(
        &format!(
            "SELECT {MESSAGE_COLUMNS} FROM messages m WHERE m.conversation_id = ?1 AND m.id = ?2"
        ),
        &[conversation_id.into(), message_id.into()],
    )?;
    row.as_ref().map(message_from_row).transpose()
}

/// The compaction log of a conversation after event `after_id`, oldest first, at most `limit`.
pub fn events(
    sql: &mut impl Sql,
    conversation_id: i64,
    after_id: i64,
    limit: i64,
) -> Result<Vec<EventInfo>> {
    events_where(
        sql,
        "conversation_id = ?1 AND id > ?2 ORDER BY id LIMIT ?3",
        &[conversation_id.into(), after_id.into(), limit.into()],
    )
}

/// The newest failed compaction passes of a conversation, newest first, at most `limit`.
pub fn failed_events(
    sql: &mut impl Sql,
    conversation_id: i64,
    limit: i64,
) -> Result<Vec<EventInfo>> {
    events_where(
        sql,
        "conversation_id = ?1 AND outcome = 'failed' ORDER BY id DESC LIMIT ?2",
        &[conversation_id.into(), limit.into()],
    )
}

/// The rows of `compaction_events` that `condition` (a `WHERE` clause and its order and limit)
/// selects.
fn events_where(
    sql: &mut impl Sql,
    condition: &str,
    params: &[SqlValue],
) -> Result<Vec<EventInfo>> {
    let rows = sql.query(
        &format!(
            "SELECT id, {OUTCOME_COLUMNS}, summary_id, telemetry_json, repeats, last_at \
             FROM compaction_events WHERE {condition}"
        ),
        params,
    )?;
    rows.iter().map(event_from_row).collect()
}

fn event_from_row(row: &Row) -> Result<EventInfo> {
    Ok(EventInfo {
        id: row.int(0)?,
        event: EventOutcome::from_row(row, 1)?,
        summary_id: row.opt_int(8)?,
        telemetry_json: row.opt_text(9)?,
        repeats: row.int(10)?,
        last_at: row.opt_int(11)?,
    })
}

/// How many raw messages and summaries the active context holds.
pub fn context_counts(sql: &mut impl Sql, conversation_id: i64) -> Result<(i64, i64)> {
    let row = sql.query_row(
        "SELECT COUNT(message_id), COUNT(summary_id) FROM context_items WHERE conversation_id = ?1",
        &[conversation_id.into()],
    )?;
    row.map_or(Ok((0, 0)), |r| Ok((r.int(0)?, r.int(1)?)))
}
