//! Recall evaluation of the default embedder (issue 40): over generated multi-session dated
//! conversations (`world.rs`), the share of questions whose every annotated evidence turn fits in
//! a ~6,000-token evidence budget, for BM25 over the raw turns, embedding-only retrieval (by
//! plain cosine, and as the engine ranks: the question's vector less the mean of the
//! conversation's, `src/engine/vector_cache.rs`, over vectors stored as the store keeps them,
//! `core::embed::packing`), their reciprocal-rank fusion (k = 60), and fusion
//! with a second retrieval round or the question's dates. An in-memory index of its own (BM25
//! written here, vectors from `core::embed::default_embedder`), so it measures the ranking, not a
//! store.
//!
//! Run: `cargo bench --bench recall_eval` (prints a Markdown table; numbers are recorded in
//! docs/recall-evaluation.md; nothing is asserted).

mod engine_row;
mod world;

use lossless_wasm::core::embed::{default_embedder, packing, similarity, Embedder};
use std::collections::HashMap;
use std::time::Instant;

const BUDGET_TOKENS: usize = 6_000;
const RRF_K: f64 = 60.0;
/// Second round: the first round's top this-many turns are added to the question.
const EXPAND_TOP: usize = 3;

const STOP: &[&str] = &[
    "a", "an", "the", "and", "or", "of", "to", "in", "on", "at", "for", "with", "is", "are", "was",
    "were", "be", "been", "did", "do", "does", "what", "when", "where", "which", "who", "how",
    "why", "s", "i", "you", "it", "that", "this", "my", "your", "me", "we", "our", "he", "she",
    "his", "her", "they", "their", "have", "has", "had", "so", "just", "from", "about", "get",
    "got",
];

fn words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty() && !STOP.contains(w))
        .map(str::to_string)
        .collect()
}

/// Okapi BM25 (k1 = 1.2, b = 0.75) over one conversation's turns.
struct Bm25 {
    docs: Vec<HashMap<String, f64>>,
    lengths: Vec<f64>,
    average: f64,
    df: HashMap<String, f64>,
}

impl Bm25 {
    fn new(texts: &[String]) -> Bm25 {
        let mut df = HashMap::new();
        let mut docs = Vec::new();
        let mut lengths = Vec::new();
        for text in texts {
            let mut tf: HashMap<String, f64> = HashMap::new();
            let ws = words(text);
            lengths.push(ws.len() as f64);
            for w in ws {
                *tf.entry(w).or_default() += 1.0;
            }
            for w in tf.keys() {
                *df.entry(w.clone()).or_default() += 1.0;
            }
            docs.push(tf);
        }
        let average = lengths.iter().sum::<f64>() / lengths.len().max(1) as f64;
        Bm25 {
            docs,
            lengths,
            average,
            df,
        }
    }

    fn scores(&self, query: &str) -> Vec<f64> {
        let n = self.docs.len() as f64;
        let mut terms = words(query);
        terms.sort();
        terms.dedup();
        self.docs
            .iter()
            .zip(&self.lengths)
            .map(|(tf, len)| {
                terms
                    .iter()
                    .map(|t| {
                        let f = tf.get(t).copied().unwrap_or(0.0);
                        if f == 0.0 {
                            return 0.0;
                        }
                        let df = self.df[t];
                        let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
                        idf * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * len / self.average))
                    })
                    .sum()
            })
            .collect()
    }
}

/// Indices sorted by descending score, ties by index; zero scores last (still ranked).
fn ranking(scores: &[f64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|a, b| scores[*b].total_cmp(&scores[*a]).then(a.cmp(b)));
    order
}

fn fuse(rankings: &[Vec<usize>], n: usize) -> Vec<usize> {
    let weighted: Vec<(&[usize], f64)> = rankings.iter().map(|r| (r.as_slice(), 1.0)).collect();
    fuse_weighted(&weighted, n)
}

/// Reciprocal-rank fusion with a weight per list.
fn fuse_weighted(rankings: &[(&[usize], f64)], n: usize) -> Vec<usize> {
    let mut score = vec![0.0; n];
    for (r, weight) in rankings {
        for (rank, doc) in r.iter().enumerate() {
            score[*doc] += weight / (RRF_K + rank as f64 + 1.0);
        }
    }
    ranking(&score)
}

fn tokens(text: &str) -> usize {
    text.len().div_ceil(4)
}

/// The turns packed into the budget, in rank order (one that does not fit is skipped).
fn pack(order: &[usize], texts: &[String]) -> Vec<usize> {
    let mut used = 0;
    let mut picked = Vec::new();
    for doc in order {
        let t = tokens(&texts[*doc]);
        if used + t <= BUDGET_TOKENS {
            used += t;
            picked.push(*doc);
        }
    }
    picked
}

