// The recall tests, shared by recall_native.rs (SQLite) and recall_pg.rs (PostgreSQL): each
// defines `Db` (the connection type) and `open_db()` (a fresh, empty store) and includes this file.
use std::collections::BTreeSet;

use lossless_wasm::core::config::Config;
use lossless_wasm::engine::compaction::CompactionStep;
use lossless_wasm::engine::*;
use lossless_wasm::store::Sql;
use serde_json::{json, Value};

const KEY: &str = "agent:main:chat";
const OTHER: &str = "agent:intruder:chat";

fn engine() -> Engine<Db> {
    let config = json!({"freshTailCount": 4, "leafChunkTokens": 1000, "leafBudgetHeadroomFactor": 0, "leafSkipReductionThreshold": 0,
                        "condensedFanout": 2, "contextThreshold": 0.2});
    Engine::open(open_db(), Config::from_json(&config).unwrap(), 0).unwrap()
}

fn turn(e: &mut Engine<Db>, key: &str, t: usize, user_text: &str) {
    let ts = (t * 10) as i64;
    let messages = vec![
        json!({"role": "user", "content": user_text, "timestamp": ts}),
        json!({"role": "assistant", "content": [{"type": "text", "text": format!("Noted, turn {t}. {}", "ok ".repeat(40))}], "timestamp": ts + 1}),
    ];
    let p = decode("commitTurn", json!({"sessionId": "s", "sessionKey": key, "advancementKey": format!("{key}-{t}"), "messages": messages})).unwrap();
    e.commit_turn(p, ts).unwrap();
}

fn sweep(e: &mut Engine<Db>, key: &str) {
    let p = decode("compactionStart", json!({"sessionId": "s", "sessionKey": key, "mode": "sweep", "summarizer": "extractive", "tokenBudget": 3000})).unwrap();
    match e.compaction_start(p, 5_000).unwrap() {
        CompactionStep::Done(report) => assert!(report.ok, "{report:?}"),
        CompactionStep::NeedSummary(_) => panic!("the extractive summarizer needs no LLM"),
    }
}

/// A conversation of `turns` turns, each user message carrying a unique fact, then compacted.
fn planted(e: &mut Engine<Db>, key: &str, turns: usize) {
    e.assemble(decode("assemble", json!({"sessionId": "s", "sessionKey": key, "tokenBudget": 3000})).unwrap(), 1).unwrap();
    for t in 0..turns {
        turn(e, key, t, &format!("Fact {t}: the code word for crate {t} is zq{t}x. {}", "context ".repeat(40)));
        if t % 10 == 9 {
            sweep(e, key);
        }
    }
}

fn grep(e: &mut Engine<Db>, key: &str, extra: Value) -> lossless_wasm::engine::GrepResult {
    let mut p = json!({"sessionId": "s", "sessionKey": key});
    for (k, v) in extra.as_object().unwrap() {
        p[k] = v.clone();
    }
    e.recall_grep(decode("grep", p).unwrap()).unwrap()
}

fn target(key: &str, extra: Value) -> RecallTarget {
    let mut p = json!({"sessionId": "s", "sessionKey": key});
    for (k, v) in extra.as_object().unwrap() {
        p[k] = v.clone();
    }
    decode("expand", p).unwrap()
}

fn ask(key: &str, extra: Value) -> AskParams {
    let mut p = json!({"sessionId": "s", "sessionKey": key});
    for (k, v) in extra.as_object().unwrap() {
        p[k] = v.clone();
    }
    decode("ask", p).unwrap()
}

fn ids(e: &mut Engine<Db>, q: &str) -> Vec<i64> {
    e.sql().query(q, &[]).unwrap().iter().map(|r| r.int(0).unwrap()).collect()
}

