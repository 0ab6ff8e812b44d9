//! The evaluation's rows measured through the engine itself rather than modelled: each generated
//! conversation is stored with `commit_turn` in an in-memory SQLite store (one turn per session,
//! its turns as messages dated that day, their text as the modelled rows see it: "[date] speaker:
//! text"), and each question goes to `ask_start` as `lcm_ask` sends it, at the tool's default
//! evidence budget. A question counts when the message of every evidence turn is among the
//! evidence sent (as itself, not only inside a summary).
//!
//! Two rows: the store as written (every turn a message), and after an extractive sweep has
//! summarized all but the last turns, as a long conversation is by the time it is asked about.
//! `RECALL_EVAL_MISSES=1` prints each question whose evidence was not all sent.

use lossless_wasm::core::ask::when::days_from_civil;
use lossless_wasm::core::config::Config;
use lossless_wasm::engine::compaction::CompactionStep;
use lossless_wasm::engine::{decode, Engine};
use lossless_wasm::store::native::NativeSql;
use lossless_wasm::store::Sql;
use serde_json::json;

use crate::world::{Conversation, MONTHS};

const KEY: &str = "agent:main:recall-eval";
const DAY_MS: i64 = 86_400_000;

/// Noon UTC of a world date ("3 March 2022"; its day of month is at most 28, so every one is a
/// real date).
fn noon_of(date: &str) -> i64 {
    let parts: Vec<&str> = date.split(' ').collect();
    let day: i64 = parts[0].parse().expect("the world's day of month");
    let month = MONTHS
        .iter()
        .position(|m| *m == parts[1])
        .expect("a world month") as i64
        + 1;
    let year: i64 = parts[2].parse().expect("the world's year");
    days_from_civil(year, month, day) * DAY_MS + DAY_MS / 2
}

/// For each question of `conv`, in order: (evidence turns sent, evidence turns annotated).
pub fn evaluate(conv: &Conversation, texts: &[String], swept: bool) -> Vec<(usize, usize)> {
    let config = Config::from_json(&json!({})).expect("the default config");
    let mut engine = Engine::open(
        NativeSql::in_memory().expect("an in-memory store"),
        config,
        0,
    )
    .expect("an engine");
    let mut start = 0;
    while start < conv.turns.len() {
        let date = &conv.turns[start].date;
        let end = start
            + conv.turns[start..]
                .iter()
                .take_while(|t| &t.date == date)
                .count();
        let at = noon_of(date);
        let messages: Vec<_> = (start..end)
            .map(|i| json!({"role": "user", "content": texts[i], "timestamp": at + i as i64}))
            .collect();
        let params = decode(
            "commitTurn",
            json!({"sessionId": "s", "sessionKey": KEY, "advancementKey": format!("t{start}"), "messages": messages}),
        )
        .expect("a commitTurn");
        engine.commit_turn(params, at).expect("the turn is stored");
        start = end;
    }
    if swept {
        let params = decode(
            "compactionStart",
            json!({"sessionId": "s", "sessionKey": KEY, "mode": "sweep", "summarizer": "extractive", "tokenBudget": 8000}),
        )
        .expect("a compactionStart");
        match engine
            .compaction_start(params, noon_of(&conv.turns[conv.turns.len() - 1].date))
            .expect("the sweep")
        {
            CompactionStep::Done(report) => assert!(report.ok, "the sweep: {report:?}"),
            CompactionStep::NeedSummary(_) => panic!("the extractive summarizer needs no LLM"),
        }
    }
    // Turn i is the message of seq i: one message a turn, stored in order.
    let ids: Vec<i64> = engine
        .sql()
        .query("SELECT id FROM messages ORDER BY seq", &[])
        .expect("the message ids")
        .iter()
        .map(|row| row.int(0).expect("an id"))
        .collect();
    assert_eq!(
        ids.len(),
        texts.len(),
        "every turn is stored as one message"
    );
    conv.questions
        .iter()
        .map(|q| {
            let params = decode(
                "ask",
                json!({"sessionId": "s", "sessionKey": KEY, "question": q.text}),
            )
            .expect("an ask");
            let sent = engine.ask_start(params).expect("ask_start");
            let found = q
                .evidence
                .iter()
                .filter(|turn| {
                    sent.evidence
                        .iter()
                        .any(|e| e.kind == "message" && e.id == ids[**turn])
                })
                .count();
            if found < q.evidence.len() && std::env::var_os("RECALL_EVAL_MISSES").is_some() {
                eprintln!(
                    "missed ({}, swept: {swept}): {} — terms {:?}, {} items sent, {} left out",
                    q.kind,
                    q.text,
                    sent.terms,
                    sent.evidence.len(),
                    sent.left_out
                );
                for turn in &q.evidence {
                    eprintln!("  evidence: message {} {}", ids[*turn], texts[*turn]);
                }
            }
            (found, q.evidence.len())
        })
        .collect()
}
