//! The kind of a backend's failure ([`StorageErrorKind`]), read from the codes the backends
//! really report: SQLite's result codes (rusqlite, node:sqlite's `errcode`), SQLite's own
//! messages where a driver gives nothing else (sql.js), PostgreSQL's SQLSTATE (the native
//! client, the Node driver's `code`) and the Node drivers' own `LOSSLESS_*` codes. Pure, so the
//! wasm backends' reading is tested natively too.

use crate::error::StorageErrorKind;

/// SQLite's primary result codes this file names (sqlite3.h).
const SQLITE_ERROR: i64 = 1;
const SQLITE_PERM: i64 = 3;
const SQLITE_BUSY: i64 = 5;
const SQLITE_LOCKED: i64 = 6;
const SQLITE_READONLY: i64 = 8;
const SQLITE_IOERR: i64 = 10;
const SQLITE_CORRUPT: i64 = 11;
const SQLITE_FULL: i64 = 13;
const SQLITE_CANTOPEN: i64 = 14;
const SQLITE_CONSTRAINT: i64 = 19;
const SQLITE_MISMATCH: i64 = 20;
const SQLITE_NOLFS: i64 = 22;
const SQLITE_RANGE: i64 = 25;
const SQLITE_NOTADB: i64 = 26;

/// The kind of a SQLite result code, primary (`SQLITE_BUSY`) or extended
/// (`SQLITE_CONSTRAINT_UNIQUE`: the low byte is the primary code).
pub fn sqlite_code_kind(code: i64) -> StorageErrorKind {
    match code & 0xff {
        SQLITE_CONSTRAINT => StorageErrorKind::Constraint,
        SQLITE_BUSY | SQLITE_LOCKED => StorageErrorKind::Busy,
        SQLITE_CORRUPT | SQLITE_NOTADB => StorageErrorKind::Corrupt,
        SQLITE_ERROR | SQLITE_RANGE => StorageErrorKind::Dialect,
        SQLITE_PERM | SQLITE_READONLY | SQLITE_IOERR | SQLITE_FULL | SQLITE_CANTOPEN
        | SQLITE_NOLFS => StorageErrorKind::Io,
        SQLITE_MISMATCH => StorageErrorKind::Data,
        _ => StorageErrorKind::Other,
    }
}

/// The name of a SQLite result code's primary code (`SQLITE_BUSY`), or its number.
pub fn sqlite_code_name(code: i64) -> String {
    let name = match code & 0xff {
        SQLITE_ERROR => "SQLITE_ERROR",
        SQLITE_PERM => "SQLITE_PERM",
        SQLITE_BUSY => "SQLITE_BUSY",
        SQLITE_LOCKED => "SQLITE_LOCKED",
        SQLITE_READONLY => "SQLITE_READONLY",
        SQLITE_IOERR => "SQLITE_IOERR",
        SQLITE_CORRUPT => "SQLITE_CORRUPT",
        SQLITE_FULL => "SQLITE_FULL",
        SQLITE_CANTOPEN => "SQLITE_CANTOPEN",
        SQLITE_CONSTRAINT => "SQLITE_CONSTRAINT",
        SQLITE_MISMATCH => "SQLITE_MISMATCH",
        SQLITE_NOLFS => "SQLITE_NOLFS",
        SQLITE_RANGE => "SQLITE_RANGE",
        SQLITE_NOTADB => "SQLITE_NOTADB",
        _ => return code.to_string(),
    };
    name.to_owned()
}

/// The kind of a SQLite error known only by its message (`sqlite3_errmsg`, which sql.js throws
/// as an `Error`'s message): the standard texts of the result codes, and the usual wording of a
/// statement SQLite rejects.
pub fn sqlite_message_kind(message: &str) -> StorageErrorKind {
    let m = message.to_ascii_lowercase();
    let has = |needle: &str| m.contains(needle);
    if has("constraint failed") {
        StorageErrorKind::Constraint
    } else if has("database is locked") || has("database table is locked") {
        StorageErrorKind::Busy
    } else if has("database disk image is malformed") || has("file is not a database") {
        StorageErrorKind::Corrupt
    } else if has("disk i/o error")
        || has("database or disk is full")
        || has("unable to open database file")
        || has("readonly database")
    {
        StorageErrorKind::Io
    } else if has("syntax error")
        || has("no such ")
        || has("unrecognized token")
        || has("has no column named")
        || has("sql logic error")
    {
        StorageErrorKind::Dialect
    } else if has("datatype mismatch") {
        StorageErrorKind::Data
    } else {
        StorageErrorKind::Other
    }
}

