//! PostgreSQL's lock before an append ([`super::lock_before_append`] decides when it runs): the
//! statement that locks the session key's active conversation and reads, in the same round trip,
//! what the append, the stub pass and the advancement key's lookup would otherwise read, and the
//! reading of its answer.
//!
//! Must not: run on SQLite (`FOR UPDATE OF`, `xmin`, `string_agg`, `bytea` are PostgreSQL's).

use crate::error::{Result, StorageErrorKind};
use crate::store::conversations::{from_row, LockedForAppend, COLUMN_COUNT};
use crate::store::sql::Sql;

use super::bulk_pg;

/// PostgreSQL, before an append: `conversations_pg`'s `FIND_ACTIVE_FOR_UPDATE_SQL` that also returns which of the
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
/// same `xmin` check as the identities (see `lock_before_append::lock_for_append` for why it is sound).
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

/// The lock statement and what its answer tells (see `lock_before_append::lock_for_append`):
/// None when the caller must `resolve` (a new or rotated conversation, messages the bulk append
/// does not take).
pub(super) fn lock_for_append(
    sql: &mut impl Sql,
    session_key: &str,
    session_id: &str,
    messages: &[crate::core::message::StoredMessage],
    scan_limit: i64,
    advancement_key: Option<&str>,
) -> Result<Option<LockedForAppend>> {
    if messages.is_empty() || !bulk_pg::can_append(messages) {
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
