//! Compaction wired into the engine, on native SQLite, with scripted and extractive summarizers.
//! Each test is named for the behaviour it protects (seeds 01, 02, 03, 05 and the list).
#![cfg(not(target_arch = "wasm32"))]

type Db = lossless_wasm::store::native::NativeSql;

fn open_db() -> Db {
    Db::in_memory().unwrap()
}

/// The store named `path`, as a process that restarted would open it again.
fn reopen_db(path: &str) -> Db {
    Db::open(path).unwrap()
}

include!("compaction_cases/cases.rs");
