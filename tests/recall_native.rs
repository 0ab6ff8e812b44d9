//! The recall tools' logic (grep, describe, expand, ask) on native SQLite: what was summarized
//! away is found and reached again, pages stay under the token limit, and one agent can never read
//! another agent's conversations whatever ids or scope it passes.
#![cfg(not(target_arch = "wasm32"))]

type Db = lossless_wasm::store::native::NativeSql;

fn open_db() -> Db {
    Db::in_memory().unwrap()
}

include!("recall_cases/cases.rs");
