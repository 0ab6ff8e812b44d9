//! The semantic index (migration 16; PostgreSQL 3): one vector per message and per summary,
//! stored as a BLOB of four bits per component (`core::embed::packing`), with the conversation
//! it belongs to, and the embedder and format that made them recorded once (`vector_space`: name
//! and format, dimension, and the backfill's position). The engine embeds
//! (`engine/semantic.rs`); this module only stores and reads.
//!
//! Rules: vectors of two embedders never mix — [`adopt`] drops every vector when the recorded
//! embedder differs, and the backfill makes them again; a read names the conversations it may
//! see (the caller's reach), never all of them; vectors are only added (a redone summary's is
//! replaced, a repaired summary's removed until the backfill embeds it again).

use crate::core::embed::packing;
use crate::core::message::text_of_raw_json;
use crate::error::{Error, Result, StorageErrorKind};
use crate::store::sql::{Row, Sql, SqlValue};
use crate::store::WriteTx;

use super::vectors_pg;

/// What a vector belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Owner {
    /// A message (`message_vectors`).
    Message,
    /// A summary (`summary_vectors`).
    Summary,
}

impl Owner {
    fn table(self) -> &'static str {
        match self {
            Owner::Message => "message_vectors",
            Owner::Summary => "summary_vectors",
        }
    }

    fn id_column(self) -> &'static str {
        match self {
            Owner::Message => "message_id",
            Owner::Summary => "summary_id",
        }
    }
}

/// The recorded embedder and the backfill's position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Space {
    /// Name of the embedder that made the stored vectors.
    pub embedder: String,
    /// The embedder's dimension: components per vector.
    pub dim: i64,
    /// Every message with an id at or below this has been considered by the backfill.
    pub backfilled_through: i64,
}

/// A stored vector with what a recall needs to filter it.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredVector {
    /// The owner's row id in `messages` or `summaries`.
    pub id: i64,
    /// The conversation it belongs to, a row id in `conversations`.
    pub conversation_id: i64,
    /// When it happened (a message's time, a summary's latest covered time), ms since the epoch.
    pub at: i64,
    /// The vector as stored: four bits a component ([`packing`]).
    pub vector: Vec<u8>,
}

const SPACE_SQL: &str = "SELECT embedder, dim, backfilled_through FROM vector_space WHERE id = 1";
/// Per-turn statement: reads the turn's few vectors from the JSON parameter and finds each
/// message by its `(conversation_id, seq)` key, one index lookup each (written as a join,
/// SQLite's planner may drive it from `messages` and scan the conversation: 0.5 s at 100K).
pub const PUT_BY_SEQ_SQL: &str = "INSERT INTO message_vectors (message_id, conversation_id, vector) \
     SELECT id, ?1, vector FROM (SELECT (SELECT m.id FROM messages m WHERE m.conversation_id = ?1 AND m.seq = CAST(v.value ->> 0 AS INTEGER)) AS id, \
     unhex(v.value ->> 1) AS vector FROM json_each(?2) AS v) WHERE id IS NOT NULL ON CONFLICT (message_id) DO NOTHING";
const PUT_MESSAGES_SQL: &str = "INSERT INTO message_vectors (message_id, conversation_id, vector) \
     SELECT value ->> 0, value ->> 1, unhex(value ->> 2) FROM json_each(?1) \
     WHERE true ON CONFLICT (message_id) DO NOTHING";
const PUT_SUMMARIES_SQL: &str = "INSERT INTO summary_vectors (summary_id, conversation_id, vector) \
     SELECT value ->> 0, value ->> 1, unhex(value ->> 2) FROM json_each(?1) \
     WHERE true ON CONFLICT (summary_id) DO UPDATE SET vector = excluded.vector, conversation_id = excluded.conversation_id";
const WAITING_MESSAGES_SQL: &str = "SELECT m.id, m.conversation_id, m.raw_json FROM messages m \
     WHERE m.id > ?1 AND m.id <= ?2 AND NOT EXISTS (SELECT 1 FROM message_vectors v WHERE v.message_id = m.id) \
     ORDER BY m.id LIMIT ?3";
const WAITING_SUMMARIES_SQL: &str = "SELECT s.id, s.conversation_id, s.content FROM summaries s \
     WHERE NOT EXISTS (SELECT 1 FROM summary_vectors v WHERE v.summary_id = s.id) ORDER BY s.id LIMIT ?1";

/// The name a space is recorded under: the embedder's and the stored format's, so that a change
/// of either makes the vectors again.
pub fn space_name(embedder: &str) -> String {
    format!("{embedder}/{}", packing::FORMAT)
}

/// A vector in the stored format, as the hex the statements decode.
fn packed_hex(vector: &[i8]) -> String {
    hex(&packing::pack(vector))
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let b = *b;
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 15)] as char);
    }
    out
}

