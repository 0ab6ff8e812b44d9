//! The summary DAG's description on PostgreSQL ([`super::inspect`] picks it): the same columns,
//! with `string_agg` (ordered in the call) where SQLite's `group_concat` follows a subquery's
//! order.
//!
//! Must not: run on SQLite.

/// `inspect::SUMMARY_COLUMNS` for PostgreSQL (`string_agg` in place of `group_concat`).
pub(super) const SUMMARY_COLUMNS: &str = "s.id, s.kind, s.depth, s.level, s.token_count, s.source_token_count, s.summarizer, s.created_at, \
     CASE WHEN s.kind = 'leaf' \
       THEN (SELECT string_agg(CAST(sm.message_id AS text), chr(31) ORDER BY m.seq) FROM summary_messages sm JOIN messages m ON m.id = sm.message_id WHERE sm.summary_id = s.id) \
       ELSE (SELECT string_agg(CAST(source_summary_id AS text), chr(31) ORDER BY source_summary_id) FROM summary_sources WHERE condensed_summary_id = s.id) END, \
     (WITH RECURSIVE under(id) AS (SELECT s.id UNION SELECT ss.source_summary_id FROM summary_sources ss JOIN under ON ss.condensed_summary_id = under.id) \
       SELECT MIN(m.seq) || ',' || MAX(m.seq) || ',' || COUNT(*) FROM under JOIN summary_messages sm ON sm.summary_id = under.id JOIN messages m ON m.id = sm.message_id), \
     EXISTS (SELECT 1 FROM context_items ci WHERE ci.summary_id = s.id)";
