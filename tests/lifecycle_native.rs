//! Session lifecycle (issue 5, seed 04): rotation and reset without data loss, restarts and
//! replays without duplicates, subagent isolation.
#![cfg(not(target_arch = "wasm32"))]

type Db = lossless_wasm::store::native::NativeSql;

fn open_db() -> Db {
    Db::in_memory().unwrap()
}

/// The store named `path`, as a process that restarted would open it again.
fn reopen_db(path: &str) -> Db {
    Db::open(path).unwrap()
}

include!("lifecycle_cases/cases.rs");
