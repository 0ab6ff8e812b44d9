//! A compaction changes the cached view in place (the replaced items leave, the summary takes
//! their place, older items fill the room it freed) instead of rebuilding it from the store.
//! These tests hold the in-place view to what a rebuild shows: after every compaction, the view
//! of the engine that compacted equals the view a fresh engine builds from the same database.
#![cfg(not(target_arch = "wasm32"))]

type Db = lossless_wasm::store::native::NativeSql;

/// The store named `path`, as a process that restarted would open it again.
fn reopen_db(path: &str) -> Db {
    Db::open(path).unwrap()
}

include!("view_follows_compaction_cases/cases.rs");
