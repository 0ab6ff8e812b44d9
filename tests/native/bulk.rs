//! Appending in bulk (one statement per table, rows as JSON) stores exactly what appending row
//! by row stores: the same messages, ids, seqs, identities, parts, context items, totals and
//! search index, skipping the same duplicates.

use lossless_wasm::core::config::Config;
use lossless_wasm::engine::*;
use lossless_wasm::store::native::NativeSql;
use lossless_wasm::store::{Row, Sql, SqlValue, WriteTx};
use serde_json::{json, Value};

fn engine() -> Engine<NativeSql> {
    Engine::open(NativeSql::in_memory().unwrap(), Config::default(), 1_000).unwrap()
}

/// A varied history: text, tool calls with arguments, tool results, thinking, an image, CJK,
/// a repeated message, and a message with a NUL.
fn history() -> Vec<Value> {
    let mut out = Vec::new();
    for t in 0..60i64 {
        let ts = t * 10;
        out.push(json!({"role": "user", "content": format!("request {t}: 修复 parser \"quoted\" \\ path\nline two"), "timestamp": ts}));
        out.push(json!({"role": "assistant", "content": [{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": format!("reading {t}")},
                        {"type": "toolCall", "id": format!("c{t}"), "name": "read", "arguments": {"path": format!("src/{t}.rs")}}], "timestamp": ts + 1}));
        out.push(json!({"role": "toolResult", "toolCallId": format!("c{t}"), "toolName": "read", "content": [{"type": "text", "text": format!("fn f{t}() {{}}\u{0}")}, {"type": "image", "data": "AAAA", "mimeType": "image/png"}], "isError": false, "timestamp": ts + 2}));
        if t % 7 == 0 {
            out.push(json!({"role": "user", "content": format!("request {t}: 修复 parser \"quoted\" \\ path\nline two"), "timestamp": ts}));
        }
    }
    out
}

fn dump(e: &mut Engine<NativeSql>, sql: &str) -> Vec<Vec<SqlValue>> {
    e.sql()
        .query(sql, &[])
        .unwrap()
        .into_iter()
        .map(|Row(values)| values)
        .collect()
}

fn tables(e: &mut Engine<NativeSql>) -> Vec<Vec<Vec<SqlValue>>> {
    // Row-by-row appends leave a few messages waiting for the search index; compare full indexes.
    let mut tx = WriteTx::begin(e.sql()).unwrap();
    lossless_wasm::store::search_index::catch_up(&mut tx).unwrap();
    tx.commit().unwrap();
    [
        "SELECT id, conversation_id, seq, role, token_count, hex(identity_hash), host_timestamp, raw_json, host_entry_id FROM messages ORDER BY id",
        "SELECT * FROM message_parts ORDER BY message_id, ordinal",
        "SELECT * FROM context_items ORDER BY conversation_id, ordinal",
        "SELECT id, message_count, token_count, next_ordinal, context_token_count FROM conversations ORDER BY id",
        "SELECT docid FROM messages_fts WHERE messages_fts MATCH 'parser' ORDER BY docid",
        "SELECT docid FROM messages_fts WHERE messages_fts MATCH 'reading' ORDER BY docid",
        "SELECT docid FROM messages_fts WHERE messages_fts MATCH 'read' ORDER BY docid",
    ]
    .iter()
    .map(|q| dump(e, q))
    .collect()
}

#[test]
fn bulk_and_row_by_row_appends_store_the_same_rows() {
    let all = history();
    let (first, rest) = all.split_at(40);
    let session = json!({"sessionId": "s", "sessionKey": "agent:main:bulk"});
    let batch = |messages: &[Value]| {
        let mut p = session.clone();
        p["messages"] = json!(messages);
        decode::<IngestParams>("ingest", p).unwrap()
    };

    // Row by row: one message per call.
    let mut rows = engine();
    for message in &all {
        rows.ingest(batch(std::slice::from_ref(message)), 5)
            .unwrap();
    }
    // In bulk: a first batch, then the whole history again (the first 40 are already stored).
    let mut bulk = engine();
    assert!(first.len() >= lossless_wasm::store::bulk::BULK_MIN_MESSAGES);
    bulk.ingest(batch(first), 5).unwrap();
    let again = bulk.ingest(batch(&all), 5).unwrap();
    assert_eq!(
        again,
        rest.len()
            - rest.iter().filter(|m| first.contains(m)).count()
            - duplicates_within(rest, first)
    );

    assert_eq!(tables(&mut bulk), tables(&mut rows));
    let ok = dump(&mut bulk, "PRAGMA integrity_check");
    assert_eq!(ok, vec![vec![SqlValue::Text("ok".into())]]);
}

/// Messages of `rest` that repeat an earlier message of `rest` (not of `first`).
fn duplicates_within(rest: &[Value], first: &[Value]) -> usize {
    let mut seen: Vec<&Value> = Vec::new();
    let mut dups = 0;
    for m in rest {
        if first.contains(m) {
            continue;
        }
        if seen.contains(&m) {
            dups += 1;
        } else {
            seen.push(m);
        }
    }
    dups
}

#[test]
fn a_bootstrap_indexes_each_chunk_as_its_own_segment_and_every_message_is_found() {
    // Five chunks of 40 small messages: one write, but five search-index segments, as when each
    // chunk was written alone. A duplicate chunk adds nothing and no segment.
    let chunk = |c: i64| {
        (0..40i64).map(|i| json!({"role": "user", "content": format!("needle{} words", c * 40 + i), "timestamp": c * 40 + i})).collect::<Vec<Value>>()
    };
    let mut queue = vec![chunk(0), chunk(1), chunk(2), chunk(1), chunk(3), chunk(4)].into_iter();
    let session = SessionRef {
        session_id: "s".into(),
        session_key: Some("agent:main:bulk".into()),
    };
    let mut e = engine();
    let report = e
        .bootstrap_chunked(&session, || Ok(queue.next()), 5)
        .unwrap();
    assert_eq!(report.imported_messages, 200, "{}", report.reason);
    assert_eq!(
        dump(&mut e, "SELECT COUNT(*) FROM messages_fts_segdir"),
        vec![vec![SqlValue::Int(5)]]
    );
    for i in [0, 39, 40, 120, 199] {
        let hits = dump(
            &mut e,
            &format!("SELECT docid FROM messages_fts WHERE messages_fts MATCH 'needle{i}'"),
        );
        assert_eq!(hits, vec![vec![SqlValue::Int(i + 1)]]);
    }
    assert_eq!(
        dump(&mut e, "SELECT indexed_through FROM messages_fts_progress"),
        vec![vec![SqlValue::Int(200)]]
    );
    assert_eq!(
        dump(&mut e, "PRAGMA integrity_check"),
        vec![vec![SqlValue::Text("ok".into())]]
    );
}
