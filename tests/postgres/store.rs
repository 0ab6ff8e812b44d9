//! The storage suite (`store_cases`) on PostgreSQL, for the cases that are about behaviour rather
//! than SQLite's own files (FTS4 tables, `sqlite_master`, SQLite migrations), each on a fresh
//! schema of a real server. Run: `bash scripts/pg-server.sh run cargo test --features postgres --test postgres store::`.

use crate::pg;

#[allow(dead_code)]
#[path = "../store_cases/mod.rs"]
mod store_cases;

macro_rules! pg_case {
    ($name:ident) => {
        #[test]
        fn $name() {
            store_cases::$name(pg::fresh);
        }
    };
}

pg_case!(a_newer_schema_is_refused_not_downgraded);
pg_case!(huge_messages_and_nul_bytes_are_stored_intact);
pg_case!(search_finds_words_cjk_and_rejects_bad_fts_syntax);
pg_case!(duplicate_tool_call_ids_and_parts_are_recorded);
pg_case!(literal_search_finds_quotes_backslashes_newlines_cjk_and_tool_arguments);
pg_case!(literal_search_answers_what_a_scan_of_every_text_answers);
pg_case!(a_pattern_found_only_inside_words_costs_one_page_per_source);

/// A unique violation on a real server reads as a constraint failure, with its SQLSTATE.
#[test]
fn a_unique_violation_is_a_constraint_failure() {
    use lossless_wasm::error::{Error, StorageErrorKind};
    use lossless_wasm::store::Sql;

    let mut sql = pg::fresh();
    sql.execute_script("CREATE TABLE t (x bigint UNIQUE); INSERT INTO t (x) VALUES (1);")
        .unwrap();
    let err = sql
        .execute("INSERT INTO t (x) VALUES (?1)", &[1i64.into()])
        .unwrap_err();
    assert!(err.to_string().contains("PostgreSQL ERROR 23505:"), "{err}");
    let Error::Storage(failure) = err else {
        panic!("expected a storage error, got {err:?}");
    };
    assert_eq!(failure.kind(), StorageErrorKind::Constraint);
    assert_eq!(failure.code(), Some("23505"));
}
