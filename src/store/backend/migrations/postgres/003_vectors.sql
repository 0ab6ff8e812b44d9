-- PostgreSQL version 3: the semantic index, as SQLite's version 16 (src/store/vectors.rs): one
-- i8 vector per message and per summary as bytea, the embedder recorded once in `vector_space`,
-- the backfill's resumable position beside it. IF NOT EXISTS: idempotent.
CREATE TABLE IF NOT EXISTS message_vectors (
    message_id bigint PRIMARY KEY,
    conversation_id bigint NOT NULL,
    vector bytea NOT NULL
);
CREATE INDEX IF NOT EXISTS message_vectors_by_conversation ON message_vectors (conversation_id);
CREATE TABLE IF NOT EXISTS summary_vectors (
    summary_id bigint PRIMARY KEY,
    conversation_id bigint NOT NULL,
    vector bytea NOT NULL
);
CREATE INDEX IF NOT EXISTS summary_vectors_by_conversation ON summary_vectors (conversation_id);
CREATE TABLE IF NOT EXISTS vector_space (
    id bigint PRIMARY KEY CHECK (id = 1),
    embedder text NOT NULL,
    dim bigint NOT NULL,
    backfilled_through bigint NOT NULL DEFAULT 0
);
