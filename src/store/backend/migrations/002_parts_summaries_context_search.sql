-- Version 2: the full memory model.
-- message_parts indexes the structure of each message; the exact bytes stay in messages.raw_json,
-- from which any message is rebuilt as the host sent it (parts do not copy it a second time).
-- summaries form a DAG: leaf summaries cover messages (summary_messages), condensed summaries
-- cover summaries (summary_sources, edge direction source -> condensed).
-- context_items is the ordered active view; a compaction deletes a contiguous range and puts its
-- summary at the range's first ordinal, so no other item is ever renumbered.

ALTER TABLE messages ADD COLUMN host_entry_id TEXT;
ALTER TABLE conversations ADD COLUMN next_ordinal INTEGER NOT NULL DEFAULT 0;
ALTER TABLE conversations ADD COLUMN context_token_count INTEGER NOT NULL DEFAULT 0;
-- Bumped whenever items are replaced (not appended), so a cached view knows it is stale.
ALTER TABLE conversations ADD COLUMN context_epoch INTEGER NOT NULL DEFAULT 0;
-- The part of context_token_count that is summaries (the rest is raw messages).
ALTER TABLE conversations ADD COLUMN context_summary_tokens INTEGER NOT NULL DEFAULT 0;

CREATE TABLE message_parts (
    message_id INTEGER NOT NULL REFERENCES messages (id),
    ordinal INTEGER NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('text', 'reasoning', 'tool_call', 'tool_result', 'image', 'file', 'other')),
    tool_call_id TEXT,
    tool_name TEXT,
    PRIMARY KEY (message_id, ordinal)
) WITHOUT ROWID;
CREATE INDEX message_parts_by_tool_call ON message_parts (tool_call_id) WHERE tool_call_id IS NOT NULL;

CREATE TABLE summaries (
    id INTEGER PRIMARY KEY,
    conversation_id INTEGER NOT NULL REFERENCES conversations (id),
    kind TEXT NOT NULL CHECK (kind IN ('leaf', 'condensed')),
    depth INTEGER NOT NULL CHECK (depth >= 0),
    content TEXT NOT NULL,
    token_count INTEGER NOT NULL,
    earliest_at INTEGER,
    latest_at INTEGER,
    descendant_message_count INTEGER NOT NULL DEFAULT 0,
    descendant_summary_count INTEGER NOT NULL DEFAULT 0,
    source_token_count INTEGER NOT NULL,
    summarizer TEXT NOT NULL,
    model TEXT,
    level TEXT NOT NULL DEFAULT 'normal' CHECK (level IN ('normal', 'aggressive', 'fallback')),
    created_at INTEGER NOT NULL
);
CREATE INDEX summaries_by_conversation ON summaries (conversation_id, depth);

CREATE TABLE summary_messages (
    summary_id INTEGER NOT NULL REFERENCES summaries (id),
    message_id INTEGER NOT NULL REFERENCES messages (id),
    PRIMARY KEY (summary_id, message_id)
) WITHOUT ROWID;
CREATE INDEX summary_messages_by_message ON summary_messages (message_id);

CREATE TABLE summary_sources (
    source_summary_id INTEGER NOT NULL REFERENCES summaries (id),
    condensed_summary_id INTEGER NOT NULL REFERENCES summaries (id),
    PRIMARY KEY (condensed_summary_id, source_summary_id)
) WITHOUT ROWID;
CREATE INDEX summary_sources_by_source ON summary_sources (source_summary_id);

CREATE TABLE context_items (
    conversation_id INTEGER NOT NULL REFERENCES conversations (id),
    ordinal INTEGER NOT NULL,
    message_id INTEGER REFERENCES messages (id),
    summary_id INTEGER REFERENCES summaries (id),
    token_count INTEGER NOT NULL,
    PRIMARY KEY (conversation_id, ordinal),
    CHECK ((message_id IS NULL) != (summary_id IS NULL))
) WITHOUT ROWID;
-- Every foreign-key child column is indexed: SQLite checks children when a parent row is
-- written, and without these it scans the table on every message insert.
CREATE INDEX context_items_by_message ON context_items (message_id);
CREATE INDEX context_items_by_summary ON context_items (summary_id);
CREATE INDEX turn_advancements_by_conversation ON turn_advancements (conversation_id);

CREATE TABLE compaction_events (
    id INTEGER PRIMARY KEY,
    conversation_id INTEGER NOT NULL REFERENCES conversations (id),
    created_at INTEGER NOT NULL,
    pass TEXT NOT NULL CHECK (pass IN ('leaf', 'condensed', 'sweep', 'trigger')),
    level TEXT CHECK (level IN ('normal', 'aggressive', 'fallback')),
    outcome TEXT NOT NULL CHECK (outcome IN ('triggered', 'compacted', 'skipped', 'failed')),
    reason TEXT NOT NULL,
    tokens_before INTEGER,
    tokens_after INTEGER,
    summary_id INTEGER REFERENCES summaries (id),
    telemetry_json TEXT
);
CREATE INDEX compaction_events_by_conversation ON compaction_events (conversation_id, id);
CREATE INDEX compaction_events_by_summary ON compaction_events (summary_id);

-- Retry backoff and breaker state survive restarts, unlike in-memory guards.
-- pending_json: work the trigger asked for, run by the next maintain() that has a summarizer.
CREATE TABLE compaction_state (
    conversation_id INTEGER PRIMARY KEY REFERENCES conversations (id),
    state_json TEXT NOT NULL,
    pending_json TEXT,
    updated_at INTEGER NOT NULL
);

-- Full-text search (FTS4: sql.js has no FTS5). External content: the text is stored once, in
-- messages.content / summaries.content; rows are only ever inserted, so insert triggers suffice.
CREATE VIRTUAL TABLE messages_fts USING fts4 (content="messages", content, tokenize=unicode61);
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts (docid, content) VALUES (new.id, new.content);
END;
CREATE VIRTUAL TABLE summaries_fts USING fts4 (content="summaries", content, tokenize=unicode61);
CREATE TRIGGER summaries_fts_insert AFTER INSERT ON summaries BEGIN
    INSERT INTO summaries_fts (docid, content) VALUES (new.id, new.content);
END;

-- Existing databases: index what is already there and give every stored message a context item.
INSERT INTO messages_fts (docid, content) SELECT id, content FROM messages;
INSERT INTO context_items (conversation_id, ordinal, message_id, token_count)
    SELECT conversation_id, seq, id, token_count FROM messages;
UPDATE conversations SET
    next_ordinal = (SELECT COALESCE(MAX(seq), 0) FROM messages WHERE messages.conversation_id = conversations.id),
    context_token_count = token_count;
