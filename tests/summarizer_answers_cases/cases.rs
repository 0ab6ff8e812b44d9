// What comes back from a summarizer, judged through the engine; shared by
// summarizer_answers_native.rs (SQLite) and summarizer_answers_pg.rs (PostgreSQL): each defines
// `Db` (the connection type) and `open_db()` (a fresh, empty store) and includes this file.
use lossless_wasm::core::compaction::RetryState;
use lossless_wasm::core::config::Config;
use lossless_wasm::engine::compaction::{CompactionReport, CompactionStep, SummaryRequest};
use lossless_wasm::engine::*;
use lossless_wasm::store::Sql;
use serde_json::{json, Value};

const KEY: &str = "agent:main:answers";

fn engine() -> Engine<Db> {
    let config = Config::from_json(&json!({"freshTailCount": 4, "leafChunkTokens": 1000, "leafBudgetHeadroomFactor": 0, "leafSkipReductionThreshold": 0, "backoffBaseMs": 1000, "backoffMaxMs": 8000})).unwrap();
    Engine::open(open_db(), config, 0).unwrap()
}

fn count(e: &mut Engine<Db>, q: &str) -> i64 {
    e.sql().query_row(q, &[]).unwrap().unwrap().int(0).unwrap()
}

/// `turns` turns of a coding session: a request, a tool call, its result, a reply.
fn fill(e: &mut Engine<Db>, turns: usize) {
    fill_from(e, 0, turns);
}

fn fill_from(e: &mut Engine<Db>, first: usize, turns: usize) {
    for t in first..first + turns {
        let ts = (t * 10) as i64;
        let messages = vec![
            json!({"role": "user", "content": format!("Request {t}: fix the parser bug number {t} {}", "detail ".repeat(30)), "timestamp": ts}),
            json!({"role": "assistant", "content": [{"type": "toolCall", "id": format!("c{t}"), "name": "read", "arguments": {"path": format!("src/file_{t}.rs")}}], "timestamp": ts + 1}),
            json!({"role": "toolResult", "toolCallId": format!("c{t}"), "toolName": "read", "content": [{"type": "text", "text": format!("fn f{t}() {{ {} }}", "x + ".repeat(60))}], "isError": false, "timestamp": ts + 2}),
            json!({"role": "assistant", "content": [{"type": "text", "text": format!("Fixed bug {t} in src/file_{t}.rs.")}], "timestamp": ts + 3}),
        ];
        e.commit_turn(decode("commitTurn", json!({"sessionId": "s", "sessionKey": KEY, "advancementKey": format!("t{t}"), "messages": messages})).unwrap(), ts).unwrap();
    }
}

/// A forced sweep to a 2,000-token view, answering every request with `answer`.
fn sweep(e: &mut Engine<Db>, now: i64, mut answer: impl FnMut(&SummaryRequest) -> Value) -> (CompactionReport, usize) {
    let params = json!({"sessionId": "s", "sessionKey": KEY, "mode": "sweep", "summarizer": "host", "tokenBudget": 2000, "force": true});
    let mut step = e.compaction_start(decode("compactionStart", params).unwrap(), now).unwrap();
    let mut asked = 0;
    loop {
        match step {
            CompactionStep::Done(report) => return (report, asked),
            CompactionStep::NeedSummary(request) => {
                asked += 1;
                let mut reply = answer(&request);
                reply["jobId"] = json!(request.job_id);
                step = e.compaction_continue(decode("compactionContinue", reply).unwrap(), now).unwrap();
            }
        }
    }
}

const SUMMARY: &str = "## Goal\n- fix parser bugs\n## Progress\n- fixed the bugs in src/file_0.rs to src/file_3.rs";

fn retry_state(e: &mut Engine<Db>) -> RetryState {
    let json: String = e.sql().query_row("SELECT compaction_state_json FROM conversations", &[]).unwrap().unwrap().text(0).unwrap();
    serde_json::from_str(&json).unwrap()
}

#[test]
fn a_reasoning_models_think_block_never_reaches_a_stored_summary() {
    let mut e = engine();
    fill(&mut e, 12);
    let (report, asked) = sweep(&mut e, 1_000, |_| json!({"text": format!("<think>\nThe user fixed bugs. I will list them.\n</think>\n{SUMMARY}"), "stopReason": "stop"}));
    assert!(asked > 0 && report.compacted, "summaries were asked for and stored: {report:?}");
    let stored = count(&mut e, "SELECT COUNT(*) FROM summaries");
    assert!(stored >= 1);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM summaries WHERE content LIKE '%think>%' OR content LIKE '%I will list them%'"), 0);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM summaries WHERE content LIKE '%fixed the bugs in src/file_0.rs%'"), stored, "the answer proper is what is kept");
}

#[test]
fn reasoning_only_and_cut_off_answers_are_never_stored_and_every_message_stays() {
    for (text, stop, reason) in [
        ("<think>Let me think about the files the user read. First src/file_0.rs", "stop", "only reasoning"),
        (SUMMARY, "length", "output limit"),
    ] {
        let mut e = engine();
        fill(&mut e, 12);
        let (report, asked) = sweep(&mut e, 1_000, |_| json!({"text": text, "stopReason": stop}));
        assert!(asked >= 1, "the summarizer was asked");
        // Only the extractive fallback is stored: nothing of the answer.
        assert_eq!(count(&mut e, "SELECT COUNT(*) FROM summaries WHERE level <> 'fallback' OR content LIKE '%think%' OR content LIKE '%fixed the bugs in%'"), 0, "{report:?}");
        assert!(count(&mut e, "SELECT COUNT(*) FROM summaries WHERE level = 'fallback'") >= 1, "{report:?}");
        assert!(report.failures.iter().any(|f| f.contains(reason) && f.contains("original messages preserved")), "{report:?}");
        assert_eq!(count(&mut e, "SELECT COUNT(*) FROM messages"), 48);
        let rejected = count(&mut e, &format!("SELECT COUNT(*) FROM summarizer_calls WHERE outcome = 'rejected' AND reason LIKE '%{reason}%'"));
        assert_eq!(rejected as usize, asked, "every call is recorded as rejected, with the reason");
    }
}

