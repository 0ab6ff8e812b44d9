// The semantic index's tests, shared by semantic_native.rs (SQLite) and semantic_pg.rs
// (PostgreSQL): each defines `Db`, `open_db()` and `reopen_db(path)` and includes this file.
// Vectors are written with every message and summary a turn or a compaction stores, survive a
// restart, are backfilled (resumably) for stores that have none, are made again when the
// embedder changes, never let another agent's message become a candidate, and take any text.
//
// The embedder here is a test double with a tiny synonym table (the retrieval, the store and
// the fusion are the real ones); `semantic_model_native.rs` runs the shipped embedder.
use std::sync::Arc;

use lossless_wasm::core::config::Config;
use lossless_wasm::core::embed::Embedder;
use lossless_wasm::engine::compaction::CompactionStep;
use lossless_wasm::engine::*;
use lossless_wasm::store::Sql;
use serde_json::{json, Value};

const KEY: &str = "agent:main:chat";
const OTHER: &str = "agent:intruder:chat";
const DIM: usize = 48;

/// Words hashed into buckets, a few synonyms folded together first: enough meaning for a
/// paraphrase to land near its source, deterministic, and any text gives a vector.
struct Words(&'static str);

impl Embedder for Words {
    fn name(&self) -> &str {
        self.0
    }
    fn dim(&self) -> usize {
        DIM
    }
    fn embed(&self, text: &str) -> Vec<i8> {
        let mut sums = [0f32; DIM];
        for word in text.split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() > 2) {
            let word = word.to_lowercase();
            let word = match word.as_str() {
                "backoff" | "retries" => "retry",
                "loop" => "wrapper",
                "removed" | "dropped" | "drop" => "remove",
                "hid" | "hiding" => "hide",
                other => other,
            };
            let h = word.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
            sums[(h % DIM as u64) as usize] += 1.0;
        }
        let norm = sums.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm == 0.0 {
            return vec![0; DIM];
        }
        sums.iter().map(|x| (x / norm * 127.0).round() as i8).collect()
    }
}

fn config(extra: Value) -> Config {
    let mut c = json!({"freshTailCount": 4, "leafChunkTokens": 1000, "leafBudgetHeadroomFactor": 0, "leafSkipReductionThreshold": 0,
                       "condensedFanout": 2, "contextThreshold": 0.2});
    for (k, v) in extra.as_object().unwrap() {
        c[k] = v.clone();
    }
    Config::from_json(&c).unwrap()
}

fn with_words(mut e: Engine<Db>, name: &'static str) -> Engine<Db> {
    e.set_embedder(Some(Arc::new(Words(name)))).unwrap();
    e
}

/// An engine on the test double (opened with semantic recall off, so the shipped embedder never
/// records its space first).
fn engine() -> Engine<Db> {
    with_words(Engine::open(open_db(), config(json!({"semanticRecall": false})), 0).unwrap(), "words-a")
}

fn turn(e: &mut Engine<Db>, key: &str, t: usize, user: &str, reply: &str) {
    let ts = (t as i64) * 3_600_000;
    let messages = vec![
        json!({"role": "user", "content": user, "timestamp": ts}),
        json!({"role": "assistant", "content": [{"type": "text", "text": reply}], "timestamp": ts + 1}),
    ];
    let p = decode("commitTurn", json!({"sessionId": "s", "sessionKey": key, "advancementKey": format!("{key}-{t}"), "messages": messages})).unwrap();
    e.commit_turn(p, ts).unwrap();
}

fn filler(e: &mut Engine<Db>, key: &str, from: usize, turns: usize) {
    for t in from..from + turns {
        turn(e, key, t, &format!("Routine status {t}: the build of crate {t} is green. {}", "context ".repeat(30)), &format!("Noted, turn {t}. {}", "ok ".repeat(30)));
    }
}

fn sweep(e: &mut Engine<Db>, key: &str) {
    let p = decode("compactionStart", json!({"sessionId": "s", "sessionKey": key, "mode": "sweep", "summarizer": "extractive", "tokenBudget": 3000})).unwrap();
    match e.compaction_start(p, 5_000).unwrap() {
        CompactionStep::Done(report) => assert!(report.ok, "{report:?}"),
        CompactionStep::NeedSummary(_) => panic!("the extractive summarizer needs no LLM"),
    }
}

