//! The semantic index (vectors stored with every message and summary, the backfill, hybrid
//! recall) on native SQLite: `semantic_cases/cases.rs`.

sqlite_store!();

include!("../semantic_cases/cases.rs");
