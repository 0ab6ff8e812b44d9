//! The search index's backlog (store/retrieval/search_index.rs) on native SQLite: small appends leave their
//! messages waiting for the FTS4 index, never more than the limit; the host's `maintain` indexes
//! them in batches; a search indexes what waits before reading, so it finds every stored message;
//! the database passes its integrity checks while messages wait; bulk appends index the backlog
//! with their own rows; the migration starts from everything already indexed. The cases that go
//! through the engine (`search_backlog_cases/cases.rs`) run on PostgreSQL too
//! (search_backlog_pg.rs), where nothing waits; the FTS4 index's own cases, below, run here only.
//! Run: `cargo test --test native search_backlog::`.

use lossless_wasm::store::SqlValue;

sqlite_store!();

/// SQLite's FTS4 index is filled in batches: a stored message waits for it.
fn index_waits() -> bool {
    true
}

include!("../search_backlog_cases/cases.rs");

/// `PRAGMA integrity_check` and FTS4's own check of the message index.
fn integrity(e: &mut Engine<Db>) -> (String, bool) {
    let pragma = e.sql().query("PRAGMA integrity_check", &[]).unwrap()[0]
        .text(0)
        .unwrap();
    let fts = e
        .sql()
        .execute(
            "INSERT INTO messages_fts (messages_fts) VALUES ('integrity-check')",
            &[],
        )
        .is_ok();
    (pragma, fts)
}

// The FTS4 index's own cases (its table, its 'rebuild' command, the SQLite migration that created
// the backlog): PostgreSQL has no such index, its search vector is a column of the message row.

#[test]
fn the_append_that_reaches_the_limit_puts_the_whole_backlog_in_the_fts4_index() {
    let mut e = engine();
    for n in 1..=BACKLOG_LIMIT {
        ingest(&mut e, &[message(n)]);
    }
    assert_eq!(waiting(&mut e), 0);
    let indexed = e
        .sql()
        .query(
            "SELECT COUNT(*) FROM messages_fts WHERE messages_fts MATCH 'zebra'",
            &[],
        )
        .unwrap()[0]
        .int(0)
        .unwrap();
    assert_eq!(indexed, BACKLOG_LIMIT);
}

#[test]
fn a_bulk_append_indexes_each_message_once_under_its_own_docid() {
    let mut e = engine();
    ingest(&mut e, &(1..=3).map(message).collect::<Vec<_>>());
    assert_eq!(waiting(&mut e), 3);
    let bulk: Vec<Value> = (4..4 + lossless_wasm::store::bulk::BULK_MIN_MESSAGES as i64)
        .map(message)
        .collect();
    ingest(&mut e, &bulk);
    let docids: Vec<i64> = e
        .sql()
        .query(
            "SELECT docid FROM messages_fts WHERE messages_fts MATCH 'zebra' ORDER BY docid",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.int(0).unwrap())
        .collect();
    assert_eq!(
        docids,
        stored_ids(&mut e),
        "every message indexed once, under its own id"
    );
    assert_eq!(integrity(&mut e), ("ok".to_owned(), true));
}

#[test]
fn the_doctor_finds_the_index_sound_while_messages_wait_and_a_rebuild_keeps_the_backlog_rule() {
    let mut e = engine();
    ingest(&mut e, &(1..=40).map(message).collect::<Vec<_>>());
    ingest(&mut e, &[message(41), message(42)]);
    assert_eq!(waiting(&mut e), 2);
    e.sql()
        .execute(
            "INSERT INTO messages_fts (messages_fts) VALUES ('rebuild')",
            &[],
        )
        .unwrap();
    assert_eq!(integrity(&mut e), ("ok".to_owned(), true));
    assert_eq!(search(&mut e, "marker42", "text").len(), 1);
    assert_eq!(search(&mut e, "zebra", "text").len(), 42);
}

#[test]
fn migration_nine_counts_every_existing_message_as_indexed() {
    let mut e = engine();
    ingest(&mut e, &(1..=40).map(message).collect::<Vec<_>>());
    // Back to a version-8 database: the index over `messages_text`, no progress table (and
    // migrations 11's to 15's changes undone, since every later migration runs again).
    e.sql()
        .execute_script(
            "ALTER TABLE context_items DROP COLUMN stub; ALTER TABLE context_items DROP COLUMN view_json; \
             ALTER TABLE conversations DROP COLUMN stubbed_through; \
             ALTER TABLE conversations DROP COLUMN host_facts_json; ALTER TABLE conversations DROP COLUMN host_facts_at; \
             ALTER TABLE conversations DROP COLUMN compaction_state_json; ALTER TABLE conversations DROP COLUMN compaction_pending_json; \
             ALTER TABLE conversations DROP COLUMN compaction_state_at; ALTER TABLE conversations DROP COLUMN summary_runs_json; \
             CREATE TABLE host_accounting (conversation_id INTEGER PRIMARY KEY REFERENCES conversations (id), facts_json TEXT NOT NULL, updated_at INTEGER NOT NULL); \
             CREATE TABLE compaction_state (conversation_id INTEGER PRIMARY KEY REFERENCES conversations (id), state_json TEXT NOT NULL, pending_json TEXT, updated_at INTEGER NOT NULL); \
             DROP TABLE turn_advancements; \
             CREATE TABLE turn_advancements (advancement_key TEXT PRIMARY KEY, conversation_id INTEGER NOT NULL REFERENCES conversations (id), \
               payload_hash TEXT NOT NULL, message_count INTEGER NOT NULL, committed_at INTEGER NOT NULL); \
             CREATE INDEX turn_advancements_by_conversation ON turn_advancements (conversation_id); \
             DROP TABLE summaries_fts; CREATE VIRTUAL TABLE summaries_fts USING fts4 (content=\"summaries\", content, tokenize=unicode61); \
             DROP INDEX compaction_events_by_summary; ALTER TABLE compaction_events DROP COLUMN repeats; \
             ALTER TABLE compaction_events DROP COLUMN last_at; CREATE INDEX compaction_events_by_summary ON compaction_events (summary_id); \
             DROP TABLE messages_fts; DROP VIEW messages_indexed_text; DROP TABLE messages_fts_progress; \
             CREATE VIRTUAL TABLE messages_fts USING fts4 (content=\"messages_text\", content, tokenize=unicode61, matchinfo=fts3); \
             INSERT INTO messages_fts (messages_fts) VALUES ('rebuild'); DROP TABLE summarizer_calls; DELETE FROM schema_migrations WHERE version >= 9;",
        )
        .unwrap();
    let row = e
        .sql()
        .query("SELECT MAX(version) FROM schema_migrations", &[])
        .unwrap()[0]
        .int(0)
        .unwrap();
    assert_eq!(row, 8);
    lossless_wasm::store::schema::migrate(e.sql(), 2_000).unwrap();
    assert_eq!(waiting(&mut e), 0);
    assert_eq!(
        e.sql()
            .query("SELECT indexed_through FROM messages_fts_progress", &[])
            .unwrap()[0]
            .0[0],
        SqlValue::Int(40)
    );
    assert_eq!(integrity(&mut e), ("ok".to_owned(), true));
    assert_eq!(
        search(&mut e, "zebra", "full_text").len(),
        40,
        "the upgraded index holds every message"
    );
}
