-- Version 11: the trigger's decision is recorded on every turn, and most turns decide the same
-- thing ("skipped", for the same reason, with slightly larger totals). Each such row was a new
-- row plus two index entries: 3 of a turn's ~16 pages written to the WAL, and ~27 bytes per
-- stored message at 1,000 messages. Now a skipped decision whose reason repeats the
-- conversation's latest event updates that row in place: `repeats` counts the decisions it
-- stands for, `created_at` is the first one's time, `last_at` the latest's, and
-- `tokens_before`/`telemetry_json` hold the latest decision's inputs. Any other event (a
-- triggered decision, a different reason, a compaction pass) starts a new row, so the log still
-- shows every change of decision in order, each with its inputs.
ALTER TABLE compaction_events ADD COLUMN repeats INTEGER NOT NULL DEFAULT 1;
ALTER TABLE compaction_events ADD COLUMN last_at INTEGER;
-- Only compaction passes name a summary: the trigger's rows no longer enter this index (it
-- serves lookups by summary and the foreign key's checks, which never look for NULL).
DROP INDEX compaction_events_by_summary;
CREATE INDEX compaction_events_by_summary ON compaction_events (summary_id) WHERE summary_id IS NOT NULL;
