//! The files each tool output's call touched ([`crate::core::masking::touch`]), for the working
//! set, kept per conversation by the output's context ordinal (ordinals never change: a summary
//! takes its range's first ordinal, and nothing is renumbered).
//!
//! A turn's own outputs are classified from the messages the engine just parsed (their calls are
//! in the same turn): no read. Outputs not known here (a call made in an earlier turn, a process
//! that started after they were stored) are classified once from the store: their call ids from
//! `message_parts`, the calls from the assistant messages that make them. Entries older than
//! the oldest item a pass scans are dropped, so the cache holds at most one scan's outputs.
//!
//! Must not: decide anything (the rules are `core::masking::workset`'s).

use std::collections::HashMap;

use serde_json::Value;

use crate::core::masking::{touches, ScanItem, Touch};
use crate::core::message::{PartKind, Role, StoredMessage};
use crate::error::Result;
use crate::store::masking as store;
use crate::store::Sql;

/// Touches by conversation, then by the output's ordinal (an empty list: the call touches no
/// file, or is not known).
#[derive(Debug, Default)]
pub(crate) struct TouchCache {
    by_conversation: HashMap<i64, HashMap<i64, Vec<Touch>>>,
}

/// The touches of the call whose part text is `[tool call NAME ARGS]`.
fn touches_of_part(name: &str, text: &str) -> Vec<Touch> {
    let args = text
        .strip_prefix("[tool call ")
        .and_then(|t| t.strip_prefix(name))
        .and_then(|t| t.strip_suffix(']'))
        .map(str::trim)
        .and_then(|a| serde_json::from_str::<Value>(a).ok())
        .unwrap_or(Value::Null);
    touches(name, &args)
}

impl TouchCache {
    /// Classifies the outputs of a turn's messages, stored at ordinals `first_ordinal` on.
    pub(crate) fn record_turn(
        &mut self,
        conversation_id: i64,
        first_ordinal: i64,
        parsed: &[StoredMessage],
    ) {
        let calls: HashMap<&str, (&str, &str)> = parsed
            .iter()
            .filter(|m| m.role == Role::Assistant)
            .flat_map(|m| m.parts.iter())
            .filter(|p| p.kind == PartKind::ToolCall)
            .filter_map(|p| {
                Some((
                    p.tool_call_id.as_deref()?,
                    (p.tool_name.as_deref()?, p.text.as_str()),
                ))
            })
            .collect();
        let known = self.by_conversation.entry(conversation_id).or_default();
        for (ordinal, m) in (first_ordinal..).zip(parsed) {
            if m.role != Role::ToolResult {
                continue;
            }
            let call = m.tool_call_id.as_deref().and_then(|id| calls.get(id));
            if let Some((name, text)) = call {
                known.insert(ordinal, touches_of_part(name, text));
            }
        }
    }

    /// The touches of the tool outputs among `items` (oldest first), read from the store for
    /// those not known yet; forgets the outputs older than `items`.
    pub(crate) fn for_items(
        &mut self,
        sql: &mut impl Sql,
        conversation_id: i64,
        items: &[ScanItem],
    ) -> Result<&HashMap<i64, Vec<Touch>>> {
        let known = self.by_conversation.entry(conversation_id).or_default();
        if let Some(oldest) = items.first().map(|i| i.ordinal) {
            known.retain(|ordinal, _| *ordinal >= oldest);
        }
        let missing: Vec<(i64, i64)> = items
            .iter()
            .filter(|i| i.role == Some(Role::ToolResult) && !known.contains_key(&i.ordinal))
            .filter_map(|i| Some((i.message_id.filter(|id| *id > 0)?, i.ordinal)))
            .collect();
        if !missing.is_empty() {
            let ids: Vec<i64> = missing.iter().map(|(id, _)| *id).collect();
            let call_ids = store::result_call_ids(sql, &ids)?;
            let wanted: Vec<String> = call_ids.values().cloned().collect();
            let raw = if wanted.is_empty() {
                HashMap::new()
            } else {
                store::load_calls(sql, conversation_id, &wanted)?
            };
            for (id, ordinal) in missing {
                let found = call_ids.get(&id).and_then(|call| {
                    let value: Value = serde_json::from_str(raw.get(call)?).ok()?;
                    let block = value["content"].as_array()?.iter().find(|b| {
                        b["type"] == "toolCall" && b["id"].as_str() == Some(call.as_str())
                    })?;
                    Some(touches(
                        block["name"].as_str().unwrap_or_default(),
                        &block["arguments"],
                    ))
                });
                known.insert(ordinal, found.unwrap_or_default());
            }
        }
        Ok(known)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::masking::touch::Op;
    use crate::core::message::parse_messages;
    use serde_json::json;

    #[test]
    fn a_turns_outputs_are_classified_from_its_own_calls() {
        let parsed = parse_messages(
            &[
                json!({"role": "user", "content": "fix it", "timestamp": 1}),
                json!({"role": "assistant", "content": [{"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "src/a.rs"}}, {"type": "toolCall", "id": "c2", "name": "bash", "arguments": {"command": "cargo test"}}], "timestamp": 2}),
                json!({"role": "toolResult", "toolCallId": "c1", "toolName": "read", "content": [{"type": "text", "text": "fn a() {}"}], "timestamp": 3}),
                json!({"role": "toolResult", "toolCallId": "c2", "toolName": "bash", "content": [{"type": "text", "text": "ok"}], "timestamp": 4}),
            ],
            0,
        )
        .unwrap();
        let mut cache = TouchCache::default();
        cache.record_turn(7, 10, &parsed);
        let known = &cache.by_conversation[&7];
        assert_eq!(
            known[&12],
            vec![Touch {
                path: "src/a.rs".into(),
                op: Op::Read { part: None }
            }]
        );
        assert_eq!(known[&13], vec![], "a test run touches no file");
        assert!(!known.contains_key(&11), "only outputs are classified");
    }
}
