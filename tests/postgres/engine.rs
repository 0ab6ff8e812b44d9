//! The engine's tests (`engine_cases/cases.rs`) on PostgreSQL, each on a fresh schema of a real
//! server: commits idempotent by advancement key, the assembled view within its budget, bootstrap
//! and ingest without duplicates, a new session id archiving the old conversation, migrations
//! (a store reopened by name, a newer schema refused). Run:
//! `bash scripts/pg-server.sh run cargo test --features postgres --test postgres engine::`.

pg_store!();

include!("../engine_cases/cases.rs");
