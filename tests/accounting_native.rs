//! Prompt accounting through the engine (native SQLite), with the default config: the view is
//! sized against the host's real prompt, and a forced `compact()` (OpenClaw's preflight check)
//! always makes progress or says, in words the host accepts, that nothing can.
#![cfg(not(target_arch = "wasm32"))]

type Db = lossless_wasm::store::native::NativeSql;

fn open_db() -> Db {
    Db::in_memory().unwrap()
}

include!("accounting_cases/cases.rs");
