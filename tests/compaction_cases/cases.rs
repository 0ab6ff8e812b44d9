// The compaction tests, shared by compaction_native.rs (SQLite) and compaction_pg.rs (PostgreSQL): each
// defines `Db` (the connection type) and `open_db()` (a fresh, empty store) and includes this file.
use lossless_wasm::core::config::Config;
use lossless_wasm::engine::compaction::{CompactionReport, CompactionStep, SummaryRequest};
use lossless_wasm::engine::*;
use lossless_wasm::store::Sql;
use serde_json::{json, Value};

const KEY: &str = "agent:main:c";

fn config(extra: Value) -> Config {
    let mut base = json!({"freshTailCount": 4, "leafChunkTokens": 1000, "leafBudgetHeadroomFactor": 0, "leafSkipReductionThreshold": 0,
                          "backoffBaseMs": 1000, "backoffMaxMs": 8000});
    if let (Some(b), Some(e)) = (base.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            b.insert(k.clone(), v.clone());
        }
    }
    Config::from_json(&base).unwrap()
}

fn engine_with(config: Config) -> Engine<Db> {
    Engine::open(open_db(), config, 0).unwrap()
}

fn count(e: &mut Engine<Db>, q: &str) -> i64 {
    e.sql().query_row(q, &[]).unwrap().unwrap().int(0).unwrap()
}

/// Commits `turns` turns of a coding session (user request, tool call, tool result, reply).
fn fill(e: &mut Engine<Db>, first: usize, turns: usize) {
    for t in first..first + turns {
        let ts = (t * 10) as i64;
        let messages = vec![
            json!({"role": "user", "content": format!("Request {t}: fix the parser bug number {t} {}", "detail ".repeat(30)), "timestamp": ts}),
            json!({"role": "assistant", "content": [{"type": "text", "text": "Reading the file."}, {"type": "toolCall", "id": format!("c{t}"), "name": "read", "arguments": {"path": format!("src/file_{t}.rs")}}], "timestamp": ts + 1}),
            json!({"role": "toolResult", "toolCallId": format!("c{t}"), "toolName": "read", "content": [{"type": "text", "text": format!("fn f{t}() {{ {} }}", "x + ".repeat(60))}], "isError": t % 3 == 0, "timestamp": ts + 2}),
            json!({"role": "assistant", "content": [{"type": "text", "text": format!("Fixed bug {t} in src/file_{t}.rs.")}], "timestamp": ts + 3}),
        ];
        let p = decode("commitTurn", json!({"sessionId": "s", "sessionKey": KEY, "advancementKey": format!("t{t}"), "messages": messages})).unwrap();
        e.commit_turn(p, ts).unwrap();
    }
}

fn assemble(e: &mut Engine<Db>, budget: u32) -> AssembleResult {
    e.assemble(decode("assemble", json!({"sessionId": "s", "sessionKey": KEY, "tokenBudget": budget})).unwrap(), 1).unwrap()
}

fn start(e: &mut Engine<Db>, mode: &str, summarizer: &str, extra: Value) -> CompactionStep {
    let mut p = json!({"sessionId": "s", "sessionKey": KEY, "mode": mode, "summarizer": summarizer});
    if let (Some(b), Some(x)) = (p.as_object_mut(), extra.as_object()) {
        for (k, v) in x {
            b.insert(k.clone(), v.clone());
        }
    }
    e.compaction_start(decode("compactionStart", p).unwrap(), 1_000).unwrap()
}

/// Runs a job to the end, answering each request with `answer(request)`.
fn run(e: &mut Engine<Db>, mut step: CompactionStep, mut answer: impl FnMut(&SummaryRequest) -> Value, now: i64) -> CompactionReport {
    loop {
        match step {
            CompactionStep::Done(report) => return report,
            CompactionStep::NeedSummary(request) => {
                let mut reply = answer(&request);
                reply["jobId"] = json!(request.job_id);
                step = e.compaction_continue(decode("compactionContinue", reply).unwrap(), now).unwrap();
            }
        }
    }
}

