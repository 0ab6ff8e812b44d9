//! The lossless property on native SQLite (the cases are in `lossless_property_cases/cases.rs`,
//! shared with lossless_property_pg.rs): random conversations driven through random compactions
//! (host summaries that succeed or fail, the extractive summarizer, pending passes, forced sweeps
//! under small budgets, resets) never lose a message: every stored message is reachable from its
//! conversation's current view through `lcm_expand` (following cursors and child summaries), and
//! findable through `lcm_grep` by the unique word it carries. 128 random cases (an in-memory
//! store each).
#![cfg(not(target_arch = "wasm32"))]

type Db = lossless_wasm::store::native::NativeSql;

fn open_db() -> Db {
    Db::in_memory().unwrap()
}

const CASES: u32 = 128;
const REGRESSIONS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/lossless_property.proptest-regressions"
);

include!("lossless_property_cases/cases.rs");
