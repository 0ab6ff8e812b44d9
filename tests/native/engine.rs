//! Engine behaviour on the native SQLite backend, the same SQL the wasm build runs on sql.js:
//! commits idempotent by advancement key, the assembled view within its budget, bootstrap and
//! ingest without duplicates, a new session id archiving the old conversation, migrations. The
//! cases (`engine_cases/cases.rs`) run on PostgreSQL too (engine_pg.rs). Run:
//! `cargo test --test native engine::`.

sqlite_store!();

include!("../engine_cases/cases.rs");
