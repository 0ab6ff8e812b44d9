//! Tool-output stubs' storage: the newest context items a turn considers (everything after the
//! conversation's `stubbed_through`, a bounded page), the stored messages a batch renders, and
//! applying a batch in the caller's transaction: each item gets its stub and its new token
//! count, the conversation's running total follows, and the context epoch moves on once (cached
//! views follow the batch in place or rebuild once). Messages themselves are never written.

use std::collections::HashMap;

use crate::core::masking::ScanItem;
use crate::core::message::Role;
use crate::error::{Error, Result, StorageErrorKind};
use crate::store::dialect::Dialect;
use crate::store::sql::{Row, Sql, SqlValue};
use crate::store::WriteTx;

/// Per-turn query: how far stubbing has looked.
pub const FRONTIER_SQL: &str = "SELECT stubbed_through FROM conversations WHERE id = ?1";

/// Per-turn query: the items after the frontier, newest first, through the primary key; an
/// assistant's tool calls through `message_parts`' primary key.
pub const SCAN_SQL: &str = "SELECT ci.ordinal, ci.message_id, ci.token_count, m.role, ci.stub, \
       (m.role = 'assistant' AND EXISTS (SELECT 1 FROM message_parts p WHERE p.message_id = ci.message_id AND p.kind = 'tool_call')) \
     FROM context_items ci LEFT JOIN messages m ON m.id = ci.message_id \
     WHERE ci.conversation_id = ?1 AND ci.ordinal > ?2 ORDER BY ci.ordinal DESC LIMIT ?3";

/// [`SCAN_SQL`] as one value of the statement that locks a conversation's row before an append
/// (`lock_before_append::resolve_for_append`, PostgreSQL; `c` is the locked row, `?3` the limit): the
/// items after the row's `stubbed_through`, newest first, as JSON text, NULL for none. It rides
/// in the lock's round trip, so a turn's stub pass needs no read of its own (see
/// [`scan_from_json`]).
macro_rules! scan_json_of_locked_row {
    () => {
        "(SELECT CAST(json_agg(json_build_array(s.ordinal, s.message_id, s.token_count, s.role, s.stub, s.calls) ORDER BY s.ordinal DESC) AS text) FROM \
           (SELECT ci.ordinal, ci.message_id, ci.token_count, m.role, ci.stub, \
              (m.role = 'assistant' AND EXISTS (SELECT 1 FROM message_parts p WHERE p.message_id = ci.message_id AND p.kind = 'tool_call')) AS calls \
            FROM context_items ci LEFT JOIN messages m ON m.id = ci.message_id \
            WHERE ci.conversation_id = c.id AND ci.ordinal > c.stubbed_through ORDER BY ci.ordinal DESC LIMIT ?3) s)"
    };
}
pub(crate) use scan_json_of_locked_row;

/// One item as [`scan_json_of_locked_row`] writes it: ordinal, message id, tokens, role, stub,
/// whether it calls tools.
type JsonScanItem = (
    i64,
    Option<i64>,
    i64,
    Option<String>,
    Option<i64>,
    Option<bool>,
);

/// What [`scan`] returns with `limit`, from the text [`scan_json_of_locked_row`] gave (None: no item).
pub fn scan_from_json(json: Option<&str>, limit: i64) -> Result<(Vec<ScanItem>, bool)> {
    let rows: Vec<JsonScanItem> = match json {
        Some(text) => serde_json::from_str(text).map_err(|e| {
            Error::unexpected_data(format!("reading the context items sent with the lock: {e}"))
        })?,
        None => Vec::new(),
    };
    let mut items = Vec::with_capacity(rows.len());
    for (ordinal, message_id, tokens, role, stub, calls) in rows.into_iter().rev() {
        let tokens = u32::try_from(tokens)
            .map_err(|_| Error::unexpected_data("stored token count out of range"))?;
        let role = role.map(|r| role_of(&r)).transpose()?;
        items.push(ScanItem {
            ordinal,
            message_id,
            role,
            tokens,
            stub,
            calls_tools: calls.unwrap_or(false),
        });
    }
    let truncated = items.len() as i64 == limit;
    Ok((items, truncated))
}

/// Where stubbing stopped looking in this conversation (0 for a new one).
pub fn frontier(sql: &mut impl Sql, conversation_id: i64) -> Result<i64> {
    sql.query_row(FRONTIER_SQL, &[conversation_id.into()])?
        .map_or(Ok(0), |r| r.int(0))
}

fn role_of(name: &str) -> Result<Role> {
    Role::parse(name)
        .ok_or_else(|| Error::unexpected_data(format!("stored message has unknown role {name:?}")))
}

