//! Messages: append-only, numbered by `seq` within their conversation, never updated or deleted.
//! A message whose content identity is already stored in the conversation is skipped, which is
//! what makes host retries and replays harmless.

use crate::core::message::{MessagePart, PartKind, Role, StoredMessage};
use crate::error::Result;
use crate::store::context;
use crate::store::conversations::{add_appended, Conversation};
use crate::store::sql::Sql;

/// What an append did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Appended {
    pub inserted: usize,
    pub skipped: usize,
}

/// Per-turn query (indexed by `UNIQUE (conversation_id, identity_hash)`).
pub const EXISTS_SQL: &str = "SELECT 1 FROM messages WHERE conversation_id = ?1 AND identity_hash = ?2";

/// Whether a message with this identity is already stored in the conversation.
pub fn exists(sql: &mut impl Sql, conversation_id: i64, identity: &str) -> Result<bool> {
    let row = sql.query_row(EXISTS_SQL, &[conversation_id.into(), identity.into()])?;
    Ok(row.is_some())
}

fn part_kind(role: Role, part: &MessagePart) -> &'static str {
    match (role, part.kind) {
        (Role::ToolResult, PartKind::Text) => "tool_result",
        (_, PartKind::Text) => "text",
        (_, PartKind::Reasoning) => "reasoning",
        (_, PartKind::ToolCall) => "tool_call",
        (_, PartKind::Image) => "image",
        (_, PartKind::File) => "file",
    }
}

/// Appends the messages not yet stored, in order: each gets its parts and a context item at the
/// end of the active view, and the conversation's running totals grow. Call inside a write
/// transaction.
pub fn append(sql: &mut impl Sql, conversation: &Conversation, messages: &[StoredMessage], now_ms: i64) -> Result<Appended> {
    let mut outcome = Appended::default();
    let mut seq = conversation.message_count;
    let mut tokens: i64 = 0;
    for message in messages {
        if exists(sql, conversation.id, &message.identity)? {
            outcome.skipped += 1;
            continue;
        }
        seq += 1;
        let inserted = sql.query_row(
            "INSERT INTO messages (conversation_id, seq, role, content, token_count, identity_hash, host_timestamp, raw_json, created_at, host_entry_id) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) RETURNING id",
            &[
                conversation.id.into(),
                seq.into(),
                message.role.as_str().into(),
                message.text.as_str().into(),
                message.tokens.into(),
                message.identity.as_str().into(),
                message.timestamp_ms.into(),
                message.raw_json.as_str().into(),
                now_ms.into(),
                message.host_entry_id.clone().into(),
            ],
        )?;
        let id = match inserted {
            Some(row) => row.int(0)?,
            None => return Err(crate::error::Error::storage("inserting a message returned no id")),
        };
        for (ordinal, part) in message.parts.iter().enumerate() {
            sql.execute(
                "INSERT INTO message_parts (message_id, ordinal, kind, tool_call_id, tool_name) VALUES (?1, ?2, ?3, ?4, ?5)",
                &[id.into(), (ordinal as i64).into(), part_kind(message.role, part).into(), part.tool_call_id.clone().or_else(|| message.tool_call_id.clone()).into(), part.tool_name.clone().or_else(|| message.tool_name.clone()).into()],
            )?;
        }
        let ordinal = conversation.next_ordinal + outcome.inserted as i64 + 1;
        context::insert_message(sql, conversation.id, ordinal, id, message.tokens)?;
        tokens += i64::from(message.tokens);
        outcome.inserted += 1;
    }
    if outcome.inserted > 0 {
        add_appended(sql, conversation.id, outcome.inserted as i64, tokens)?;
    }
    Ok(outcome)
}
