//! What became of a conversation's summary requests across processes
//! ([`SummaryRuns`], on the conversation's row since schema 15), and how many turns went by since
//! the last stored summary while compaction was due (read from the compaction log). Read and
//! written only when a compaction job starts or a summary request is sent or answered, never on
//! an ordinary turn.

use crate::core::compaction::hold::SummaryRuns;
use crate::error::{Error, Result, StorageErrorKind};
use crate::store::sql::{Sql, SqlValue};

use super::summary_runs_pg;

/// Reads a conversation's `summary_runs_json` (NULL when never saved).
pub const LOAD_SQL: &str = "SELECT summary_runs_json FROM conversations WHERE id = ?1";
/// Writes a conversation's `summary_runs_json`.
pub const SAVE_SQL: &str = "UPDATE conversations SET summary_runs_json = ?2 WHERE id = ?1";

/// The conversation's record (the default when none was written yet).
pub fn load(sql: &mut impl Sql, conversation_id: i64) -> Result<SummaryRuns> {
    read(sql, LOAD_SQL, conversation_id)
}

/// The record, read to be changed in the current write transaction: on PostgreSQL the row is
/// locked first (`FOR UPDATE`), so two gateways that both find no request in flight cannot both
/// record one — the second waits, then reads the first's (its lease). SQLite's `BEGIN IMMEDIATE`
/// already holds the database: a plain read.
pub fn load_for_update(sql: &mut impl Sql, conversation_id: i64) -> Result<SummaryRuns> {
    // The module's one decision on the dialect: PostgreSQL's locking read (`summary_runs_pg`).
    let query = if sql.dialect().is_postgres() {
        summary_runs_pg::LOAD_FOR_UPDATE_SQL
    } else {
        LOAD_SQL
    };
    read(sql, query, conversation_id)
}

fn read(sql: &mut impl Sql, query: &str, conversation_id: i64) -> Result<SummaryRuns> {
    let Some(row) = sql.query_row(query, &[conversation_id.into()])? else {
        return Ok(SummaryRuns::default());
    };
    parse(row.opt_text(0)?)
}

fn parse(text: Option<String>) -> Result<SummaryRuns> {
    match text {
        Some(text) => serde_json::from_str(&text).map_err(|e| {
            Error::unexpected_data(format!("conversations.summary_runs_json is corrupt: {e}"))
        }),
        None => Ok(SummaryRuns::default()),
    }
}

/// Saves a conversation's summary runs on its row.
pub fn save(sql: &mut impl Sql, conversation_id: i64, runs: &SummaryRuns) -> Result<()> {
    let json = serde_json::to_string(runs)
        .map_err(|e| Error::storage(StorageErrorKind::Other, e.to_string()))?;
    sql.execute(SAVE_SQL, &[conversation_id.into(), SqlValue::from(json)])
}

/// The newest trigger decisions that found compaction due and stored summaries, newest first,
/// up to `limit` rows (the index on `(conversation_id, id)` walks them backwards).
pub const RECENT_OUTCOMES_SQL: &str = "SELECT outcome FROM compaction_events \
     WHERE conversation_id = ?1 AND (outcome = 'compacted' OR (pass = 'trigger' AND outcome = 'triggered')) \
     ORDER BY id DESC LIMIT ?2";

/// Turns on which the trigger found compaction due since the last stored summary, counted up to
/// `cap` (the caller only needs to know whether a threshold was reached).
pub fn unserved_turns(sql: &mut impl Sql, conversation_id: i64, cap: u32) -> Result<u32> {
    if cap == 0 {
        return Ok(0);
    }
    let rows = sql.query(
        RECENT_OUTCOMES_SQL,
        &[conversation_id.into(), i64::from(cap).into()],
    )?;
    let mut turns = 0;
    for row in &rows {
        if row.text(0)? == "compacted" {
            break;
        }
        turns += 1;
    }
    Ok(turns)
}
