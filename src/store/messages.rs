//! Messages: append-only, numbered by `seq` within their conversation, never updated or deleted.
//! A message whose content identity is already stored in the conversation is skipped, which is
//! what makes host retries and replays harmless.

use crate::core::message::{Role, StoredMessage};
use crate::error::{Error, Result};
use crate::store::conversations::{add_totals, Conversation};
use crate::store::sql::Sql;

/// What an append did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Appended {
    pub inserted: usize,
    pub skipped: usize,
}

/// Whether a message with this identity is already stored in the conversation.
pub fn exists(sql: &mut impl Sql, conversation_id: i64, identity: &str) -> Result<bool> {
    let row = sql.query_row(
        "SELECT 1 FROM messages WHERE conversation_id = ?1 AND identity_hash = ?2",
        &[conversation_id.into(), identity.into()],
    )?;
    Ok(row.is_some())
}

/// Appends the messages not yet stored, in order, and updates the conversation's totals.
/// Call inside a write transaction.
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
        sql.execute(
            "INSERT INTO messages (conversation_id, seq, role, content, token_count, identity_hash, host_timestamp, raw_json, created_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
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
            ],
        )?;
        tokens += i64::from(message.tokens);
        outcome.inserted += 1;
    }
    if outcome.inserted > 0 {
        add_totals(sql, conversation.id, outcome.inserted as i64, tokens)?;
    }
    Ok(outcome)
}

/// A stored message as the view needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct ViewMessage {
    pub seq: i64,
    pub role: Role,
    pub tokens: u32,
    pub raw_json: String,
}

/// Up to `limit` messages with `seq < before_seq`, newest first. Uses the (conversation, seq) index.
pub fn newest_before(sql: &mut impl Sql, conversation_id: i64, before_seq: i64, limit: i64) -> Result<Vec<ViewMessage>> {
    let rows = sql.query(
        "SELECT seq, role, token_count, raw_json FROM messages WHERE conversation_id = ?1 AND seq < ?2 ORDER BY seq DESC LIMIT ?3",
        &[conversation_id.into(), before_seq.into(), limit.into()],
    )?;
    rows.iter()
        .map(|row| {
            let role_name = row.text(1)?;
            let role = Role::parse(&role_name).ok_or_else(|| Error::storage(format!("stored message has unknown role {role_name:?}")))?;
            let tokens = u32::try_from(row.int(2)?).map_err(|_| Error::storage("stored token count out of range"))?;
            Ok(ViewMessage { seq: row.int(0)?, role, tokens, raw_json: row.text(3)? })
        })
        .collect()
}