/// Starts a job and runs it to the end.
fn compact(e: &mut Engine<Db>, mode: &str, summarizer: &str, extra: Value, answer: impl FnMut(&SummaryRequest) -> Value, now: i64) -> CompactionReport {
    let step = start(e, mode, summarizer, extra);
    run(e, step, answer, now)
}

fn good_summary(request: &SummaryRequest) -> Value {
    assert!(request.prompt.starts_with("[lossless-wasm:summarize]"), "prompts carry the marker");
    json!({"text": "## Goal\n- fix parser bugs\n## Progress\n- fixed several bugs", "model": "scripted-1"})
}

#[test]
fn commit_turn_evaluates_the_trigger_and_records_its_inputs() {
    let mut e = engine_with(config(json!({})));
    fill(&mut e, 0, 1);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM compaction_events WHERE pass = 'trigger' AND outcome = 'skipped'"), 1);
    assemble(&mut e, 50_000);
    fill(&mut e, 1, 12);
    let telemetry: String = e.sql().query_row("SELECT telemetry_json FROM compaction_events WHERE pass = 'trigger' ORDER BY id DESC LIMIT 1", &[]).unwrap().unwrap().text(0).unwrap();
    let telemetry: Value = serde_json::from_str(&telemetry).unwrap();
    assert_eq!(telemetry["decision"]["compact"], true, "{telemetry}");
    let inputs = &telemetry["decision"]["inputs"];
    assert!(inputs["rawTokensOutsideTail"].as_i64().unwrap() >= 1000, "{telemetry}");
    assert_eq!(inputs["tokenBudget"], 50_000, "the budget of the turn's assemble is an input: {telemetry}");
    assert_eq!(inputs["leafChunkTokens"], 1000);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM conversations WHERE compaction_pending_json IS NOT NULL"), 1);
}

#[test]
fn leaf_compaction_replaces_old_messages_with_a_summary_and_keeps_every_original() {
    let mut e = engine_with(config(json!({})));
    assemble(&mut e, 50_000);
    fill(&mut e, 0, 12);
    let before = assemble(&mut e, 50_000);
    let tail_ordinals = |e: &mut Engine<Db>| -> Vec<(i64, i64)> {
        e.sql().query("SELECT ordinal, message_id FROM context_items WHERE message_id IS NOT NULL ORDER BY ordinal DESC LIMIT 8", &[]).unwrap()
            .iter().map(|r| (r.int(0).unwrap(), r.int(1).unwrap())).collect()
    };
    let tail_before = tail_ordinals(&mut e);
    let report = compact(&mut e, "pending", "host", json!({}), good_summary, 2_000);
    assert!(report.ok && report.compacted, "{report:?}");
    assert!(report.tokens_after < report.tokens_before);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM messages"), 48, "every original message is kept");
    assert_eq!(tail_ordinals(&mut e), tail_before, "items outside the replaced range keep their ordinals");
    let summary: (String, String, String) = {
        let row = e.sql().query_row("SELECT summarizer, model, level FROM summaries", &[]).unwrap().unwrap();
        (row.text(0).unwrap(), row.text(1).unwrap(), row.text(2).unwrap())
    };
    assert_eq!(summary, ("llm".into(), "scripted-1".into(), "normal".into()));
    let covered = count(&mut e, "SELECT COUNT(*) FROM summary_messages");
    assert!(covered > 0);
    let view = assemble(&mut e, 50_000);
    assert!(view.messages[0].contains("<lossless-summary"), "{}", view.messages[0]);
    assert!(view.messages[0].contains("lcm_expand"));
    assert!(view.messages.len() < before.messages.len());
    assert!(!view.messages.iter().any(|m| m.contains("\"role\":\"toolResult\"") && view.messages[1] == *m), "a summary is never followed by an orphaned result");
    let artifacts: String = e.sql().query_row("SELECT content FROM summaries", &[]).unwrap().unwrap().text(0).unwrap();
    assert!(artifacts.contains("src/file_0.rs"), "the artifact ledger keeps files verbatim: {artifacts}");
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM conversations WHERE compaction_pending_json IS NOT NULL"), 0, "pending work is done");
}

