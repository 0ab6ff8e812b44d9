//! The recall tests (`recall_cases/cases.rs`) on PostgreSQL, each on a fresh schema of a real
//! server. Run: `bash scripts/pg-server.sh run cargo test --features postgres --test recall_pg`.
#![cfg(all(not(target_arch = "wasm32"), feature = "postgres"))]

#[macro_use]
mod pg;

pg_store!();

include!("recall_cases/cases.rs");
