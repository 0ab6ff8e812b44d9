//! What a shared case file (`*_cases/cases.rs`) expects of its backend, on native SQLite (the
//! same SQL the wasm build runs on sql.js): `Db`, `open_db()` (a new, empty in-memory store) and
//! `reopen_db(path)` (the database file `path`, as a restarted process, or one more, opens it).
//! Used as `#[macro_use] mod sqlite;` then `sqlite_store!();`; pg/mod.rs has PostgreSQL's.

macro_rules! sqlite_store {
    () => {
        type Db = lossless_wasm::store::native::NativeSql;

        #[allow(dead_code)]
        fn open_db() -> Db {
            Db::in_memory().unwrap()
        }

        #[allow(dead_code)]
        fn reopen_db(path: &str) -> Db {
            Db::open(path).unwrap()
        }
    };
}
