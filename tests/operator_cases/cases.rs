// The operator tests, shared by operator_native.rs (SQLite) and operator_pg.rs (PostgreSQL): each
// defines `Db` (the connection type) and `open_db()` (a fresh, empty store) and includes this file.
use lossless_wasm::core::config::Config;
use lossless_wasm::engine::compaction::CompactionStep;
use lossless_wasm::engine::*;
use lossless_wasm::store::Sql;
use serde_json::json;

const KEY: &str = "agent:main:ops";

fn compacted_engine() -> Engine<Db> {
    let config = json!({"freshTailCount": 4, "leafChunkTokens": 1000, "leafBudgetHeadroomFactor": 0, "leafSkipReductionThreshold": 0,
                        "condensedFanout": 2, "contextThreshold": 0.2});
    let mut e = Engine::open(open_db(), Config::from_json(&config).unwrap(), 0).unwrap();
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

fn doctor(e: &mut Engine<Db>, fix: bool) -> DoctorReport {
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
    assert!(!status.latest.is_empty() && status.latest.iter().all(|e| e.event.outcome == "compacted"));
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
    // PostgreSQL has no file check of its own to run and no FTS index to fall out of step.
    let expected = if e.sql().dialect().is_postgres() { 4 } else { 7 };
    assert_eq!(report.checks.len(), expected, "{:?}", report.checks);
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
    // PostgreSQL's search vectors are generated columns: there is no index to damage.
    let fts = !e.sql().dialect().is_postgres();
    if fts {
        e.sql().execute("INSERT INTO messages_fts (docid, content) VALUES (424242, 'ghost row')", &[]).unwrap();
    }
    e.sql().execute("UPDATE conversations SET context_token_count = context_token_count + 999", &[]).unwrap();
    let found = doctor(&mut e, false);
    let bad = failing(&found);
    assert!((!fts || bad.contains(&"messages_fts")) && bad.contains(&"running_totals"), "{bad:?}");
    let fixed = doctor(&mut e, true);
    assert!(fixed.ok, "{:?}", fixed.checks);
    assert!((!fts || fixed.fixed.contains(&"messages_fts")) && fixed.fixed.contains(&"running_totals"));
    let hits = e.recall_grep(decode("grep", json!({"sessionId": "s", "sessionKey": KEY, "pattern": "ghost row"})).unwrap()).unwrap();
    assert!(hits.hits.is_empty(), "the ghost is gone from the index");
}

/// Marks the first leaf that has a parent as a truncation fallback; returns (leaf, parent).
fn plant_fallback(e: &mut Engine<Db>) -> (i64, i64) {
    let row = e.sql().query_row("SELECT source_summary_id, condensed_summary_id FROM summary_sources ORDER BY source_summary_id LIMIT 1", &[]).unwrap().unwrap();
    let (leaf, parent) = (row.int(0).unwrap(), row.int(1).unwrap());
    let fts = !e.sql().dialect().is_postgres();
    if fts {
        e.sql().execute("DELETE FROM summaries_fts WHERE docid = ?1", &[leaf.into()]).unwrap();
    }
    e.sql().execute("UPDATE summaries SET level = 'fallback', content = '[Truncated from 4000 tokens] request 0 wor' WHERE id = ?1", &[leaf.into()]).unwrap();
    if fts {
        e.sql().execute("INSERT INTO summaries_fts (docid, content) VALUES (?1, '[Truncated from 4000 tokens] request 0 wor')", &[leaf.into()]).unwrap();
    }
    (leaf, parent)
}

fn repair(e: &mut Engine<Db>, params: serde_json::Value, mut answer: impl FnMut(&lossless_wasm::engine::compaction::SummaryRequest) -> serde_json::Value) -> RepairReport {
    let mut step = e.repair_start(decode("repairStart", params).unwrap()).unwrap();
    loop {
        match step {
            RepairStep::Done(report) => return report,
            RepairStep::NeedSummary(request) => {
                let mut reply = answer(&request);
                reply["jobId"] = json!(request.job_id);
                step = e.repair_continue(decode("repairContinue", reply).unwrap()).unwrap();
            }
        }
    }
}

fn level_and_content(e: &mut Engine<Db>, id: i64) -> (String, String) {
    let row = e.sql().query_row("SELECT level, content FROM summaries WHERE id = ?1", &[id.into()]).unwrap().unwrap();
    (row.text(0).unwrap(), row.text(1).unwrap())
}

#[test]
fn repair_dry_run_lists_fallbacks_and_their_parents_and_writes_nothing() {
    let mut e = compacted_engine();
    let (leaf, parent) = plant_fallback(&mut e);
    let report = repair(&mut e, json!({"dryRun": true}), |_| panic!("a dry run asks no LLM"));
    assert!(report.dry_run && report.repaired.is_empty());
    let planned: Vec<(i64, &str)> = report.planned.iter().map(|p| (p.id, p.reason)).collect();
    assert_eq!(planned[0], (leaf, "fallback"));
    assert!(planned.contains(&(parent, "cascade")), "{planned:?}");
    assert_eq!(level_and_content(&mut e, leaf).0, "fallback");
}

#[test]
fn repair_resummarizes_a_fallback_with_the_host_llm_bottom_up_and_cascades_to_its_parents() {
    let mut e = compacted_engine();
    let (leaf, parent) = plant_fallback(&mut e);
    let mut prompts = Vec::new();
    let report = repair(&mut e, json!({"summarizer": "host"}), |request| {
        prompts.push(request.prompt.clone());
        json!({"text": format!("## Goal\n- repaired summary number {}\n## Progress\n- the user made requests", prompts.len()), "model": "mock-model"})
    });
    assert!(report.ok, "{report:?}");
    assert_eq!(report.repaired[0], leaf, "the fallback first");
    assert!(report.repaired.contains(&parent), "then the summary built on it");
    assert!(prompts[0].contains("request 0"), "the leaf is redone from its original messages");
    let (level, content) = level_and_content(&mut e, leaf);
    assert_eq!(level, "normal");
    assert!(content.contains("repaired summary number 1") && !content.contains("[Truncated"));
    assert!(level_and_content(&mut e, parent).1.contains("repaired summary"), "the parent was redone");
    let parent_prompt = prompts.iter().position(|p| p.contains("<summaries>")).expect("a condensed prompt");
    assert!(prompts[parent_prompt].contains("repaired summary number 1"), "the parent is redone from the repaired child");
    // The index follows the new text, and the view's totals still add up.
    let old = e.recall_grep(decode("grep", json!({"sessionId": "s", "sessionKey": KEY, "pattern": "Truncated from"})).unwrap()).unwrap();
    assert!(old.hits.is_empty());
    let new = e.recall_grep(decode("grep", json!({"sessionId": "s", "sessionKey": KEY, "pattern": "repaired summary number 1"})).unwrap()).unwrap();
    assert_eq!(new.hits.len(), 1);
    assert!(doctor(&mut e, false).ok, "{:?}", doctor(&mut e, false).checks);
    let again = repair(&mut e, json!({"dryRun": true}), |_| panic!("nothing left"));
    assert!(again.planned.is_empty());
}

#[test]
fn a_failed_repair_leaves_the_old_summary_and_its_parents_in_place_and_says_so() {
    let mut e = compacted_engine();
    let (leaf, parent) = plant_fallback(&mut e);
    let parent_before = level_and_content(&mut e, parent);
    let report = repair(&mut e, json!({"summarizer": "host"}), |_| json!({"error": {"kind": "timeout", "message": "provider timed out"}}));
    assert!(!report.ok);
    assert!(report.repaired.is_empty());
    assert!(report.failures.iter().any(|f| f.contains(&format!("summary {leaf} left in place")) && f.contains("timed out")), "{:?}", report.failures);
    assert!(report.failures.iter().any(|f| f.contains(&format!("summary {parent} left in place: built on summary {leaf}"))), "{:?}", report.failures);
    assert_eq!(level_and_content(&mut e, leaf).0, "fallback");
    assert_eq!(level_and_content(&mut e, parent), parent_before);
}

#[test]
fn status_counts_the_hosts_internal_runs_apart_from_the_users_conversations() {
    let mut e = compacted_engine();
    for (i, key) in ["agent:main:internal-session-effects:a", "agent:main:internal-session-effects:b"].iter().enumerate() {
        let messages = vec![json!({"role": "user", "content": "flush your memory", "timestamp": 1})];
        e.commit_turn(decode("commitTurn", json!({"sessionId": format!("f{i}"), "sessionKey": key, "advancementKey": format!("f{i}"), "messages": messages})).unwrap(), 1).unwrap();
    }
    let totals = e.status(decode("status", json!({})).unwrap()).unwrap().totals;
    assert_eq!((totals.conversations_active, totals.conversations_active_internal), (3, 2));
    assert_eq!(totals.messages, 62, "internal runs are stored (lossless)");
}

#[test]
fn status_tells_the_last_assembled_view_apart_from_the_stored_context() {
    let mut e = compacted_engine();
    let asked = || decode("status", json!({"sessionId": "s", "sessionKey": KEY})).unwrap();
    let view = e.assemble(decode("assemble", json!({"sessionId": "s", "sessionKey": KEY, "tokenBudget": 500})).unwrap(), 9_000).unwrap();
    let session = e.status(asked()).unwrap().session.unwrap();
    assert_eq!(session.view_tokens, Some(view.estimated_tokens));
    assert!(session.view_budget.is_some_and(|b| b <= 500), "{:?}", session.view_budget);
    assert!(session.context_tokens as u64 > view.estimated_tokens, "the stored context is larger than the view: {} vs {}", session.context_tokens, view.estimated_tokens);
    // A conversation this process assembled no view for (as in the `lcm` command line).
    let messages = vec![json!({"role": "user", "content": "hello", "timestamp": 1})];
    e.commit_turn(decode("commitTurn", json!({"sessionId": "o", "sessionKey": "agent:main:other", "advancementKey": "o", "messages": messages})).unwrap(), 1).unwrap();
    let other = e.status(decode("status", json!({"sessionId": "o", "sessionKey": "agent:main:other"})).unwrap()).unwrap().session.unwrap();
    assert_eq!((other.view_tokens, other.view_budget), (None, None));
}
