//! The native suite: the engine and store cases on rusqlite, one module per concern (the shared
//! cases in `tests/*_cases/` are the ones the PostgreSQL suite, `tests/postgres/`, runs too). One
//! crate, so the library is linked into one test binary, not one per file. A module runs alone
//! with `cargo test --test native <module>::`.
#![cfg(not(target_arch = "wasm32"))]

#[macro_use]
#[path = "../sqlite/mod.rs"]
mod sqlite;

mod accounting;
mod bulk;
mod compaction;
mod embed;
mod engine;
mod explorer;
mod fuzz;
mod import;
mod inspect;
mod lifecycle;
mod operator;
mod recall;
mod redaction;
mod search_backlog;
mod semantic;
mod semantic_model;
mod slow_summarizer;
mod store;
mod stubs;
mod summarizer_answers;
mod view_follows_compaction;
