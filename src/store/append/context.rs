//! The active context: an ordered list of items (messages and summaries) per conversation, keyed
//! by ordinal. Reads page backwards from the newest item through the primary key; a compaction
//! replaces a contiguous range by one summary at the range's first ordinal, renumbering nothing.

use crate::error::Result;
use crate::store::conversations;
use crate::store::sql::{Row, Sql};
use crate::store::WriteTx;

use super::context_pg;
use super::context_rows::item_at;
pub use super::context_rows::{ActiveWithNewer, ContextItem, ItemContent, Newer};

/// Per-turn statement: a new message's context item.
pub const INSERT_MESSAGE_SQL: &str = "INSERT INTO context_items (conversation_id, ordinal, message_id, token_count) VALUES (?1, ?2, ?3, ?4)";

/// Adds a message at `ordinal`.
pub fn insert_message(
    tx: &mut WriteTx<'_, impl Sql>,
    conversation_id: i64,
    ordinal: i64,
    message_id: i64,
    tokens: u32,
) -> Result<()> {
    tx.execute(
        INSERT_MESSAGE_SQL,
        &[
            conversation_id.into(),
            ordinal.into(),
            message_id.into(),
            tokens.into(),
        ],
    )
}

/// Before a turn's transaction on PostgreSQL: tells the driver that `assemble`'s read
/// ([`active_with_newer`] with the same `known`) follows the `COMMIT`, so it may travel in the
/// `COMMIT`'s round trip ([`Sql::read_after_commit`]). Nothing on SQLite.
pub fn read_active_after_commit(sql: &mut impl Sql, session_key: &str, known: Option<(i64, i64)>) {
    // The dialect's decision here: only PostgreSQL has a round trip to save (`context_pg`).
    if sql.dialect().is_postgres() {
        context_pg::read_active_after_commit(sql, session_key, known);
    }
}

/// Per-turn query of `assemble`: [`conversations::find_active`], and when the active
/// conversation is `known.0`, also what [`newer_than`]`(known.0, known.1)` reads. On PostgreSQL
/// that is one statement (one round trip to a server instead of two), which also reads the row's
/// version for a later claim ([`context_pg`]'s); in-process SQLite has no round trip to save,
/// and its two plain statements are faster.
pub fn active_with_newer(
    sql: &mut impl Sql,
    session_key: &str,
    known: Option<(i64, i64)>,
) -> Result<Option<ActiveWithNewer>> {
    // The dialect's decision here: PostgreSQL's one statement (`context_pg`).
    if sql.dialect().is_postgres() {
        return context_pg::active_with_newer(sql, session_key, known);
    }
    let Some((id, after)) = known else {
        return Ok(
            conversations::find_active(sql, session_key)?.map(|conversation| ActiveWithNewer {
                conversation,
                newer: None,
                version: None,
            }),
        );
    };
    let Some(conversation) = conversations::find_active(sql, session_key)? else {
        return Ok(None);
    };
    let newer = if conversation.id == id {
        Some(Newer {
            conversation_id: id,
            after,
            items: newer_than(sql, id, after)?,
        })
    } else {
        None
    };
    Ok(Some(ActiveWithNewer {
        conversation,
        newer,
        version: None,
    }))
}

/// Per-turn query: a page of the view, through the primary key and the rowid joins. A stubbed
/// message shows its stub's JSON (the stored one is not even read).
pub const NEWEST_BEFORE_SQL: &str = "SELECT ci.ordinal, ci.token_count, m.role, COALESCE(ci.view_json, m.raw_json), s.id, s.depth, s.content, s.earliest_at, s.latest_at, s.descendant_message_count, ci.message_id, ci.stub \
     FROM context_items ci \
     LEFT JOIN messages m ON m.id = ci.message_id \
     LEFT JOIN summaries s ON s.id = ci.summary_id \
     WHERE ci.conversation_id = ?1 AND ci.ordinal < ?2 ORDER BY ci.ordinal DESC LIMIT ?3";

/// Per-turn query: the items appended after `ordinal`, oldest first.
pub const NEWER_THAN_SQL: &str = "SELECT ci.ordinal, ci.token_count, m.role, COALESCE(ci.view_json, m.raw_json), s.id, s.depth, s.content, s.earliest_at, s.latest_at, s.descendant_message_count, ci.message_id, ci.stub \
     FROM context_items ci \
     LEFT JOIN messages m ON m.id = ci.message_id \
     LEFT JOIN summaries s ON s.id = ci.summary_id \
     WHERE ci.conversation_id = ?1 AND ci.ordinal > ?2 ORDER BY ci.ordinal ASC";

fn from_row(row: &Row) -> Result<ContextItem> {
    item_at(row, 0)
}

/// The items with `ordinal > after`, oldest first.
pub fn newer_than(
    sql: &mut impl Sql,
    conversation_id: i64,
    after: i64,
) -> Result<Vec<ContextItem>> {
    let rows = sql.query(NEWER_THAN_SQL, &[conversation_id.into(), after.into()])?;
    rows.iter().map(from_row).collect()
}

/// Up to `limit` items with `ordinal < before`, newest first.
pub fn newest_before(
    sql: &mut impl Sql,
    conversation_id: i64,
    before: i64,
    limit: i64,
) -> Result<Vec<ContextItem>> {
    let rows = sql.query(
        NEWEST_BEFORE_SQL,
        &[conversation_id.into(), before.into(), limit.into()],
    )?;
    rows.iter().map(from_row).collect()
}
