//! The recall evaluation behind `docs/recall-evaluation.md`: a long coding transcript with 60
//! planted facts (paths, numbers, identifiers, decisions, CJK and emoji text), compacted to a
//! small view budget, then for each fact: is it still in the view as text, is it found by
//! `lcm_grep` (by a phrase of the fact, not a unique token), and is its message reached by
//! `lcm_expand` from the view. Run with `cargo test --test recall_eval -- --nocapture` to print
//! the figures; the test fails unless grep and expand reach 100 %.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeSet;

use lossless_wasm::core::config::Config;
use lossless_wasm::engine::compaction::CompactionStep;
use lossless_wasm::engine::*;
use lossless_wasm::store::native::NativeSql;
use lossless_wasm::store::Sql;
use serde_json::json;

const KEY: &str = "agent:eval:main";
const TURNS: usize = 600;
const BUDGET: u32 = 8_000;

/// (the sentence planted in a user message, the phrase searched for).
fn facts() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for i in 0..60 {
        let (fact, query) = match i % 6 {
            0 => (format!("The staging database for tenant {i} lives at pg-stage-{i}.internal:5433, password rotates every {} days.", 10 + i), format!("pg-stage-{i}.internal:5433")),
            1 => (format!("Decision {i}: we keep the retry budget at {} attempts because the vendor API throttles bursts.", 3 + i), format!("retry budget at {} attempts", 3 + i)),
            2 => (format!("Bug OPS-{} was caused by `parse_header_v{i}` reading the length field as little-endian.", 4000 + i), format!("parse_header_v{i}")),
            3 => (format!("部署窗口 {i}：周{}晚上十点静默发布，负责人是王{i}。", i % 7 + 1), format!("周{}晚上十点静默发布，负责人是王{i}", i % 7 + 1)),
            4 => (format!("Release 🚀 train {i} ships with feature flag ff_{i}_dark_mode enabled for 5% of users."), format!("ff_{i}_dark_mode")),
            _ => (format!("Remember: the on-call phone for region eu-{i} is +49 30 {:07}.", 1_000_000 + i * 37), format!("+49 30 {:07}", 1_000_000 + i * 37)),
        };
        out.push((fact, query));
    }
    out
}

/// The ids of the stored messages whose text contains `fact` (the planted original).
fn ids(e: &mut Engine<NativeSql>, fact: &str) -> Vec<i64> {
    let rows = e.sql().query("SELECT m.id FROM messages m JOIN messages_text t ON t.rowid = m.id WHERE instr(t.content, ?1) > 0", &[fact.into()]).unwrap();
    rows.iter().map(|r| r.int(0).unwrap()).collect()
}

fn compact(e: &mut Engine<NativeSql>, mode: &str, now: i64) {
    let p = decode("compactionStart", json!({"sessionId": "s", "sessionKey": KEY, "mode": mode, "summarizer": "extractive", "tokenBudget": BUDGET})).unwrap();
    let step = e.compaction_start(p, now).unwrap();
    assert!(
        matches!(step, CompactionStep::Done(_)),
        "the extractive summarizer answers inline"
    );
}

