//! The stubs tests (`stubs_cases/cases.rs`) on PostgreSQL, each on a fresh schema of a real
//! server. Run: `bash scripts/pg-server.sh run cargo test --features postgres --test stubs_pg`.
#![cfg(all(not(target_arch = "wasm32"), feature = "postgres"))]

#[macro_use]
mod pg;

pg_store!();

include!("stubs_cases/cases.rs");
