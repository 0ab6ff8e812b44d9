//! A reader of lossless-claw's `lcm.db` schema (the TypeScript engine we replace): conversations,
//! messages (with the tool-call id of tool results, from `message_parts`), summaries, the summary
//! DAG (`summary_parents`, whose naming is inverted: `parent_summary_id` is the *source*), and
//! the ordered context. It only runs `SELECT`s on the source connection, never writes; it knows
//! nothing of our schema. Timestamps there are SQLite `datetime('now')` text (`YYYY-MM-DD
//! HH:MM:SS`, UTC) or ISO 8601 strings; [`parse_time`] turns both into ms since the epoch.

use crate::error::{Error, Result};
use crate::store::sql::{Row, Sql};

/// One conversation of the source database.
#[derive(Debug, Clone, PartialEq)]
pub struct ForeignConversation {
    /// Its id in the source's `conversations`.
    pub id: i64,
    /// The host's session id.
    pub session_id: String,
    /// The host's session key, when the source recorded one.
    pub session_key: Option<String>,
    /// Whether it is the key's active conversation in the source.
    pub active: bool,
    /// Why it was archived, when the source recorded a cause.
    pub archive_cause: Option<String>,
    /// When it was created, as the source's timestamp text (see [`parse_time`]).
    pub created_at: String,
}

/// One message of the source database.
#[derive(Debug, Clone, PartialEq)]
pub struct ForeignMessage {
    /// Its id in the source's `messages`.
    pub id: i64,
    /// Its position in its conversation (the source's `seq`).
    pub seq: i64,
    /// 'system', 'user', 'assistant' or 'tool'.
    pub role: String,
    /// Its text content as the source stored it.
    pub content: String,
    /// When it was created, as the source's timestamp text (see [`parse_time`]).
    pub created_at: String,
    /// For tool results: the call they answer, when the parts recorded it.
    pub tool_call_id: Option<String>,
    /// For tool results: the tool's name, when the parts recorded it.
    pub tool_name: Option<String>,
}

/// One summary of the source database.
#[derive(Debug, Clone, PartialEq)]
pub struct ForeignSummary {
    /// Its id in the source's `summaries` (text).
    pub id: String,
    /// The source's kind: "leaf" or "condensed" (anything else imports as a leaf).
    pub kind: String,
    /// Its depth in the source's summary DAG.
    pub depth: i64,
    /// The summary's text.
    pub content: String,
    /// Its size in tokens, as the source counted it.
    pub token_count: i64,
    /// Time of the earliest message it covers, as the source's timestamp text.
    pub earliest_at: Option<String>,
    /// Time of the latest message it covers, as the source's timestamp text.
    pub latest_at: Option<String>,
    /// Tokens of the messages it summarized, as the source counted them.
    pub source_message_token_count: i64,
    /// The model that wrote it, when the source recorded one.
    pub model: Option<String>,
    /// When it was created, as the source's timestamp text.
    pub created_at: String,
}

/// One item of the source's context, in order: a message id or a summary id.
#[derive(Debug, Clone, PartialEq)]
pub enum ForeignItem {
    /// A message, by its id in the source's `messages`.
    Message(i64),
    /// A summary, by its id in the source's `summaries`.
    Summary(String),
}

/// Whether the source looks like a lossless-claw database (its core tables exist).
pub fn check_schema(src: &mut impl Sql) -> Result<()> {
    let rows = src.query(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('conversations', 'messages', 'summaries', 'summary_messages', 'summary_parents', 'context_items')",
        &[],
    )?;
    if rows.len() != 6 {
        let found: Vec<String> = rows.iter().filter_map(|r| r.text(0).ok()).collect();
        return Err(Error::input(
            "source",
            format!("not a lossless-claw database: expected tables conversations, messages, summaries, summary_messages, summary_parents, context_items; found {found:?}"),
        ));
    }
    Ok(())
}

fn has_column(src: &mut impl Sql, table: &str, column: &str) -> Result<bool> {
    let rows = src.query(
        &format!("SELECT name FROM pragma_table_info('{table}')"),
        &[],
    )?;
    Ok(rows.iter().any(|r| r.text(0).is_ok_and(|n| n == column)))
}

/// Every conversation of the source.
pub fn conversations(src: &mut impl Sql) -> Result<Vec<ForeignConversation>> {
    let rows = src.query(
        "SELECT conversation_id, session_id, session_key, active, archive_cause, CAST(created_at AS TEXT) FROM conversations ORDER BY conversation_id",
        &[],
    )?;
    rows.iter()
        .map(|r: &Row| {
            Ok(ForeignConversation {
                id: r.int(0)?,
                session_id: r.text(1)?,
                session_key: r.opt_text(2)?,
                active: r.int(3)? != 0,
                archive_cause: r.opt_text(4)?,
                created_at: r.text(5)?,
            })
        })
        .collect()
}

/// The messages of source conversation `conversation`, in `seq` order.
pub fn messages(src: &mut impl Sql, conversation: i64) -> Result<Vec<ForeignMessage>> {
    let rows = src.query(
        "SELECT m.message_id, m.seq, m.role, m.content, CAST(m.created_at AS TEXT), \
           (SELECT p.tool_call_id FROM message_parts p WHERE p.message_id = m.message_id AND p.tool_call_id IS NOT NULL ORDER BY p.ordinal LIMIT 1), \
           (SELECT p.tool_name FROM message_parts p WHERE p.message_id = m.message_id AND p.tool_name IS NOT NULL ORDER BY p.ordinal LIMIT 1) \
         FROM messages m WHERE m.conversation_id = ?1 ORDER BY m.seq",
        &[conversation.into()],
    )?;
    rows.iter()
        .map(|r| {
            Ok(ForeignMessage {
                id: r.int(0)?,
                seq: r.int(1)?,
                role: r.text(2)?,
                content: r.text(3)?,
                created_at: r.text(4)?,
                tool_call_id: r.opt_text(5)?,
                tool_name: r.opt_text(6)?,
            })
        })
        .collect()
}

