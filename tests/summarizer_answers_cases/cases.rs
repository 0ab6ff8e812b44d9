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
    for t in 0..turns {
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
        assert_eq!(count(&mut e, "SELECT COUNT(*) FROM summaries"), 0, "{report:?}");
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
        if n == 1 {
            json!({"text": SUMMARY, "usage": {"inputTokens": 1234, "outputTokens": 56}})
        } else {
            json!({"text": SUMMARY})
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
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM summaries"), 0);
    let first = retry_state(&mut e);
    assert!(first.chunk_floor >= 2_000, "the next chunk must be at least twice the one that failed: {first:?}");
    assert_eq!(first.next_retry_at_ms, None, "an answer, not an outage: no backoff for other requests");
    // The next request is a larger chunk, as large as the budget allows: a change, sent at once.
    let (_, asked) = sweep(&mut e, 1_000, |r| {
        assert!(r.prompt.len() > prompts[0].len(), "a larger chunk");
        prompts.push(r.prompt.clone());
        answer(r)
    });
    assert_eq!(asked, 2);
    // No larger chunk fits, so the next request would be the same one: it waits the backoff
    // (1 s, then 2 s) instead of being sent every turn, and no call is made meanwhile.
    let (report, asked) = sweep(&mut e, 1_999, |_| panic!("the same request is not sent again before its time"));
    assert_eq!(asked, 0);
    assert!(report.reason.contains("same leaf request") && report.reason.contains("1 time(s)"), "{report:?}");
    let mut again = Vec::new();
    let (_, asked) = sweep(&mut e, 2_000, |r| {
        again.push(r.prompt.clone());
        answer(r)
    });
    assert_eq!(asked, 2);
    assert!(again == prompts[2..], "the same request, once its time is up");
    let (report, asked) = sweep(&mut e, 3_999, |_| panic!("the second repeat waits twice as long"));
    assert!(asked == 0 && report.reason.contains("2 time(s)"), "{report:?}");
    assert_eq!(retry_state(&mut e).resend_at_ms, Some(4_000));
    let status = serde_json::to_value(e.status(decode("status", json!({"sessionId": "s", "sessionKey": KEY})).unwrap()).unwrap()).unwrap();
    assert_eq!((&status["session"]["retry"]["resendAtMs"], &status["session"]["retry"]["unusableRepeats"]), (&json!(4_000), &json!(2)), "status shows the wait: {status}");
    let (_, asked) = sweep(&mut e, 4_000, answer);
    assert_eq!(asked, 2);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM summarizer_calls"), 8, "every call that was made is recorded");
}

#[test]
fn a_changed_request_is_sent_at_once_after_the_same_one_was_given_up() {
    let mut e = engine();
    fill(&mut e, 12);
    // An answer that is not a summary (a refusal) says nothing about the chunk's size.
    let refusal = |_: &SummaryRequest| json!({"text": "I'm sorry, but I can't help with summarizing this conversation."});
    let (_, asked) = sweep(&mut e, 1_000, refusal);
    assert_eq!(asked, 1, "a refusal gives up at once");
    let (report, asked) = sweep(&mut e, 1_001, |_| panic!("the same request waits"));
    assert!(asked == 0 && report.reason.contains("same leaf request"), "{report:?}");
    let held = retry_state(&mut e);
    assert!(held.resend_at_ms.is_some_and(|t| t > 1_000), "{held:?}");
    // What the request holds changes (the oldest messages were summarized by another call, so
    // the next chunk starts elsewhere): it is sent at once, the wait is for the same request only.
    e.sql().execute("UPDATE conversations SET compaction_state_json = ?1", &[serde_json::to_string(&RetryState { unusable_request: Some("another request".into()), ..held }).unwrap().into()]).unwrap();
    let (report, asked) = sweep(&mut e, 1_001, |_| json!({"text": SUMMARY}));
    assert!(asked >= 1 && report.compacted, "{report:?}");
}
