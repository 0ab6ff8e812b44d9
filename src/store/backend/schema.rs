//! Schema and migrations. Each migration is a versioned SQL script applied in its own
//! transaction, recorded in `schema_migrations`; opening a database applies whatever is missing.
//! A database written by a newer build is refused, never downgraded. PostgreSQL has a migration
//! set of its own ([`POSTGRES_MIGRATIONS`], numbered on its own): [`migrate`] picks the set by the
//! connection's dialect.

use crate::error::{Error, Result};
use crate::store::dialect::Dialect;
use crate::store::sql::Sql;
use crate::store::WriteTx;

/// Every migration, in order. Append only: a released migration is never edited.
pub const MIGRATIONS: &[(i64, &str)] = &[
    (1, include_str!("migrations/001_conversations_messages.sql")),
    (
        2,
        include_str!("migrations/002_parts_summaries_context_search.sql"),
    ),
    (
        3,
        include_str!("migrations/003_backfill_fallback_summaries.sql"),
    ),
    (4, include_str!("migrations/004_host_accounting.sql")),
    (5, include_str!("migrations/005_imports.sql")),
    (
        6,
        include_str!("migrations/006_fts_insert_without_trigger.sql"),
    ),
    (
        7,
        include_str!("migrations/007_text_derived_from_raw_json.sql"),
    ),
    (8, include_str!("migrations/008_identity_as_blob.sql")),
    (9, include_str!("migrations/009_search_index_backlog.sql")),
    (10, include_str!("migrations/010_parts_only_tool_links.sql")),
    (11, include_str!("migrations/011_trigger_decision_runs.sql")),
    (12, include_str!("migrations/012_fewer_pages.sql")),
    (13, include_str!("migrations/013_summarizer_calls.sql")),
    (14, include_str!("migrations/014_tool_output_stubs.sql")),
    (15, include_str!("migrations/015_summary_runs.sql")),
    (16, include_str!("migrations/016_vectors.sql")),
    (17, include_str!("migrations/017_user_messages_by_time.sql")),
];

/// Every PostgreSQL migration, in order. Append only.
pub const POSTGRES_MIGRATIONS: &[(i64, &str)] = &[
    (1, include_str!("migrations/postgres/001_schema.sql")),
    (
        2,
        include_str!("migrations/postgres/002_unchanged_guard.sql"),
    ),
    (3, include_str!("migrations/postgres/003_vectors.sql")),
    (
        4,
        include_str!("migrations/postgres/004_user_messages_by_time.sql"),
    ),
];

/// Serializes migrations of one PostgreSQL database (gateways starting at once), and the creation
/// of a store's schema: the key of a transaction-level advisory lock, released at COMMIT or
/// ROLLBACK. js-shim/postgres/io-thread-main.js uses the same key.
pub(crate) const POSTGRES_MIGRATION_LOCK: i64 = 0x6c63_6d5f_6d69_6772; // "lcm_migr"

/// The migrations of a dialect.
pub fn migrations(dialect: Dialect) -> &'static [(i64, &'static str)] {
    match dialect {
        Dialect::Sqlite => MIGRATIONS,
        Dialect::Postgres => POSTGRES_MIGRATIONS,
    }
}

/// The SQLite schema version this build writes.
pub fn latest_version() -> i64 {
    MIGRATIONS.last().map_or(0, |(v, _)| *v)
}

/// The schema version this build writes in `dialect`.
pub fn latest_version_for(dialect: Dialect) -> i64 {
    migrations(dialect).last().map_or(0, |(v, _)| *v)
}

/// The version recorded in the database (0 for a new one).
pub fn current_version(sql: &mut impl Sql) -> Result<i64> {
    let row = sql.query_row(
        "SELECT COALESCE(MAX(version), 0) FROM schema_migrations",
        &[],
    )?;
    row.map_or(Ok(0), |r| r.int(0))
}

/// Brings the database up to the latest version of its dialect.
pub fn migrate(sql: &mut impl Sql, now_ms: i64) -> Result<()> {
    if sql.dialect() == Dialect::Postgres {
        return migrate_postgres(sql, now_ms);
    }
    sql.execute_script("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL);")?;
    let current = current_version(sql)?;
    let latest = latest_version();
    if current > latest {
        return Err(Error::unexpected_data(format!(
            "the database has schema version {current}, written by a newer lossless-wasm (this build knows up to {latest}); \
             refusing to open it rather than downgrade — upgrade lossless-wasm"
        )));
    }
    for (version, script) in MIGRATIONS.iter().filter(|(v, _)| *v > current) {
        // Each migration in a write transaction of its own; a failed one rolls back when `tx`
        // is dropped, leaving the versions before it applied.
        let mut tx = WriteTx::begin(sql)?;
        apply_once(&mut tx, *version, script, now_ms)
            .map_err(|err| err.within(format!("migration to schema version {version} failed")))?;
        tx.commit()?;
    }
    Ok(())
}