/// The conversation's summaries, shallowest first (sources before what was built on them).
pub fn summaries(src: &mut impl Sql, conversation: i64) -> Result<Vec<ForeignSummary>> {
    let model = if has_column(src, "summaries", "model")? {
        "model"
    } else {
        "NULL"
    };
    let source_tokens = if has_column(src, "summaries", "source_message_token_count")? {
        "source_message_token_count"
    } else {
        "0"
    };
    let rows = src.query(
        &format!(
            "SELECT summary_id, kind, depth, content, token_count, CAST(earliest_at AS TEXT), CAST(latest_at AS TEXT), {source_tokens}, {model}, \
             CAST(created_at AS TEXT) FROM summaries WHERE conversation_id = ?1 ORDER BY depth, created_at, summary_id"
        ),
        &[conversation.into()],
    )?;
    rows.iter()
        .map(|r| {
            Ok(ForeignSummary {
                id: r.text(0)?,
                kind: r.text(1)?,
                depth: r.int(2)?,
                content: r.text(3)?,
                token_count: r.int(4)?,
                earliest_at: r.opt_text(5)?,
                latest_at: r.opt_text(6)?,
                source_message_token_count: r.int(7)?,
                model: r.opt_text(8)?,
                created_at: r.text(9)?,
            })
        })
        .collect()
}

/// The messages a leaf summary covers, in their recorded order.
pub fn summary_messages(src: &mut impl Sql, summary: &str) -> Result<Vec<i64>> {
    let rows = src.query("SELECT message_id FROM summary_messages WHERE summary_id = ?1 ORDER BY ordinal, message_id", &[summary.into()])?;
    rows.iter().map(|r| r.int(0)).collect()
}

/// The summaries a condensed summary was built from (`parent_summary_id` in the source's naming).
pub fn summary_sources(src: &mut impl Sql, summary: &str) -> Result<Vec<String>> {
    let rows = src.query(
        "SELECT parent_summary_id FROM summary_parents WHERE summary_id = ?1 ORDER BY ordinal",
        &[summary.into()],
    )?;
    rows.iter().map(|r| r.text(0)).collect()
}

/// The ordered context of source conversation `conversation`.
pub fn context(src: &mut impl Sql, conversation: i64) -> Result<Vec<ForeignItem>> {
    let rows = src.query("SELECT item_type, message_id, summary_id FROM context_items WHERE conversation_id = ?1 ORDER BY ordinal", &[conversation.into()])?;
    rows.iter()
        .map(|r| match r.text(0)?.as_str() {
            "message" => Ok(ForeignItem::Message(r.int(1)?)),
            "summary" => Ok(ForeignItem::Summary(r.text(2)?)),
            other => Err(Error::unexpected_data(format!(
                "source context item has unknown type {other:?}"
            ))),
        })
        .collect()
}

/// Whether a summary is a truncation or emergency fallback (redo it with `repair`).
pub fn is_fallback(summary: &ForeignSummary) -> bool {
    summary.model.as_deref() == Some("emergency-fallback")
        || summary.content.contains("[Truncated from")
        || summary.content.contains("[LCM fallback summary")
}

fn digits(s: &str) -> Option<i64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Days from 1970-01-01 to a civil date (proleptic Gregorian).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `YYYY-MM-DD HH:MM:SS[.fff]` or `YYYY-MM-DDTHH:MM:SS[.fff][Z]` (UTC) as ms since the epoch.
pub fn parse_time(text: &str) -> Option<i64> {
    let text = text.trim().trim_end_matches('Z');
    let (date, time) = text.split_once([' ', 'T'])?;
    let mut d = date.splitn(3, '-');
    let (y, mo, da) = (digits(d.next()?)?, digits(d.next()?)?, digits(d.next()?)?);
    let (hms, frac) = time.split_once('.').unwrap_or((time, ""));
    let mut t = hms.splitn(3, ':');
    let (h, mi, s) = (digits(t.next()?)?, digits(t.next()?)?, digits(t.next()?)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&da) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let ms = if frac.is_empty() {
        0
    } else {
        digits(&format!("{frac:0<3}")[..3])?
    };
    Some(((days_from_civil(y, mo, da) * 24 + h) * 60 + mi) * 60_000 + s * 1000 + ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_and_iso_times_parse_to_utc_ms() {
        assert_eq!(parse_time("1970-01-01 00:00:00"), Some(0));
        assert_eq!(parse_time("2026-03-01 12:34:56"), Some(1_772_368_496_000));
        assert_eq!(
            parse_time("2026-03-01T12:34:56.789Z"),
            Some(1_772_368_496_789)
        );
        for bad in [
            "",
            "yesterday",
            "2026-13-01 00:00:00",
            "2026-03-01",
            "2026-03-01 1a:00:00",
        ] {
            assert_eq!(parse_time(bad), None, "{bad}");
        }
    }
}
