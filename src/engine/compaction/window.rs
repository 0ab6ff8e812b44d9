//! What a compaction pass reads of a long context. Planning needs the oldest part (summaries,
//! then the raw messages the next chunk comes from) and the newest part (the fresh tail), never
//! the middle; reading every item made each pass cost time proportional to the whole context —
//! seconds per pass while a 100,000-message import was being compacted, a stall on every turn.
//!
//! So a context larger than [`WHOLE_CONTEXT_ITEMS`] is read as a head and a tail: the head runs
//! from the oldest item until it holds several chunks' worth of raw messages
//! ([`HEAD_CHUNKS`] × the chunk size), which no chunk can outgrow (a chunk stops at its budget
//! plus one message), and the tail holds more than the fresh-tail rule can keep. Summaries come
//! before raw messages in a context (a compaction replaces the oldest raw run), so the head holds
//! them all. Smaller contexts are read whole, exactly as before.

use crate::core::compaction::{ContextItem, ItemKind, TailRule};
use crate::error::Result;
use crate::store::compaction::{self as store, ItemPage};
use crate::store::Sql;

/// Contexts up to this many items are read whole.
pub(super) const WHOLE_CONTEXT_ITEMS: i64 = 4096;
/// The head holds at least this many chunks' worth of raw message tokens.
const HEAD_CHUNKS: u64 = 4;
/// Items read per page of the head.
const PAGE: i64 = 512;

/// The items a pass plans from, in context order.
pub(super) struct Planning {
    pub items: Vec<ContextItem>,
    /// When the middle of the context was left out: the ordinal of the head's last item. A plan
    /// whose range reaches past it would span items it never saw, so the caller must plan again
    /// from the whole context ([`Planning::crosses_gap`]).
    pub gap_after: Option<i64>,
}

impl Planning {
    /// Whether the ordinal range `first..=last` spans the part that was not read.
    pub(super) fn crosses_gap(&self, first: i64, last: i64) -> bool {
        self.gap_after.is_some_and(|g| first <= g && last > g)
    }
}

/// The whole context.
pub(super) fn whole(sql: &mut impl Sql, conversation_id: i64) -> Result<Planning> {
    Ok(Planning {
        items: store::load_items(sql, conversation_id)?,
        gap_after: None,
    })
}

/// The whole context when it is small, else its head and tail (no item twice).
pub(super) fn planning_items(
    sql: &mut impl Sql,
    conversation_id: i64,
    tail: TailRule,
    chunk_tokens: u32,
) -> Result<Planning> {
    let count = store::count_items(sql, conversation_id)?;
    if count <= WHOLE_CONTEXT_ITEMS {
        return whole(sql, conversation_id);
    }
    let wanted = u64::from(chunk_tokens.max(1)) * HEAD_CHUNKS;
    let mut head: Vec<ContextItem> = Vec::new();
    let mut raw_tokens = 0u64;
    loop {
        let after = head.last().map_or(i64::MIN, |i| i.ordinal);
        let page = store::load_item_page(
            sql,
            conversation_id,
            ItemPage::After {
                ordinal: after,
                limit: PAGE,
            },
        )?;
        let full = page.len() as i64 == PAGE;
        for item in page {
            if matches!(item.kind, ItemKind::Message { .. }) {
                raw_tokens += u64::from(item.tokens);
            }
            head.push(item);
        }
        if !full || raw_tokens >= wanted {
            break;
        }
    }
    let tail_items = i64::from(tail.count).saturating_mul(2).saturating_add(256);
    let newest =
        store::load_item_page(sql, conversation_id, ItemPage::Newest { limit: tail_items })?;
    let head_end = head.last().map_or(i64::MIN, |i| i.ordinal);
    head.extend(newest.into_iter().filter(|i| i.ordinal > head_end));
    // Nothing was left out when the two parts meet (every item was read).
    let gap_after = ((head.len() as i64) < count).then_some(head_end);
    Ok(Planning {
        items: head,
        gap_after,
    })
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::core::compaction::{plan_condensation, select_leaf_chunk, CondenseRules};
    use crate::core::config::Config;
    use crate::engine::{decode, Engine};
    use crate::store::native::NativeSql;
    use serde_json::json;

    /// A context of `turns` tool-loop turns (call, result, answer), bootstrapped in one go.
    fn engine(turns: usize) -> Engine<NativeSql> {
        let mut e = Engine::open(NativeSql::in_memory().unwrap(), Config::default(), 0).unwrap();
        let mut messages = Vec::new();
        for t in 0..turns {
            let ts = t as i64 * 10;
            messages
                .push(json!({"role": "user", "content": format!("request {t}"), "timestamp": ts}));
            messages.push(json!({"role": "assistant", "content": [{"type": "toolCall", "id": format!("c{t}"), "name": "read", "arguments": {}}], "timestamp": ts + 1}));
            messages.push(json!({"role": "toolResult", "toolCallId": format!("c{t}"), "content": [{"type": "text", "text": "x ".repeat(40)}], "timestamp": ts + 2}));
            messages.push(json!({"role": "assistant", "content": [{"type": "text", "text": format!("done {t}")}], "timestamp": ts + 3}));
        }
        e.bootstrap(
            decode(
                "bootstrap",
                json!({"sessionId": "s", "sessionKey": "k", "messages": messages}),
            )
            .unwrap(),
            1,
        )
        .unwrap();
        e
    }

    #[test]
    fn a_long_context_is_read_as_head_and_tail_and_plans_the_same_chunk() {
        let mut e = engine(2_000);
        let tail = TailRule {
            count: 32,
            max_tokens: 20_000,
        };
        let window = planning_items(e.sql(), 1, tail, 2_000).unwrap();
        let whole = whole(e.sql(), 1).unwrap();
        assert_eq!(whole.items.len(), 8_000);
        assert!(
            window.items.len() < 2_000,
            "read {} items",
            window.items.len()
        );
        assert!(window.gap_after.is_some());
        let a = select_leaf_chunk(&window.items, tail, 2_000).unwrap();
        let b = select_leaf_chunk(&whole.items, tail, 2_000).unwrap();
        assert_eq!(a, b);
        assert!(!window.crosses_gap(a.first_ordinal, a.last_ordinal));
        // The newest items are the same: the fresh tail is computed from them.
        assert_eq!(window.items.last(), whole.items.last());
        let rules = CondenseRules::from_config(&Config::default().compaction);
        assert_eq!(
            plan_condensation(&window.items, tail, &rules),
            plan_condensation(&whole.items, tail, &rules)
        );
    }

    #[test]
    fn a_chunk_reaching_past_the_head_is_reported_as_crossing() {
        let mut e = engine(2_000);
        let tail = TailRule {
            count: 32,
            max_tokens: 20_000,
        };
        let window = planning_items(e.sql(), 1, tail, 2_000).unwrap();
        let gap = window.gap_after.unwrap();
        assert!(window.crosses_gap(gap - 1, gap + 1));
        assert!(!window.crosses_gap(gap + 1, gap + 5));
        assert!(!window.crosses_gap(1, gap));
    }

    #[test]
    fn a_small_context_is_read_whole() {
        let mut e = engine(100);
        let window = planning_items(
            e.sql(),
            1,
            TailRule {
                count: 32,
                max_tokens: 20_000,
            },
            2_000,
        )
        .unwrap();
        assert_eq!(window.items.len(), 400);
        assert_eq!(window.gap_after, None);
    }
}
