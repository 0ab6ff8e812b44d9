//! Turn advancements: the idempotency record of `commitTurn`. A key is stored in the same
//! transaction as the turn's messages, so a retry either finds the key (and stores nothing) or
//! finds nothing stored at all.

use crate::core::message::StoredMessage;
use crate::error::Result;
use crate::store::claim::{self, Claim};
use crate::store::conversations::{self, LockedForAppend};
use crate::store::lock_before_append;
use crate::store::sql::Sql;
use crate::store::WriteTx;

use super::advancements_pg;

/// Per-turn query (primary key).
pub const FIND_SQL: &str = "SELECT payload_hash FROM turn_advancements WHERE advancement_key = ?1";

/// PostgreSQL: waits for any other transaction committing the same key (a host that retried a
/// turn on another gateway) and holds the key until this transaction ends: a transaction-level
/// advisory lock, taken in a statement of its own so every statement after it sees what that
/// transaction committed. Its result is not read (`execute`): a driver may send it without
/// waiting, since the server runs the next statement only once it has the lock (and fails that
/// one when taking the lock failed). SQLite's write lock already holds every key: nothing runs.
pub fn lock_key(sql: &mut impl Sql, key: &str) -> Result<()> {
    // The dialect's one decision here: PostgreSQL takes the lock (`advancements_pg`).
    if sql.dialect().is_postgres() {
        advancements_pg::lock_key(sql, key)?;
    }
    Ok(())
}

/// The payload hash recorded for `key`, read as it is now (after [`lock_key`]).
fn lookup(sql: &mut impl Sql, key: &str) -> Result<Option<String>> {
    let row = sql.query_row(FIND_SQL, &[key.into()])?;
    row.map(|r| r.text(0)).transpose()
}

/// How the start of a `commitTurn` transaction ended (see [`lock_for_commit`]).
#[derive(Debug)]
pub enum CommitLock {
    /// The key was committed before, with this payload hash: store nothing.
    Recorded(String),
    /// The key is new; the conversation is locked for the append. `existed`: it was already
    /// the key's active conversation for this session id (false: created or rotated now).
    Locked {
        /// The conversation as locked, with what the locking statement read for the append.
        locked: Box<LockedForAppend>,
        /// Whether it was already the key's active conversation for this session id.
        existed: bool,
    },
}

/// The start of a `commitTurn` transaction: the key's lock, its lookup and the conversation's
/// lock for the append. On PostgreSQL, for a steady turn, the lookup rides in the conversation's
/// lock statement (`lock_before_append::lock_for_append`): one round trip for both. Otherwise the
/// key is looked up on its own *before* the conversation is resolved, so a retried turn never
/// creates or rotates a conversation.
///
/// With a `claim` (PostgreSQL, a steady turn: `store::claim`), nothing is read: the claim's
/// guard and the key's primary key decide at `COMMIT`.
pub fn lock_for_commit(
    sql: &mut impl Sql,
    key: &str,
    session_key: &str,
    session_id: &str,
    messages: &[StoredMessage],
    scan_limit: i64,
    claim: Option<Claim>,
    now_ms: i64,
) -> Result<CommitLock> {
    lock_key(sql, key)?;
    if let Some(claim) = claim.filter(|_| claim::may_append(messages)) {
        let locked = claim::lock_claimed(sql, claim, scan_limit, Some(key))?;
        return Ok(CommitLock::Locked {
            locked: Box::new(locked),
            existed: true,
        });
    }
    let early = lock_before_append::lock_for_append(
        sql,
        session_key,
        session_id,
        messages,
        scan_limit,
        Some(key),
    )?;
    let recorded = match early.as_ref().and_then(|locked| locked.recorded.clone()) {
        Some(answer) => answer,
        None => lookup(sql, key)?,
    };
    if let Some(hash) = recorded {
        return Ok(CommitLock::Recorded(hash));
    }
    Ok(match early {
        Some(locked) => CommitLock::Locked {
            locked: Box::new(locked),
            existed: true,
        },
        None => {
            let (conversation, existed) =
                conversations::resolve_noting_existing(sql, session_key, session_id, now_ms)?;
            CommitLock::Locked {
                locked: Box::new(LockedForAppend::unknown(conversation)),
                existed,
            }
        }
    })
}

/// Records a committed advancement, in the write transaction that stored its messages.
pub fn record(
    tx: &mut WriteTx<'_, impl Sql>,
    key: &str,
    conversation_id: i64,
    payload_hash: &str,
    message_count: i64,
    now_ms: i64,
) -> Result<()> {
    tx.execute(
        RECORD_SQL,
        &[
            key.into(),
            conversation_id.into(),
            payload_hash.into(),
            message_count.into(),
            now_ms.into(),
        ],
    )
}

/// Per-turn statement: the idempotency record of a committed turn.
pub const RECORD_SQL: &str =
    "INSERT INTO turn_advancements (advancement_key, conversation_id, payload_hash, message_count, committed_at) VALUES (?1, ?2, ?3, ?4, ?5)";