fn count(e: &mut Engine<Db>, q: &str) -> i64 {
    e.sql().query_row(q, &[]).unwrap().unwrap().int(0).unwrap()
}

fn ask(e: &mut Engine<Db>, key: &str, extra: Value) -> AskStart {
    let mut p = json!({"sessionId": "s", "sessionKey": key});
    for (k, v) in extra.as_object().unwrap() {
        p[k] = v.clone();
    }
    e.ask_start(decode("ask", p).unwrap()).unwrap()
}

fn grep(e: &mut Engine<Db>, key: &str, extra: Value) -> GrepResult {
    let mut p = json!({"sessionId": "s", "sessionKey": key});
    for (k, v) in extra.as_object().unwrap() {
        p[k] = v.clone();
    }
    e.recall_grep(decode("grep", p).unwrap()).unwrap()
}

fn backfill_all(e: &mut Engine<Db>) -> usize {
    let mut total = 0;
    loop {
        let n = e.backfill_vectors().unwrap();
        if n == 0 {
            return total;
        }
        total += n;
    }
}

fn temp_path(name: &str) -> String {
    let dir = std::env::temp_dir().join(format!("lossless-wasm-semantic-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    path.to_str().unwrap().to_owned()
}

#[test]
fn every_message_and_summary_gets_its_vector_in_the_write_that_stores_it() {
    let mut e = engine();
    e.assemble(decode("assemble", json!({"sessionId": "s", "sessionKey": KEY, "tokenBudget": 3000})).unwrap(), 1).unwrap();
    filler(&mut e, KEY, 0, 12);
    sweep(&mut e, KEY);
    let messages = count(&mut e, "SELECT COUNT(*) FROM messages");
    let summaries = count(&mut e, "SELECT COUNT(*) FROM summaries");
    assert!(messages >= 24 && summaries > 0, "{messages} messages, {summaries} summaries stored");
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM message_vectors"), messages, "a vector per message, without a backfill");
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM summary_vectors"), summaries, "a vector per summary");
    assert_eq!(
        count(&mut e, &format!("SELECT COUNT(*) FROM message_vectors WHERE length(vector) = {}", DIM.div_ceil(2))),
        messages,
        "four bits a component (core::embed::packing)"
    );
    assert_eq!(
        count(&mut e, "SELECT COUNT(*) FROM message_vectors v JOIN messages m ON m.id = v.message_id AND m.conversation_id = v.conversation_id"),
        messages,
        "each vector names its message's conversation"
    );
    let space = e.sql().query_row("SELECT embedder, dim FROM vector_space", &[]).unwrap().unwrap();
    assert_eq!((space.text(0).unwrap(), space.int(1).unwrap()), ("words-a/q4".to_owned(), DIM as i64));
    assert_eq!(e.backfill_vectors().unwrap(), 0, "nothing left for the backfill");
}

#[test]
fn an_interrupted_backfill_resumes_where_it_stopped_and_the_index_survives_a_restart() {
    let path = temp_path("backfill.sqlite");
    {
        // A store written with semantic recall off: messages, no vectors.
        let mut e = Engine::open(reopen_db(&path), config(json!({"semanticRecall": false})), 0).unwrap();
        filler(&mut e, KEY, 0, 150);
        assert_eq!(count(&mut e, "SELECT COUNT(*) FROM messages"), 300);
        assert_eq!(count(&mut e, "SELECT COUNT(*) FROM message_vectors"), 0);
        assert_eq!(e.backfill_vectors().unwrap(), 0, "no embedder, no backfill");
    }
    {
        let mut e = with_words(Engine::open(reopen_db(&path), config(json!({"semanticRecall": false})), 0).unwrap(), "words-a");
        let first = e.backfill_vectors().unwrap();
        assert!(first > 0 && first < 300, "one bounded batch: {first}");
        assert_eq!(count(&mut e, "SELECT COUNT(*) FROM message_vectors"), first as i64);
        assert!(e.vectors_waiting().unwrap(), "the rest waits, and vectors_waiting says so");
        // The process ends here: the batch committed, the rest waits.
    }
    let mut e = with_words(Engine::open(reopen_db(&path), config(json!({"semanticRecall": false})), 0).unwrap(), "words-a");
    let rest = backfill_all(&mut e);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM message_vectors"), 300, "{rest} more after the restart");
    assert!(!e.vectors_waiting().unwrap(), "nothing waits once the backfill is done");
    assert!(rest < 300, "the restart went on from the stored position: {rest}");
    assert_eq!(
        count(&mut e, "SELECT COUNT(*) FROM messages m WHERE NOT EXISTS (SELECT 1 FROM message_vectors v WHERE v.message_id = m.id)"),
        0
    );
    drop(e);
    let mut e = with_words(Engine::open(reopen_db(&path), config(json!({"semanticRecall": false})), 0).unwrap(), "words-a");
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM message_vectors"), 300, "the index survives a restart");
    assert_eq!(e.backfill_vectors().unwrap(), 0, "and is not made again");
}

#[test]
fn another_embedder_drops_the_old_vectors_and_the_backfill_makes_them_again() {
    let mut e = engine();
    e.assemble(decode("assemble", json!({"sessionId": "s", "sessionKey": KEY, "tokenBudget": 3000})).unwrap(), 1).unwrap();
    filler(&mut e, KEY, 0, 12);
    sweep(&mut e, KEY);
    let messages = count(&mut e, "SELECT COUNT(*) FROM messages");
    let summaries = count(&mut e, "SELECT COUNT(*) FROM summaries");
    let before: Vec<u8> = match &e.sql().query_row("SELECT vector FROM message_vectors ORDER BY message_id LIMIT 1", &[]).unwrap().unwrap().0[0] {
        lossless_wasm::store::SqlValue::Blob(b) => b.clone(),
        other => panic!("a vector is a blob: {other:?}"),
    };
    let mut e = with_words(e, "words-b");
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM message_vectors"), 0, "no vector of the old space is kept");
    assert_eq!(e.sql().query_row("SELECT embedder FROM vector_space", &[]).unwrap().unwrap().text(0).unwrap(), "words-b/q4");
    let made = backfill_all(&mut e);
    assert_eq!(made as i64, messages + summaries);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM message_vectors"), messages);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM summary_vectors"), summaries);
    let after: Vec<u8> = match &e.sql().query_row("SELECT vector FROM message_vectors ORDER BY message_id LIMIT 1", &[]).unwrap().unwrap().0[0] {
        lossless_wasm::store::SqlValue::Blob(b) => b.clone(),
        other => panic!("a vector is a blob: {other:?}"),
    };
    assert_eq!(before, after, "the same text, the same vector (this double's space differs only by name)");
}

