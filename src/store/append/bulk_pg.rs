//! Appending messages on PostgreSQL (a turn's few, or an import's many): the rows
//! [`crate::store::messages::append`] writes one statement per row, written with one statement per
//! table. Only the first, which finds the identities already stored, is read; the other three
//! return nothing, so a driver may send them without waiting (one round trip for a batch of any
//! size, where row by row costs one per message: an import over a network would otherwise take
//! minutes, and a turn waited once per message).
//!
//! Unlike SQLite's bulk path ([`crate::store::bulk`]) no id is computed here: the messages' ids come from
//! the identity sequence (two gateways may be appending to other conversations at the same
//! moment). The tool-call links and the context items find them by `seq` (`UNIQUE
//! (conversation_id, seq)`) in their own statements, so no id is read back. That is sound
//! because the caller's transaction holds the conversation's row lock: no other writer adds to
//! its messages, so the identities read first are still the stored ones and the `seq`s written
//! are the batch's. The outcome is the same as appending one by one: identities the
//! conversation already holds, or that repeat an earlier one of the batch, are skipped; a
//! conflict the first read did not foresee fails the transaction (no `ON CONFLICT` here).
//!
//! Must not: run on SQLite (its statements are PostgreSQL's), or hold any state.

use std::collections::HashSet;

use serde::Serialize;

use crate::core::message::StoredMessage;
use crate::error::{Error, Result, StorageErrorKind};
use crate::store::conversations::{add_appended, Conversation};
use crate::store::messages::{linked_parts, search_text, Appended};
use crate::store::sql::Sql;
use crate::store::WriteTx;

/// The identities go in as an array (`= ANY`), not as `IN (SELECT …)`: the planner then probes
/// the `(conversation_id, identity_hash)` index for each, where `IN` let it hash-join the
/// conversation's whole history whenever its statistics were stale (right after an import:
/// 2 ms a turn at 10,000 messages, growing with them).
const EXISTING_SQL: &str = "SELECT encode(identity_hash, 'hex') FROM messages \
     WHERE conversation_id = ?1 AND identity_hash = ANY (ARRAY(SELECT decode(value, 'hex') FROM json_array_elements_text(CAST(CAST(?2 AS text) AS json))))";

const MESSAGES_SQL: &str = "INSERT INTO messages (conversation_id, seq, role, token_count, identity_hash, host_timestamp, raw_json, created_at, host_entry_id, search_text) \
     SELECT ?1, ?3 + r.k, r.role, r.tokens, decode(r.identity, 'hex'), r.ts, r.raw, ?2, r.entry, r.text \
     FROM json_to_recordset(CAST(CAST(?4 AS text) AS json)) AS r(k bigint, role text, tokens bigint, identity text, ts bigint, raw text, entry text, text text) \
     ORDER BY r.k";

// The rows name their message by its position `k` in the batch: its `seq` is `?3 + k`. Each
// row finds its message with a subquery (one probe of `UNIQUE (conversation_id, seq)`), not a
// join: with stale statistics the planner hashed the conversation's whole history for a join
// (2–7 ms a turn at 10,000 messages). A message that is not there gives NULL, which the
// columns' NOT NULL and CHECK constraints refuse: the transaction fails instead of losing a row.
const PARTS_SQL: &str = "INSERT INTO message_parts (message_id, ordinal, kind, tool_call_id, tool_name) \
     SELECT (SELECT m.id FROM messages m WHERE m.conversation_id = ?2 AND m.seq = ?3 + r.k), r.o, r.kind, r.call, r.tool \
     FROM json_to_recordset(CAST(CAST(?1 AS text) AS json)) AS r(k bigint, o bigint, kind text, call text, tool text)";

const CONTEXT_SQL: &str = "INSERT INTO context_items (conversation_id, ordinal, message_id, token_count) \
     SELECT ?1, ?2 + r.k, (SELECT m.id FROM messages m WHERE m.conversation_id = ?1 AND m.seq = ?4 + r.k), r.tokens \
     FROM json_to_recordset(CAST(CAST(?3 AS text) AS json)) AS r(k bigint, tokens bigint) ORDER BY r.k";

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
    k: usize,
    o: usize,
    kind: &'static str,
    call: Option<String>,
    tool: Option<String>,
}