#[test]
fn planted_facts_are_all_found_by_grep_and_reached_by_expand_after_compaction() {
    let config = Config::from_json(
        &json!({"freshTailCount": 8, "leafChunkTokens": 3000, "contextThreshold": 0.75}),
    )
    .unwrap();
    let mut e = Engine::open(NativeSql::in_memory().unwrap(), config, 0).unwrap();
    e.assemble(
        decode(
            "assemble",
            json!({"sessionId": "s", "sessionKey": KEY, "tokenBudget": BUDGET}),
        )
        .unwrap(),
        1,
    )
    .unwrap();
    let facts = facts();
    let every = TURNS / facts.len();
    for t in 0..TURNS {
        let ts = 1_790_000_000_000 + (t as i64) * 60_000;
        let user = match (t % every == 3).then(|| &facts[t / every]) {
            Some((fact, _)) => {
                format!("Turn {t}. {fact} Now continue with the refactor of module {t}.")
            }
            None => format!(
                "Turn {t}: continue the refactor of module {t}; run the tests and report. {}",
                "context ".repeat(30)
            ),
        };
        let messages = vec![
            json!({"role": "user", "content": user, "timestamp": ts}),
            json!({"role": "assistant", "content": [{"type": "text", "text": format!("Refactored module {t}; all tests pass. {}", "detail ".repeat(40))}], "timestamp": ts + 1}),
        ];
        let p = decode("commitTurn", json!({"sessionId": "s", "sessionKey": KEY, "advancementKey": format!("t{t}"), "messages": messages})).unwrap();
        e.commit_turn(p, ts).unwrap();
        compact(&mut e, "pending", ts + 2);
        if t % 50 == 49 {
            compact(&mut e, "sweep", ts + 3);
        }
    }
    compact(&mut e, "sweep", 2_000_000_000_000);
    let view = e
        .assemble(
            decode(
                "assemble",
                json!({"sessionId": "s", "sessionKey": KEY, "tokenBudget": BUDGET}),
            )
            .unwrap(),
            2_000_000_000_001,
        )
        .unwrap();
    let view_text = view.messages.join("\n");

    // Everything reachable from the view through expand.
    let q = |e: &mut Engine<NativeSql>, sql: &str| {
        e.sql()
            .query(sql, &[])
            .unwrap()
            .iter()
            .map(|r| r.int(0).unwrap())
            .collect::<Vec<i64>>()
    };
    let mut reached: BTreeSet<i64> = q(
        &mut e,
        "SELECT message_id FROM context_items WHERE message_id IS NOT NULL",
    )
    .into_iter()
    .collect();
    let mut stack = q(
        &mut e,
        "SELECT summary_id FROM context_items WHERE summary_id IS NOT NULL",
    );
    let mut expand_calls = 0;
    while let Some(id) = stack.pop() {
        let mut cursor: Option<String> = None;
        loop {
            let page = e.recall_expand(decode("expand", json!({"sessionId": "s", "sessionKey": KEY, "summaryId": id, "cursor": cursor})).unwrap()).unwrap();
            expand_calls += 1;
            for item in &page.items {
                if item.kind == "summary" {
                    stack.push(item.id);
                } else {
                    reached.insert(item.id);
                }
            }
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
    }

    let (mut in_view, mut by_grep, mut by_expand, mut grep_rank_sum) = (0, 0, 0, 0);
    for (fact, query) in &facts {
        if view_text.contains(query.as_str()) {
            in_view += 1;
        }
        let hits = e
            .recall_grep(
                decode(
                    "grep",
                    json!({"sessionId": "s", "sessionKey": KEY, "pattern": query, "limit": 10}),
                )
                .unwrap(),
            )
            .unwrap();
        if let Some(rank) = hits.hits.iter().position(|h| h.hit.kind == "message") {
            by_grep += 1;
            grep_rank_sum += rank + 1;
            let id = hits.hits[rank].hit.id;
            let original = e
                .recall_expand(
                    decode(
                        "expand",
                        json!({"sessionId": "s", "sessionKey": KEY, "messageId": id}),
                    )
                    .unwrap(),
                )
                .unwrap();
            assert!(
                original.items[0].content.contains(fact.as_str()),
                "the hit is the planted message"
            );
            if reached.contains(&id) {
                by_expand += 1;
            }
        }
    }
    // Delegated recall: a question carrying the fact's key phrase must put the original message
    // (summarized out of the view) into the one LLM request, under the evidence budget.
    let (mut asked, mut evidence_tokens_max) = (0, 0);
    let templates = [
        "What do we know about {}?",
        "Remind me what was said about {} and when.",
        "Which decision mentioned {}? Quote it exactly.",
        "关于 {}，当时是怎么说的？",
    ];
    for (n, (fact, query)) in facts.iter().enumerate() {
        let question = templates[n % templates.len()].replace("{}", query);
        let start = e
            .ask_start(
                decode(
                    "ask",
                    json!({"sessionId": "s", "sessionKey": KEY, "question": question}),
                )
                .unwrap(),
            )
            .unwrap();
        let prompt = start
            .prompt
            .as_deref()
            .unwrap_or_else(|| panic!("nothing found for {question:?}: {:?}", start.answer));
        assert!(
            start.evidence_tokens <= start.evidence_budget,
            "the evidence budget holds"
        );
        evidence_tokens_max = evidence_tokens_max.max(start.evidence_tokens);
        let original = ids(&mut e, fact);
        if prompt.contains(fact.as_str())
            && start
                .evidence
                .iter()
                .any(|ev| ev.kind == "message" && original.contains(&ev.id))
        {
            asked += 1;
        } else {
            println!(
                "lcm_ask missed {question:?}: terms {:?}, evidence {:?}",
                start.terms,
                start
                    .evidence
                    .iter()
                    .map(|e| (e.kind, e.id))
                    .collect::<Vec<_>>()
            );
        }
    }
    let messages = q(&mut e, "SELECT COUNT(*) FROM messages")[0];
    println!("lcm_ask: the planted message reached the LLM request for {asked} of {} facts; largest evidence {evidence_tokens_max} tokens", facts.len());
    let summaries = q(&mut e, "SELECT COUNT(*) FROM summaries")[0];
    let max_depth = q(&mut e, "SELECT MAX(depth) FROM summaries")[0];
    let n = facts.len();
    let pct = |k: usize| 100.0 * k as f64 / n as f64;
    println!("recall evaluation: {TURNS} turns, {messages} messages, {summaries} summaries (max depth {max_depth}), view {} tokens of {BUDGET}, {} view items", view.estimated_tokens, view.messages.len());
    println!("facts: {n}; verbatim in the view: {in_view} ({:.1} %); found by lcm_grep: {by_grep} ({:.1} %, mean rank of the message {:.2}); reached by lcm_expand from the view: {by_expand} ({:.1} %); expand pages walked: {expand_calls}; all messages reached: {}",
        pct(in_view), pct(by_grep), grep_rank_sum as f64 / by_grep.max(1) as f64, pct(by_expand), reached.len() as i64 == messages);
    assert!(
        summaries > 0 && view.estimated_tokens <= u64::from(BUDGET),
        "the transcript was compacted into the budget"
    );
    assert!(
        in_view < n,
        "compaction took facts out of the view (else the evaluation proves nothing)"
    );
    assert_eq!(by_grep, n, "every fact is found by grep");
    assert_eq!(
        by_expand, n,
        "every fact is reached by expand from the view"
    );
    assert_eq!(
        asked, n,
        "every fact's original message reaches the lcm_ask request"
    );
    assert_eq!(
        reached.len() as i64,
        messages,
        "every message is reached by expand from the view"
    );
}
