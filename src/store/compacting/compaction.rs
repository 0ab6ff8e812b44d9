//! Compaction's storage: reading what a plan needs, applying an accepted summary in one
//! transaction (after checking the plan still matches the context), the event log, and the
//! persistent retry and pending-work state. Applying replaces a contiguous range of context items
//! by one summary at the range's first ordinal; no other item moves.

use serde::{Deserialize, Serialize};

use crate::core::compaction::{ContextItem, ItemKind, RetryState};
use crate::core::message::{text_of_raw_json, Role};
use crate::error::{Error, Result, StorageErrorKind};
use crate::store::conversations::Conversation;
use crate::store::dialect::Dialect;
use crate::store::sql::{Row, Sql, SqlValue};
use crate::store::WriteTx;

use super::compaction_pg;

const SEP: char = '\u{1f}';

/// Every active context item with what selection needs (compaction only, not per turn).
pub fn load_items(sql: &mut impl Sql, conversation_id: i64) -> Result<Vec<ContextItem>> {
    load_item_page(
        sql,
        conversation_id,
        ItemPage::After {
            ordinal: i64::MIN,
            limit: -1,
        },
    )
}

/// A page of context items, in context order.
#[derive(Debug, Clone, Copy)]
pub enum ItemPage {
    /// Up to `limit` items after `ordinal`, oldest first (`limit` -1: all of them).
    After {
        /// The context ordinal the page starts after (exclusive).
        ordinal: i64,
        /// Most items to return; -1 for no limit.
        limit: i64,
    },
    /// The newest `limit` items.
    Newest {
        /// Most items to return.
        limit: i64,
    },
}

const ITEM_COLUMNS: &str = "SELECT ci.ordinal, ci.message_id, ci.summary_id, ci.token_count, m.role, s.depth, \
       (SELECT group_concat(p.tool_call_id, char(31)) FROM message_parts p \
          WHERE p.message_id = ci.message_id AND p.kind = 'tool_call' AND p.tool_call_id IS NOT NULL), \
       (SELECT p.tool_call_id FROM message_parts p \
          WHERE p.message_id = ci.message_id AND m.role = 'toolResult' AND p.tool_call_id IS NOT NULL LIMIT 1) \
     FROM context_items ci LEFT JOIN messages m ON m.id = ci.message_id LEFT JOIN summaries s ON s.id = ci.summary_id";

/// One page of context items with what selection needs.
pub fn load_item_page(
    sql: &mut impl Sql,
    conversation_id: i64,
    page: ItemPage,
) -> Result<Vec<ContextItem>> {
    let forms = Forms::of(sql);
    let columns = forms.item_columns;
    let rows = match page {
        ItemPage::After { ordinal, limit } => sql.query(
            &format!("{columns} WHERE ci.conversation_id = ?1 AND ci.ordinal > ?2 ORDER BY ci.ordinal LIMIT ?3"),
            &[conversation_id.into(), ordinal.into(), match forms.no_limit { Some(none) if limit < 0 => none, _ => limit.into() }],
        )?,
        ItemPage::Newest { limit } => sql.query(
            &format!("{columns} WHERE ci.conversation_id = ?1 ORDER BY ci.ordinal DESC LIMIT ?2"),
            &[conversation_id.into(), limit.into()],
        )?,
    };
    let mut items = rows.iter().map(item_from_row).collect::<Result<Vec<_>>>()?;
    if matches!(page, ItemPage::Newest { .. }) {
        items.reverse();
    }
    Ok(items)
}

/// How many items the conversation's active context holds.
pub fn count_items(sql: &mut impl Sql, conversation_id: i64) -> Result<i64> {
    let row = sql.query_row(
        "SELECT COUNT(*) FROM context_items WHERE conversation_id = ?1",
        &[conversation_id.into()],
    )?;
    row.map_or(Ok(0), |r| r.int(0))
}

