//! The lossless-claw import tests (`import_cases/cases.rs`) into PostgreSQL: the source stays a
//! SQLite `lcm.db` file, the store imported into is a fresh schema of a real server. Run:
//! `bash scripts/pg-server.sh run cargo test --features postgres --test postgres import::`.

pg_store!();

include!("../import_cases/cases.rs");
