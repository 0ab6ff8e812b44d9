// The redaction tests that go through a store, shared by redaction_native.rs (SQLite) and
// redaction_pg.rs (PostgreSQL): each defines `Db` (the connection type) and `open_db()` (a fresh,
// empty store) and includes this file. The redactor's own cases, which open no store, are in
// redaction_native.rs only.
use std::collections::BTreeSet;

use lossless_wasm::core::config::Config;
use lossless_wasm::core::redact::custom;
use lossless_wasm::engine::compaction::{CompactionReport, CompactionStep, SummaryRequest};
use lossless_wasm::engine::*;
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
    #[allow(dead_code)] // read by the corpus case, which runs in redaction_native.rs only
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

fn engine() -> Engine<Db> {
    let config = json!({"freshTailCount": 4, "leafChunkTokens": 1500, "leafBudgetHeadroomFactor": 0, "leafSkipReductionThreshold": 0,
                        "condensedFanout": 3, "contextThreshold": 0.2});
    Engine::open(open_db(), Config::from_json(&config).unwrap(), 0).unwrap()
}

fn commit(e: &mut Engine<Db>, key: &str, turn: usize, messages: Vec<Value>) {
    let p = decode("commitTurn", json!({"sessionId": "s", "sessionKey": key, "advancementKey": format!("{key}-{turn}"), "messages": messages})).unwrap();
    e.commit_turn(p, turn as i64 * 10).unwrap();
}

/// One turn per fixture (a user prompt, or a tool call and its result), then filler turns so
/// every fixture leaves the fresh tail.
fn planted_session(e: &mut Engine<Db>, key: &str, m: &Manifest) {
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

fn sweep(e: &mut Engine<Db>, key: &str, summarizer: &str, prompts: &mut Vec<String>) -> CompactionReport {
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

fn texts(e: &mut Engine<Db>, sql: &str) -> Vec<String> {
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
fn messages_holding(e: &mut Engine<Db>, key: &str, secret: &str) -> Vec<i64> {
    let rows = e.sql().query("SELECT m.id, m.raw_json FROM messages m JOIN conversations c ON c.id = m.conversation_id WHERE c.session_key = ?1", &[key.into()]).unwrap();
    rows.iter()
        .filter_map(|r| {
            let mut all = String::new();
            json_strings(&serde_json::from_str(&r.text(1).unwrap()).unwrap(), &mut all);
            all.contains(secret).then(|| r.int(0).unwrap())
        })
        .collect()
}

fn expand_message(e: &mut Engine<Db>, key: &str, id: i64) -> lossless_wasm::Result<String> {
    let target: RecallTarget = decode("expand", json!({"sessionId": "s", "sessionKey": key, "messageId": id, "maxTokens": 20_000})).unwrap();
    e.recall_expand(target).map(|x| x.items.iter().map(|i| i.content.clone()).collect::<Vec<_>>().join("\n"))
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
    let mut e = Engine::open(open_db(), config, 0).unwrap();
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
