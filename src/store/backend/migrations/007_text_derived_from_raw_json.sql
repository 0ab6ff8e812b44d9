-- Version 7: a message's plain text is no longer stored beside its JSON. `messages.content` was a
-- second copy of the text parts of `raw_json` (a third of the database). Rust derives the text
-- from `raw_json` when it needs it (core::message::text_of_raw_json), and the search index reads
-- it, when it must (snippets, 'integrity-check', 'rebuild', PRAGMA integrity_check), from the
-- view `messages_text`, which derives the same text in SQL. New rows are still indexed by the
-- statement that stores them (store/messages.rs), with the text Rust derived at ingest.
-- matchinfo=fts3: nothing ranks results (no matchinfo(), no bm25), so the per-document sizes
-- FTS4 keeps for ranking (messages_fts_docsize, ~10 bytes a message) are not kept.
-- The view follows core::message::plain_text: text blocks and tool calls ("[tool call NAME ARGS]")
-- joined by newlines, thinking/images/files left out, NUL shown as U+2400 (replaced in the JSON
-- text, since SQLite's JSON functions stop a string at NUL).
DROP TABLE messages_fts;
CREATE VIEW messages_text (rowid, content) AS
SELECT m.id, CASE
    WHEN m.role IN ('compactionSummary', 'branchSummary') THEN m.raw ->> '$.summary'
    WHEN m.role = 'bashExecution' THEN '$ ' || (m.raw ->> '$.command') || char(10) || (m.raw ->> '$.output')
    WHEN json_type(m.raw, '$.content') = 'text' THEN m.raw ->> '$.content'
    ELSE (SELECT group_concat(t, char(10)) FROM (
            SELECT CASE b.value ->> '$.type'
                WHEN 'text' THEN b.value ->> '$.text'
                WHEN 'toolCall' THEN '[tool call ' || (b.value ->> '$.name') || ' ' || COALESCE(b.value -> '$.arguments', '') || ']'
            END AS t
            FROM json_each(m.raw, '$.content') b ORDER BY b.key)
          WHERE t != '')
END
FROM (SELECT id, role, replace(raw_json, '\u0000', '\u2400') AS raw FROM messages) m;
CREATE VIRTUAL TABLE messages_fts USING fts4 (content="messages_text", content, tokenize=unicode61, matchinfo=fts3);
INSERT INTO messages_fts (docid, content) SELECT id, content FROM messages;
ALTER TABLE messages DROP COLUMN content;
