//! `/lcm status` and `/lcm doctor` on native SQLite: status counts what is stored and what
//! compaction did; doctor passes on a healthy database, finds each kind of damage, and repairs
//! only what can be rebuilt from the rows (indexes, running totals), never content.
#![cfg(not(target_arch = "wasm32"))]

type Db = lossless_wasm::store::native::NativeSql;

fn open_db() -> Db {
    Db::in_memory().unwrap()
}

include!("operator_cases/cases.rs");
