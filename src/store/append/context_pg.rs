//! The active context's reads on PostgreSQL ([`super::context`] decides when they run): a
//! session's active conversation, the items appended to it after an ordinal and the row's
//! version (for a later claim, `store::claim`), in one statement — one round trip to the server
//! where SQLite runs two plain statements — and the driver's hint that this read follows a
//! turn's `COMMIT`.
//!
//! Must not: run on SQLite (`xmin` is PostgreSQL's).

use crate::error::Result;
use crate::store::conversations::{self, RowVersion};
use crate::store::sql::{Sql, SqlValue};

use super::context_rows::{item_at, ActiveWithNewer, Newer, ITEM_COLUMNS, ITEM_COLUMN_COUNT};

/// [`active_with_newer`]'s statement; parameters: the session key, the known conversation's id
/// and the ordinal its view has been read through.
fn active_with_newer_sql() -> String {
    format!(
        "SELECT {}, {ITEM_COLUMNS}, CAST(CAST(c.xmin AS text) AS bigint), c.host_facts_json FROM conversations c \
         LEFT JOIN context_items ci ON ci.conversation_id = c.id AND c.id = ?2 AND ci.ordinal > ?3 \
         LEFT JOIN messages m ON m.id = ci.message_id \
         LEFT JOIN summaries s ON s.id = ci.summary_id \
         WHERE c.session_key = ?1 AND c.status = 'active' ORDER BY ci.ordinal ASC",
        conversations::columns_of("c")
    )
}

/// Tells the driver that [`active_with_newer`] with the same `known` follows the `COMMIT` (see
/// `context::read_active_after_commit`).
pub(super) fn read_active_after_commit(
    sql: &mut impl Sql,
    session_key: &str,
    known: Option<(i64, i64)>,
) {
    let (id, after) = known.unwrap_or((0, 0));
    sql.read_after_commit(
        &active_with_newer_sql(),
        &[session_key.into(), id.into(), after.into()],
    );
}

/// `context::active_with_newer` in one statement. Rows: the conversation's columns, then an
/// item's (NULL when there is none), then the row's `xmin` and host facts (the same in every
/// row). The row's version is read even without a view to bring up to date (`known` None: no
/// conversation has id 0, so no item comes along).
pub(super) fn active_with_newer(
    sql: &mut impl Sql,
    session_key: &str,
    known: Option<(i64, i64)>,
) -> Result<Option<ActiveWithNewer>> {
    let (id, after) = known.unwrap_or((0, 0));
    let rows = sql.query(
        &active_with_newer_sql(),
        &[session_key.into(), id.into(), after.into()],
    )?;
    let Some(first) = rows.first() else {
        return Ok(None);
    };
    let conversation = conversations::from_row(first)?;
    let at = conversations::COLUMN_COUNT;
    let version_at = at + ITEM_COLUMN_COUNT;
    let version = RowVersion {
        xmin: first.int(version_at)?,
        host_facts_json: first.opt_text(version_at + 1)?,
    };
    let newer = if conversation.id == id {
        let items = rows
            .iter()
            .filter(|r| r.0.get(at).is_some_and(|v| *v != SqlValue::Null))
            .map(|r| item_at(r, at))
            .collect::<Result<Vec<_>>>()?;
        Some(Newer {
            conversation_id: id,
            after,
            items,
        })
    } else {
        None
    };
    Ok(Some(ActiveWithNewer {
        conversation,
        newer,
        version: Some(version),
    }))
}
