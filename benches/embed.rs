//! The default embedder's cost natively: a typical chat message (~40 words), a short question,
//! a 4 KB tool output, and a 1 MB text (sampled in windows, so bounded). Run:
//! `cargo bench --bench embed`; numbers are recorded in docs/recall.md ("The embedder").

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use lossless_wasm::core::embed::{default_embedder, Embedder};

fn embed(c: &mut Criterion) {
    let embedder = default_embedder();
    let message = "I looked at the failing deploy again: the retry wrapper was hiding the real \
        timeouts from the payment gateway, so I removed the backoff loop and added a deadline of \
        ten seconds per request. Tests pass locally; can you check the staging logs tomorrow?";
    let question = "why did we drop the retry wrapper?";
    let tool_output: String = (0..100)
        .map(|i| format!("test store::tests::case_{i} ... ok\n"))
        .collect();
    let huge = "lorem ipsum dolor sit amet, consectetur adipiscing elit. ".repeat(20_000);
    let mut group = c.benchmark_group("embed");
    group.bench_function("message_250_bytes", |b| {
        b.iter(|| embedder.embed(black_box(message)))
    });
    group.bench_function("question_35_bytes", |b| {
        b.iter(|| embedder.embed(black_box(question)))
    });
    group.bench_function("tool_output_4_kb", |b| {
        b.iter(|| embedder.embed(black_box(&tool_output)))
    });
    group.bench_function("tool_output_4_kb_tokenize_only", |b| {
        b.iter(|| embedder.token_ids(black_box(&tool_output)))
    });
    group.sample_size(20);
    group.bench_function("text_1_mb_sampled", |b| {
        b.iter(|| embedder.embed(black_box(&huge)))
    });
    group.finish();
}

criterion_group!(benches, embed);
criterion_main!(benches);
