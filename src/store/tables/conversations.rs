//! Conversations: one active row per session key, with running message and token totals so no
//! per-turn query sums the history. A new session id under the same key archives the old
//! conversation (kept, never purged) and starts a new one. The row itself (its columns, how it is
//! read, archiving, generations) is `conversation_rows`'; PostgreSQL's locking and resolving,
//! `conversations_pg`'s.

use crate::error::Result;
use crate::store::sql::Sql;

pub(crate) use super::conversation_rows::conversation_columns;
pub use super::conversation_rows::{archive, next_generation, Conversation};
pub(crate) use super::conversation_rows::{columns_of, from_row, COLUMNS, COLUMN_COUNT};
use super::conversations_pg;

/// Per-turn query (the partial unique index on active session keys).
pub const FIND_ACTIVE_SQL: &str = concat!(
    "SELECT ",
    conversation_columns!(),
    " FROM conversations WHERE session_key = ?1 AND status = 'active'"
);

/// The active conversation for `session_key`, if any.
pub fn find_active(sql: &mut impl Sql, session_key: &str) -> Result<Option<Conversation>> {
    let row = sql.query_row(FIND_ACTIVE_SQL, &[session_key.into()])?;
    row.as_ref().map(from_row).transpose()
}

/// Locks a conversation's row for the rest of the write transaction (PostgreSQL), so a write
/// that starts from a known conversation id (a compaction's apply, a stub batch) takes its turn
/// like a write that starts from the key. SQLite's `BEGIN IMMEDIATE` already holds the whole
/// database: nothing to do there, no statement run.
pub fn lock(sql: &mut impl Sql, id: i64) -> Result<()> {
    // The dialect's decision here: only PostgreSQL locks a row (`conversations_pg`).
    if sql.dialect().is_postgres() {
        conversations_pg::lock(sql, id)?;
    }
    Ok(())
}

/// What a read of a conversation's row tells a later claim: its `xmin` and its host facts (a
/// column the turn needs but `Conversation` does not carry).
#[derive(Debug, Clone, PartialEq)]
pub struct RowVersion {
    /// The row's PostgreSQL `xmin` when read: the id of the transaction that last wrote it.
    pub xmin: i64,
    /// The row's `host_facts_json` when read (None: none stored).
    pub host_facts_json: Option<String>,
}

/// What the statement that locks a conversation before an append learned: the row, and what
/// the append and the turn's stub pass would otherwise read, each None when it is not known to
/// be current (see [`resolve_for_append`]).
#[derive(Debug, Clone, PartialEq)]
pub struct LockedForAppend {
    /// The conversation's row, as locked.
    pub conversation: Conversation,
    /// Which of the messages' identities (lowercase hex) the conversation already stores.
    pub stored: Option<std::collections::HashSet<String>>,
    /// The newest context items after the row's `stubbed_through` (oldest first, at most the
    /// `scan_limit` asked for) and whether older ones were left out, as before the append:
    /// what `masking::scan` would have returned then.
    pub unstubbed: Option<(Vec<crate::core::masking::ScanItem>, bool)>,
    /// The row's `host_facts_json` as locked (`Some(None)`: none stored); None when the
    /// statement did not read the row.
    pub host_facts_json: Option<Option<String>>,
    /// The payload hash recorded for the advancement key asked about (`Some(None)`: not
    /// recorded); None when no key was asked about or the answer is not known to be current.
    pub recorded: Option<Option<String>>,
}

impl LockedForAppend {
    /// A conversation locked (or, on SQLite, written under the database's lock) with nothing
    /// known about it beyond its row: the append, the stub pass and the key's lookup read.
    pub fn unknown(conversation: Conversation) -> LockedForAppend {
        LockedForAppend {
            conversation,
            stored: None,
            unstubbed: None,
            host_facts_json: None,
            recorded: None,
        }
    }
}

/// The active conversation for the key, created (or rotated, when the session id changed).
/// On PostgreSQL its row is locked for the rest of the transaction.
pub fn resolve(
    sql: &mut impl Sql,
    session_key: &str,
    session_id: &str,
    now_ms: i64,
) -> Result<Conversation> {
    Ok(resolve_noting_existing(sql, session_key, session_id, now_ms)?.0)
}

/// [`resolve`], also telling whether the conversation was already the key's active one for
/// this session id (false: this call created it, archiving any other).
pub fn resolve_noting_existing(
    sql: &mut impl Sql,
    session_key: &str,
    session_id: &str,
    now_ms: i64,
) -> Result<(Conversation, bool)> {
    // The dialect's decision here: PostgreSQL resolves under the row's lock, racing other
    // gateways (`conversations_pg`); SQLite's write lock already keeps every other writer out.
    if sql.dialect().is_postgres() {
        return conversations_pg::resolve_locked(sql, session_key, session_id, now_ms);
    }
    if let Some(existing) = find_active(sql, session_key)? {
        if existing.session_id == session_id {
            return Ok((existing, true));
        }
        archive(sql, existing.id, "session-id-changed", now_ms)?;
    }
    let generation = next_generation(sql, session_key)?;
    let row = sql.query_row(
        &format!(
            "INSERT INTO conversations (session_key, session_id, generation, created_at) VALUES (?1, ?2, ?3, ?4) RETURNING {COLUMNS}"
        ),
        &[session_key.into(), session_id.into(), generation.into(), now_ms.into()],
    )?;
    match row {
        Some(row) => Ok((from_row(&row)?, false)),
        None => Err(crate::error::Error::unexpected_data(
            "creating a conversation returned no row",
        )),
    }
}

/// Adds to the running totals after messages were appended (each also became a context item).
pub fn add_appended(sql: &mut impl Sql, id: i64, messages: i64, tokens: i64) -> Result<()> {
    sql.execute(
        "UPDATE conversations SET message_count = message_count + ?2, token_count = token_count + ?3, \
         next_ordinal = next_ordinal + ?2, context_token_count = context_token_count + ?3 WHERE id = ?1",
        &[id.into(), messages.into(), tokens.into()],
    )
}

/// Adjusts the active context's running total (a compaction replaced items).
pub fn add_context_tokens(sql: &mut impl Sql, id: i64, delta: i64) -> Result<()> {
    sql.execute(
        "UPDATE conversations SET context_token_count = context_token_count + ?2 WHERE id = ?1",
        &[id.into(), delta.into()],
    )
}