#[test]
fn a_store_of_one_byte_a_component_is_made_again_at_four_bits_and_found_by_meaning() {
    let mut e = engine();
    turn(&mut e, KEY, 0, SOURCE, "Noted.");
    filler(&mut e, KEY, 1, 6);
    let messages = count(&mut e, "SELECT COUNT(*) FROM messages");
    // What a release before the four-bit format left: its embedder's name without the format,
    // and one byte a component.
    e.sql().execute("UPDATE vector_space SET embedder = 'words-a', backfilled_through = 0", &[]).unwrap();
    e.sql().execute("UPDATE message_vectors SET vector = ?1", &[lossless_wasm::store::SqlValue::Blob(vec![0; DIM])]).unwrap();
    let mut e = with_words(e, "words-a");
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM message_vectors"), 0, "the old format is dropped, never misread");
    assert_eq!(backfill_all(&mut e) as i64, messages + count(&mut e, "SELECT COUNT(*) FROM summaries"));
    assert_eq!(
        count(&mut e, &format!("SELECT COUNT(*) FROM message_vectors WHERE length(vector) = {}", DIM.div_ceil(2))),
        messages
    );
    let source = count(&mut e, &format!("SELECT id FROM messages WHERE raw_json LIKE '%{}%'", "backoff loop yesterday"));
    let found = ask(&mut e, KEY, json!({"question": PARAPHRASE}));
    assert!(found.evidence.iter().any(|ev| ev.kind == "message" && ev.id == source), "the paraphrase finds its source again: {:?}", found.evidence);
}

const SOURCE: &str = "We removed the backoff loop yesterday: it hid the timeouts from the pager.";
const PARAPHRASE: &str = "Why did we drop the retry wrapper?";

