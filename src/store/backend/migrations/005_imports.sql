-- Version 5: what was imported from another engine's database (lossless-claw's lcm.db), keyed by
-- the source row, so a second import of the same file adds nothing.
CREATE TABLE imports (
    source_key TEXT PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('conversation', 'summary')),
    local_id INTEGER NOT NULL,
    imported_at INTEGER NOT NULL
) WITHOUT ROWID;