fn item_from_row(row: &Row) -> Result<ContextItem> {
    let tokens = u32::try_from(row.int(3)?)
        .map_err(|_| Error::unexpected_data("stored token count out of range"))?;
    let (id, kind) = match row.opt_int(1)? {
        Some(message_id) => {
            let name = row.text(4)?;
            let role = Role::parse(&name).ok_or_else(|| {
                Error::unexpected_data(format!("stored message has unknown role {name:?}"))
            })?;
            (message_id, ItemKind::Message { role })
        }
        None => {
            let depth = u32::try_from(row.int(5)?)
                .map_err(|_| Error::unexpected_data("stored summary depth out of range"))?;
            (row.int(2)?, ItemKind::Summary { depth })
        }
    };
    let tool_calls = row
        .opt_text(6)?
        .map(|s| s.split(SEP).map(str::to_owned).collect())
        .unwrap_or_default();
    Ok(ContextItem {
        ordinal: row.int(0)?,
        id,
        kind,
        tokens,
        tool_calls,
        answers: row.opt_text(7)?,
    })
}

/// A source message of a leaf pass.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceRow {
    /// The message's row id in `messages`.
    pub id: i64,
    /// The message's role.
    pub role: Role,
    /// The message's plain text, derived from its raw JSON.
    pub text: String,
    /// The message's JSON exactly as the host sent it (`messages.raw_json`).
    pub raw_json: String,
    /// The host's timestamp of the message (`messages.host_timestamp`), in ms since the epoch, when
    /// it gave one.
    pub timestamp_ms: Option<i64>,
}

/// Ids as one JSON array parameter, read with `json_each`: the statement text stays the same
/// whatever the ids, so it is prepared once. With the ids spelled into the SQL, every pass
/// prepared (and the drivers' statement caches kept) a statement of its own: ~1 MiB of native
/// memory per compaction sweep of a 100K-message import.
fn id_array(ids: &[i64]) -> SqlValue {
    SqlValue::Text(format!(
        "[{}]",
        ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
    ))
}

const LOAD_MESSAGES_SQL: &str = "SELECT id, role, raw_json, host_timestamp FROM messages WHERE id IN (SELECT value FROM json_each(?1)) ORDER BY seq";

/// The messages with these ids, in conversation order.
pub fn load_messages(sql: &mut impl Sql, ids: &[i64]) -> Result<Vec<SourceRow>> {
    let rows = match sql.dialect() {
        Dialect::Sqlite => sql.query(LOAD_MESSAGES_SQL, &[id_array(ids)])?,
        d => sql.query(&format!("SELECT id, role, raw_json, host_timestamp FROM messages WHERE id IN {} ORDER BY seq", d.int_list(1)), &[id_array(ids)])?,
    };
    rows.iter()
        .map(|row| {
            let name = row.text(1)?;
            let role = Role::parse(&name).ok_or_else(|| {
                Error::unexpected_data(format!("stored message has unknown role {name:?}"))
            })?;
            let raw_json = row.text(2)?;
            Ok(SourceRow {
                id: row.int(0)?,
                role,
                text: text_of_raw_json(&raw_json)?,
                raw_json,
                timestamp_ms: row.opt_int(3)?,
            })
        })
        .collect()
}

/// A stored summary, as a condensed pass and assembly need it.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryRow {
    /// The summary's row id in `summaries`.
    pub id: i64,
    /// Its depth in the summary DAG: 0 for a leaf summary.
    pub depth: i64,
    /// The summary's text.
    pub content: String,
    /// Time of the earliest message it covers, in ms since the epoch (None when unknown).
    pub earliest_at: Option<i64>,
    /// Time of the latest message it covers, in ms since the epoch (None when unknown).
    pub latest_at: Option<i64>,
    /// How many original messages it covers, directly or through the summaries below it
    /// (`descendant_message_count`).
    pub descendant_messages: i64,
    /// How many summaries lie below it in the DAG (`descendant_summary_count`).
    pub descendant_summaries: i64,
    /// Tokens of what it was made from (`source_token_count`).
    pub source_tokens: i64,
}

