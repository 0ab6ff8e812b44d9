//! The conversation row, shared by both dialects' statements ([`super::conversations`] and
//! `conversations_pg`): its fields, the one column list every statement that reads it names,
//! how a row is read back, and the two statements resolving a key runs on either backend
//! (archiving the key's conversation, numbering the next generation).

use crate::error::Result;
use crate::store::sql::Sql;

/// The active conversation of a session key.
#[derive(Debug, Clone, PartialEq)]
pub struct Conversation {
    /// The conversation's row id in `conversations`.
    pub id: i64,
    /// The host's session key.
    pub session_key: String,
    /// The host's session id.
    pub session_id: String,
    /// Which conversation of this session key it is, from 1; it continues across archives.
    pub generation: i64,
    /// How many messages it stores (`message_count`).
    pub message_count: i64,
    /// Tokens of all its stored messages (`token_count`).
    pub token_count: i64,
    /// The ordinal the next context item gets.
    pub next_ordinal: i64,
    /// Running total of the active context's tokens.
    pub context_token_count: i64,
    /// Changes whenever context items are replaced rather than appended.
    pub context_epoch: i64,
    /// The part of `context_token_count` that is summaries.
    pub context_summary_tokens: i64,
    /// How far tool-output stubbing has looked (the last context ordinal it considered; 0 for a
    /// new conversation). Read with the row, so a turn's stubbing needs no read of its own.
    pub stubbed_through: i64,
    /// The compaction trigger's retry state and pending work as stored (JSON; None until first
    /// saved; see `store::compaction::state_of`). Read with the row, so a turn's trigger needs no
    /// read of its own.
    pub compaction_state_json: Option<String>,
    /// The pending work the trigger asked for, as JSON (see `store::compaction::Pending`).
    pub compaction_pending_json: Option<String>,
}

impl Conversation {
    /// Tokens of the raw messages in the active context.
    pub fn context_raw_tokens(&self) -> i64 {
        self.context_token_count - self.context_summary_tokens
    }

    /// The row as [`add_appended`] leaves it after `messages` new messages of `tokens` tokens:
    /// what a read of it would return inside the same write transaction (SQLite's write lock,
    /// PostgreSQL's row lock from `conversations::resolve` keep every other writer out), without the read.
    pub fn after_append(&self, messages: i64, tokens: i64) -> Conversation {
        Conversation {
            message_count: self.message_count + messages,
            token_count: self.token_count + tokens,
            next_ordinal: self.next_ordinal + messages,
            context_token_count: self.context_token_count + tokens,
            ..self.clone()
        }
    }
}

/// The columns [`from_row`] reads, in order: the one list every statement that reads a
/// conversation row names (a macro, so the `const` statements can be built from it).
macro_rules! conversation_columns {
    () => {
        "id, session_key, session_id, generation, message_count, token_count, next_ordinal, context_token_count, context_epoch, context_summary_tokens, stubbed_through, compaction_state_json, compaction_pending_json"
    };
}
pub(crate) use conversation_columns;

/// That list as a string.
pub(crate) const COLUMNS: &str = conversation_columns!();
/// How many columns [`COLUMNS`] names.
pub(crate) const COLUMN_COUNT: usize = 13;

/// [`COLUMNS`] of the table under `alias`, for joins where a bare name would be ambiguous.
pub(crate) fn columns_of(alias: &str) -> String {
    COLUMNS
        .split(", ")
        .map(|c| format!("{alias}.{c}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The conversation whose [`COLUMNS`] start a row.
pub(crate) fn from_row(row: &crate::store::sql::Row) -> Result<Conversation> {
    Ok(Conversation {
        id: row.int(0)?,
        session_key: row.text(1)?,
        session_id: row.text(2)?,
        generation: row.int(3)?,
        message_count: row.int(4)?,
        token_count: row.int(5)?,
        next_ordinal: row.int(6)?,
        context_token_count: row.int(7)?,
        context_epoch: row.int(8)?,
        context_summary_tokens: row.int(9)?,
        stubbed_through: row.int(10)?,
        compaction_state_json: row.opt_text(11)?,
        compaction_pending_json: row.opt_text(12)?,
    })
}

/// Archives a conversation: kept with all its messages and summaries (searchable with scope
/// "all"), no longer the active one for its key. The key's next write starts a new generation.
pub fn archive(sql: &mut impl Sql, id: i64, cause: &str, now_ms: i64) -> Result<()> {
    sql.execute(
        "UPDATE conversations SET status = 'archived', archive_cause = ?2, archived_at = ?3 WHERE id = ?1",
        &[id.into(), cause.into(), now_ms.into()],
    )
}

/// Generation numbers continue across archives of the same key.
pub fn next_generation(sql: &mut impl Sql, session_key: &str) -> Result<i64> {
    let row = sql.query_row(
        "SELECT COALESCE(MAX(generation), 0) + 1 FROM conversations WHERE session_key = ?1",
        &[session_key.into()],
    )?;
    row.map_or(Ok(1), |r| r.int(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_column_list_has_column_count_columns_and_aliases_each() {
        assert_eq!(COLUMNS.split(", ").count(), COLUMN_COUNT);
        let aliased = columns_of("c");
        assert_eq!(aliased.split(", ").count(), COLUMN_COUNT);
        assert!(
            aliased.starts_with("c.id, c.session_key, ")
                && aliased.ends_with(", c.compaction_pending_json"),
            "{aliased}"
        );
    }
}