/// Column `i` of `row`, a stored vector of `dim` components, checked for its size.
fn blob(row: &Row, i: usize, dim: usize) -> Result<Vec<u8>> {
    match row.0.get(i) {
        Some(SqlValue::Blob(bytes)) if bytes.len() == dim.div_ceil(2) => Ok(bytes.clone()),
        Some(SqlValue::Blob(bytes)) => Err(Error::unexpected_data(format!(
            "a stored vector of {} bytes, not the {} that {dim} components pack to",
            bytes.len(),
            dim.div_ceil(2)
        ))),
        other => Err(Error::unexpected_data(format!(
            "column {i}: expected a vector's bytes, found {other:?}"
        ))),
    }
}

fn json(rows: &[serde_json::Value]) -> Result<SqlValue> {
    serde_json::to_string(rows)
        .map(SqlValue::Text)
        .map_err(|err| Error::storage(StorageErrorKind::Other, format!("encoding vectors: {err}")))
}

/// The recorded embedder, if any vectors were ever made.
pub fn space(sql: &mut impl Sql) -> Result<Option<Space>> {
    sql.query_row(SPACE_SQL, &[])?
        .map(|row| {
            Ok(Space {
                embedder: row.text(0)?,
                dim: row.int(1)?,
                backfilled_through: row.int(2)?,
            })
        })
        .transpose()
}

/// Makes `embedder` (of `dim` components) the store's vector space. When another one was
/// recorded, every vector is dropped and the backfill starts over, so the index is rebuilt in
/// the new space instead of mixing two. Returns whether it dropped vectors.
pub fn adopt(tx: &mut WriteTx<'_, impl Sql>, embedder: &str, dim: usize) -> Result<bool> {
    let dim = dim as i64;
    match space(tx.sql())? {
        Some(s) if s.embedder == embedder && s.dim == dim => Ok(false),
        Some(_) => {
            tx.execute("DELETE FROM message_vectors", &[])?;
            tx.execute("DELETE FROM summary_vectors", &[])?;
            tx.execute(
                "UPDATE vector_space SET embedder = ?1, dim = ?2, backfilled_through = 0 WHERE id = 1",
                &[embedder.into(), dim.into()],
            )?;
            Ok(true)
        }
        None => {
            // Two gateways opening a new PostgreSQL store at once both read no space: the second
            // insert waits for the first and then does nothing, and the space is adopted again
            // against what is recorded now (the same embedder: nothing to do).
            tx.execute(
                "INSERT INTO vector_space (id, embedder, dim, backfilled_through) VALUES (1, ?1, ?2, 0) \
                 ON CONFLICT (id) DO NOTHING",
                &[embedder.into(), dim.into()],
            )?;
            match space(tx.sql())? {
                Some(s) if s.embedder == embedder && s.dim == dim => Ok(false),
                Some(_) => adopt(tx, embedder, dim as usize),
                None => Err(crate::error::Error::unexpected_data(
                    "vector_space: the space just recorded cannot be read back",
                )),
            }
        }
    }
}

/// Stores the vectors of messages an append just stored in `conversation_id`, by their `seq`
/// (one statement: on PostgreSQL it waits for nothing), in the append's transaction.
pub fn put_by_seq(
    tx: &mut WriteTx<'_, impl Sql>,
    conversation_id: i64,
    rows: &[(i64, Vec<i8>)],
) -> Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let items: Vec<serde_json::Value> = rows
        .iter()
        .map(|(seq, v)| serde_json::json!([seq, packed_hex(v)]))
        .collect();
    let statement = put_statement(tx.sql(), None);
    tx.execute(statement, &[conversation_id.into(), json(&items)?])
}

/// Stores vectors by owner id: `(id, conversation, vector)`. A summary's replaces its older one;
/// a message's, once stored, stays.
pub fn put(sql: &mut impl Sql, owner: Owner, rows: &[(i64, i64, Vec<i8>)]) -> Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let items: Vec<serde_json::Value> = rows
        .iter()
        .map(|(id, conversation, v)| serde_json::json!([id, conversation, packed_hex(v)]))
        .collect();
    let statement = put_statement(sql, Some(owner));
    sql.execute(statement, &[json(&items)?])
}

/// The statement that stores vectors of `owner` (None: of a turn's messages, by their `seq`),
/// in the connection's dialect: the module's one decision on it (PostgreSQL's are `vectors_pg`).
fn put_statement(sql: &impl Sql, owner: Option<Owner>) -> &'static str {
    let postgres = sql.dialect().is_postgres();
    match (owner, postgres) {
        (None, false) => PUT_BY_SEQ_SQL,
        (None, true) => vectors_pg::PUT_BY_SEQ_SQL,
        (Some(Owner::Message), false) => PUT_MESSAGES_SQL,
        (Some(Owner::Message), true) => vectors_pg::PUT_MESSAGES_SQL,
        (Some(Owner::Summary), false) => PUT_SUMMARIES_SQL,
        (Some(Owner::Summary), true) => vectors_pg::PUT_SUMMARIES_SQL,
    }
}