/// The summaries with these ids, in the order given.
pub fn load_summaries(sql: &mut impl Sql, ids: &[i64]) -> Result<Vec<SummaryRow>> {
    let query = format!(
        "SELECT id, depth, content, earliest_at, latest_at, descendant_message_count, descendant_summary_count, source_token_count \
         FROM summaries WHERE id IN {}",
        sql.dialect().int_list(1)
    );
    let rows = sql.query(&query, &[id_array(ids)])?;
    let mut found: Vec<SummaryRow> = rows
        .iter()
        .map(|row: &Row| {
            Ok(SummaryRow {
                id: row.int(0)?,
                depth: row.int(1)?,
                content: row.text(2)?,
                earliest_at: row.opt_int(3)?,
                latest_at: row.opt_int(4)?,
                descendant_messages: row.int(5)?,
                descendant_summaries: row.int(6)?,
                source_tokens: row.int(7)?,
            })
        })
        .collect::<Result<_>>()?;
    found.sort_by_key(|s| ids.iter().position(|id| *id == s.id));
    Ok(found)
}

/// A summary to store.
#[derive(Debug, Clone, PartialEq)]
pub struct NewSummary<'a> {
    /// The conversation it belongs to, a row id in `conversations`.
    pub conversation_id: i64,
    /// "leaf" (covers messages) or "condensed" (covers summaries).
    pub kind: &'static str,
    /// Its depth in the summary DAG: 0 for a leaf, one more than its sources for a condensed one.
    pub depth: i64,
    /// The summary's text.
    pub content: &'a str,
    /// The text's size in tokens (`summaries.token_count`).
    pub tokens: u32,
    /// Time of the earliest message it covers, in ms since the epoch.
    pub earliest_at: Option<i64>,
    /// Time of the latest message it covers, in ms since the epoch.
    pub latest_at: Option<i64>,
    /// How many original messages it covers, directly or through the summaries below it.
    pub descendant_messages: i64,
    /// How many summaries lie below it in the DAG.
    pub descendant_summaries: i64,
    /// Tokens of what it was made from (the replaced items).
    pub source_tokens: i64,
    /// Name of the summarizer that wrote it.
    pub summarizer: &'a str,
    /// The model that wrote it, when the summarizer names one.
    pub model: Option<&'a str>,
    /// "normal", "aggressive" or "fallback".
    pub level: &'static str,
}

/// The range a plan replaces, as the plan saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct Range<'a> {
    /// Ordinal of the range's first context item.
    pub first_ordinal: i64,
    /// Ordinal of the range's last context item (inclusive).
    pub last_ordinal: i64,
    /// Message ids (leaf) or summary ids (condensed) the range must still hold, in order.
    pub ids: &'a [i64],
    /// Whether `ids` are summary ids (a condensed pass) rather than message ids (a leaf pass).
    pub summaries: bool,
}

