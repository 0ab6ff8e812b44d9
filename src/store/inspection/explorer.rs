//! Read-only queries of the context explorer: the conversations under one session-key prefix
//! (one agent's), each with the counts the explorer's list shows (summaries, DAG depth, fallback
//! summaries, failed passes, rejected summarizer answers), and the failures and rejections of one
//! conversation. The DAG and expansions themselves come from [`crate::store::inspect`]. Nothing here
//! writes, and no query here runs on the per-turn path. The host's internal runs (memory flush,
//! [`crate::core::session_key`]) are listed after the user's conversations and marked.

use serde::Serialize;

use crate::core::session_key::{is_internal, INTERNAL_KEY_LIKE};
use crate::error::Result;
use crate::store::sql::{Row, Sql};

/// Most conversations one list returns (newest first).
pub const LIST_LIMIT: i64 = 500;

/// One conversation as the explorer lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConversationRow {
    /// The conversation's row id in `conversations`.
    pub id: i64,
    /// The host's session key.
    pub session_key: String,
    /// The host's session id.
    pub session_id: String,
    /// "active" or "archived" (a reset or a new session id archives a conversation).
    pub status: String,
    /// When it was created, in ms since the epoch.
    pub created_at: i64,
    /// How many messages it stores (`message_count`).
    pub message_count: i64,
    /// Tokens of all its stored messages (`token_count`).
    pub token_count: i64,
    /// Tokens of what the model sees of it now (summaries and raw messages).
    pub context_tokens: i64,
    /// Summaries stored for it.
    pub summaries: i64,
    /// Depth of its deepest summary (0 when it has only leaf summaries or none).
    pub max_depth: i64,
    /// Summaries written by the deterministic fallback instead of a summarizer (repairable).
    pub fallback_summaries: i64,
    /// Compaction passes that gave up.
    pub failed_passes: i64,
    /// Summarizer answers thrown away as unusable.
    pub rejected_answers: i64,
    /// One of the host's internal runs (memory flush), not a conversation of the user's.
    pub internal: bool,
}

const COLUMNS: &str = "c.id, c.session_key, c.session_id, c.status, c.created_at, c.message_count, c.token_count, \
     c.context_token_count, \
     (SELECT COUNT(*) FROM summaries s WHERE s.conversation_id = c.id), \
     COALESCE((SELECT MAX(s.depth) FROM summaries s WHERE s.conversation_id = c.id), 0), \
     (SELECT COUNT(*) FROM summaries s WHERE s.conversation_id = c.id AND s.level = 'fallback'), \
     (SELECT COUNT(*) FROM compaction_events e WHERE e.conversation_id = c.id AND e.outcome = 'failed'), \
     (SELECT COUNT(*) FROM summarizer_calls k WHERE k.conversation_id = c.id AND k.outcome = 'rejected')";

fn from_row(row: &Row) -> Result<ConversationRow> {
    Ok(ConversationRow {
        id: row.int(0)?,
        session_key: row.text(1)?,
        session_id: row.text(2)?,
        status: row.text(3)?,
        created_at: row.int(4)?,
        message_count: row.int(5)?,
        token_count: row.int(6)?,
        context_tokens: row.int(7)?,
        summaries: row.int(8)?,
        max_depth: row.int(9)?,
        fallback_summaries: row.int(10)?,
        failed_passes: row.int(11)?,
        rejected_answers: row.int(12)?,
        internal: is_internal(&row.text(1)?),
    })
}

/// The conversations whose session key starts with `prefix`, at most [`LIST_LIMIT`]: the user's
/// newest first, then the host's internal runs newest first (so they never crowd the user's out).
pub fn conversations_with_prefix(sql: &mut impl Sql, prefix: &str) -> Result<Vec<ConversationRow>> {
    let rows = sql.query(
        &format!("SELECT {COLUMNS} FROM conversations c WHERE substr(c.session_key, 1, length(?1)) = ?1 ORDER BY (LOWER(c.session_key) LIKE ?3), c.id DESC LIMIT ?2"),
        &[prefix.into(), LIST_LIMIT.into(), INTERNAL_KEY_LIKE.into()],
    )?;
    rows.iter().map(from_row).collect()
}

/// One conversation by id, if its session key starts with `prefix`.
pub fn conversation_with_prefix(
    sql: &mut impl Sql,
    prefix: &str,
    id: i64,
) -> Result<Option<ConversationRow>> {
    let row = sql.query_row(
        &format!("SELECT {COLUMNS} FROM conversations c WHERE c.id = ?2 AND substr(c.session_key, 1, length(?1)) = ?1"),
        &[prefix.into(), id.into()],
    )?;
    row.as_ref().map(from_row).transpose()
}

/// The conversation a summary belongs to.
pub fn summary_conversation(sql: &mut impl Sql, summary_id: i64) -> Result<Option<i64>> {
    let row = sql.query_row(
        "SELECT conversation_id FROM summaries WHERE id = ?1",
        &[summary_id.into()],
    )?;
    row.map(|r| r.int(0)).transpose()
}

/// A summarizer answer that was thrown away, with the reason the checks gave.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RejectedAnswer {
    /// When the call was recorded, in ms since the epoch.
    pub created_at: i64,
    /// The pass that asked: `leaf`, `condensed` or `repair`.
    pub pass: String,
    /// "normal", "aggressive" or "fallback".
    pub level: String,
    /// Why the checks rejected it, when recorded.
    pub reason: Option<String>,
}

/// The newest rejected summarizer answers of a conversation, newest first, at most `limit`.
pub fn rejected_answers(
    sql: &mut impl Sql,
    conversation_id: i64,
    limit: i64,
) -> Result<Vec<RejectedAnswer>> {
    let rows = sql.query(
        "SELECT created_at, pass, level, reason FROM summarizer_calls WHERE conversation_id = ?1 AND outcome = 'rejected' ORDER BY id DESC LIMIT ?2",
        &[conversation_id.into(), limit.into()],
    )?;
    rows.iter()
        .map(|r| {
            Ok(RejectedAnswer {
                created_at: r.int(0)?,
                pass: r.text(1)?,
                level: r.text(2)?,
                reason: r.opt_text(3)?,
            })
        })
        .collect()
}