fn scan_item(row: &Row) -> Result<ScanItem> {
    let tokens = u32::try_from(row.int(2)?)
        .map_err(|_| Error::unexpected_data("stored token count out of range"))?;
    let role = row.opt_text(3)?.map(|r| role_of(&r)).transpose()?;
    Ok(ScanItem {
        ordinal: row.int(0)?,
        message_id: row.opt_int(1)?,
        role,
        tokens,
        stub: row.opt_int(4)?,
        calls_tools: row.opt_int(5)?.unwrap_or(0) != 0,
    })
}

/// Up to `limit` items after `after`, oldest first, and whether older ones were left out.
pub fn scan(
    sql: &mut impl Sql,
    conversation_id: i64,
    after: i64,
    limit: i64,
) -> Result<(Vec<ScanItem>, bool)> {
    let rows = sql.query(
        SCAN_SQL,
        &[conversation_id.into(), after.into(), limit.into()],
    )?;
    let mut items = rows.iter().map(scan_item).collect::<Result<Vec<_>>>()?;
    items.reverse();
    Ok((items, rows.len() as i64 == limit))
}

/// A stored message a batch renders.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredRow {
    /// The message's row id in `messages`.
    pub id: i64,
    /// The message's role.
    pub role: Role,
    /// The message's JSON exactly as the host sent it (`messages.raw_json`).
    pub raw_json: String,
    /// As stored (the whole message's size, whatever the view shows).
    pub tokens: u32,
}

fn id_array(ids: &[i64]) -> SqlValue {
    SqlValue::Text(format!(
        "[{}]",
        ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
    ))
}

/// The stored messages with these ids, by id.
pub fn load_messages(sql: &mut impl Sql, ids: &[i64]) -> Result<HashMap<i64, StoredRow>> {
    let query = format!(
        "SELECT id, role, raw_json, token_count FROM messages WHERE id IN {}",
        sql.dialect().int_list(1)
    );
    let rows = sql.query(&query, &[id_array(ids)])?;
    rows.iter()
        .map(|r| {
            let tokens = u32::try_from(r.int(3)?)
                .map_err(|_| Error::unexpected_data("stored token count out of range"))?;
            Ok((
                r.int(0)?,
                StoredRow {
                    id: r.int(0)?,
                    role: role_of(&r.text(1)?)?,
                    raw_json: r.text(2)?,
                    tokens,
                },
            ))
        })
        .collect()
}

/// The call ids the tool results with these message ids answer, by message id (through the
/// parts' primary key).
pub fn result_call_ids(sql: &mut impl Sql, message_ids: &[i64]) -> Result<HashMap<i64, String>> {
    let query = format!(
        "SELECT message_id, tool_call_id FROM message_parts WHERE message_id IN {} AND kind = 'tool_result' AND tool_call_id IS NOT NULL",
        sql.dialect().int_list(1)
    );
    let rows = sql.query(&query, &[id_array(message_ids)])?;
    rows.iter().map(|r| Ok((r.int(0)?, r.text(1)?))).collect()
}

/// The calls' parts through the tool-call index, then their messages: `CROSS JOIN` keeps SQLite
/// from starting at the conversation's messages (a scan of its whole history).
pub const LOAD_CALLS_SQL: &str = "SELECT p.tool_call_id, m.raw_json FROM message_parts p CROSS JOIN messages m ON m.id = p.message_id \
     WHERE p.tool_call_id IN (SELECT value FROM json_each(?1)) AND p.kind = 'tool_call' AND m.conversation_id = ?2";

/// The stored JSON of the assistant messages that make these tool calls in the conversation,
/// by call id.
pub fn load_calls(
    sql: &mut impl Sql,
    conversation_id: i64,
    call_ids: &[String],
) -> Result<HashMap<String, String>> {
    let ids = SqlValue::Text(
        serde_json::to_string(call_ids)
            .map_err(|e| Error::storage(StorageErrorKind::Other, e.to_string()))?,
    );
    let rows = match sql.dialect() {
        Dialect::Sqlite => sql.query(LOAD_CALLS_SQL, &[ids, conversation_id.into()])?,
        d => {
            let query = format!(
                "SELECT p.tool_call_id, m.raw_json FROM message_parts p JOIN messages m ON m.id = p.message_id \
                 WHERE p.tool_call_id IN {} AND p.kind = 'tool_call' AND m.conversation_id = ?2",
                d.text_list(1)
            );
            sql.query(&query, &[ids, conversation_id.into()])?
        }
    };
    rows.iter().map(|r| Ok((r.text(0)?, r.text(1)?))).collect()
}

