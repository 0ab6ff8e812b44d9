//! Messages: append-only, numbered by `seq` within their conversation, never updated or deleted.
//! A message whose content identity is already stored in the conversation is skipped, which is
//! what makes host retries and replays harmless.

use crate::core::message::{MessagePart, PartKind, Role, StoredMessage};
use crate::error::Result;
use crate::store::context;
use crate::store::conversations::{add_appended, Conversation};
use crate::store::dialect::Dialect;
use crate::store::search_index;
use crate::store::sql::{Sql, SqlValue};
use crate::store::WriteTx;

use super::messages_pg;
pub use super::messages_pg::search_text;

/// What an append did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Appended {
    /// Messages stored as new rows.
    pub inserted: usize,
    /// Messages left out because the conversation already stores their content identity.
    pub skipped: usize,
    /// The inserted messages' tokens (what the conversation's running totals grew by).
    pub tokens: i64,
}

impl Appended {
    /// `conversation` (as read before the append, in the same write transaction) after it.
    pub fn applied_to(
        &self,
        conversation: &crate::store::conversations::Conversation,
    ) -> crate::store::conversations::Conversation {
        conversation.after_append(self.inserted as i64, self.tokens)
    }
}

/// Per-turn statement: stores a message unless its identity is already in the conversation
/// (the `UNIQUE (conversation_id, identity_hash)` index decides, in the same step). Returns no
/// row for a message already stored; any other conflict (a reused `seq`) is an error.
pub const INSERT_SQL: &str = "INSERT INTO messages (conversation_id, seq, role, token_count, identity_hash, host_timestamp, raw_json, created_at, host_entry_id) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) ON CONFLICT (conversation_id, identity_hash) DO NOTHING RETURNING id";

/// Per-turn statement: one block of a new message that links it to a tool call.
pub const INSERT_PART_SQL: &str = "INSERT INTO message_parts (message_id, ordinal, kind, tool_call_id, tool_name) VALUES (?1, ?2, ?3, ?4, ?5)";

/// How an identity is stored (migration 8): the 16 bytes its 32 hex digits spell. Anything else
/// (never written by this engine) goes as text into SQLite's untyped column, and as its UTF-8
/// bytes into PostgreSQL's `bytea` (as copy-to-postgres writes it): text bound there would be
/// read as `bytea` escape syntax, so a backslash would change the key.
pub fn identity_key(identity: &str, dialect: Dialect) -> SqlValue {
    let digits = identity.as_bytes();
    let nibble = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let bytes: Option<Vec<u8>> = (digits.len() == 32)
        .then(|| {
            digits
                .chunks(2)
                .map(|pair| Some(nibble(pair[0])? << 4 | nibble(pair[1])?))
                .collect()
        })
        .flatten();
    match bytes {
        Some(bytes) => SqlValue::Blob(bytes),
        // The dialect's decision here: the column's type (`bytea` on PostgreSQL, untyped on SQLite).
        None if dialect.is_postgres() => SqlValue::Blob(digits.to_vec()),
        None => identity.into(),
    }
}

/// A `message_parts` row: a block of a message that names a tool call or a tool.
pub(crate) struct LinkedPart {
    /// The block's position in the message.
    pub ordinal: usize,
    pub kind: &'static str,
    pub tool_call_id: Option<String>,
    pub tool_name: Option<String>,
}

/// The blocks of `message` that link it to a tool call (its id, or the tool's name; a tool
/// result's blocks take the message's own). Only these get a `message_parts` row (migration 10):
/// the view pairs calls with results through them, and a plain text or reasoning block has
/// nothing to record beyond what `raw_json` holds.
pub(crate) fn linked_parts(message: &StoredMessage) -> impl Iterator<Item = LinkedPart> + '_ {
    message
        .parts
        .iter()
        .enumerate()
        .filter_map(|(ordinal, part)| {
            let tool_call_id = part
                .tool_call_id
                .clone()
                .or_else(|| message.tool_call_id.clone());
            let tool_name = part.tool_name.clone().or_else(|| message.tool_name.clone());
            (tool_call_id.is_some() || tool_name.is_some()).then(|| LinkedPart {
                ordinal,
                kind: part_kind(message.role, part),
                tool_call_id,
                tool_name,
            })
        })
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

/// Appends the messages not yet stored, in order: each gets its tool-call links and a context
/// item at the end of the active view, and the conversation's running totals grow. Their text
/// reaches the search index in batches ([`search_index`]).
pub fn append(
    tx: &mut WriteTx<'_, impl Sql>,
    conversation: &Conversation,
    messages: &[StoredMessage],
    now_ms: i64,
) -> Result<Appended> {
    let mut outcome = Appended::default();
    let mut seq = conversation.message_count;
    let mut tokens: i64 = 0;
    let mut last_id = None;
    let postgres = tx.dialect().is_postgres();
    for message in messages {
        // An array, not a Vec: the SQLite path allocates nothing more than it did.
        let params: [SqlValue; 9] = [
            conversation.id.into(),
            (seq + 1).into(),
            message.role.as_str().into(),
            message.tokens.into(),
            identity_key(&message.identity, tx.dialect()),
            message.timestamp_ms.into(),
            message.raw_json.as_str().into(),
            now_ms.into(),
            message.host_entry_id.clone().into(),
        ];
        // The dialect's decision here: PostgreSQL stores the search text with the row.
        let inserted = if postgres {
            messages_pg::insert(tx.sql(), &params, &message.text)?
        } else {
            tx.query_row(INSERT_SQL, &params)?
        };
        let Some(row) = inserted else {
            outcome.skipped += 1;
            continue;
        };
        let id = row.int(0)?;
        last_id = Some(id);
        seq += 1;
        for part in linked_parts(message) {
            tx.execute(
                INSERT_PART_SQL,
                &[
                    id.into(),
                    (part.ordinal as i64).into(),
                    part.kind.into(),
                    part.tool_call_id.into(),
                    part.tool_name.into(),
                ],
            )?;
        }
        let ordinal = conversation.next_ordinal + outcome.inserted as i64 + 1;
        context::insert_message(tx, conversation.id, ordinal, id, message.tokens)?;
        tokens += i64::from(message.tokens);
        outcome.inserted += 1;
    }
    outcome.tokens = tokens;
    if let Some(last_id) = last_id {
        add_appended(tx.sql(), conversation.id, outcome.inserted as i64, tokens)?;
        search_index::after_append(tx, last_id)?;
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identities_are_stored_as_their_sixteen_bytes_and_anything_else_as_text_or_on_postgresql_its_bytes(
    ) {
        let key = identity_key("00ff10a0000000000000000000000001", Dialect::Sqlite);
        assert_eq!(
            key,
            SqlValue::Blob(vec![
                0, 0xff, 0x10, 0xa0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1
            ])
        );
        assert_eq!(
            identity_key("00ff10a0000000000000000000000001", Dialect::Postgres),
            key,
            "hex identities are the same bytes on both"
        );
        assert_eq!(
            identity_key("h1", Dialect::Sqlite),
            SqlValue::Text("h1".into())
        );
        assert_eq!(
            identity_key("zz000000000000000000000000000000", Dialect::Sqlite),
            SqlValue::Text("zz000000000000000000000000000000".into())
        );
        // PostgreSQL: raw bytes, never text a bytea slot would read as escapes.
        assert_eq!(
            identity_key("a\\x41", Dialect::Postgres),
            SqlValue::Blob(b"a\\x41".to_vec())
        );
    }
}
