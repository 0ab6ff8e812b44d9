//! Turn advancements: the idempotency record of `commitTurn`. A key is stored in the same
//! transaction as the turn's messages, so a retry either finds the key (and stores nothing) or
//! finds nothing stored at all.

use crate::error::Result;
use crate::store::sql::Sql;

/// Per-turn query (primary key).
pub const FIND_SQL: &str = "SELECT payload_hash FROM turn_advancements WHERE advancement_key = ?1";

/// The payload hash recorded for `key`, if the turn was already committed.
/// On PostgreSQL, first waits for any other transaction committing the same key (a host that
/// retried a turn on another gateway): a transaction-level advisory lock on the key, taken in a
/// statement of its own so the lookup that follows sees what that transaction committed. Its
/// result is not read (`execute`): a driver may send it without waiting, since the server runs
/// the lookup only once it has the lock (and fails the lookup when taking the lock failed).
pub fn find(sql: &mut impl Sql, key: &str) -> Result<Option<String>> {
    if sql.dialect().is_postgres() {
        sql.execute("SELECT 1 FROM (SELECT pg_advisory_xact_lock(hashtextextended(?1, 0))) AS locked", &[key.into()])?;
    }
    let row = sql.query_row(FIND_SQL, &[key.into()])?;
    row.map(|r| r.text(0)).transpose()
}

/// Records a committed advancement. Call inside the write transaction that stored its messages.
pub fn record(sql: &mut impl Sql, key: &str, conversation_id: i64, payload_hash: &str, message_count: i64, now_ms: i64) -> Result<()> {
    sql.execute(RECORD_SQL, &[key.into(), conversation_id.into(), payload_hash.into(), message_count.into(), now_ms.into()])
}

/// Per-turn statement: the idempotency record of a committed turn.
pub const RECORD_SQL: &str =
    "INSERT INTO turn_advancements (advancement_key, conversation_id, payload_hash, message_count, committed_at) VALUES (?1, ?2, ?3, ?4, ?5)";
