//! Storing a message on PostgreSQL ([`super::messages`] decides when): the row also carries the
//! message's derived text (`search_text`), for the generated search vector and the trigram index
//! (PostgreSQL has no FTS4 backlog).
//!
//! Must not: run on SQLite (its `messages` has no `search_text` column).

use crate::error::Result;
use crate::store::sql::{Row, Sql, SqlValue};

/// `messages::INSERT_SQL` with the search text as `?10`: stores a message unless its identity
/// is already in the conversation; returns no row for a message already stored.
const INSERT_SQL: &str = "INSERT INTO messages (conversation_id, seq, role, token_count, identity_hash, host_timestamp, raw_json, created_at, host_entry_id, search_text) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) ON CONFLICT (conversation_id, identity_hash) DO NOTHING RETURNING id";

/// A message's text as PostgreSQL stores it for search: NUL (which a PostgreSQL `text` cannot
/// hold) shows as U+2400, as SQLite's `messages_text` view shows it.
pub fn search_text(text: &str) -> String {
    text.replace('\0', "\u{2400}")
}

/// Inserts one message: `params` are `messages::INSERT_SQL`'s, `text` the message's text.
/// Returns the new row's id, or no row when the conversation already stores the message.
pub(super) fn insert(
    sql: &mut impl Sql,
    params: &[SqlValue; 9],
    text: &str,
) -> Result<Option<Row>> {
    let mut with_text = params.to_vec();
    with_text.push(search_text(text).into());
    sql.query_row(INSERT_SQL, &with_text)
}
