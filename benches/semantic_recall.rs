//! The semantic index at scale, natively (bundled SQLite, one core's CPU time): a conversation of
//! N stored messages (default 100,000; a planted, paraphrased fact every 1,000), stored with
//! semantic recall off, then backfilled; the store's size without and with vectors; then
//! `lcm_ask`'s evidence step (no LLM) and `lcm_grep`'s ranked mode, timed per call (the first
//! call, which reads the vectors into memory, apart from the rest), and how often the paraphrased
//! fact's message is in the evidence. The embedder is the engine's default when the build has
//! one, else a stand-in that hashes words into 384 components (its costs, not its meaning).
//! Run: `cargo bench --bench semantic_recall -- [N]`. Prints figures for docs/recall.md;
//! asserts nothing.

use std::sync::Arc;
use std::time::Instant;

use lossless_wasm::core::config::Config;
use lossless_wasm::core::embed::Embedder;
use lossless_wasm::engine::semantic::{default_embedder, SharedEmbedder};
use lossless_wasm::engine::{decode, Engine, IngestParams};
use lossless_wasm::store::native::NativeSql;
use lossless_wasm::store::Sql;
use serde_json::{json, Value};

struct Hashed;

impl Embedder for Hashed {
    fn name(&self) -> &str {
        "bench-hashed-384"
    }
    fn dim(&self) -> usize {
        384
    }
    fn embed(&self, text: &str) -> Vec<i8> {
        let mut sums = vec![0f32; 384];
        for word in text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
        {
            let h = word.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
            });
            for k in 0..8 {
                let i = ((h >> (k * 8)) as usize * 31 + k) % 384;
                sums[i] += if (h >> (k + 40)) & 1 == 0 { 1.0 } else { -1.0 };
            }
        }
        let norm = sums.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-9);
        sums.iter()
            .map(|x| (x / norm * 127.0).round() as i8)
            .collect()
    }
}

const KEY: &str = "agent:bench:main";

fn fact(f: usize) -> String {
    format!("Decision {f}: we removed the exponential backoff loop from shard {f}'s uploader, because it hid the timeouts from the pager.")
}

fn message(i: usize) -> Value {
    let ts = 1_790_000_000_000i64 + i as i64 * 60_000;
    if i % 1000 == 500 {
        return json!({"role": "user", "content": fact(i / 1000), "timestamp": ts});
    }
    if i % 2 == 0 {
        json!({"role": "user", "content": format!("user message {i}: please look at file src/module_{}.rs and fix the failing retry test", i % 97), "timestamp": ts})
    } else {
        json!({"role": "assistant", "content": [{"type": "text", "text": format!("Assistant reply {i}. I read the file, changed two lines and the retry test passes now.")}], "timestamp": ts})
    }
}

fn bytes(e: &mut Engine<NativeSql>) -> i64 {
    e.sql()
        .query_row(
            "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()",
            &[],
        )
        .unwrap()
        .unwrap()
        .int(0)
        .unwrap()
}

fn pct(xs: &mut [f64], p: f64) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[((xs.len() as f64 * p) as usize).min(xs.len() - 1)]
}

