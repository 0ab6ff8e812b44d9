//! Storage: the schema, its migrations, and every query, written once as SQL over the [`Sql`]
//! trait so the same statements run on sql.js (wasm), and on a native SQLite in tests and
//! benchmarks. Queries used every turn touch only the rows they need (indexed by conversation and
//! sequence), and running totals live on the conversation row instead of being re-summed.

mod append;
mod backend;
mod compacting;
mod importing;
mod inspection;
mod retrieval;
mod tables;
mod transaction;

// The modules by their old flat names, so callers name `store::messages` and not the folder
// it lives in (docs/architecture.md has the tree).
pub use append::{
    advancements, archived_identities, bulk, claim, context, lock_before_append, messages,
    user_messages_near,
};
#[cfg(not(target_arch = "wasm32"))]
pub use backend::native;
#[cfg(all(not(target_arch = "wasm32"), feature = "postgres"))]
pub use backend::native_pg;
pub use backend::{dialect, error_codes, packed, schema, sql};
pub use compacting::{accounting, compaction, masking, repair, spend, summary_runs};
pub use importing::{import, lossless_claw};
pub use inspection::{doctor, explorer, inspect, statistics};
pub use retrieval::{
    literal, raw_match, recall, search, search_hit, search_index, snippet, vectors,
};
pub use tables::conversations;

pub use dialect::Dialect;
pub use sql::{Row, Sql, SqlValue};
pub use transaction::WriteTx;

use crate::error::{Result, StorageErrorKind};

/// Statements a turn runs that nothing before it (opening, bootstrap, assemble) has prepared:
/// prepared when the store opens, so the first turn of a process does not pay for them
/// (~0.2 ms of its ~2 ms in node:sqlite).
pub const TURN_STATEMENTS: &[&str] = &[
    messages::INSERT_SQL,
    messages::INSERT_PART_SQL,
    context::INSERT_MESSAGE_SQL,
    accounting::LOAD_SQL,
    accounting::SAVE_SQL,
    compaction::LOAD_STATE_SQL,
    compaction::SAVE_STATE_SQL,
    compaction::REPEAT_SKIP_SQL,
    compaction::RECORD_EVENT_SQL,
    compaction::NEWEST_MESSAGE_TOKENS_SQL,
    masking::FRONTIER_SQL,
    masking::SCAN_SQL,
];

/// The store: a SQL connection plus the transaction discipline every write follows.
pub struct Store<S: Sql> {
    sql: S,
    dirty: bool,
    /// Transactions committed since opening: a picture of the store taken at one count is
    /// known to be this process's latest while the count stays the same.
    commits: u64,
    /// Between [`Store::begin_batch`] and [`Store::end_batch`]: writes join its transaction instead of opening their own.
    batching: bool,
}

impl<S: Sql> Store<S> {
    /// Opens the store, creating or upgrading the schema.
    pub fn open(mut sql: S, now_ms: i64) -> Result<Self> {
        schema::migrate(&mut sql, now_ms)?;
        // SQLite's forms; a PostgreSQL connection prepares its own on first use.
        if !sql.dialect().is_postgres() {
            for statement in TURN_STATEMENTS {
                sql.prepare(statement)?;
            }
        }
        Ok(Store {
            sql,
            dirty: true,
            commits: 0,
            batching: false,
        })
    }

    /// The connection under the store, for reads outside a write transaction.
    pub fn sql(&mut self) -> &mut S {
        &mut self.sql
    }

    /// Runs `work` in one write transaction: all of it commits, or none of it does. Inside a
    /// batch, it is part of the batch's transaction. `work` gets the [`WriteTx`] that the store
    /// functions needing a transaction take.
    pub fn write<T>(&mut self, work: impl FnOnce(&mut WriteTx<'_, S>) -> Result<T>) -> Result<T> {
        let mut tx = if self.batching {
            WriteTx::joining(&mut self.sql)
        } else {
            WriteTx::begin(&mut self.sql)?
        };
        // On an error, `tx` is dropped uncommitted: the transaction rolls back.
        let value = work(&mut tx)?;
        let ends = tx.ends_transaction();
        tx.commit()?;
        if ends {
            self.committed();
        }
        Ok(value)
    }

    /// Starts a batch: every [`Store::write`] until [`Store::end_batch`] shares one
    /// transaction, so a turn's several writes cost one commit (one fsync) and land together.
    pub fn begin_batch(&mut self) -> Result<()> {
        if self.batching {
            return Err(crate::error::Error::storage(
                StorageErrorKind::Other,
                "a write batch is already open",
            ));
        }
        self.sql.execute(self.sql.dialect().begin_write(), &[])?;
        self.batching = true;
        Ok(())
    }

    /// Ends the batch: commits when `outcome` is Ok, rolls everything back otherwise.
    pub fn end_batch<T>(&mut self, outcome: Result<T>) -> Result<T> {
        self.batching = false;
        let tx = WriteTx::ending(&mut self.sql);
        // On an error, `tx` is dropped uncommitted: the batch rolls back.
        let value = outcome?;
        tx.commit()?;
        self.committed();
        Ok(value)
    }

    fn committed(&mut self) {
        self.dirty = true;
        self.commits += 1;
    }

    /// After a bulk write of `inserted` messages has committed: refreshes the planner's
    /// statistics where the backend needs it ([`statistics`]). Returns whether it did. A failure
    /// is dropped: the write is stored whatever happens here, and the statistics catch up later.
    pub fn refresh_statistics_after(&mut self, inserted: usize) -> bool {
        !self.batching
            && statistics::refresh_after_bulk_write(&mut self.sql, inserted).unwrap_or(false)
    }

    /// How many write transactions this store has committed since it opened.
    pub fn commits(&self) -> u64 {
        self.commits
    }

    /// Whether a transaction committed since the last call; the shim persists when it did.
    pub fn take_dirty(&mut self) -> bool {
        std::mem::replace(&mut self.dirty, false)
    }
}
