-- Version 16: the semantic index (issue 40; src/store/vectors.rs). One vector per message and
-- per summary, as the embedder's i8 components in a BLOB (one byte each), with the conversation
-- so a recall reads only the vectors of the conversations in its reach. `vector_space` records,
-- once, which embedder made the vectors (its name and dimension): a store whose recorded
-- embedder differs from the engine's drops its vectors and re-embeds through the backfill,
-- never mixing two spaces. `backfilled_through` is the backfill's resumable position: every
-- message at or below it has been considered. IF NOT EXISTS: idempotent.
CREATE TABLE IF NOT EXISTS message_vectors (
    message_id INTEGER PRIMARY KEY,
    conversation_id INTEGER NOT NULL,
    vector BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS message_vectors_by_conversation ON message_vectors (conversation_id);
CREATE TABLE IF NOT EXISTS summary_vectors (
    summary_id INTEGER PRIMARY KEY,
    conversation_id INTEGER NOT NULL,
    vector BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS summary_vectors_by_conversation ON summary_vectors (conversation_id);
CREATE TABLE IF NOT EXISTS vector_space (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    embedder TEXT NOT NULL,
    dim INTEGER NOT NULL,
    backfilled_through INTEGER NOT NULL DEFAULT 0
);
