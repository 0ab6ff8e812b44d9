-- Version 17: the user messages of a conversation by the host's timestamp, for the catch-up from
-- OpenClaw 2026.7's transcript (src/store/append/user_messages_near.rs): it looks for the copy a
-- turn stored of a transcript's user message within minutes of its time, which without this
-- index read every message of the session key (3.8 ms a turn at 10K stored, growing with the
-- history). Partial: user messages only, a fraction of the rows. IF NOT EXISTS: idempotent.
CREATE INDEX IF NOT EXISTS messages_user_by_time ON messages (conversation_id, host_timestamp) WHERE role = 'user';
