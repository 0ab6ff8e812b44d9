//! Credentials never leave for the summarizer: a session whose tool results, tool calls and
//! prompts carry the credentials planted in `tests/fixtures/credentials/` (see its
//! `manifest.json`) is compacted through the engine with summarizers that record what they are
//! sent. No planted credential may appear in any prompt or any stored summary, and every one
//! must still be in the local store and returned by `lcm_expand` to its own agent (and to no
//! other agent).
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeSet;

use lossless_wasm::core::config::Config;
use lossless_wasm::core::redact::{custom, Redactor};
use lossless_wasm::engine::compaction::{CompactionReport, CompactionStep, SummaryRequest};
use lossless_wasm::engine::*;
use lossless_wasm::store::native::NativeSql;
use lossless_wasm::store::Sql;
use serde::Deserialize;
use serde_json::{json, Value};

const KEY: &str = "agent:main:creds";
const OTHER: &str = "agent:intruder:creds";

#[derive(Debug, Deserialize)]
struct Manifest {
    messages: Vec<FixtureMessage>,
    planted: Vec<Planted>,
}

#[derive(Debug, Deserialize)]
struct FixtureMessage {
    file: String,
    role: String,
    tool: Option<String>,
    command: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Planted {
    file: String,
    #[serde(rename = "in")]
    place: String,
    class: String,
    secret: String,
}

fn fixture_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/credentials")
}

fn manifest() -> Manifest {
    serde_json::from_str(&std::fs::read_to_string(fixture_dir().join("manifest.json")).unwrap()).unwrap()
}

fn fixture(file: &str) -> String {
    std::fs::read_to_string(fixture_dir().join(file)).unwrap()
}

fn engine() -> Engine<NativeSql> {
    let config = json!({"freshTailCount": 4, "leafChunkTokens": 1500, "leafBudgetHeadroomFactor": 0, "leafSkipReductionThreshold": 0,
                        "condensedFanout": 3, "contextThreshold": 0.2});
    Engine::open(NativeSql::in_memory().unwrap(), Config::from_json(&config).unwrap(), 0).unwrap()
}

fn commit(e: &mut Engine<NativeSql>, key: &str, turn: usize, messages: Vec<Value>) {
    let p = decode("commitTurn", json!({"sessionId": "s", "sessionKey": key, "advancementKey": format!("{key}-{turn}"), "messages": messages})).unwrap();
    e.commit_turn(p, turn as i64 * 10).unwrap();
}

/// One turn per fixture (a user prompt, or a tool call and its result), then filler turns so
/// every fixture leaves the fresh tail.
fn planted_session(e: &mut Engine<NativeSql>, key: &str, m: &Manifest) {
    e.assemble(decode("assemble", json!({"sessionId": "s", "sessionKey": key, "tokenBudget": 4000})).unwrap(), 1).unwrap();
    for (t, msg) in m.messages.iter().enumerate() {
        let ts = t as i64 * 10;
        let text = fixture(&msg.file);
        let turn = match msg.role.as_str() {
            "user" => vec![
                json!({"role": "user", "content": text, "timestamp": ts}),
                json!({"role": "assistant", "content": [{"type": "text", "text": format!("Understood, looking into it (step {t}).")}], "timestamp": ts + 1}),
            ],
            _ => {
                let tool = msg.tool.clone().unwrap_or_else(|| "bash".to_owned());
                let args = match &msg.command {
                    Some(command) => json!({"command": command}),
                    None => json!({"path": format!("config/{}", msg.file)}),
                };
                vec![
                    json!({"role": "user", "content": format!("Step {t}: check {} and tell me what is wrong.", msg.file), "timestamp": ts}),
                    json!({"role": "assistant", "content": [{"type": "text", "text": "Checking."}, {"type": "toolCall", "id": format!("call{t}"), "name": tool, "arguments": args}], "timestamp": ts + 1}),
                    json!({"role": "toolResult", "toolCallId": format!("call{t}"), "toolName": tool, "content": [{"type": "text", "text": text}], "isError": false, "timestamp": ts + 2}),
                    json!({"role": "assistant", "content": [{"type": "text", "text": format!("Step {t} looks fine apart from the timeout.")}], "timestamp": ts + 3}),
                ]
            }
        };
        commit(e, key, t, turn);
    }
    for t in m.messages.len()..m.messages.len() + 6 {
        let filler = vec![
            json!({"role": "user", "content": format!("Filler request {t}: {}", "carry on with the refactor ".repeat(20)), "timestamp": t as i64 * 10}),
            json!({"role": "assistant", "content": [{"type": "text", "text": format!("Done with part {t}. {}", "all tests pass ".repeat(20))}], "timestamp": t as i64 * 10 + 1}),
        ];
        commit(e, key, t, filler);
    }
}

