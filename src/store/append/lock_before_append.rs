//! Locking a session's conversation before an append (PostgreSQL): one statement that locks the
//! row and also says which of the messages it already stores, the context items the turn's stub
//! pass would read, and an advancement key's recorded payload — or, for a steady turn's claim,
//! nothing at all (`claim`). The statement and the reading of its answer are
//! `lock_before_append_pg`'s; this module decides when it runs. SQLite runs nothing here: its
//! writes are serialized by the database's own lock, and callers [`resolve`] the conversation as
//! always.

use crate::error::Result;
use crate::store::conversations::{resolve, LockedForAppend};
use crate::store::sql::Sql;

use super::lock_before_append_pg;

/// [`resolve`] before appending `messages`: on PostgreSQL, when the key's conversation exists
/// for this session id, the statement that locks it also says which of the messages'
/// identities it already stores (lowercase hex; see `lock_before_append_pg`), so the
/// append need not ask (one round trip less), and, when `scan_limit` > 0, returns the newest
/// `scan_limit` context items after the row's `stubbed_through`, so a turn's stub pass need not
/// read them after the append (one more). Both are None when not known to be current (the lock
/// waited for a writer that changed the row, a new or rotated conversation, SQLite, identities
/// that are not 32 hex digits): the append and the stub pass then read for themselves.
///
/// The items are current for the same reason as the identities: every transaction that writes
/// a conversation's context items (an append, a stub batch, a compaction's apply, an import's
/// view, a summary's repair) also updates its row, so the row's unchanged `xmin` means none
/// committed between the statement's snapshot and its lock, and the lock keeps them out after.
///
/// With a `claim` (PostgreSQL, a steady turn: `store::claim`), nothing is read.
pub fn resolve_for_append(
    sql: &mut impl Sql,
    session_key: &str,
    session_id: &str,
    messages: &[crate::core::message::StoredMessage],
    scan_limit: i64,
    claim: Option<super::claim::Claim>,
    now_ms: i64,
) -> Result<LockedForAppend> {
    if let Some(claim) = claim.filter(|_| super::claim::may_append(messages)) {
        return super::claim::lock_claimed(sql, claim, scan_limit, None);
    }
    match lock_for_append(sql, session_key, session_id, messages, scan_limit, None)? {
        Some(locked) => Ok(locked),
        // Rotation or creation (the row the statement locked, if any, stays locked): as always.
        None => Ok(LockedForAppend::unknown(resolve(
            sql,
            session_key,
            session_id,
            now_ms,
        )?)),
    }
}

/// The lock statement of [`resolve_for_append`] alone, also asking for `advancement_key`'s
/// recorded payload hash: Some when it found and locked the key's conversation for this session
/// id (with what it could tell; `recorded` is None when the key's answer is not known to be
/// current), None when the caller must [`resolve`] (SQLite — nothing is run there —, a new or
/// rotated conversation, messages the bulk append does not take).
///
/// The key's answer is sound for two reasons. The caller holds the key's advisory lock from a
/// statement before this one (`advancements::lock_key`), so any transaction that committed the
/// key through `commitTurn` committed before this statement's snapshot. And a writer that did
/// not take it, committing while this statement waited for the row, also updated the row
/// (`advancements::record` goes with an append in one transaction): the `xmin` check then
/// withholds the answer, and the caller looks the key up under the lock.
pub fn lock_for_append(
    sql: &mut impl Sql,
    session_key: &str,
    session_id: &str,
    messages: &[crate::core::message::StoredMessage],
    scan_limit: i64,
    advancement_key: Option<&str>,
) -> Result<Option<LockedForAppend>> {
    // The dialect's one decision here: SQLite locks nothing before an append.
    if !sql.dialect().is_postgres() {
        return Ok(None);
    }
    lock_before_append_pg::lock_for_append(
        sql,
        session_key,
        session_id,
        messages,
        scan_limit,
        advancement_key,
    )
}
