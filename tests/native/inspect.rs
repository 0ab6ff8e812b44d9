//! `describe`, `expand` and `compactionEvents` (the base of `lcm_describe` / `lcm_expand`) on
//! native SQLite, after real compactions by the extractive summarizer.
#![cfg(not(target_arch = "wasm32"))]

#[macro_use]
mod sqlite;

sqlite_store!();

include!("inspect_cases/cases.rs");
