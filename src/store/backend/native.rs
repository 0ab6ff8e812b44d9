//! The native SQLite backend (rusqlite, bundled SQLite), so the same SQL the wasm build runs on
//! sql.js is tested and benchmarked natively. Not compiled for wasm32.

use rusqlite::types::{Value as RValue, ValueRef};
use rusqlite::{params_from_iter, Connection};

use crate::error::{Error, Result, StorageError, StorageErrorKind};
use crate::store::error_codes::{sqlite_code_kind, sqlite_code_name};
use crate::store::sql::{Row, Sql, SqlValue};

/// A native SQLite connection with a prepared-statement cache.
pub struct NativeSql {
    conn: Connection,
}

/// rusqlite's error as a [`StorageError`], its kind read from SQLite's result code.
fn storage_err(err: rusqlite::Error) -> Error {
    let failure = match err.sqlite_error() {
        Some(sqlite) => {
            let code = i64::from(sqlite.extended_code);
            StorageError::new(sqlite_code_kind(code), err.to_string())
                .with_code(sqlite_code_name(code))
        }
        // rusqlite's own checks of what SQLite handed back (a column's type, its count).
        None => {
            let kind = match err {
                rusqlite::Error::InvalidColumnType(..)
                | rusqlite::Error::InvalidColumnIndex(_)
                | rusqlite::Error::InvalidColumnName(_)
                | rusqlite::Error::FromSqlConversionFailure(..)
                | rusqlite::Error::IntegralValueOutOfRange(..)
                | rusqlite::Error::Utf8Error(_) => StorageErrorKind::Data,
                _ => StorageErrorKind::Other,
            };
            StorageError::new(kind, err.to_string())
        }
    };
    failure.into()
}

impl NativeSql {
    /// An in-memory database.
    pub fn in_memory() -> Result<Self> {
        Self::configure(Connection::open_in_memory().map_err(storage_err)?)
    }

    /// A database file, created when missing.
    pub fn open(path: &str) -> Result<Self> {
        Self::configure(Connection::open(path).map_err(storage_err)?)
    }

    fn configure(conn: Connection) -> Result<Self> {
        conn.execute_batch("PRAGMA foreign_keys = ON;")
            .map_err(storage_err)?;
        conn.set_prepared_statement_cache_capacity(64);
        Ok(NativeSql { conn })
    }
}

fn to_native(value: &SqlValue) -> RValue {
    match value {
        SqlValue::Null => RValue::Null,
        SqlValue::Int(v) => RValue::Integer(*v),
        SqlValue::Real(v) => RValue::Real(*v),
        SqlValue::Text(v) => RValue::Text(v.clone()),
        SqlValue::Blob(v) => RValue::Blob(v.clone()),
    }
}

fn from_native(value: ValueRef<'_>) -> SqlValue {
    match value {
        ValueRef::Null => SqlValue::Null,
        ValueRef::Integer(v) => SqlValue::Int(v),
        ValueRef::Real(v) => SqlValue::Real(v),
        ValueRef::Text(v) => SqlValue::Text(String::from_utf8_lossy(v).into_owned()),
        ValueRef::Blob(v) => SqlValue::Blob(v.to_vec()),
    }
}

impl Sql for NativeSql {
    fn prepare(&mut self, sql: &str) -> Result<()> {
        self.conn
            .prepare_cached(sql)
            .map(|_| ())
            .map_err(storage_err)
    }

    fn execute(&mut self, sql: &str, params: &[SqlValue]) -> Result<()> {
        let mut stmt = self.conn.prepare_cached(sql).map_err(storage_err)?;
        stmt.execute(params_from_iter(params.iter().map(to_native)))
            .map_err(storage_err)?;
        Ok(())
    }