/// A summarizer that copies the first line of every message it is sent, as a model quoting its
/// input would, and records every prompt.
fn quoting_summary(request: &SummaryRequest) -> Value {
    let mut lines = vec!["## Goal".to_owned(), "- keep the service running".to_owned(), "## Progress".to_owned()];
    let mut next_is_first_line = false;
    for line in request.prompt.lines() {
        if next_is_first_line && lines.len() < 14 {
            lines.push(format!("- saw: {}", line.chars().take(160).collect::<String>()));
        }
        next_is_first_line = line.starts_with('[') && line.ends_with(']') && line.contains(" | ");
    }
    json!({"text": lines.join("\n"), "model": "scripted-quoting"})
}

fn sweep(e: &mut Engine<NativeSql>, key: &str, summarizer: &str, prompts: &mut Vec<String>) -> CompactionReport {
    let p = json!({"sessionId": "s", "sessionKey": key, "mode": "sweep", "summarizer": summarizer, "tokenBudget": 3000});
    let mut step = e.compaction_start(decode("compactionStart", p).unwrap(), 10_000).unwrap();
    loop {
        match step {
            CompactionStep::Done(report) => return report,
            CompactionStep::NeedSummary(request) => {
                prompts.push(request.prompt.clone());
                let mut reply = quoting_summary(&request);
                reply["jobId"] = json!(request.job_id);
                step = e.compaction_continue(decode("compactionContinue", reply).unwrap(), 10_000).unwrap();
            }
        }
    }
}

fn texts(e: &mut Engine<NativeSql>, sql: &str) -> Vec<String> {
    e.sql().query(sql, &[]).unwrap().iter().map(|r| r.text(0).unwrap()).collect()
}

/// Every string in a JSON document, decoded, one per line.
fn json_strings(value: &Value, out: &mut String) {
    match value {
        Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        Value::Array(items) => items.iter().for_each(|v| json_strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| json_strings(v, out)),
        _ => {}
    }
}

/// Ids of the messages that hold `secret` (in any decoded string of their JSON).
fn messages_holding(e: &mut Engine<NativeSql>, key: &str, secret: &str) -> Vec<i64> {
    let rows = e.sql().query("SELECT m.id, m.raw_json FROM messages m JOIN conversations c ON c.id = m.conversation_id WHERE c.session_key = ?1", &[key.into()]).unwrap();
    rows.iter()
        .filter_map(|r| {
            let mut all = String::new();
            json_strings(&serde_json::from_str(&r.text(1).unwrap()).unwrap(), &mut all);
            all.contains(secret).then(|| r.int(0).unwrap())
        })
        .collect()
}

fn expand_message(e: &mut Engine<NativeSql>, key: &str, id: i64) -> lossless_wasm::Result<String> {
    let target: RecallTarget = decode("expand", json!({"sessionId": "s", "sessionKey": key, "messageId": id, "maxTokens": 20_000})).unwrap();
    e.recall_expand(target).map(|x| x.items.iter().map(|i| i.content.clone()).collect::<Vec<_>>().join("\n"))
}