/// Replaces `range` by a new summary; `context_tokens` is the summary item's token count as the
/// model sees it. Fails (changing nothing; the caller rolls `tx` back) when the context no
/// longer matches the plan. Returns the new summary's id.
pub fn apply<S: Sql>(
    tx: &mut WriteTx<'_, S>,
    range: &Range<'_>,
    summary: &NewSummary<'_>,
    context_tokens: impl FnOnce(i64) -> u32,
    now_ms: i64,
) -> Result<(i64, u32)> {
    let sql = tx.sql();
    // The check below is a compare-and-set only while nobody else can write the conversation.
    crate::store::conversations::lock(sql, summary.conversation_id)?;
    let column = if range.summaries {
        "summary_id"
    } else {
        "message_id"
    };
    let current = sql.query(
        &format!("SELECT {column}, token_count FROM context_items WHERE conversation_id = ?1 AND ordinal BETWEEN ?2 AND ?3 ORDER BY ordinal"),
        &[summary.conversation_id.into(), range.first_ordinal.into(), range.last_ordinal.into()],
    )?;
    let ids: Vec<Option<i64>> = current
        .iter()
        .map(|r| r.opt_int(0))
        .collect::<Result<_>>()?;
    if ids.len() != range.ids.len()
        || ids
            .iter()
            .zip(range.ids)
            .any(|(have, want)| *have != Some(*want))
    {
        return Err(Error::Stale(
            "the context changed while the summary was being written; nothing was applied"
                .to_owned(),
        ));
    }
    let replaced_tokens: i64 = current.iter().map(|r| r.int(1)).sum::<Result<i64>>()?;
    let row = sql.query_row(
        "INSERT INTO summaries (conversation_id, kind, depth, content, token_count, earliest_at, latest_at, descendant_message_count, \
         descendant_summary_count, source_token_count, summarizer, model, level, created_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14) RETURNING id",
        &[
            summary.conversation_id.into(),
            summary.kind.into(),
            summary.depth.into(),
            summary.content.into(),
            summary.tokens.into(),
            summary.earliest_at.into(),
            summary.latest_at.into(),
            summary.descendant_messages.into(),
            summary.descendant_summaries.into(),
            summary.source_tokens.into(),
            summary.summarizer.into(),
            summary.model.into(),
            summary.level.into(),
            now_ms.into(),
        ],
    )?;
    let summary_id = row
        .ok_or_else(|| Error::unexpected_data("inserting a summary returned no id"))?
        .int(0)?;
    for id in range.ids {
        if range.summaries {
            sql.execute("INSERT INTO summary_sources (source_summary_id, condensed_summary_id) VALUES (?1, ?2)", &[(*id).into(), summary_id.into()])?;
        } else {
            sql.execute(
                "INSERT INTO summary_messages (summary_id, message_id) VALUES (?1, ?2)",
                &[summary_id.into(), (*id).into()],
            )?;
        }
    }
    sql.execute(
        "DELETE FROM context_items WHERE conversation_id = ?1 AND ordinal BETWEEN ?2 AND ?3",
        &[
            summary.conversation_id.into(),
            range.first_ordinal.into(),
            range.last_ordinal.into(),
        ],
    )?;
    let item_tokens = context_tokens(summary_id);
    sql.execute(
        "INSERT INTO context_items (conversation_id, ordinal, summary_id, token_count) VALUES (?1, ?2, ?3, ?4)",
        &[summary.conversation_id.into(), range.first_ordinal.into(), summary_id.into(), item_tokens.into()],
    )?;
    let replaced_summary_tokens = if range.summaries { replaced_tokens } else { 0 };
    sql.execute(
        "UPDATE conversations SET context_token_count = context_token_count + ?2, \
         context_summary_tokens = context_summary_tokens + ?3, context_epoch = context_epoch + 1 WHERE id = ?1",
        &[
            summary.conversation_id.into(),
            (i64::from(item_tokens) - replaced_tokens).into(),
            (i64::from(item_tokens) - replaced_summary_tokens).into(),
        ],
    )?;
    Ok((summary_id, item_tokens))
}

/// One row of the compaction log.
#[derive(Debug, Clone, PartialEq)]
pub struct Event<'a> {
    /// The conversation, a row id in `conversations`.
    pub conversation_id: i64,
    /// "leaf", "condensed", "sweep", "trigger" or "mask".
    pub pass: &'static str,
    /// "normal", "aggressive" or "fallback", when the pass had a level.
    pub level: Option<&'a str>,
    /// "triggered", "compacted", "skipped" or "failed".
    pub outcome: &'static str,
    /// Why it came out that way: a reason name or a sentence for the log.
    pub reason: &'a str,
    /// Tokens before: the replaced items' for a summarizing pass, the context's for a trigger or a
    /// mask pass.
    pub tokens_before: Option<i64>,
    /// Tokens after, counted as `tokens_before` is.
    pub tokens_after: Option<i64>,
    /// The summary the pass stored, a row id in `summaries`.
    pub summary_id: Option<i64>,
    /// Details of the decision or pass, as a JSON object.
    pub telemetry_json: Option<&'a str>,
}

impl<'a> Event<'a> {
    /// An event that stored nothing: no level, tokens or summary; an outcome and its reason.
    pub fn outcome(
        conversation_id: i64,
        pass: &'static str,
        outcome: &'static str,
        reason: &'a str,
    ) -> Self {
        Event {
            conversation_id,
            pass,
            level: None,
            outcome,
            reason,
            tokens_before: None,
            tokens_after: None,
            summary_id: None,
            telemetry_json: None,
        }
    }
}

