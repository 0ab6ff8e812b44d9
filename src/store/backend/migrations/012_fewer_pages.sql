-- Version 12: fewer tables and indexes. Every table and index holds at least one page (4 KiB),
-- however few rows it has: at 1,000 stored messages some 26 of them held one page each, ~0.1×
-- of the host's transcript. This removes five of them, keeping every row:
-- 1. What the engine learned about the host's prompt (was `host_accounting`) and the retry,
--    breaker and pending-work state (was `compaction_state`) are one value each per
--    conversation: they become columns of `conversations`, read and written with the row a turn
--    reads and writes anyway.
ALTER TABLE conversations ADD COLUMN host_facts_json TEXT;
ALTER TABLE conversations ADD COLUMN host_facts_at INTEGER;
ALTER TABLE conversations ADD COLUMN compaction_state_json TEXT;
ALTER TABLE conversations ADD COLUMN compaction_pending_json TEXT;
ALTER TABLE conversations ADD COLUMN compaction_state_at INTEGER;
UPDATE conversations SET (host_facts_json, host_facts_at) =
    (SELECT facts_json, updated_at FROM host_accounting h WHERE h.conversation_id = conversations.id)
WHERE id IN (SELECT conversation_id FROM host_accounting);
UPDATE conversations SET (compaction_state_json, compaction_pending_json, compaction_state_at) =
    (SELECT state_json, pending_json, updated_at FROM compaction_state c WHERE c.conversation_id = conversations.id)
WHERE id IN (SELECT conversation_id FROM compaction_state);
DROP TABLE host_accounting;
DROP TABLE compaction_state;
-- 2. `turn_advancements` is keyed by its advancement key and looked up by nothing else: stored
--    WITHOUT ROWID, the key is the table's own B-tree instead of a second index beside it. The
--    index by conversation goes too: nothing reads advancements by conversation, and the foreign
--    key needs it only when a conversation row is deleted or renumbered, which never happens.
--    (A NULL key, which no build writes, could never be looked up; it is not copied.)
CREATE TABLE turn_advancements_v12 (
    advancement_key TEXT PRIMARY KEY,
    conversation_id INTEGER NOT NULL REFERENCES conversations (id),
    payload_hash TEXT NOT NULL,
    message_count INTEGER NOT NULL,
    committed_at INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO turn_advancements_v12 (advancement_key, conversation_id, payload_hash, message_count, committed_at)
    SELECT advancement_key, conversation_id, payload_hash, message_count, committed_at FROM turn_advancements
    WHERE advancement_key IS NOT NULL;
DROP TABLE turn_advancements;
ALTER TABLE turn_advancements_v12 RENAME TO turn_advancements;
-- 3. The summary index keeps no per-document sizes (`summaries_fts_docsize`), which only ranking
--    reads and nothing ranks (as the message index since version 7). FTS4 fixes this when the
--    table is created: it is created again and refilled from `summaries.content`.
DROP TABLE summaries_fts;
CREATE VIRTUAL TABLE summaries_fts USING fts4 (content="summaries", content, tokenize=unicode61, matchinfo=fts3);
INSERT INTO summaries_fts (summaries_fts) VALUES ('rebuild');
