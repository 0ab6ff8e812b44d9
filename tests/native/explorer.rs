//! The context explorer's engine calls on native SQLite, after real compactions by the
//! extractive summarizer: an agent scope lists and opens only that agent's conversations, the
//! DAG carries fallback / failure / rejection warnings the store records, and expansion reaches
//! the original messages exactly as `expand` (the base of `lcm_expand`) shows them. The cases
//! (`explorer_cases/cases.rs`) run on PostgreSQL too (explorer_pg.rs). Run:
//! `cargo test --test native explorer::`.

sqlite_store!();

include!("../explorer_cases/cases.rs");