#[test]
fn every_summarizer_call_is_recorded_with_its_tokens_and_shown_in_status() {
    let mut e = engine();
    fill(&mut e, 30);
    let mut n = 0;
    let (report, asked) = sweep(&mut e, 1_000, |_| {
        n += 1;
        // The first answer carries the provider's counts; the others do not.
        // Each answer says something new (one made only of the previous summary's lines is
        // carried forward, not a summary of the new messages).
        if n == 1 {
            json!({"text": SUMMARY, "usage": {"inputTokens": 1234, "outputTokens": 56}})
        } else {
            json!({"text": format!("{SUMMARY}\n- pass {n} done")})
        }
    });
    assert!(asked >= 2 && report.compacted, "{asked} {report:?}");
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM summarizer_calls") as usize, asked);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM summarizer_calls WHERE counted_by = 'provider' AND input_tokens = 1234 AND output_tokens = 56"), 1);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM summarizer_calls WHERE counted_by = 'estimate' AND input_tokens > 100 AND output_tokens > 5") as usize, asked - 1);
    let status = e.status(decode("status", json!({"sessionId": "s", "sessionKey": KEY})).unwrap()).unwrap();
    let status = serde_json::to_value(&status).unwrap();
    let leaf = status["session"]["spend"].as_array().unwrap().iter().find(|p| p["pass"] == "leaf").cloned().unwrap();
    assert_eq!(leaf["stored"], leaf["calls"], "{status}");
    assert_eq!(leaf["estimated"], true);
    assert!(leaf["inputTokens"].as_i64().unwrap() >= 1234);
    assert_eq!(status["spend"], status["session"]["spend"], "one conversation: its spend is all the spend");
}

#[test]
fn an_answer_too_long_for_its_chunk_raises_the_floor_and_then_waits_instead_of_repeating_the_call() {
    let mut e = engine();
    fill(&mut e, 12);
    // A well-formed summary far longer than a 1,000-token chunk: not a loop, just verbose.
    let verbose: String = (0..400).map(|i| format!("- step {i}: read module {} and fixed case {}\n", i * 7, i * 13)).collect();
    let answer = |_: &SummaryRequest| json!({"text": format!("## Progress\n{verbose}")});
    let mut prompts = Vec::new();
    let (_, asked) = sweep(&mut e, 1_000, |r| {
        prompts.push(r.prompt.clone());
        answer(r)
    });
    assert_eq!(asked, 2, "normal, then aggressive");
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM summaries WHERE level <> 'fallback'"), 0, "nothing of the answer is stored");
    let first = retry_state(&mut e);
    assert!(first.chunk_floor >= 2_000, "the next chunk must be at least twice the one that failed: {first:?}");
    assert_eq!(first.next_retry_at_ms, None, "an answer, not an outage: no backoff for other requests");
    assert!(first.unusable_request.is_some(), "the request is remembered: {first:?}");
    // New turns: the next request is a larger chunk, sent at once.
    fill_from(&mut e, 12, 12);
    let (_, asked) = sweep(&mut e, 1_000, |r| {
        assert!(r.prompt.len() > prompts[0].len(), "a larger chunk");
        prompts.push(r.prompt.clone());
        answer(r)
    });
    assert!(asked >= 1);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM summarizer_calls") as usize, 2 + asked, "every call that was made is recorded");
}

#[test]
fn a_fallback_summary_is_redone_by_the_summarizer_once_it_answers_again() {
    let mut e = engine();
    fill(&mut e, 12);
    // An answer that is not a summary (a refusal) leaves the range to the extractive fallback.
    let refusal = |_: &SummaryRequest| json!({"text": "I'm sorry, but I can't help with summarizing this conversation."});
    let (report, asked) = sweep(&mut e, 1_000, refusal);
    assert_eq!(asked, 1, "a refusal gives up at once, and the job asks no more");
    assert!(report.compacted && report.failures.len() == 1, "{report:?}");
    let fallbacks = count(&mut e, "SELECT COUNT(*) FROM summaries WHERE level = 'fallback'");
    assert!(fallbacks >= 1);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM summaries WHERE content LIKE '%sorry%'"), 0);
    // New turns, and the summarizer answers again: its summary is stored, and the oldest
    // fallback in the view is redone with it, in place.
    fill_from(&mut e, 12, 12);
    let mut n = 0;
    let (report, asked) = sweep(&mut e, 2_000, |_| {
        n += 1;
        json!({"text": format!("{SUMMARY}\n- pass {n} done")})
    });
    assert!(asked >= 2 && report.compacted, "{report:?}");
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM summaries WHERE level = 'fallback'"), fallbacks - 1, "one fallback redone per job");
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM compaction_events WHERE reason LIKE 'fallback summary % redone by the summarizer%'"), 1);
    let redone: String = e.sql().query_row("SELECT level FROM summaries WHERE id = 1", &[]).unwrap().unwrap().text(0).unwrap();
    assert_eq!(redone, "normal", "the oldest fallback is redone first");
    assert!(e.assemble(decode("assemble", json!({"sessionId": "s", "sessionKey": KEY, "tokenBudget": 2000})).unwrap(), 1).unwrap().messages[0].contains("fixed the bugs in src/file_0.rs"), "the view shows the redone text");
}