#[test]
fn a_turn_whose_embedding_is_deferred_is_found_by_meaning_before_and_after_its_backfill() {
    let mut e = engine();
    e.defer_turn_embedding();
    filler(&mut e, KEY, 0, 10);
    turn(&mut e, KEY, 10, SOURCE, "Understood.");
    let messages = count(&mut e, "SELECT COUNT(*) FROM messages");
    let source_id = count(&mut e, &format!("SELECT id FROM messages WHERE raw_json LIKE '%{}%'", "backoff loop"));
    assert!(messages >= 22 && source_id > 0, "{messages} messages stored");
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM message_vectors"), 0, "the turns left their vectors for later");
    assert_eq!(e.index_search_batch().unwrap(), 0);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM message_vectors"), 0, "maintain's upkeep leaves them to the caller");
    // A recall before the caller's backfill embeds what waits first.
    let ranked = grep(&mut e, KEY, json!({"pattern": "retry wrapper dropped", "mode": "ranked", "limit": 5}));
    assert_eq!(ranked.hits.first().map(|h| h.hit.id), Some(source_id), "ranked grep puts it first: {:?}", ranked.hits);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM message_vectors"), messages, "the recall embedded the waiting messages");
    // The next turn's vectors come from the caller's backfill, the same as a write would make.
    turn(&mut e, KEY, 11, "The pager now shows every timeout of the uploader.", "Good.");
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM message_vectors"), messages);
    assert_eq!(e.backfill_vectors().unwrap(), 2);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM message_vectors"), messages + 2);
    let found = ask(&mut e, KEY, json!({"question": PARAPHRASE}));
    assert!(found.evidence.iter().any(|ev| ev.kind == "message" && ev.id == source_id), "the source is evidence: {:?}", found.evidence);
}

#[test]
fn a_paraphrase_reaches_the_evidence_through_the_semantic_index_and_not_without_it() {
    let mut e = engine();
    filler(&mut e, KEY, 0, 20);
    turn(&mut e, KEY, 20, SOURCE, "Understood.");
    filler(&mut e, KEY, 21, 20);
    let source_id = count(&mut e, &format!("SELECT id FROM messages WHERE raw_json LIKE '%{}%'", "backoff loop"));
    let found = ask(&mut e, KEY, json!({"question": PARAPHRASE}));
    assert!(!found.evidence.is_empty(), "{:?}", found.terms);
    assert!(found.evidence.iter().any(|ev| ev.kind == "message" && ev.id == source_id), "the source is evidence: {:?}", found.evidence);
    let ranked = grep(&mut e, KEY, json!({"pattern": "retry wrapper dropped", "mode": "ranked", "limit": 5}));
    assert_eq!(ranked.hits.first().map(|h| h.hit.id), Some(source_id), "ranked grep puts it first: {:?}", ranked.hits);
    let literal = grep(&mut e, KEY, json!({"pattern": "retry wrapper"}));
    assert!(literal.hits.is_empty(), "the words are not in it: {:?}", literal.hits);

    e.set_embedder(None).unwrap();
    let lexical = ask(&mut e, KEY, json!({"question": PARAPHRASE}));
    assert!(!lexical.evidence.iter().any(|ev| ev.id == source_id), "lexical recall alone misses it: {:?}", lexical.evidence);
}

#[test]
fn a_time_phrase_puts_the_periods_nearest_message_ahead_of_a_nearer_one_outside_it() {
    let mut e = engine();
    // Hour 2 (day 0): the closest match; hour 40 (day 1, the newest day): a weaker one.
    filler(&mut e, KEY, 0, 2);
    turn(&mut e, KEY, 2, SOURCE, "Understood.");
    filler(&mut e, KEY, 3, 37);
    turn(&mut e, KEY, 40, "The backoff loop of the uploader changed again.", "Noted.");
    filler(&mut e, KEY, 41, 4);
    let older = count(&mut e, &format!("SELECT id FROM messages WHERE raw_json LIKE '%{}%'", "backoff loop yesterday"));
    let today = count(&mut e, &format!("SELECT id FROM messages WHERE raw_json LIKE '%{}%'", "uploader changed"));
    let ids = |q: &str, e: &mut Engine<Db>| grep(e, KEY, json!({"pattern": q, "mode": "ranked", "limit": 50})).hits.iter().map(|h| h.hit.id).collect::<Vec<_>>();
    let plain = ids("why did we drop the retry wrapper", &mut e);
    let (o, t) = (plain.iter().position(|&id| id == older), plain.iter().position(|&id| id == today));
    assert!(o.is_some() && t.is_some() && o < t, "without a time phrase the nearer message ranks first: {plain:?} (older {older}, today's {today})");
    let dated = ids("why did we drop the retry wrapper today", &mut e);
    assert_eq!(dated.first(), Some(&today), "today's candidate first: {dated:?}");
    assert!(dated.contains(&older), "the older one is still a candidate: {dated:?}");
}

