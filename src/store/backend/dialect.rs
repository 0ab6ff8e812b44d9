//! The one place that decides which SQL dialect a statement is written in. A [`Sql`] connection
//! says which database it talks to ([`Sql::dialect`]; SQLite unless it says otherwise) and the
//! store picks, for the few statements that differ, the text written for that database. SQL is
//! always written with `?N` placeholders; a PostgreSQL driver rewrites them to `$N` itself.
//!
//! What differs, and why (measured on PostgreSQL 15/18 against SQLite 3.4x):
//! - transactions: SQLite takes the write lock with `BEGIN IMMEDIATE`; PostgreSQL begins plainly
//!   and serializes writers per conversation with a row lock (`conversations::resolve`,
//!   `conversations::lock`), so different conversations write in parallel;
//! - search: SQLite has FTS4 tables fed in batches (`search_index`); PostgreSQL has a stored
//!   `search_text` with a generated `tsvector` and a trigram index, always up to date
//!   (`search_pg`);
//! - lists of ids travel as one JSON text parameter: `json_each` in SQLite,
//!   `json_array_elements_text` in PostgreSQL;
//! - scalar `MAX(a, b)` is `GREATEST(a, b)`, `group_concat` is `string_agg`, `LIMIT -1` (no
//!   limit) is `LIMIT NULL`;
//! - ids: SQLite's bulk append numbers rows from the table's maximum (deterministic for journal
//!   replay, one writer per file); PostgreSQL ids come from identity sequences only, and a
//!   turn's append finds them by `seq` instead of reading them back (`bulk_pg`);
//! - round trips: where PostgreSQL saves a wait by folding reads into one statement (the stored
//!   identities, and for `commitTurn` the advancement key's record and the host facts, in the
//!   lock statement, `lock_before_append::lock_for_append`; the conversation with
//!   its new items in `assemble`, `context::active_with_newer`; a skipped trigger decision in one
//!   `WITH … INSERT`, `compaction::record_decision`), SQLite keeps its plain statements, which
//!   are as fast or faster in process.
//!
//! Must not: hold state, or be consulted by the engine — the engine never branches on the backend.

/// The SQL dialect of a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dialect {
    /// SQLite, the default.
    #[default]
    Sqlite,
    /// PostgreSQL.
    Postgres,
}

impl Dialect {
    /// The statement that opens a write transaction.
    pub fn begin_write(self) -> &'static str {
        match self {
            Dialect::Sqlite => "BEGIN IMMEDIATE",
            Dialect::Postgres => "BEGIN",
        }
    }

    /// A subquery yielding the integers of a JSON array parameter `?{n}` (one row each).
    pub fn int_list(self, n: usize) -> String {
        match self {
            Dialect::Sqlite => format!("(SELECT value FROM json_each(?{n}))"),
            Dialect::Postgres => format!("(SELECT CAST(value AS bigint) FROM json_array_elements_text(CAST(CAST(?{n} AS text) AS json)))"),
        }
    }

    /// A subquery yielding the strings of a JSON array parameter `?{n}` (one row each).
    pub fn text_list(self, n: usize) -> String {
        match self {
            Dialect::Sqlite => format!("(SELECT value FROM json_each(?{n}))"),
            Dialect::Postgres => format!(
                "(SELECT value FROM json_array_elements_text(CAST(CAST(?{n} AS text) AS json)))"
            ),
        }
    }

    /// The larger of two scalar expressions.
    pub fn greatest(self, a: &str, b: &str) -> String {
        match self {
            Dialect::Sqlite => format!("MAX({a}, {b})"),
            Dialect::Postgres => format!("GREATEST({a}, {b})"),
        }
    }

    /// Whether this is the PostgreSQL dialect.
    pub fn is_postgres(self) -> bool {
        self == Dialect::Postgres
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_dialect_writes_its_own_forms_of_the_statements_that_differ() {
        assert_eq!(Dialect::default(), Dialect::Sqlite);
        assert_eq!(Dialect::Sqlite.begin_write(), "BEGIN IMMEDIATE");
        assert_eq!(Dialect::Postgres.begin_write(), "BEGIN");
        assert!(Dialect::Sqlite.int_list(2).contains("json_each(?2)"));
        assert!(Dialect::Postgres
            .int_list(2)
            .contains("json_array_elements_text(CAST(CAST(?2 AS text) AS json))"));
        assert_eq!(Dialect::Postgres.greatest("a", "?4"), "GREATEST(a, ?4)");
        assert_eq!(Dialect::Sqlite.greatest("a", "?4"), "MAX(a, ?4)");
    }
}
