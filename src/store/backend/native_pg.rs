//! The native PostgreSQL backend (the synchronous `postgres` crate), so the store's SQL is tested
//! natively against a real server as it is against SQLite. Behind the `postgres` cargo feature:
//! neither the default native build nor the wasm build carries it. The Node product reaches
//! PostgreSQL through the JS shim instead.
//!
//! What a driver for this seam must do, and this one does:
//! - rewrite the store's `?N` placeholders to PostgreSQL's `$N` (outside quotes and comments);
//! - bind each [`SqlValue`] as whatever type the server inferred for its placeholder (an integer
//!   into an `int4`, `text` or `bool` slot, text into `bytea`...), since the store's values are
//!   SQLite-typed;
//! - read every column back as a [`SqlValue`]: integers and `numeric` (what `SUM(bigint)` gives)
//!   as `Int`, booleans as 0/1 (as SQLite has them), `bytea` as `Blob`;
//! - name the failing statement's SQLSTATE and message in its errors, never the connection string
//!   (it holds the password);
//! - never wait without end: [`PgTimeouts`] bounds the connection's set-up, each lock wait and
//!   each statement, and TCP keepalives end a connection to a server that has gone silent.
//!
//! Must not: decide anything about the dialect beyond the placeholders (that is `store::dialect`).

use std::collections::HashMap;
use std::error::Error as StdError;
use std::sync::mpsc;
use std::time::Duration;

use postgres::types::{to_sql_checked, FromSql, IsNull, ToSql, Type};
use postgres::{Client, Config, NoTls, Statement};

use crate::error::{Error, Result, StorageError, StorageErrorKind};
use crate::store::dialect::Dialect;
use crate::store::error_codes::sqlstate_kind;
use crate::store::sql::{Row, Sql, SqlValue};

/// Prepared statements kept per connection; past this many the cache starts over (dynamic search
/// statements would otherwise grow it without bound).
const STATEMENT_CACHE: usize = 256;

/// How long a connection waits, at most. The defaults are the Node product's
/// (`js-shim/postgres/database.js`: a 10 s connection set-up, a 30 s lock wait, the lock wait plus 60 s
/// for any statement).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PgTimeouts {
    /// Connecting and the start-up exchange, all of it: a server that accepts the connection and
    /// never answers is given up after this long.
    pub connect: Duration,
    /// A wait for a lock another connection holds (the server's `lock_timeout`; SQLSTATE 55P03).
    /// Zero fails at once.
    pub lock: Duration,
    /// Any one statement (the server's `statement_timeout`; SQLSTATE 57014).
    pub statement: Duration,
}

impl Default for PgTimeouts {
    fn default() -> Self {
        PgTimeouts {
            connect: Duration::from_secs(10),
            lock: Duration::from_secs(30),
            statement: Duration::from_secs(90),
        }
    }
}

/// Probes of an idle connection (waiting for an answer counts as idle): a server that went away
/// without closing it, or a network that stopped carrying it, ends the connection after about
/// `KEEPALIVE_IDLE + KEEPALIVE_INTERVAL * KEEPALIVE_RETRIES` instead of never.
const KEEPALIVE_IDLE: Duration = Duration::from_secs(10);
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(5);
const KEEPALIVE_RETRIES: u32 = 3;
/// Sent data left unacknowledged this long ends the connection (Linux; elsewhere ignored).
const TCP_USER_TIMEOUT: Duration = Duration::from_secs(30);

/// The server settings for `timeouts`, ahead of any the connection string asks for (which win).
fn server_options(timeouts: &PgTimeouts, from_url: Option<&str>) -> String {
    // lock_timeout 0 means "no limit" to PostgreSQL; 1 ms is as close to "at once" as it has.
    let lock_ms = timeouts.lock.as_millis().max(1);
    let statement_ms = timeouts.statement.as_millis().max(1);
    let ours = format!("-c lock_timeout={lock_ms} -c statement_timeout={statement_ms}");
    match from_url {
        Some(theirs) if !theirs.trim().is_empty() => format!("{ours} {theirs}"),
        _ => ours,
    }
}

