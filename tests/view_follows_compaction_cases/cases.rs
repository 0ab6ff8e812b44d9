// The view_follows_compaction tests, shared by view_follows_compaction_native.rs (SQLite) and view_follows_compaction_pg.rs (PostgreSQL): each
// defines `Db` (the connection type) and `reopen_db(path)` (a store by name) and includes this file.
use lossless_wasm::core::config::Config;
use lossless_wasm::engine::compaction::CompactionStep;
use lossless_wasm::engine::*;
use lossless_wasm::store::Sql;
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

fn commit(e: &mut Engine<Db>, t: usize, messages: Vec<Value>) {
    let p = decode("commitTurn", json!({"sessionId": "s", "sessionKey": KEY, "advancementKey": format!("t{t}"), "messages": messages})).unwrap();
    e.commit_turn(p, t as i64).unwrap();
}

fn assemble(e: &mut Engine<Db>, budget: u32) -> (Vec<String>, u64) {
    let r = e.assemble(decode("assemble", json!({"sessionId": "s", "sessionKey": KEY, "tokenBudget": budget})).unwrap(), 1).unwrap();
    (r.messages, r.estimated_tokens)
}

/// Runs a compaction job with the built-in summarizer; whether it summarized anything.
fn compact(e: &mut Engine<Db>, params: Value) -> bool {
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
    let mut fresh = Engine::open(reopen_db(path), config(), 0).unwrap();
    assemble(&mut fresh, budget)
}

fn follows_compaction(seed: u64) {
    let dir = std::env::temp_dir().join(format!("lossless-view-follows-{}-{seed}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("db.sqlite").to_string_lossy().into_owned();
    let mut e = Engine::open(reopen_db(&path), config(), 0).unwrap();
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

/// The entries of a hand-over the caller did not hold, by key (summaries have negative keys).
fn handed_over(e: &mut Engine<Db>, held: Option<u64>) -> (u64, Vec<(i64, bool)>, Value) {
    let params = decode("assemble", json!({"sessionId": "s", "sessionKey": KEY, "tokenBudget": 50_000})).unwrap();
    let h = e.assemble_handover(params, 0, || Ok(Vec::new()), held, 1).unwrap().view;
    let keys = h.keys.iter().zip(&h.fresh).map(|(k, f)| (*k as i64, *f == 1)).collect();
    (h.token, keys, serde_json::from_str(&h.fresh_json).unwrap())
}

fn summaries(keys: &[(i64, bool)]) -> Vec<(i64, bool)> {
    keys.iter().copied().filter(|(k, _)| *k < 0).collect()
}

#[test]
fn summaries_are_not_handed_over_again_after_a_compaction_but_are_after_a_repair() {
    let path = std::env::temp_dir().join(format!("lossless-view-handover-{}.sqlite", std::process::id())).to_string_lossy().into_owned();
    let _ = std::fs::remove_file(&path);
    let mut e = Engine::open(reopen_db(&path), config(), 0).unwrap();
    let mut rng = Prng(7);
    let mut t = 0;
    let mut commit_some = |e: &mut Engine<Db>, n: usize| {
        for _ in 0..n {
            let messages = turn(&mut rng, t);
            commit(e, t, messages);
            t += 1;
        }
    };
    commit_some(&mut e, 12);
    let (token, _, _) = handed_over(&mut e, None);
    assert!(compact(&mut e, json!({"mode": "pending"})), "the first compaction summarizes");
    let (token, keys, _) = handed_over(&mut e, Some(token));
    let first = summaries(&keys);
    assert!(!first.is_empty() && first.iter().all(|(_, fresh)| *fresh), "new summaries are sent: {first:?}");
    assert!(keys.iter().filter(|(k, _)| *k > 0).all(|(_, fresh)| !fresh), "messages the caller holds are not sent again");
    // Another compaction, of messages after those summaries: the view follows it in place, and
    // the summaries the caller holds are not sent again.
    commit_some(&mut e, 12);
    let (token, _, _) = handed_over(&mut e, Some(token));
    assert!(compact(&mut e, json!({"mode": "pending"})), "the second compaction summarizes");
    let (token, keys, _) = handed_over(&mut e, Some(token));
    let held: Vec<(i64, bool)> = summaries(&keys).into_iter().filter(|(k, _)| first.iter().any(|(f, _)| f == k)).collect();
    assert!(!held.is_empty() && held.iter().all(|(_, fresh)| !fresh), "summaries the caller holds are not sent again: {keys:?}");
    assert!(summaries(&keys).iter().any(|(k, fresh)| *fresh && !first.iter().any(|(f, _)| f == k)), "the new summary is sent: {keys:?}");
    // A repair rewrites a summary in place: the caller must get the new text.
    let rewritten = -held[0].0;
    e.sql().execute("UPDATE summaries SET level = 'fallback' WHERE id = ?1", &[rewritten.into()]).unwrap();
    let mut step = e.repair_start(decode("repairStart", json!({"summarizer": "host"})).unwrap()).unwrap();
    while let lossless_wasm::engine::RepairStep::NeedSummary(request) = step {
        let reply = json!({"jobId": request.job_id, "text": "## Goal\n- REPAIRED SUMMARY TEXT\n## Progress\n- redone", "model": "scripted"});
        step = e.repair_continue(decode("repairContinue", reply).unwrap()).unwrap();
    }
    let (_, keys, fresh) = handed_over(&mut e, Some(token));
    assert!(keys.contains(&(-rewritten, true)), "the rewritten summary is sent again: {keys:?}");
    assert!(fresh.to_string().contains("REPAIRED SUMMARY TEXT"), "with its new text: {fresh}");
    let _ = std::fs::remove_file(&path);
}
