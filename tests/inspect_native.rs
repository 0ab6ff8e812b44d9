//! `describe`, `expand` and `compactionEvents` (the base of `lcm_describe` / `lcm_expand`) on
//! native SQLite, after real compactions by the extractive summarizer.
#![cfg(not(target_arch = "wasm32"))]

type Db = lossless_wasm::store::native::NativeSql;

fn open_db() -> Db {
    Db::in_memory().unwrap()
}

include!("inspect_cases/cases.rs");
