//! The one seam between our SQL and a database (SQLite, or PostgreSQL through [`Dialect`]). A backend executes a statement with
//! positional parameters and returns rows of [`SqlValue`]s; it may cache prepared statements.

use crate::error::{Error, Result};
use crate::store::dialect::Dialect;

/// A SQLite value.
#[derive(Debug, Clone, PartialEq)]
pub enum SqlValue {
    /// SQL NULL.
    Null,
    /// An integer.
    Int(i64),
    /// A floating-point number.
    Real(f64),
    /// A text value.
    Text(String),
    /// A byte string.
    Blob(Vec<u8>),
}

impl From<i64> for SqlValue {
    fn from(v: i64) -> Self {
        SqlValue::Int(v)
    }
}

impl From<u32> for SqlValue {
    fn from(v: u32) -> Self {
        SqlValue::Int(i64::from(v))
    }
}

impl From<&str> for SqlValue {
    fn from(v: &str) -> Self {
        SqlValue::Text(v.to_owned())
    }
}

impl From<String> for SqlValue {
    fn from(v: String) -> Self {
        SqlValue::Text(v)
    }
}

impl<T: Into<SqlValue>> From<Option<T>> for SqlValue {
    fn from(v: Option<T>) -> Self {
        v.map_or(SqlValue::Null, Into::into)
    }
}

/// One result row.
#[derive(Debug, Clone, PartialEq)]
pub struct Row(pub Vec<SqlValue>);

impl Row {
    fn get(&self, i: usize) -> Result<&SqlValue> {
        self.0
            .get(i)
            .ok_or_else(|| Error::unexpected_data(format!("result row has no column {i}")))
    }

    /// Column `i` (0-based) as an integer; an error when it is NULL or not integral.
    pub fn int(&self, i: usize) -> Result<i64> {
        match self.get(i)? {
            SqlValue::Int(v) => Ok(*v),
            // sql.js hands back JS numbers; integral reals are integers.
            SqlValue::Real(v) if v.fract() == 0.0 && v.is_finite() => Ok(*v as i64),
            other => Err(Error::unexpected_data(format!(
                "column {i}: expected an integer, found {other:?}"
            ))),
        }
    }

    /// Column `i` (0-based) as an integer, None when it is NULL.
    pub fn opt_int(&self, i: usize) -> Result<Option<i64>> {
        match self.get(i)? {
            SqlValue::Null => Ok(None),
            _ => self.int(i).map(Some),
        }
    }

    /// Column `i` (0-based) as text; an error when it is NULL or not text.
    pub fn text(&self, i: usize) -> Result<String> {
        match self.get(i)? {
            SqlValue::Text(v) => Ok(v.clone()),
            other => Err(Error::unexpected_data(format!(
                "column {i}: expected text, found {other:?}"
            ))),
        }
    }

    /// Column `i` (0-based) as text, None when it is NULL.
    pub fn opt_text(&self, i: usize) -> Result<Option<String>> {
        match self.get(i)? {
            SqlValue::Null => Ok(None),
            _ => self.text(i).map(Some),
        }
    }
}

/// A SQLite connection.
pub trait Sql {
    /// Runs one statement that returns no rows.
    fn execute(&mut self, sql: &str, params: &[SqlValue]) -> Result<()>;
    /// Runs one statement and returns all of its rows.
    fn query(&mut self, sql: &str, params: &[SqlValue]) -> Result<Vec<Row>>;
    /// Runs several `;`-separated statements without parameters (migrations).
    fn execute_script(&mut self, sql: &str) -> Result<()>;

    /// Prepares `sql` ahead of its first use, for connections that keep prepared statements;
    /// the others ignore it.
    fn prepare(&mut self, _sql: &str) -> Result<()> {
        Ok(())
    }

    /// The SQL dialect this connection speaks ([`Dialect`]): SQLite unless the backend says
    /// otherwise.
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    /// A hint that `sql` with `params` is the next query after the next `COMMIT` (`assemble`'s
    /// read after a turn): a driver that talks to a server may send it right behind that
    /// `COMMIT`, in the same round trip, and answer that query from it when nothing else ran in
    /// between. Its answer is then as of just after the `COMMIT`, not as of the query. The
    /// others ignore it.
    fn read_after_commit(&mut self, _sql: &str, _params: &[SqlValue]) {}

    /// The first row, if any.
    fn query_row(&mut self, sql: &str, params: &[SqlValue]) -> Result<Option<Row>> {
        Ok(self.query(sql, params)?.into_iter().next())
    }
}
