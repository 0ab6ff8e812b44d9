//! The sql.js backend: bindings to sql.js's `Database` and `Statement` classes, and the [`Sql`]
//! implementation over them with a prepared-statement cache. sql.js's `export()` frees every
//! statement and reopens the connection, so exporting goes through [`SqlJsSql::export`], which
//! drops the cache first and restores connection settings after.
//!
//! The same interface fronts PostgreSQL in Node (`js-shim/postgres/database.js`): a database object
//! whose `dialect` property is `"postgres"` makes this connection report
//! [`Dialect::Postgres`], and the store writes PostgreSQL's statements; the driver rewrites the
//! placeholders. Read once, when the connection is wrapped.

use std::collections::HashMap;

use js_sys::{Array, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::error::{Error, Result, StorageError, StorageErrorKind};
use crate::store::dialect::Dialect;
use crate::store::error_codes::js_failure_kind;
use crate::store::sql::{Row, Sql, SqlValue};

#[wasm_bindgen]
extern "C" {
    /// A sql.js `Database`.
    pub type SqlJsDatabase;

    #[wasm_bindgen(method, catch)]
    fn prepare(this: &SqlJsDatabase, sql: &str) -> std::result::Result<SqlJsStatement, JsValue>;

    #[wasm_bindgen(method, catch, js_name = exec)]
    fn exec_script(this: &SqlJsDatabase, sql: &str) -> std::result::Result<JsValue, JsValue>;

    /// PostgreSQL's driver only (`js-shim/postgres/database.js`); see [`Sql::read_after_commit`].
    #[wasm_bindgen(method, catch, js_name = readAfterCommit)]
    fn read_after_commit_js(
        this: &SqlJsDatabase,
        sql: &str,
        values: &Array,
    ) -> std::result::Result<JsValue, JsValue>;

    #[wasm_bindgen(method, catch, js_name = export)]
    fn export_bytes(this: &SqlJsDatabase) -> std::result::Result<Uint8Array, JsValue>;

    /// A sql.js `Statement`.
    type SqlJsStatement;

    #[wasm_bindgen(method, catch)]
    fn bind(this: &SqlJsStatement, values: &Array) -> std::result::Result<bool, JsValue>;

    #[wasm_bindgen(method, catch)]
    fn step(this: &SqlJsStatement) -> std::result::Result<bool, JsValue>;

    #[wasm_bindgen(method, catch)]
    fn get(this: &SqlJsStatement) -> std::result::Result<Array, JsValue>;

    #[wasm_bindgen(method)]
    fn reset(this: &SqlJsStatement) -> bool;

    /// Runs a statement that returns no rows, in one call (drivers that offer it: node:sqlite).
    #[wasm_bindgen(method, catch, js_name = run)]
    fn run_once(this: &SqlJsStatement, values: &Array) -> std::result::Result<JsValue, JsValue>;

    /// Every row of the statement at once, each an array (drivers that offer it: node:sqlite).
    #[wasm_bindgen(method, catch, js_name = all)]
    fn all_rows(this: &SqlJsStatement, values: &Array) -> std::result::Result<Array, JsValue>;

    #[wasm_bindgen(method)]
    fn free(this: &SqlJsStatement) -> bool;
}

/// Settings that live on the connection and must be restored whenever sql.js reopens it.
const CONNECTION_SETUP: &str = "PRAGMA foreign_keys = ON;";

/// Statements kept prepared. The engine's statements are a fixed set of a few dozen texts; a
/// search's text varies with its filters (and so did compaction's, with ids spelled into it), and
/// each prepared statement holds native memory in the driver, so past this the cache starts
/// over rather than grow for as long as the process runs.
const MAX_CACHED_STATEMENTS: usize = 256;

/// A prepared statement, and whether its driver runs it in one call (`run`/`all`: node:sqlite)
/// instead of sql.js's bind, step per row, get, reset — one crossing from wasm to JS instead of
/// four or more, which is most of what a small statement costs.
struct Prepared {
    statement: SqlJsStatement,
    at_once: bool,
}

/// [`Sql`] over a sql.js database.
pub struct SqlJsSql {
    db: SqlJsDatabase,
    dialect: Dialect,
    statements: HashMap<String, Prepared>,
    /// Whether the driver takes [`Sql::read_after_commit`]'s hint (has `readAfterCommit`).
    reads_after_commit: bool,
}

/// A driver's failure as a [`StorageError`]: its kind read from the error's `code` (a SQLSTATE,
/// a `LOSSLESS_*` code), node:sqlite's `errcode`, or else SQLite's message
/// ([`js_failure_kind`]); `context` says what was being done.
fn js_err(dialect: Dialect, context: &str, err: JsValue) -> Error {
    let message = err
        .dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| err.as_string())
        .unwrap_or_else(|| format!("{err:?}"));
    let code = js_sys::Reflect::get(&err, &"code".into())
        .ok()
        .and_then(|c| c.as_string());
    let errcode = js_sys::Reflect::get(&err, &"errcode".into())
        .ok()
        .and_then(|c| c.as_f64())
        .filter(|c| c.fract() == 0.0)
        .map(|c| c as i64);
    let (kind, kept_code) =
        js_failure_kind(dialect.is_postgres(), code.as_deref(), errcode, &message);
    let failure = StorageError::new(kind, message);
    let failure = match kept_code {
        Some(kept) => failure.with_code(kept),
        None => failure,
    };
    // The PostgreSQL driver's connection failures (code `LOSSLESS_POSTGRES_*`: the server is
    // unreachable, the connection broke) are about the server, not the statement: the statement's
    // text would only bury the sentence that says what happened and what to do.
    if code.is_some_and(|c| c.starts_with("LOSSLESS_POSTGRES_")) {
        return failure.into();
    }
    failure.with_context(context).into()
}