/// A PostgreSQL connection with a prepared-statement cache.
pub struct PgSql {
    client: Client,
    statements: HashMap<String, Statement>,
}

/// A connection string with its password replaced, for messages and logs.
pub fn redacted(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return "<connection string>".to_owned();
    };
    let rest = &url[scheme_end + 3..];
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => match rest[..at].find(':') {
            Some(colon) => format!(
                "{}{}:***{}",
                &url[..scheme_end + 3],
                &rest[..colon],
                &rest[at..]
            ),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

/// The client's error as a [`StorageError`]: a server's error by its SQLSTATE; the client's own
/// (a closed connection, a socket error) as I/O.
fn storage_failure(err: postgres::Error) -> StorageError {
    match err.as_db_error() {
        Some(db) => {
            let detail = db.detail().map(|d| format!(" ({d})")).unwrap_or_default();
            let code = db.code().code();
            StorageError::new(
                sqlstate_kind(code),
                format!(
                    "PostgreSQL {} {code}: {}{detail}",
                    db.severity(),
                    db.message()
                ),
            )
            .with_code(code)
        }
        None => {
            let io = err.is_closed()
                || err
                    .source()
                    .is_some_and(|source| source.is::<std::io::Error>());
            let kind = if io {
                StorageErrorKind::Io
            } else {
                StorageErrorKind::Other
            };
            StorageError::new(kind, format!("PostgreSQL: {err}"))
        }
    }
}

fn storage_err(err: postgres::Error) -> Error {
    storage_failure(err).into()
}

impl PgSql {
    /// Connects to `url` (`postgres://user:password@host:port/db`) with the default
    /// [`PgTimeouts`]. An error names the server with its password hidden.
    pub fn connect(url: &str) -> Result<Self> {
        Self::connect_with(url, PgTimeouts::default())
    }

    /// Connects to `url` with `timeouts`. An error names the server with its password hidden.
    pub fn connect_with(url: &str, timeouts: PgTimeouts) -> Result<Self> {
        let failed = |kind: StorageErrorKind, why: String| -> Error {
            StorageError::new(kind, why)
                .with_context(format!("cannot connect to PostgreSQL at {}", redacted(url)))
                .into()
        };
        // The parser's errors name an option or a value's kind, never the value.
        let mut config: Config = url.parse().map_err(|err: postgres::Error| {
            failed(
                StorageErrorKind::Other,
                format!("invalid connection string ({err})"),
            )
        })?;
        let options = server_options(&timeouts, config.get_options());
        config
            .options(&options)
            .connect_timeout(timeouts.connect)
            .keepalives(true)
            .keepalives_idle(KEEPALIVE_IDLE)
            .keepalives_interval(KEEPALIVE_INTERVAL)
            .keepalives_retries(KEEPALIVE_RETRIES)
            .tcp_user_timeout(TCP_USER_TIMEOUT);
        // The driver bounds only the socket's connect; the start-up exchange after it could wait
        // for ever on a server that accepts and stays silent. So the whole set-up runs on a
        // thread given `timeouts.connect`; one that overruns is left to end with its socket.
        let (done, outcome) = mpsc::channel();
        std::thread::Builder::new()
            .name("lossless-wasm-pg-connect".to_owned())
            .spawn(move || {
                let _ = done.send(config.connect(NoTls));
            })
            .map_err(|err| {
                failed(
                    StorageErrorKind::Other,
                    format!("cannot start the connecting thread ({err})"),
                )
            })?;
        let client = match outcome.recv_timeout(timeouts.connect) {
            Ok(Ok(client)) => client,
            Ok(Err(err)) => {
                // A refused connection is an I/O failure whatever the client calls it; a
                // server's answer (a wrong password, a missing database) keeps its SQLSTATE.
                let failure = storage_failure(err);
                let kind = match failure.kind() {
                    StorageErrorKind::Other => StorageErrorKind::Io,
                    kind => kind,
                };
                let why = format!("storage error: {failure}");
                let error = StorageError::new(kind, why)
                    .with_context(format!("cannot connect to PostgreSQL at {}", redacted(url)));
                return Err(match failure.code() {
                    Some(code) => error.with_code(code),
                    None => error,
                }
                .into());
            }
            Err(_) => {
                return Err(failed(
                    StorageErrorKind::Io,
                    format!("no answer within {} ms", timeouts.connect.as_millis()),
                ))
            }
        };
        Ok(PgSql {
            client,
            statements: HashMap::new(),
        })
    }

    /// Connects with the default [`PgTimeouts`] and works inside `schema` (created when
    /// missing), ahead of `public`, where the extensions live: a fresh, empty store per test on
    /// one server.
    pub fn connect_in_schema(url: &str, schema: &str) -> Result<Self> {
        Self::connect_in_schema_with(url, schema, PgTimeouts::default())
    }

    /// [`Self::connect_in_schema`] with `timeouts`.
    pub fn connect_in_schema_with(url: &str, schema: &str, timeouts: PgTimeouts) -> Result<Self> {
        if !schema
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            return Err(Error::storage(
                StorageErrorKind::Other,
                format!("schema name {schema:?} must be letters, digits and _"),
            ));
        }
        let mut sql = Self::connect_with(url, timeouts)?;
        // `IF NOT EXISTS` alone races (two gateways opening a new store at once: one fails on the
        // catalog's unique index), so the creation runs under the migrations' advisory lock.
        sql.execute_script(&format!(
            "BEGIN; SELECT pg_advisory_xact_lock({}); CREATE SCHEMA IF NOT EXISTS {schema}; COMMIT; SET search_path = {schema}, public;",
            crate::store::schema::POSTGRES_MIGRATION_LOCK
        ))?;
        Ok(sql)
    }

    fn statement(&mut self, sql: &str) -> Result<Statement> {
        if let Some(statement) = self.statements.get(sql) {
            return Ok(statement.clone());
        }
        if self.statements.len() >= STATEMENT_CACHE {
            self.statements.clear();
        }
        let statement = self
            .client
            .prepare(&numbered_placeholders(sql))
            .map_err(storage_err)?;
        self.statements.insert(sql.to_owned(), statement.clone());
        Ok(statement)
    }
}

