//! The lifecycle tests (`lifecycle_cases/cases.rs`) on PostgreSQL, each on a fresh schema of a real
//! server. Run: `bash scripts/pg-server.sh run cargo test --features postgres --test lifecycle_pg`.
#![cfg(all(not(target_arch = "wasm32"), feature = "postgres"))]

mod pg;

type Db = lossless_wasm::store::native_pg::PgSql;

fn open_db() -> Db {
    pg::fresh()
}

/// The store named `path` (a schema named after it), as a restarted process would open it again.
fn reopen_db(path: &str) -> Db {
    pg::reopen(path)
}

include!("lifecycle_cases/cases.rs");