/// A "Month Year" the question names, if any.
fn named_month(question: &str) -> Option<String> {
    let ws: Vec<&str> = question.split(|c: char| !c.is_alphanumeric()).collect();
    ws.windows(2).find_map(|w| {
        (world::MONTHS.contains(&w[0])
            && w[1].len() == 4
            && w[1].chars().all(|c| c.is_ascii_digit()))
        .then(|| format!("{} {}", w[0], w[1]))
    })
}

const METHODS: &[&str] = &[
    "BM25",
    "embedding (plain cosine)",
    "embedding (centred, one byte a component)",
    "embedding (centred, stored: four bits a component)",
    "hybrid (RRF)",
    "hybrid + dates",
    "hybrid + 2nd round (fused)",
    "hybrid + 2nd round (half budget)",
    "hybrid + 2nd round (weight 0.5)",
    "hybrid + 2nd round, semantic only (weight 0.5)",
];

/// Rows measured through the engine's own `ask_start` (`engine_row.rs`): the store as written,
/// and after an extractive sweep.
const ENGINE_METHODS: &[&str] = &[
    "engine: ask_start",
    "engine: ask_start, after an extractive sweep",
];

/// The first round's order for half the budget, then the second round's for the rest.
fn half_and_half(first: &[usize], second: &[usize], texts: &[String]) -> Vec<usize> {
    let mut used = 0;
    let mut order = Vec::new();
    for doc in first {
        let t = tokens(&texts[*doc]);
        if used + t > BUDGET_TOKENS / 2 {
            break;
        }
        used += t;
        order.push(*doc);
    }
    for doc in second.iter().chain(first) {
        if !order.contains(doc) {
            order.push(*doc);
        }
    }
    order
}