#[test]
fn the_corpus_plants_at_least_54_credentials_of_14_classes_and_the_redactor_removes_each() {
    let m = manifest();
    let classes: BTreeSet<&str> = m.planted.iter().map(|p| p.class.as_str()).collect();
    assert!(m.planted.len() >= 54 && classes.len() >= 14, "{} planted, {} classes", m.planted.len(), classes.len());
    let r = Redactor::builtin().unwrap();
    for msg in &m.messages {
        let text = fixture(&msg.file);
        let out = r.redact(&text);
        let command = msg.command.as_deref().map(|c| r.redact(c));
        for p in m.planted.iter().filter(|p| p.file == msg.file) {
            let (before, after, counts) = match p.place.as_str() {
                "command" => (msg.command.clone().unwrap_or_default(), command.as_ref().unwrap().text.clone(), command.as_ref().unwrap().counts.clone()),
                _ => (text.clone(), out.text.clone(), out.counts.clone()),
            };
            assert!(before.contains(&p.secret), "{}: planted", p.file);
            assert!(!after.contains(&p.secret), "{}: a {} survived:\n{after}", p.file, p.class);
            assert!(counts.get(&p.class) >= 1, "{}: reported as {} ({:?})", p.file, p.class, counts);
        }
    }
}

#[test]
fn no_planted_credential_reaches_a_summarizer_prompt_or_a_stored_summary_and_every_one_stays_expandable() {
    let m = manifest();
    let mut e = engine();
    planted_session(&mut e, KEY, &m);
    planted_session(&mut e, OTHER, &Manifest { messages: Vec::new(), planted: Vec::new() });
    let mut prompts = Vec::new();
    for _ in 0..4 {
        let report = sweep(&mut e, KEY, "host", &mut prompts);
        assert!(report.ok, "{report:?}");
    }
    // Summaries were asked for and stored, over every message that holds a credential.
    assert!(prompts.len() >= 3, "summaries were requested: {}", prompts.len());
    let summaries = texts(&mut e, "SELECT content FROM summaries");
    assert!(!summaries.is_empty(), "summaries were stored");
    let covered: BTreeSet<i64> = e.sql().query("SELECT message_id FROM summary_messages", &[]).unwrap().iter().map(|r| r.int(0).unwrap()).collect();
    assert!(prompts.iter().any(|p| p.contains("[credential: ")), "redaction happened in the prompts");
    for p in &m.planted {
        let holders = messages_holding(&mut e, KEY, &p.secret);
        assert!(!holders.is_empty(), "{} ({}) is in the messages table", p.class, p.file);
        assert!(holders.iter().all(|id| covered.contains(id)), "{} ({}): its message was summarized", p.class, p.file);
        for (i, prompt) in prompts.iter().enumerate() {
            assert!(!prompt.contains(&p.secret), "{} ({}) was sent in prompt {i}", p.class, p.file);
        }
        assert!(summaries.iter().all(|s| !s.contains(&p.secret)), "{} ({}) is in a stored summary", p.class, p.file);
        for id in holders {
            let mine = expand_message(&mut e, KEY, id).unwrap();
            assert!(mine.contains(&p.secret), "lcm_expand returns the original {} to its agent", p.class);
            assert!(expand_message(&mut e, OTHER, id).is_err(), "and nothing to another agent");
        }
    }
    // The passes say what they replaced (counts per class, never values).
    let telemetry = texts(&mut e, "SELECT telemetry_json FROM compaction_events WHERE outcome = 'compacted' AND pass IN ('leaf', 'condensed') AND telemetry_json IS NOT NULL");
    let mut classes = BTreeSet::new();
    for t in &telemetry {
        let v: Value = serde_json::from_str(t).unwrap();
        classes.extend(v["redactions"].as_object().unwrap().keys().cloned());
        assert!(m.planted.iter().all(|p| !t.contains(&p.secret)));
    }
    assert!(classes.len() >= 14, "telemetry names the classes replaced: {classes:?}");
}

#[test]
fn the_extractive_summarizer_stores_no_planted_credential() {
    let m = manifest();
    let mut e = engine();
    planted_session(&mut e, KEY, &m);
    let mut prompts = Vec::new();
    for _ in 0..4 {
        assert!(sweep(&mut e, KEY, "extractive", &mut prompts).ok);
    }
    assert!(prompts.is_empty(), "the extractive summarizer asks no LLM");
    let summaries = texts(&mut e, "SELECT content FROM summaries");
    assert!(summaries.len() >= 2, "summaries were stored: {}", summaries.len());
    assert!(summaries.iter().any(|s| s.contains("[credential: ")), "the ledger and the quoted request carry placeholders");
    for p in &m.planted {
        assert!(summaries.iter().all(|s| !s.contains(&p.secret)), "{} ({}) is in an extractive summary", p.class, p.file);
    }
}