fn to_js(value: &SqlValue) -> JsValue {
    match value {
        SqlValue::Null => JsValue::NULL,
        // Exact up to 2^53, far beyond any id, count or millisecond timestamp we store.
        SqlValue::Int(v) => JsValue::from_f64(*v as f64),
        SqlValue::Real(v) => JsValue::from_f64(*v),
        SqlValue::Text(v) => JsValue::from_str(v),
        // A placeholder: `bind_values` puts the blobs in.
        SqlValue::Blob(_) => JsValue::NULL,
    }
}

/// The statement parameters as a JS array. For a driver that runs statements in one call
/// (`run`/`all`: node:sqlite, which binds a blob SQLITE_TRANSIENT, a copy, and keeps nothing
/// after the call), blobs go in as views on wasm memory, not copies: a bulk append binds ~128
/// KiB of message JSON and its search text per statement, and the copies were tens of MiB of
/// garbage ArrayBuffers during an import, collected late. sql.js's journal keeps the values it
/// ran until they are persisted, so it gets copies. A view is valid only until wasm memory
/// grows: the views are made last, after every other value is converted, and only JS runs
/// between them and the driver's copy.
#[allow(unsafe_code)]
fn bind_values(params: &[SqlValue], views: bool) -> Array {
    let values: Array = params.iter().map(to_js).collect();
    for (i, param) in params.iter().enumerate() {
        if let SqlValue::Blob(bytes) = param {
            let blob = if views {
                // SAFETY: `bytes` outlives the one statement call this array is made for, the
                // driver copies the blob during that call, and nothing allocates in wasm memory
                // between here and then (see above).
                unsafe { Uint8Array::view(bytes) }
            } else {
                Uint8Array::from(bytes.as_slice())
            };
            values.set(i as u32, blob.into());
        }
    }
    values
}

fn from_js(value: JsValue) -> SqlValue {
    if value.is_null() || value.is_undefined() {
        SqlValue::Null
    } else if let Some(n) = value.as_f64() {
        if n.fract() == 0.0 && n.abs() < 9.0e15 {
            SqlValue::Int(n as i64)
        } else {
            SqlValue::Real(n)
        }
    } else if let Some(s) = super::js_text::string_of(&value) {
        SqlValue::Text(s)
    } else if let Some(bytes) = value.dyn_ref::<Uint8Array>() {
        SqlValue::Blob(bytes.to_vec())
    } else {
        SqlValue::Null
    }
}

impl SqlJsSql {
    /// Wraps an open sql.js database.
    pub fn new(db: SqlJsDatabase) -> Result<Self> {
        let postgres = js_sys::Reflect::get(&db, &"dialect".into())
            .ok()
            .and_then(|d| d.as_string())
            .is_some_and(|d| d == "postgres");
        let dialect = if postgres {
            Dialect::Postgres
        } else {
            Dialect::Sqlite
        };
        let reads_after_commit =
            js_sys::Reflect::get(&db, &"readAfterCommit".into()).is_ok_and(|f| f.is_function());
        let mut sql = SqlJsSql {
            db,
            dialect,
            statements: HashMap::new(),
            reads_after_commit,
        };
        sql.setup_connection()?;
        Ok(sql)
    }

