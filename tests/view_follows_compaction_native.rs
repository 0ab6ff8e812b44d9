//! A compaction changes the cached view in place (the replaced items leave, the summary takes
//! their place, older items fill the room it freed) instead of rebuilding it from the store.
//! These tests hold the in-place view to what a rebuild shows: after every compaction, the view
//! of the engine that compacted equals the view a fresh engine builds from the same database.
#![cfg(not(target_arch = "wasm32"))]

use lossless_wasm::core::config::Config;
use lossless_wasm::engine::compaction::CompactionStep;
use lossless_wasm::engine::*;
use lossless_wasm::store::native::NativeSql;
use serde_json::{json, Value};

const KEY: &str = "agent:main:v";

fn config() -> Config {
    Config::from_json(&json!({"freshTailCount": 6, "leafChunkTokens": 1500, "leafBudgetHeadroomFactor": 0, "leafSkipReductionThreshold": 0})).unwrap()
}

/// A small deterministic generator, so a failure replays exactly.
struct Prng(u64);

impl Prng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// One tool-loop turn of random length: a request, 0-3 tool calls with results of random size,
/// a reply.
fn turn(rng: &mut Prng, t: usize) -> Vec<Value> {
    let ts = (t * 10) as i64;
    let mut messages = vec![json!({"role": "user", "content": format!("Request {t}: {}", "please look ".repeat(1 + rng.below(40) as usize)), "timestamp": ts})];
    for call in 0..rng.below(4) {
        let id = format!("c{t}-{call}");
        messages.push(json!({"role": "assistant", "content": [{"type": "toolCall", "id": id, "name": "read", "arguments": {"path": format!("src/f{t}_{call}.rs")}}], "timestamp": ts + 1}));
        messages.push(json!({"role": "toolResult", "toolCallId": id, "toolName": "read", "content": [{"type": "text", "text": "let x = y; ".repeat(1 + rng.below(300) as usize)}], "timestamp": ts + 2}));
    }
    messages.push(json!({"role": "assistant", "content": format!("Done with {t}. {}", "ok ".repeat(rng.below(50) as usize)), "timestamp": ts + 3}));
    messages
}

fn commit(e: &mut Engine<NativeSql>, t: usize, messages: Vec<Value>) {
    let p = decode("commitTurn", json!({"sessionId": "s", "sessionKey": KEY, "advancementKey": format!("t{t}"), "messages": messages})).unwrap();
    e.commit_turn(p, t as i64).unwrap();
}

fn assemble(e: &mut Engine<NativeSql>, budget: u32) -> (Vec<String>, u64) {
    let r = e.assemble(decode("assemble", json!({"sessionId": "s", "sessionKey": KEY, "tokenBudget": budget})).unwrap(), 1).unwrap();
    (r.messages, r.estimated_tokens)
}

/// Runs a compaction job with the built-in summarizer; whether it summarized anything.
fn compact(e: &mut Engine<NativeSql>, params: Value) -> bool {
    let mut p = json!({"sessionId": "s", "sessionKey": KEY, "summarizer": "extractive"});
    if let (Some(p), Some(extra)) = (p.as_object_mut(), params.as_object()) {
        p.extend(extra.clone());
    }
    match e.compaction_start(decode("compactionStart", p).unwrap(), 1_000).unwrap() {
        CompactionStep::Done(report) => report.compacted,
        CompactionStep::NeedSummary(_) => panic!("the extractive summarizer runs inline"),
    }
}

/// What a fresh engine (no cached view) shows for the same database.
fn rebuilt(path: &str, budget: u32) -> (Vec<String>, u64) {
    let mut fresh = Engine::open(NativeSql::open(path).unwrap(), config(), 0).unwrap();
    assemble(&mut fresh, budget)
}

fn follows_compaction(seed: u64) {
    let dir = std::env::temp_dir().join(format!("lossless-view-follows-{}-{seed}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("db.sqlite").to_string_lossy().into_owned();
    let mut e = Engine::open(NativeSql::open(&path).unwrap(), config(), 0).unwrap();
    let mut rng = Prng(seed);
    let budgets = [600u32, 2_000, 6_000, 20_000];
    let (mut t, mut compactions) = (0, 0);
    for round in 0..40 {
        for _ in 0..1 + rng.below(4) {
            let messages = turn(&mut rng, t);
            commit(&mut e, t, messages);
            t += 1;
        }
        let budget = budgets[rng.below(budgets.len() as u64) as usize];
        // The view is cached at this budget, up to date with the store.
        assemble(&mut e, budget);
        // The work the trigger recorded, as the host's `maintain` runs it.
        if !compact(&mut e, json!({"mode": "pending"})) {
            continue;
        }
        compactions += 1;
        let here = assemble(&mut e, budget);
        assert_eq!(here, rebuilt(&path, budget), "seed {seed}, round {round}, budget {budget}: the view after compaction differs from a rebuilt one");
        // The next turn's items join the view that followed the compaction as they join a rebuilt one.
        let messages = turn(&mut rng, t);
        commit(&mut e, t, messages);
        t += 1;
        assert_eq!(assemble(&mut e, budget), rebuilt(&path, budget), "seed {seed}, round {round}: after the next turn");
    }
    assert!(compactions >= 5, "seed {seed}: only {compactions} compactions ran; the test would prove little");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_view_that_follows_compactions_in_place_matches_a_rebuilt_view() {
    for seed in 1..=6 {
        follows_compaction(seed);
    }
}
