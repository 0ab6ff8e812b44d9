//! The summarizer-answer tests (`summarizer_answers_cases/cases.rs`) on PostgreSQL, each on a
//! fresh schema of a real server: reasoning stripped, cut-off answers never stored, every call
//! recorded, an answer too long for its chunk changes the next request. Run:
//! `bash scripts/pg-server.sh run cargo test --features postgres --test summarizer_answers_pg`.
#![cfg(all(not(target_arch = "wasm32"), feature = "postgres"))]

#[macro_use]
mod pg;

pg_store!();

include!("summarizer_answers_cases/cases.rs");
