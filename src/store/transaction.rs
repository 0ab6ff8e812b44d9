//! The write transaction as a type. A [`WriteTx`] exists only while a write transaction is open:
//! [`Store::write`] makes one for its closure (and [`Store::end_batch`] for a batch), and
//! [`WriteTx::begin`] opens one on a bare connection (tests that hold a transaction open across
//! two connections). So a store function that must run inside a write transaction takes
//! `&mut WriteTx` and cannot be called outside one: the compiler holds the rule that doc
//! comments used to state. Committing consumes the value; dropping it uncommitted rolls back.
//! A write inside a batch ([`Store::begin_batch`]) joins the batch's transaction: its value
//! neither commits nor rolls back, the batch does.

use std::ops::{Deref, DerefMut};

use crate::error::Result;
use crate::store::sql::Sql;
#[cfg(doc)]
use crate::store::Store;

/// A write transaction open on a connection, which it lends out through [`WriteTx::sql`] (and
/// `Deref`, for the connection's methods).
pub struct WriteTx<'a, S: Sql> {
    sql: &'a mut S,
    /// Whether this value ends the transaction: false for a write that joined a batch.
    ends: bool,
    /// Whether it has been committed, so dropping it leaves the connection alone.
    committed: bool,
}

impl<'a, S: Sql> WriteTx<'a, S> {
    /// Begins a write transaction on `sql` (SQLite takes the write lock now: `BEGIN IMMEDIATE`).
    /// [`Store::write`] is the way in for the engine; this is for a bare connection.
    pub fn begin(sql: &'a mut S) -> Result<Self> {
        sql.execute(sql.dialect().begin_write(), &[])?;
        Ok(Self::ending(sql))
    }

    /// The transaction already open on `sql` (a batch's), which this value ends.
    pub(super) fn ending(sql: &'a mut S) -> Self {
        WriteTx {
            sql,
            ends: true,
            committed: false,
        }
    }

    /// A write that joins the transaction open on `sql` (a batch's), which the batch ends.
    pub(super) fn joining(sql: &'a mut S) -> Self {
        WriteTx {
            sql,
            ends: false,
            committed: false,
        }
    }

    /// Whether committing this value commits the transaction (false when it joined a batch).
    pub(super) fn ends_transaction(&self) -> bool {
        self.ends
    }

    /// The connection, for the statements of this transaction.
    pub fn sql(&mut self) -> &mut S {
        self.sql
    }

    /// Commits the transaction (a write that joined a batch leaves that to the batch). When the
    /// `COMMIT` fails, the transaction is rolled back and the error returned.
    pub fn commit(mut self) -> Result<()> {
        self.committed = true;
        if !self.ends {
            return Ok(());
        }
        if let Err(err) = self.sql.execute("COMMIT", &[]) {
            let _ = self.sql.execute("ROLLBACK", &[]);
            return Err(err);
        }
        Ok(())
    }
}

impl<S: Sql> Drop for WriteTx<'_, S> {
    fn drop(&mut self) {
        if self.ends && !self.committed {
            // The error that ended the work matters more than a failed rollback.
            let _ = self.sql.execute("ROLLBACK", &[]);
        }
    }
}

impl<S: Sql> Deref for WriteTx<'_, S> {
    type Target = S;

    fn deref(&self) -> &S {
        self.sql
    }
}