    fn query(&mut self, sql: &str, params: &[SqlValue]) -> Result<Vec<Row>> {
        let mut stmt = self.conn.prepare_cached(sql).map_err(storage_err)?;
        let width = stmt.column_count();
        let mut rows = stmt
            .query(params_from_iter(params.iter().map(to_native)))
            .map_err(storage_err)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(storage_err)? {
            let mut values = Vec::with_capacity(width);
            for i in 0..width {
                values.push(from_native(row.get_ref(i).map_err(storage_err)?));
            }
            out.push(Row(values));
        }
        Ok(out)
    }

    fn execute_script(&mut self, sql: &str) -> Result<()> {
        self.conn.execute_batch(sql).map_err(storage_err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A path for a database file of this test's own, removed when dropped.
    struct TempFile(std::path::PathBuf);

    impl TempFile {
        fn new(name: &str) -> Self {
            let path = std::env::temp_dir().join(format!(
                "lossless-wasm-{name}-{}-{:?}.db",
                std::process::id(),
                std::thread::current().id()
            ));
            let _ = std::fs::remove_file(&path);
            TempFile(path)
        }

        fn path(&self) -> &str {
            self.0.to_str().expect("a UTF-8 temp path")
        }
    }

    impl Drop for TempFile {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    fn storage_failure(err: Error) -> crate::error::StorageError {
        match err {
            Error::Storage(failure) => failure,
            other => panic!("expected a storage error, got {other:?}"),
        }
    }

    #[test]
    fn a_unique_violation_is_a_constraint_failure() {
        let mut sql = NativeSql::in_memory().unwrap();
        sql.execute_script("CREATE TABLE t (x INTEGER UNIQUE); INSERT INTO t (x) VALUES (1);")
            .unwrap();
        let err = sql
            .execute("INSERT INTO t (x) VALUES (?1)", &[1i64.into()])
            .unwrap_err();
        assert!(
            err.to_string().contains("UNIQUE constraint failed"),
            "{err}"
        );
        assert_eq!(err.code(), "LOSSLESS_STORAGE_CONSTRAINT");
        let failure = storage_failure(err);
        assert_eq!(failure.kind(), StorageErrorKind::Constraint);
        assert_eq!(failure.code(), Some("SQLITE_CONSTRAINT"));
    }

    #[test]
    fn a_database_another_connection_writes_is_busy() {
        let file = TempFile::new("busy");
        let mut first = NativeSql::open(file.path()).unwrap();
        let mut second = NativeSql::open(file.path()).unwrap();
        for sql in [&first, &second] {
            sql.conn.busy_timeout(std::time::Duration::ZERO).unwrap();
        }
        first.execute_script("CREATE TABLE t (x INTEGER);").unwrap();
        first.execute("BEGIN IMMEDIATE", &[]).unwrap();
        let err = second.execute("BEGIN IMMEDIATE", &[]).unwrap_err();
        assert!(err.to_string().contains("database is locked"), "{err}");
        let failure = storage_failure(err);
        assert_eq!(failure.kind(), StorageErrorKind::Busy);
        assert_eq!(failure.code(), Some("SQLITE_BUSY"));
        first.execute("COMMIT", &[]).unwrap();
        second.execute("BEGIN IMMEDIATE", &[]).unwrap();
    }

    #[test]
    fn a_file_that_is_not_a_database_is_corrupt() {
        let file = TempFile::new("notadb");
        std::fs::write(&file.0, vec![b'x'; 4096]).unwrap();
        let err = NativeSql::open(file.path())
            .and_then(|mut sql| sql.query("SELECT * FROM sqlite_master", &[]))
            .unwrap_err();
        assert!(err.to_string().contains("file is not a database"), "{err}");
        assert_eq!(storage_failure(err).kind(), StorageErrorKind::Corrupt);
    }

    #[test]
    fn a_statement_sqlite_rejects_is_a_dialect_failure() {
        let mut sql = NativeSql::in_memory().unwrap();
        let err = sql.query("SELECT * FROM nowhere", &[]).unwrap_err();
        assert!(err.to_string().contains("no such table"), "{err}");
        assert_eq!(storage_failure(err).kind(), StorageErrorKind::Dialect);
    }
}
