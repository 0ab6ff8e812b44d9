// What the SQLite → PostgreSQL copy (copy-to-postgres.js) moves, table by table: the order
// (every table after the tables it references), each table's columns with their PostgreSQL
// types, its key, the columns that tell two stores apart, and whether its id comes from an
// identity sequence. Owns the mapping between the two schemas and nothing else.
//
// Written for SQLite schema version 17 and PostgreSQL schema version 4 (the same tables; see
// src/store/backend/migrations/postgres/; version 2 only adds a function, version 3 and SQLite's
// 16 add the semantic index, version 4 and SQLite's 17 an index of user messages by time). A
// migration on
// either side must update this file and the two constants below; until then the copy refuses
// the other version.
// Not copied: `vector_space` (see the vectors below), SQLite's FTS4 tables and views and `messages_fts_progress` (PostgreSQL's
// `search_tsv` columns are generated), and `schema_migrations` (each side numbers its own).

export const SQLITE_VERSION = 17;
export const POSTGRES_VERSION = 4;

/**
 * @typedef {object} CopyTable
 * @property {string} name
 * @property {[string, string][]} columns [name, PostgreSQL type] as both sides name them
 * @property {string[]} key the primary key (the ON CONFLICT target)
 * @property {string[]} identity the columns that never change once a row is written: a row
 *           already in the target under the same key but with other values here belongs to
 *           another store. Columns a later turn or compaction updates (running totals, a
 *           context item's target) are not among them: a store that went on on PostgreSQL
 *           after an earlier copy is still the same store.
 * @property {boolean} [unchanged] a row already there must equal the source's in every column:
 *           every write to a conversation updates its row, so a conversation that differs was
 *           written on one side after an earlier copy, and copying its rows again would mix two
 *           histories (context items the other side has replaced would come back)
 * @property {boolean} [sequence] `id` is an identity column whose sequence must pass the copied ids
 */

