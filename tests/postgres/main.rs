//! The PostgreSQL suite: the shared engine and store cases, and PostgreSQL's own (locks, claims,
//! faults, timeouts, extensions), each on a fresh schema of a real server that
//! `scripts/pg-server.sh` starts. One crate, one test binary. Run:
//! `bash scripts/pg-server.sh run cargo test --features postgres --test postgres [<module>::]`.
#![cfg(all(not(target_arch = "wasm32"), feature = "postgres"))]

#[macro_use]
#[path = "../pg/mod.rs"]
mod pg;

mod accounting;
mod bulk;
mod claim;
mod compaction;
mod concurrency;
mod engine;
mod explorer;
mod extensions;
mod faults;
mod fuzz;
mod import;
mod inspect;
mod lifecycle;
mod lossless_property;
mod operator;
mod recall;
mod redaction;
mod search_backlog;
mod semantic;
mod slow_summarizer;
mod store;
mod stubs;
mod summarizer_answers;
mod timeouts;
mod view_follows_compaction;
