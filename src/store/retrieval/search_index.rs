//! The message search index's backlog (migration 9). A turn's few new messages are not put in the
//! FTS4 index by the statement that stores them: every commit that touches the index flushes a
//! segment of its own, and that flush plus the tokenizing was a third of a small turn's write.
//! Instead the stored messages past `messages_fts_progress.indexed_through` wait, and are indexed
//! together: by the host's `maintain` once [`INDEX_BATCH`] of them have gathered (after the turn,
//! not in it), by an append once [`BACKLOG_LIMIT`] have (for hosts that never call `maintain`),
//! by a bulk append along with its own rows, and before any search reads the index — so a search
//! never misses a stored message.
//!
//! The index's content view (`messages_indexed_text`) covers only indexed messages, so FTS4's
//! 'integrity-check' and `PRAGMA integrity_check` hold while messages wait. Messages are never
//! deleted and their ids only grow, so "indexed" is one number.

use serde_json::{json, Value};

use crate::core::message::text_of_raw_json;
use crate::error::{Error, Result, StorageErrorKind};
use crate::store::packed::Packed;
use crate::store::sql::{Sql, SqlValue};
use crate::store::Store;
use crate::store::WriteTx;

/// Waiting messages that `maintain` indexes in one go (fewer wait for more).
pub const INDEX_BATCH: i64 = 64;

/// Stored messages that may wait for the index at most; the append that reaches this many
/// indexes them (a host that never calls `maintain` pays for it every this many messages).
pub const BACKLOG_LIMIT: i64 = 1024;

const PROGRESS_SQL: &str = "SELECT indexed_through, (SELECT COALESCE(MAX(id), 0) FROM messages) FROM messages_fts_progress";
const WAITING_SQL: &str = "SELECT id, raw_json FROM messages WHERE id > ?1 ORDER BY id";
const ADVANCE_SQL: &str = "UPDATE messages_fts_progress SET indexed_through = ?1";
const INSERT_SQL: &str = "INSERT INTO messages_fts (docid, content) SELECT value ->> 0, CAST(substr(?2, value ->> 1, value ->> 2) AS TEXT) FROM json_each(?1)";

/// Whether the connection's messages wait for a search index at all: the module's one decision
/// on the dialect. SQLite's FTS4 index is fed in batches; PostgreSQL's search vector is a
/// generated column of the message row, always up to date, so there nothing waits and this
/// module does nothing.
fn has_backlog(sql: &impl Sql) -> bool {
    !sql.dialect().is_postgres()
}

/// The last indexed message id and the last stored one.
fn progress(sql: &mut impl Sql) -> Result<(i64, i64)> {
    let row = sql.query_row(PROGRESS_SQL, &[])?.ok_or_else(|| {
        Error::unexpected_data("messages_fts_progress has no row (schema version 9 creates it)")
    })?;
    Ok((row.int(0)?, row.int(1)?))
}

/// How many stored messages the search index does not hold yet. Read-only. Always 0 on
/// PostgreSQL, whose search vector is a generated column of the message row.
pub fn backlog(sql: &mut impl Sql) -> Result<i64> {
    if !has_backlog(sql) {
        return Ok(0);
    }
    let (through, last) = progress(sql)?;
    Ok(last - through)
}

/// Indexes every stored message the index does not hold yet; returns how many. A message whose JSON no longer parses (never written by this engine) is
/// indexed without text rather than holding every later message back.
pub fn catch_up(tx: &mut WriteTx<'_, impl Sql>) -> Result<usize> {
    if !has_backlog(tx.sql()) {
        return Ok(0);
    }
    let (through, last) = progress(tx.sql())?;
    if last <= through {
        return Ok(0);
    }
    let rows: Vec<(i64, String)> = tx
        .query(WAITING_SQL, &[through.into()])?
        .iter()
        .map(|row| {
            Ok((
                row.int(0)?,
                text_of_raw_json(&row.text(1)?).unwrap_or_default(),
            ))
        })
        .collect::<Result<_>>()?;
    let texts: Vec<(i64, &str)> = rows.iter().map(|(id, text)| (*id, text.as_str())).collect();
    index_rows(tx, &texts, last)?;
    Ok(rows.len())
}

/// After a row-by-row append that stored messages up to `last_id`: indexes the backlog once it
/// has reached [`BACKLOG_LIMIT`], in the append's transaction.
pub fn after_append(tx: &mut WriteTx<'_, impl Sql>, last_id: i64) -> Result<()> {
    if !has_backlog(tx.sql()) {
        return Ok(());
    }
    let (through, _) = progress(tx.sql())?;
    if last_id - through >= BACKLOG_LIMIT {
        catch_up(tx)?;
    }
    Ok(())
}

/// Indexes `rows` (id and text, ids ascending, following the last indexed one with nothing
/// unindexed before them) and records `last_id` as indexed.
pub fn index_rows(
    tx: &mut WriteTx<'_, impl Sql>,
    rows: &[(i64, &str)],
    last_id: i64,
) -> Result<()> {
    if !rows.is_empty() {
        let mut packed = Packed::default();
        let refs: Vec<Value> = rows
            .iter()
            .map(|(id, text)| {
                let (start, len) = packed.push(text);
                json!([id, start, len])
            })
            .collect();
        let json = serde_json::to_string(&refs).map_err(|err| {
            Error::storage(
                StorageErrorKind::Other,
                format!("encoding rows for the search index: {err}"),
            )
        })?;
        tx.execute(INSERT_SQL, &[json.into(), SqlValue::Blob(packed.bytes)])?;
    }
    tx.execute(ADVANCE_SQL, &[last_id.into()])
}

impl<S: Sql> Store<S> {
    /// Brings the search index up to date before a search reads it. Writes only when messages
    /// are waiting, so a search over an up-to-date index stays read-only.
    pub fn index_waiting_messages(&mut self) -> Result<()> {
        self.index_when_waiting(1).map(drop)
    }

    /// Indexes the waiting messages when at least `at_least` wait; returns how many it indexed.
    pub fn index_when_waiting(&mut self, at_least: i64) -> Result<usize> {
        if backlog(self.sql())? < at_least.max(1) {
            return Ok(0);
        }
        self.write(catch_up)
    }
}