impl<S: Sql> DerefMut for WriteTx<'_, S> {
    fn deref_mut(&mut self) -> &mut S {
        self.sql
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::store::native::NativeSql;

    fn table() -> NativeSql {
        let mut sql = NativeSql::in_memory().unwrap();
        sql.execute_script("CREATE TABLE t (x INTEGER);").unwrap();
        sql
    }

    fn count(sql: &mut NativeSql) -> i64 {
        sql.query_row("SELECT COUNT(*) FROM t", &[])
            .unwrap()
            .unwrap()
            .int(0)
            .unwrap()
    }

    #[test]
    fn commit_persists_the_writes() {
        let mut sql = table();
        let mut tx = WriteTx::begin(&mut sql).unwrap();
        tx.execute("INSERT INTO t (x) VALUES (1)", &[]).unwrap();
        tx.commit().unwrap();
        assert_eq!(count(&mut sql), 1);
        // Committed for good: a new transaction begins (none is left open).
        WriteTx::begin(&mut sql).unwrap().commit().unwrap();
    }

    #[test]
    fn dropping_without_commit_rolls_back() {
        let mut sql = table();
        {
            let mut tx = WriteTx::begin(&mut sql).unwrap();
            tx.sql()
                .execute("INSERT INTO t (x) VALUES (1)", &[])
                .unwrap();
            assert_eq!(
                count(tx.sql()),
                1,
                "the write happened inside the transaction"
            );
        }
        assert_eq!(count(&mut sql), 0);
        // Rolled back, not left open: a new transaction begins.
        WriteTx::begin(&mut sql).unwrap().commit().unwrap();
    }

    #[test]
    fn a_joined_write_leaves_the_transaction_to_its_owner() {
        let mut sql = table();
        // A batch's transaction, open on the connection.
        sql.execute("BEGIN IMMEDIATE", &[]).unwrap();
        {
            let mut joined = WriteTx::joining(&mut sql);
            joined.execute("INSERT INTO t (x) VALUES (1)", &[]).unwrap();
            joined.commit().unwrap();
        }
        {
            // Dropped uncommitted: still nothing rolled back, the owner decides.
            let mut joined = WriteTx::joining(&mut sql);
            joined.execute("INSERT INTO t (x) VALUES (2)", &[]).unwrap();
        }
        assert_eq!(count(&mut sql), 2);
        // The owner rolls back both.
        drop(WriteTx::ending(&mut sql));
        assert_eq!(count(&mut sql), 0);
    }

    #[test]
    fn a_store_write_commits_on_ok_and_rolls_back_on_an_error() {
        let mut store = crate::store::Store::open(NativeSql::in_memory().unwrap(), 0).unwrap();
        store
            .sql()
            .execute_script("CREATE TABLE t (x INTEGER);")
            .unwrap();
        let before = store.commits();
        store
            .write(|tx| tx.execute("INSERT INTO t (x) VALUES (1)", &[]))
            .unwrap();
        assert_eq!(store.commits(), before + 1);
        let failed: Result<()> = store.write(|tx| {
            tx.execute("INSERT INTO t (x) VALUES (2)", &[])?;
            Err(crate::error::Error::unexpected_data("the work failed"))
        });
        assert!(failed.is_err());
        assert_eq!(store.commits(), before + 1);
        assert_eq!(count(store.sql()), 1, "the failed write rolled back");
    }

    #[test]
    fn writes_in_a_batch_land_or_roll_back_together() {
        let mut store = crate::store::Store::open(NativeSql::in_memory().unwrap(), 0).unwrap();
        store
            .sql()
            .execute_script("CREATE TABLE t (x INTEGER);")
            .unwrap();
        let before = store.commits();
        store.begin_batch().unwrap();
        for x in [1i64, 2] {
            store
                .write(|tx| tx.execute("INSERT INTO t (x) VALUES (?1)", &[x.into()]))
                .unwrap();
        }
        assert_eq!(store.commits(), before, "the writes joined the batch");
        let ended: Result<()> = store.end_batch(Err(crate::error::Error::unexpected_data("x")));
        assert!(ended.is_err());
        assert_eq!(count(store.sql()), 0, "the batch rolled both back");
        store.begin_batch().unwrap();
        store
            .write(|tx| tx.execute("INSERT INTO t (x) VALUES (3)", &[]))
            .unwrap();
        store.end_batch(Ok(())).unwrap();
        assert_eq!(count(store.sql()), 1);
        assert_eq!(store.commits(), before + 1);
    }
}
