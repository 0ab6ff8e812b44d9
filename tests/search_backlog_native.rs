//! The search index's backlog (store/search_index.rs): small appends leave their messages waiting
//! for the FTS4 index, never more than the limit; the host's `maintain` indexes them in batches;
//! a search indexes what waits before reading, so
//! it finds every stored message; the database passes its integrity checks while messages wait;
//! bulk appends index the backlog with their own rows; the migration starts from everything
//! already indexed.
#![cfg(not(target_arch = "wasm32"))]

use lossless_wasm::core::config::Config;
use lossless_wasm::engine::*;
use lossless_wasm::store::native::NativeSql;
use lossless_wasm::store::search_index::{backlog, BACKLOG_LIMIT, INDEX_BATCH};
use lossless_wasm::store::{Sql, SqlValue};
use serde_json::{json, Value};

fn engine() -> Engine<NativeSql> {
    Engine::open(NativeSql::in_memory().unwrap(), Config::default(), 1_000).unwrap()
}

fn session() -> Value {
    json!({"sessionId": "s", "sessionKey": "agent:main:backlog"})
}

fn message(n: i64) -> Value {
    json!({"role": if n % 2 == 0 { "user" } else { "assistant" }, "content": format!("note {n}: marker{n} zebra"), "timestamp": n})
}

fn ingest(e: &mut Engine<NativeSql>, messages: &[Value]) {
    let mut p = session();
    p["messages"] = json!(messages);
    e.ingest(decode::<IngestParams>("ingest", p).unwrap(), 5).unwrap();
}

fn search(e: &mut Engine<NativeSql>, pattern: &str, mode: &str) -> Vec<i64> {
    let mut p = session();
    p["pattern"] = json!(pattern);
    p["mode"] = json!(mode);
    p["limit"] = json!(1000);
    let mut ids: Vec<i64> = e.search(decode::<SearchParams>("search", p).unwrap()).unwrap().into_iter().map(|h| h.id).collect();
    ids.sort();
    ids
}

fn waiting(e: &mut Engine<NativeSql>) -> i64 {
    backlog(e.sql()).unwrap()
}

fn integrity(e: &mut Engine<NativeSql>) -> (String, bool) {
    let pragma = e.sql().query("PRAGMA integrity_check", &[]).unwrap()[0].text(0).unwrap();
    let fts = e.sql().execute("INSERT INTO messages_fts (messages_fts) VALUES ('integrity-check')", &[]).is_ok();
    (pragma, fts)
}

#[test]
fn small_appends_wait_and_the_limit_indexes_them() {
    let mut e = engine();
    for n in 1..BACKLOG_LIMIT {
        ingest(&mut e, &[message(n)]);
        if n % 97 == 0 || n + 1 == BACKLOG_LIMIT {
            assert_eq!(waiting(&mut e), n, "after {n} single appends");
            assert_eq!(integrity(&mut e), ("ok".to_owned(), true), "integrity with {n} waiting");
        }
    }
    ingest(&mut e, &[message(BACKLOG_LIMIT)]);
    assert_eq!(waiting(&mut e), 0, "the append that reaches the limit indexes the backlog");
    assert_eq!(integrity(&mut e), ("ok".to_owned(), true));
    let indexed = e.sql().query("SELECT COUNT(*) FROM messages_fts WHERE messages_fts MATCH 'zebra'", &[]).unwrap()[0].int(0).unwrap();
    assert_eq!(indexed, BACKLOG_LIMIT);
}

#[test]
fn maintain_time_upkeep_indexes_a_batch_once_it_has_gathered() {
    let mut e = engine();
    for n in 1..INDEX_BATCH {
        ingest(&mut e, &[message(n)]);
        assert_eq!(e.index_search_batch().unwrap(), 0, "{n} waiting is less than a batch");
    }
    assert_eq!(waiting(&mut e), INDEX_BATCH - 1);
    ingest(&mut e, &[message(INDEX_BATCH)]);
    assert_eq!(e.index_search_batch().unwrap(), INDEX_BATCH as usize);
    assert_eq!(waiting(&mut e), 0);
    assert_eq!(e.index_search_batch().unwrap(), 0, "nothing left to index");
    assert_eq!(integrity(&mut e), ("ok".to_owned(), true));
}

#[test]
fn a_search_finds_messages_that_were_waiting() {
    let mut e = engine();
    ingest(&mut e, &(1..=5).map(message).collect::<Vec<_>>());
    assert_eq!(waiting(&mut e), 5);
    assert_eq!(search(&mut e, "marker3", "text").len(), 1);
    assert_eq!(waiting(&mut e), 0, "the search indexed what waited");
    ingest(&mut e, &[message(6), message(7)]);
    assert_eq!(search(&mut e, "zebra", "full_text").len(), 7, "full-text queries see waiting messages too");
    assert_eq!(integrity(&mut e), ("ok".to_owned(), true));
}

#[test]
fn a_bulk_append_indexes_the_backlog_with_its_own_rows() {
    let mut e = engine();
    ingest(&mut e, &(1..=3).map(message).collect::<Vec<_>>());
    assert_eq!(waiting(&mut e), 3);
    let bulk: Vec<Value> = (4..4 + lossless_wasm::store::bulk::BULK_MIN_MESSAGES as i64).map(message).collect();
    ingest(&mut e, &bulk);
    assert_eq!(waiting(&mut e), 0);
    let docids: Vec<i64> = e.sql().query("SELECT docid FROM messages_fts WHERE messages_fts MATCH 'zebra' ORDER BY docid", &[]).unwrap().iter().map(|r| r.int(0).unwrap()).collect();
    let ids: Vec<i64> = e.sql().query("SELECT id FROM messages ORDER BY id", &[]).unwrap().iter().map(|r| r.int(0).unwrap()).collect();
    assert_eq!(docids, ids, "every message indexed once, under its own id");
    assert_eq!(integrity(&mut e), ("ok".to_owned(), true));
}

#[test]
fn the_doctor_finds_the_index_sound_while_messages_wait_and_a_rebuild_keeps_the_backlog_rule() {
    let mut e = engine();
    ingest(&mut e, &(1..=40).map(message).collect::<Vec<_>>());
    ingest(&mut e, &[message(41), message(42)]);
    assert_eq!(waiting(&mut e), 2);
    e.sql().execute("INSERT INTO messages_fts (messages_fts) VALUES ('rebuild')", &[]).unwrap();
    assert_eq!(integrity(&mut e), ("ok".to_owned(), true));
    assert_eq!(search(&mut e, "marker42", "text").len(), 1);
    assert_eq!(search(&mut e, "zebra", "text").len(), 42);
}

#[test]
fn migration_nine_counts_every_existing_message_as_indexed() {
    let sql = NativeSql::in_memory().unwrap();
    let mut e = Engine::open(sql, Config::default(), 1_000).unwrap();
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
    let row = e.sql().query("SELECT MAX(version) FROM schema_migrations", &[]).unwrap()[0].int(0).unwrap();
    assert_eq!(row, 8);
    lossless_wasm::store::schema::migrate(e.sql(), 2_000).unwrap();
    assert_eq!(waiting(&mut e), 0);
    assert_eq!(e.sql().query("SELECT indexed_through FROM messages_fts_progress", &[]).unwrap()[0].0[0], SqlValue::Int(40));
    assert_eq!(integrity(&mut e), ("ok".to_owned(), true));
    assert_eq!(search(&mut e, "zebra", "full_text").len(), 40, "the upgraded index holds every message");
}