    /// SQLite's per-connection settings; a PostgreSQL driver sets up its own connections.
    fn setup_connection(&mut self) -> Result<()> {
        match self.dialect {
            Dialect::Sqlite => self.execute_script(CONNECTION_SETUP),
            Dialect::Postgres => Ok(()),
        }
    }

    /// The whole database as SQLite file bytes.
    pub fn export(&mut self) -> Result<Vec<u8>> {
        self.clear_cache();
        let bytes = self
            .db
            .export_bytes()
            .map_err(|e| js_err(self.dialect, "exporting the database", e))?;
        self.setup_connection()?;
        Ok(bytes.to_vec())
    }

    fn clear_cache(&mut self) {
        for (_, prepared) in self.statements.drain() {
            prepared.statement.free();
        }
    }

    /// Prepares `sql` into the cache unless it is there.
    fn cache(&mut self, sql: &str) -> Result<()> {
        if !self.statements.contains_key(sql) {
            if self.statements.len() >= MAX_CACHED_STATEMENTS {
                self.clear_cache();
            }
            let statement = self
                .db
                .prepare(sql)
                .map_err(|e| js_err(self.dialect, &format!("preparing `{sql}`"), e))?;
            let at_once = js_sys::Reflect::has(&statement, &"all".into()).unwrap_or(false);
            self.statements
                .insert(sql.to_owned(), Prepared { statement, at_once });
        }
        Ok(())
    }

    /// Binds, steps through every row, and resets the cached statement for `sql`.
    fn run(&mut self, sql: &str, params: &[SqlValue], collect: bool) -> Result<Vec<Row>> {
        self.cache(sql)?;
        let Some(Prepared { statement, at_once }) = self.statements.get(sql) else {
            return Err(Error::storage(
                StorageErrorKind::Other,
                "statement cache lost a statement",
            ));
        };
        let dialect = self.dialect;
        let values = bind_values(params, *at_once);
        if *at_once {
            return if collect {
                let rows = statement
                    .all_rows(&values)
                    .map_err(|e| js_err(dialect, &format!("running `{sql}`"), e))?;
                Ok(rows
                    .iter()
                    .map(|row| Row(row.unchecked_into::<Array>().iter().map(from_js).collect()))
                    .collect())
            } else {
                statement
                    .run_once(&values)
                    .map(|_| Vec::new())
                    .map_err(|e| js_err(dialect, &format!("running `{sql}`"), e))
            };
        }
        let result = (|| {
            statement
                .bind(&values)
                .map_err(|e| js_err(dialect, &format!("binding `{sql}`"), e))?;
            let mut rows = Vec::new();
            while statement
                .step()
                .map_err(|e| js_err(dialect, &format!("running `{sql}`"), e))?
            {
                if collect {
                    let row = statement
                        .get()
                        .map_err(|e| js_err(dialect, &format!("reading `{sql}`"), e))?;
                    rows.push(Row(row.iter().map(from_js).collect()));
                }
            }
            Ok(rows)
        })();
        // Always reset: an unfinished statement would keep the transaction from committing.
        statement.reset();
        result
    }
}

impl Drop for SqlJsSql {
    fn drop(&mut self) {
        self.clear_cache();
    }
}

impl Sql for SqlJsSql {
    fn dialect(&self) -> Dialect {
        self.dialect
    }

    fn prepare(&mut self, sql: &str) -> Result<()> {
        self.cache(sql)
    }

    fn execute(&mut self, sql: &str, params: &[SqlValue]) -> Result<()> {
        self.run(sql, params, false).map(|_| ())
    }

    fn query(&mut self, sql: &str, params: &[SqlValue]) -> Result<Vec<Row>> {
        self.run(sql, params, true)
    }

    fn execute_script(&mut self, sql: &str) -> Result<()> {
        self.db
            .exec_script(sql)
            .map(|_| ())
            .map_err(|e| js_err(self.dialect, "running script", e))
    }

    fn read_after_commit(&mut self, sql: &str, params: &[SqlValue]) {
        if self.reads_after_commit {
            // A hint: a driver that refuses it still answers the query when it comes.
            let _ = self
                .db
                .read_after_commit_js(sql, &bind_values(params, false));
        }
    }
}
