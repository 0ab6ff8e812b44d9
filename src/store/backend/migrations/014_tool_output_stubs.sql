-- Version 14: tool-output stubs (issue 23). Stored messages never change: whether the model's
-- view shows a message whole, as a one-line stub or as a head-and-tail excerpt is a property of
-- its context item, decided in batches and kept, so the view is the same on every turn until
-- the next batch (a view that changed every turn would defeat the provider's prompt cache).
-- `stub`: NULL (whole), 1 (a line stub) or 2 and up (an excerpt; the number names its size);
-- `view_json`: the exact message JSON the view shows instead of the stored one. The item's
-- `token_count` is then the stub's, so the running totals and every trigger see the smaller view.
ALTER TABLE context_items ADD COLUMN stub INTEGER;
ALTER TABLE context_items ADD COLUMN view_json TEXT;
-- Every context item at or before this ordinal has been considered for a stub: each turn looks
-- only at the items after it (work proportional to the new messages, not to the history).
ALTER TABLE conversations ADD COLUMN stubbed_through INTEGER NOT NULL DEFAULT 0;
-- A batch of stubs is logged in compaction_events as pass 'mask': the CHECK constraint is
-- widened by copying the table (SQLite cannot alter a CHECK in place), with every row and column.
CREATE TABLE compaction_events_v14 (
    id INTEGER PRIMARY KEY,
    conversation_id INTEGER NOT NULL REFERENCES conversations (id),
    created_at INTEGER NOT NULL,
    pass TEXT NOT NULL CHECK (pass IN ('leaf', 'condensed', 'sweep', 'trigger', 'mask')),
    level TEXT CHECK (level IN ('normal', 'aggressive', 'fallback')),
    outcome TEXT NOT NULL CHECK (outcome IN ('triggered', 'compacted', 'skipped', 'failed')),
    reason TEXT NOT NULL,
    tokens_before INTEGER,
    tokens_after INTEGER,
    summary_id INTEGER REFERENCES summaries (id),
    telemetry_json TEXT,
    repeats INTEGER NOT NULL DEFAULT 1,
    last_at INTEGER
);
INSERT INTO compaction_events_v14 (id, conversation_id, created_at, pass, level, outcome, reason, tokens_before, tokens_after, summary_id, telemetry_json, repeats, last_at)
    SELECT id, conversation_id, created_at, pass, level, outcome, reason, tokens_before, tokens_after, summary_id, telemetry_json, repeats, last_at FROM compaction_events;
DROP TABLE compaction_events;
ALTER TABLE compaction_events_v14 RENAME TO compaction_events;
CREATE INDEX compaction_events_by_conversation ON compaction_events (conversation_id, id);
CREATE INDEX compaction_events_by_summary ON compaction_events (summary_id) WHERE summary_id IS NOT NULL;
