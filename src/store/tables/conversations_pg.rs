//! Conversations on PostgreSQL ([`super::conversations`] decides when): every write transaction
//! of a conversation starts by locking its row, so writers of one conversation take turns —
//! whichever gateway they run on — while other conversations write in parallel; and a key's
//! conversation is created or rotated under a race with other gateways that the partial unique
//! index on active keys decides.
//!
//! Must not: run on SQLite (`FOR UPDATE`, `ON CONFLICT … WHERE` on a partial index).

use crate::error::{Result, StorageErrorKind};
use crate::store::sql::Sql;

use super::conversation_rows::{
    archive, conversation_columns, from_row, next_generation, Conversation,
};

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
const CREATE_SQL: &str = concat!(
    "INSERT INTO conversations (session_key, session_id, generation, created_at) VALUES (?1, ?2, ?3, ?4) \
     ON CONFLICT (session_key) WHERE status = 'active' DO NOTHING RETURNING ",
    conversation_columns!()
);

/// How often [`resolve_locked`] looks again when other writers keep creating or rotating the key.
const RESOLVE_ROUNDS: usize = 4;

/// Locks a conversation's row for the rest of the write transaction (see `conversations::lock`).
pub(super) fn lock(sql: &mut impl Sql, id: i64) -> Result<()> {
    sql.query_row(
        "SELECT id FROM conversations WHERE id = ?1 FOR UPDATE",
        &[id.into()],
    )?;
    Ok(())
}

/// `conversations::resolve_noting_existing` on PostgreSQL: the key's active row, locked, when
/// it is this session id's; else the key's conversation archived and a new one created, looking
/// again when another gateway created or rotated it meanwhile.
pub(super) fn resolve_locked(
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
            CREATE_SQL,
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
