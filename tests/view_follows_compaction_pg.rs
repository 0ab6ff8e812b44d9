//! The view_follows_compaction tests (`view_follows_compaction_cases/cases.rs`) on PostgreSQL, each on a fresh schema of a real
//! server. Run: `bash scripts/pg-server.sh run cargo test --features postgres --test view_follows_compaction_pg`.
#![cfg(all(not(target_arch = "wasm32"), feature = "postgres"))]

mod pg;

type Db = lossless_wasm::store::native_pg::PgSql;

/// The store named `path` (a schema named after it), as a restarted process would open it again.
fn reopen_db(path: &str) -> Db {
    pg::reopen(path)
}

include!("view_follows_compaction_cases/cases.rs");
