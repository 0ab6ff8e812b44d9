//! Native benchmarks of the engine on bundled SQLite: the per-turn path (assemble + commitTurn)
//! and ingest, at several history sizes, and credential redaction of a leaf pass's sources.
//! Run: `cargo bench --bench engine`. Numbers are recorded in docs/benchmarks.md; tests never
//! assert on them.

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
        let params: IngestParams = decode(
            "ingest",
            json!({"sessionId": "s", "sessionKey": "k", "messages": batch}),
        )
        .unwrap();
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
            let params: IngestParams = decode(
                "ingest",
                json!({"sessionId": "s", "sessionKey": "k", "messages": batch}),
            )
            .unwrap();
            engine.ingest(params, 0).unwrap();
        })
    });
    group.finish();
}

/// A leaf pass's sources of about `tokens` tokens of text (what the prompt shows): the demo
/// transcript's coding session with the clean fixture's tool outputs interleaved, over and over;
/// with `credentials`, the credential fixtures too.
fn leaf_sources(tokens: u32, credentials: bool) -> Vec<Value> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let demo: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("demo/transcript.json")).unwrap())
            .unwrap();
    let mut pool: Vec<Value> = demo["messages"].as_array().unwrap().clone();
    let tool = |text: String| json!({"role": "toolResult", "toolCallId": "c", "toolName": "bash", "content": [{"type": "text", "text": text}], "isError": false});
    let clean =
        std::fs::read_to_string(root.join("tests/fixtures/no-credentials/coding-session.txt"))
            .unwrap();
    pool.extend(clean.split("\n=====\n").map(|chunk| tool(chunk.to_owned())));
    if credentials {
        let dir = root.join("tests/fixtures/credentials");
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "txt") {
                pool.push(tool(std::fs::read_to_string(path).unwrap()));
            }
        }
    }
    // Interleave: a tool output of the fixtures after every few transcript messages.
    let (transcript, extra): (Vec<Value>, Vec<Value>) =
        pool.into_iter().partition(|m| m["toolCallId"] != "c");
    let mut pool = Vec::new();
    let mut extras = extra.iter().cycle();
    for (i, m) in transcript.into_iter().enumerate() {
        pool.push(m);
        if i % 6 == 5 {
            pool.extend(extras.next().cloned());
        }
    }
    let (mut out, mut total) = (Vec::new(), 0u32);
    for m in pool.iter().cycle() {
        if total >= tokens {
            break;
        }
        total += lossless_wasm::core::tokens::estimate_text(
            &lossless_wasm::core::message::text_of_raw_json(&m.to_string()).unwrap(),
        );
        out.push(m.clone());
    }
    out
}

/// What a leaf pass pays once per summary: every source message's JSON and text redacted
/// (as `engine::redaction::redact_rows` does), and the rendered prompt on its own.
fn redaction(c: &mut Criterion) {
    use lossless_wasm::core::message::text_of_raw_json;
    use lossless_wasm::core::redact::Redactor;
    let mut group = c.benchmark_group("redaction_of_a_20k_token_leaf");
    group.sample_size(30);
    let redactor = Redactor::builtin().unwrap();
    for credentials in [false, true] {
        let sources = leaf_sources(20_000, credentials);
        let rows: Vec<(String, String)> = sources
            .iter()
            .map(|m| (m.to_string(), text_of_raw_json(&m.to_string()).unwrap()))
            .collect();
        let name = if credentials {
            "with_credentials"
        } else {
            "no_credentials"
        };
        eprintln!("{name}: {} messages", rows.len());
        // As a pass loads its sources: parse, redact the JSON, rebuild the text when it changed,
        // then one look at the text.
        group.bench_function(format!("sources_{name}"), |b| {
            b.iter(|| {
                let mut found = 0;
                for (raw, text) in &rows {
                    let mut value: Value = serde_json::from_str(raw).unwrap();
                    let counts = redactor.redact_json(&mut value);
                    found += counts.total();
                    let text = if counts.is_empty() {
                        text.clone()
                    } else {
                        text_of_raw_json(&value.to_string()).unwrap()
                    };
                    found += redactor.redact(&text).counts.total();
                }
                found
            })
        });
        let prompt: String = sources
            .iter()
            .map(|m| text_of_raw_json(&m.to_string()).unwrap())
            .collect::<Vec<_>>()
            .join("\n\n");
        group.bench_function(format!("prompt_text_{name}"), |b| {
            b.iter(|| redactor.redact(&prompt).counts.total())
        });
    }
    group.bench_function("compile_the_built_in_patterns", |b| {
        b.iter(|| Redactor::builtin().unwrap())
    });
    group.finish();
}

/// A tool turn: a request, two tool rounds of ~1,000-token outputs, an answer.
fn tool_turn(t: usize) -> Vec<Value> {
    let output = |k: usize| format!("out{t}.{k}: {}", "let x = compute(input);\n".repeat(160));
    let mut messages = vec![
        json!({"role": "user", "content": format!("turn {t}: run the tests"), "timestamp": t}),
    ];
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
    for (name, config) in [
        ("stubs", json!({})),
        ("no_stubs", json!({"toolOutputStubs": false})),
    ] {
        let mut engine = Engine::open(
            NativeSql::in_memory().unwrap(),
            Config::from_json(&config).unwrap(),
            0,
        )
        .unwrap();
        let mut next = 0;
        let assemble = |engine: &mut Engine<NativeSql>| {
            let view: AssembleParams = decode(
                "assemble",
                json!({"sessionId": "s", "sessionKey": "k", "tokenBudget": 128_000}),
            )
            .unwrap();
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
        group.bench_function(format!("assemble_and_commit/{name}"), |b| {
            b.iter_custom(|iters| timed(&mut engine, iters, true))
        });
        group.bench_function(format!("commit/{name}"), |b| {
            b.iter_custom(|iters| timed(&mut engine, iters, false))
        });
    }
    group.finish();
}

criterion_group!(benches, per_turn, ingest, redaction, per_turn_tool_outputs);
criterion_main!(benches);
