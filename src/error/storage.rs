//! Storage errors as a type: what kind of failure the database reported (or what our own check of
//! its contents found), the backend's code when it gave one, and what was being done. The kind is
//! read from the backend's real codes where they are made (`store::backend::error_codes`), so a
//! caller can tell a lock held by another writer from a broken file without reading the message.

use std::fmt;

/// The kinds of storage failure, few enough that a caller can act on each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StorageErrorKind {
    /// A row broke a constraint: a unique key, a foreign key, a check, a NOT NULL (SQLite
    /// `SQLITE_CONSTRAINT`, PostgreSQL class 23).
    Constraint,
    /// Another connection holds a lock this one needs, or the server gave up on a conflict
    /// (SQLite `SQLITE_BUSY`/`SQLITE_LOCKED`, PostgreSQL 55P03, 40001, 40P01); trying again later
    /// may work.
    Busy,
    /// The database file or an index is damaged, or the file is not a database at all (SQLite
    /// `SQLITE_CORRUPT`/`SQLITE_NOTADB`, PostgreSQL XX001/XX002).
    Corrupt,
    /// The backend rejected the statement itself: a syntax error, a missing table, column or
    /// function, a feature this backend lacks (SQLite `SQLITE_ERROR`, PostgreSQL class 42 and
    /// 0A000).
    Dialect,
    /// The database could not be reached, read or written: a file that cannot be opened, a full
    /// or read-only disk, a PostgreSQL server that is unreachable or dropped the connection.
    Io,
    /// The database answered, but what it holds is not what this build expects: a column of
    /// another type, JSON that does not parse, a row that vanished, a schema from a newer
    /// version.
    Data,
    /// None of the above: a backend code with no kind here, an internal invariant, an encoding
    /// failure.
    Other,
}

impl StorageErrorKind {
    /// A stable lower-case name (`constraint`, `busy`, …), for logs and codes.
    pub fn name(self) -> &'static str {
        match self {
            StorageErrorKind::Constraint => "constraint",
            StorageErrorKind::Busy => "busy",
            StorageErrorKind::Corrupt => "corrupt",
            StorageErrorKind::Dialect => "dialect",
            StorageErrorKind::Io => "io",
            StorageErrorKind::Data => "data",
            StorageErrorKind::Other => "other",
        }
    }
}

impl fmt::Display for StorageErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One storage failure. Its text is `context: detail` (or the detail alone), the wording the
/// store has always used; [`crate::error::Error`] puts `storage error: ` in front.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StorageError {
    kind: StorageErrorKind,
    code: Option<String>,
    context: Option<String>,
    detail: String,
}

impl StorageError {
    /// A failure of `kind` described by `detail`.
    pub fn new(kind: StorageErrorKind, detail: impl Into<String>) -> Self {
        StorageError {
            kind,
            code: None,
            context: None,
            detail: detail.into(),
        }
    }

    /// The same failure with the backend's own code (a SQLSTATE such as `23505`, a SQLite
    /// result code such as `SQLITE_BUSY`).
    pub fn with_code(mut self, code: impl Into<String>) -> Self {
        self.code = Some(code.into());
        self
    }

    /// The same failure, saying what was being done when it happened (printed before the
    /// detail: `running \`SELECT …\`: no such table: x`).
    pub fn with_context(mut self, context: impl Into<String>) -> Self {
        self.context = Some(context.into());
        self
    }

    /// What kind of failure this is, for the caller's decision to retry or give up.
    pub fn kind(&self) -> StorageErrorKind {
        self.kind
    }

    /// The backend's code, when it gave one.
    pub fn code(&self) -> Option<&str> {
        self.code.as_deref()
    }

    /// What was being done, when the failure says.
    pub fn context(&self) -> Option<&str> {
        self.context.as_deref()
    }

    /// What went wrong, as the backend or the check put it.
    pub fn detail(&self) -> &str {
        &self.detail
    }
}

impl fmt::Display for StorageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.context {
            Some(context) => write!(f, "{context}: {}", self.detail),
            None => f.write_str(&self.detail),
        }
    }
}

impl std::error::Error for StorageError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_is_the_context_then_the_detail() {
        let bare = StorageError::new(StorageErrorKind::Busy, "database is locked");
        assert_eq!(bare.to_string(), "database is locked");
        let placed = bare
            .with_context("running `COMMIT`")
            .with_code("SQLITE_BUSY");
        assert_eq!(placed.to_string(), "running `COMMIT`: database is locked");
        assert_eq!(placed.kind(), StorageErrorKind::Busy);
        assert_eq!(placed.code(), Some("SQLITE_BUSY"));
        assert_eq!(placed.context(), Some("running `COMMIT`"));
        assert_eq!(placed.detail(), "database is locked");
    }

    #[test]
    fn every_kind_has_its_own_name() {
        let kinds = [
            StorageErrorKind::Constraint,
            StorageErrorKind::Busy,
            StorageErrorKind::Corrupt,
            StorageErrorKind::Dialect,
            StorageErrorKind::Io,
            StorageErrorKind::Data,
            StorageErrorKind::Other,
        ];
        let names: std::collections::HashSet<_> = kinds.iter().map(|k| k.name()).collect();
        assert_eq!(names.len(), kinds.len());
    }
}
