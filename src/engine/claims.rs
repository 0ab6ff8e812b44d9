//! What the engine remembers so a steady turn on PostgreSQL can claim its conversation instead
//! of reading it under the lock first (`store::claim`: two round trips a turn instead of three).
//!
//! Two pictures make a claim:
//! - after this process stored a turn: the items the stub pass will consider next time (every
//!   context item after the row's `stubbed_through`), with the row's `next_ordinal`,
//!   `context_epoch` and `stubbed_through` that fix them ([`Claims::turn_stored`]);
//! - when `assemble` then reads the row: its `xmin` and host facts ([`Claims::row_read`]). The
//!   items still hold when those three columns are as the turn left them, because every write
//!   that changes a conversation's items moves one of them (an append `next_ordinal`; a stub
//!   batch, a compaction, a repair or an import `context_epoch`; a stub pass's frontier
//!   `stubbed_through`).
//!
//! A claim is handed out once, and only while this process has committed nothing since the read
//! (its own write would have moved the row's `xmin`). Anything else — SQLite, a first turn, a
//! compaction in between, a rolled-back turn — forgets the picture, and the turn reads as before.

use std::collections::HashMap;

use crate::core::masking::ScanItem;
use crate::store::claim::{Claim, RowVersion};
use crate::store::conversations::Conversation;

/// The items after a stored turn, and the row columns that fix them.
#[derive(Debug, Clone)]
struct Stored {
    next_ordinal: i64,
    context_epoch: i64,
    stubbed_through: i64,
    items: Vec<ScanItem>,
}

impl Stored {
    fn fixes(&self, row: &Conversation) -> bool {
        (self.next_ordinal, self.context_epoch, self.stubbed_through)
            == (row.next_ordinal, row.context_epoch, row.stubbed_through)
    }
}

/// A claim ready for the conversation's next turn, valid while the store's commit count is
/// `commits`.
#[derive(Debug, Clone)]
struct Ready {
    claim: Claim,
    commits: u64,
}

/// The pictures, by conversation id.
#[derive(Debug, Default)]
pub(super) struct Claims {
    stored: HashMap<i64, Stored>,
    ready: HashMap<i64, Ready>,
}

/// Conversations remembered; beyond that the pictures start over.
const MAX_REMEMBERED: usize = 64;

impl Claims {
    /// A turn of `row`'s conversation was stored (its transaction has not committed yet: a
    /// rollback must [`Claims::clear`]), leaving `items` after the row's `stubbed_through`,
    /// oldest first, all of them.
    pub(super) fn turn_stored(&mut self, row: &Conversation, items: Vec<ScanItem>) {
        if self.stored.len() >= MAX_REMEMBERED && !self.stored.contains_key(&row.id) {
            self.clear();
        }
        self.ready.remove(&row.id);
        self.stored.insert(
            row.id,
            Stored {
                next_ordinal: row.next_ordinal,
                context_epoch: row.context_epoch,
                stubbed_through: row.stubbed_through,
                items,
            },
        );
    }

    /// Forgets the conversation's picture: its items changed in a way this process does not
    /// follow.
    pub(super) fn forget(&mut self, conversation_id: i64) {
        self.stored.remove(&conversation_id);
        self.ready.remove(&conversation_id);
    }

    /// Forgets everything (a turn rolled back).
    pub(super) fn clear(&mut self) {
        self.stored.clear();
        self.ready.clear();
    }

    /// `assemble` read `row` at `version` (None: not on PostgreSQL, or not read in one
    /// statement) when the store had committed `commits` transactions.
    pub(super) fn row_read(
        &mut self,
        row: &Conversation,
        version: Option<RowVersion>,
        commits: u64,
    ) {
        let picture = self.stored.get(&row.id).filter(|s| s.fixes(row));
        match (picture, version) {
            (Some(stored), Some(version)) => {
                let claim = Claim {
                    conversation: row.clone(),
                    version,
                    items: stored.items.clone(),
                };
                self.ready.insert(row.id, Ready { claim, commits });
            }
            _ => self.forget(row.id),
        }
    }

    /// The claim for the next turn of the active conversation of `session_key` and `session_id`,
    /// if one is ready and the store has committed nothing since (`commits`). Handed out once.
    pub(super) fn take(
        &mut self,
        session_key: &str,
        session_id: &str,
        commits: u64,
    ) -> Option<Claim> {
        let id = self
            .ready
            .iter()
            .find(|(_, r)| r.claim.conversation.session_key == session_key)
            .map(|(id, _)| *id)?;
        let ready = self.ready.remove(&id)?;
        (ready.commits == commits && ready.claim.conversation.session_id == session_id)
            .then_some(ready.claim)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: i64, next_ordinal: i64) -> Conversation {
        Conversation {
            id,
            session_key: format!("key-{id}"),
            session_id: "s".into(),
            generation: 0,
            message_count: next_ordinal,
            token_count: 10 * next_ordinal,
            next_ordinal,
            context_token_count: 10 * next_ordinal,
            context_epoch: 0,
            context_summary_tokens: 0,
            stubbed_through: 0,
            compaction_state_json: None,
            compaction_pending_json: None,
        }
    }

    fn item(ordinal: i64) -> ScanItem {
        ScanItem {
            ordinal,
            message_id: Some(ordinal),
            role: None,
            tokens: 10,
            stub: None,
            calls_tools: false,
        }
    }

    fn version(xmin: i64) -> Option<RowVersion> {
        Some(RowVersion {
            xmin,
            host_facts_json: None,
        })
    }

    #[test]
    fn a_claim_needs_a_stored_turn_and_a_read_that_agrees_with_it() {
        let mut claims = Claims::default();
        // A read without a stored turn: nothing to claim.
        claims.row_read(&row(1, 2), version(7), 0);
        assert!(claims.take("key-1", "s", 0).is_none());

        claims.turn_stored(&row(1, 2), vec![item(1), item(2)]);
        claims.row_read(&row(1, 2), version(8), 1);
        let claim = claims.take("key-1", "s", 1).expect("a claim");
        assert_eq!((claim.version.xmin, claim.items.len()), (8, 2));
        // Handed out once.
        assert!(claims.take("key-1", "s", 1).is_none());
    }

    #[test]
    fn another_writer_a_later_commit_or_another_session_id_withholds_the_claim() {
        let mut claims = Claims::default();
        claims.turn_stored(&row(1, 2), vec![item(1), item(2)]);
        // Another writer appended between the turn and the read.
        claims.row_read(&row(1, 4), version(9), 1);
        assert!(claims.take("key-1", "s", 1).is_none());

        claims.turn_stored(&row(1, 2), vec![item(2)]);
        claims.row_read(&row(1, 2), version(9), 1);
        // This process committed something after the read.
        assert!(claims.take("key-1", "s", 2).is_none());

        claims.turn_stored(&row(1, 2), vec![item(2)]);
        claims.row_read(&row(1, 2), version(9), 1);
        assert!(claims.take("key-1", "rotated", 1).is_none());

        claims.turn_stored(&row(1, 2), vec![item(2)]);
        claims.row_read(&row(1, 2), None, 1);
        assert!(
            claims.take("key-1", "s", 1).is_none(),
            "no version read: no claim"
        );

        claims.turn_stored(&row(1, 2), vec![item(2)]);
        claims.clear();
        claims.row_read(&row(1, 2), version(9), 1);
        assert!(
            claims.take("key-1", "s", 1).is_none(),
            "a rolled-back turn forgets"
        );
    }
}