/** @type {CopyTable[]} */
export const TABLES = [
  {
    name: "conversations",
    columns: [
      ["id", "bigint"],
      ["session_key", "text"],
      ["session_id", "text"],
      ["generation", "bigint"],
      ["status", "text"],
      ["archive_cause", "text"],
      ["archived_at", "bigint"],
      ["created_at", "bigint"],
      ["message_count", "bigint"],
      ["token_count", "bigint"],
      ["next_ordinal", "bigint"],
      ["context_token_count", "bigint"],
      ["context_epoch", "bigint"],
      ["context_summary_tokens", "bigint"],
      ["host_facts_json", "text"],
      ["host_facts_at", "bigint"],
      ["compaction_state_json", "text"],
      ["compaction_pending_json", "text"],
      ["compaction_state_at", "bigint"],
      ["stubbed_through", "bigint"],
      ["summary_runs_json", "text"],
    ],
    key: ["id"],
    identity: ["session_key", "session_id", "generation", "created_at"],
    unchanged: true,
    sequence: true,
  },
  {
    name: "messages",
    columns: [
      ["id", "bigint"],
      ["conversation_id", "bigint"],
      ["seq", "bigint"],
      ["role", "text"],
      ["token_count", "bigint"],
      ["identity_hash", "bytea"],
      ["host_timestamp", "bigint"],
      ["raw_json", "text"],
      ["created_at", "bigint"],
      ["host_entry_id", "text"],
    ],
    key: ["id"],
    identity: ["conversation_id", "seq", "identity_hash"],
    sequence: true,
  },
  {
    name: "message_parts",
    columns: [
      ["message_id", "bigint"],
      ["ordinal", "bigint"],
      ["kind", "text"],
      ["tool_call_id", "text"],
      ["tool_name", "text"],
    ],
    key: ["message_id", "ordinal"],
    identity: ["kind", "tool_call_id", "tool_name"],
  },
  {
    name: "summaries",
    columns: [
      ["id", "bigint"],
      ["conversation_id", "bigint"],
      ["kind", "text"],
      ["depth", "bigint"],
      ["content", "text"],
      ["token_count", "bigint"],
      ["earliest_at", "bigint"],
      ["latest_at", "bigint"],
      ["descendant_message_count", "bigint"],
      ["descendant_summary_count", "bigint"],
      ["source_token_count", "bigint"],
      ["summarizer", "text"],
      ["model", "text"],
      ["level", "text"],
      ["created_at", "bigint"],
    ],
    key: ["id"],
    // Not `content`: repair rewrites a fallback summary's text in place.
    identity: ["conversation_id", "kind", "depth", "created_at"],
    sequence: true,
  },
  {
    name: "summary_messages",
    columns: [
      ["summary_id", "bigint"],
      ["message_id", "bigint"],
    ],
    key: ["summary_id", "message_id"],
    identity: [],
  },
  {
    name: "summary_sources",
    columns: [
      ["source_summary_id", "bigint"],
      ["condensed_summary_id", "bigint"],
    ],
    key: ["condensed_summary_id", "source_summary_id"],
    identity: [],
  },
  {
    name: "context_items",
    columns: [
      ["conversation_id", "bigint"],
      ["ordinal", "bigint"],
      ["message_id", "bigint"],
      ["summary_id", "bigint"],
      ["token_count", "bigint"],
      ["stub", "bigint"],
      ["view_json", "text"],
    ],
    key: ["conversation_id", "ordinal"],
    // Compaction and masking rewrite items; their conversation's identity already tells stores apart.
    identity: [],
  },
  {
    name: "compaction_events",
    columns: [
      ["id", "bigint"],
      ["conversation_id", "bigint"],
      ["created_at", "bigint"],
      ["pass", "text"],
      ["level", "text"],
      ["outcome", "text"],
      ["reason", "text"],
      ["tokens_before", "bigint"],
      ["tokens_after", "bigint"],
      ["summary_id", "bigint"],
      ["telemetry_json", "text"],
      ["repeats", "bigint"],
      ["last_at", "bigint"],
    ],
    key: ["id"],
    identity: ["conversation_id", "created_at", "pass"],
    sequence: true,
  },
  {
    name: "summarizer_calls",
    columns: [
      ["id", "bigint"],
      ["conversation_id", "bigint"],
      ["created_at", "bigint"],
      ["pass", "text"],
      ["level", "text"],
      ["input_tokens", "bigint"],
      ["output_tokens", "bigint"],
      ["counted_by", "text"],
      ["outcome", "text"],
      ["reason", "text"],
    ],
    key: ["id"],
    identity: ["conversation_id", "created_at", "pass"],
    sequence: true,
  },
  {
    name: "turn_advancements",
    columns: [
      ["advancement_key", "text"],
      ["conversation_id", "bigint"],
      ["payload_hash", "text"],
      ["message_count", "bigint"],
      ["committed_at", "bigint"],
    ],
    key: ["advancement_key"],
    identity: ["conversation_id", "payload_hash"],
  },
  {
    name: "imports",
    columns: [
      ["source_key", "text"],
      ["kind", "text"],
      ["local_id", "bigint"],
      ["imported_at", "bigint"],
    ],
    key: ["source_key"],
    identity: ["kind", "local_id"],
  },
  // The semantic index (SQLite 16, PostgreSQL 3): the vectors as they are, so PostgreSQL's
  // recall finds by meaning at once instead of after a backfill. Not `vector_space`: the engine
  // that migrated the target recorded its own (the copy runs only between stores of the same
  // lossless-wasm version, so the same embedder), and its backfill skips what has a vector.
  {
    name: "message_vectors",
    columns: [
      ["message_id", "bigint"],
      ["conversation_id", "bigint"],
      ["vector", "bytea"],
    ],
    key: ["message_id"],
    identity: ["conversation_id"],
  },
  {
    name: "summary_vectors",
    columns: [
      ["summary_id", "bigint"],
      ["conversation_id", "bigint"],
      ["vector", "bytea"],
    ],
    key: ["summary_id"],
    // A repaired summary's vector is replaced with its text.
    identity: ["conversation_id"],
  },
];
