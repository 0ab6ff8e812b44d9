// The lossless property, shared by lossless_property.rs (SQLite) and lossless_property_pg.rs
// (PostgreSQL): each defines `Db` (the connection type), `open_db()` (a fresh, empty store),
// `CASES` (how many random cases proptest runs) and `REGRESSIONS` (the file proptest keeps its
// failing seeds in, replayed before the new cases) and includes this file.
//
// Random conversations driven through random compactions (host summaries that succeed or fail,
// the extractive summarizer, pending passes, forced sweeps under small budgets, resets) never lose
// a message: every stored message is reachable from its conversation's current view through
// `lcm_expand` (following cursors and child summaries), and findable through `lcm_grep` by the
// unique word it carries.
use std::collections::BTreeSet;

use lossless_wasm::core::config::Config;
use lossless_wasm::engine::compaction::CompactionStep;
use lossless_wasm::engine::*;
use lossless_wasm::store::Sql;
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use serde_json::{json, Value};

const KEY: &str = "agent:prop:chat";

#[derive(Debug, Clone)]
enum Op {
    /// A turn of `n` messages (user, assistant, tool call + result), `words` filler words each.
    Turn { n: usize, words: usize },
    /// Compaction with the host's LLM, answering each request well or with this failure.
    Host { mode: &'static str, fail: Option<&'static str> },
    Extractive { mode: &'static str },
    /// The host's overflow recovery: forced, with a small budget.
    Forced { budget: u32 },
    /// The host reset the session: a new conversation starts, the old one is archived.
    Reset,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (1usize..5, 0usize..120).prop_map(|(n, words)| Op::Turn { n, words }),
        2 => (prop_oneof![Just("pending"), Just("sweep")], prop_oneof![Just(None), Just(Some("timeout")), Just(Some("auth")), Just(Some("other")), Just(Some("empty"))])
            .prop_map(|(mode, fail)| Op::Host { mode, fail }),
        2 => prop_oneof![Just("pending"), Just("sweep")].prop_map(|mode| Op::Extractive { mode }),
        1 => (600u32..4000).prop_map(|budget| Op::Forced { budget }),
        1 => Just(Op::Reset),
    ]
}

struct World {
    e: Engine<Db>,
    session: usize,
    next: usize,
    now: i64,
}

impl World {
    fn session(&self) -> Value {
        json!({"sessionId": format!("s{}", self.session), "sessionKey": KEY})
    }

    fn params(&self, extra: Value) -> Value {
        let mut p = self.session();
        for (k, v) in extra.as_object().into_iter().flatten() {
            p[k] = v.clone();
        }
        p
    }

    fn turn(&mut self, n: usize, words: usize) {
        let mut messages = Vec::new();
        for i in 0..n {
            self.next += 1;
            let token = format!("uq{}x", self.next);
            let text = format!("{token} {}", "lorem ".repeat(words));
            self.now += 10;
            messages.push(match i % 4 {
                0 => json!({"role": "user", "content": text, "timestamp": self.now}),
                1 => json!({"role": "assistant", "content": [{"type": "text", "text": text}], "timestamp": self.now}),
                2 => json!({"role": "assistant", "content": [{"type": "text", "text": text}, {"type": "toolCall", "id": format!("c{}", self.next), "name": "read", "arguments": {"path": "a.rs"}}], "timestamp": self.now}),
                _ => json!({"role": "toolResult", "toolCallId": format!("c{}", self.next - 1), "toolName": "read", "content": [{"type": "text", "text": text}], "isError": false, "timestamp": self.now}),
            });
        }
        let p = self.params(json!({"advancementKey": format!("t{}", self.next), "messages": messages}));
        self.e.commit_turn(decode("commitTurn", p).unwrap(), self.now).unwrap();
    }

    fn compact(&mut self, extra: Value, fail: Option<&'static str>) {
        self.now += 1_000_000; // past any backoff
        let p = self.params(extra);
        let mut step = self.e.compaction_start(decode("compactionStart", p).unwrap(), self.now).unwrap();
        while let CompactionStep::NeedSummary(request) = step {
            let answer = match fail {
                None => json!({"jobId": request.job_id, "text": "## Goal\n- keep working\n## Progress\n- did several steps"}),
                Some("empty") => json!({"jobId": request.job_id, "text": "   "}),
                Some(kind) => json!({"jobId": request.job_id, "error": {"kind": kind, "message": format!("scripted {kind} failure")}}),
            };
            step = self.e.compaction_continue(decode("compactionContinue", answer).unwrap(), self.now).unwrap();
        }
    }

    fn apply(&mut self, op: &Op) {
        match op {
            Op::Turn { n, words } => self.turn(*n, *words),
            Op::Host { mode, fail } => self.compact(json!({"mode": mode, "summarizer": "host", "tokenBudget": 3000}), *fail),
            Op::Extractive { mode } => self.compact(json!({"mode": mode, "summarizer": "extractive", "tokenBudget": 3000}), None),
            Op::Forced { budget } => self.compact(json!({"mode": "sweep", "summarizer": "extractive", "force": true, "tokenBudget": budget, "currentTokenCount": budget * 2}), None),
            Op::Reset => {
                let p = self.session();
                self.e.reset(decode("reset", p).unwrap(), self.now).unwrap();
                self.session += 1;
            }
        }
    }