/// Every message reachable from the current view: its raw messages, plus everything `expand`
/// yields below its summaries, following cursors and recursing into child summaries.
fn reachable(e: &mut Engine<Db>, key: &str, max_tokens: u32) -> BTreeSet<i64> {
    let conv = ids(e, &format!("SELECT id FROM conversations WHERE session_key = '{key}' AND status = 'active'"))[0];
    let mut found: BTreeSet<i64> = ids(e, &format!("SELECT message_id FROM context_items WHERE conversation_id = {conv} AND message_id IS NOT NULL")).into_iter().collect();
    let mut stack = ids(e, &format!("SELECT summary_id FROM context_items WHERE conversation_id = {conv} AND summary_id IS NOT NULL"));
    while let Some(id) = stack.pop() {
        let mut cursor: Option<String> = None;
        loop {
            let page = e.recall_expand(target(key, json!({"summaryId": id, "cursor": cursor, "maxTokens": max_tokens}))).unwrap();
            assert!(page.tokens <= page.max_tokens, "a page stays under its limit: {} > {}", page.tokens, page.max_tokens);
            assert!(!page.items.is_empty() || page.total == 0, "every page makes progress");
            for item in &page.items {
                match item.kind {
                    "summary" => stack.push(item.id),
                    _ => {
                        found.insert(item.id);
                    }
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

#[test]
fn every_message_summarized_away_is_reached_by_expand_from_the_view_and_found_by_grep() {
    let mut e = engine();
    planted(&mut e, KEY, 40);
    let summaries = ids(&mut e, "SELECT COUNT(*) FROM summaries WHERE depth >= 1")[0];
    assert!(summaries >= 1, "the sweeps built condensed summaries");
    let all: BTreeSet<i64> = ids(&mut e, "SELECT id FROM messages").into_iter().collect();
    assert_eq!(all.len(), 80);
    assert_eq!(reachable(&mut e, KEY, 4_000), all);
    assert_eq!(reachable(&mut e, KEY, 200), all, "small pages reach the same messages");
    for t in 0..40 {
        let result = grep(&mut e, KEY, json!({"pattern": format!("zq{t}x")}));
        let hit = result.hits.iter().find(|h| h.hit.kind == "message").unwrap_or_else(|| panic!("fact {t} found: {result:?}"));
        assert!(hit.hit.snippet.contains(&format!("zq{t}x")));
        if !hit.in_view {
            let cover = hit.covered_by.unwrap_or_else(|| panic!("fact {t} is in the view or under a summary in it"));
            let above = e.recall_describe(target(KEY, json!({"messageId": hit.hit.id}))).unwrap();
            let Description::Message { summaries, .. } = above else { panic!("a message description") };
            assert!(summaries.iter().any(|s| s.id == cover && s.in_view));
        }
    }
}

#[test]
fn describe_reports_level_depth_children_and_the_range_a_summary_covers() {
    let mut e = engine();
    planted(&mut e, KEY, 40);
    let deep = ids(&mut e, "SELECT id FROM summaries WHERE depth >= 1 ORDER BY id LIMIT 1")[0];
    let d = e.recall_describe(target(KEY, json!({"summaryId": format!("sum_{deep}")}))).unwrap();
    let Description::Summary { depth, level, children, covered_messages, first_seq, last_seq, kind, .. } = d else { panic!("summary") };
    assert!(depth >= 1);
    assert_eq!(kind, "condensed");
    assert_eq!(level, "normal");
    assert!(children.len() >= 2);
    assert!(covered_messages >= 2);
    let (first, last) = (first_seq.unwrap(), last_seq.unwrap());
    assert_eq!(last - first + 1, covered_messages, "a summary covers a contiguous range");
    let leaf = children[0].id;
    let page = e.recall_expand(target(KEY, json!({"summaryId": leaf}))).unwrap();
    assert_eq!(page.listing, "children");
    assert!(page.items.iter().all(|i| i.kind == "message"), "a leaf's children are original messages");
    assert!(page.items[0].content.contains("Fact "), "{:?}", page.items[0]);
}

#[test]
fn expand_pages_stay_under_the_enforced_limit_and_one_long_message_is_read_in_chunks() {
    let mut e = engine();
    e.assemble(decode("assemble", json!({"sessionId": "s", "sessionKey": KEY, "tokenBudget": 3000})).unwrap(), 1).unwrap();
    let long = format!("START {} END", "长文本🙂 ".repeat(8000));
    turn(&mut e, KEY, 0, &long);
    let id = ids(&mut e, "SELECT id FROM messages WHERE seq = 1")[0];
    let mut text = String::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        // Asking for more than the maximum gets the maximum.
        let page = e.recall_expand(target(KEY, json!({"messageId": id, "cursor": cursor, "maxTokens": 1_000_000}))).unwrap();
        assert_eq!(page.max_tokens, EXPAND_MAX_TOKENS);
        assert!(page.tokens <= EXPAND_MAX_TOKENS);
        text.push_str(&page.items[0].content);
        pages += 1;
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert!(pages >= 2, "the message needed several pages");
    assert_eq!(text, long, "the pages join into the original text");
    let bad = e.recall_expand(target(KEY, json!({"messageId": id, "cursor": "abc"}))).unwrap_err().to_string();
    assert!(bad.contains("cursor"), "{bad}");
}

#[test]
fn one_agent_never_reads_another_agents_conversations_whatever_it_passes() {
    let mut e = engine();
    planted(&mut e, KEY, 20);
    planted(&mut e, OTHER, 20);
    let foreign_summary = ids(&mut e, &format!("SELECT s.id FROM summaries s JOIN conversations c ON c.id = s.conversation_id WHERE c.session_key = '{KEY}' LIMIT 1"))[0];
    let foreign_message = ids(&mut e, &format!("SELECT m.id FROM messages m JOIN conversations c ON c.id = m.conversation_id WHERE c.session_key = '{KEY}' LIMIT 1"))[0];
    let missing = 999_999;
    for (field, id) in [("summaryId", foreign_summary), ("messageId", foreign_message)] {
        let denied = e.recall_describe(target(OTHER, json!({field: id}))).unwrap_err().to_string();
        let absent = e.recall_describe(target(OTHER, json!({field: missing}))).unwrap_err().to_string();
        assert_eq!(denied.replace(&id.to_string(), "N"), absent.replace(&missing.to_string(), "N"), "denied looks like absent");
        assert!(e.recall_expand(target(OTHER, json!({field: id}))).is_err());
        // Odd shapes fail too, at decoding or at the scope check, never with the foreign rows.
        let odd: lossless_wasm::Result<RecallTarget> = decode("expand", json!({"sessionId": "s", "sessionKey": OTHER, field: id.to_string(), "messages": true}));
        assert!(odd.map_or(true, |t| e.recall_expand(t).is_err()));
    }
    for scope in ["conversation", "agent", "all"] {
        let result = grep(&mut e, OTHER, json!({"pattern": "code word", "scope": scope, "limit": 200}));
        assert!(!result.hits.is_empty());
        let allowed: BTreeSet<i64> = ids(&mut e, &format!("SELECT id FROM conversations WHERE session_key = '{OTHER}'")).into_iter().collect();
        assert!(result.hits.iter().all(|h| allowed.contains(&h.hit.conversation_id)), "scope {scope}");
    }
    // lcm_ask: the other agent's question about main's facts finds nothing of main's, in any
    // scope; main's summary named by id is refused like an unknown one.
    for scope in ["conversation", "agent"] {
        let start = e.ask_start(ask(OTHER, json!({"question": "what is the code word for crate zq3x?", "scope": scope}))).unwrap();
        // OTHER planted the same sentences in its own history: those, and only those, come back.
        let own: BTreeSet<i64> = ids(&mut e, &format!("SELECT id FROM conversations WHERE session_key = '{OTHER}'")).into_iter().collect();
        assert!(!start.evidence.is_empty(), "scope {scope}: its own history answers");
        assert!(start.evidence.iter().all(|ev| own.contains(&ev.conversation_id)), "scope {scope}: {:?}", start.evidence);
    }
    let denied = e.ask_start(ask(OTHER, json!({"question": "what does it say?", "summaryIds": [foreign_summary]}))).unwrap_err().to_string();
    assert!(denied.contains(&format!("no summary {foreign_summary} in this agent's history")), "{denied}");
    let own = e.ask_start(ask(KEY, json!({"question": "what is the code word for crate 3?", "pattern": "zq3x"}))).unwrap();
    assert!(own.prompt.unwrap_or_default().contains("zq3x"), "the owner's own question does reach it");

    // A session with no conversation of its own finds nothing, never everything.
    let stranger = grep(&mut e, "agent:nobody:x", json!({"pattern": "code word", "scope": "agent"}));
    assert!(stranger.hits.is_empty());
    let keyless = grep(&mut e, "plain-key", json!({"pattern": "code word", "scope": "all"}));
    assert!(keyless.hits.is_empty());
    // A sub-agent of main reads main's history.
    let sub = grep(&mut e, "agent:main:subagent:42", json!({"pattern": "zq3x", "scope": "agent"}));
    assert!(!sub.hits.is_empty());
}

#[test]
fn grep_treats_syntax_as_text_finds_cjk_and_emoji_and_rejects_bad_full_text_clearly() {
    let mut e = engine();
    e.assemble(decode("assemble", json!({"sessionId": "s", "sessionKey": KEY, "tokenBudget": 3000})).unwrap(), 1).unwrap();
    turn(&mut e, KEY, 0, "部署计划：周五静默发布 🚀 then run `a OR b* NEAR(c)` and \"quoted\" % _ stuff");
    turn(&mut e, KEY, 1, "nothing to see");
    for pattern in ["静默发布", "🚀", "a OR b* NEAR(c)", "\"quoted\"", "% _"] {
        let result = grep(&mut e, KEY, json!({"pattern": pattern}));
        assert_eq!(result.hits.len(), 1, "{pattern}: {result:?}");
    }
    assert!(grep(&mut e, KEY, json!({"pattern": "OR"})).hits.iter().all(|h| h.hit.snippet.contains("OR")));
    let err = e.recall_grep(decode("grep", json!({"sessionId": "s", "sessionKey": KEY, "pattern": "\"unbalanced", "mode": "full_text"})).unwrap());
    let err = err.unwrap_err().to_string();
    assert!(err.contains("pattern") && err.contains("invalid full-text query"), "{err}");
    let err = e.recall_grep(decode("grep", json!({"sessionId": "s", "sessionKey": KEY, "pattern": "x", "scope": "everyone"})).unwrap()).unwrap_err();
    assert!(err.to_string().contains("scope"), "{err}");
}

#[test]
fn a_literal_pattern_also_finds_the_start_of_a_longer_word() {
    let mut e = engine();
    e.assemble(decode("assemble", json!({"sessionId": "s", "sessionKey": KEY, "tokenBudget": 3000})).unwrap(), 1).unwrap();
    turn(&mut e, KEY, 0, "the deployment of the parser went well");
    turn(&mut e, KEY, 1, "nothing to see");
    for pattern in ["deployment", "deploym", "pars", "of the pars", "DEPLOY", "parser went"] {
        let result = grep(&mut e, KEY, json!({"pattern": pattern}));
        let texts: Vec<&str> = result.hits.iter().map(|h| h.hit.snippet.as_str()).collect();
        assert_eq!(texts.len(), 1, "{pattern}: {texts:?}");
        assert!(texts[0].contains("deployment of the parser"), "{pattern}: {texts:?}");
    }
    assert!(grep(&mut e, KEY, json!({"pattern": "parsers"})).hits.is_empty(), "a longer pattern is not found in a shorter word");
}

/// The word rule holds for summaries as for messages, on every backend: `Error` is not found in
/// "TypeError" (PostgreSQL's trigram index finds it there; the confirmation drops it), and
/// `parser` is found in "my_parser".
#[test]
fn a_literal_pattern_starts_at_a_word_in_messages_and_summaries_alike() {
    let mut e = engine();
    e.assemble(decode("assemble", json!({"sessionId": "s", "sessionKey": KEY, "tokenBudget": 3000})).unwrap(), 1).unwrap();
    for t in 0..10 {
        turn(&mut e, KEY, t, &format!("Turn {t}: the build raised TypeError in my_parser, okay. {}", "context ".repeat(40)));
    }
    sweep(&mut e, KEY);
    let kinds = |e: &mut Engine<Db>, pattern: &str| -> (usize, usize) {
        let hits = grep(e, KEY, json!({"pattern": pattern, "limit": 200})).hits;
        let summaries = hits.iter().filter(|h| h.hit.kind == "summary").count();
        (hits.len() - summaries, summaries)
    };
    let (messages, summaries) = kinds(&mut e, "TypeError");
    assert!(messages > 0 && summaries > 0, "the fact is in messages ({messages}) and in summaries ({summaries})");
    assert_eq!(kinds(&mut e, "parser"), (messages, summaries), "an underscore starts a word");
    assert_eq!(kinds(&mut e, "Error"), (0, 0), "a match never starts inside a word");
}

#[test]
fn full_text_near_and_the_content_column_filter_mean_what_they_mean_in_fts4() {
    let mut e = engine();
    e.assemble(decode("assemble", json!({"sessionId": "s", "sessionKey": KEY, "tokenBudget": 3000})).unwrap(), 1).unwrap();
    // Each user message starts with a tag word; the expected sets are what SQLite's FTS4 answers.
    let texts = ["kilo: alpha beta gamma delta", "lima: alpha x x x x x x x x x x x beta", "mike: beta one alpha", "november: foo bar baz"];
    for (t, text) in texts.iter().enumerate() {
        turn(&mut e, KEY, t, text);
    }
    let tags = |pattern: &str, e: &mut Engine<Db>| -> BTreeSet<String> {
        let result = grep(e, KEY, json!({"pattern": pattern, "mode": "full_text", "limit": 50}));
        result.hits.iter().filter_map(|h| ["kilo", "lima", "mike", "november"].into_iter().find(|tag| h.hit.snippet.contains(tag))).map(str::to_owned).collect()
    };
    assert_eq!(tags("alpha", &mut e).len(), 3, "the messages are searchable at all");
    for (pattern, expected) in [
        ("alpha NEAR beta", &["kilo", "mike"][..]),
        ("alpha NEAR/0 beta", &["kilo"]),
        ("beta NEAR/1 alpha", &["kilo", "mike"]),
        ("alpha NEAR/10 beta", &["kilo", "mike"]),
        ("alpha NEAR/11 beta", &["kilo", "lima", "mike"]),
        ("alpha NEAR/2 delta", &["kilo"]),
        ("\"alpha beta\" NEAR/0 gamma", &["kilo"]),
        ("gamma NEAR/0 \"alpha beta\"", &["kilo"]),
        ("alpha NEAR/0 beta NEAR/0 gamma", &["kilo"]),
        ("(alpha NEAR/0 beta) OR foo", &["kilo", "november"]),
        ("content:alpha", &["kilo", "lima", "mike"]),
        ("CONTENT:foo", &["november"]),
    ] {
        let expected: BTreeSet<String> = expected.iter().map(|t| t.to_string()).collect();
        assert_eq!(tags(pattern, &mut e), expected, "{pattern}");
    }
    let err = e.recall_grep(decode("grep", json!({"sessionId": "s", "sessionKey": KEY, "pattern": "alpha NEAR", "mode": "full_text"})).unwrap()).unwrap_err();
    assert!(err.to_string().contains("pattern"), "{err}");
}

#[test]
fn grep_honours_a_time_window() {
    let mut e = engine();
    e.assemble(decode("assemble", json!({"sessionId": "s", "sessionKey": KEY, "tokenBudget": 3000})).unwrap(), 1).unwrap();
    for t in 0..5 {
        turn(&mut e, KEY, t, &format!("milestone {t}"));
    }
    // Turn t's user message has timestamp t*10.
    let result = grep(&mut e, KEY, json!({"pattern": "milestone", "since": 10, "before": 30}));
    let texts: Vec<&str> = result.hits.iter().map(|h| h.hit.snippet.as_str()).collect();
    assert_eq!(texts, vec!["milestone 2", "milestone 1"], "newest first, inside the window");
    let err = e.recall_grep(decode("grep", json!({"sessionId": "s", "sessionKey": KEY, "pattern": "m", "since": 5, "before": 5})).unwrap()).unwrap_err();
    assert!(err.to_string().contains("since"), "{err}");
}

#[test]
fn ask_sends_the_summarized_away_original_and_its_reply_within_the_budget() {
    let mut e = engine();
    planted(&mut e, KEY, 40);
    // The message's searchable text: SQLite derives it in the view `messages_text`, PostgreSQL
    // stores it in `messages.search_text`.
    let fact_sql = match e.sql().dialect() {
        lossless_wasm::store::dialect::Dialect::Sqlite => "SELECT m.id FROM messages m JOIN messages_text t ON t.rowid = m.id WHERE t.content LIKE 'Fact 2:%'",
        lossless_wasm::store::dialect::Dialect::Postgres => "SELECT id FROM messages WHERE search_text LIKE 'Fact 2:%'",
    };
    let fact_id = ids(&mut e, fact_sql)[0];
    assert!(ids(&mut e, &format!("SELECT COUNT(*) FROM context_items WHERE message_id = {fact_id}"))[0] == 0, "the fact was summarized out of the view");
    let start = e.ask_start(ask(KEY, json!({"question": "What was the code word for crate zq2x?", "maxEvidenceTokens": 800}))).unwrap();
    let prompt = start.prompt.expect("evidence was found");
    assert!(start.evidence.iter().any(|ev| ev.id == fact_id && ev.kind == "message"), "{:?}", start.evidence);
    assert!(prompt.contains(&format!("[m{fact_id}]")) && prompt.contains("the code word for crate 2 is zq2x"), "{prompt}");
    assert!(start.evidence.iter().any(|ev| ev.id == fact_id + 1), "the reply after the hit is context");
    assert!(start.evidence_tokens <= 800 && start.evidence_budget == 800, "{} of {}", start.evidence_tokens, start.evidence_budget);
    // Asking for more evidence than the maximum gets the maximum.
    let wide = e.ask_start(ask(KEY, json!({"question": "zq2x", "maxEvidenceTokens": 10_000_000}))).unwrap();
    assert_eq!(wide.evidence_budget, lossless_wasm::core::ask::EVIDENCE_MAX_TOKENS);
}

#[test]
fn ask_reads_the_originals_under_a_named_summary_and_redacts_credentials() {
    let mut e = engine();
    e.assemble(decode("assemble", json!({"sessionId": "s", "sessionKey": KEY, "tokenBudget": 3000})).unwrap(), 1).unwrap();
    turn(&mut e, KEY, 0, "Deploy key for staging: AKIAIOSFODNN7EXAMPLE with secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY in aws_secret_access_key");
    for t in 1..20 {
        turn(&mut e, KEY, t, &format!("routine turn {t} {}", "context ".repeat(40)));
    }
    sweep(&mut e, KEY);
    let leaf = ids(&mut e, "SELECT s.id FROM summaries s JOIN summary_messages sm ON sm.summary_id = s.id JOIN messages m ON m.id = sm.message_id WHERE m.seq = 1")[0];
    let start = e.ask_start(ask(KEY, json!({"question": "which deploy key did we use?", "summaryIds": [format!("sum_{leaf}")]}))).unwrap();
    let prompt = start.prompt.expect("the named summary's originals are evidence");
    assert!(prompt.contains("Deploy key for staging"), "the original message was sent: {prompt}");
    assert!(start.redacted >= 1, "a credential was replaced");
    assert!(!prompt.contains("AKIAIOSFODNN7EXAMPLE") && !prompt.contains("wJalrXUtnFEMI"), "no credential reaches the LLM: {prompt}");
    assert!(prompt.contains("[credential: "), "{prompt}");
}

#[test]
fn ask_answers_nothing_found_and_bad_input_with_sentences_that_name_the_problem() {
    let mut e = engine();
    planted(&mut e, KEY, 10);
    let none = e.ask_start(ask(KEY, json!({"question": "what about the zebra-quill-9 incident?"}))).unwrap();
    assert!(none.prompt.is_none(), "no LLM call without evidence");
    let answer = none.answer.expect("a finished answer");
    assert!(answer.text.starts_with("Nothing found") && answer.text.contains("zebra-quill-9"), "{}", answer.text);
    let vague = e.ask_start(ask(KEY, json!({"question": "what did we say?"}))).unwrap();
    assert!(vague.answer.unwrap().text.contains("no distinctive words"));
    for (extra, field) in [
        (json!({}), "question"),
        (json!({"question": "  "}), "question"),
        (json!({"question": 42}), "question"),
        (json!({"question": "x".repeat(3000)}), "question"),
        (json!({"question": "q zq1x", "summaryIds": ["sum_x"]}), "summaryId"),
        (json!({"question": "q zq1x", "summaryIds": (1..=11).collect::<Vec<i64>>()}), "summaryIds"),
        (json!({"question": "q zq1x", "scope": "everyone"}), "scope"),
        (json!({"question": "q zq1x", "maxEvidenceTokens": "lots"}), "maxEvidenceTokens"),
        (json!({"question": "q zq1x", "since": 50, "before": 10}), "since"),
    ] {
        let err = e.ask_start(ask(KEY, extra.clone())).unwrap_err().to_string();
        assert!(err.contains(&format!("`{field}`")), "{extra}: {err}");
    }
}

#[test]
fn ask_finish_keeps_citations_of_sent_evidence_and_caps_the_answer() {
    let e = engine();
    let finish = |v: Value| e.ask_finish(serde_json::from_value(v).unwrap()).unwrap();
    let a = finish(json!({"outcome": "answered", "text": "It is zq2x [m5], not [m77].", "evidence": [{"kind": "message", "id": 5}, {"kind": "message", "id": 6}]}));
    assert_eq!(a.cited_message_ids, vec![5]);
    assert_eq!(a.evidence_message_ids, vec![5, 6]);
    let long = finish(json!({"outcome": "answered", "text": "blah ".repeat(5000), "evidence": [{"kind": "message", "id": 5}]}));
    assert!(long.truncated && long.tokens <= lossless_wasm::core::ask::ANSWER_CAP_TOKENS);
    let late = finish(json!({"outcome": "timed_out", "detail": "10000 ms", "evidence": [{"kind": "message", "id": 5}]}));
    assert!(late.text.contains("in time") && late.text.contains("m5"), "{}", late.text);
    assert!(e.ask_finish(serde_json::from_value(json!({"outcome": "maybe"})).unwrap()).is_err());
}
