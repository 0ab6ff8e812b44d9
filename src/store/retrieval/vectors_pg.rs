//! The semantic index's statements that PostgreSQL writes differently from SQLite
//! ([`super::vectors`]): JSON arrays are read with `json_array_elements`, hex is decoded with
//! `decode(…, 'hex')` into `bytea`, and every JSON field is cast to its column's type.

/// A turn's vectors, by the `seq` of the messages the append just stored (`?1` the
/// conversation, `?2` a JSON array of `[seq, hex]`).
pub(super) const PUT_BY_SEQ_SQL: &str =
    "INSERT INTO message_vectors (message_id, conversation_id, vector) \
     SELECT m.id, m.conversation_id, decode(v.value ->> 1, 'hex') \
     FROM json_array_elements(CAST(CAST(?2 AS text) AS json)) AS v \
     JOIN messages m ON m.conversation_id = ?1 AND m.seq = CAST(v.value ->> 0 AS bigint) \
     ON CONFLICT (message_id) DO NOTHING";

/// Message vectors by id (`?1` a JSON array of `[id, conversation, hex]`).
pub(super) const PUT_MESSAGES_SQL: &str =
    "INSERT INTO message_vectors (message_id, conversation_id, vector) \
     SELECT CAST(value ->> 0 AS bigint), CAST(value ->> 1 AS bigint), decode(value ->> 2, 'hex') \
     FROM json_array_elements(CAST(CAST(?1 AS text) AS json)) ON CONFLICT (message_id) DO NOTHING";

/// Summary vectors by id, replacing an older one (a redone summary keeps its id).
pub(super) const PUT_SUMMARIES_SQL: &str = "INSERT INTO summary_vectors (summary_id, conversation_id, vector) \
     SELECT CAST(value ->> 0 AS bigint), CAST(value ->> 1 AS bigint), decode(value ->> 2, 'hex') \
     FROM json_array_elements(CAST(CAST(?1 AS text) AS json)) \
     ON CONFLICT (summary_id) DO UPDATE SET vector = excluded.vector, conversation_id = excluded.conversation_id";
