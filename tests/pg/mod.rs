#![allow(dead_code)] // each test crate uses a part of these helpers
//! Opening a fresh store on the test PostgreSQL server: every call gets an empty schema of its
//! own on the server `LCM_PG_TEST_URL` names (`scripts/pg-server.sh run` starts one and sets it).
//! Without that variable the tests fail, saying how to run them: never a silent skip.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use lossless_wasm::store::native_pg::PgSql;
use lossless_wasm::store::Sql;

/// The test server's connection string.
pub fn url() -> String {
    std::env::var("LCM_PG_TEST_URL").unwrap_or_else(|_| {
        panic!(
            "LCM_PG_TEST_URL is not set: these tests need a PostgreSQL server. Run them with \
             `bash scripts/pg-server.sh run cargo test --features postgres --test postgres store::` (it starts a throw-away server)"
        )
    })
}

/// The extensions live in `public`, shared by every test's schema (a schema-local extension
/// would be invisible to the other tests).
fn prepare_server() {
    static READY: OnceLock<()> = OnceLock::new();
    READY.get_or_init(|| {
        let mut admin = PgSql::connect(&url()).expect("connecting to the test server");
        admin
            .execute_script("SELECT pg_advisory_lock(42); CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public; CREATE EXTENSION IF NOT EXISTS unaccent SCHEMA public; SELECT pg_advisory_unlock(42);")
            .expect("creating pg_trgm and unaccent");
    });
}

/// A new, empty schema's name, unique on the server.
pub fn fresh_schema() -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    prepare_server();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!(
        "t{}_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed),
        nanos
    )
}

/// A connection working in `schema`.
pub fn connect(schema: &str) -> PgSql {
    prepare_server();
    PgSql::connect_in_schema(&url(), schema).expect("connecting to the test server")
}

/// A connection to a new, empty store.
pub fn fresh() -> PgSql {
    connect(&fresh_schema())
}

/// The store a test names by file `path` on SQLite, as a restarted process (or a second one) opens
/// it again: a schema named after the path, so every connection to one path shares one store.
/// PostgreSQL cuts names at 63 bytes, so a long path keeps its end, where tests put what differs.
pub fn reopen(path: &str) -> PgSql {
    let name: String = path
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    const PREFIX: &str = "reopen";
    let room = 63 - PREFIX.len();
    connect(&format!(
        "{PREFIX}{}",
        &name[name.len().saturating_sub(room)..]
    ))
}

/// What a shared case file (`*_cases/cases.rs`) expects of its backend, on PostgreSQL: `Db`,
/// `open_db()` (a new, empty store) and `reopen_db(path)` (the store named `path`, as a restarted
/// process, or one more, opens it again). Used as `#[macro_use] mod pg;` then `pg_store!();`.
#[allow(unused_macros)] // the crates that open no shared case file do not use it
macro_rules! pg_store {
    () => {
        type Db = lossless_wasm::store::native_pg::PgSql;

        #[allow(dead_code)]
        fn open_db() -> Db {
            crate::pg::fresh()
        }

        #[allow(dead_code)]
        fn reopen_db(path: &str) -> Db {
            crate::pg::reopen(path)
        }
    };
}
