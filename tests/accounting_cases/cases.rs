// The accounting tests, shared by accounting_native.rs (SQLite) and accounting_pg.rs (PostgreSQL): each
// defines `Db` (the connection type) and `open_db()` (a fresh, empty store) and includes this file.
use lossless_wasm::core::config::Config;
use lossless_wasm::engine::compaction::{CompactionReport, CompactionStep};
use lossless_wasm::engine::*;
use lossless_wasm::store::Sql;
use serde_json::{json, Value};

const KEY: &str = "agent:main:acct";
const WINDOW: u32 = 8_000;
const OVERHEAD: u32 = 3_000;

fn engine() -> Engine<Db> {
    Engine::open(open_db(), Config::default(), 0).unwrap()
}

fn count(e: &mut Engine<Db>, q: &str) -> i64 {
    e.sql().query_row(q, &[]).unwrap().unwrap().int(0).unwrap()
}

fn note(i: usize) -> String {
    format!("Note {i}: {}", "the keeper logged wind and tide. ".repeat(75))
}

/// One turn as OpenClaw runs it: assemble (#1 budget), then commitTurn with the provider's usage
/// for a prompt of OVERHEAD + the view + the note. Returns the view's estimated tokens.
fn turn(e: &mut Engine<Db>, i: usize) -> u64 {
    let text = note(i);
    let history: Vec<Value> = Vec::new();
    let view = e
        .assemble(decode("assemble", json!({"sessionId": "s", "sessionKey": KEY, "messages": history, "tokenBudget": 6_000, "prompt": text, "maxOutputTokens": 1024})).unwrap(), 1)
        .unwrap();
    let prompt = u64::from(OVERHEAD) + view.estimated_tokens + text.len() as u64 / 4;
    let messages = json!([
        {"role": "user", "content": text, "timestamp": i * 10},
        {"role": "assistant", "content": [{"type": "text", "text": format!("Logged note {i}.")}], "timestamp": i * 10 + 1,
         "usage": {"input": prompt, "output": 12, "cacheRead": 0, "cacheWrite": 0}},
    ]);
    let params = json!({"sessionId": "s", "sessionKey": KEY, "advancementKey": format!("t{i}"), "messages": messages, "modelContextWindow": WINDOW});
    e.commit_turn(decode("commitTurn", params).unwrap(), (i * 10) as i64).unwrap();
    view.estimated_tokens
}

/// A forced compact as OpenClaw's preflight check sends it; every summary request answered by
/// `answer` (None: the provider fails).
fn forced(e: &mut Engine<Db>, count: u32, answer: Option<&str>) -> CompactionReport {
    let params = json!({"sessionId": "s", "sessionKey": KEY, "mode": "sweep", "summarizer": "host", "force": true,
                        "tokenBudget": WINDOW, "contextWindow": WINDOW, "currentTokenCount": count, "maxOutputTokens": 1024});
    let mut step = e.compaction_start(decode("compactionStart", params).unwrap(), 10_000).unwrap();
    loop {
        match step {
            CompactionStep::Done(report) => return report,
            CompactionStep::NeedSummary(request) => {
                let reply = match answer {
                    Some(text) => json!({"jobId": request.job_id, "text": text}),
                    None => json!({"jobId": request.job_id, "error": {"kind": "other", "message": "HTTP 500"}}),
                };
                step = e.compaction_continue(decode("compactionContinue", reply).unwrap(), 10_000).unwrap();
            }
        }
    }
}

fn is_benign_skip(report: &CompactionReport) -> bool {
    !report.compacted && report.ok && (report.reason.contains("nothing to compact") || report.reason.contains("already under target"))
}

#[test]
fn views_leave_room_for_the_host_overhead_the_prompt_and_the_reply() {
    let mut e = engine();
    for i in 0..12 {
        let view = turn(&mut e, i);
        let real = u64::from(OVERHEAD) + view + note(i).len() as u64 / 4;
        assert!(real + 1024 <= u64::from(WINDOW), "turn {i}: a {real}-token prompt leaves less than the 1024-token reply budget");
    }
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM messages"), 24, "nothing is lost");
    let facts: String = e.sql().query_row("SELECT host_facts_json FROM conversations WHERE host_facts_json IS NOT NULL", &[]).unwrap().unwrap().text(0).unwrap();
    assert!(facts.contains("\"window\":8000") && facts.contains("\"overhead\":"), "{facts}");
}

#[test]
fn a_forced_compaction_over_the_host_threshold_summarizes_and_reports_honest_tokens() {
    let mut e = engine();
    for i in 0..6 {
        turn(&mut e, i);
    }
    let report = forced(&mut e, 6_500, Some("## Goal\n- keep the logbook\n## Progress\n- notes logged"));
    assert!(report.ok && report.compacted, "{report:?}");
    assert_eq!(report.tokens_before, 6_500, "the host's count is the larger one");
    assert!(report.tokens_after < 6_000, "the projected prompt is under the host's threshold: {report:?}");
    assert!(count(&mut e, "SELECT COUNT(*) FROM summaries") >= 1);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM messages"), 12);
}