#[test]
fn the_semantic_index_proposes_candidates_until_the_evidence_budget_is_full() {
    let mut e = engine();
    // Sixty short messages near the question in meaning, none sharing a search term with it.
    for t in 0..60 {
        turn(&mut e, KEY, t, &format!("We removed backoff loop number {t}; it hid timeouts."), "Understood.");
    }
    let found = ask(&mut e, KEY, json!({"question": PARAPHRASE, "maxEvidenceTokens": 2000}));
    let similar = found.evidence.iter().filter(|ev| ev.kind == "message" && ev.text.contains("backoff loop number")).count();
    assert!(similar >= 30, "well past the 16 nearest: {similar} of {} items, {} tokens", found.evidence.len(), found.evidence_tokens);
    assert!(found.evidence_tokens <= 2000, "{} tokens", found.evidence_tokens);
    assert!(found.left_out > 0 || found.evidence_tokens > 1500, "the budget is full: {} tokens, {} left out", found.evidence_tokens, found.left_out);
}

/// Every text the same vector: a semantic index that tells nothing apart, so what a recall finds
/// beyond the question's words it finds lexically.
struct Flat;

impl Embedder for Flat {
    fn name(&self) -> &str {
        "flat"
    }
    fn dim(&self) -> usize {
        DIM
    }
    fn embed(&self, _text: &str) -> Vec<i8> {
        vec![18; DIM]
    }
}

#[test]
fn a_name_the_first_rounds_evidence_says_brings_the_second_fact_of_a_multi_hop_question() {
    let mut e = Engine::open(open_db(), config(json!({"semanticRecall": false})), 0).unwrap();
    e.set_embedder(Some(Arc::new(Flat))).unwrap();
    filler(&mut e, KEY, 0, 5);
    turn(&mut e, KEY, 5, "My best friend Dmitri signed up for the Boston marathon.", "Good luck to him!");
    filler(&mut e, KEY, 6, 30);
    turn(&mut e, KEY, 36, "Dmitri finished in under four hours!", "Wow.");
    filler(&mut e, KEY, 37, 30);
    let id = |e: &mut Engine<Db>, text: &str| count(e, &format!("SELECT id FROM messages WHERE raw_json LIKE '%{text}%'"));
    let (first, second) = (id(&mut e, "signed up for the Boston"), id(&mut e, "finished in under four"));
    let question = "How did my friend do in the Boston marathon?";
    let sent = |e: &mut Engine<Db>, second_round: bool| -> Vec<i64> {
        ask(e, KEY, json!({"question": question, "maxEvidenceTokens": 500, "secondRound": second_round})).evidence.iter().map(|ev| ev.id).collect()
    };
    let one = sent(&mut e, false);
    assert!(one.contains(&first) && !one.contains(&second), "one round finds the first fact only: {one:?} (first {first}, second {second})");
    let two = sent(&mut e, true);
    assert!(two.contains(&first) && two.contains(&second), "the name it says brings the second: {two:?} (first {first}, second {second})");
}