#[test]
fn summarizer_failure_stores_an_extractive_fallback_and_preserves_every_message_seed_02() {
    let mut e = engine_with(config(json!({})));
    assemble(&mut e, 50_000);
    fill(&mut e, 0, 12);
    let pending: String = e.sql().query_row("SELECT compaction_pending_json FROM conversations", &[]).unwrap().unwrap().text(0).unwrap();
    let report = compact(&mut e, "pending", "host", json!({}), |_| json!({"error": {"kind": "other", "message": "503 overloaded"}}), 2_000);
    assert!(!report.ok && report.compacted, "a failure to report, and the range summarized anyway: {report:?}");
    assert_eq!(report.failures.len(), 1);
    assert!(report.failures[0].starts_with("compaction failed (") && report.failures[0].contains("original messages preserved"), "{}", report.failures[0]);
    // The range's summary is the extractive one, at level `fallback`; nothing of the error in it.
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM summaries WHERE level = 'fallback' AND summarizer = 'extractive'"), 1);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM summaries WHERE level <> 'fallback' OR content LIKE '%503%' OR content LIKE '%overloaded%'"), 0);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM messages"), 48, "every original message is kept");
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM compaction_events WHERE outcome = 'failed'"), 1);
    assert!(assemble(&mut e, 50_000).messages[0].contains("<lossless-summary"), "the view shows the fallback summary");
    // The summarizer is retried later with backoff: an immediate job asks nothing (it may only
    // write fallbacks), a later one asks.
    // The range is summarized (by its fallback), so the pending work is done.
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM conversations WHERE compaction_pending_json IS NOT NULL"), 0);
    // Work pending again at once: the job waits out the backoff without asking.
    e.sql().execute("UPDATE conversations SET compaction_pending_json = ?1", &[pending.into()]).unwrap();
    let waiting = start(&mut e, "pending", "host", json!({}));
    assert!(matches!(&waiting, CompactionStep::Done(r) if r.ok && r.reason.contains("backing off")), "{waiting:?}");
    fill(&mut e, 12, 12);
    let later = e.compaction_start(decode("compactionStart", json!({"sessionId": "s", "sessionKey": KEY, "mode": "pending", "summarizer": "host", "force": true})).unwrap(), 1_000_000).unwrap();
    assert!(matches!(later, CompactionStep::NeedSummary(_)), "the summarizer is asked again after its backoff: {later:?}");
}

#[test]
fn no_truncated_summary_ever_exists_seed_01() {
    let mut e = engine_with(config(json!({})));
    assemble(&mut e, 50_000);
    fill(&mut e, 0, 12);
    let mut levels = Vec::new();
    let report = compact(&mut e, "pending", "host", json!({}), |request| {
        levels.push(request.level);
        json!({"text": (0..4000).map(|i| format!("far too long {i}")).collect::<Vec<_>>().join(" ")})
    }, 2_000);
    assert_eq!(levels, ["normal", "aggressive"], "normal, then aggressive, then give up");
    assert!(!report.ok);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM summaries WHERE level <> 'fallback' OR content LIKE '%far too long%'"), 0, "nothing of the answer is written");
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM summaries WHERE content LIKE '%[Truncated%'"), 0);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM summaries WHERE level = 'fallback' AND summarizer = 'extractive' AND content LIKE '# Summary%'"), 1, "the fallback is an extract in the summary shape, not a cut");
}

#[test]
fn aggressive_level_is_used_when_normal_is_not_shorter() {
    let mut e = engine_with(config(json!({})));
    assemble(&mut e, 50_000);
    fill(&mut e, 0, 12);
    let mut calls = 0;
    let report = compact(&mut e, "pending", "host", json!({}), |request| {
        calls += 1;
        if request.level == "normal" { json!({"text": "too long ".repeat(5000)}) } else { good_summary(request) }
    }, 2_000);
    assert!(report.compacted, "{report:?}");
    assert_eq!(calls, 2);
    let level: String = e.sql().query_row("SELECT level FROM summaries", &[]).unwrap().unwrap().text(0).unwrap();
    assert_eq!(level, "aggressive");
}

