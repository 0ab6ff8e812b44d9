//! Queries behind `repair` (seed 01): which summaries are fallbacks, which summaries were built on
//! them (the cascade), their sources, and rewriting one summary's text in place. A rewrite keeps
//! the summary's id, edges and coverage (only the text, level, size and summarizer change), keeps
//! the full-text index in step (the index has external content, so the old text's terms are
//! removed before the text changes), and keeps the view's running totals right when the summary is in the view.

use crate::error::{Error, Result};
use crate::store::sql::{Sql, SqlValue};
use crate::store::WriteTx;

/// The fallback summaries (of the given conversations, or all) and every summary built on them,
/// in the order a repair must redo them: shallowest first, so a parent is redone from children
/// that were already redone. `(id, depth, is_fallback)`.
pub fn repair_order(
    sql: &mut impl Sql,
    conversations: Option<&[i64]>,
) -> Result<Vec<(i64, i64, bool)>> {
    let scope = match conversations {
        None => String::new(),
        Some([]) => return Ok(Vec::new()),
        Some(ids) => format!(
            " AND conversation_id IN ({})",
            ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
        ),
    };
    let query = format!(
        "WITH RECURSIVE up(id) AS (SELECT id FROM summaries WHERE level = 'fallback'{scope} \
           UNION SELECT ss.condensed_summary_id FROM summary_sources ss JOIN up ON ss.source_summary_id = up.id) \
         SELECT s.id, s.depth, s.level = 'fallback' FROM summaries s WHERE s.id IN (SELECT id FROM up) ORDER BY s.depth, s.id"
    );
    sql.query(&query, &[])?
        .iter()
        .map(|r| Ok((r.int(0)?, r.int(1)?, r.int(2)? != 0)))
        .collect()
}

/// The oldest fallback summary in a conversation's context: `(ordinal, item tokens, id)`.
pub fn oldest_fallback_in_context(
    sql: &mut impl Sql,
    conversation_id: i64,
) -> Result<Option<(i64, i64, i64)>> {
    sql.query_row(
        "SELECT ci.ordinal, ci.token_count, s.id FROM context_items ci JOIN summaries s ON s.id = ci.summary_id \
         WHERE ci.conversation_id = ?1 AND s.level = 'fallback' ORDER BY ci.ordinal LIMIT 1",
        &[conversation_id.into()],
    )?
    .map(|r| Ok((r.int(0)?, r.int(1)?, r.int(2)?)))
    .transpose()
}

/// The summaries a condensed summary was built from, oldest first.
pub fn source_summaries(sql: &mut impl Sql, id: i64) -> Result<Vec<i64>> {
    let rows = sql.query(
        "SELECT s.id FROM summary_sources ss JOIN summaries s ON s.id = ss.source_summary_id WHERE ss.condensed_summary_id = ?1 \
         ORDER BY COALESCE(s.earliest_at, s.created_at), s.id",
        &[id.into()],
    )?;
    rows.iter().map(|r| r.int(0)).collect()
}

/// The messages a leaf summary covers, in conversation order.
pub fn source_messages(sql: &mut impl Sql, id: i64) -> Result<Vec<i64>> {
    let rows = sql.query(
        "SELECT m.id FROM summary_messages sm JOIN messages m ON m.id = sm.message_id WHERE sm.summary_id = ?1 ORDER BY m.seq",
        &[id.into()],
    )?;
    rows.iter().map(|r| r.int(0)).collect()
}

/// A new text for a summary.
#[derive(Debug, Clone, PartialEq)]
pub struct Rewrite<'a> {
    /// The summary's row id in `summaries`.
    pub id: i64,
    /// The text the new one was made from; if the row no longer holds it, nothing is written.
    pub expected_content: &'a str,
    /// The new text.
    pub content: &'a str,
    /// The new text's size in tokens (`summaries.token_count`).
    pub tokens: u32,
    /// The summary's size as a view item (see `core::assemble::summary_item_tokens`).
    pub item_tokens: u32,
    /// The level the new text was made at: "normal", "aggressive" or "fallback".
    pub level: &'static str,
    /// Name of the summarizer that wrote the new text.
    pub summarizer: &'a str,
    /// The model that wrote it, when the summarizer names one.
    pub model: Option<&'a str>,
}

/// Rewrites one summary. Fails with `Stale` when the summary
/// changed since it was read.
pub fn rewrite(tx: &mut WriteTx<'_, impl Sql>, rewrite: &Rewrite<'_>) -> Result<()> {
    let id: SqlValue = rewrite.id.into();
    let by_id = std::slice::from_ref(&id);
    let Some(row) = tx.query_row("SELECT content FROM summaries WHERE id = ?1", by_id)? else {
        return Err(Error::Stale(format!(
            "summary {} no longer exists",
            rewrite.id
        )));
    };
    let current = row.text(0)?;
    if current != rewrite.expected_content {
        return Err(Error::Stale(format!(
            "summary {} changed while it was being repaired",
            rewrite.id
        )));
    }
    // FTS4 with external content removes a row's terms by reading the content table, so the
    // delete must come before the content changes.
    // PostgreSQL's search vector is a generated column: it follows the content by itself. (The
    // module's one decision on the dialect: only SQLite keeps an FTS4 index by hand.)
    let fts = !tx.dialect().is_postgres();
    if fts {
        tx.execute(
            "DELETE FROM summaries_fts WHERE docid = CAST(?1 AS INTEGER)",
            by_id,
        )?;
    }
    tx.execute(
        "UPDATE summaries SET content = ?2, token_count = ?3, level = ?4, summarizer = ?5, model = ?6 WHERE id = ?1",
        &[id.clone(), rewrite.content.into(), rewrite.tokens.into(), rewrite.level.into(), rewrite.summarizer.into(), rewrite.model.into()],
    )?;
    // Its vector described the old text; the backfill embeds the new one.
    crate::store::vectors::forget_summary(tx.sql(), rewrite.id)?;
    // CAST: a driver may bind a JS number as a real (node:sqlite does), and FTS4 refuses a real docid.
    if fts {
        tx.execute(
            "INSERT INTO summaries_fts (docid, content) VALUES (CAST(?1 AS INTEGER), ?2)",
            &[id.clone(), rewrite.content.into()],
        )?;
    }
    if let Some(item) = tx.query_row(
        "SELECT conversation_id, token_count FROM context_items WHERE summary_id = ?1",
        by_id,
    )? {
        let (conversation, old) = (item.int(0)?, item.int(1)?);
        let delta = i64::from(rewrite.item_tokens) - old;
        tx.execute(
            "UPDATE context_items SET token_count = ?2 WHERE summary_id = ?1",
            &[id, rewrite.item_tokens.into()],
        )?;
        tx.execute(
            "UPDATE conversations SET context_token_count = context_token_count + ?2, context_summary_tokens = context_summary_tokens + ?2, \
             context_epoch = context_epoch + 1 WHERE id = ?1",
            &[conversation.into(), delta.into()],
        )?;
    }
    Ok(())
}
