//! Compaction's statements that PostgreSQL writes differently from SQLite
//! ([`super::compaction`] picks them, in `Forms::of`): `string_agg` for `group_concat`,
//! `GREATEST` for the scalar `MAX`, and a skipped trigger decision recorded in one statement
//! (a data-modifying `WITH`, which SQLite does not have).
//!
//! Must not: run on SQLite.

/// `compaction::ITEM_COLUMNS` for PostgreSQL (`string_agg`, in block order as SQLite's rowid
/// order gives).
pub(super) const ITEM_COLUMNS: &str = "SELECT ci.ordinal, ci.message_id, ci.summary_id, ci.token_count, m.role, s.depth, \
       (SELECT string_agg(p.tool_call_id, chr(31) ORDER BY p.ordinal) FROM message_parts p \
          WHERE p.message_id = ci.message_id AND p.kind = 'tool_call' AND p.tool_call_id IS NOT NULL), \
       (SELECT p.tool_call_id FROM message_parts p \
          WHERE p.message_id = ci.message_id AND m.role = 'toolResult' AND p.tool_call_id IS NOT NULL LIMIT 1) \
     FROM context_items ci LEFT JOIN messages m ON m.id = ci.message_id LEFT JOIN summaries s ON s.id = ci.summary_id";

/// `compaction::REPEAT_SKIP_SQL`, and when it folded into no row, the new event
/// (`compaction::RECORD_EVENT_SQL`), in one statement whose result is not read. Parameters:
/// the conversation, the reason, the time, the tokens before, the telemetry, the level, the
/// tokens after and the summary.
pub(super) const RECORD_SKIP_SQL: &str = "WITH repeated AS (UPDATE compaction_events SET repeats = repeats + 1, last_at = ?3, tokens_before = ?4, telemetry_json = ?5 \
       WHERE id = (SELECT MAX(id) FROM compaction_events WHERE conversation_id = ?1) \
         AND pass = 'trigger' AND outcome = 'skipped' AND reason = ?2 RETURNING id) \
     INSERT INTO compaction_events (conversation_id, created_at, pass, level, outcome, reason, tokens_before, tokens_after, summary_id, telemetry_json) \
     SELECT CAST(?1 AS bigint), CAST(?3 AS bigint), 'trigger', CAST(?6 AS text), 'skipped', CAST(?2 AS text), CAST(?4 AS bigint), CAST(?7 AS bigint), CAST(?8 AS bigint), CAST(?5 AS text) \
     WHERE NOT EXISTS (SELECT 1 FROM repeated)";

/// `compaction::NEWEST_MESSAGE_TOKENS_SQL` for PostgreSQL (`GREATEST`).
pub(super) const NEWEST_MESSAGE_TOKENS_SQL: &str =
    "SELECT GREATEST(token_count, 0) FROM context_items \
     WHERE conversation_id = ?1 AND message_id IS NOT NULL ORDER BY ordinal DESC LIMIT ?2";
