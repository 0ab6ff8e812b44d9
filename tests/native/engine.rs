//! Engine behaviour on the native SQLite backend, the same SQL the wasm build runs on sql.js:
//! commits idempotent by advancement key, the assembled view within its budget, bootstrap and
//! ingest without duplicates, a new session id archiving the old conversation, migrations. The
//! cases (`engine_cases/cases.rs`) run on PostgreSQL too (engine_pg.rs). Run:
//! `cargo test --test engine_native`.
#![cfg(not(target_arch = "wasm32"))]

#[macro_use]
mod sqlite;

sqlite_store!();

include!("engine_cases/cases.rs");