#[test]
fn a_forced_compaction_with_a_failing_summarizer_still_shrinks_the_view_with_fallback_summaries() {
    let mut e = engine();
    for i in 0..6 {
        turn(&mut e, i);
    }
    let before = e.assemble(decode("assemble", json!({"sessionId": "s", "sessionKey": KEY, "tokenBudget": 6_000})).unwrap(), 1).unwrap();
    let report = forced(&mut e, 6_300, None);
    assert!(report.ok && report.compacted, "the turn may run: {report:?}");
    assert!(report.failures.iter().any(|f| f.contains("original messages preserved")), "{report:?}");
    // Only extractive fallbacks are written (redone once the summarizer answers), never error text.
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM summaries WHERE level <> 'fallback' OR summarizer <> 'extractive'"), 0);
    let after = e.assemble(decode("assemble", json!({"sessionId": "s", "sessionKey": KEY, "tokenBudget": 6_000})).unwrap(), 1).unwrap();
    assert!(after.estimated_tokens < before.estimated_tokens, "{} -> {}", before.estimated_tokens, after.estimated_tokens);
    let facts: String = e.sql().query_row("SELECT host_facts_json FROM conversations WHERE host_facts_json IS NOT NULL", &[]).unwrap().unwrap().text(0).unwrap();
    assert!(!after.messages.is_empty(), "{after:?} {report:?} {facts}");
    assert!(after.messages[0].contains("earlier messages of this conversation are stored") || after.messages[0].contains("<lossless-summary"), "{}", after.messages[0]);
    // The older history has its fallback summaries; at this budget the view holds the newest turn
    // whole and, beside it, a summary or the line saying the rest is stored (checked above).
    assert!(count(&mut e, "SELECT COUNT(*) FROM summaries WHERE level = 'fallback'") >= 1, "the older history has its fallback summaries");
    assert!(after.messages.iter().any(|m| m.contains("Note 5:")), "the newest turn is whole in the view");
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM messages"), 12, "originals stay stored");
}

#[test]
fn when_nothing_can_shrink_a_forced_compaction_says_so_as_a_skip() {
    let mut e = engine();
    // One message larger than the window: the view cannot shrink below the newest message.
    let huge = "x".repeat(60_000);
    let params = json!({"sessionId": "s", "sessionKey": KEY, "advancementKey": "big", "modelContextWindow": WINDOW,
                        "messages": [{"role": "user", "content": huge, "timestamp": 1}]});
    e.commit_turn(decode("commitTurn", params).unwrap(), 1).unwrap();
    e.assemble(decode("assemble", json!({"sessionId": "s", "sessionKey": KEY, "tokenBudget": 6_000})).unwrap(), 1).unwrap();
    for _ in 0..3 {
        let report = forced(&mut e, 20_000, Some("## Goal\n- short"));
        assert!(report.ok && (report.compacted || is_benign_skip(&report)), "a forced compaction must never fail the turn: {report:?}");
    }
    let last = forced(&mut e, 20_000, Some("## Goal\n- short"));
    assert!(is_benign_skip(&last), "once nothing can shrink, the reason is a skip the host accepts: {last:?}");
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM messages"), 1);
}

#[test]
fn no_conversation_yet_is_a_skip_the_host_accepts() {
    let mut e = engine();
    let report = forced(&mut e, 6_300, None);
    assert!(is_benign_skip(&report), "{report:?}");
}

/// One turn as OpenClaw 2026.7 runs it (no commitTurn, docs/openclaw-host-observed.md §11):
/// the tool-loop hook's afterTurn stores the user message, assemble #2 (window budget, no
/// prompt) builds the view the model gets, then the end-of-turn afterTurn hands over the reply
/// with the provider's usage. Each afterTurn learns from what it stores. Returns the prompt the
/// provider counted.
fn turn_2026_7(e: &mut Engine<Db>, i: usize) -> u64 {
    let text = note(i);
    let now = (i * 10) as i64;
    let user = json!({"role": "user", "content": text, "timestamp": i * 10});
    let loop_call = json!({"sessionId": "s", "sessionKey": KEY, "messages": [user.clone()], "prePromptMessageCount": 0, "modelContextWindow": WINDOW});
    let params: AfterTurnParams = decode("afterTurn", loop_call).unwrap();
    e.after_turn(params, now).unwrap();
    let view = e.assemble(decode("assemble", json!({"sessionId": "s", "sessionKey": KEY, "messages": [user.clone()], "tokenBudget": WINDOW})).unwrap(), now).unwrap();
    let prompt = u64::from(OVERHEAD) + view.estimated_tokens;
    let reply = json!({"role": "assistant", "content": [{"type": "text", "text": format!("Logged note {i}.")}], "timestamp": i * 10 + 1,
                       "usage": {"input": prompt, "output": 12, "cacheRead": 0, "cacheWrite": 0}});
    let end_call = json!({"sessionId": "s", "sessionKey": KEY, "messages": [user, reply.clone()], "prePromptMessageCount": 1, "modelContextWindow": WINDOW});
    let params: AfterTurnParams = decode("afterTurn", end_call).unwrap();
    e.after_turn(params, now + 1).unwrap();
    prompt
}

#[test]
fn on_hosts_without_commit_turn_views_learn_the_real_prompt_from_after_turn() {
    let mut e = engine();
    for i in 0..14 {
        let prompt = turn_2026_7(&mut e, i);
        assert!(prompt + 1024 <= u64::from(WINDOW), "turn {i}: a {prompt}-token prompt leaves less than the 1024-token reply budget");
    }
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM messages"), 28, "each message once, nothing lost");
    let facts: String = e.sql().query_row("SELECT host_facts_json FROM conversations WHERE host_facts_json IS NOT NULL", &[]).unwrap().unwrap().text(0).unwrap();
    assert!(facts.contains("\"window\":8000") && facts.contains("\"overhead\":"), "{facts}");
}