/// Whether `code` has the shape of a SQLSTATE (five digits or capitals).
pub fn is_sqlstate(code: &str) -> bool {
    code.len() == 5
        && code
            .bytes()
            .all(|b| b.is_ascii_digit() || b.is_ascii_uppercase())
}

/// The kind of a PostgreSQL SQLSTATE.
pub fn sqlstate_kind(code: &str) -> StorageErrorKind {
    let class = code.get(..2).unwrap_or("");
    match (class, code) {
        ("23", _) => StorageErrorKind::Constraint,
        (_, "55P03" | "55006" | "40001" | "40P01") => StorageErrorKind::Busy,
        (_, "XX001" | "XX002") => StorageErrorKind::Corrupt,
        ("42", _) | (_, "0A000") => StorageErrorKind::Dialect,
        ("08" | "53" | "58", _) | (_, "57P01" | "57P02" | "57P03") => StorageErrorKind::Io,
        ("22", _) => StorageErrorKind::Data,
        _ => StorageErrorKind::Other,
    }
}

/// The SQLSTATE in a message the PostgreSQL drivers write (`PostgreSQL ERROR 23505: …`), for an
/// error that reached us without its `code`.
pub fn sqlstate_in_message(message: &str) -> Option<&str> {
    let rest = &message[message.find("PostgreSQL ")? + "PostgreSQL ".len()..];
    let mut words = rest.splitn(3, ' ');
    let _severity = words.next()?;
    let code = words.next()?.strip_suffix(':')?;
    is_sqlstate(code).then_some(code)
}

/// The kind of a failure the Node drivers report with a code of their own
/// (`js-shim/postgres/io-thread-main.js`, `js-shim/node/sqlite.js`), if `code` is one.
pub fn driver_code_kind(code: &str) -> Option<StorageErrorKind> {
    match code {
        "LOSSLESS_POSTGRES_LOCKED" | "LOSSLESS_DATABASE_LOCKED" => Some(StorageErrorKind::Busy),
        "LOSSLESS_POSTGRES_BROKEN" | "LOSSLESS_POSTGRES_CONNECT" => Some(StorageErrorKind::Io),
        _ if code.starts_with("LOSSLESS_") => Some(StorageErrorKind::Other),
        _ => None,
    }
}