fn main() {
    let n: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(100_000);
    let embedder: SharedEmbedder = default_embedder().unwrap_or_else(|| Arc::new(Hashed));
    println!(
        "embedder {} ({} components), {n} messages",
        embedder.name(),
        embedder.dim()
    );
    let path = std::env::temp_dir().join(format!(
        "lossless-wasm-semantic-bench-{}.sqlite",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&path);
    let config = Config::from_json(&json!({"semanticRecall": false})).unwrap();
    let mut e = Engine::open(NativeSql::open(path.to_str().unwrap()).unwrap(), config, 0).unwrap();
    for start in (0..n).step_by(500) {
        let batch: Vec<Value> = (start..(start + 500).min(n)).map(message).collect();
        let p: IngestParams = decode(
            "ingest",
            json!({"sessionId": "s", "sessionKey": KEY, "messages": batch}),
        )
        .unwrap();
        e.ingest(p, 0).unwrap();
    }
    while e.index_search_batch().unwrap() > 0 {}
    e.sql().execute_script("VACUUM").unwrap();
    let before = bytes(&mut e);

    e.set_embedder(Some(embedder.clone())).unwrap();
    let started = Instant::now();
    let mut batches = 0;
    while e.backfill_vectors().unwrap() > 0 {
        batches += 1;
    }
    let backfill = started.elapsed().as_secs_f64();
    e.sql().execute_script("VACUUM").unwrap();
    let after = bytes(&mut e);
    let vectors = e
        .sql()
        .query_row("SELECT COUNT(*) FROM message_vectors", &[])
        .unwrap()
        .unwrap()
        .int(0)
        .unwrap();
    println!(
        "backfill: {vectors} vectors in {batches} batches, {:.2} s ({:.1} µs a message); store {:.1} MB -> {:.1} MB (+{:.1} %)",
        backfill,
        backfill * 1e6 / n as f64,
        before as f64 / 1e6,
        after as f64 / 1e6,
        (after - before) as f64 * 100.0 / before as f64
    );

    let facts = n / 1000;
    let mut ask_ms = Vec::new();
    let mut grep_ms = Vec::new();
    let mut found = 0;
    let mut first_ms = None;
    for f in 0..facts {
        let question = format!("Why did we drop the retry wrapper of shard {f}'s uploader?");
        let p = decode(
            "ask",
            json!({"sessionId": "s", "sessionKey": KEY, "question": question}),
        )
        .unwrap();
        let t = Instant::now();
        let start = e.ask_start(p).unwrap();
        let ms = t.elapsed().as_secs_f64() * 1e3;
        if first_ms.is_none() {
            first_ms = Some(ms);
        } else {
            ask_ms.push(ms);
        }
        let want = e
            .sql()
            .query_row(
                "SELECT id FROM messages WHERE seq = ?1",
                &[((f * 1000 + 500 + 1) as i64).into()],
            )
            .unwrap()
            .unwrap()
            .int(0)
            .unwrap();
        if start
            .evidence
            .iter()
            .any(|ev| ev.kind == "message" && ev.id == want)
        {
            found += 1;
        }
        let p = decode("grep", json!({"sessionId": "s", "sessionKey": KEY, "pattern": format!("retry wrapper shard {f}"), "mode": "ranked"})).unwrap();
        let t = Instant::now();
        e.recall_grep(p).unwrap();
        grep_ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    if !ask_ms.is_empty() {
        println!(
            "lcm_ask evidence: first call {:.1} ms (reads the vectors), then p50 {:.1} ms, p95 {:.1} ms over {}; paraphrased fact in the evidence {found} of {facts}",
            first_ms.unwrap_or(0.0),
            pct(&mut ask_ms, 0.5),
            pct(&mut ask_ms, 0.95),
            ask_ms.len()
        );
        println!(
            "lcm_grep ranked: p50 {:.1} ms, p95 {:.1} ms",
            pct(&mut grep_ms, 0.5),
            pct(&mut grep_ms, 0.95)
        );
    }
    // The turn's overhead: commitTurn of a user message and a reply, with the index on and off
    // in alternating blocks (the machine is shared: blocks keep drift out of the difference).
    let mut on = Vec::new();
    let mut off = Vec::new();
    let mut t = n;
    for block in 0..20 {
        let semantic = block % 2 == 0;
        e.set_embedder(semantic.then(|| embedder.clone())).unwrap();
        for _ in 0..25 {
            let ts = 1_790_000_000_000i64 + t as i64 * 60_000;
            let messages = json!([
                {"role": "user", "content": format!("turn {t}: the deploy of shard {} failed again with a timeout in the uploader; can you look at the logs and tell me what changed since yesterday?", t % 13), "timestamp": ts},
                {"role": "assistant", "content": [{"type": "text", "text": format!("I read the logs of turn {t}: the uploader's connection pool was lowered to 4 in the last release, so requests queue and time out. Raising it back to 16 should fix it.")}], "timestamp": ts + 1}
            ]);
            let p = decode("commitTurn", json!({"sessionId": "s", "sessionKey": KEY, "advancementKey": format!("bench-{t}"), "messages": messages})).unwrap();
            let started = Instant::now();
            e.commit_turn(p, ts).unwrap();
            let ms = started.elapsed().as_secs_f64() * 1e3;
            if semantic {
                on.push(ms)
            } else {
                off.push(ms)
            }
            t += 1;
        }
    }
    let embed_us = {
        let text = "I read the logs: the uploader's connection pool was lowered to 4 in the last release, so requests queue and time out. Raising it back to 16 should fix it.";
        let started = Instant::now();
        for _ in 0..1000 {
            std::hint::black_box(embedder.embed(std::hint::black_box(text)));
        }
        started.elapsed().as_secs_f64() * 1e3
    };
    println!(
        "commitTurn (2 messages) at {n}: p50 {:.3} ms with the index, {:.3} ms without (+{:.3} ms); embedding a 160-character message {:.1} µs",
        pct(&mut on, 0.5),
        pct(&mut off, 0.5),
        pct(&mut on, 0.5) - pct(&mut off, 0.5),
        embed_us
    );
    let _ = std::fs::remove_file(&path);
}
