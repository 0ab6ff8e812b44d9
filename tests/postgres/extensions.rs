//! Several stores in one PostgreSQL database, each in its own schema, share the one copy of
//! `pg_trgm` and `unaccent` a database can hold (`store::schema`'s migration). Each case gets a
//! database of its own on the test server, so where the extensions land is this test's doing.
//! Run: `bash scripts/pg-server.sh run cargo test --features postgres --test postgres extensions::`.

use crate::pg;

use std::sync::atomic::{AtomicUsize, Ordering};

use lossless_wasm::core::config::Config;
use lossless_wasm::engine::{decode, Engine};
use lossless_wasm::store::native_pg::PgSql;
use lossless_wasm::store::Sql;
use serde_json::json;

/// A new, empty database on the test server; its connection string.
fn fresh_database() -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let name = format!(
        "lcm_ext_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    PgSql::connect(&pg::url())
        .unwrap()
        .execute_script(&format!("CREATE DATABASE {name}"))
        .unwrap();
    let url = pg::url();
    let (server, _) = url.rsplit_once('/').expect("the test URL names a database");
    format!("{server}/{name}")
}

/// A store in `schema` of the database at `url` holding one message of its own.
fn store(url: &str, schema: &str) -> Engine<PgSql> {
    let mut engine = Engine::open(
        PgSql::connect_in_schema(url, schema).unwrap(),
        Config::default(),
        1,
    )
    .unwrap();
    let text = format!("the café of {schema} fixed the parser");
    engine.ingest(decode("ingest", json!({"sessionId": "s", "sessionKey": "agent:main:x", "messages": [{"role": "user", "content": text}]})).unwrap(), 2).unwrap();
    engine
}

/// What a literal and a full-text (accent-folding) search find in `engine`'s store.
fn found(engine: &mut Engine<PgSql>) -> (usize, usize) {
    let mut grep = |extra: serde_json::Value| {
        let mut p = json!({"sessionId": "s", "sessionKey": "agent:main:x"});
        p.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        engine
            .recall_grep(decode("grep", p).unwrap())
            .unwrap()
            .hits
            .len()
    };
    (
        grep(json!({"pattern": "parser"})),
        grep(json!({"pattern": "cafe", "mode": "full_text"})),
    )
}

/// The schema each extension lives in.
fn extension_schemas(url: &str) -> Vec<(String, String)> {
    let rows = PgSql::connect(url)
        .unwrap()
        .query("SELECT e.extname, n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname IN ('pg_trgm', 'unaccent') ORDER BY 1", &[])
        .unwrap();
    rows.into_iter()
        .map(|r| (r.text(0).unwrap(), r.text(1).unwrap()))
        .collect()
}

#[test]
fn the_first_store_of_a_database_creates_the_extensions_in_public_and_every_store_searches_with_them(
) {
    let url = fresh_database();
    assert!(
        extension_schemas(&url).is_empty(),
        "a new database has neither extension"
    );
    let mut a = store(&url, "store_a");
    assert_eq!(
        extension_schemas(&url),
        [
            ("pg_trgm".into(), "public".into()),
            ("unaccent".into(), "public".into())
        ]
    );
    let mut b = store(&url, "store_b");
    assert_eq!(
        found(&mut a),
        (1, 1),
        "store a finds its message, literally and with the accent folded"
    );
    assert_eq!(found(&mut b), (1, 1), "store b too");
    // Dropping one store takes nothing from the other.
    drop(a);
    PgSql::connect(&url)
        .unwrap()
        .execute_script("DROP SCHEMA store_a CASCADE")
        .unwrap();
    assert_eq!(
        extension_schemas(&url).len(),
        2,
        "the extensions outlive the dropped store"
    );
    assert_eq!(found(&mut b), (1, 1), "store b still searches");
    let mut c = store(&url, "store_c");
    assert_eq!(found(&mut c), (1, 1), "a store opened afterwards too");
}

#[test]
fn extensions_an_earlier_store_created_in_its_own_schema_serve_the_stores_opened_after_it() {
    let url = fresh_database();
    // As an earlier version left them (created with the first store's schema first on the path).
    PgSql::connect(&url).unwrap().execute_script("CREATE SCHEMA store_old; CREATE EXTENSION pg_trgm SCHEMA store_old; CREATE EXTENSION unaccent SCHEMA store_old").unwrap();
    let mut old = store(&url, "store_old");
    // Without the extensions' schema on its migration's path, this one's migration failed:
    // `text search dictionary "unaccent" does not exist`.
    let mut new = store(&url, "store_new");
    assert_eq!(
        extension_schemas(&url),
        [
            ("pg_trgm".into(), "store_old".into()),
            ("unaccent".into(), "store_old".into())
        ],
        "no second copy"
    );
    assert_eq!(found(&mut old), (1, 1));
    assert_eq!(found(&mut new), (1, 1));
    // The path was the migration's only: a new connection has the usual one.
    let path = PgSql::connect_in_schema(&url, "store_new")
        .unwrap()
        .query("SELECT current_setting('search_path')", &[])
        .unwrap();
    assert_eq!(path[0].text(0).unwrap(), "store_new, public");
}
