//! What the replay benchmarks (`cost_model`, `real_sessions`) share: the scripted "host LLM" that
//! answers every summary request at its target size, the loop that runs a pending compaction
//! through it, a view message's token count, and the check that a view holds the previous
//! turn. Included by `#[path]` from each bench; it measures, it never asserts on numbers.

use lossless_wasm::core::message::parse_message;
use lossless_wasm::core::tokens::estimate_text;
use lossless_wasm::engine::compaction::CompactionStep;
use lossless_wasm::engine::{decode, Engine};
use lossless_wasm::error::Result;
use lossless_wasm::store::Sql;
use serde_json::{json, Value};

/// A summary answer at the request's target size (half its completion budget), written in the
/// flat shape the prompt asks for and in words the sources do not contain (no echo).
pub fn summary_answer(max_tokens: u32, call: usize) -> String {
    let target = (max_tokens / 2) as usize * 9 / 10;
    let mut text = String::from("## Goal\n- keep the application's test suite green while reworking its modules\n## Progress\n");
    let mut i = 0;
    while text.len() < target * 4 {
        text.push_str(&format!("- step {call}.{i}: reworked one module's handling and re-ran the whole suite afterwards\n"));
        i += 1;
    }
    text
}

/// The tokens of one view message (the engine's estimate), from its JSON.
pub fn tokens_of(json: &str) -> u64 {
    let value: Value = serde_json::from_str(json).expect("the view holds JSON messages");
    u64::from(
        parse_message(&value, "view")
            .expect("the view holds valid messages")
            .tokens,
    )
}

/// What the summarizer did for one pending compaction.
#[derive(Debug, Default, Clone, Copy)]
pub struct SummaryWork {
    pub calls: u64,
    pub tokens_in: u64,
    pub tokens_out: u64,
    /// Prompt tokens of the leaf summaries alone.
    pub leaf_in: u64,
}

/// Runs the compaction `commitTurn` left pending (`compaction_start` mode "pending" with the host
/// summarizer, then `compaction_continue` until done), answering each request with
/// [`summary_answer`]; `first_call` numbers the answers. The start runs at `now`, every answer at
/// `now + 1`. Errors are the engine's.
pub fn run_pending<S: Sql>(
    engine: &mut Engine<S>,
    session_id: &str,
    key: &str,
    first_call: u64,
    now: i64,
) -> Result<SummaryWork> {
    let mut work = SummaryWork::default();
    let start = json!({"sessionId": session_id, "sessionKey": key, "mode": "pending", "summarizer": "host"});
    let mut step = engine.compaction_start(decode("compactionStart", start)?, now)?;
    while let CompactionStep::NeedSummary(request) = step {
        let answer = summary_answer(request.max_tokens, (first_call + work.calls) as usize);
        let prompt = u64::from(estimate_text(&request.prompt));
        work.tokens_in += prompt;
        if request.kind == "leaf" {
            work.leaf_in += prompt;
        }
        work.tokens_out += u64::from(estimate_text(&answer));
        work.calls += 1;
        let answer = json!({"jobId": request.job_id, "text": answer, "model": "bench"});
        step = engine.compaction_continue(decode("compactionContinue", answer)?, now + 1)?;
    }
    Ok(work)
}

/// A view's token count (each message as [`tokens_of`] counts it) and the tokens of its prefix
/// that is the same, message for message, as `previous` (what the provider's cache holds).
pub fn view_and_cached_prefix(view: &[String], previous: &[String]) -> (u64, u64) {
    let sizes: Vec<u64> = view.iter().map(|m| tokens_of(m)).collect();
    let prefix = view
        .iter()
        .zip(previous)
        .take_while(|(a, b)| a == b)
        .zip(&sizes)
        .map(|(_, s)| *s)
        .sum();
    (sizes.iter().sum(), prefix)
}

/// How the previous turn's messages (their committed JSON) stand in a view: (missing, shown as an
/// excerpt). A message counts as shown when the view holds it exactly as committed, or, for a
/// huge tool result, as the engine's excerpt of it (a message carrying its toolCallId and
/// "head and tail shown above").
pub fn previous_turn_gaps(previous_turn: &[String], view: &[String]) -> (usize, usize) {
    let (mut missing, mut excerpted) = (0, 0);
    for m in previous_turn.iter().filter(|m| !view.contains(m)) {
        let call = serde_json::from_str::<Value>(m).ok().and_then(|v| {
            v["toolCallId"]
                .as_str()
                .map(|c| format!("\"toolCallId\":\"{c}\""))
        });
        let as_excerpt = call.is_some_and(|c| {
            view.iter()
                .any(|v| v.contains(&c) && v.contains("head and tail shown above"))
        });
        if as_excerpt {
            excerpted += 1;
        } else {
            missing += 1;
        }
    }
    (missing, excerpted)
}