#[test]
fn a_credential_in_the_summarizers_answer_is_replaced_before_the_summary_is_stored() {
    let m = manifest();
    let mut e = engine();
    planted_session(&mut e, KEY, &m);
    let leaked = m.planted.iter().find(|p| p.class == "github-token").unwrap().secret.clone();
    let p = json!({"sessionId": "s", "sessionKey": KEY, "mode": "sweep", "summarizer": "host", "tokenBudget": 3000});
    let mut step = e.compaction_start(decode("compactionStart", p).unwrap(), 10_000).unwrap();
    let mut answered = 0;
    while let CompactionStep::NeedSummary(request) = step {
        answered += 1;
        let reply = json!({"jobId": request.job_id, "text": format!("## Goal\n- push with https://{leaked}@github.com/acme/api.git\n## Progress\n- step {answered}")});
        step = e.compaction_continue(decode("compactionContinue", reply).unwrap(), 10_000).unwrap();
    }
    assert!(answered > 0);
    let summaries = texts(&mut e, "SELECT content FROM summaries");
    assert!(!summaries.is_empty());
    assert!(summaries.iter().all(|s| !s.contains(&leaked) && s.contains("[credential: github-token]")), "{summaries:?}");
}

#[test]
fn repair_sends_no_planted_credential_and_reports_what_it_replaced() {
    let m = manifest();
    let mut e = engine();
    planted_session(&mut e, KEY, &m);
    let mut ignored = Vec::new();
    for _ in 0..4 {
        assert!(sweep(&mut e, KEY, "extractive", &mut ignored).ok);
    }
    // An old summary, written before redaction existed, that quoted a key verbatim.
    let secret = m.planted.iter().find(|p| p.class == "aws-secret-key").unwrap().secret.clone();
    let leaf = e.sql().query_row("SELECT id FROM summaries WHERE depth = 0 ORDER BY id LIMIT 1", &[]).unwrap().unwrap().int(0).unwrap();
    e.sql().execute("UPDATE summaries SET level = 'fallback', content = ?2 WHERE id = ?1", &[leaf.into(), format!("[Truncated] aws_secret_access_key = {secret}").into()]).unwrap();
    let mut step = e.repair_start(decode("repairStart", json!({"summarizer": "host"})).unwrap()).unwrap();
    let mut prompts = Vec::new();
    let report = loop {
        match step {
            RepairStep::Done(report) => break report,
            RepairStep::NeedSummary(request) => {
                prompts.push(request.prompt.clone());
                let mut reply = quoting_summary(&request);
                reply["jobId"] = json!(request.job_id);
                step = e.repair_continue(decode("repairContinue", reply).unwrap()).unwrap();
            }
        }
    };
    assert!(!prompts.is_empty() && report.repaired.contains(&leaf), "{report:?}");
    assert!(report.redacted.total() > 0, "the report counts what was replaced: {report:?}");
    for p in &m.planted {
        assert!(prompts.iter().all(|prompt| !prompt.contains(&p.secret)), "{} ({}) was sent by repair", p.class, p.file);
    }
    assert!(texts(&mut e, "SELECT content FROM summaries").iter().all(|s| !s.contains(&secret)));
}

#[test]
fn extra_patterns_from_the_config_are_applied_to_prompts() {
    let config = Config::from_json(&json!({"freshTailCount": 2, "leafChunkTokens": 500, "leafBudgetHeadroomFactor": 0, "leafSkipReductionThreshold": 0,
                                          "redactPatterns": [{"name": "acme-ticket", "pattern": "ACME-TKT-[0-9]{8}", "keywords": ["acme-tkt-"]}]}))
    .unwrap();
    assert_eq!(config.redact_patterns[0].name, "acme-ticket");
    let mut e = Engine::open(NativeSql::in_memory().unwrap(), config, 0).unwrap();
    e.assemble(decode("assemble", json!({"sessionId": "s", "sessionKey": KEY, "tokenBudget": 4000})).unwrap(), 1).unwrap();
    for t in 0..8 {
        let user = format!("Ticket ACME-TKT-{:08} needs a fix. {}", 1000 + t, "context words ".repeat(200));
        commit(&mut e, KEY, t, vec![json!({"role": "user", "content": user, "timestamp": t}), json!({"role": "assistant", "content": "ok", "timestamp": t})]);
    }
    let mut prompts = Vec::new();
    assert!(sweep(&mut e, KEY, "host", &mut prompts).ok);
    assert!(!prompts.is_empty());
    assert!(prompts.iter().all(|p| !p.contains("ACME-TKT-0000")), "custom pattern applied");
    assert!(prompts.iter().any(|p| p.contains("[credential: acme-ticket]")));
    assert!(custom::parse(&json!(["("])).is_err());
}

