//! Appending many messages at once (a bootstrap chunk, a large ingest batch): the same rows as
//! [`crate::store::messages::append`] writes one statement per row, written with one statement per
//! table. Each statement takes its rows as one JSON array and reads them with `json_each`, so the
//! per-row work happens inside SQLite instead of in a round trip from wasm to the database
//! driver for every row, value by value.
//!
//! The outcome is the same as appending one by one: messages whose identity the conversation
//! already holds, or that repeat an earlier one of the batch, are skipped; the rest get the next
//! ids, `seq`s and context ordinals in order. Everything is deterministic (ids come from the
//! table's current maximum), so a journal that replays the statements rebuilds the same rows.

use std::collections::HashSet;

use serde::Serialize;

use crate::core::message::StoredMessage;
use crate::error::{Error, Result, StorageErrorKind};
use crate::store::conversations::{add_appended, Conversation};
use crate::store::messages::{linked_parts, Appended};
use crate::store::packed::Packed;
use crate::store::search_index;
use crate::store::sql::{Sql, SqlValue};
use crate::store::WriteTx;

use super::bulk_pg;

/// Below this many messages the row-by-row append is as fast and simpler.
pub const BULK_MIN_MESSAGES: usize = 32;

const EXISTING_SQL: &str = "SELECT lower(hex(identity_hash)) FROM messages \
     WHERE conversation_id = ?1 AND identity_hash IN (SELECT unhex(value) FROM json_each(?2))";
const NEXT_ID_SQL: &str = "SELECT COALESCE(MAX(id), 0) FROM messages";
// A batch's ids, `seq`s and ordinals are consecutive: they are counted from the first (`key` is
// the row's position in the array) instead of crossing in every row.
const MESSAGES_SQL: &str = "INSERT INTO messages (id, conversation_id, seq, role, token_count, identity_hash, host_timestamp, raw_json, created_at, host_entry_id) \
     SELECT ?5 + key, ?1, ?6 + key, value ->> 0, value ->> 1, unhex(value ->> 2), value ->> 3, CAST(substr(?4, value ->> 4, value ->> 5) AS TEXT), ?2, value ->> 6 \
     FROM json_each(?3)";
const PARTS_SQL: &str =
    "INSERT INTO message_parts (message_id, ordinal, kind, tool_call_id, tool_name) \
     SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4 FROM json_each(?1)";
const CONTEXT_SQL: &str =
    "INSERT INTO context_items (conversation_id, ordinal, message_id, token_count) \
     SELECT ?1, ?3 + key, ?4 + key, value FROM json_each(?2)";

/// Appends `messages`: row by row when they are few, else in bulk.
pub fn append_any(
    tx: &mut WriteTx<'_, impl Sql>,
    conversation: &Conversation,
    messages: &[StoredMessage],
    now_ms: i64,
) -> Result<Appended> {
    append_in_segments(tx, conversation, messages, &[messages.len()], now_ms)
}

/// [`append_any`] after [`crate::store::lock_before_append::resolve_for_append`], with what it learned about
/// the identities already stored (used on PostgreSQL; None: the append reads them).
pub fn append_resolved(
    tx: &mut WriteTx<'_, impl Sql>,
    conversation: &Conversation,
    messages: &[StoredMessage],
    stored: Option<HashSet<String>>,
    now_ms: i64,
) -> Result<Appended> {
    append_dispatched(
        tx,
        conversation,
        messages,
        stored,
        &[messages.len()],
        now_ms,
    )
}

/// [`append_any`], putting the messages in the search index in segments that end before the
/// positions `segment_ends` (ascending): one statement, hence one FTS4 segment, each (row by
/// row, each message is its own). FTS4 merges 16 segments of a level into one of the next level
/// when a flush adds the 16th, so the index's shape follows the sizes of its segments: a
/// bootstrap that writes several of the host's chunks at once still indexes them a chunk at a
/// time, as it did when it wrote each chunk alone. (Indexed a write at a time, its larger
/// segments stayed on level 0 until a `maintain`'s small flush merged them all: the per-turn p95
/// of short messages rose by ~1 ms, and the index took ~8 % more space at 10K.)
pub fn append_in_segments(
    tx: &mut WriteTx<'_, impl Sql>,
    conversation: &Conversation,
    messages: &[StoredMessage],
    segment_ends: &[usize],
    now_ms: i64,
) -> Result<Appended> {
    append_dispatched(tx, conversation, messages, None, segment_ends, now_ms)
}