    fn ids(&mut self, q: &str) -> Vec<i64> {
        self.e.sql().query(q, &[]).unwrap().iter().map(|r| r.int(0).unwrap()).collect()
    }

    /// Every message reachable from a conversation's view through `recall_expand`.
    fn reachable(&mut self, conversation: i64, max_tokens: u32) -> BTreeSet<i64> {
        let mut found: BTreeSet<i64> = self.ids(&format!("SELECT message_id FROM context_items WHERE conversation_id = {conversation} AND message_id IS NOT NULL")).into_iter().collect();
        let mut stack = self.ids(&format!("SELECT summary_id FROM context_items WHERE conversation_id = {conversation} AND summary_id IS NOT NULL"));
        let mut opened = BTreeSet::new();
        while let Some(id) = stack.pop() {
            assert!(opened.insert(id), "summary {id} reached twice: the DAG is not a tree of the view");
            let mut cursor: Option<String> = None;
            loop {
                let p = self.params(json!({"summaryId": id, "cursor": cursor, "maxTokens": max_tokens}));
                let page = self.e.recall_expand(decode("expand", p).unwrap()).unwrap();
                assert!(page.tokens <= page.max_tokens);
                assert!(!page.items.is_empty() || page.total == 0, "a page makes progress");
                for item in &page.items {
                    if item.kind == "summary" {
                        stack.push(item.id);
                    } else {
                        found.insert(item.id);
                    }
                }
                match page.next_cursor {
                    Some(next) => cursor = Some(next),
                    None => break,
                }
            }
        }
        found
    }

    fn check(&mut self, max_tokens: u32) {
        for conversation in self.ids("SELECT id FROM conversations") {
            let stored: BTreeSet<i64> = self.ids(&format!("SELECT id FROM messages WHERE conversation_id = {conversation}")).into_iter().collect();
            let reached = self.reachable(conversation, max_tokens);
            let lost: Vec<&i64> = stored.difference(&reached).collect();
            assert!(lost.is_empty(), "conversation {conversation}: messages {lost:?} are not reachable from the view");
        }
        for n in 1..=self.next {
            let p = self.params(json!({"pattern": format!("uq{n}x"), "scope": "conversation", "limit": 5}));
            let hits = self.e.recall_grep(decode("grep", p).unwrap()).unwrap();
            assert!(hits.hits.iter().any(|h| h.hit.kind == "message"), "message with uq{n}x not found by grep");
        }
        let doctor = self.e.doctor(decode("doctor", json!({})).unwrap()).unwrap();
        assert!(doctor.ok, "{:?}", doctor.checks);
    }
}

fn world() -> World {
    let config = json!({"freshTailCount": 3, "leafChunkTokens": 600, "leafBudgetHeadroomFactor": 0, "leafSkipReductionThreshold": 0,
                        "condensedFanout": 2, "contextThreshold": 0.3, "backoffBaseMs": 1000, "backoffMaxMs": 4000, "leafTargetTokens": 200, "condensedTargetTokens": 300});
    let e = Engine::open(open_db(), Config::from_json(&config).unwrap(), 0).unwrap();
    World { e, session: 0, next: 0, now: 1_000 }
}

proptest! {
    // The including file sets the number of cases and its own regressions file (proptest would
    // otherwise name one after this shared file, for both backends).
    #![proptest_config(ProptestConfig { cases: CASES, failure_persistence: Some(Box::new(FileFailurePersistence::Direct(REGRESSIONS))), ..ProptestConfig::default() })]

    #[test]
    fn no_compaction_sequence_loses_a_message(ops in proptest::collection::vec(op(), 1..40), page in prop_oneof![Just(200u32), Just(1500u32), Just(16000u32)]) {
        let mut w = world();
        for op in &ops {
            w.apply(op);
        }
        w.check(page);
    }
}

/// The generator reaches the interesting states: one fixed sequence of the same operations builds
/// condensed summaries, records failures and archives a conversation, and still loses nothing.
#[test]
fn a_long_mixed_sequence_builds_deep_summaries_survives_failures_and_loses_nothing() {
    let mut w = world();
    for round in 0..12 {
        w.apply(&Op::Turn { n: 4, words: 100 });
        w.apply(&Op::Turn { n: 3, words: 60 });
        let op = match round % 4 {
            0 => Op::Host { mode: "sweep", fail: None },
            1 => Op::Host { mode: "sweep", fail: Some("timeout") },
            2 => Op::Extractive { mode: "pending" },
            _ => Op::Forced { budget: 900 },
        };
        w.apply(&op);
        if round == 7 {
            w.apply(&Op::Reset);
        }
    }
    assert!(w.ids("SELECT COUNT(*) FROM summaries WHERE depth >= 1")[0] >= 1, "condensed summaries were built");
    assert!(w.ids("SELECT COUNT(*) FROM compaction_events WHERE outcome = 'failed'")[0] >= 1, "failures happened");
    assert_eq!(w.ids("SELECT COUNT(*) FROM conversations WHERE status = 'archived'")[0], 1);
    w.check(200);
}
