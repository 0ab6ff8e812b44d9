// A small lossless-claw lcm.db (its schema, real-looking content, one truncation fallback
// summary) for the import and operator-command tests; tests/native/import.rs has the full fixture.
/** Writes a small lcm.db in lossless-claw's schema at `path`, one conversation under `key`. */
export async function writeLosslessClawDb(path, key) {
  const { createRequire } = await import("node:module");
  const { writeFileSync } = await import("node:fs");
  const SQL = await createRequire(import.meta.url)("sql.js")();
  const db = new SQL.Database();
  db.exec(`
    CREATE TABLE conversations (conversation_id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, session_key TEXT, active INTEGER NOT NULL DEFAULT 1,
      archived_at TEXT, archive_cause TEXT, created_at TEXT NOT NULL DEFAULT (datetime('now')), updated_at TEXT NOT NULL DEFAULT (datetime('now')));
    CREATE TABLE messages (message_id INTEGER PRIMARY KEY AUTOINCREMENT, conversation_id INTEGER NOT NULL, seq INTEGER NOT NULL, role TEXT NOT NULL,
      content TEXT NOT NULL, token_count INTEGER NOT NULL, created_at TEXT NOT NULL DEFAULT (datetime('now')), UNIQUE (conversation_id, seq));
    CREATE TABLE message_parts (part_id TEXT PRIMARY KEY, message_id INTEGER NOT NULL, session_id TEXT NOT NULL, part_type TEXT NOT NULL, ordinal INTEGER NOT NULL,
      tool_call_id TEXT, tool_name TEXT);
    CREATE TABLE summaries (summary_id TEXT PRIMARY KEY, conversation_id INTEGER NOT NULL, kind TEXT NOT NULL, depth INTEGER NOT NULL DEFAULT 0, content TEXT NOT NULL,
      token_count INTEGER NOT NULL, earliest_at TEXT, latest_at TEXT, source_message_token_count INTEGER NOT NULL DEFAULT 0,
      created_at TEXT NOT NULL DEFAULT (datetime('now')), model TEXT NOT NULL DEFAULT 'unknown');
    CREATE TABLE summary_messages (summary_id TEXT NOT NULL, message_id INTEGER NOT NULL, ordinal INTEGER NOT NULL, PRIMARY KEY (summary_id, message_id));
    CREATE TABLE summary_parents (summary_id TEXT NOT NULL, parent_summary_id TEXT NOT NULL, ordinal INTEGER NOT NULL, PRIMARY KEY (summary_id, parent_summary_id));
    CREATE TABLE context_items (conversation_id INTEGER NOT NULL, ordinal INTEGER NOT NULL, item_type TEXT NOT NULL, message_id INTEGER, summary_id TEXT,
      PRIMARY KEY (conversation_id, ordinal));
    INSERT INTO conversations VALUES (1, 'sess-1', '${key}', 1, NULL, NULL, '2026-05-02 09:00:00', '2026-05-02 09:00:00');
    INSERT INTO messages VALUES (1, 1, 1, 'user', 'The release train leaves on Thursday; freeze branch rel-7 at noon.', 15, '2026-05-02 09:01:00'),
      (2, 1, 2, 'assistant', 'Noted: freeze rel-7 Thursday noon.', 9, '2026-05-02 09:02:00'),
      (3, 1, 3, 'user', 'Also bump the schema to v12.', 8, '2026-05-02 09:03:00'),
      (4, 1, 4, 'assistant', 'Schema bumped to v12.', 6, '2026-05-02 09:04:00');
    INSERT INTO summaries VALUES ('sum_0123456789abcdef', 1, 'leaf', 0, '[Truncated from 2400 tokens] The release train leaves on', 10,
      '2026-05-02T09:01:00.000Z', '2026-05-02T09:02:00.000Z', 24, '2026-05-02 09:10:00', 'claude');
    INSERT INTO summary_messages VALUES ('sum_0123456789abcdef', 1, 0), ('sum_0123456789abcdef', 2, 1);
    INSERT INTO context_items VALUES (1, 0, 'summary', NULL, 'sum_0123456789abcdef'), (1, 1, 'message', 3, NULL), (1, 2, 'message', 4, NULL);`);
  writeFileSync(path, db.export());
  db.close();
}