/// The one place an append picks its dialect's path: PostgreSQL's is [`bulk_pg::append_any`]
/// (ids from the identity sequence, `stored` used when known); SQLite's appends row by row when
/// the messages are few, else in bulk with ids numbered from `MAX(id)` (only a single writer
/// may do that), ignoring `stored`.
fn append_dispatched(
    tx: &mut WriteTx<'_, impl Sql>,
    conversation: &Conversation,
    messages: &[StoredMessage],
    stored: Option<HashSet<String>>,
    segment_ends: &[usize],
    now_ms: i64,
) -> Result<Appended> {
    if messages.is_empty() {
        return Ok(Appended::default());
    }
    if tx.dialect().is_postgres() {
        bulk_pg::append_any(tx, conversation, messages, stored, now_ms)
    } else if messages.len() < BULK_MIN_MESSAGES {
        crate::store::messages::append(tx, conversation, messages, now_ms)
    } else {
        append_bulk(tx, conversation, messages, segment_ends, now_ms)
    }
}

/// Appends `messages` to the conversation as [`crate::store::messages::append`] does, with one
/// statement per table, indexing them for search in `segment_ends` (see [`append_in_segments`]).
fn append_bulk(
    tx: &mut WriteTx<'_, impl Sql>,
    conversation: &Conversation,
    messages: &[StoredMessage],
    segment_ends: &[usize],
    now_ms: i64,
) -> Result<Appended> {
    let identities: Vec<&str> = messages.iter().map(|m| m.identity.as_str()).collect();
    let stored: HashSet<String> = tx
        .query(
            EXISTING_SQL,
            &[
                conversation.id.into(),
                serde_json::to_string(&identities).map_err(json_err)?.into(),
            ],
        )?
        .iter()
        .map(|row| row.text(0))
        .collect::<Result<_>>()?;
    let mut seen: HashSet<&str> = HashSet::with_capacity(messages.len());
    // Each new message with its position in `messages`.
    let (positions, new): (Vec<usize>, Vec<&StoredMessage>) = messages
        .iter()
        .enumerate()
        .filter(|(_, m)| {
            !stored.contains(&m.identity.to_ascii_lowercase()) && seen.insert(m.identity.as_str())
        })
        .unzip();
    let mut outcome = Appended {
        inserted: new.len(),
        skipped: messages.len() - new.len(),
        tokens: 0,
    };
    if new.is_empty() {
        return Ok(outcome);
    }
    // Messages still waiting for the search index go in first, so this batch's rows can follow.
    search_index::catch_up(tx)?;
    let first_id = tx
        .query_row(NEXT_ID_SQL, &[])?
        .map_or(Ok(0), |r| r.int(0))?
        + 1;
    let (mut rows, mut texts, mut parts, mut tokens_of) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut raw = Packed::default();
    let mut tokens = 0i64;
    for (k, message) in new.iter().enumerate() {
        let id = first_id + k as i64;
        let (start, len) = raw.push(&message.raw_json);
        // Tuples serialize as JSON arrays, without building a `Value` per row first.
        rows.push((
            message.role.as_str(),
            message.tokens,
            message.identity.as_str(),
            message.timestamp_ms,
            start,
            len,
            message.host_entry_id.as_deref(),
        ));
        texts.push((id, message.text.as_str()));
        for part in linked_parts(message) {
            parts.push((
                id,
                part.ordinal,
                part.kind,
                part.tool_call_id,
                part.tool_name,
            ));
        }
        tokens_of.push(message.tokens);
        tokens += i64::from(message.tokens);
    }
    let first_seq = conversation.message_count + 1;
    tx.execute(
        MESSAGES_SQL,
        &[
            conversation.id.into(),
            now_ms.into(),
            to_json(&rows)?.into(),
            SqlValue::Blob(raw.bytes),
            first_id.into(),
            first_seq.into(),
        ],
    )?;
    let mut from = 0;
    // A last segment past every position takes whatever the given ends leave.
    for end in segment_ends.iter().copied().chain([usize::MAX]) {
        let to = from + positions[from..].partition_point(|&p| p < end);
        if to > from {
            search_index::index_rows(tx, &texts[from..to], texts[to - 1].0)?;
        }
        from = to;
    }
    if !parts.is_empty() {
        tx.execute(PARTS_SQL, &[to_json(&parts)?.into()])?;
    }
    let first_ordinal = conversation.next_ordinal + 1;
    tx.execute(
        CONTEXT_SQL,
        &[
            conversation.id.into(),
            to_json(&tokens_of)?.into(),
            first_ordinal.into(),
            first_id.into(),
        ],
    )?;
    outcome.tokens = tokens;
    add_appended(tx.sql(), conversation.id, outcome.inserted as i64, tokens)?;
    Ok(outcome)
}

fn to_json(rows: &[impl Serialize]) -> Result<String> {
    serde_json::to_string(rows).map_err(json_err)
}

fn json_err(err: serde_json::Error) -> Error {
    Error::storage(
        StorageErrorKind::Other,
        format!("encoding rows for a bulk insert: {err}"),
    )
}
