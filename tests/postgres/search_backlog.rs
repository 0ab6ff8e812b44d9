//! The search index's backlog tests that go through the engine (`search_backlog_cases/cases.rs`)
//! on PostgreSQL, each on a fresh schema of a real server: nothing waits for the index (the search
//! vector is a generated column of the message row), yet the same appends (single ones up to the
//! limit, a bulk one) and `maintain` calls leave every stored message found by a search, once, and
//! the doctor finds the store sound. Run:
//! `bash scripts/pg-server.sh run cargo test --features postgres --test postgres search_backlog::`.

pg_store!();

/// PostgreSQL's search vector is a generated column of the message row: no message waits for it.
fn index_waits() -> bool {
    false
}

include!("../search_backlog_cases/cases.rs");
