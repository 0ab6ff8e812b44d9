//! The fuzz properties that go through a store (`fuzz_cases/cases.rs`) on PostgreSQL, against a
//! real server: any search pattern (SQL, FTS4 and regex syntax, all of Unicode) in any mode is
//! answered or refused with `InvalidInput` and changes nothing stored; a rejected commit or import
//! stores nothing. Run:
//! `bash scripts/pg-server.sh run cargo test --features postgres --test postgres fuzz::`.
//!
//! Case counts (fixed here; `LOSSLESS_FUZZ_CASES` is SQLite's, for fuzz_native.rs, whose default
//! runs 250 cases of each): the commit/import property needs a fresh store per case (a commit that
//! succeeds changes it), and a fresh store here is a fresh schema (the store's migrations) with
//! every statement sent over loopback, ~0.25 s a case on this project's 2-core machines against a
//! few milliseconds in memory: COMMIT_CASES = 100 (25 s measured with a CI build on the machine).
//! The search property checks that a search changes nothing, so all its cases share one seeded
//! store (opened once): a case is one search over loopback, ~2 ms, so it runs SEARCH_CASES =
//! 4,000 (7 s), more than on SQLite, since PostgreSQL's own translation (tsquery, ILIKE) is what
//! this file is for. The two run in parallel; the file stays well under a minute.

pg_store!();

include!("../fuzz_cases/cases.rs");

const SEARCH_CASES: u32 = 4_000;
const COMMIT_CASES: u32 = 100;

fn search_config() -> ProptestConfig {
    ProptestConfig {
        cases: SEARCH_CASES,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn commit_config() -> ProptestConfig {
    ProptestConfig {
        cases: COMMIT_CASES,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// One seeded engine, reused by every search case. A static, never dropped: the PostgreSQL
/// client's runtime is gone by the time a thread-local would drop it.
fn with_search_engine<R>(f: impl FnOnce(&mut Engine<Db>) -> R) -> R {
    static ENGINE: std::sync::OnceLock<std::sync::Mutex<Engine<Db>>> = std::sync::OnceLock::new();
    let mut engine = ENGINE
        .get_or_init(|| std::sync::Mutex::new(seeded()))
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    f(&mut engine)
}
