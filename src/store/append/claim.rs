//! The optimistic start of a turn on PostgreSQL: two round trips a steady turn instead of three.
//!
//! A turn's transaction normally starts with a statement that locks the conversation's row and
//! reads what the append and the stub pass need (`lock_before_append::lock_for_append`): one round
//! trip before the writes. When the gateway read the row in `assemble` (with its `xmin`, the
//! transaction that last updated it) and knows the items the stub pass considers from its own
//! last turn, it can skip that read: the turn *claims* the row unchanged instead. The claim is a
//! statement whose answer nobody waits for (`lossless_wasm_claim_unchanged`, PostgreSQL schema
//! version 2): it locks the row and fails the transaction with SQLSTATE [`CHANGED_SQLSTATE`]
//! unless the row is still active at the `xmin` read. The writes follow it without waiting, and
//! `COMMIT` is the turn's only wait.
//!
//! What the claim takes for granted, each checked by the server before anything is kept:
//! - the row (totals, ordinals, trigger state, host facts) is as read: the `xmin` guard, since
//!   every transaction that writes a conversation's messages, items, keys or facts updates it;
//! - none of the turn's messages is stored yet: the `UNIQUE (conversation_id, identity_hash)`
//!   index fails the transaction (SQLSTATE 23505) when one is;
//! - the advancement key is new: its primary key fails the transaction the same way.
//!
//! A failed claim costs one round trip; the engine then runs the turn the pessimistic way
//! ([`is_conflict`] says when).

use std::collections::HashSet;

use crate::core::masking::ScanItem;
use crate::core::message::StoredMessage;
use crate::error::{Error, Result, StorageErrorKind};
use crate::store::conversations::{Conversation, LockedForAppend};
use crate::store::sql::Sql;

/// The SQLSTATE the claim's guard raises when the row changed (schema version 2's function).
pub const CHANGED_SQLSTATE: &str = "LW409";

pub use crate::store::conversations::RowVersion;

/// Everything a turn would otherwise read under the row's lock, as the gateway knows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    /// The row as `assemble` read it.
    pub conversation: Conversation,
    /// The row's version as `assemble` read it; the claim writes only if it is unchanged.
    pub version: RowVersion,
    /// Every context item after the row's `stubbed_through`, oldest first, as the gateway's
    /// last turn left them (its own messages carry stand-in ids; see `TurnItems`).
    pub items: Vec<ScanItem>,
}

/// The claim's statement: its result is not read, so a driver sends it without waiting.
pub const CLAIM_SQL: &str = "SELECT lossless_wasm_claim_unchanged(?1, ?2)";

/// Starts an append to the claimed conversation (see the module doc): sends the claim and
/// returns what `lock_before_append::lock_for_append` would have read, with the items the stub pass
/// considers limited to `scan_limit` (0: none; the pass reads) and the key asked about (if any)
/// taken as not recorded.
pub fn lock_claimed(
    sql: &mut impl Sql,
    claim: Claim,
    scan_limit: i64,
    advancement_key: Option<&str>,
) -> Result<LockedForAppend> {
    // A guard, not a branch: the claim's function is PostgreSQL's (schema version 2).
    if !sql.dialect().is_postgres() {
        return Err(Error::storage(
            StorageErrorKind::Dialect,
            "an optimistic claim needs PostgreSQL",
        ));
    }
    sql.execute(
        CLAIM_SQL,
        &[claim.conversation.id.into(), claim.version.xmin.into()],
    )?;
    let unstubbed = usize::try_from(scan_limit)
        .ok()
        .filter(|&limit| limit > 0)
        .map(|limit| {
            let kept = claim.items.len().min(limit);
            (
                claim.items[claim.items.len() - kept..].to_vec(),
                kept == limit,
            )
        });
    Ok(LockedForAppend {
        conversation: claim.conversation,
        stored: Some(HashSet::new()),
        unstubbed,
        host_facts_json: Some(claim.version.host_facts_json),
        recorded: advancement_key.map(|_| None),
    })
}

/// Whether a claim can start an append of `messages`: the same messages the lock statement
/// takes (`lock_before_append::lock_for_append`), since the claim stands in for it.
pub fn may_append(messages: &[StoredMessage]) -> bool {
    !messages.is_empty() && super::bulk_pg::can_append(messages)
}

/// Whether a failed turn failed because its claim did not hold (the row changed, a message or
/// the advancement key was already stored): the turn is then run again the pessimistic way. The
/// backends keep the SQLSTATE of a server's error as the failure's code.
pub fn is_conflict(err: &Error) -> bool {
    match err {
        Error::Storage(failure) => {
            matches!(failure.code(), Some(code) if code == CHANGED_SQLSTATE || code == UNIQUE_VIOLATION)
        }
        _ => false,
    }
}

/// PostgreSQL's SQLSTATE for a unique violation.
const UNIQUE_VIOLATION: &str = "23505";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_guard_and_unique_violations_are_conflicts() {
        use crate::error::StorageError;
        let failure = |state: &str, text: &str| -> Error {
            StorageError::new(crate::store::error_codes::sqlstate_kind(state), text)
                .with_code(state)
                .into()
        };
        assert!(is_conflict(&failure(
            "LW409",
            "PostgreSQL ERROR LW409: conversation 3 changed since this gateway read it"
        )));
        assert!(is_conflict(&failure(
            "23505",
            "PostgreSQL ERROR 23505: duplicate key value violates unique constraint; raised by a statement …"
        )));
        assert!(!is_conflict(&failure(
            "40P01",
            "PostgreSQL ERROR 40P01: deadlock detected"
        )));
        assert!(!is_conflict(
            &StorageError::new(
                StorageErrorKind::Io,
                "lossless-wasm: the connection to PostgreSQL at x broke during a transaction"
            )
            .with_code("LOSSLESS_POSTGRES_BROKEN")
            .into()
        ));
        assert!(!is_conflict(&Error::unexpected_data(
            "ERROR 23505: in a stored text"
        )));
        assert!(!is_conflict(&Error::input("messages", "LW409")));
    }
}