/// A failure as a JS driver reports it: the `code` property (a SQLSTATE from PostgreSQL, a
/// `LOSSLESS_*` code, node:sqlite's `ERR_SQLITE_ERROR`), node:sqlite's numeric `errcode`, and
/// the message. Returns the kind and the code to keep (a SQLSTATE, a `LOSSLESS_*` code or a
/// SQLite result code's name). `postgres` says whether the connection is a PostgreSQL one, whose
/// five-letter codes are SQLSTATEs (a Node system error's `EPERM` is not).
pub fn js_failure_kind(
    postgres: bool,
    code: Option<&str>,
    errcode: Option<i64>,
    message: &str,
) -> (StorageErrorKind, Option<String>) {
    if let Some(code) = code {
        if let Some(kind) = driver_code_kind(code) {
            return (kind, Some(code.to_owned()));
        }
        if postgres && is_sqlstate(code) {
            return (sqlstate_kind(code), Some(code.to_owned()));
        }
    }
    if postgres {
        return match sqlstate_in_message(message) {
            Some(state) => (sqlstate_kind(state), Some(state.to_owned())),
            None => (StorageErrorKind::Other, code.map(str::to_owned)),
        };
    }
    match errcode {
        Some(errcode) => (sqlite_code_kind(errcode), Some(sqlite_code_name(errcode))),
        None => (sqlite_message_kind(message), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use StorageErrorKind::*;

    #[test]
    fn sqlite_codes_primary_and_extended() {
        assert_eq!(sqlite_code_kind(19), Constraint);
        assert_eq!(
            sqlite_code_kind(2067),
            Constraint,
            "SQLITE_CONSTRAINT_UNIQUE"
        );
        assert_eq!(sqlite_code_kind(5), Busy);
        assert_eq!(sqlite_code_kind(6), Busy);
        assert_eq!(sqlite_code_kind(11), Corrupt);
        assert_eq!(sqlite_code_kind(26), Corrupt);
        assert_eq!(sqlite_code_kind(1), Dialect);
        assert_eq!(sqlite_code_kind(10), Io);
        assert_eq!(sqlite_code_kind(3850), Io, "SQLITE_IOERR_LOCK");
        assert_eq!(sqlite_code_kind(7), Other, "SQLITE_NOMEM");
        assert_eq!(sqlite_code_name(2067), "SQLITE_CONSTRAINT");
        assert_eq!(sqlite_code_name(7), "7");
    }

    #[test]
    fn sqlite_messages_as_sqljs_throws_them() {
        assert_eq!(
            sqlite_message_kind("UNIQUE constraint failed: t.x"),
            Constraint
        );
        assert_eq!(
            sqlite_message_kind("FOREIGN KEY constraint failed"),
            Constraint
        );
        assert_eq!(sqlite_message_kind("database is locked"), Busy);
        assert_eq!(sqlite_message_kind("file is not a database"), Corrupt);
        assert_eq!(
            sqlite_message_kind("database disk image is malformed"),
            Corrupt
        );
        assert_eq!(sqlite_message_kind("disk I/O error"), Io);
        assert_eq!(sqlite_message_kind("near \"SELEC\": syntax error"), Dialect);
        assert_eq!(sqlite_message_kind("no such table: nowhere"), Dialect);
        assert_eq!(sqlite_message_kind("out of memory"), Other);
    }

    #[test]
    fn sqlstates_by_class_and_code() {
        assert_eq!(sqlstate_kind("23505"), Constraint);
        assert_eq!(sqlstate_kind("23503"), Constraint);
        assert_eq!(sqlstate_kind("55P03"), Busy);
        assert_eq!(sqlstate_kind("40P01"), Busy);
        assert_eq!(sqlstate_kind("XX001"), Corrupt);
        assert_eq!(sqlstate_kind("42P01"), Dialect);
        assert_eq!(sqlstate_kind("0A000"), Dialect);
        assert_eq!(sqlstate_kind("08006"), Io);
        assert_eq!(sqlstate_kind("57P01"), Io);
        assert_eq!(sqlstate_kind("22P02"), Data);
        assert_eq!(sqlstate_kind("LW409"), Other);
    }

    #[test]
    fn js_failures_from_each_driver() {
        // The PostgreSQL driver: the SQLSTATE as `code`, or only in the message.
        assert_eq!(
            js_failure_kind(
                true,
                Some("23505"),
                None,
                "PostgreSQL ERROR 23505: duplicate key"
            ),
            (Constraint, Some("23505".to_owned()))
        );
        assert_eq!(
            js_failure_kind(
                true,
                None,
                None,
                "PostgreSQL ERROR LW409: conversation 3 changed"
            ),
            (Other, Some("LW409".to_owned()))
        );
        assert_eq!(
            js_failure_kind(true, Some("LOSSLESS_POSTGRES_LOCKED"), None, "held a lock"),
            (Busy, Some("LOSSLESS_POSTGRES_LOCKED".to_owned()))
        );
        assert_eq!(
            js_failure_kind(true, Some("LOSSLESS_POSTGRES_BROKEN"), None, "broke").0,
            Io
        );
        // node:sqlite: `ERR_SQLITE_ERROR` and the extended result code.
        assert_eq!(
            js_failure_kind(
                false,
                Some("ERR_SQLITE_ERROR"),
                Some(2067),
                "UNIQUE constraint failed: t.x"
            ),
            (Constraint, Some("SQLITE_CONSTRAINT".to_owned()))
        );
        assert_eq!(
            js_failure_kind(
                false,
                Some("LOSSLESS_DATABASE_LOCKED"),
                None,
                "still locked"
            )
            .0,
            Busy
        );
        // sql.js: the message alone; a five-letter system code is not a SQLSTATE on SQLite.
        assert_eq!(
            js_failure_kind(false, None, None, "database is locked"),
            (Busy, None)
        );
        assert_eq!(
            js_failure_kind(false, Some("EPERM"), None, "disk I/O error").0,
            Io
        );
    }

    #[test]
    fn sqlstate_in_a_driver_message() {
        assert_eq!(
            sqlstate_in_message("PostgreSQL ERROR 23505: duplicate key value"),
            Some("23505")
        );
        assert_eq!(
            sqlstate_in_message("x; PostgreSQL FATAL 57P01: terminating"),
            Some("57P01")
        );
        assert_eq!(sqlstate_in_message("PostgreSQL: connection closed"), None);
        assert_eq!(sqlstate_in_message("database is locked"), None);
    }
}
