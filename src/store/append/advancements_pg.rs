//! Turn advancements on PostgreSQL ([`super::advancements`]): the advisory lock on an
//! advancement key that makes a second gateway committing the same key wait for the first.
//! SQLite needs none (its write lock already holds every key).
//!
//! Must not: run on SQLite (`pg_advisory_xact_lock` is PostgreSQL's).

use crate::error::Result;
use crate::store::sql::Sql;

/// Takes the key's transaction-level advisory lock, in a statement of its own whose result is
/// not read (see `advancements::lock_key`).
const LOCK_KEY_SQL: &str =
    "SELECT 1 FROM (SELECT pg_advisory_xact_lock(hashtextextended(?1, 0))) AS locked";

/// Waits for, then holds until the transaction ends, the advisory lock on `key`.
pub(super) fn lock_key(sql: &mut impl Sql, key: &str) -> Result<()> {
    sql.execute(LOCK_KEY_SQL, &[key.into()])
}