#[test]
fn summarizer_output_that_is_empty_or_contains_our_markup_is_rejected() {
    for bad in [json!({"text": "   "}), json!({"text": "<lossless-summary id=\"1\">sneaky</lossless-summary>"}), json!({})] {
        let mut e = engine_with(config(json!({})));
        assemble(&mut e, 50_000);
        fill(&mut e, 0, 12);
        let report = compact(&mut e, "pending", "host", json!({}), |_| bad.clone(), 2_000);
        assert!(!report.ok && report.failures.len() == 1, "{bad} must not become a summary: {report:?}");
        assert_eq!(count(&mut e, "SELECT COUNT(*) FROM summaries WHERE level <> 'fallback' OR content LIKE '%sneaky%' OR content LIKE '%lossless-summary%'"), 0, "{bad}");
    }
}

#[test]
fn repeated_auth_failures_open_a_breaker_that_survives_a_restart() {
    let dir = std::env::temp_dir().join(format!("lossless-wasm-breaker-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("db.sqlite");
    let _ = std::fs::remove_file(&path);
    let path = path.to_str().unwrap().to_owned();
    let pending: String;
    {
        let mut e = Engine::open(reopen_db(&path), config(json!({"maxFailuresBeforeBreaker": 3})), 0).unwrap();
        assemble(&mut e, 50_000);
        fill(&mut e, 0, 12);
        pending = e.sql().query_row("SELECT compaction_pending_json FROM conversations", &[]).unwrap().unwrap().text(0).unwrap();
        // Attempts far enough apart that the backoff (at most 8 s here) is over each time.
        for i in 1..=3 {
            // Each failure's range gets its fallback: new turns give the next attempt a range,
            // and the same work is pending again.
            fill(&mut e, 12 * i as usize, 12);
            e.sql().execute("UPDATE conversations SET compaction_pending_json = ?1", &[pending.clone().into()]).unwrap();
            let now = i * 100_000;
            let p = decode("compactionStart", json!({"sessionId": "s", "sessionKey": KEY, "mode": "pending", "summarizer": "host", "force": true})).unwrap();
            let step = e.compaction_start(p, now).unwrap();
            let report = run(&mut e, step, |_| json!({"error": {"kind": "auth", "message": "401 invalid api key"}}), now);
            assert!(!report.ok, "{report:?}");
        }
    }
    let mut e = Engine::open(reopen_db(&path), config(json!({"maxFailuresBeforeBreaker": 3})), 0).unwrap();
    fill(&mut e, 48, 12);
    e.sql().execute("UPDATE conversations SET compaction_pending_json = ?1", &[pending.into()]).unwrap();
    let p = decode("compactionStart", json!({"sessionId": "s", "sessionKey": KEY, "mode": "pending", "summarizer": "host", "force": true})).unwrap();
    let step = e.compaction_start(p, 300_001).unwrap();
    match step {
        CompactionStep::Done(report) => {
            assert!(!report.ok && report.reason.contains("breaker"), "{report:?}");
            assert_eq!(count(&mut e, "SELECT COUNT(*) FROM summaries WHERE level <> 'fallback' OR content LIKE '%401%'"), 0, "only fallbacks, no error text");
        }
        other => panic!("the breaker should hold after a restart: {other:?}"),
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_full_sweep_brings_the_context_under_target_with_the_extractive_summarizer() {
    let mut e = engine_with(config(json!({"contextThreshold": 0.5})));
    assemble(&mut e, 4_000);
    fill(&mut e, 0, 30);
    let report = compact(&mut e, "sweep", "extractive", json!({"tokenBudget": 4000}), |_| panic!("extractive needs no LLM"), 2_000);
    assert!(report.ok && report.compacted, "{report:?}");
    assert!(report.tokens_after <= 2_000 || report.reason.contains("nothing to compact"), "{report:?}");
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM messages"), 120);
    let summarizer: String = e.sql().query_row("SELECT summarizer FROM summaries LIMIT 1", &[]).unwrap().unwrap().text(0).unwrap();
    assert_eq!(summarizer, "extractive");
}

#[test]
fn summaries_of_one_depth_condense_into_a_deeper_one_and_the_dag_is_recorded() {
    let mut e = engine_with(config(json!({"condensedFanout": 2, "contextThreshold": 0.2})));
    assemble(&mut e, 6_000);
    for round in 0..4 {
        fill(&mut e, round * 10, 10);
        compact(&mut e, "sweep", "extractive", json!({"tokenBudget": 6000}), |_| panic!("no LLM"), 2_000);
    }
    let deep = count(&mut e, "SELECT COUNT(*) FROM summaries WHERE depth >= 1");
    assert!(deep >= 1, "condensed summaries exist");
    let edges = count(&mut e, "SELECT COUNT(*) FROM summary_sources");
    assert!(edges >= 2, "source -> condensed edges are recorded");
    let covered = count(&mut e, "SELECT MAX(descendant_message_count) FROM summaries WHERE depth >= 1");
    assert!(covered >= 2);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM messages"), 160, "every original message is kept");
    let view = assemble(&mut e, 6_000);
    assert!(view.messages.iter().all(|m| !m.contains("Previously compacted")), "summaries stay flat");
}

#[test]
fn a_plan_made_stale_by_another_compaction_is_not_applied() {
    let mut e = engine_with(config(json!({})));
    assemble(&mut e, 50_000);
    fill(&mut e, 0, 12);
    let first = start(&mut e, "sweep", "host", json!({"tokenBudget": 2000, "force": true}));
    let CompactionStep::NeedSummary(first_request) = first else { panic!("expected a request") };
    // Another job compacts the same range first.
    let other = compact(&mut e, "pending", "extractive", json!({"force": true}), |_| panic!("no LLM"), 2_000);
    assert!(other.compacted);
    let summaries = count(&mut e, "SELECT COUNT(*) FROM summaries");
    let mut answer = good_summary(&first_request);
    answer["jobId"] = json!(first_request.job_id);
    let step = e.compaction_continue(decode("compactionContinue", answer).unwrap(), 3_000).unwrap();
    let _ = run(&mut e, step, good_summary, 3_000);
    assert!(count(&mut e, "SELECT COUNT(*) FROM compaction_events WHERE outcome = 'skipped' AND reason LIKE '%context changed%'") >= 1);
    let covered_twice = count(&mut e, "SELECT COUNT(*) FROM (SELECT message_id FROM summary_messages GROUP BY message_id HAVING COUNT(*) > 1) AS twice");
    assert_eq!(covered_twice, 0, "no message is summarized twice at the same level (had {summaries} summaries)");
}

#[test]
fn conversations_with_no_messages_or_only_tool_results_compact_without_errors() {
    let mut e = engine_with(config(json!({})));
    let none = start(&mut e, "sweep", "extractive", json!({"tokenBudget": 2000}));
    assert!(matches!(none, CompactionStep::Done(ref r) if r.ok && !r.compacted), "{none:?}");
    let results: Vec<Value> = (0..40).map(|i| json!({"role": "toolResult", "toolCallId": format!("orphan{i}"), "toolName": "bash", "content": [{"type": "text", "text": "output ".repeat(50)}], "isError": false, "timestamp": i})).collect();
    e.ingest(decode("ingest", json!({"sessionId": "s", "sessionKey": KEY, "messages": results})).unwrap(), 1).unwrap();
    let report = compact(&mut e, "sweep", "extractive", json!({"tokenBudget": 2000}), |_| panic!("no LLM"), 2_000);
    assert!(report.ok, "{report:?}");
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM messages"), 40);
}

#[test]
fn a_single_200k_token_message_is_stored_and_summarized_alone_never_dropped() {
    let mut e = engine_with(config(json!({})));
    let huge = "word ".repeat(800_000);
    let mut messages = vec![json!({"role": "user", "content": huge, "timestamp": 1})];
    for i in 0..6 {
        messages.push(json!({"role": "assistant", "content": [{"type": "text", "text": format!("ok {i}")}], "timestamp": 2 + i}));
    }
    e.commit_turn(decode("commitTurn", json!({"sessionId": "s", "sessionKey": KEY, "advancementKey": "big", "messages": messages})).unwrap(), 1).unwrap();
    // The next turn makes the huge one old: the active task (the newest turn) is never summarized.
    let next = vec![json!({"role": "user", "content": "next", "timestamp": 10}), json!({"role": "assistant", "content": "done", "timestamp": 11})];
    e.commit_turn(decode("commitTurn", json!({"sessionId": "s", "sessionKey": KEY, "advancementKey": "next", "messages": next})).unwrap(), 1).unwrap();
    let stored = count(&mut e, "SELECT MAX(token_count) FROM messages");
    assert!(stored >= 200_000, "{stored}");
    let report = compact(&mut e, "sweep", "extractive", json!({"tokenBudget": 20000}), |_| panic!("no LLM"), 2_000);
    assert!(report.compacted, "{report:?}");
    let covered = count(&mut e, "SELECT COUNT(*) FROM summary_messages sm JOIN messages m ON m.id = sm.message_id WHERE m.token_count >= 200000");
    assert_eq!(covered, 1, "the huge message was summarized on its own");
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM messages"), 9);
    let view = assemble(&mut e, 20_000);
    assert!(view.estimated_tokens <= 20_000);
}

/// The fresh tail's tokens as the trigger gets them from the store (the newest raw messages'
/// counts, then the tail rule), against the definition: the newest `count` raw messages, newest
/// first, while the running total stays within the cap (the newest always counts), over random
/// token counts, counts and caps, summaries interleaved: caps above the plain sum and caps that
/// cut the tail.
#[test]
fn the_fresh_tail_tokens_from_the_store_match_the_definition() {
    use lossless_wasm::core::compaction::TailRule;
    use lossless_wasm::store::compaction::newest_message_tokens;
    let mut sql = open_db();
    lossless_wasm::store::schema::migrate(&mut sql, 1).unwrap();
    let conversation = lossless_wasm::store::conversations::resolve(&mut sql, "k", "s", 0).unwrap().id;
    assert_eq!(conversation, 1);
    let mut seed = 0x2545_f491_u64;
    let mut next = |below: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % below
    };
    let mut cut = 0;
    for round in 0..40 {
        sql.execute("DELETE FROM context_items", &[]).unwrap();
        sql.execute("DELETE FROM summaries", &[]).unwrap();
        sql.execute("DELETE FROM messages", &[]).unwrap();
        let items = next(60) as i64;
        let mut raw_newest_first = Vec::new();
        for ordinal in 1..=items {
            if next(5) == 0 {
                sql.execute("INSERT INTO summaries (id, conversation_id, kind, depth, content, token_count, source_token_count, summarizer, created_at) VALUES (?1, 1, 'leaf', 0, 's', 7, 70, 'test', 0)", &[ordinal.into()]).unwrap();
                sql.execute("INSERT INTO context_items (conversation_id, ordinal, summary_id, token_count) VALUES (1, ?1, ?1, 7)", &[ordinal.into()]).unwrap();
            } else {
                let tokens = next(400) as i64;
                sql.execute("INSERT INTO messages (id, conversation_id, seq, role, token_count, identity_hash, raw_json, created_at) VALUES (?1, 1, ?1, 'user', ?2, ?3, '{}', 0)", &[ordinal.into(), tokens.into(), lossless_wasm::store::SqlValue::Blob(ordinal.to_be_bytes().to_vec())]).unwrap();
                sql.execute("INSERT INTO context_items (conversation_id, ordinal, message_id, token_count) VALUES (1, ?1, ?1, ?2)", &[ordinal.into(), tokens.into()]).unwrap();
                raw_newest_first.insert(0, tokens as u64);
            }
        }
        let rule = TailRule { count: next(40) as u32, max_tokens: if round % 4 == 0 { u64::MAX } else { next(3000) } };
        let mut expected = 0u64;
        for (i, tokens) in raw_newest_first.iter().take(rule.count as usize).enumerate() {
            if i > 0 && expected + tokens > rule.max_tokens {
                break;
            }
            expected += tokens;
        }
        let newest: u64 = raw_newest_first.iter().take(rule.count as usize).sum();
        cut += usize::from(newest > rule.max_tokens);
        let newest = newest_message_tokens(&mut sql, 1, rule.count).unwrap();
        assert_eq!(rule.tokens_of(&newest), expected as i64, "round {round}: {rule:?} over {raw_newest_first:?}");
    }
    assert!((5..35).contains(&cut), "both cases exercised: the cap cut the tail in {cut} of 40 rounds");
}

/// Schema 11: unchanged "skipped" trigger decisions in a row share one row, which counts them
/// and keeps the first one's time and the latest one's inputs; a different reason or any other
/// event in between (here a failed pass) starts a new row.
#[test]
fn unchanged_skipped_decisions_share_one_row_that_keeps_the_latest_inputs() {
    use lossless_wasm::store::compaction::{record_event, Event};
    let mut e = engine_with(config(json!({"leafChunkTokens": 100_000})));
    fill(&mut e, 0, 5);
    // The first turn has nothing outside the fresh tail; the next four are short of a chunk.
    let runs: Vec<(String, i64)> = e.sql().query("SELECT reason, repeats FROM compaction_events ORDER BY id", &[]).unwrap().iter().map(|r| (r.text(0).unwrap(), r.int(1).unwrap())).collect();
    assert_eq!(runs, vec![("no_reduction".to_owned(), 1), ("below_leaf_chunk".to_owned(), 4)], "four unchanged decisions, one row");
    let row = e.sql().query_row("SELECT created_at, last_at, tokens_before, telemetry_json FROM compaction_events ORDER BY id DESC LIMIT 1", &[]).unwrap().unwrap();
    assert_eq!((row.int(0).unwrap(), row.int(1).unwrap()), (10, 40), "first decision's time, latest decision's time");
    let context_tokens = count(&mut e, "SELECT context_token_count FROM conversations");
    assert_eq!(row.int(2).unwrap(), context_tokens, "the latest decision's totals");
    let telemetry: Value = serde_json::from_str(&row.text(3).unwrap()).unwrap();
    assert_eq!(telemetry["decision"]["assembledTokens"], context_tokens, "the latest decision's inputs: {telemetry}");

    record_event(e.sql(), &Event { conversation_id: 1, pass: "leaf", level: None, outcome: "failed", reason: "test", tokens_before: None, tokens_after: None, summary_id: None, telemetry_json: None }, 45).unwrap();
    fill(&mut e, 5, 2);
    let events = e.compaction_events(decode("compactionEvents", json!({"sessionId": "s", "sessionKey": KEY})).unwrap()).unwrap();
    let runs: Vec<(&str, i64, Option<i64>)> = events.iter().map(|ev| (ev.event.pass.as_str(), ev.repeats, ev.last_at)).collect();
    assert_eq!(runs, vec![("trigger", 1, None), ("trigger", 4, Some(40)), ("leaf", 1, None), ("trigger", 2, Some(60))]);
}

/// Every turn's decision is counted, and no two rows in a row stand for the same skipped
/// decision, while decisions change (skipped, then triggered once the chunk is ready).
#[test]
fn every_trigger_decision_is_counted_and_changes_start_a_new_row() {
    let mut e = engine_with(config(json!({})));
    fill(&mut e, 0, 1);
    assemble(&mut e, 50_000);
    fill(&mut e, 1, 12);
    assert_eq!(count(&mut e, "SELECT SUM(repeats) FROM compaction_events WHERE pass = 'trigger'"), 13);
    let rows: Vec<(String, String)> = e.sql().query("SELECT outcome, reason FROM compaction_events WHERE pass = 'trigger' ORDER BY id", &[]).unwrap().iter().map(|r| (r.text(0).unwrap(), r.text(1).unwrap())).collect();
    assert!(rows.iter().any(|(outcome, _)| outcome == "triggered"), "{rows:?}");
    for pair in rows.windows(2) {
        assert!(!(pair[0] == pair[1] && pair[0].0 == "skipped"), "an unchanged skipped decision got a row of its own: {rows:?}");
    }
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM compaction_events WHERE outcome = 'triggered' AND repeats <> 1"), 0, "triggered decisions are never folded");
}

/// The trigger keeps the newest raw messages' tokens between turns and advances them by what a
/// turn appended; after every kind of change (appends, a compaction, a turn that re-sent a
/// stored message) the fresh tail it records matches the one read from the store.
#[test]
fn the_fresh_tail_the_trigger_keeps_matches_the_store_after_appends_compactions_and_duplicates() {
    use lossless_wasm::core::compaction::TailRule;
    use lossless_wasm::store::compaction::newest_message_tokens;
    let mut e = engine_with(config(json!({"freshTailCount": 8})));
    let check = |e: &mut Engine<Db>, when: &str| {
        let telemetry: String = e.sql().query_row("SELECT telemetry_json FROM compaction_events WHERE pass = 'trigger' ORDER BY id DESC LIMIT 1", &[]).unwrap().unwrap().text(0).unwrap();
        let telemetry: Value = serde_json::from_str(&telemetry).unwrap();
        // No assemble yet: no budget, so the tail is capped by count alone.
        let stored = TailRule { count: 8, max_tokens: u64::MAX }.tokens_of(&newest_message_tokens(e.sql(), 1, 8).unwrap());
        assert_eq!(telemetry["freshTailTokens"], stored, "{when}: {telemetry}");
    };
    for t in 0..12 {
        fill(&mut e, t, 1);
        check(&mut e, &format!("turn {t}"));
    }
    let report = compact(&mut e, "pending", "host", json!({}), good_summary, 2_000);
    assert!(report.compacted, "{report:?}");
    for t in 12..14 {
        fill(&mut e, t, 1);
        check(&mut e, &format!("turn {t}, after a compaction"));
    }
    // A turn that re-sends a stored message (skipped) with a new one.
    let again = json!({"role": "user", "content": format!("Request 13: fix the parser bug number 13 {}", "detail ".repeat(30)), "timestamp": 130});
    let new = json!({"role": "assistant", "content": [{"type": "text", "text": "x ".repeat(400)}], "timestamp": 150});
    let p = decode("commitTurn", json!({"sessionId": "s", "sessionKey": KEY, "advancementKey": "again", "messages": [again, new]})).unwrap();
    assert_eq!(e.commit_turn(p, 150).unwrap().stored_messages, 1);
    check(&mut e, "a turn with a duplicate");
    fill(&mut e, 20, 1);
    check(&mut e, "the turn after it");
    // Another writer replaces a message inside the window, as a compaction or repair would
    // (items gone, the context's total and epoch changed; no ordinal moves).
    let (ordinal, tokens) = {
        let row = e.sql().query_row("SELECT ordinal, token_count FROM context_items WHERE message_id IS NOT NULL ORDER BY ordinal DESC LIMIT 1 OFFSET 1", &[]).unwrap().unwrap();
        (row.int(0).unwrap(), row.int(1).unwrap())
    };
    e.sql().execute("DELETE FROM context_items WHERE conversation_id = 1 AND ordinal = ?1", &[ordinal.into()]).unwrap();
    e.sql().execute("UPDATE conversations SET context_token_count = context_token_count - ?1, context_epoch = context_epoch + 1 WHERE id = 1", &[tokens.into()]).unwrap();
    fill(&mut e, 21, 1);
    check(&mut e, "after another writer replaced items");
}
