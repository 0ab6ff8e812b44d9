//! Appending many messages at once on PostgreSQL: the rows [`super::messages::append`] writes one
//! statement per row, written with one statement per table (4 round trips for a batch of any
//! size, where row by row costs one per message and one per tool-call link: an import over a
//! network would otherwise take minutes).
//!
//! Unlike SQLite's bulk path ([`super::bulk`]) no id is computed here: the messages' ids come from
//! the identity sequence (two gateways may be appending to other conversations at the same
//! moment) and are read back with their `seq`s through `RETURNING`, then used for the tool-call
//! links and the context items. The outcome is the same as appending one by one: identities the
//! conversation already holds, or that repeat an earlier one of the batch, are skipped.
//!
//! Must not: run on SQLite (its statements are PostgreSQL's), or hold any state.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use crate::core::message::StoredMessage;
use crate::error::{Error, Result};
use crate::store::conversations::{add_appended, Conversation};
use crate::store::messages::{linked_parts, search_text, Appended};
use crate::store::sql::Sql;

const EXISTING_SQL: &str = "SELECT encode(identity_hash, 'hex') FROM messages \
     WHERE conversation_id = ?1 AND identity_hash IN (SELECT decode(value, 'hex') FROM json_array_elements_text(CAST(CAST(?2 AS text) AS json)))";

const MESSAGES_SQL: &str = "INSERT INTO messages (conversation_id, seq, role, token_count, identity_hash, host_timestamp, raw_json, created_at, host_entry_id, search_text) \
     SELECT ?1, ?3 + r.k, r.role, r.tokens, decode(r.identity, 'hex'), r.ts, r.raw, ?2, r.entry, r.text \
     FROM json_to_recordset(CAST(CAST(?4 AS text) AS json)) AS r(k bigint, role text, tokens bigint, identity text, ts bigint, raw text, entry text, text text) \
     ORDER BY r.k RETURNING id, seq";

const PARTS_SQL: &str = "INSERT INTO message_parts (message_id, ordinal, kind, tool_call_id, tool_name) \
     SELECT r.m, r.o, r.kind, r.call, r.tool FROM json_to_recordset(CAST(CAST(?1 AS text) AS json)) AS r(m bigint, o bigint, kind text, call text, tool text)";

const CONTEXT_SQL: &str = "INSERT INTO context_items (conversation_id, ordinal, message_id, token_count) \
     SELECT ?1, ?2 + r.k, r.m, r.tokens FROM json_to_recordset(CAST(CAST(?3 AS text) AS json)) AS r(k bigint, m bigint, tokens bigint)";

#[derive(Serialize)]
struct MessageRow<'a> {
    k: usize,
    role: &'a str,
    tokens: u32,
    identity: &'a str,
    ts: Option<i64>,
    raw: &'a str,
    entry: Option<&'a str>,
    text: String,
}

#[derive(Serialize)]
struct PartRow {
    m: i64,
    o: usize,
    kind: &'static str,
    call: Option<String>,
    tool: Option<String>,
}

#[derive(Serialize)]
struct ContextRow {
    k: usize,
    m: i64,
    tokens: u32,
}

fn to_json(rows: &impl Serialize) -> Result<String> {
    serde_json::to_string(rows).map_err(|err| Error::storage(format!("encoding rows for a bulk insert: {err}")))
}

/// Whether every identity is one this path can send as hex (32 hex digits, as the engine writes
/// them); otherwise the caller appends row by row.
pub fn can_append(messages: &[StoredMessage]) -> bool {
    messages.iter().all(|m| m.identity.len() == 32 && m.identity.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Appends `messages` as [`super::messages::append`] does, one statement per table. Call inside
/// a write transaction that has locked the conversation (`conversations::resolve`).
pub fn append(sql: &mut impl Sql, conversation: &Conversation, messages: &[StoredMessage], now_ms: i64) -> Result<Appended> {
    let identities: Vec<String> = messages.iter().map(|m| m.identity.to_ascii_lowercase()).collect();
    let stored: HashSet<String> = sql
        .query(EXISTING_SQL, &[conversation.id.into(), to_json(&identities)?.into()])?
        .iter()
        .map(|row| row.text(0))
        .collect::<Result<_>>()?;
    let mut seen: HashSet<&str> = HashSet::with_capacity(messages.len());
    let new: Vec<&StoredMessage> = messages
        .iter()
        .zip(&identities)
        .filter(|(_, identity)| !stored.contains(identity.as_str()) && seen.insert(identity.as_str()))
        .map(|(m, _)| m)
        .collect();
    let outcome = Appended { inserted: new.len(), skipped: messages.len() - new.len() };
    if new.is_empty() {
        return Ok(outcome);
    }
    let rows: Vec<MessageRow<'_>> = new
        .iter()
        .enumerate()
        .map(|(k, m)| MessageRow {
            k,
            role: m.role.as_str(),
            tokens: m.tokens,
            identity: m.identity.as_str(),
            ts: m.timestamp_ms,
            raw: m.raw_json.as_str(),
            entry: m.host_entry_id.as_deref(),
            text: search_text(&m.text),
        })
        .collect();
    let first_seq = conversation.message_count + 1;
    let returned = sql.query(MESSAGES_SQL, &[conversation.id.into(), now_ms.into(), first_seq.into(), to_json(&rows)?.into()])?;
    let id_of_seq: HashMap<i64, i64> = returned.iter().map(|r| Ok((r.int(1)?, r.int(0)?))).collect::<Result<_>>()?;
    let ids: Vec<i64> = (0..new.len())
        .map(|k| id_of_seq.get(&(first_seq + k as i64)).copied().ok_or_else(|| Error::storage("a bulk insert returned fewer ids than it was given rows")))
        .collect::<Result<_>>()?;
    let mut parts = Vec::new();
    let mut items = Vec::with_capacity(new.len());
    let mut tokens = 0i64;
    for (k, (message, id)) in new.iter().zip(&ids).enumerate() {
        for part in linked_parts(message) {
            parts.push(PartRow { m: *id, o: part.ordinal, kind: part.kind, call: part.tool_call_id, tool: part.tool_name });
        }
        items.push(ContextRow { k, m: *id, tokens: message.tokens });
        tokens += i64::from(message.tokens);
    }
    if !parts.is_empty() {
        sql.execute(PARTS_SQL, &[to_json(&parts)?.into()])?;
    }
    sql.execute(CONTEXT_SQL, &[conversation.id.into(), (conversation.next_ordinal + 1).into(), to_json(&items)?.into()])?;
    add_appended(sql, conversation.id, outcome.inserted as i64, tokens)?;
    Ok(outcome)
}
