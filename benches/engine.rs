//! Native benchmarks of the engine on bundled SQLite: the per-turn path (assemble + commitTurn)
//! and ingest, at several history sizes. Run: `cargo bench --bench engine`. Numbers are recorded
//! in docs/benchmarks.md; tests never assert on them.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use lossless_wasm::core::config::Config;
use lossless_wasm::engine::{decode, AssembleParams, CommitTurnParams, Engine, IngestParams};
use lossless_wasm::store::native::NativeSql;
use serde_json::{json, Value};

fn message(i: usize) -> Value {
    if i % 2 == 0 {
        json!({"role": "user", "content": format!("user message {i}: please look at src/module_{}.rs", i % 97), "timestamp": i})
    } else {
        json!({"role": "assistant", "content": [{"type": "text", "text": format!("reply {i}: changed two lines, tests pass")}], "timestamp": i})
    }
}

fn engine_with(n: usize) -> Engine<NativeSql> {
    let mut engine = Engine::open(NativeSql::in_memory().unwrap(), Config::default(), 0).unwrap();
    for start in (0..n).step_by(500) {
        let batch: Vec<Value> = (start..(start + 500).min(n)).map(message).collect();
        let params: IngestParams = decode("ingest", json!({"sessionId": "s", "sessionKey": "k", "messages": batch})).unwrap();
        engine.ingest(params, 0).unwrap();
    }
    engine
}

fn per_turn(c: &mut Criterion) {
    let mut group = c.benchmark_group("per_turn_assemble_and_commit");
    group.sample_size(20);
    for n in [1_000usize, 10_000] {
        let mut engine = engine_with(n);
        let mut next = n;
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| {
                let view: AssembleParams = decode("assemble", json!({"sessionId": "s", "sessionKey": "k", "tokenBudget": 128_000})).unwrap();
                engine.assemble(view, 0).unwrap();
                let turn: CommitTurnParams = decode(
                    "commitTurn",
                    json!({"sessionId": "s", "sessionKey": "k", "advancementKey": format!("t{next}"), "messages": [message(next), message(next + 1)]}),
                )
                .unwrap();
                next += 2;
                engine.commit_turn(turn, 0).unwrap();
            })
        });
    }
    group.finish();
}

fn ingest(c: &mut Criterion) {
    let mut group = c.benchmark_group("ingest_batch_of_100");
    group.sample_size(20);
    let mut engine = engine_with(10_000);
    let mut next = 10_000;
    group.bench_function("at_10k", |b| {
        b.iter(|| {
            let batch: Vec<Value> = (next..next + 100).map(message).collect();
            next += 100;
            let params: IngestParams = decode("ingest", json!({"sessionId": "s", "sessionKey": "k", "messages": batch})).unwrap();
            engine.ingest(params, 0).unwrap();
        })
    });
    group.finish();
}

/// A tool turn: a request, two tool rounds of ~1,000-token outputs, an answer.
fn tool_turn(t: usize) -> Vec<Value> {
    let output = |k: usize| format!("out{t}.{k}: {}", "let x = compute(input);\n".repeat(160));
    let mut messages = vec![json!({"role": "user", "content": format!("turn {t}: run the tests"), "timestamp": t})];
    for k in 0..2 {
        let id = format!("c{t}_{k}");
        messages.push(json!({"role": "assistant", "content": [{"type": "toolCall", "id": id, "name": "bash", "arguments": {"command": "cargo test"}}], "timestamp": t}));
        messages.push(json!({"role": "toolResult", "toolCallId": id, "toolName": "bash", "content": [{"type": "text", "text": output(k)}], "isError": false, "timestamp": t}));
    }
    messages.push(json!({"role": "assistant", "content": [{"type": "text", "text": format!("reply {t}")}], "timestamp": t}));
    messages
}

/// The per-turn path of a tool-heavy session at a 128K budget, with tool-output stubs (a batch
/// stubs the turn before the newest on every turn) and without them: `assemble_and_commit` is
/// the turn's own path, `commit` only the end-of-turn call, where stubbing runs (with the
/// trigger). After each turn, untimed, `maintain` runs pending compaction with the extractive
/// summarizer, so the context stays within its budget as in a real session.
fn per_turn_tool_outputs(c: &mut Criterion) {
    let mut group = c.benchmark_group("per_turn_tool_session_1k");
    group.sample_size(20);
    for (name, config) in [("stubs", json!({})), ("no_stubs", json!({"toolOutputStubs": false}))] {
        let mut engine = Engine::open(NativeSql::in_memory().unwrap(), Config::from_json(&config).unwrap(), 0).unwrap();
        let mut next = 0;
        let assemble = |engine: &mut Engine<NativeSql>| {
            let view: AssembleParams = decode("assemble", json!({"sessionId": "s", "sessionKey": "k", "tokenBudget": 128_000})).unwrap();
            engine.assemble(view, 0).unwrap();
        };
        let mut commit = |engine: &mut Engine<NativeSql>| {
            let turn: CommitTurnParams = decode("commitTurn", json!({"sessionId": "s", "sessionKey": "k", "advancementKey": format!("t{next}"), "messages": tool_turn(next)})).unwrap();
            next += 1;
            engine.commit_turn(turn, 0).unwrap();
        };
        let maintain = |engine: &mut Engine<NativeSql>| {
            let p = decode("compactionStart", json!({"sessionId": "s", "sessionKey": "k", "mode": "pending", "summarizer": "extractive"})).unwrap();
            engine.compaction_start(p, 0).unwrap();
        };
        // ~1,000 stored messages first (six per turn).
        for _ in 0..170 {
            assemble(&mut engine);
            commit(&mut engine);
            maintain(&mut engine);
        }
        let mut timed = |engine: &mut Engine<NativeSql>, iters: u64, with_assemble: bool| {
            let mut spent = std::time::Duration::ZERO;
            for _ in 0..iters {
                if !with_assemble {
                    assemble(engine);
                }
                let start = std::time::Instant::now();
                if with_assemble {
                    assemble(engine);
                }
                commit(engine);
                spent += start.elapsed();
                maintain(engine);
            }
            spent
        };
        group.bench_function(format!("assemble_and_commit/{name}"), |b| b.iter_custom(|iters| timed(&mut engine, iters, true)));
        group.bench_function(format!("commit/{name}"), |b| b.iter_custom(|iters| timed(&mut engine, iters, false)));
    }
    group.finish();
}

criterion_group!(benches, per_turn, ingest, per_turn_tool_outputs);
criterion_main!(benches);
