//! The active context: an ordered list of items (messages and summaries) per conversation, keyed
//! by ordinal. Reads page backwards from the newest item through the primary key; a compaction
//! replaces a contiguous range by one summary at the range's first ordinal, renumbering nothing.

use crate::core::message::Role;
use crate::error::{Error, Result};
use crate::store::conversations::{self, Conversation};
use crate::store::sql::{Row, Sql, SqlValue};
use crate::store::WriteTx;

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

/// What a context item shows the model.
#[derive(Debug, Clone, PartialEq)]
pub enum ItemContent {
    /// A stored message (`id` in `messages`): exactly as the host sent it, or as its stub shows
    /// it (`stub`: the stub's variant, see `core::masking::stub`; the JSON is the stub's).
    Message {
        /// The message's row id in `messages`.
        id: i64,
        /// The message's role.
        role: Role,
        /// The message's JSON as the view shows it: the host's original, or the stub's.
        raw_json: String,
        /// The stub variant (`context_items.stub`): None when the message is shown whole.
        stub: Option<i64>,
    },
    /// A summary standing in for the messages (or summaries) it covers.
    Summary {
        /// The summary's row id in `summaries`.
        id: i64,
        /// Its depth in the summary DAG: 0 for a leaf summary, one more than its sources for a
        /// condensed one.
        depth: i64,
        /// The summary's text.
        content: String,
        /// Time of the earliest message it covers, in ms since the epoch (None when unknown).
        earliest_at: Option<i64>,
        /// Time of the latest message it covers, in ms since the epoch (None when unknown).
        latest_at: Option<i64>,
        /// How many original messages it covers, directly or through the summaries below it.
        descendant_messages: i64,
    },
}

/// One item of the active context.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextItem {
    /// The item's position in the context (`context_items.ordinal`); unique per conversation, never
    /// renumbered.
    pub ordinal: i64,
    /// The item's size in tokens as the model sees it (`context_items.token_count`).
    pub tokens: u32,
    /// The message or summary the item shows.
    pub content: ItemContent,
}

fn from_row(row: &Row) -> Result<ContextItem> {
    item_at(row, 0)
}

/// The item whose [`ITEM_COLUMNS`] start at column `at`.
fn item_at(row: &Row, at: usize) -> Result<ContextItem> {
    let tokens = u32::try_from(row.int(at + 1)?)
        .map_err(|_| Error::unexpected_data("stored token count out of range"))?;
    let content = match row.opt_text(at + 2)? {
        Some(role_name) => {
            let role = Role::parse(&role_name).ok_or_else(|| {
                Error::unexpected_data(format!("stored message has unknown role {role_name:?}"))
            })?;
            ItemContent::Message {
                id: row.int(at + 10)?,
                role,
                raw_json: row.text(at + 3)?,
                stub: row.opt_int(at + 11)?,
            }
        }
        None => ItemContent::Summary {
            id: row.int(at + 4)?,
            depth: row.int(at + 5)?,
            content: row.text(at + 6)?,
            earliest_at: row.opt_int(at + 7)?,
            latest_at: row.opt_int(at + 8)?,
            descendant_messages: row.opt_int(at + 9)?.unwrap_or(0),
        },
    };
    Ok(ContextItem {
        ordinal: row.int(at)?,
        tokens,
        content,
    })
}

/// The item columns [`item_at`] reads, in order.
const ITEM_COLUMNS: &str = "ci.ordinal, ci.token_count, m.role, COALESCE(ci.view_json, m.raw_json), s.id, s.depth, s.content, s.earliest_at, s.latest_at, s.descendant_message_count, ci.message_id, ci.stub";
/// How many columns [`ITEM_COLUMNS`] names.
const ITEM_COLUMN_COUNT: usize = 12;