/// Inserts one row into `compaction_events` (`?2`: its time, ms since the epoch).
pub const RECORD_EVENT_SQL: &str = "INSERT INTO compaction_events (conversation_id, created_at, pass, level, outcome, reason, tokens_before, tokens_after, summary_id, telemetry_json) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)";
/// The state lives on the conversation's row (schema 12; a table of its own before): NULL until
/// first saved.
pub const LOAD_STATE_SQL: &str = "SELECT compaction_state_json, compaction_pending_json FROM conversations WHERE id = ?1 AND compaction_state_json IS NOT NULL";
/// Writes a conversation's retry state, its pending work (NULL: none) and the time saved
/// (`compaction_state_at`, ms since the epoch).
pub const SAVE_STATE_SQL: &str =
    "UPDATE conversations SET compaction_state_json = ?2, compaction_pending_json = ?3, compaction_state_at = ?4 WHERE id = ?1";

/// Appends `event` to the compaction log, dated `now_ms` (ms since the epoch).
pub fn record_event(sql: &mut impl Sql, event: &Event<'_>, now_ms: i64) -> Result<()> {
    sql.execute(
        RECORD_EVENT_SQL,
        &[
            event.conversation_id.into(),
            now_ms.into(),
            event.pass.into(),
            event.level.into(),
            event.outcome.into(),
            event.reason.into(),
            event.tokens_before.into(),
            event.tokens_after.into(),
            event.summary_id.into(),
            event.telemetry_json.into(),
        ],
    )
}

/// Per-turn statement: folds a skipped trigger decision into the conversation's latest event
/// when that event is a skipped trigger decision for the same reason (see [`record_decision`]).
pub const REPEAT_SKIP_SQL: &str = "UPDATE compaction_events SET repeats = repeats + 1, last_at = ?3, tokens_before = ?4, telemetry_json = ?5 \
     WHERE id = (SELECT MAX(id) FROM compaction_events WHERE conversation_id = ?1) \
       AND pass = 'trigger' AND outcome = 'skipped' AND reason = ?2 RETURNING id";

/// Records the trigger's decision. A "skipped" decision that repeats the conversation's latest
/// event (a skipped trigger decision for the same reason) updates that row instead of adding
/// one: its count, the time and the inputs of this latest decision (schema 11). On most turns
/// that is one rewritten row, where a new row also wrote two index pages; the log keeps every
/// change of decision in order, each with its inputs.
///
/// On PostgreSQL both steps are one statement whose result is not read (`compaction_pg`'s),
/// so a driver may send it without waiting for the answer: the turn saves a round trip. It runs
/// under the conversation's row lock, as the two statements did, so the event it folds into is
/// still the latest.
pub fn record_decision(sql: &mut impl Sql, event: &Event<'_>, now_ms: i64) -> Result<()> {
    if event.pass == "trigger" && event.outcome == "skipped" {
        if let Some(record_skip) = Forms::of(sql).record_skip {
            return sql.execute(
                record_skip,
                &[
                    event.conversation_id.into(),
                    event.reason.into(),
                    now_ms.into(),
                    event.tokens_before.into(),
                    event.telemetry_json.into(),
                    event.level.into(),
                    event.tokens_after.into(),
                    event.summary_id.into(),
                ],
            );
        }
        let repeated = sql.query_row(
            REPEAT_SKIP_SQL,
            &[
                event.conversation_id.into(),
                event.reason.into(),
                now_ms.into(),
                event.tokens_before.into(),
                event.telemetry_json.into(),
            ],
        )?;
        if repeated.is_some() {
            return Ok(());
        }
    }
    record_event(sql, event, now_ms)
}

/// Work the trigger asked for, waiting for a maintain() with a summarizer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pending {
    /// "leaf" for one leaf pass, "sweep" for a full sweep to the threshold target.
    pub work: String,
    /// Token budget of the turn that asked (the host's, or the configured `default_token_budget`).
    pub budget: u32,
    /// Why the trigger asked for it (the decision's reason name).
    pub reason: String,
}

/// The retry state and pending work of a conversation.
pub fn load_state(
    sql: &mut impl Sql,
    conversation_id: i64,
) -> Result<(RetryState, Option<Pending>)> {
    let Some(row) = sql.query_row(LOAD_STATE_SQL, &[conversation_id.into()])? else {
        return Ok((RetryState::default(), None));
    };
    parse_state(&row.text(0)?, row.opt_text(1)?.as_deref())
}