/// Applies the SQLite migration `version` inside `tx` and records it, unless it is there
/// already: another process opening the same file may have applied it while this one waited
/// for the write lock (two gateways starting at once), so the version is read again here.
fn apply_once<S: Sql>(
    tx: &mut WriteTx<'_, S>,
    version: i64,
    script: &str,
    now_ms: i64,
) -> Result<()> {
    if current_version(tx.sql())? >= version {
        return Ok(());
    }
    tx.sql().execute_script(script)?;
    tx.sql().execute(
        "INSERT INTO schema_migrations (version, applied_at) VALUES (?1, ?2)",
        &[version.into(), now_ms.into()],
    )
}

/// Creates `pg_trgm` and `unaccent` where they are missing: in `public` when this role may create
/// there (every store of the database then shares them, and dropping one store's schema leaves
/// the others' search intact), else in the store's own schema (the first on its path). Both are
/// trusted extensions (PostgreSQL 13 on): a database owner may create them.
const CREATE_EXTENSIONS_SQL: &str = "DO $lcm$ DECLARE ext text; BEGIN \
     FOREACH ext IN ARRAY ARRAY['pg_trgm', 'unaccent'] LOOP \
       CONTINUE WHEN EXISTS (SELECT 1 FROM pg_extension WHERE extname = ext); \
       IF EXISTS (SELECT 1 FROM pg_namespace n WHERE n.nspname = 'public' AND has_schema_privilege(n.oid, 'CREATE')) THEN \
         EXECUTE format('CREATE EXTENSION %I SCHEMA public', ext); \
       ELSE \
         EXECUTE format('CREATE EXTENSION %I', ext); \
       END IF; \
     END LOOP; END $lcm$";

/// For the rest of the migration's transaction: the schemas holding `pg_trgm` and `unaccent`
/// join the `search_path`. An extension exists once per database, in one schema: where
/// [`CREATE_EXTENSIONS_SQL`] put it, or where an earlier version did (the schema first on the
/// path of the store that created it). Another store's migration (path: its schema, public)
/// would then find neither `unaccent` nor `gin_trgm_ops`. Nothing after the migration needs
/// them on the path: the generated search vectors and the trigram indexes refer to them by oid.
const EXTENSIONS_ON_PATH_SQL: &str = "SELECT set_config('search_path', current_setting('search_path') || \
     COALESCE((SELECT string_agg(', ' || quote_ident(n.nspname), '') FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace \
     WHERE e.extname IN ('pg_trgm', 'unaccent')), ''), true)";

/// PostgreSQL: every missing migration in one transaction (PostgreSQL's DDL is transactional),
/// under an advisory lock so two gateways opening a new database at once apply each once.
fn migrate_postgres(sql: &mut impl Sql, now_ms: i64) -> Result<()> {
    let mut tx = WriteTx::begin(sql)?;
    let sql = tx.sql();
    let applied = (|| {
        sql.execute(
            "SELECT pg_advisory_xact_lock(?1)",
            &[POSTGRES_MIGRATION_LOCK.into()],
        )?;
        sql.execute_script("CREATE TABLE IF NOT EXISTS schema_migrations (version bigint PRIMARY KEY, applied_at bigint NOT NULL);")?;
        let current = current_version(sql)?;
        let latest = latest_version_for(Dialect::Postgres);
        if current > latest {
            return Err(Error::unexpected_data(format!(
                "the database has PostgreSQL schema version {current}, written by a newer lossless-wasm (this build knows up to {latest}); \
                 refusing to open it rather than downgrade — upgrade lossless-wasm"
            )));
        }
        let missing: Vec<_> = POSTGRES_MIGRATIONS
            .iter()
            .filter(|(v, _)| *v > current)
            .collect();
        if !missing.is_empty() {
            sql.execute_script(CREATE_EXTENSIONS_SQL)?;
            sql.execute(EXTENSIONS_ON_PATH_SQL, &[])?;
        }
        for (version, script) in missing {
            sql.execute_script(script).map_err(|err| {
                err.within(format!(
                    "PostgreSQL migration to schema version {version} failed"
                ))
            })?;
            sql.execute(
                "INSERT INTO schema_migrations (version, applied_at) VALUES (?1, ?2)",
                &[(*version).into(), now_ms.into()],
            )?;
        }
        Ok(())
    })();
    // On an error `tx` is dropped uncommitted: every migration of this call rolls back.
    applied?;
    tx.commit()
}
