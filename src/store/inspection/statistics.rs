//! The query planner's statistics after a bulk write, on PostgreSQL.
//!
//! Right after an import the server's statistics still describe the tables as they were
//! (autovacuum analyzes them within a minute or so, not at once), and it plans the first reads
//! of a long conversation badly: measured at 100,000 imported messages, the first `assemble`
//! took ~595 ms instead of ~72 ms. So a bulk write of many messages is followed by an `ANALYZE`
//! of the tables it filled (~210 ms at 100,000 messages on this 2-core machine, inside the import
//! call, off the host's event loop). SQLite needs none: its planner works from the indexes.

use crate::store::sql::Sql;

/// The fewest messages a bulk write must insert before the statistics are refreshed: below this
/// the stale statistics cost little (and autovacuum's threshold is not far off).
pub const REFRESH_MIN_MESSAGES: usize = 1_000;

/// The tables a bulk write of messages fills, analyzed in one statement.
const ANALYZE_SQL: &str = "ANALYZE messages, message_parts, context_items";

/// Refreshes the statistics of the tables a bulk write filled, when it inserted at least
/// [`REFRESH_MIN_MESSAGES`] messages and the store is PostgreSQL; outside any transaction (the
/// write has committed). Returns whether it ran. A failure is not the caller's: the rows are
/// stored, and autovacuum refreshes the statistics later; it is returned for the caller to drop.
pub fn refresh_after_bulk_write(sql: &mut impl Sql, inserted: usize) -> crate::error::Result<bool> {
    // The dialect's decision here: only PostgreSQL's planner works from such statistics.
    if !sql.dialect().is_postgres() || inserted < REFRESH_MIN_MESSAGES {
        return Ok(false);
    }
    sql.execute(ANALYZE_SQL, &[])?;
    Ok(true)
}
