//! What the context's reads return, shared by SQLite's reads ([`super::context`]) and
//! PostgreSQL's (`context_pg`): one item of the active context, the columns a statement names
//! to read one and how a row is read back, and a session's active conversation with the items
//! appended after an ordinal.

use crate::core::message::Role;
use crate::error::{Error, Result};
use crate::store::conversations::{Conversation, RowVersion};
use crate::store::sql::Row;

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

/// The item whose [`ITEM_COLUMNS`] start at column `at`.
pub(super) fn item_at(row: &Row, at: usize) -> Result<ContextItem> {
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
pub(super) const ITEM_COLUMNS: &str = "ci.ordinal, ci.token_count, m.role, COALESCE(ci.view_json, m.raw_json), s.id, s.depth, s.content, s.earliest_at, s.latest_at, s.descendant_message_count, ci.message_id, ci.stub";
/// How many columns [`ITEM_COLUMNS`] names.
pub(super) const ITEM_COLUMN_COUNT: usize = 12;

/// A session key's active conversation, with the items of it appended after an ordinal.
#[derive(Debug, Clone, PartialEq)]
pub struct ActiveWithNewer {
    /// The active conversation's row.
    pub conversation: Conversation,
    /// When the conversation is the one asked about: its items with `ordinal > after`, oldest
    /// first, read in the same statement as the row (so they agree with its `next_ordinal`).
    pub newer: Option<Newer>,
    /// PostgreSQL: the row's version, for a later optimistic claim (`store::claim`).
    pub version: Option<RowVersion>,
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