/// Drops a summary's vector (its text changed; the backfill embeds it again).
pub fn forget_summary(sql: &mut impl Sql, summary_id: i64) -> Result<()> {
    sql.execute(
        "DELETE FROM summary_vectors WHERE summary_id = ?1",
        &[summary_id.into()],
    )
}

/// A message the backfill embeds: its id, its conversation and its text.
pub type WaitingMessage = (i64, i64, String);

/// Messages the backfill should embed next: up to `limit` without a vector, after the recorded
/// position; and the position to record once they are stored.
pub fn waiting_messages(sql: &mut impl Sql, limit: usize) -> Result<(Vec<WaitingMessage>, i64)> {
    let through = space(sql)?.map_or(0, |s| s.backfilled_through);
    let last = sql
        .query_row("SELECT COALESCE(MAX(id), 0) FROM messages", &[])?
        .map_or(Ok(0), |r| r.int(0))?;
    let rows = sql.query(
        WAITING_MESSAGES_SQL,
        &[through.into(), last.into(), (limit as i64).into()],
    )?;
    let mut out = Vec::with_capacity(rows.len());
    for row in &rows {
        // A row whose JSON no longer parses (never written by this engine) gets the vector of
        // no text rather than holding every later message back.
        let text = text_of_raw_json(&row.text(2)?).unwrap_or_default();
        out.push((row.int(0)?, row.int(1)?, text));
    }
    let position = if out.len() < limit {
        last
    } else {
        out.last().map_or(last, |(id, _, _)| *id)
    };
    Ok((out, position))
}

/// Records the backfill's position (see [`waiting_messages`]).
pub fn advance(sql: &mut impl Sql, through: i64) -> Result<()> {
    sql.execute(
        "UPDATE vector_space SET backfilled_through = ?1 WHERE id = 1",
        &[through.into()],
    )
}

/// Summaries without a vector, up to `limit`, as `(id, conversation, text)`.
pub fn waiting_summaries(sql: &mut impl Sql, limit: usize) -> Result<Vec<(i64, i64, String)>> {
    sql.query(WAITING_SUMMARIES_SQL, &[(limit as i64).into()])?
        .iter()
        .map(|row| Ok((row.int(0)?, row.int(1)?, row.text(2)?)))
        .collect()
}

/// How many vectors `conversation` holds, and their highest owner id (one conversation, by
/// equality: an `IN` over a JSON list made SQLite scan every vector of the store).
pub fn census(sql: &mut impl Sql, owner: Owner, conversation: i64) -> Result<(i64, i64)> {
    let (table, id) = (owner.table(), owner.id_column());
    let row = sql.query_row(
        &format!("SELECT COUNT(*), COALESCE(MAX({id}), 0) FROM {table} WHERE conversation_id = ?1"),
        &[conversation.into()],
    )?;
    row.map_or(Ok((0, 0)), |r| Ok((r.int(0)?, r.int(1)?)))
}

/// The vectors of `conversation` whose owner id is above `after`, with their times, in id order,
/// as stored; each checked to be the size `dim` components (the recorded space's) pack to.
pub fn load(
    sql: &mut impl Sql,
    owner: Owner,
    conversation: i64,
    after: i64,
    dim: usize,
) -> Result<Vec<StoredVector>> {
    let statement = match owner {
        Owner::Message => {
            "SELECT v.message_id, v.conversation_id, COALESCE(m.host_timestamp, m.created_at), v.vector \
             FROM message_vectors v JOIN messages m ON m.id = v.message_id \
             WHERE v.conversation_id = ?1 AND v.message_id > ?2 ORDER BY v.message_id"
        }
        Owner::Summary => {
            "SELECT v.summary_id, v.conversation_id, COALESCE(s.latest_at, s.created_at), v.vector \
             FROM summary_vectors v JOIN summaries s ON s.id = v.summary_id \
             WHERE v.conversation_id = ?1 AND v.summary_id > ?2 ORDER BY v.summary_id"
        }
    };
    sql.query(statement, &[conversation.into(), after.into()])?
        .iter()
        .map(|row| {
            Ok(StoredVector {
                id: row.int(0)?,
                conversation_id: row.int(1)?,
                at: row.int(2)?,
                vector: blob(row, 3, dim)?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{hex, packed_hex, space_name};

    #[test]
    fn a_vector_is_written_as_the_hex_of_its_packed_bytes() {
        assert_eq!(hex(&[0, 1, 0xff, 0x7f, 0x80]), "0001ff7f80");
        assert_eq!(packed_hex(&[100, 50, -8, 0]), "ff87");
        assert_eq!(space_name("minilm-static-v1"), "minilm-static-v1/q4");
    }
}
