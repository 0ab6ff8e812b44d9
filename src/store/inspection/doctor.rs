//! Operator queries behind `/lcm status` and `/lcm doctor`: counts for a status report, and the
//! integrity checks (SQLite's own, every stored message reachable from its conversation's view
//! through the summary DAG, the DAG acyclic and within one conversation, context items pointing at
//! rows of their own conversation, running totals equal to the items, the full-text indexes in
//! step with their tables). Each check reports what it found; only [`fix`] writes, and it repairs
//! only what can be rebuilt from the rows themselves (indexes, running totals) — never content.

use serde::Serialize;

use crate::core::session_key::INTERNAL_KEY_LIKE;
use crate::error::Result;
use crate::store::sql::{Row, Sql, SqlValue};
use crate::store::WriteTx;

use super::doctor_pg;
pub use super::event_rows::EventOutcome;
use super::event_rows::OUTCOME_COLUMNS;

/// Counts for `/lcm status`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    /// Active conversations, the host's internal runs included.
    pub conversations_active: i64,
    /// Of them, the host's internal runs (memory flush; `core::session_key`).
    pub conversations_active_internal: i64,
    /// Archived conversations.
    pub conversations_archived: i64,
    /// Stored messages, over all conversations.
    pub messages: i64,
    /// Tokens of all stored messages (sum of `messages.token_count`).
    pub message_tokens: i64,
    /// `(level, depth, count)`, every combination present.
    pub summaries: Vec<(String, i64, i64)>,
    /// Size of the database in bytes (SQLite: pages × page size; PostgreSQL: `pg_database_size`).
    pub db_bytes: i64,
    /// The highest migration version applied (`schema_migrations`; 0 when none).
    pub schema_version: i64,
}

/// A compaction event, as status lists the latest ones.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EventRow {
    /// The conversation, a row id in `conversations`.
    pub conversation_id: i64,
    /// The pass and how it came out.
    #[serde(flatten)]
    pub event: EventOutcome,
}

fn count(sql: &mut impl Sql, query: &str, params: &[SqlValue]) -> Result<i64> {
    sql.query_row(query, params)?.map_or(Ok(0), |r| r.int(0))
}

/// The counts for `/lcm status`, over the whole store.
pub fn totals(sql: &mut impl Sql) -> Result<Totals> {
    let summaries = sql
        .query("SELECT level, depth, COUNT(*) FROM summaries GROUP BY level, depth ORDER BY level, depth", &[])?
        .iter()
        .map(|r| Ok((r.text(0)?, r.int(1)?, r.int(2)?)))
        .collect::<Result<Vec<_>>>()?;
    Ok(Totals {
        conversations_active: count(
            sql,
            "SELECT COUNT(*) FROM conversations WHERE status = 'active'",
            &[],
        )?,
        conversations_active_internal: count(
            sql,
            "SELECT COUNT(*) FROM conversations WHERE status = 'active' AND LOWER(session_key) LIKE ?1",
            &[INTERNAL_KEY_LIKE.into()],
        )?,
        conversations_archived: count(
            sql,
            "SELECT COUNT(*) FROM conversations WHERE status = 'archived'",
            &[],
        )?,
        messages: count(sql, "SELECT COUNT(*) FROM messages", &[])?,
        message_tokens: count(
            sql,
            "SELECT COALESCE(SUM(token_count), 0) FROM messages",
            &[],
        )?,
        summaries,
        db_bytes: count(
            sql,
            // The dialect's decision here: PostgreSQL's size of the database (`doctor_pg`).
            if sql.dialect().is_postgres() {
                doctor_pg::DB_BYTES_SQL
            } else {
                "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()"
            },
            &[],
        )?,
        schema_version: count(
            sql,
            "SELECT COALESCE(MAX(version), 0) FROM schema_migrations",
            &[],
        )?,
    })
}

/// The latest compaction events (of one conversation, or of all), newest first; `failed_only`
/// keeps only failures.
pub fn latest_events(
    sql: &mut impl Sql,
    conversation_id: Option<i64>,
    failed_only: bool,
    limit: i64,
) -> Result<Vec<EventRow>> {
    let mut query =
        format!("SELECT conversation_id, {OUTCOME_COLUMNS} FROM compaction_events WHERE 1 = 1");
    let mut params: Vec<SqlValue> = vec![limit.into()];
    if let Some(id) = conversation_id {
        query.push_str(" AND conversation_id = ?2");
        params.push(id.into());
    }
    if failed_only {
        query.push_str(" AND outcome = 'failed'");
    } else {
        query.push_str(" AND outcome IN ('compacted', 'failed')");
    }
    query.push_str(" ORDER BY id DESC LIMIT ?1");
    let rows = sql.query(&query, &params)?;
    rows.iter().map(event_from).collect()
}

