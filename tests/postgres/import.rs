//! The lossless-claw import tests (`import_cases/cases.rs`) into PostgreSQL: the source stays a
//! SQLite `lcm.db` file, the store imported into is a fresh schema of a real server. Run:
//! `bash scripts/pg-server.sh run cargo test --features postgres --test import_pg`.
#![cfg(all(not(target_arch = "wasm32"), feature = "postgres"))]

#[macro_use]
mod pg;

pg_store!();

include!("import_cases/cases.rs");
