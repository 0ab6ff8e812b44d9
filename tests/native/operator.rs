//! `/lcm status` and `/lcm doctor` on native SQLite: status counts what is stored and what
//! compaction did; doctor passes on a healthy database, finds each kind of damage, and repairs
//! only what can be rebuilt from the rows (indexes, running totals), never content.
#![cfg(not(target_arch = "wasm32"))]

#[macro_use]
mod sqlite;

sqlite_store!();

include!("operator_cases/cases.rs");