fn event_from(r: &Row) -> Result<EventRow> {
    Ok(EventRow {
        conversation_id: r.int(0)?,
        event: EventOutcome::from_row(r, 1)?,
    })
}

/// The persisted retry/breaker state of a conversation, as stored (JSON), if any.
pub fn retry_state_json(
    sql: &mut impl Sql,
    conversation_id: i64,
) -> Result<Option<(String, bool)>> {
    let row = sql.query_row("SELECT compaction_state_json, compaction_pending_json IS NOT NULL FROM conversations WHERE id = ?1 AND compaction_state_json IS NOT NULL", &[conversation_id.into()])?;
    row.map(|r| Ok((r.text(0)?, r.int(1)? != 0))).transpose()
}

/// One integrity check's outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Check {
    /// Identifier of the check, e.g. `messages_reachable` or `dag_acyclic`; [`fix`] returns these.
    pub name: &'static str,
    /// Whether nothing wrong was found.
    pub ok: bool,
    /// What was found (a count and a few example ids when not ok).
    pub detail: String,
    /// Whether [`fix`] can repair it without touching content.
    pub fixable: bool,
}

fn ids_sample(sql: &mut impl Sql, query: &str) -> Result<(i64, Vec<i64>)> {
    let total = count(
        sql,
        &format!("SELECT COUNT(*) FROM ({query}) AS found"),
        &[],
    )?;
    let sample = sql
        .query(&format!("{query} LIMIT 5"), &[])?
        .iter()
        .map(|r| r.int(0))
        .collect::<Result<Vec<_>>>()?;
    Ok((total, sample))
}

fn check_ids(
    sql: &mut impl Sql,
    name: &'static str,
    query: &str,
    what: &str,
    fixable: bool,
) -> Result<Check> {
    let (total, sample) = ids_sample(sql, query)?;
    let detail = if total == 0 {
        format!("no {what}")
    } else {
        format!("{total} {what} (e.g. {sample:?})")
    };
    Ok(Check {
        name,
        ok: total == 0,
        detail,
        fixable,
    })
}

/// Messages not reachable from their conversation's view: neither an item of it nor under a
/// summary that is (through any number of condensations).
const UNREACHABLE_MESSAGES: &str = "WITH RECURSIVE reach(id) AS ( \
       SELECT summary_id FROM context_items WHERE summary_id IS NOT NULL \
       UNION SELECT ss.source_summary_id FROM summary_sources ss JOIN reach ON ss.condensed_summary_id = reach.id) \
     SELECT m.id FROM messages m \
     WHERE NOT EXISTS (SELECT 1 FROM context_items c WHERE c.message_id = m.id) \
       AND NOT EXISTS (SELECT 1 FROM summary_messages sm WHERE sm.message_id = m.id AND sm.summary_id IN (SELECT id FROM reach)) \
     ORDER BY m.id";

/// DAG edges that go sideways or up (a cycle needs at least one), or across conversations.
const BAD_EDGES: &str = "SELECT ss.condensed_summary_id FROM summary_sources ss \
     JOIN summaries a ON a.id = ss.source_summary_id JOIN summaries b ON b.id = ss.condensed_summary_id \
     WHERE a.depth >= b.depth OR a.conversation_id != b.conversation_id ORDER BY 1";

/// Context items pointing at a missing row or at a row of another conversation.
const BAD_ITEMS: &str = "SELECT c.ordinal FROM context_items c \
     LEFT JOIN messages m ON m.id = c.message_id LEFT JOIN summaries s ON s.id = c.summary_id \
     WHERE (c.message_id IS NOT NULL AND (m.id IS NULL OR m.conversation_id != c.conversation_id)) \
        OR (c.summary_id IS NOT NULL AND (s.id IS NULL OR s.conversation_id != c.conversation_id)) ORDER BY 1";

