//! Conversations: one active row per session key, with running message and token totals so no
//! per-turn query sums the history. A new session id under the same key archives the old
//! conversation (kept, never purged) and starts a new one.

use crate::error::{Result, StorageErrorKind};
use crate::store::sql::Sql;

/// The active conversation of a session key.
#[derive(Debug, Clone, PartialEq)]
pub struct Conversation {
    /// The conversation's row id in `conversations`.
    pub id: i64,
    /// The host's session key.
    pub session_key: String,
    /// The host's session id.
    pub session_id: String,
    /// Which conversation of this session key it is, from 1; it continues across archives.
    pub generation: i64,
    /// How many messages it stores (`message_count`).
    pub message_count: i64,
    /// Tokens of all its stored messages (`token_count`).
    pub token_count: i64,
    /// The ordinal the next context item gets.
    pub next_ordinal: i64,
    /// Running total of the active context's tokens.
    pub context_token_count: i64,
    /// Changes whenever context items are replaced rather than appended.
    pub context_epoch: i64,
    /// The part of `context_token_count` that is summaries.
    pub context_summary_tokens: i64,
    /// How far tool-output stubbing has looked (the last context ordinal it considered; 0 for a
    /// new conversation). Read with the row, so a turn's stubbing needs no read of its own.
    pub stubbed_through: i64,
    /// The compaction trigger's retry state and pending work as stored (JSON; None until first
    /// saved; see `store::compaction::state_of`). Read with the row, so a turn's trigger needs no
    /// read of its own.
    pub compaction_state_json: Option<String>,
    /// The pending work the trigger asked for, as JSON (see `store::compaction::Pending`).
    pub compaction_pending_json: Option<String>,
}

impl Conversation {
    /// Tokens of the raw messages in the active context.
    pub fn context_raw_tokens(&self) -> i64 {
        self.context_token_count - self.context_summary_tokens
    }

    /// The row as [`add_appended`] leaves it after `messages` new messages of `tokens` tokens:
    /// what a read of it would return inside the same write transaction (SQLite's write lock,
    /// PostgreSQL's row lock from [`resolve`] keep every other writer out), without the read.
    pub fn after_append(&self, messages: i64, tokens: i64) -> Conversation {
        Conversation {
            message_count: self.message_count + messages,
            token_count: self.token_count + tokens,
            next_ordinal: self.next_ordinal + messages,
            context_token_count: self.context_token_count + tokens,
            ..self.clone()
        }
    }
}

/// The columns [`from_row`] reads, in order: the one list every statement that reads a
/// conversation row names (a macro, so the `const` statements below can be built from it).
macro_rules! conversation_columns {
    () => {
        "id, session_key, session_id, generation, message_count, token_count, next_ordinal, context_token_count, context_epoch, context_summary_tokens, stubbed_through, compaction_state_json, compaction_pending_json"
    };
}
pub(crate) use conversation_columns;

/// That list as a string.
pub(crate) const COLUMNS: &str = conversation_columns!();
/// How many columns [`COLUMNS`] names.
pub(crate) const COLUMN_COUNT: usize = 13;