fn main() {
    let embedder = default_embedder();
    let conversations = world::generate(40, 12);
    let kinds = ["paraphrase", "multi-hop", "temporal"];
    // (method, kind) -> (all evidence, any evidence, questions)
    let mut tally: HashMap<(&str, &str), (usize, usize, usize)> = HashMap::new();
    let mut embed_ns = 0u128;
    let mut embedded = 0usize;
    let mut total_turns = 0;
    let mut total_tokens = 0;
    for conv in &conversations {
        let texts: Vec<String> = conv
            .turns
            .iter()
            .map(|t| format!("[{}] {}", t.date, t.text))
            .collect();
        total_turns += texts.len();
        total_tokens += texts.iter().map(|t| tokens(t)).sum::<usize>();
        let start = Instant::now();
        let vectors: Vec<Vec<i8>> = texts.iter().map(|t| embedder.embed(t)).collect();
        embed_ns += start.elapsed().as_nanos();
        embedded += texts.len();
        let bm25 = Bm25::new(&texts);
        let plain_rank = |query: &str| {
            let q = embedder.embed(query);
            ranking(
                &vectors
                    .iter()
                    .map(|v| f64::from(similarity(&q, v)))
                    .collect::<Vec<_>>(),
            )
        };
        let dim = embedder.dim();
        // As the store keeps them (four bits a component), ranked as the engine ranks them
        // (`engine/vector_cache.rs`: the mean of their unit vectors, table lookups).
        let stored: Vec<Vec<u8>> = vectors.iter().map(|v| packing::pack(v)).collect();
        let mut stored_mean = vec![0.0; dim];
        for v in &stored {
            packing::add_unit(v, packing::inverse_length(v), &mut stored_mean);
        }
        stored_mean
            .iter_mut()
            .for_each(|m| *m /= stored.len() as f64);
        let stored_rank = |query: &str| {
            let q: Vec<f64> = embedder
                .embed(query)
                .iter()
                .zip(&stored_mean)
                .map(|(x, m)| f64::from(*x) / 127.0 - m)
                .collect();
            let scorer = packing::PackedScorer::new(&q);
            ranking(
                &stored
                    .iter()
                    .map(|v| f64::from(scorer.dot(v) * packing::inverse_length(v)))
                    .collect::<Vec<_>>(),
            )
        };
        let centred_rank = |vectors: &[Vec<i8>], query: &str| {
            let mean: Vec<f64> = (0..dim)
                .map(|d| {
                    vectors.iter().map(|v| f64::from(v[d])).sum::<f64>() / vectors.len() as f64
                })
                .collect();
            let q: Vec<f64> = embedder
                .embed(query)
                .iter()
                .zip(&mean)
                .map(|(x, m)| f64::from(*x) - m)
                .collect();
            ranking(
                &vectors
                    .iter()
                    .map(|v| v.iter().zip(&q).map(|(x, y)| f64::from(*x) * y).sum())
                    .collect::<Vec<_>>(),
            )
        };
        let embed_rank = |query: &str| stored_rank(query);
        for q in &conv.questions {
            let lexical = ranking(&bm25.scores(&q.text));
            let semantic = embed_rank(&q.text);
            let hybrid = fuse(&[lexical.clone(), semantic.clone()], texts.len());
            let expanded_query = |first: &[usize]| {
                let mut text = q.text.clone();
                for doc in first.iter().take(EXPAND_TOP) {
                    text.push(' ');
                    text.push_str(&conv.turns[*doc].text);
                }
                text
            };
            let second_round = |first: &[usize], lists: &[Vec<usize>]| {
                let query = expanded_query(first);
                let mut all = lists.to_vec();
                all.push(ranking(&bm25.scores(&query)));
                all.push(embed_rank(&query));
                fuse(&all, texts.len())
            };
            let dated: Option<Vec<usize>> = named_month(&q.text).map(|month| {
                let scores: Vec<f64> = conv
                    .turns
                    .iter()
                    .map(|t| if t.date.ends_with(&month) { 1.0 } else { 0.0 })
                    .collect();
                // Only the turns of that month count as a list.
                ranking(&scores)
                    .into_iter()
                    .filter(|d| scores[*d] > 0.0)
                    .collect()
            });
            let with_dates = |lists: Vec<Vec<usize>>| {
                let mut all = lists;
                if let Some(d) = &dated {
                    all.push(d.clone());
                }
                all
            };
            let hybrid_dates = fuse(
                &with_dates(vec![lexical.clone(), semantic.clone()]),
                texts.len(),
            );
            let fused_rounds = second_round(&hybrid, &[lexical.clone(), semantic.clone()]);
            let query = expanded_query(&hybrid);
            let round_two = fuse(
                &[ranking(&bm25.scores(&query)), embed_rank(&query)],
                texts.len(),
            );
            let orders = [
                lexical.clone(),
                plain_rank(&q.text),
                centred_rank(&vectors, &q.text),
                semantic.clone(),
                hybrid.clone(),
                hybrid_dates,
                fused_rounds,
                half_and_half(&hybrid, &round_two, &texts),
                {
                    let expanded_lexical = ranking(&bm25.scores(&query));
                    let expanded_semantic = embed_rank(&query);
                    fuse_weighted(
                        &[
                            (&lexical, 1.0),
                            (&semantic, 1.0),
                            (&expanded_lexical, 0.5),
                            (&expanded_semantic, 0.5),
                        ],
                        texts.len(),
                    )
                },
                {
                    let expanded_semantic = embed_rank(&query);
                    fuse_weighted(
                        &[(&lexical, 1.0), (&semantic, 1.0), (&expanded_semantic, 0.5)],
                        texts.len(),
                    )
                },
            ];
            for (method, order) in METHODS.iter().zip(orders) {
                let picked = pack(&order, &texts);
                let found = q.evidence.iter().filter(|e| picked.contains(e)).count();
                for kind in [q.kind, "overall"] {
                    let entry = tally.entry((method, kind)).or_default();
                    entry.0 += usize::from(found == q.evidence.len());
                    entry.1 += usize::from(found > 0);
                    entry.2 += 1;
                }
            }
        }
        for (method, swept) in ENGINE_METHODS.iter().zip([false, true]) {
            let results = engine_row::evaluate(conv, &texts, swept);
            for (q, (found, needed)) in conv.questions.iter().zip(results) {
                for kind in [q.kind, "overall"] {
                    let entry = tally.entry((method, kind)).or_default();
                    entry.0 += usize::from(found == needed);
                    entry.1 += usize::from(found > 0);
                    entry.2 += 1;
                }
            }
        }
    }
    let questions = tally[&("BM25", "overall")].2;
    println!(
        "{} conversations, {} turns, {} estimated tokens ({} per conversation on average), {} questions; evidence budget {} tokens",
        conversations.len(), total_turns, total_tokens, total_tokens / conversations.len(), questions, BUDGET_TOKENS
    );
    println!(
        "embedder {} ({} dims): {:.1} µs per turn (wall, whole set, machine shared)\n",
        embedder.name(),
        embedder.dim(),
        embed_ns as f64 / embedded as f64 / 1000.0
    );
    print!("| method | overall all / any |");
    for kind in kinds {
        let n = tally[&("BM25", kind)].2;
        print!(" {kind} ({n}) all / any |");
    }
    println!("\n|---|---|---|---|---|");
    for method in METHODS.iter().chain(ENGINE_METHODS) {
        let cell = |kind: &str| {
            let (all, any, n) = tally[&(*method, kind)];
            format!(
                "{:.1} % / {:.1} %",
                100.0 * all as f64 / n as f64,
                100.0 * any as f64 / n as f64
            )
        };
        print!("| {method} | {} |", cell("overall"));
        for kind in kinds {
            print!(" {} |", cell(kind));
        }
        println!();
    }
}
