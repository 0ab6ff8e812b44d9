-- Version 6: messages are indexed for search by the statement that stores them
-- (store/messages.rs), not by a trigger. Inside a trigger every row is its own statement
-- savepoint, at which FTS4 flushes its pending terms as a new index segment; a 20,000-message
-- import spent ~90 % of its time creating and merging those one-row segments.
DROP TRIGGER messages_fts_insert;
-- Who looks a context item up by summary is only interested in summary items: the index need
-- not hold an entry for every message item.
DROP INDEX context_items_by_summary;
CREATE INDEX context_items_by_summary ON context_items (summary_id) WHERE summary_id IS NOT NULL;