#[test]
fn no_other_agents_message_is_ever_a_semantic_candidate() {
    let mut e = engine();
    filler(&mut e, KEY, 0, 6);
    // The other agent holds the very text the question paraphrases; ours holds a weaker match.
    turn(&mut e, OTHER, 0, SOURCE, "Understood, the retry wrapper is gone.");
    turn(&mut e, KEY, 6, "The retry wrapper around the pager was noisy this week.", "Noted.");
    let ours: Vec<i64> = e.sql().query("SELECT id FROM conversations WHERE session_key = ?1", &[KEY.into()]).unwrap().iter().map(|r| r.int(0).unwrap()).collect();
    for scope in ["conversation", "agent"] {
        let found = ask(&mut e, KEY, json!({"question": PARAPHRASE, "scope": scope}));
        assert!(!found.evidence.is_empty(), "something in reach was found ({scope})");
        assert!(found.evidence.iter().all(|ev| ours.contains(&ev.conversation_id)), "{scope}: {:?}", found.evidence);
        let ranked = grep(&mut e, KEY, json!({"pattern": PARAPHRASE, "mode": "ranked", "scope": scope}));
        assert!(!ranked.hits.is_empty(), "ranked grep found something in reach ({scope})");
        assert!(ranked.hits.iter().all(|h| ours.contains(&h.hit.conversation_id)), "{scope}: {:?}", ranked.hits);
    }
    // The intruder's own question finds its own message, so the index did hold it.
    let theirs = ask(&mut e, OTHER, json!({"question": PARAPHRASE}));
    assert!(theirs.evidence.iter().all(|ev| !ours.contains(&ev.conversation_id)) && !theirs.evidence.is_empty());
}

#[test]
fn empty_huge_binary_looking_and_many_language_texts_are_embedded_and_searched_without_error() {
    let mut e = engine();
    let languages = [
        "Der Wiederholungsversuch wurde entfernt", "La boucle de relance a été supprimée", "Se eliminó el bucle de reintentos",
        "重试循环已被删除", "再試行ループは削除されました", "재시도 루프가 제거되었습니다", "Цикл повторных попыток удалён",
        "تمت إزالة حلقة إعادة المحاولة", "הלולאה הוסרה", "पुनः प्रयास लूप हटा दिया गया", "ลบลูปการลองใหม่แล้ว", "Η επανάληψη αφαιρέθηκε",
        "Yeniden deneme döngüsü kaldırıldı", "Đã xóa vòng lặp thử lại", "🔁❌✅", "ሙከራው ተወግዷል",
    ];
    let huge = "x".repeat(1_000_000);
    let binary = "\u{0}\u{1}\u{7f}\u{fffd}\u{200b}\u{feff}%_*\"' OR 1=1; --".repeat(50);
    let texts: Vec<String> = [" ", "\n\t", huge.as_str(), binary.as_str()].iter().map(|s| s.to_string()).chain(languages.iter().map(|s| s.to_string())).collect();
    for (t, text) in texts.iter().enumerate() {
        turn(&mut e, KEY, t, text, text);
    }
    let messages = count(&mut e, "SELECT COUNT(*) FROM messages");
    assert_eq!(messages, 2 * texts.len() as i64);
    // Texts without words (whitespace; for this double the binary-looking one and the emoji) embed as nothing:
    // no vector is stored for them; every other text has one.
    let vectors = count(&mut e, "SELECT COUNT(*) FROM message_vectors");
    assert!(vectors >= messages - 8 && vectors < messages, "{vectors} of {messages}: the ones without words have none");
    assert_eq!(e.backfill_vectors().unwrap() as i64, messages - vectors, "the backfill looks at them once");
    assert_eq!(e.backfill_vectors().unwrap(), 0, "and not again");
    for text in &texts {
        let question: String = text.chars().take(1_500).collect();
        let p = decode("ask", json!({"sessionId": "s", "sessionKey": KEY, "question": question}));
        if let Ok(p) = p {
            match e.ask_start(p) {
                Ok(start) => assert!(start.prompt.is_some() || start.answer.is_some()),
                Err(err) => assert!(err.to_string().contains("question"), "only a question error: {err}"),
            }
        }
        let pattern: String = text.chars().take(500).collect();
        let p = decode("grep", json!({"sessionId": "s", "sessionKey": KEY, "pattern": pattern, "mode": "ranked"})).unwrap();
        match e.recall_grep(p) {
            Ok(_) => {}
            Err(err) => assert!(err.to_string().contains("pattern"), "only a pattern error: {err}"),
        }
    }
    let found = ask(&mut e, KEY, json!({"question": "重试循环"}));
    assert!(!found.evidence.is_empty(), "CJK text is found");
}