/// [`load_state`] from the conversation's row as read in the caller's write transaction (which
/// holds the conversation, so the state is current), without a read of its own.
pub fn state_of(conversation: &Conversation) -> Result<(RetryState, Option<Pending>)> {
    match &conversation.compaction_state_json {
        Some(state) => parse_state(state, conversation.compaction_pending_json.as_deref()),
        None => Ok((RetryState::default(), None)),
    }
}

fn parse_state(state: &str, pending: Option<&str>) -> Result<(RetryState, Option<Pending>)> {
    let retry = serde_json::from_str(state).map_err(|e| {
        Error::unexpected_data(format!(
            "conversations.compaction_state_json is corrupt: {e}"
        ))
    })?;
    let pending = match pending {
        Some(text) => Some(serde_json::from_str(text).map_err(|e| {
            Error::unexpected_data(format!(
                "conversations.compaction_pending_json is corrupt: {e}"
            ))
        })?),
        None => None,
    };
    Ok((retry, pending))
}

/// Saves a conversation's retry state and pending work (`None` clears it), dated `now_ms` (ms since
/// the epoch).
pub fn save_state(
    sql: &mut impl Sql,
    conversation_id: i64,
    retry: &RetryState,
    pending: Option<&Pending>,
    now_ms: i64,
) -> Result<()> {
    let retry = serde_json::to_string(retry)
        .map_err(|e| Error::storage(StorageErrorKind::Other, e.to_string()))?;
    let pending: SqlValue = match pending {
        Some(p) => serde_json::to_string(p)
            .map_err(|e| Error::storage(StorageErrorKind::Other, e.to_string()))?
            .into(),
        None => SqlValue::Null,
    };
    sql.execute(
        SAVE_STATE_SQL,
        &[conversation_id.into(), retry.into(), pending, now_ms.into()],
    )
}

/// Per-turn query when the trigger's kept window cannot be used: the newest `count` raw
/// messages' token counts in the context, newest first.
pub const NEWEST_MESSAGE_TOKENS_SQL: &str = "SELECT MAX(token_count, 0) FROM context_items \
     WHERE conversation_id = ?1 AND message_id IS NOT NULL ORDER BY ordinal DESC LIMIT ?2";

/// The newest `count` raw messages' token counts in the context, oldest first.
pub fn newest_message_tokens(
    sql: &mut impl Sql,
    conversation_id: i64,
    count: u32,
) -> Result<Vec<i64>> {
    let query = Forms::of(sql).newest_message_tokens;
    let rows = sql.query(query, &[conversation_id.into(), count.into()])?;
    rows.iter().rev().map(|r| r.int(0)).collect()
}

/// The statements of this module that PostgreSQL writes differently (`compaction_pg`), for one
/// connection. [`Forms::of`] is the module's one decision on the dialect.
struct Forms {
    /// The start of a page of items: [`ITEM_COLUMNS`], or PostgreSQL's (`string_agg`).
    item_columns: &'static str,
    /// What a negative ("no") limit is bound as when the dialect rejects one: NULL on
    /// PostgreSQL; None on SQLite, which takes the negative limit as it is.
    no_limit: Option<SqlValue>,
    /// A skipped trigger decision's repeat-or-insert as one statement (a data-modifying `WITH`,
    /// PostgreSQL); None on SQLite, which runs [`REPEAT_SKIP_SQL`] and then, if needed,
    /// [`RECORD_EVENT_SQL`].
    record_skip: Option<&'static str>,
    /// [`NEWEST_MESSAGE_TOKENS_SQL`], or PostgreSQL's (`GREATEST`).
    newest_message_tokens: &'static str,
}

impl Forms {
    fn of(sql: &impl Sql) -> Forms {
        if sql.dialect().is_postgres() {
            Forms {
                item_columns: compaction_pg::ITEM_COLUMNS,
                no_limit: Some(SqlValue::Null),
                record_skip: Some(compaction_pg::RECORD_SKIP_SQL),
                newest_message_tokens: compaction_pg::NEWEST_MESSAGE_TOKENS_SQL,
            }
        } else {
            Forms {
                item_columns: ITEM_COLUMNS,
                no_limit: None,
                record_skip: None,
                newest_message_tokens: NEWEST_MESSAGE_TOKENS_SQL,
            }
        }
    }
}
