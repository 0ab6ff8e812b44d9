//! The slow-summarizer tests (`slow_summarizer_cases/cases.rs`) on PostgreSQL, where several
//! gateways share one store: engines on one schema of a real server stand for the processes
//! (hand-over to a successor, leases renewed and run out, a successor standing by, a late answer
//! replanned). Run:
//! `bash scripts/pg-server.sh run cargo test --features postgres --test postgres slow_summarizer::`.

pg_store!();

include!("../slow_summarizer_cases/cases.rs");