/// Conversations whose running totals differ from their context items.
const BAD_TOTALS: &str = "SELECT v.id FROM conversations v WHERE \
       v.context_token_count != (SELECT COALESCE(SUM(token_count), 0) FROM context_items c WHERE c.conversation_id = v.id) \
    OR v.context_summary_tokens != (SELECT COALESCE(SUM(token_count), 0) FROM context_items c WHERE c.conversation_id = v.id AND c.summary_id IS NOT NULL) \
    OR v.message_count != (SELECT COUNT(*) FROM messages m WHERE m.conversation_id = v.id) ORDER BY 1";

/// Runs every check. Read-only. On SQLite: the database file's own check first, then the rows'
/// checks, then the full-text indexes'. On PostgreSQL only the rows' checks: the server keeps its
/// own files consistent (no `integrity_check` to run) and the search vectors are generated
/// columns (no index to fall out of step).
pub fn checks(sql: &mut impl Sql) -> Result<Vec<Check>> {
    // The dialect's decision here: which checks apply (SQLite's file and FTS4 indexes, or none).
    let sqlite = !sql.dialect().is_postgres();
    let mut out = Vec::new();
    if sqlite {
        out.push(sqlite_integrity(sql)?);
    }
    out.extend(row_checks(sql)?);
    if sqlite {
        out.extend(fts_checks(sql));
    }
    Ok(out)
}

/// SQLite's own check of the database file.
fn sqlite_integrity(sql: &mut impl Sql) -> Result<Check> {
    let integrity: Vec<String> = sql
        .query("PRAGMA integrity_check", &[])?
        .iter()
        .map(|r| r.text(0))
        .collect::<Result<_>>()?;
    let integrity_ok = integrity.len() == 1 && integrity[0] == "ok";
    Ok(Check {
        name: "sqlite_integrity",
        ok: integrity_ok,
        detail: integrity.join("; "),
        fixable: false,
    })
}

/// The checks of the rows themselves, the same on both backends.
fn row_checks(sql: &mut impl Sql) -> Result<Vec<Check>> {
    Ok(vec![
        check_ids(
            sql,
            "messages_reachable",
            UNREACHABLE_MESSAGES,
            "messages unreachable from their view",
            false,
        )?,
        check_ids(
            sql,
            "dag_acyclic",
            BAD_EDGES,
            "summaries with an edge from an equal or deeper summary, or from another conversation",
            false,
        )?,
        check_ids(
            sql,
            "context_items_valid",
            BAD_ITEMS,
            "context items pointing outside their conversation",
            false,
        )?,
        check_ids(
            sql,
            "running_totals",
            BAD_TOTALS,
            "conversations whose running totals differ from their rows",
            true,
        )?,
    ])
}

/// SQLite's FTS4 indexes, each checked against its table.
fn fts_checks(sql: &mut impl Sql) -> Vec<Check> {
    let mut out = Vec::new();
    for (name, fts) in [
        ("messages_fts", "messages_fts"),
        ("summaries_fts", "summaries_fts"),
    ] {
        let ok = sql
            .execute(
                &format!("INSERT INTO {fts} ({fts}) VALUES ('integrity-check')"),
                &[],
            )
            .is_ok();
        let detail = if ok {
            "index matches its table".to_owned()
        } else {
            "index out of step with its table".to_owned()
        };
        out.push(Check {
            name,
            ok,
            detail,
            fixable: true,
        });
    }
    out
}

/// Repairs what [`checks`] marked fixable and found broken: rebuilds a full-text index from its
/// table, recomputes running totals from the rows. Returns the names of the checks it repaired.
pub fn fix(tx: &mut WriteTx<'_, impl Sql>, found: &[Check]) -> Result<Vec<&'static str>> {
    let mut fixed = Vec::new();
    for check in found.iter().filter(|c| !c.ok && c.fixable) {
        match check.name {
            "messages_fts" | "summaries_fts" => tx.execute(&format!("INSERT INTO {0} ({0}) VALUES ('rebuild')", check.name), &[])?,
            "running_totals" => tx.execute(
                "UPDATE conversations SET \
                   context_token_count = (SELECT COALESCE(SUM(token_count), 0) FROM context_items c WHERE c.conversation_id = conversations.id), \
                   context_summary_tokens = (SELECT COALESCE(SUM(token_count), 0) FROM context_items c WHERE c.conversation_id = conversations.id AND c.summary_id IS NOT NULL), \
                   message_count = (SELECT COUNT(*) FROM messages m WHERE m.conversation_id = conversations.id), \
                   context_epoch = context_epoch + 1",
                &[],
            )?,
            _ => continue,
        }
        fixed.push(check.name);
    }
    Ok(fixed)
}
