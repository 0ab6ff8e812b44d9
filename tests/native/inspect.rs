//! `describe`, `expand` and `compactionEvents` (the base of `lcm_describe` / `lcm_expand`) on
//! native SQLite, after real compactions by the extractive summarizer.

sqlite_store!();

include!("../inspect_cases/cases.rs");