/// A session key's active conversation, with the items of it appended after an ordinal.
#[derive(Debug, Clone, PartialEq)]
pub struct ActiveWithNewer {
    /// The active conversation's row.
    pub conversation: Conversation,
    /// When the conversation is the one asked about: its items with `ordinal > after`, oldest
    /// first, read in the same statement as the row (so they agree with its `next_ordinal`).
    pub newer: Option<Newer>,
    /// PostgreSQL: the row's version, for a later optimistic claim (`store::claim`).
    pub version: Option<crate::store::conversations::RowVersion>,
}

/// Items with `ordinal > after` of conversation `conversation_id`, oldest first.
#[derive(Debug, Clone, PartialEq)]
pub struct Newer {
    /// The conversation, a row id in `conversations`.
    pub conversation_id: i64,
    /// The ordinal the items follow (exclusive).
    pub after: i64,
    /// The items with `ordinal > after`, oldest first.
    pub items: Vec<ContextItem>,
}

/// [`active_with_newer`]'s statement on PostgreSQL; parameters: the session key, the known
/// conversation's id and the ordinal its view has been read through.
fn active_with_newer_postgres() -> String {
    format!(
        "SELECT {}, {ITEM_COLUMNS}, CAST(CAST(c.xmin AS text) AS bigint), c.host_facts_json FROM conversations c \
         LEFT JOIN context_items ci ON ci.conversation_id = c.id AND c.id = ?2 AND ci.ordinal > ?3 \
         LEFT JOIN messages m ON m.id = ci.message_id \
         LEFT JOIN summaries s ON s.id = ci.summary_id \
         WHERE c.session_key = ?1 AND c.status = 'active' ORDER BY ci.ordinal ASC",
        conversations::columns_of("c")
    )
}

/// Before a turn's transaction on PostgreSQL: tells the driver that `assemble`'s read
/// ([`active_with_newer`] with the same `known`) follows the `COMMIT`, so it may travel in the
/// `COMMIT`'s round trip ([`Sql::read_after_commit`]). Nothing on SQLite.
pub fn read_active_after_commit(sql: &mut impl Sql, session_key: &str, known: Option<(i64, i64)>) {
    if sql.dialect().is_postgres() {
        let (id, after) = known.unwrap_or((0, 0));
        sql.read_after_commit(
            &active_with_newer_postgres(),
            &[session_key.into(), id.into(), after.into()],
        );
    }
}

/// Per-turn query of `assemble`: [`conversations::find_active`], and when the active
/// conversation is `known.0`, also what [`newer_than`]`(known.0, known.1)` reads, in one
/// statement (one round trip to a server instead of two). Rows: the conversation's columns,
/// then an item's (NULL when there is none), then the row's `xmin` and host facts (the same in
/// every row).
pub fn active_with_newer(
    sql: &mut impl Sql,
    session_key: &str,
    known: Option<(i64, i64)>,
) -> Result<Option<ActiveWithNewer>> {
    let postgres = sql.dialect().is_postgres();
    // PostgreSQL reads the row's version even without a view to bring up to date (no
    // conversation has id 0, so no item comes along).
    let Some((id, after)) = known.or(postgres.then_some((0, 0))) else {
        return Ok(
            conversations::find_active(sql, session_key)?.map(|conversation| ActiveWithNewer {
                conversation,
                newer: None,
                version: None,
            }),
        );
    };
    if !postgres {
        // In-process SQLite has no round trip to save, and its two plain statements are faster.
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
        return Ok(Some(ActiveWithNewer {
            conversation,
            newer,
            version: None,
        }));
    }
    let rows = sql.query(
        &active_with_newer_postgres(),
        &[session_key.into(), id.into(), after.into()],
    )?;
    let Some(first) = rows.first() else {
        return Ok(None);
    };
    let conversation = conversations::from_row(first)?;
    let at = conversations::COLUMN_COUNT;
    let version_at = at + ITEM_COLUMN_COUNT;
    let version = crate::store::conversations::RowVersion {
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