/// [`COLUMNS`] of the table under `alias`, for joins where a bare name would be ambiguous.
pub(crate) fn columns_of(alias: &str) -> String {
    COLUMNS
        .split(", ")
        .map(|c| format!("{alias}.{c}"))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(crate) fn from_row(row: &crate::store::sql::Row) -> Result<Conversation> {
    Ok(Conversation {
        id: row.int(0)?,
        session_key: row.text(1)?,
        session_id: row.text(2)?,
        generation: row.int(3)?,
        message_count: row.int(4)?,
        token_count: row.int(5)?,
        next_ordinal: row.int(6)?,
        context_token_count: row.int(7)?,
        context_epoch: row.int(8)?,
        context_summary_tokens: row.int(9)?,
        stubbed_through: row.int(10)?,
        compaction_state_json: row.opt_text(11)?,
        compaction_pending_json: row.opt_text(12)?,
    })
}

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

/// PostgreSQL: the active row, locked until the transaction ends. Every write transaction of a
/// conversation starts here (or at [`lock`]), so writers of one conversation take turns —
/// whichever gateway they run on — while other conversations write in parallel. Waiting for the
/// lock, PostgreSQL returns the row as the previous writer committed it: totals, `seq`s and
/// ordinals read here are current.
const FIND_ACTIVE_FOR_UPDATE_SQL: &str = concat!(
    "SELECT ",
    conversation_columns!(),
    " FROM conversations WHERE session_key = ?1 AND status = 'active' FOR UPDATE"
);

/// PostgreSQL: creates the key's conversation unless another gateway just did (the partial
/// unique index decides; the loser gets no row and reads the winner's).
const CREATE_SQL_POSTGRES: &str = concat!(
    "INSERT INTO conversations (session_key, session_id, generation, created_at) VALUES (?1, ?2, ?3, ?4) \
     ON CONFLICT (session_key) WHERE status = 'active' DO NOTHING RETURNING ",
    conversation_columns!()
);

/// How often [`resolve`] looks again when other writers keep creating or rotating the key.
const RESOLVE_ROUNDS: usize = 4;

/// Locks a conversation's row for the rest of the write transaction (PostgreSQL), so a write
/// that starts from a known conversation id (a compaction's apply, a stub batch) takes its turn
/// like a write that starts from the key. SQLite's `BEGIN IMMEDIATE` already holds the whole
/// database: nothing to do there, no statement run.
pub fn lock(sql: &mut impl Sql, id: i64) -> Result<()> {
    if sql.dialect().is_postgres() {
        sql.query_row(
            "SELECT id FROM conversations WHERE id = ?1 FOR UPDATE",
            &[id.into()],
        )?;
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
    if sql.dialect().is_postgres() {
        return resolve_locked(sql, session_key, session_id, now_ms);
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

fn resolve_locked(
    sql: &mut impl Sql,
    session_key: &str,
    session_id: &str,
    now_ms: i64,
) -> Result<(Conversation, bool)> {
    for _ in 0..RESOLVE_ROUNDS {
        if let Some(existing) = sql.query_row(FIND_ACTIVE_FOR_UPDATE_SQL, &[session_key.into()])? {
            let existing = from_row(&existing)?;
            if existing.session_id == session_id {
                return Ok((existing, true));
            }
            archive(sql, existing.id, "session-id-changed", now_ms)?;
        }
        let generation = next_generation(sql, session_key)?;
        if let Some(row) = sql.query_row(
            CREATE_SQL_POSTGRES,
            &[
                session_key.into(),
                session_id.into(),
                generation.into(),
                now_ms.into(),
            ],
        )? {
            return Ok((from_row(&row)?, false));
        }
        // Another gateway created the key's conversation meanwhile; it has committed (ON CONFLICT
        // waited for it): the next round reads and locks that row.
    }
    Err(crate::error::Error::storage(StorageErrorKind::Busy, format!(
        "the conversation of session key {session_key:?} kept being created or rotated by other writers; try again"
    )))
}

/// Archives a conversation: kept with all its messages and summaries (searchable with scope
/// "all"), no longer the active one for its key. The key's next write starts a new generation.
pub fn archive(sql: &mut impl Sql, id: i64, cause: &str, now_ms: i64) -> Result<()> {
    sql.execute(
        "UPDATE conversations SET status = 'archived', archive_cause = ?2, archived_at = ?3 WHERE id = ?1",
        &[id.into(), cause.into(), now_ms.into()],
    )
}

/// Generation numbers continue across archives of the same key.
pub fn next_generation(sql: &mut impl Sql, session_key: &str) -> Result<i64> {
    let row = sql.query_row(
        "SELECT COALESCE(MAX(generation), 0) + 1 FROM conversations WHERE session_key = ?1",
        &[session_key.into()],
    )?;
    row.map_or(Ok(1), |r| r.int(0))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_column_list_has_column_count_columns_and_aliases_each() {
        assert_eq!(COLUMNS.split(", ").count(), COLUMN_COUNT);
        let aliased = columns_of("c");
        assert_eq!(aliased.split(", ").count(), COLUMN_COUNT);
        assert!(
            aliased.starts_with("c.id, c.session_key, ")
                && aliased.ends_with(", c.compaction_pending_json"),
            "{aliased}"
        );
    }
}