/// Texts that hold no credential: the bundled demo transcript, the messages the benchmarks and
/// end-to-end tests generate, the lockfiles (integrity hashes, checksums) and a hand-written
/// coding session full of look-alikes (hashes, UUIDs, images, code about tokens and passwords).
fn clean_corpus() -> Vec<(String, Value)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out: Vec<(String, Value)> = Vec::new();
    let demo: Value = serde_json::from_str(&std::fs::read_to_string(root.join("demo/transcript.json")).unwrap()).unwrap();
    for (i, m) in demo["messages"].as_array().unwrap().iter().enumerate() {
        out.push((format!("demo/transcript.json#{i}"), m.clone()));
    }
    // benches/engine.rs, bench/wasm-bench.mjs and bench/host-path's "short" shape.
    for i in 0..200 {
        out.push((format!("bench message {i}"), json!({"role": "user", "content": format!("user message {i}: please look at file src/module_{}.rs and fix the failing test", i % 97)})));
        out.push((format!("bench reply {i}"), json!({"role": "assistant", "content": [{"type": "text", "text": format!("Assistant reply {i}. I read the file, changed two lines and the test passes now.")}]})));
    }
    // bench/host-path's "mixed" shape: sentences from its vocabulary.
    let words: Vec<&str> = "the file test module function error build compile cache budget summary index query request response token window context message session agent tool result value config path line change patch review commit branch merge parse render store search expand describe".split(' ').collect();
    let mut state = 7u64;
    for i in 0..300 {
        let sentence: Vec<&str> = (0..40).map(|_| {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            words[((state >> 33) % words.len() as u64) as usize]
        }).collect();
        out.push((format!("host-path mixed {i}"), json!({"role": "toolResult", "toolCallId": format!("call_{i}"), "toolName": "read", "content": [{"type": "text", "text": format!("{}.", sentence.join(" "))}], "isError": false})));
    }
    // tests/e2e's longText and tests/js/host-simulator's replies.
    for i in 0..50 {
        let mut s = format!("Compaction e2e turn {i}: please keep these logbook notes.");
        for k in 1..20 {
            s.push_str(&format!(" Note {k} for turn {i}: the keeper recorded wind, tide and {} passing ships.", k * 3));
        }
        out.push((format!("e2e longText {i}"), json!({"role": "user", "content": s})));
        out.push((format!("host-simulator reply {i}"), json!({"role": "assistant", "content": format!("Reply to turn {i}: {}", "the work goes on. ".repeat(20))})));
    }
    for file in ["Cargo.lock", "package-lock.json"] {
        out.push((file.to_owned(), json!({"role": "toolResult", "toolCallId": "c", "toolName": "read", "content": [{"type": "text", "text": std::fs::read_to_string(root.join(file)).unwrap()}], "isError": false})));
    }
    let session = std::fs::read_to_string(root.join("tests/fixtures/no-credentials/coding-session.txt")).unwrap();
    for (i, chunk) in session.split("\n=====\n").enumerate() {
        out.push((format!("coding-session.txt#{i}"), json!({"role": "toolResult", "toolCallId": "c", "toolName": "bash", "content": [{"type": "text", "text": chunk}], "isError": false})));
    }
    out
}

/// Redactions measured on the clean corpus when the patterns were written (0 is the goal).
const MEASURED_FALSE_POSITIVES: u32 = 0;

