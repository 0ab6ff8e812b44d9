-- Version 9: new messages are indexed for search in batches, not by the statement that stores
-- them. Every commit that touched the FTS4 index flushed its pending terms as a segment of its
-- own; for a turn of a few messages that flush and the tokenizing were a third of the turn's
-- write. Messages up to `indexed_through` are in `messages_fts`; later ones wait and are
-- indexed in batches: by `maintain`, by an append once too many wait, by a bulk append with its
-- own rows, and before any search (store/search_index.rs).
-- The index reads its content from `messages_indexed_text`: `messages_text` bounded to the
-- indexed messages, so FTS4's 'integrity-check' and PRAGMA integrity_check (which read every
-- indexed row back) find an index that matches its content while messages wait. `messages_text`
-- itself still gives every message's text. FTS4 fixes its content table when it is created, so
-- the index is created again and filled from the view (once, on upgrade).
CREATE TABLE messages_fts_progress (indexed_through INTEGER NOT NULL);
INSERT INTO messages_fts_progress (indexed_through) SELECT COALESCE(MAX(id), 0) FROM messages;
CREATE VIEW messages_indexed_text (rowid, content) AS
SELECT rowid, content FROM messages_text WHERE rowid <= (SELECT indexed_through FROM messages_fts_progress);
DROP TABLE messages_fts;
CREATE VIRTUAL TABLE messages_fts USING fts4 (content="messages_indexed_text", content, tokenize=unicode61, matchinfo=fts3);
INSERT INTO messages_fts (messages_fts) VALUES ('rebuild');
