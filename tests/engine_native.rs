//! Engine behaviour on the native SQLite backend, the same SQL the wasm build runs on sql.js:
//! commits idempotent by advancement key, the assembled view within its budget, bootstrap and
//! ingest without duplicates, a new session id archiving the old conversation, migrations. The
//! cases (`engine_cases/cases.rs`) run on PostgreSQL too (engine_pg.rs). Run:
//! `cargo test --test engine_native`.
#![cfg(not(target_arch = "wasm32"))]

type Db = lossless_wasm::store::native::NativeSql;

fn open_db() -> Db {
    Db::in_memory().unwrap()
}

/// The database file `path`, as a restarted process opens it.
fn reopen_db(path: &str) -> Db {
    Db::open(path).unwrap()
}

include!("engine_cases/cases.rs");
