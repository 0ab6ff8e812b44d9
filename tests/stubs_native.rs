//! Tool-output stubs through the engine on native SQLite (issue 23, item 1): old tool outputs
//! become one-line stubs in the view, the previous turn stays whole, identical outputs appear
//! once, a huge message becomes an excerpt from its first turn, every stubbed output is found by
//! grep and returned whole by expand, the state survives a reopen, batches wait until they pay
//! for their cache break unless the budget is under pressure, and tool calls stay paired.
#![cfg(not(target_arch = "wasm32"))]

type Db = lossless_wasm::store::native::NativeSql;

fn open_db() -> Db {
    Db::in_memory().unwrap()
}

/// The store named `path`, as a process that restarted would open it again.
fn reopen_db(path: &str) -> Db {
    Db::open(path).unwrap()
}

include!("stubs_cases/cases.rs");
