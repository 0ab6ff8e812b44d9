// The inspect tests, shared by inspect_native.rs (SQLite) and inspect_pg.rs (PostgreSQL): each
// defines `Db` (the connection type) and `open_db()` (a fresh, empty store) and includes this file.
use lossless_wasm::core::config::Config;
use lossless_wasm::engine::compaction::CompactionStep;
use lossless_wasm::engine::inspect::{Described, ExpandItem};
use lossless_wasm::engine::*;
use lossless_wasm::store::Sql;
use serde_json::{json, Value};

const KEY: &str = "agent:main:inspect";

fn engine() -> Engine<Db> {
    let config = Config::from_json(&json!({"freshTailCount": 4, "leafChunkTokens": 600, "condensedFanout": 2, "leafBudgetHeadroomFactor": 0, "leafSkipReductionThreshold": 0})).unwrap();
    Engine::open(open_db(), config, 0).unwrap()
}

fn count(e: &mut Engine<Db>, q: &str) -> i64 {
    e.sql().query_row(q, &[]).unwrap().unwrap().int(0).unwrap()
}

/// Commits `turns` turns and runs a forced extractive sweep after every few, so leaves and
/// condensed summaries both exist.
fn fill(e: &mut Engine<Db>, key: &str, turns: usize) {
    for t in 0..turns {
        let ts = (t * 10) as i64;
        let messages = vec![
            json!({"role": "user", "content": format!("Request {t}: fix parser bug MARK{t}x {}", "detail ".repeat(40)), "timestamp": ts}),
            json!({"role": "assistant", "content": [{"type": "text", "text": format!("Fixed bug {t} in src/file_{t}.rs. {}", "because ".repeat(30))}], "timestamp": ts + 1}),
        ];
        let p = decode("commitTurn", json!({"sessionId": "s", "sessionKey": key, "advancementKey": format!("{key}-t{t}"), "messages": messages})).unwrap();
        e.commit_turn(p, ts).unwrap();
        if t % 4 == 3 {
            let p = decode("compactionStart", json!({"sessionId": "s", "sessionKey": key, "mode": "sweep", "summarizer": "extractive", "force": true, "tokenBudget": 1200})).unwrap();
            let step = e.compaction_start(p, ts + 5).unwrap();
            assert!(matches!(step, CompactionStep::Done(_)), "the extractive summarizer needs no host round trip");
        }
    }
}

fn describe(e: &mut Engine<Db>, p: Value) -> Described {
    e.describe(decode("describe", p).unwrap()).unwrap()
}

#[test]
fn describe_lists_every_summary_with_its_level_children_and_covered_messages() {
    let mut e = engine();
    fill(&mut e, KEY, 24);
    let Described::Conversation(info) = describe(&mut e, json!({"sessionId": "s", "sessionKey": KEY})) else { panic!("expected a conversation") };
    let stored = count(&mut e, "SELECT COUNT(*) FROM summaries");
    assert!(stored >= 3, "the fill compacted several times (got {stored})");
    assert_eq!(info.summaries.len() as i64, stored);
    assert_eq!(info.message_count, 48);
    assert!(info.summaries.iter().any(|s| s.kind == "condensed"), "fanout 2 condensed some leaves");
    for s in &info.summaries {
        assert!(!s.children.is_empty(), "summary {} has children", s.id);
        assert!(s.first_seq.unwrap() <= s.last_seq.unwrap());
        assert_eq!(s.level, "normal");
        if s.kind == "leaf" {
            assert_eq!(s.depth, 0);
            assert_eq!(s.message_count, s.children.len() as i64);
        } else {
            let covered: i64 = s.children.iter().map(|c| info.summaries.iter().find(|x| x.id == *c).unwrap().message_count).sum();
            assert_eq!(s.message_count, covered, "a condensed summary covers what its children cover");
        }
    }
    let in_context = info.summaries.iter().filter(|s| s.in_context).count() as i64;
    assert_eq!(in_context, info.context_summaries);
    assert_eq!(info.context_messages + info.summaries.iter().filter(|s| s.in_context).map(|s| s.message_count).sum::<i64>(), 48, "every message is either raw in the context or under exactly one summary in it");
}

