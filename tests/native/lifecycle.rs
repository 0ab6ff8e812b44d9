//! Session lifecycle (issue 5, seed 04): rotation and reset without data loss, restarts and
//! replays without duplicates, subagent isolation.
#![cfg(not(target_arch = "wasm32"))]

#[macro_use]
mod sqlite;

sqlite_store!();

include!("lifecycle_cases/cases.rs");