#[derive(Serialize)]
struct ContextRow {
    k: usize,
    tokens: u32,
}

fn to_json(rows: &impl Serialize) -> Result<String> {
    serde_json::to_string(rows).map_err(|err| {
        Error::storage(
            StorageErrorKind::Other,
            format!("encoding rows for a bulk insert: {err}"),
        )
    })
}

/// Whether every identity is one this path can send as hex (32 hex digits, as the engine writes
/// them); otherwise the caller appends row by row.
pub(super) fn can_append(messages: &[StoredMessage]) -> bool {
    messages
        .iter()
        .all(|m| m.identity.len() == 32 && m.identity.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// PostgreSQL's append of `messages` (not empty; see `bulk::append_in_segments`): in bulk
/// ([`append`]) when every identity is hex, else row by row ([`crate::store::messages::append`]).
/// The bulk statements wait once whatever their number, where row by row waits for each
/// message's id: so a turn's few messages go in bulk too.
pub(super) fn append_any(
    tx: &mut WriteTx<'_, impl Sql>,
    conversation: &Conversation,
    messages: &[StoredMessage],
    stored: Option<HashSet<String>>,
    now_ms: i64,
) -> Result<Appended> {
    if can_append(messages) {
        append(tx, conversation, messages, stored, now_ms)
    } else {
        crate::store::messages::append(tx, conversation, messages, now_ms)
    }
}

/// Appends `messages` as [`crate::store::messages::append`] does, one statement per table, in
/// a write transaction that has locked the conversation (`conversations::resolve`).
///
/// `stored`: which of the messages' identities (lowercase hex) the conversation holds, when the
/// caller read that under the same lock (`lock_before_append::resolve_for_append`); else read here.
fn append(
    tx: &mut WriteTx<'_, impl Sql>,
    conversation: &Conversation,
    messages: &[StoredMessage],
    stored: Option<HashSet<String>>,
    now_ms: i64,
) -> Result<Appended> {
    let identities: Vec<String> = messages
        .iter()
        .map(|m| m.identity.to_ascii_lowercase())
        .collect();
    let stored: HashSet<String> = match stored {
        Some(stored) => stored,
        None => tx
            .query(
                EXISTING_SQL,
                &[conversation.id.into(), to_json(&identities)?.into()],
            )?
            .iter()
            .map(|row| row.text(0))
            .collect::<Result<_>>()?,
    };
    let mut seen: HashSet<&str> = HashSet::with_capacity(messages.len());
    let new: Vec<&StoredMessage> = messages
        .iter()
        .zip(&identities)
        .filter(|(_, identity)| {
            !stored.contains(identity.as_str()) && seen.insert(identity.as_str())
        })
        .map(|(m, _)| m)
        .collect();
    let mut outcome = Appended {
        inserted: new.len(),
        skipped: messages.len() - new.len(),
        tokens: 0,
    };
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
    tx.execute(
        MESSAGES_SQL,
        &[
            conversation.id.into(),
            now_ms.into(),
            first_seq.into(),
            to_json(&rows)?.into(),
        ],
    )?;
    let mut parts = Vec::new();
    let mut items = Vec::with_capacity(new.len());
    let mut tokens = 0i64;
    for (k, message) in new.iter().enumerate() {
        for part in linked_parts(message) {
            parts.push(PartRow {
                k,
                o: part.ordinal,
                kind: part.kind,
                call: part.tool_call_id,
                tool: part.tool_name,
            });
        }
        items.push(ContextRow {
            k,
            tokens: message.tokens,
        });
        tokens += i64::from(message.tokens);
    }
    if !parts.is_empty() {
        tx.execute(
            PARTS_SQL,
            &[
                to_json(&parts)?.into(),
                conversation.id.into(),
                first_seq.into(),
            ],
        )?;
    }
    tx.execute(
        CONTEXT_SQL,
        &[
            conversation.id.into(),
            (conversation.next_ordinal + 1).into(),
            to_json(&items)?.into(),
            first_seq.into(),
        ],
    )?;
    outcome.tokens = tokens;
    add_appended(tx.sql(), conversation.id, outcome.inserted as i64, tokens)?;
    Ok(outcome)
}