#[test]
fn expand_walks_a_summary_down_to_its_original_messages_in_pages_under_the_token_limit() {
    let mut e = engine();
    fill(&mut e, KEY, 24);
    let Described::Conversation(info) = describe(&mut e, json!({"sessionId": "s", "sessionKey": KEY})) else { panic!() };
    let top = info.summaries.iter().filter(|s| s.in_context).max_by_key(|s| s.depth).unwrap().clone();
    let mut seqs = Vec::new();
    let mut cursor = Value::Null;
    let mut pages = 0;
    loop {
        let page = e.expand(decode("expand", json!({"sessionId": "s", "sessionKey": KEY, "summaryId": top.id, "toMessages": true, "tokenLimit": 300, "cursor": cursor})).unwrap()).unwrap();
        pages += 1;
        assert!(page.tokens <= 300 || page.items.len() == 1);
        for item in &page.items {
            let ExpandItem::Message { message } = item else { panic!("toMessages returns messages") };
            assert!(message.summary_id.is_some(), "an expanded message was summarized");
            seqs.push(message.seq);
        }
        match page.next_cursor {
            Some(c) => cursor = json!(c),
            None => break,
        }
    }
    assert!(pages > 1, "a 300-token limit pages the expansion");
    assert_eq!(seqs.len() as i64, top.message_count);
    assert_eq!(seqs.first().copied(), top.first_seq);
    assert_eq!(seqs.last().copied(), top.last_seq);
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "in conversation order, no repeats");
    let first = e.expand(decode("expand", json!({"sessionId": "s", "sessionKey": KEY, "summaryId": top.id, "toMessages": true, "tokenLimit": 200000})).unwrap()).unwrap();
    let texts: Vec<&str> = first.items.iter().filter_map(|i| if let ExpandItem::Message { message } = i { Some(message.content.as_str()) } else { None }).collect();
    assert!(texts.iter().any(|t| t.contains("MARK")), "the original text comes back: {texts:?}");

    // Direct children: summaries for a condensed summary, messages for a leaf.
    let direct = e.expand(decode("expand", json!({"sessionId": "s", "sessionKey": KEY, "summaryId": top.id})).unwrap()).unwrap();
    let expected_kind = if top.kind == "leaf" { "message" } else { "summary" };
    assert!(direct.items.iter().all(|i| matches!((i, expected_kind), (ExpandItem::Message { .. }, "message") | (ExpandItem::Summary { .. }, "summary"))));
    assert_eq!(direct.items.len(), top.children.len());
}

#[test]
fn ids_from_another_conversation_are_not_found_and_bad_params_name_the_field() {
    let mut e = engine();
    fill(&mut e, KEY, 24);
    fill(&mut e, "agent:main:other", 1);
    let Described::Conversation(info) = describe(&mut e, json!({"sessionId": "s", "sessionKey": KEY})) else { panic!() };
    let id = info.summaries[0].id;
    let err = e.describe(decode("describe", json!({"sessionId": "s", "sessionKey": "agent:main:other", "summaryId": id})).unwrap()).unwrap_err();
    assert!(err.to_string().contains("summaryId"), "{err}");
    let err = e.expand(decode("expand", json!({"sessionId": "s", "sessionKey": KEY, "summaryId": id, "tokenLimit": 0})).unwrap()).unwrap_err();
    assert!(err.to_string().contains("tokenLimit"), "{err}");
    assert_eq!(describe(&mut e, json!({"sessionId": "s", "sessionKey": "nobody"})), Described::Empty);
    let Described::Message { message } = describe(&mut e, json!({"sessionId": "s", "sessionKey": KEY, "messageId": 1})) else { panic!() };
    assert_eq!((message.seq, message.role.as_str()), (1, "user"));
}

#[test]
fn compaction_events_list_the_passes_with_their_reasons() {
    let mut e = engine();
    fill(&mut e, KEY, 24);
    let events = e.compaction_events(decode("compactionEvents", json!({"sessionId": "s", "sessionKey": KEY})).unwrap()).unwrap();
    assert_eq!(events.len() as i64, count(&mut e, "SELECT COUNT(*) FROM compaction_events WHERE conversation_id = 1"));
    assert!(events.iter().any(|ev| ev.event.outcome == "compacted" && ev.summary_id.is_some()));
    assert!(events.iter().all(|ev| !ev.event.reason.is_empty()));
    let later = e.compaction_events(decode("compactionEvents", json!({"sessionId": "s", "sessionKey": KEY, "afterId": events[0].id})).unwrap()).unwrap();
    assert_eq!(later.len(), events.len() - 1);
}