/// Rewrites `?N` to `$N` outside string literals, quoted identifiers and comments. (SQLite
/// accepts `$N` too but binds it by order of first appearance, so the store never writes it.)
pub fn numbered_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {
                out.push(c);
                for d in chars.by_ref() {
                    out.push(d);
                    if d == c {
                        break;
                    }
                }
            }
            '-' if chars.peek() == Some(&'-') => {
                out.push(c);
                for d in chars.by_ref() {
                    out.push(d);
                    if d == '\n' {
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                out.push(c);
                let mut last = ' ';
                for d in chars.by_ref() {
                    out.push(d);
                    if last == '*' && d == '/' {
                        break;
                    }
                    last = d;
                }
            }
            '?' if chars.peek().is_some_and(char::is_ascii_digit) => out.push('$'),
            _ => out.push(c),
        }
    }
    out
}

/// A value bound as the type the server inferred for its placeholder.
#[derive(Debug)]
struct Param<'a>(&'a SqlValue);

type BoxError = Box<dyn StdError + Sync + Send>;

impl ToSql for Param<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut postgres::types::private::BytesMut,
    ) -> std::result::Result<IsNull, BoxError> {
        let text_slot = matches!(
            *ty,
            Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN
        );
        match self.0 {
            SqlValue::Null => Ok(IsNull::Yes),
            SqlValue::Int(v) => match *ty {
                Type::INT8 => v.to_sql(ty, out),
                Type::INT4 => i32::try_from(*v)?.to_sql(ty, out),
                Type::INT2 => i16::try_from(*v)?.to_sql(ty, out),
                Type::FLOAT8 => (*v as f64).to_sql(ty, out),
                Type::FLOAT4 => (*v as f32).to_sql(ty, out),
                Type::BOOL => (*v != 0).to_sql(ty, out),
                _ if text_slot => v.to_string().as_str().to_sql(&Type::TEXT, out),
                _ => Err(format!("cannot bind an integer as {ty}").into()),
            },
            SqlValue::Real(v) => match *ty {
                Type::FLOAT8 => v.to_sql(ty, out),
                Type::FLOAT4 => (*v as f32).to_sql(ty, out),
                _ if text_slot => v.to_string().as_str().to_sql(&Type::TEXT, out),
                _ => Err(format!("cannot bind a real number as {ty}").into()),
            },
            SqlValue::Text(v) => match *ty {
                Type::BYTEA => v.as_bytes().to_sql(ty, out),
                Type::JSON => {
                    out.extend_from_slice(v.as_bytes());
                    Ok(IsNull::No)
                }
                Type::JSONB => {
                    out.extend_from_slice(&[1]);
                    out.extend_from_slice(v.as_bytes());
                    Ok(IsNull::No)
                }
                Type::INT8 => v.parse::<i64>()?.to_sql(ty, out),
                _ if text_slot => v.as_str().to_sql(&Type::TEXT, out),
                _ => Err(format!("cannot bind text as {ty}").into()),
            },
            SqlValue::Blob(v) => match *ty {
                Type::BYTEA => v.as_slice().to_sql(ty, out),
                _ if text_slot => std::str::from_utf8(v)?.to_sql(&Type::TEXT, out),
                _ => Err(format!("cannot bind a blob as {ty}").into()),
            },
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

/// A column read back as a [`SqlValue`].
struct Column(SqlValue);

impl<'a> FromSql<'a> for Column {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> std::result::Result<Self, BoxError> {
        let value = match *ty {
            Type::INT8 => SqlValue::Int(i64::from_sql(ty, raw)?),
            Type::INT4 => SqlValue::Int(i32::from_sql(ty, raw)?.into()),
            Type::INT2 => SqlValue::Int(i16::from_sql(ty, raw)?.into()),
            Type::OID => SqlValue::Int(u32::from_sql(ty, raw)?.into()),
            Type::BOOL => SqlValue::Int(bool::from_sql(ty, raw)?.into()),
            Type::FLOAT8 => SqlValue::Real(f64::from_sql(ty, raw)?),
            Type::FLOAT4 => SqlValue::Real(f32::from_sql(ty, raw)?.into()),
            Type::NUMERIC => numeric(raw)?,
            Type::BYTEA => SqlValue::Blob(raw.to_vec()),
            Type::JSONB => {
                SqlValue::Text(std::str::from_utf8(raw.get(1..).unwrap_or_default())?.to_owned())
            }
            Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN | Type::JSON => {
                SqlValue::Text(std::str::from_utf8(raw)?.to_owned())
            }
            Type::VOID => SqlValue::Null,
            _ => return Err(format!("cannot read a column of type {ty}").into()),
        };
        Ok(Column(value))
    }

    fn from_sql_null(_: &Type) -> std::result::Result<Self, BoxError> {
        Ok(Column(SqlValue::Null))
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

/// A `numeric` in its binary form (sign, base-10000 digits, weight, display scale): an integer
/// when it has no fraction and fits, else the nearest real.
fn numeric(raw: &[u8]) -> std::result::Result<SqlValue, BoxError> {
    let word = |i: usize| -> std::result::Result<i16, BoxError> {
        let bytes = raw.get(i * 2..i * 2 + 2).ok_or("numeric value cut short")?;
        Ok(i16::from_be_bytes([bytes[0], bytes[1]]))
    };
    let (ndigits, weight, sign, scale) = (word(0)?, word(1)?, word(2)? as u16, word(3)?);
    if sign == 0xC000 {
        return Ok(SqlValue::Real(f64::NAN));
    }
    let mut integer: i128 = 0;
    let mut real = 0f64;
    let mut integral = scale == 0;
    for i in 0..ndigits.max(0) as usize {
        let digit = word(4 + i)?;
        let power = i32::from(weight) - i as i32;
        real += f64::from(digit) * 10000f64.powi(power);
        if power < 0 {
            integral &= digit == 0;
        } else {
            integer = integer.saturating_add(
                i128::from(digit).saturating_mul(10000i128.saturating_pow(power as u32)),
            );
        }
    }
    let negative = sign == 0x4000;
    if integral {
        if let Ok(v) = i64::try_from(if negative { -integer } else { integer }) {
            return Ok(SqlValue::Int(v));
        }
    }
    Ok(SqlValue::Real(if negative { -real } else { real }))
}

impl Sql for PgSql {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn prepare(&mut self, sql: &str) -> Result<()> {
        self.statement(sql).map(drop)
    }

    fn execute(&mut self, sql: &str, params: &[SqlValue]) -> Result<()> {
        let statement = self.statement(sql)?;
        let params: Vec<Param<'_>> = params.iter().map(Param).collect();
        let refs: Vec<&(dyn ToSql + Sync)> =
            params.iter().map(|p| p as &(dyn ToSql + Sync)).collect();
        self.client
            .execute(&statement, &refs)
            .map(drop)
            .map_err(storage_err)
    }

    fn query(&mut self, sql: &str, params: &[SqlValue]) -> Result<Vec<Row>> {
        let statement = self.statement(sql)?;
        let params: Vec<Param<'_>> = params.iter().map(Param).collect();
        let refs: Vec<&(dyn ToSql + Sync)> =
            params.iter().map(|p| p as &(dyn ToSql + Sync)).collect();
        let rows = self.client.query(&statement, &refs).map_err(storage_err)?;
        rows.iter()
            .map(|row| {
                (0..row.len())
                    .map(|i| {
                        row.try_get::<_, Column>(i).map(|c| c.0).map_err(|err| {
                            // The server's value is not one a column of ours can hold.
                            let failure = storage_failure(err);
                            StorageError::new(StorageErrorKind::Data, failure.detail()).into()
                        })
                    })
                    .collect::<Result<Vec<_>>>()
                    .map(Row)
            })
            .collect()
    }

    fn execute_script(&mut self, sql: &str) -> Result<()> {
        self.client.batch_execute(sql).map_err(storage_err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_renumbered_outside_quotes_and_comments() {
        assert_eq!(
            numbered_placeholders("SELECT ?1, '?2', \"?3\" -- ?4\n, ?10 /* ?5 */"),
            "SELECT $1, '?2', \"?3\" -- ?4\n, $10 /* ?5 */"
        );
        assert_eq!(
            numbered_placeholders("SELECT '??' || ?"),
            "SELECT '??' || ?"
        );
    }

    #[test]
    fn a_connection_string_is_shown_without_its_password() {
        assert_eq!(
            redacted("postgres://lcm:s3cret@db.example:5432/lcm"),
            "postgres://lcm:***@db.example:5432/lcm"
        );
        assert_eq!(redacted("postgres://lcm@db/lcm"), "postgres://lcm@db/lcm");
        assert_eq!(redacted("host=db password=x"), "<connection string>");
    }

    #[test]
    fn the_timeouts_go_to_the_server_ahead_of_the_connection_strings_own_options() {
        let short = PgTimeouts {
            lock: Duration::ZERO,
            statement: Duration::from_millis(2_500),
            ..PgTimeouts::default()
        };
        assert_eq!(
            server_options(&short, None),
            "-c lock_timeout=1 -c statement_timeout=2500"
        );
        assert_eq!(
            server_options(&PgTimeouts::default(), Some("-c lock_timeout=5s")),
            "-c lock_timeout=30000 -c statement_timeout=90000 -c lock_timeout=5s"
        );
    }

    #[test]
    fn numerics_read_back_as_integers_when_integral() {
        // 123456789 = 1|2345|6789 in base 10000, weight 2.
        let raw = [0, 3, 0, 2, 0, 0, 0, 0, 0, 1, 0x09, 0x29, 0x1a, 0x85];
        assert_eq!(numeric(&raw).unwrap(), SqlValue::Int(123_456_789));
        let zero = [0, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(numeric(&zero).unwrap(), SqlValue::Int(0));
        // -1.5: digits 1|5000, weight 0, scale 1.
        let half = [0, 2, 0, 0, 0x40, 0, 0, 1, 0, 1, 0x13, 0x88];
        assert_eq!(numeric(&half).unwrap(), SqlValue::Real(-1.5));
    }
}
