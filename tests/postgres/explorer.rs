//! The context explorer's tests (`explorer_cases/cases.rs`) on PostgreSQL, each on a fresh schema
//! of a real server, after real compactions by the extractive summarizer: an agent scope lists and
//! opens only that agent's conversations, the DAG carries the fallback / failure / rejection
//! warnings the store records, and expansion reaches the originals as `expand` shows them. Run:
//! `bash scripts/pg-server.sh run cargo test --features postgres --test postgres explorer::`.

pg_store!();

include!("../explorer_cases/cases.rs");
