//! The user messages a session key's conversations store between two timestamps, for recognising
//! a transcript's user message that a turn stored in another shape (see
//! [`crate::core::transcript_match`]): OpenClaw 2026.7's transcript and its `afterTurn` stamp the
//! same user message differently, so its content identity cannot find it.

use crate::error::Result;
use crate::store::sql::{Sql, SqlValue};

/// The `raw_json` of every user message of `session_key` (any conversation, active or archived)
/// whose host timestamp is in `from_ms..=to_ms`, oldest first.
pub fn user_messages_between(
    sql: &mut impl Sql,
    session_key: &str,
    from_ms: i64,
    to_ms: i64,
) -> Result<Vec<String>> {
    let rows = sql.query(
        // By the key's conversations, then `messages_user_by_time` (migration 17) within each.
        "SELECT m.raw_json FROM messages m \
         WHERE m.conversation_id IN (SELECT c.id FROM conversations c WHERE c.session_key = ?1) \
         AND m.role = 'user' AND m.host_timestamp BETWEEN ?2 AND ?3 \
         ORDER BY m.host_timestamp, m.id",
        &[
            SqlValue::from(session_key),
            SqlValue::from(from_ms),
            SqlValue::from(to_ms),
        ],
    )?;
    rows.iter().map(|row| row.text(0)).collect()
}
