//! The context items a turn's stub pass looks at, known without reading them after the append
//! (PostgreSQL: that read was a round trip between the append and `COMMIT`). They are the items
//! after the conversation's `stubbed_through` as the statement that locked its row returned them
//! (`lock_before_append::resolve_for_append`, only when it could tell they are current), followed by
//! the items of the messages the turn just appended, which the engine holds.
//!
//! What the turn's own items lack is their message ids: PostgreSQL's append does not read them
//! back (`store::bulk_pg`). They carry a stand-in, which planning only needs to be present (an
//! item without a message id is a summary); before a batch renders stubs from message ids, the
//! pass reads the items from the store instead ([`TurnItems::has_stand_ins`]).
//!
//! Must not: stand for the store after an append that skipped a message (which messages got
//! items is then not known here), nor outside the transaction that holds the conversation.

use crate::core::masking::ScanItem;
use crate::core::message::{Role, StoredMessage};
use crate::store::conversations::Conversation;
use crate::store::messages::{linked_parts, Appended};

use super::MAX_SCAN;

/// The items `store::masking::scan(…, stubbed_through, MAX_SCAN)` returns after the append.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TurnItems {
    /// Oldest first; the turn's own items last.
    pub items: Vec<ScanItem>,
    /// Whether older items after the frontier were left out.
    pub truncated: bool,
    /// How many of the newest items are the turn's own, with stand-in message ids.
    pub own: usize,
}

impl TurnItems {
    /// How many of the items from before the append the lock statement returns for a turn of
    /// `messages` messages: the scan's page less the turn's own items (0: none, the pass reads).
    pub(crate) fn lock_limit(messages: usize) -> i64 {
        MAX_SCAN
            .saturating_sub(i64::try_from(messages).unwrap_or(i64::MAX))
            .max(0)
    }

    /// The items after appending `parsed` (the turn's messages, all of them stored: `appended`),
    /// from the items before it (`before`, as the lock statement returned them with
    /// [`TurnItems::lock_limit`]) and the conversation as the append left it. None when the
    /// append skipped a message or the lock returned no items.
    pub(crate) fn after_append(
        before: (Vec<ScanItem>, bool),
        after: &Conversation,
        parsed: &[StoredMessage],
        appended: &Appended,
    ) -> Option<TurnItems> {
        let n = parsed.len();
        if appended.skipped != 0 || appended.inserted != n || TurnItems::lock_limit(n) == 0 {
            return None;
        }
        let (mut items, truncated) = before;
        let first = after.next_ordinal - i64::try_from(n).ok()? + 1;
        items.extend(parsed.iter().zip(first..).map(|(m, ordinal)| ScanItem {
            ordinal,
            message_id: Some(STAND_IN_MESSAGE_ID),
            role: Some(m.role),
            tokens: m.tokens,
            stub: None,
            calls_tools: m.role == Role::Assistant
                && linked_parts(m).any(|p| p.kind == "tool_call"),
        }));
        Some(TurnItems {
            items,
            truncated,
            own: n,
        })
    }

    /// Whether any item carries a stand-in message id.
    pub(crate) fn has_stand_ins(&self) -> bool {
        self.own > 0
    }
}

/// The message id the turn's own items carry: no stored message has it (ids start at 1).
const STAND_IN_MESSAGE_ID: i64 = 0;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::message::parse_messages;
    use serde_json::json;

    fn conversation(next_ordinal: i64) -> Conversation {
        Conversation {
            id: 1,
            session_key: "k".into(),
            session_id: "s".into(),
            generation: 1,
            message_count: next_ordinal,
            token_count: 0,
            next_ordinal,
            context_token_count: 0,
            context_epoch: 0,
            context_summary_tokens: 0,
            stubbed_through: 0,
            compaction_state_json: None,
            compaction_pending_json: None,
        }
    }

    fn stored(ordinal: i64, role: Role) -> ScanItem {
        ScanItem {
            ordinal,
            message_id: Some(100 + ordinal),
            role: Some(role),
            tokens: 10,
            stub: None,
            calls_tools: false,
        }
    }

    #[test]
    fn the_turns_own_messages_follow_the_locked_items_with_their_ordinals_roles_and_tool_calls() {
        let parsed = parse_messages(
            &[
                json!({"role": "user", "content": "run it", "timestamp": 1}),
                json!({"role": "assistant", "content": [{"type": "toolCall", "id": "c1", "name": "bash", "arguments": {}}], "timestamp": 2}),
                json!({"role": "toolResult", "toolCallId": "c1", "toolName": "bash", "content": [{"type": "text", "text": "ok"}], "timestamp": 3}),
            ],
            0,
        )
        .unwrap();
        let appended = Appended {
            inserted: 3,
            skipped: 0,
            tokens: 0,
        };
        let before = (
            vec![stored(7, Role::User), stored(8, Role::Assistant)],
            false,
        );
        let turn = TurnItems::after_append(before, &conversation(11), &parsed, &appended).unwrap();
        let ordinals: Vec<i64> = turn.items.iter().map(|i| i.ordinal).collect();
        assert_eq!(ordinals, [7, 8, 9, 10, 11]);
        assert_eq!(turn.items[2].role, Some(Role::User));
        assert!(turn.items[3].calls_tools && !turn.items[4].calls_tools);
        assert_eq!(turn.items[4].tokens, parsed[2].tokens);
        assert!(turn.items[2..]
            .iter()
            .all(|i| i.message_id == Some(STAND_IN_MESSAGE_ID) && i.stub.is_none()));
        assert_eq!((turn.own, turn.truncated), (3, false));
    }

    #[test]
    fn an_append_that_skipped_a_message_or_fills_the_page_is_left_to_the_read() {
        let parsed = parse_messages(
            &[json!({"role": "user", "content": "hi", "timestamp": 1})],
            0,
        )
        .unwrap();
        let skipped = Appended {
            inserted: 0,
            skipped: 1,
            tokens: 0,
        };
        assert_eq!(
            TurnItems::after_append((vec![], false), &conversation(3), &parsed, &skipped),
            None
        );
        assert_eq!(TurnItems::lock_limit(MAX_SCAN as usize), 0);
        assert_eq!(TurnItems::lock_limit(2), MAX_SCAN - 2);
    }
}
