//! Locking a session's conversation before an append (PostgreSQL): one statement that locks the
//! row and also says which of the messages it already stores, the context items the turn's stub
//! pass would read, and an advancement key's recorded payload — or, for a steady turn's claim,
//! nothing at all (`claim`). SQLite runs nothing here: its writes are serialized by the
//! database's own lock, and callers [`resolve`] the conversation as always.

use crate::error::{Result, StorageErrorKind};
use crate::store::conversations::{from_row, resolve, LockedForAppend, COLUMN_COUNT};
use crate::store::sql::Sql;

/// PostgreSQL, before an append: [`FIND_ACTIVE_FOR_UPDATE_SQL`] that also returns which of the
/// identities in `?2` (a JSON array of hex) the conversation already stores, and whether that
/// answer is current (1) or not (0). It is current unless the statement waited for the lock while
/// another writer changed the row: PostgreSQL then returns the row as that writer committed it
/// (the row's `xmin` changes with every update), but the subqueries still see the snapshot from
/// before the wait (the same row's older `xmin`). Every writer that adds messages updates the
/// row's totals in its transaction, so an unchanged `xmin` means no messages were added since.
/// (The conversation's columns go unqualified: `c` is the statement's only table. The identities
/// are an array for `= ANY`, as in `bulk_pg`'s read: an index probe each, whatever the
/// statistics.) After the items the stub pass considers (`?3` their limit): the locked row's
/// `host_facts_json` (a column of the locked row, so current after any wait), and the payload
/// hash recorded for the advancement key `?4` (NULL for none, or no key: `afterTurn`), under the
/// same `xmin` check as the identities (see [`lock_for_append`] for why it is sound).
const FIND_ACTIVE_FOR_APPEND_SQL: &str = concat!(
    "SELECT ",
    crate::store::conversations::conversation_columns!(),
    ", CASE WHEN (SELECT x.xmin FROM conversations x WHERE x.id = c.id) = c.xmin THEN 1 ELSE 0 END, \
       (SELECT string_agg(encode(m.identity_hash, 'hex'), ',') FROM messages m WHERE m.conversation_id = c.id \
          AND m.identity_hash = ANY (ARRAY(SELECT decode(value, 'hex') FROM json_array_elements_text(CAST(CAST(?2 AS text) AS json))))), ",
    crate::store::masking::scan_json_of_locked_row!(),
    ", c.host_facts_json, (SELECT a.payload_hash FROM turn_advancements a WHERE a.advancement_key = ?4) \
     FROM conversations c WHERE c.session_key = ?1 AND c.status = 'active' FOR UPDATE OF c"
);

/// [`resolve`] before appending `messages`: on PostgreSQL, when the key's conversation exists
/// for this session id, the statement that locks it also says which of the messages'
/// identities it already stores (lowercase hex; see [`FIND_ACTIVE_FOR_APPEND_SQL`]), so the
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
    claim: Option<crate::store::claim::Claim>,
    now_ms: i64,
) -> Result<LockedForAppend> {
    if let Some(claim) = claim.filter(|_| crate::store::claim::may_append(messages)) {
        return crate::store::claim::lock_claimed(sql, claim, scan_limit, None);
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
    if !sql.dialect().is_postgres()
        || messages.is_empty()
        || !crate::store::bulk_pg::can_append(messages)
    {
        return Ok(None);
    }
    let identities: Vec<String> = messages
        .iter()
        .map(|m| m.identity.to_ascii_lowercase())
        .collect();
    let json = serde_json::to_string(&identities)
        .map_err(|e| crate::error::Error::storage(StorageErrorKind::Other, e.to_string()))?;
    let limit = scan_limit.max(0);
    let params = [
        session_key.into(),
        json.into(),
        limit.into(),
        advancement_key.map(str::to_owned).into(),
    ];
    let Some(row) = sql.query_row(FIND_ACTIVE_FOR_APPEND_SQL, &params)? else {
        return Ok(None);
    };
    let existing = from_row(&row)?;
    if existing.session_id != session_id {
        return Ok(None);
    }
    let host_facts_json = Some(row.opt_text(COLUMN_COUNT + 3)?);
    if row.int(COLUMN_COUNT)? != 1 {
        return Ok(Some(LockedForAppend {
            host_facts_json,
            ..LockedForAppend::unknown(existing)
        }));
    }
    let stored = row
        .opt_text(COLUMN_COUNT + 1)?
        .map(|list| list.split(',').map(str::to_owned).collect())
        .unwrap_or_default();
    let unstubbed = if limit > 0 {
        Some(crate::store::masking::scan_from_json(
            row.opt_text(COLUMN_COUNT + 2)?.as_deref(),
            limit,
        )?)
    } else {
        None
    };
    let recorded = match advancement_key {
        Some(_) => Some(row.opt_text(COLUMN_COUNT + 4)?),
        None => None,
    };
    Ok(Some(LockedForAppend {
        conversation: existing,
        stored: Some(stored),
        unstubbed,
        host_facts_json,
        recorded,
    }))
}
