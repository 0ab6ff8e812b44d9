-- PostgreSQL version 4: the user messages of a conversation by the host's timestamp, as SQLite's
-- version 17 (src/store/append/user_messages_near.rs). IF NOT EXISTS: idempotent.
CREATE INDEX IF NOT EXISTS messages_user_by_time ON messages (conversation_id, host_timestamp) WHERE role = 'user';
