//! The native SQLite backend (rusqlite, bundled SQLite), so the same SQL the wasm build runs on
//! sql.js is tested and benchmarked natively. Not compiled for wasm32.

use rusqlite::types::{Value as RValue, ValueRef};
use rusqlite::{params_from_iter, Connection};

use crate::error::{Error, Result};
use crate::store::sql::{Row, Sql, SqlValue};

/// A native SQLite connection with a prepared-statement cache.
pub struct NativeSql {
    conn: Connection,
}

fn storage_err(err: rusqlite::Error) -> Error {
    Error::storage(err.to_string())
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
