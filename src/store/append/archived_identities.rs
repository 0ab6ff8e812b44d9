//! Which messages a session key's archived conversations already store. A message read back from
//! the host's transcript (the catch-up after a gateway restart) may be one from before a reset:
//! OpenClaw 2026.9 keeps the session id across `/reset`, and its transcript still holds what came
//! before. The append's own check sees only the active conversation, so such a message would be
//! stored again there, into the history the user had just reset away. The same read over all of
//! the key's conversations tells a catch-up which user messages are stored as they are
//! ([`stored_in_any`]), before it looks for the others in another shape.

use std::collections::HashSet;

use crate::error::Result;
use crate::store::messages::identity_key;
use crate::store::sql::{Sql, SqlValue};

/// Identities asked about per statement (each is one bound parameter).
const BATCH: usize = 200;

/// The identities of `identities` (content identities, as [`crate::core::message`] computes them)
/// that a conversation of `session_key` other than the active one stores.
pub fn stored_in_archived(
    sql: &mut impl Sql,
    session_key: &str,
    identities: &[&str],
) -> Result<HashSet<String>> {
    stored_in(sql, session_key, identities, "AND c.status <> 'active'")
}

/// The identities of `identities` that any conversation of `session_key` stores, the active one
/// included.
pub fn stored_in_any(
    sql: &mut impl Sql,
    session_key: &str,
    identities: &[&str],
) -> Result<HashSet<String>> {
    stored_in(sql, session_key, identities, "")
}

fn stored_in(
    sql: &mut impl Sql,
    session_key: &str,
    identities: &[&str],
    which_conversations: &str,
) -> Result<HashSet<String>> {
    let mut found = HashSet::new();
    for batch in identities.chunks(BATCH) {
        let keys: Vec<SqlValue> = batch
            .iter()
            .map(|identity| identity_key(identity, sql.dialect()))
            .collect();
        let placeholders: Vec<String> = (0..keys.len()).map(|i| format!("?{}", i + 2)).collect();
        let query = format!(
            "SELECT DISTINCT m.identity_hash FROM messages m JOIN conversations c ON c.id = m.conversation_id \
             WHERE c.session_key = ?1 {which_conversations} AND m.identity_hash IN ({})",
            placeholders.join(", ")
        );
        let mut params = Vec::with_capacity(keys.len() + 1);
        params.push(SqlValue::from(session_key));
        params.extend(keys.iter().cloned());
        let stored: Vec<SqlValue> = sql
            .query(&query, &params)?
            .into_iter()
            .filter_map(|row| row.0.into_iter().next())
            .collect();
        for (identity, key) in batch.iter().zip(&keys) {
            if stored.contains(key) {
                found.insert((*identity).to_owned());
            }
        }
    }
    Ok(found)
}