#[test]
fn texts_without_credentials_are_sent_unchanged() {
    let r = Redactor::builtin().unwrap();
    let corpus = clean_corpus();
    assert!(corpus.len() > 1_400, "the corpus was read: {} texts", corpus.len());
    let mut hits = Vec::new();
    let mut total = 0;
    for (name, message) in &corpus {
        let mut value = message.clone();
        let counts = r.redact_json(&mut value);
        let text = lossless_wasm::core::message::text_of_raw_json(&value.to_string()).unwrap();
        let text_counts = r.redact(&text).counts;
        total += counts.total() + text_counts.total();
        if !counts.is_empty() || !text_counts.is_empty() {
            hits.push(format!("{name}: {} / {}", counts.describe(), text_counts.describe()));
        }
    }
    eprintln!("false positives on {} clean texts: {total}", corpus.len());
    // `<=`, not `==`: should a pattern ever need to trade a documented false positive for
    // coverage, the constant moves with the measurement.
    #[allow(clippy::absurd_extreme_comparisons)]
    let within = total <= MEASURED_FALSE_POSITIVES;
    assert!(within, "{total} redactions in texts without credentials:\n{}", hits.join("\n"));
}

/// Credentials written the way other tools and people write them, beyond the corpus's files:
/// a second set, written after the patterns, to check they generalize.
#[test]
fn credentials_written_in_other_ways_are_found_too() {
    let r = Redactor::builtin().unwrap();
    let cases: Vec<(&str, &str)> = vec![
        ("AWS Access Key ID [None]: AKIAQ3EGRSTUVWXYZ234\nAWS Secret Access Key [None]: 9xZpQ2mW7rT4vB8nK1sD6fG3hJ5lA0cE9uY2iO4p\nDefault region name [None]: us-east-1", "9xZpQ2mW7rT4vB8nK1sD6fG3hJ5lA0cE9uY2iO4p"),
        ("AWS Access Key ID [None]: AKIAQ3EGRSTUVWXYZ234", "AKIAQ3EGRSTUVWXYZ234"),
        ("$ export AWS_SECRET_ACCESS_KEY=\"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\"", "Zq7Yt5Rw3Ep1Oi9Uy7Tr5Ew3Qa1Sd9Fg7Hj5Kl3Z"),
        ("const firebaseConfig = { apiKey: \"AIzaSyDk3l9Xq0PzM2nB4vC6xZ8aS1dF3gH5jK7\", authDomain: \"x.firebaseapp.com\" };", "AIzaSyDk3l9Xq0PzM2nB4vC6xZ8aS1dF3gH5jK7"),
        ("AZURE_CLIENT_SECRET=Fk9~Lq2.Wm4_Zx7-Pn3Rt8Vb6Yc1Hd5Js0Ga", "Fk9~Lq2.Wm4_Zx7-Pn3Rt8Vb6Yc1Hd5Js0Ga"),
        ("AccountEndpoint=https://acme.documents.azure.com:443/;AccountKey=Q2xhc3NpY2FsbHkgc3BlYWtpbmcgdGhpcyBpcyBhIGZha2Uga2V5IGZvciB0ZXN0aW5nIG9ubHkhIQ==;", "Q2xhc3NpY2FsbHkgc3BlYWtpbmcgdGhpcyBpcyBhIGZha2Uga2V5IGZvciB0ZXN0aW5nIG9ubHkhIQ=="),
        ("$ gh auth token\ngho_16C7e42F292c6912E7710c838347Ae178B4a", "gho_16C7e42F292c6912E7710c838347Ae178B4a"),
        ("curl --header \"PRIVATE-TOKEN: glpat-xY7zW3vU9tS1rQ5pO2nM\" https://gitlab.example.com/api/v4/projects", "glpat-xY7zW3vU9tS1rQ5pO2nM"),
        ("client = anthropic.Anthropic(api_key=\"sk-ant-api03-Xy9_Zw8-Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8Ba7Zy6Xw5Vu4Ts3Rq2Po1Nm0Lk9Ji8Hg7Fe6Dc5Ba4-AA\")", "sk-ant-api03-Xy9_Zw8-Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8Ba7Zy6Xw5Vu4Ts3Rq2Po1Nm0Lk9Ji8Hg7Fe6Dc5Ba4-AA"),
        ("MISTRAL_API_KEY=Qw3rTy6uIo9pAs2dFg5hJk8lZx1cVb4n", "Qw3rTy6uIo9pAs2dFg5hJk8lZx1cVb4n"),
        ("{\"models\": {\"providers\": {\"openai\": {\"apiKey\": \"sk-proj-Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2Yz3Ab4Cd5Ef6Gh7\"}}}}", "sk-proj-Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2Yz3Ab4Cd5Ef6Gh7"),
        ("genai.configure(api_key='AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q')", "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"),
        ("SLACK_SIGNING_SECRET=8f742231b10e8888abcd99yyyzzz85a5", "8f742231b10e8888abcd99yyyzzz85a5"),
        ("app = App(token=\"xoxb-2244668800-1122334455667-AbCdEfGhIjKlMnOpQrStUvWx\")", "xoxb-2244668800-1122334455667-AbCdEfGhIjKlMnOpQrStUvWx"),
        ("updater = Updater(\"5839204716:AAF3kL9mN2pQ7rS4tU1vW8xY5zA6bC0dE3f\", use_context=True)", "5839204716:AAF3kL9mN2pQ7rS4tU1vW8xY5zA6bC0dE3f"),
        ("bot.run('MTE4NzY1NDMyMTA5ODc2NTQzMg.GaBcDe.f1G2h3I4j5K6l7M8n9O0p1Q2r3S4t5U6v7W8x9')", "MTE4NzY1NDMyMTA5ODc2NTQzMg.GaBcDe.f1G2h3I4j5K6l7M8n9O0p1Q2r3S4t5U6v7W8x9"),
        ("stripe.api_key = \"sk_test_51HqLyjWDarjtT1zdp7dcXYZ123abcDEF456ghiJKL789mnoPQR\"", "sk_test_51HqLyjWDarjtT1zdp7dcXYZ123abcDEF456ghiJKL789mnoPQR"),
        ("Cookie: access_token=eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJzdWIiOiJhYmMiLCJleHAiOjE3MDAwMDAwMDB9.c2lnbmF0dXJlLXNpZ25hdHVyZS1zaWduYXR1cmU", "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJzdWIiOiJhYmMiLCJleHAiOjE3MDAwMDAwMDB9.c2lnbmF0dXJlLXNpZ25hdHVyZS1zaWduYXR1cmU"),
        ("users:\n- name: admin\n  user:\n    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFcEFJQkFBS0NBUUVBMHo=\n", "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFcEFJQkFBS0NBUUVBMHo="),
        ("  private_key: |\n    -----BEGIN EC PRIVATE KEY-----\n    MHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5PtdLQZ6n8H1OoAoGCCqGSM49\n    -----END EC PRIVATE KEY-----\n", "MHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5PtdLQZ6n8H1OoAoGCCqGSM49"),
        ("amqp://orders:Rabb1t-Pa55@mq.internal:5672/%2f", "Rabb1t-Pa55"),
        ("redis-cli -u redis://:R3disS3cret@cache:6379 ping", "R3disS3cret"),
        ("jdbc:postgresql://db:5432/app?user=app&password=Pg-Pa55w0rd!", "Pg-Pa55w0rd!"),
        ("requests.get(url, headers={'Authorization': 'Bearer 7f3c9a1e5b2d8f4a6c0e9b3d7a1f5c2e'})", "7f3c9a1e5b2d8f4a6c0e9b3d7a1f5c2e"),
        ("http -a admin:Adm1nP4ss! GET https://api.example.com", "Adm1nP4ss!"),
        ("{\"auths\":{\"ghcr.io\":{\"auth\":\"Ym90OmdocF9hYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAxMjM0NQ==\"}}}", "Ym90OmdocF9hYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAxMjM0NQ=="),
        ("NPM_TOKEN=npm_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5 npm publish", "npm_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5"),
        ("twine upload -u __token__ -p pypi-AgEIcHlwaS5vcmcCJGE4ZjI5ZDQ3LTk1ZGQtNDE4Ny05YjYxLWM2ZWM2MjE2YzZlNQACKlszLCJmNDYxMmNhYy0wM2ZiLTQ2YTAtYWI dist/*", "pypi-AgEIcHlwaS5vcmcCJGE4ZjI5ZDQ3LTk1ZGQtNDE4Ny05YjYxLWM2ZWM2MjE2YzZlNQACKlszLCJmNDYxMmNhYy0wM2ZiLTQ2YTAtYWI"),
        ("sg = SendGridAPIClient('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')", "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"),
        ("client = Client('AC1f2e3d4c5b6a79881f2e3d4c5b6a7988', 'a1b2c3d4e5f60718293a4b5c6d7e8f90')  # twilio", "a1b2c3d4e5f60718293a4b5c6d7e8f90"),
        ("DB_PASS=\"correct horse battery staple\"", "correct horse battery staple"),
        ("password: hunter2hunter2", "hunter2hunter2"),
        ("export HF_TOKEN=hf_QwErTyUiOpAsDfGhJkLzXcVbNm1234567", "hf_QwErTyUiOpAsDfGhJkLzXcVbNm1234567"),
        ("GROQ_API_KEY=gsk_8aB7cD6eF5gH4iJ3kL2mN1oP0qR9sT8uV7wX6yZ5aB4cD3eF2gH1iJ0k", "gsk_8aB7cD6eF5gH4iJ3kL2mN1oP0qR9sT8uV7wX6yZ5aB4cD3eF2gH1iJ0k"),
        ("DEEPSEEK_API_KEY=sk-4f8a2c1e9b7d6a5f4e3d2c1b0a9f8e7d", "sk-4f8a2c1e9b7d6a5f4e3d2c1b0a9f8e7d"),
        ("$ psql \"postgresql://reporter:Rep0rt!ng2024@analytics.internal/warehouse\"", "Rep0rt!ng2024"),
        ("git push https://oauth2:ghp_R4nd0mT0k3nV4lu3F0rT3st1ng0123456789@github.com/o/r", "ghp_R4nd0mT0k3nV4lu3F0rT3st1ng0123456789"),
        ("wh = 'https://hooks.slack.com/services/T0A1B2C3D/B4E5F6G7H/aBcDeFgHiJkLmNoPqRsTuVwX'", "aBcDeFgHiJkLmNoPqRsTuVwX"),
        ("ssh-keygen output:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW"),
        ("Authorization: Basic YWxhZGRpbjpvcGVuc2VzYW1l", "YWxhZGRpbjpvcGVuc2VzYW1l"),
        ("x-goog-api-key: AIzaSyB-9kL2mN4pQ6rS8tU0vW2xY4zA6bC8dE0", "AIzaSyB-9kL2mN4pQ6rS8tU0vW2xY4zA6bC8dE0"),
        ("\"SessionToken\": \"FwoGZXIvYXdzEJr//////////wEaDM1234567890abcdefghijKLMNOPQRSTUVWXYZ\"", "FwoGZXIvYXdzEJr//////////wEaDM1234567890abcdefghijKLMNOPQRSTUVWXYZ"),
        ("VAULT_TOKEN=hvs.CAESIJ3k9Lm2Np4Qr6St8Uv0Wx2Yz4Ab6Cd8Ef0Gh2Ij4KlGh4KHGh2cy5Q", "hvs.CAESIJ3k9Lm2Np4Qr6St8Uv0Wx2Yz4Ab6Cd8Ef0Gh2Ij4KlGh4KHGh2cy5Q"),
        ("mongodb+srv://svc_user:M0ng0Pa55@cluster0.ab1cd.mongodb.net/?retryWrites=true", "M0ng0Pa55"),
        ("[client]\nuser=root\npassword=My5qlR00t!\n", "My5qlR00t!"),
        ("spring.datasource.password=Spr1ngS3cret", "Spr1ngS3cret"),
        ("<add key=\"ApiKey\" value=\"9a8b7c6d5e4f3a2b1c0d\" />", "9a8b7c6d5e4f3a2b1c0d"),
        ("Set-Cookie: sessionid=8f14e45fceea167a5a36dedd4bea2543; HttpOnly", "8f14e45fceea167a5a36dedd4bea2543"),
    ];
    let missed: Vec<String> = cases.iter().filter(|(text, secret)| {
        assert!(text.contains(secret));
        r.redact(text).text.contains(secret)
    }).map(|(text, _)| (*text).to_owned()).collect();
    assert!(missed.is_empty(), "missed:\n{}", missed.join("\n"));
}
