//! Schema and migrations. Each migration is a versioned SQL script applied in its own
//! transaction, recorded in `schema_migrations`; opening a database applies whatever is missing.
//! A database written by a newer build is refused, never downgraded.

use crate::error::{Error, Result};
use crate::store::sql::Sql;

/// Version 1: conversations, messages, and turn advancements.
const V1: &str = "
CREATE TABLE conversations (
    id INTEGER PRIMARY KEY,
    session_key TEXT NOT NULL,
    session_id TEXT NOT NULL,
    generation INTEGER NOT NULL DEFAULT 1,
    status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
    archive_cause TEXT,
    archived_at INTEGER,
    created_at INTEGER NOT NULL,
    message_count INTEGER NOT NULL DEFAULT 0,
    token_count INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX conversations_one_active_per_key ON conversations (session_key) WHERE status = 'active';

CREATE TABLE messages (
    id INTEGER PRIMARY KEY,
    conversation_id INTEGER NOT NULL REFERENCES conversations (id),
    seq INTEGER NOT NULL,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    token_count INTEGER NOT NULL,
    identity_hash TEXT NOT NULL,
    host_timestamp INTEGER,
    raw_json TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    UNIQUE (conversation_id, seq),
    UNIQUE (conversation_id, identity_hash)
);

CREATE TABLE turn_advancements (
    advancement_key TEXT PRIMARY KEY,
    conversation_id INTEGER NOT NULL REFERENCES conversations (id),
    payload_hash TEXT NOT NULL,
    message_count INTEGER NOT NULL,
    committed_at INTEGER NOT NULL
);
";

/// Every migration, in order. Append only: a released migration is never edited.
pub const MIGRATIONS: &[(i64, &str)] = &[(1, V1)];

/// The schema version this build writes.
pub fn latest_version() -> i64 {
    MIGRATIONS.last().map_or(0, |(v, _)| *v)
}

/// The version recorded in the database (0 for a new one).
pub fn current_version(sql: &mut impl Sql) -> Result<i64> {
    let row = sql.query_row("SELECT COALESCE(MAX(version), 0) FROM schema_migrations", &[])?;
    row.map_or(Ok(0), |r| r.int(0))
}

/// Brings the database up to [`latest_version`].
pub fn migrate(sql: &mut impl Sql, now_ms: i64) -> Result<()> {
    sql.execute_script("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL);")?;
    let current = current_version(sql)?;
    let latest = latest_version();
    if current > latest {
        return Err(Error::storage(format!(
            "the database has schema version {current}, written by a newer lossless-wasm (this build knows up to {latest}); \
             refusing to open it rather than downgrade — upgrade lossless-wasm"
        )));
    }
    for (version, script) in MIGRATIONS.iter().filter(|(v, _)| *v > current) {
        sql.execute("BEGIN IMMEDIATE", &[])?;
        let applied = sql
            .execute_script(script)
            .and_then(|_| sql.execute("INSERT INTO schema_migrations (version, applied_at) VALUES (?1, ?2)", &[(*version).into(), now_ms.into()]));
        match applied {
            Ok(()) => sql.execute("COMMIT", &[])?,
            Err(err) => {
                let _ = sql.execute("ROLLBACK", &[]);
                return Err(Error::storage(format!("migration to schema version {version} failed: {err}")));
            }
        }
    }
    Ok(())
}