/// One item's new form.
#[derive(Debug, Clone, PartialEq)]
pub struct Restub<'a> {
    /// The item's position in the context (`context_items.ordinal`).
    pub ordinal: i64,
    /// The message it shows, a row id in `messages`.
    pub message_id: i64,
    /// Its tokens before (the batch was planned with them).
    pub old_tokens: u32,
    /// Its tokens in the new form, written to `context_items.token_count`.
    pub tokens: u32,
    /// The new stub variant, written to `context_items.stub` (1: a line stub; 2 and up: an excerpt
    /// of that size).
    pub variant: i64,
    /// The message's JSON in the new form, written to `context_items.view_json`.
    pub view_json: &'a str,
}

const RESTUB_SQL: &str = "UPDATE context_items SET stub = ?5, view_json = ?6, token_count = ?7 \
     WHERE conversation_id = ?1 AND ordinal = ?2 AND message_id = ?3 AND token_count = ?4 RETURNING ordinal";

const ADVANCE_SQL: &str = "UPDATE conversations SET context_token_count = context_token_count + ?2, context_epoch = context_epoch + ?3, \
     stubbed_through = MAX(stubbed_through, ?4) WHERE id = ?1";
const ADVANCE_SQL_POSTGRES: &str = "UPDATE conversations SET context_token_count = context_token_count + ?2, context_epoch = context_epoch + ?3, \
     stubbed_through = GREATEST(stubbed_through, ?4) WHERE id = ?1";

/// Applies a batch inside `tx`: every item as planned, the running total, one epoch step, and
/// the frontier. Fails, for the caller to roll back (drop `tx`), when an item is no longer as
/// planned. Returns the change of the context's tokens.
pub fn apply<S: Sql>(
    tx: &mut WriteTx<'_, S>,
    conversation_id: i64,
    restubs: &[Restub<'_>],
    frontier: i64,
) -> Result<i64> {
    crate::store::conversations::lock(tx.sql(), conversation_id)?;
    apply_held(tx, conversation_id, restubs, frontier)
}

/// [`apply`] in a transaction that already holds the conversation (it resolved or locked the
/// conversation's row earlier: a turn's stubs follow its append), so it takes no lock again
/// (on PostgreSQL that was a round trip to re-lock a row the transaction held).
pub fn apply_held<S: Sql>(
    tx: &mut WriteTx<'_, S>,
    conversation_id: i64,
    restubs: &[Restub<'_>],
    frontier: i64,
) -> Result<i64> {
    let sql = tx.sql();
    let mut delta = 0i64;
    for r in restubs {
        let params = [
            conversation_id.into(),
            r.ordinal.into(),
            r.message_id.into(),
            r.old_tokens.into(),
            r.variant.into(),
            r.view_json.into(),
            r.tokens.into(),
        ];
        if sql.query_row(RESTUB_SQL, &params)?.is_none() {
            return Err(Error::Stale(format!(
                "context item {} changed while its stub was prepared; nothing was applied",
                r.ordinal
            )));
        }
        delta += i64::from(r.tokens) - i64::from(r.old_tokens);
    }
    let query = match sql.dialect() {
        Dialect::Sqlite => ADVANCE_SQL,
        Dialect::Postgres => ADVANCE_SQL_POSTGRES,
    };
    sql.execute(
        query,
        &[
            conversation_id.into(),
            delta.into(),
            i64::from(!restubs.is_empty()).into(),
            frontier.into(),
        ],
    )?;
    Ok(delta)
}

/// The stub variant and view JSON of those of these messages that are stubbed, by message id
/// (what a summary request shows of them).
pub fn stubbed_views(
    sql: &mut impl Sql,
    message_ids: &[i64],
) -> Result<HashMap<i64, (i64, String)>> {
    let query = format!(
        "SELECT message_id, stub, view_json FROM context_items WHERE message_id IN {} AND stub IS NOT NULL AND view_json IS NOT NULL",
        sql.dialect().int_list(1)
    );
    let rows = sql.query(&query, &[id_array(message_ids)])?;
    rows.iter()
        .map(|r| Ok((r.int(0)?, (r.int(1)?, r.text(2)?))))
        .collect()
}

/// How a message is in the view now.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageView {
    /// Its stub variant; None when it is shown whole.
    pub stub: Option<i64>,
    /// Its tokens in the view.
    pub tokens: i64,
    /// The JSON shown instead of the stored message, when stubbed.
    pub view_json: Option<String>,
}

/// How a message is in the view now; None when it is not in the view.
pub fn message_view(sql: &mut impl Sql, message_id: i64) -> Result<Option<MessageView>> {
    let row = sql.query_row(
        "SELECT stub, token_count, view_json FROM context_items WHERE message_id = ?1",
        &[message_id.into()],
    )?;
    row.map(|r| {
        Ok(MessageView {
            stub: r.opt_int(0)?,
            tokens: r.int(1)?,
            view_json: r.opt_text(2)?,
        })
    })
    .transpose()
}
