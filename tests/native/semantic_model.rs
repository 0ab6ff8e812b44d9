//! Semantic recall with the embedder that ships in the package (`core::embed::default_embedder`,
//! the engine's default), on native SQLite: vectors are recorded under its name and dimension,
//! and a question that paraphrases a message — sharing none of its search terms — gets that
//! message as evidence, where lexical recall alone (`semanticRecall: false`) finds nothing.

use lossless_wasm::core::config::Config;
use lossless_wasm::engine::*;
use lossless_wasm::store::native::NativeSql;
use lossless_wasm::store::Sql;
use serde_json::{json, Value};

const KEY: &str = "agent:main:chat";

/// Each source, a paraphrase of it that shares none of the source's search terms.
const PAIRS: [(&str, &str); 3] = [
    (
        "We removed the exponential backoff loop from the uploader because it hid the timeouts from the pager.",
        "Why did we drop the retry wrapper?",
    ),
    (
        "The invoice totals were wrong because the currency conversion used yesterday's exchange rate.",
        "What caused the billing amounts to be incorrect?",
    ),
    (
        "My sister adopted a puppy last weekend, a small beagle called Pepper.",
        "Did anyone in my family get a new dog?",
    ),
];

fn engine(semantic: bool) -> Engine<NativeSql> {
    let config = Config::from_json(&json!({"semanticRecall": semantic})).unwrap();
    Engine::open(NativeSql::in_memory().unwrap(), config, 0).unwrap()
}

fn commit(e: &mut Engine<NativeSql>, t: usize, messages: Vec<Value>) {
    let p = decode("commitTurn", json!({"sessionId": "s", "sessionKey": KEY, "advancementKey": format!("t{t}"), "messages": messages})).unwrap();
    e.commit_turn(p, t as i64).unwrap();
}

/// A conversation of routine coding turns with the sources among them.
fn conversation(e: &mut Engine<NativeSql>) {
    let mut t = 0;
    for (i, (source, _)) in PAIRS.iter().enumerate() {
        for k in 0..15 {
            let n = i * 15 + k;
            commit(
                e,
                t,
                vec![
                    json!({"role": "user", "content": format!("Please run the linter on src/module_{n}.rs and fix the warnings it prints."), "timestamp": t}),
                    json!({"role": "assistant", "content": [{"type": "text", "text": format!("Done: module {n} is clean now, two unused imports removed.")}], "timestamp": t}),
                ],
            );
            t += 1;
        }
        commit(
            e,
            t,
            vec![
                json!({"role": "user", "content": source, "timestamp": t}),
                json!({"role": "assistant", "content": [{"type": "text", "text": "Noted."}], "timestamp": t}),
            ],
        );
        t += 1;
    }
}

fn source_id(e: &mut Engine<NativeSql>, source: &str) -> i64 {
    let rows = e
        .sql()
        .query("SELECT id, raw_json FROM messages ORDER BY id", &[])
        .unwrap();
    rows.iter()
        .find(|r| r.text(1).unwrap().contains(source))
        .map(|r| r.int(0).unwrap())
        .unwrap()
}

fn evidence_ids(e: &mut Engine<NativeSql>, question: &str) -> Vec<i64> {
    let p = decode(
        "ask",
        json!({"sessionId": "s", "sessionKey": KEY, "question": question}),
    )
    .unwrap();
    e.ask_start(p)
        .unwrap()
        .evidence
        .iter()
        .filter(|ev| ev.kind == "message")
        .map(|ev| ev.id)
        .collect()
}

#[test]
fn the_shipped_embedder_is_the_default_and_its_space_is_recorded() {
    let mut e = engine(true);
    conversation(&mut e);
    let space = e
        .sql()
        .query_row("SELECT embedder, dim FROM vector_space", &[])
        .unwrap()
        .unwrap();
    let embedder = e.embedder().expect("semantic recall is on by default");
    assert_eq!(
        space.text(0).unwrap(),
        lossless_wasm::store::vectors::space_name(embedder.name())
    );
    assert_eq!(space.int(1).unwrap(), embedder.dim() as i64);
    let messages = e
        .sql()
        .query_row("SELECT COUNT(*) FROM messages", &[])
        .unwrap()
        .unwrap()
        .int(0)
        .unwrap();
    let vectors = e
        .sql()
        .query_row("SELECT COUNT(*) FROM message_vectors", &[])
        .unwrap()
        .unwrap()
        .int(0)
        .unwrap();
    assert!(messages > 90);
    assert_eq!(
        vectors, messages,
        "every message has words, so every message has a vector"
    );
}

#[test]
fn a_paraphrase_finds_its_source_where_the_lexical_index_cannot() {
    let mut semantic = engine(true);
    let mut lexical = engine(false);
    conversation(&mut semantic);
    conversation(&mut lexical);
    for (source, question) in PAIRS {
        let id = source_id(&mut semantic, source);
        let found = evidence_ids(&mut semantic, question);
        assert!(
            found.contains(&id),
            "{question:?} -> {found:?}, wanted {id}"
        );
        let missed = evidence_ids(&mut lexical, question);
        assert!(
            !missed.contains(&source_id(&mut lexical, source)),
            "lexical recall found {question:?} after all: {missed:?}"
        );
        let p = decode("grep", json!({"sessionId": "s", "sessionKey": KEY, "pattern": question, "mode": "ranked", "limit": 3})).unwrap();
        let ranked = semantic.recall_grep(p).unwrap();
        assert!(
            ranked.hits.iter().any(|h| h.hit.id == id),
            "ranked grep {question:?}: {:?}",
            ranked.hits
        );
    }
}
