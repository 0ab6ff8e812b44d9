// The search index's backlog tests that go through the engine, shared by
// search_backlog_native.rs (SQLite) and search_backlog_pg.rs (PostgreSQL): each defines `Db` (the
// connection type), `open_db()` (a fresh, empty store) and `index_waits()` (whether a stored
// message may wait for the search index: SQLite's FTS4 index is filled in batches, PostgreSQL's
// search vector is a generated column of the row) and includes this file. Whatever waits, a
// search finds every stored message and the doctor finds the store sound.
use lossless_wasm::core::config::Config;
use lossless_wasm::engine::*;
use lossless_wasm::store::search_index::{backlog, BACKLOG_LIMIT, INDEX_BATCH};
use lossless_wasm::store::Sql;
use serde_json::{json, Value};

fn engine() -> Engine<Db> {
    Engine::open(open_db(), Config::default(), 1_000).unwrap()
}

fn session() -> Value {
    json!({"sessionId": "s", "sessionKey": "agent:main:backlog"})
}

fn message(n: i64) -> Value {
    json!({"role": if n % 2 == 0 { "user" } else { "assistant" }, "content": format!("note {n}: marker{n} zebra"), "timestamp": n})
}

fn ingest(e: &mut Engine<Db>, messages: &[Value]) {
    let mut p = session();
    p["messages"] = json!(messages);
    e.ingest(decode::<IngestParams>("ingest", p).unwrap(), 5).unwrap();
}

fn search(e: &mut Engine<Db>, pattern: &str, mode: &str) -> Vec<i64> {
    let mut p = session();
    p["pattern"] = json!(pattern);
    p["mode"] = json!(mode);
    p["limit"] = json!(1000);
    let mut ids: Vec<i64> = e.search(decode::<SearchParams>("search", p).unwrap()).unwrap().into_iter().map(|h| h.id).collect();
    ids.sort();
    ids
}

fn waiting(e: &mut Engine<Db>) -> i64 {
    backlog(e.sql()).unwrap()
}

/// How many messages wait for the index after `n` were stored since it was last brought up to
/// date: all of them where messages wait, none where the row carries its own search vector.
fn expect_waiting(n: i64) -> i64 {
    if index_waits() {
        n
    } else {
        0
    }
}

/// The doctor's checks that fail (on SQLite they include `PRAGMA integrity_check` and FTS4's
/// 'integrity-check' of both indexes); empty when the store is sound.
fn unsound(e: &mut Engine<Db>) -> Vec<String> {
    lossless_wasm::store::doctor::checks(e.sql()).unwrap().into_iter().filter(|c| !c.ok).map(|c| format!("{}: {}", c.name, c.detail)).collect()
}

fn stored_ids(e: &mut Engine<Db>) -> Vec<i64> {
    e.sql().query("SELECT id FROM messages ORDER BY id", &[]).unwrap().iter().map(|r| r.int(0).unwrap()).collect()
}

#[test]
fn small_appends_wait_and_the_limit_indexes_them() {
    let mut e = engine();
    for n in 1..BACKLOG_LIMIT {
        ingest(&mut e, &[message(n)]);
        if n % 97 == 0 || n + 1 == BACKLOG_LIMIT {
            assert_eq!(waiting(&mut e), expect_waiting(n), "after {n} single appends");
            assert_eq!(unsound(&mut e), Vec::<String>::new(), "integrity with {n} waiting");
        }
    }
    ingest(&mut e, &[message(BACKLOG_LIMIT)]);
    assert_eq!(waiting(&mut e), 0, "the append that reaches the limit indexes the backlog");
    assert_eq!(unsound(&mut e), Vec::<String>::new());
    // Nothing waits, so a search reads the index as the appends left it: the newest messages (a
    // search returns 500 at most) and a message of every stretch of the appends, each under its id.
    let ids = stored_ids(&mut e);
    assert_eq!(ids.len() as i64, BACKLOG_LIMIT);
    assert_eq!(search(&mut e, "zebra", "full_text"), ids[ids.len() - 500..]);
    for n in (1..=BACKLOG_LIMIT).filter(|n| n % 61 == 1 || *n == BACKLOG_LIMIT) {
        assert_eq!(search(&mut e, &format!("marker{n}"), "full_text"), [ids[n as usize - 1]], "message {n}");
    }
}

#[test]
fn maintain_time_upkeep_indexes_a_batch_once_it_has_gathered() {
    let mut e = engine();
    for n in 1..INDEX_BATCH {
        ingest(&mut e, &[message(n)]);
        assert_eq!(e.index_search_batch().unwrap(), 0, "{n} waiting is less than a batch");
    }
    assert_eq!(waiting(&mut e), expect_waiting(INDEX_BATCH - 1));
    ingest(&mut e, &[message(INDEX_BATCH)]);
    assert_eq!(e.index_search_batch().unwrap() as i64, expect_waiting(INDEX_BATCH));
    assert_eq!(waiting(&mut e), 0);
    assert_eq!(e.index_search_batch().unwrap(), 0, "nothing left to index");
    assert_eq!(unsound(&mut e), Vec::<String>::new());
    assert_eq!(search(&mut e, "zebra", "full_text"), stored_ids(&mut e));
    assert_eq!(search(&mut e, "zebra", "full_text").len() as i64, INDEX_BATCH);
}

#[test]
fn a_search_finds_messages_that_were_waiting() {
    let mut e = engine();
    ingest(&mut e, &(1..=5).map(message).collect::<Vec<_>>());
    assert_eq!(waiting(&mut e), expect_waiting(5));
    assert_eq!(search(&mut e, "marker3", "text").len(), 1);
    assert_eq!(waiting(&mut e), 0, "the search indexed what waited");
    ingest(&mut e, &[message(6), message(7)]);
    assert_eq!(waiting(&mut e), expect_waiting(2));
    assert_eq!(search(&mut e, "zebra", "full_text").len(), 7, "full-text queries see waiting messages too");
    assert_eq!(unsound(&mut e), Vec::<String>::new());
}

#[test]
fn a_bulk_append_indexes_the_backlog_with_its_own_rows() {
    let mut e = engine();
    ingest(&mut e, &(1..=3).map(message).collect::<Vec<_>>());
    assert_eq!(waiting(&mut e), expect_waiting(3));
    let bulk: Vec<Value> = (4..4 + lossless_wasm::store::bulk::BULK_MIN_MESSAGES as i64).map(message).collect();
    ingest(&mut e, &bulk);
    assert_eq!(waiting(&mut e), 0);
    // Nothing waits, so the search reads what the bulk append indexed: every message, once.
    let ids = stored_ids(&mut e);
    assert_eq!(ids.len(), 3 + lossless_wasm::store::bulk::BULK_MIN_MESSAGES);
    assert_eq!(search(&mut e, "zebra", "full_text"), ids, "every message found once, under its own id");
    assert_eq!(unsound(&mut e), Vec::<String>::new());
}
