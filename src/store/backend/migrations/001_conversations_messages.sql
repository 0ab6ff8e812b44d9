-- Version 1: conversations, messages, and turn advancements.
CREATE TABLE conversations (
    id INTEGER PRIMARY KEY,
    session_key TEXT NOT NULL,
    session_id TEXT NOT NULL,
    generation INTEGER NOT NULL DEFAULT 1,
    status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
    archive_cause TEXT,
    archived_at INTEGER,
    created_at INTEGER NOT NULL,
    message_count INTEGER NOT NULL DEFAULT 0,
    token_count INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX conversations_one_active_per_key ON conversations (session_key) WHERE status = 'active';

CREATE TABLE messages (
    id INTEGER PRIMARY KEY,
    conversation_id INTEGER NOT NULL REFERENCES conversations (id),
    seq INTEGER NOT NULL,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    token_count INTEGER NOT NULL,
    identity_hash TEXT NOT NULL,
    host_timestamp INTEGER,
    raw_json TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    UNIQUE (conversation_id, seq),
    UNIQUE (conversation_id, identity_hash)
);

CREATE TABLE turn_advancements (
    advancement_key TEXT PRIMARY KEY,
    conversation_id INTEGER NOT NULL REFERENCES conversations (id),
    payload_hash TEXT NOT NULL,
    message_count INTEGER NOT NULL,
    committed_at INTEGER NOT NULL
);
