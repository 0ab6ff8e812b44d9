//! `/lcm status` and `/lcm doctor` on native SQLite: status counts what is stored and what
//! compaction did; doctor passes on a healthy database, finds each kind of damage, and repairs
//! only what can be rebuilt from the rows (indexes, running totals), never content.
#![cfg(not(target_arch = "wasm32"))]

use lossless_wasm::core::config::Config;
use lossless_wasm::engine::compaction::CompactionStep;
use lossless_wasm::engine::*;
use lossless_wasm::store::native::NativeSql;
use lossless_wasm::store::Sql;
use serde_json::json;

const KEY: &str = "agent:main:ops";

fn compacted_engine() -> Engine<NativeSql> {
    let config = json!({"freshTailCount": 4, "leafChunkTokens": 1000, "leafBudgetHeadroomFactor": 0, "leafSkipReductionThreshold": 0,
                        "condensedFanout": 2, "contextThreshold": 0.2});
    let mut e = Engine::open(NativeSql::in_memory().unwrap(), Config::from_json(&config).unwrap(), 0).unwrap();
    e.assemble(decode("assemble", json!({"sessionId": "s", "sessionKey": KEY, "tokenBudget": 3000})).unwrap(), 1).unwrap();
    for t in 0..30usize {
        let ts = (t * 10) as i64;
        let messages = vec![
            json!({"role": "user", "content": format!("request {t} {}", "words ".repeat(50)), "timestamp": ts}),
            json!({"role": "assistant", "content": [{"type": "text", "text": format!("done {t}")}], "timestamp": ts + 1}),
        ];
        e.commit_turn(decode("commitTurn", json!({"sessionId": "s", "sessionKey": KEY, "advancementKey": format!("t{t}"), "messages": messages})).unwrap(), ts).unwrap();
        if t % 10 == 9 {
            let p = decode("compactionStart", json!({"sessionId": "s", "sessionKey": KEY, "mode": "sweep", "summarizer": "extractive", "tokenBudget": 3000})).unwrap();
            assert!(matches!(e.compaction_start(p, 5_000).unwrap(), CompactionStep::Done(_)));
        }
    }
    e
}

fn doctor(e: &mut Engine<NativeSql>, fix: bool) -> DoctorReport {
    e.doctor(decode("doctor", json!({"fix": fix})).unwrap()).unwrap()
}

fn failing(report: &DoctorReport) -> Vec<&'static str> {
    report.checks.iter().filter(|c| !c.ok).map(|c| c.name).collect()
}

#[test]
fn status_counts_messages_summaries_by_level_and_depth_and_the_latest_compactions() {
    let mut e = compacted_engine();
    let status = e.status(decode("status", json!({"sessionId": "s", "sessionKey": KEY})).unwrap()).unwrap();
    assert_eq!(status.totals.messages, 60);
    assert_eq!(status.totals.conversations_active, 1);
    assert!(status.totals.db_bytes > 0);
    let summaries: i64 = status.totals.summaries.iter().map(|(_, _, n)| n).sum();
    assert!(summaries >= 2, "{:?}", status.totals.summaries);
    assert!(status.totals.summaries.iter().all(|(level, _, _)| level == "normal"));
    assert!(!status.latest.is_empty() && status.latest.iter().all(|e| e.outcome == "compacted"));
    assert!(status.failures.is_empty());
    let session = status.session.expect("this session's conversation");
    assert_eq!(session.messages, 60);
    assert!(session.context_summary_tokens > 0);
    let outside = e.status(decode("status", json!({})).unwrap()).unwrap();
    assert!(outside.session.is_none());
}

#[test]
fn doctor_passes_a_healthy_database() {
    let mut e = compacted_engine();
    let report = doctor(&mut e, false);
    assert!(report.ok, "{:?}", report.checks);
    assert_eq!(report.checks.len(), 7);
}

#[test]
fn doctor_finds_an_unreachable_message_and_a_cyclic_edge_and_does_not_touch_them() {
    let mut e = compacted_engine();
    // Damage: a message dropped out of the view with no summary over it, and an upward edge.
    let lost: i64 = e.sql().query_row("SELECT message_id FROM context_items WHERE message_id IS NOT NULL ORDER BY ordinal LIMIT 1", &[]).unwrap().unwrap().int(0).unwrap();
    e.sql().execute("DELETE FROM context_items WHERE message_id = ?1", &[lost.into()]).unwrap();
    e.sql().execute("INSERT INTO summary_sources (source_summary_id, condensed_summary_id) SELECT MAX(id), MIN(id) FROM summaries", &[]).unwrap();
    let report = doctor(&mut e, true);
    assert!(!report.ok);
    let bad = failing(&report);
    assert!(bad.contains(&"messages_reachable") && bad.contains(&"dag_acyclic"), "{bad:?}");
    let reach = report.checks.iter().find(|c| c.name == "messages_reachable").unwrap();
    assert!(reach.detail.contains(&lost.to_string()), "{}", reach.detail);
    assert_eq!(e.sql().query_row("SELECT COUNT(*) FROM messages", &[]).unwrap().unwrap().int(0).unwrap(), 60, "content untouched");
}

#[test]
fn doctor_rebuilds_a_stale_search_index_and_recomputes_running_totals() {
    let mut e = compacted_engine();
    e.sql().execute("INSERT INTO messages_fts (docid, content) VALUES (424242, 'ghost row')", &[]).unwrap();
    e.sql().execute("UPDATE conversations SET context_token_count = context_token_count + 999", &[]).unwrap();
    let found = doctor(&mut e, false);
    let bad = failing(&found);
    assert!(bad.contains(&"messages_fts") && bad.contains(&"running_totals"), "{bad:?}");
    let fixed = doctor(&mut e, true);
    assert!(fixed.ok, "{:?}", fixed.checks);
    assert!(fixed.fixed.contains(&"messages_fts") && fixed.fixed.contains(&"running_totals"));
    let hits = e.recall_grep(decode("grep", json!({"sessionId": "s", "sessionKey": KEY, "pattern": "ghost row"})).unwrap()).unwrap();
    assert!(hits.hits.is_empty(), "the ghost is gone from the index");
}
