//! Writes for an import from another engine's database: the map of what was imported (so a
//! second import adds nothing), conversations created as they were there (active or archived),
//! summaries with their DAG edges, and the imported view. Messages are not written here: they go
//! through [`crate::store::messages::append`], the same path as ingestion, so dedup, message
//! parts, the FTS index and running totals stay one code path. Call everything inside a write
//! transaction.

use crate::error::{Error, Result};
use crate::store::conversations::{from_row, Conversation, COLUMNS};
use crate::store::sql::Sql;

/// The local id an earlier import gave this source row, if any.
pub fn imported(sql: &mut impl Sql, source_key: &str) -> Result<Option<i64>> {
    sql.query_row(
        "SELECT local_id FROM imports WHERE source_key = ?1",
        &[source_key.into()],
    )?
    .map(|r| r.int(0))
    .transpose()
}

/// Records that the source row `source_key` was imported as local row `local_id` (`kind`:
/// "conversation" or "summary"), at `now_ms` (ms since the epoch).
pub fn record(
    sql: &mut impl Sql,
    source_key: &str,
    kind: &'static str,
    local_id: i64,
    now_ms: i64,
) -> Result<()> {
    sql.execute(
        "INSERT INTO imports (source_key, kind, local_id, imported_at) VALUES (?1, ?2, ?3, ?4)",
        &[
            source_key.into(),
            kind.into(),
            local_id.into(),
            now_ms.into(),
        ],
    )
}

/// A conversation by id, active or archived.
pub fn conversation(sql: &mut impl Sql, id: i64) -> Result<Conversation> {
    let row = sql.query_row(
        &format!("SELECT {COLUMNS} FROM conversations WHERE id = ?1"),
        &[id.into()],
    )?;
    row.as_ref()
        .map(from_row)
        .transpose()?
        .ok_or_else(|| Error::unexpected_data(format!("conversation {id} disappeared")))
}

/// Creates a conversation; archived ones carry `archive_cause`.
pub fn create_conversation(
    sql: &mut impl Sql,
    key: &str,
    session_id: &str,
    archived: Option<&str>,
    created_at: i64,
    now_ms: i64,
) -> Result<Conversation> {
    let generation = crate::store::conversations::next_generation(sql, key)?;
    let (status, cause, archived_at) = match archived {
        Some(cause) => ("archived", Some(cause), Some(now_ms)),
        None => ("active", None, None),
    };
    let row = sql.query_row(
        &format!(
            "INSERT INTO conversations (session_key, session_id, generation, status, archive_cause, archived_at, created_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) RETURNING {COLUMNS}"
        ),
        &[key.into(), session_id.into(), generation.into(), status.into(), cause.into(), archived_at.into(), created_at.into()],
    )?;
    row.as_ref()
        .map(from_row)
        .transpose()?
        .ok_or_else(|| Error::unexpected_data("creating a conversation returned no row"))
}

/// A summary to import, with its edges already mapped to local ids.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedSummary<'a> {
    /// The local conversation it goes into, a row id in `conversations`.
    pub conversation_id: i64,
    /// "leaf" (covers messages) or "condensed" (covers summaries).
    pub kind: &'a str,
    /// Its depth in the summary DAG: 0 for a leaf.
    pub depth: i64,
    /// The summary's text.
    pub content: &'a str,
    /// Its size in tokens.
    pub tokens: i64,
    /// Time of the earliest message it covers, in ms since the epoch.
    pub earliest_at: Option<i64>,
    /// Time of the latest message it covers, in ms since the epoch.
    pub latest_at: Option<i64>,
    /// Tokens of what it summarized (`summaries.source_token_count`).
    pub source_tokens: i64,
    /// The model that wrote it, when the source recorded one.
    pub model: Option<&'a str>,
    /// "normal", "aggressive" or "fallback".
    pub level: &'static str,
    /// When the source created it, in ms since the epoch (the import's time when unreadable).
    pub created_at: i64,
    /// The messages it covers, as local row ids in `messages`.
    pub messages: &'a [i64],
    /// The summaries it covers, as local row ids in `summaries`.
    pub sources: &'a [i64],
}

/// Inserts a summary and its edges; descendant counts are computed from the edges.
pub fn insert_summary(sql: &mut impl Sql, s: &ImportedSummary<'_>) -> Result<i64> {
    let (mut descendant_messages, mut descendant_summaries) = (s.messages.len() as i64, 0i64);
    for source in s.sources {
        if let Some(row) = sql.query_row("SELECT descendant_message_count, descendant_summary_count FROM summaries WHERE id = ?1", &[(*source).into()])? {
            descendant_messages += row.int(0)?;
            descendant_summaries += row.int(1)? + 1;
        }
    }
    let row = sql.query_row(
        "INSERT INTO summaries (conversation_id, kind, depth, content, token_count, earliest_at, latest_at, descendant_message_count, \
         descendant_summary_count, source_token_count, summarizer, model, level, created_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 'lossless-claw', ?11, ?12, ?13) RETURNING id",
        &[
            s.conversation_id.into(),
            s.kind.into(),
            s.depth.into(),
            s.content.into(),
            s.tokens.into(),
            s.earliest_at.into(),
            s.latest_at.into(),
            descendant_messages.into(),
            descendant_summaries.into(),
            s.source_tokens.into(),
            s.model.into(),
            s.level.into(),
            s.created_at.into(),
        ],
    )?;
    let id = row
        .ok_or_else(|| Error::unexpected_data("inserting a summary returned no row"))?
        .int(0)?;
    for message in s.messages {
        sql.execute("INSERT INTO summary_messages (summary_id, message_id) VALUES (?1, ?2) ON CONFLICT DO NOTHING", &[id.into(), (*message).into()])?;
    }
    for source in s.sources {
        sql.execute("INSERT INTO summary_sources (source_summary_id, condensed_summary_id) VALUES (?1, ?2) ON CONFLICT DO NOTHING", &[(*source).into(), id.into()])?;
    }
    Ok(id)
}

/// One item of an imported view: `(message_id, summary_id, tokens)`, exactly one id set.
pub type ViewItem = (Option<i64>, Option<i64>, u32);

/// Replaces a conversation's view by `items`, in order, and resets its running totals.
pub fn replace_view(sql: &mut impl Sql, conversation_id: i64, items: &[ViewItem]) -> Result<()> {
    sql.execute(
        "DELETE FROM context_items WHERE conversation_id = ?1",
        &[conversation_id.into()],
    )?;
    let (mut total, mut summaries) = (0i64, 0i64);
    for (i, (message, summary, tokens)) in items.iter().enumerate() {
        sql.execute(
            "INSERT INTO context_items (conversation_id, ordinal, message_id, summary_id, token_count) VALUES (?1, ?2, ?3, ?4, ?5)",
            &[conversation_id.into(), (i as i64 + 1).into(), (*message).into(), (*summary).into(), (*tokens).into()],
        )?;
        total += i64::from(*tokens);
        if summary.is_some() {
            summaries += i64::from(*tokens);
        }
    }
    sql.execute(
        "UPDATE conversations SET next_ordinal = ?2, context_token_count = ?3, context_summary_tokens = ?4, context_epoch = context_epoch + 1 WHERE id = ?1",
        &[conversation_id.into(), (items.len() as i64).into(), total.into(), summaries.into()],
    )
}
