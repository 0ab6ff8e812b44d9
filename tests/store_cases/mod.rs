//! The storage test suite, generic over the [`Sql`] backend. `store_native.rs` runs it on native
//! SQLite; `wasm_cases` runs it on sql.js and node:sqlite. Every case takes a function that opens
//! a fresh, empty database.

use lossless_wasm::core::config::Config;
use lossless_wasm::engine::{decode, Engine, SearchParams};
use lossless_wasm::store::schema::{self, MIGRATIONS};
use lossless_wasm::store::{advancements, compaction, context, conversations, messages, Sql};

#[allow(unused_imports)]
pub use crate::for_each_store_case;
use serde_json::{json, Value};

fn count(sql: &mut impl Sql, query: &str) -> i64 {
    sql.query_row(query, &[]).unwrap().unwrap().int(0).unwrap()
}

fn turn(key: &str, messages: Vec<Value>) -> lossless_wasm::engine::CommitTurnParams {
    decode(
        "commitTurn",
        json!({"sessionId": "s1", "sessionKey": "k", "advancementKey": key, "messages": messages}),
    )
    .unwrap()
}

/// Applies migrations up to `version` by hand, as an older build would have.
fn migrate_to(sql: &mut impl Sql, version: i64) {
    sql.execute_script("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL);").unwrap();
    for (v, script) in MIGRATIONS.iter().filter(|(v, _)| *v <= version) {
        sql.execute_script(script).unwrap();
        sql.execute(
            "INSERT INTO schema_migrations (version, applied_at) VALUES (?1, 0)",
            &[(*v).into()],
        )
        .unwrap();
    }
}

pub fn migrations_create_the_latest_schema_and_are_idempotent<S: Sql>(open: impl Fn() -> S) {
    let mut sql = open();
    schema::migrate(&mut sql, 1).unwrap();
    schema::migrate(&mut sql, 2).unwrap();
    assert_eq!(
        schema::current_version(&mut sql).unwrap(),
        schema::latest_version()
    );
    assert_eq!(
        count(&mut sql, "SELECT COUNT(*) FROM schema_migrations"),
        MIGRATIONS.len() as i64
    );
    for table in [
        "conversations",
        "messages",
        "message_parts",
        "summaries",
        "summary_messages",
        "summary_sources",
        "context_items",
        "compaction_events",
        "turn_advancements",
        "messages_fts",
        "summaries_fts",
    ] {
        let n = sql
            .query_row(
                "SELECT COUNT(*) FROM sqlite_master WHERE name = ?1",
                &[table.into()],
            )
            .unwrap()
            .unwrap()
            .int(0)
            .unwrap();
        assert_eq!(n, 1, "table {table} exists");
    }
}

pub fn a_version_1_database_upgrades_on_open_and_keeps_its_messages<S: Sql>(open: impl Fn() -> S) {
    let mut sql = open();
    migrate_to(&mut sql, 1);
    sql.execute_script(
        "INSERT INTO conversations (id, session_key, session_id, created_at, message_count, token_count) VALUES (1, 'k', 's1', 0, 2, 20);
         INSERT INTO messages (conversation_id, seq, role, content, token_count, identity_hash, raw_json, created_at)
           VALUES (1, 1, 'user', 'upgrade me please', 10, 'h1', '{\"role\":\"user\",\"content\":\"upgrade me please\"}', 0),
                  (1, 2, 'assistant', 'done', 10, 'h2', '{\"role\":\"assistant\",\"content\":\"done\"}', 0);",
    )
    .unwrap();
    let mut engine = Engine::open(sql, Config::default(), 5).unwrap();
    assert_eq!(
        schema::current_version(engine.sql()).unwrap(),
        schema::latest_version()
    );
    let view = engine
        .assemble(
            decode("assemble", json!({"sessionId": "s1", "sessionKey": "k"})).unwrap(),
            6,
        )
        .unwrap();
    assert_eq!(view.messages.len(), 2, "old messages became context items");
    let hits = engine
        .search(
            decode::<SearchParams>(
                "search",
                json!({"sessionId": "s1", "sessionKey": "k", "pattern": "upgrade"}),
            )
            .unwrap(),
        )
        .unwrap();
    assert_eq!(hits.len(), 1, "old messages were indexed for search");
    let added = engine
        .commit_turn(
            turn(
                "t3",
                vec![json!({"role": "user", "content": "after upgrade", "timestamp": 3})],
            ),
            7,
        )
        .unwrap();
    assert_eq!(added.stored_messages, 1);
    assert_eq!(
        count(engine.sql(), "SELECT MAX(ordinal) FROM context_items"),
        3
    );
}

pub fn backfill_marks_fallback_and_truncated_summaries_seed_01<S: Sql>(open: impl Fn() -> S) {
    let mut sql = open();
    migrate_to(&mut sql, 2);
    sql.execute_script(
        "INSERT INTO conversations (id, session_key, session_id, created_at) VALUES (1, 'k', 's1', 0);
         INSERT INTO summaries (id, conversation_id, kind, depth, content, token_count, source_token_count, summarizer, created_at) VALUES
           (1, 1, 'leaf', 0, 'Some text... [Truncated from 9000 tokens]', 900, 9000, 'old', 0),
           (2, 1, 'leaf', 0, 'Looks fine but came from the fallback path', 100, 900, 'old', 0),
           (3, 1, 'leaf', 0, 'A real summary', 100, 900, 'llm', 0);
         INSERT INTO compaction_events (conversation_id, created_at, pass, level, outcome, reason, summary_id)
           VALUES (1, 0, 'leaf', 'fallback', 'compacted', 'summarizer failed', 2);",
    )
    .unwrap();
    schema::migrate(&mut sql, 1).unwrap();
    let levels = sql
        .query("SELECT id, level FROM summaries ORDER BY id", &[])
        .unwrap();
    let levels: Vec<String> = levels.iter().map(|r| r.text(1).unwrap()).collect();
    assert_eq!(levels, ["fallback", "fallback", "normal"]);
}

pub fn a_newer_schema_is_refused_not_downgraded<S: Sql>(open: impl Fn() -> S) {
    let mut sql = open();
    schema::migrate(&mut sql, 1).unwrap();
    sql.execute(
        "INSERT INTO schema_migrations (version, applied_at) VALUES (?1, 0)",
        &[(schema::latest_version() + 1).into()],
    )
    .unwrap();
    let err = Engine::open(sql, Config::default(), 2).err().unwrap();
    assert!(err.to_string().contains("newer lossless-wasm"), "{err}");
}

/// Every statement on the per-turn path is answered from an index, never by scanning a table —
/// including the foreign-key and trigger work an INSERT does behind the scenes.
pub fn per_turn_queries_use_indexes_not_scans<S: Sql>(open: impl Fn() -> S) {
    let mut sql = open();
    schema::migrate(&mut sql, 1).unwrap();
    for query in [
        messages::INSERT_SQL,
        messages::INSERT_PART_SQL,
        context::INSERT_MESSAGE_SQL,
        advancements::RECORD_SQL,
        context::NEWEST_BEFORE_SQL,
        context::NEWER_THAN_SQL,
        compaction::REPEAT_SKIP_SQL,
        compaction::NEWEST_MESSAGE_TOKENS_SQL,
        conversations::FIND_ACTIVE_SQL,
        advancements::FIND_SQL,
    ]
    .into_iter()
    .chain(lossless_wasm::store::TURN_STATEMENTS.iter().copied())
    {
        let params: Vec<lossless_wasm::store::SqlValue> = (0..query.matches('?').count())
            .map(|_| 1i64.into())
            .collect();
        let plan = sql
            .query(&format!("EXPLAIN QUERY PLAN {query}"), &params)
            .unwrap();
        let details: Vec<String> = plan.iter().map(|r| r.text(3).unwrap()).collect();
        // A plain INSERT may need no lookups at all; a SELECT always has a plan.
        assert!(
            !details.is_empty() || !query.starts_with("SELECT"),
            "no plan for {query}"
        );
        for detail in &details {
            // Scanning a LIMITed subquery's own result is fine; scanning a table is not.
            let table_scan = detail.starts_with("SCAN") && !detail.starts_with("SCAN (subquery");
            assert!(!table_scan, "query scans a table ({detail}): {query}");
        }
    }
}

pub fn huge_messages_and_nul_bytes_are_stored_intact<S: Sql>(open: impl Fn() -> S) {
    let mut engine = Engine::open(open(), Config::default(), 1).unwrap();
    let huge = "x".repeat(10 * 1024 * 1024);
    let nul = "before\u{0}after";
    let messages = vec![
        json!({"role": "user", "content": huge, "timestamp": 1}),
        json!({"role": "user", "content": nul, "timestamp": 2}),
    ];
    engine.commit_turn(turn("t1", messages.clone()), 2).unwrap();
    let view = engine
        .assemble(
            decode(
                "assemble",
                json!({"sessionId": "s1", "sessionKey": "k", "tokenBudget": 4_000_000}),
            )
            .unwrap(),
            3,
        )
        .unwrap();
    let back: Vec<Value> = view
        .messages
        .iter()
        .map(|m| serde_json::from_str(m).unwrap())
        .collect();
    assert_eq!(back, messages);
    let hits = engine
        .search(
            decode::<SearchParams>(
                "search",
                json!({"sessionId": "s1", "sessionKey": "k", "pattern": "after"}),
            )
            .unwrap(),
        )
        .unwrap();
    assert_eq!(hits.len(), 1, "text after a NUL byte is searchable");
}

pub fn search_finds_words_cjk_and_rejects_bad_fts_syntax<S: Sql>(open: impl Fn() -> S) {
    let mut engine = Engine::open(open(), Config::default(), 1).unwrap();
    let messages = vec![
        json!({"role": "user", "content": "The build fails in src/main.rs with error E0308", "timestamp": 1}),
        json!({"role": "assistant", "content": [{"type": "text", "text": "我们需要静默模式来运行测试"}], "timestamp": 2}),
        json!({"role": "user", "content": "Robert'); DROP TABLE messages;-- and \"quotes\"", "timestamp": 3}),
    ];
    engine.commit_turn(turn("t1", messages), 2).unwrap();
    let search = |engine: &mut Engine<S>, pattern: &str, mode: &str| {
        engine.search(
            decode::<SearchParams>(
                "search",
                json!({"sessionId": "s1", "sessionKey": "k", "pattern": pattern, "mode": mode}),
            )
            .unwrap(),
        )
    };
    assert_eq!(search(&mut engine, "src/main.rs", "text").unwrap().len(), 1);
    assert_eq!(
        search(&mut engine, "BUILD FAILS", "text").unwrap().len(),
        1,
        "case-insensitive"
    );
    assert_eq!(
        search(&mut engine, "fails build", "text").unwrap().len(),
        0,
        "literal, in order"
    );
    let cjk = search(&mut engine, "静默", "text").unwrap();
    assert_eq!(cjk.len(), 1, "CJK substring recall");
    assert!(cjk[0].snippet.contains("静默"));
    assert_eq!(
        search(&mut engine, "DROP TABLE messages;--", "text")
            .unwrap()
            .len(),
        1,
        "SQL in a pattern is just text"
    );
    assert_eq!(search(&mut engine, "\"quotes\"", "text").unwrap().len(), 1);
    assert_eq!(
        search(&mut engine, "build AND error", "full_text")
            .unwrap()
            .len(),
        1
    );
    let err = search(&mut engine, "\"unbalanced", "full_text").unwrap_err();
    assert!(err.to_string().contains("invalid full-text query"), "{err}");
    assert!(search(&mut engine, "  ", "text")
        .unwrap_err()
        .to_string()
        .contains("pattern"));
    assert!(search(&mut engine, "x", "regex")
        .unwrap_err()
        .to_string()
        .contains("mode"));
    assert_eq!(
        count(engine.sql(), "SELECT COUNT(*) FROM messages"),
        3,
        "nothing was dropped"
    );
}

pub fn duplicate_tool_call_ids_and_parts_are_recorded<S: Sql>(open: impl Fn() -> S) {
    let mut engine = Engine::open(open(), Config::default(), 1).unwrap();
    let call = |id: &str, ts: i64| json!({"role": "assistant", "content": [{"type": "thinking", "thinking": "hmm"}, {"type": "toolCall", "id": id, "name": "bash", "arguments": {"command": "ls"}}], "timestamp": ts});
    let result = |id: &str, ts: i64| json!({"role": "toolResult", "toolCallId": id, "toolName": "bash", "content": [{"type": "text", "text": "a.txt"}], "isError": false, "timestamp": ts});
    engine
        .commit_turn(
            turn(
                "t1",
                vec![
                    call("c1", 1),
                    result("c1", 2),
                    call("c1", 3),
                    result("c1", 4),
                ],
            ),
            2,
        )
        .unwrap();
    assert_eq!(
        count(engine.sql(), "SELECT COUNT(*) FROM messages"),
        4,
        "a reused tool-call id is not a duplicate message"
    );
    assert_eq!(
        count(
            engine.sql(),
            "SELECT COUNT(*) FROM message_parts WHERE kind = 'tool_call' AND tool_call_id = 'c1'"
        ),
        2
    );
    assert_eq!(
        count(
            engine.sql(),
            "SELECT COUNT(*) FROM message_parts WHERE kind = 'tool_result' AND tool_call_id = 'c1'"
        ),
        2
    );
    // Blocks that link to no tool call (the thinking here) are in raw_json only (migration 10).
    assert_eq!(
        count(
            engine.sql(),
            "SELECT COUNT(*) FROM message_parts WHERE kind = 'reasoning'"
        ),
        0
    );
    assert_eq!(count(engine.sql(), "SELECT COUNT(*) FROM message_parts"), 4);
}

fn doctor(engine: &mut Engine<impl Sql>, fix: bool) -> lossless_wasm::engine::DoctorReport {
    engine
        .doctor(decode("doctor", json!({"fix": fix})).unwrap())
        .unwrap()
}

fn text_search<S: Sql>(engine: &mut Engine<S>, pattern: &str) -> Vec<String> {
    let params = decode::<SearchParams>(
        "search",
        json!({"sessionId": "s1", "sessionKey": "k", "pattern": pattern, "mode": "text"}),
    )
    .unwrap();
    engine
        .search(params)
        .unwrap()
        .into_iter()
        .map(|h| h.snippet)
        .collect()
}

/// Messages of every shape the text derivation handles.
fn varied_messages() -> Vec<Value> {
    vec![
        json!({"role": "user", "content": "say \"hi\" to C:\\path\\file\nnext line", "timestamp": 1}),
        json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": "private reasoning"},
            {"type": "text", "text": "alpha"},
            {"type": "text", "text": ""},
            {"type": "text", "text": "beta 静默模式 😀 done"},
            {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a.txt", "n": 1.5, "q": "x\"y"}},
            {"type": "toolCall", "id": "c2", "name": "noargs"},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"}
        ], "timestamp": 2}),
        json!({"role": "toolResult", "toolCallId": "c1", "toolName": "read", "content": [{"type": "text", "text": "file body\twith tab"}], "timestamp": 3}),
        json!({"role": "bashExecution", "command": "ls -la", "output": "total 0\nnul\u{0}here", "timestamp": 4}),
        json!({"role": "compactionSummary", "summary": "earlier: the \\ backslash story", "timestamp": 5}),
    ]
}

pub fn a_version_6_database_upgrades_keeping_every_message_searchable_and_recognised<S: Sql>(
    open: impl Fn() -> S,
) {
    let mut sql = open();
    migrate_to(&mut sql, 6);
    sql.execute("INSERT INTO conversations (id, session_key, session_id, created_at, message_count, token_count, next_ordinal, context_token_count) VALUES (1, 'k', 's1', 0, 5, 50, 5, 50)", &[]).unwrap();
    // Stored as a version-6 build stored them: text in `content`, identity as hex text.
    for (i, value) in varied_messages().iter().enumerate() {
        let m = lossless_wasm::core::message::parse_message(value, "m").unwrap();
        let seq = i as i64 + 1;
        sql.execute(
            "INSERT INTO messages (id, conversation_id, seq, role, content, token_count, identity_hash, raw_json, created_at) VALUES (?1, 1, ?1, ?2, ?3, 10, ?4, ?5, 0)",
            &[seq.into(), m.role.as_str().into(), m.text.as_str().into(), m.identity.as_str().into(), m.raw_json.as_str().into()],
        )
        .unwrap();
        sql.execute(
            "INSERT INTO messages_fts (docid, content) VALUES (CAST(?1 AS INTEGER), ?2)",
            &[seq.into(), m.text.as_str().into()],
        )
        .unwrap();
        sql.execute("INSERT INTO context_items (conversation_id, ordinal, message_id, token_count) VALUES (1, ?1, ?1, 10)", &[seq.into()]).unwrap();
    }
    let mut engine = Engine::open(sql, Config::default(), 5).unwrap();
    assert_eq!(
        schema::current_version(engine.sql()).unwrap(),
        schema::latest_version()
    );
    assert_eq!(
        count(
            engine.sql(),
            "SELECT COUNT(*) FROM pragma_table_info('messages') WHERE name = 'content'"
        ),
        0,
        "the text copy is gone"
    );
    assert_eq!(count(engine.sql(), "SELECT COUNT(*) FROM messages WHERE typeof(identity_hash) = 'blob' AND length(identity_hash) = 16"), 5);
    assert_eq!(
        text_search(&mut engine, "next line").len(),
        1,
        "word search over an old message"
    );
    assert_eq!(
        text_search(&mut engine, "静默模式").len(),
        1,
        "CJK search over an old message"
    );
    assert_eq!(text_search(&mut engine, "backslash story").len(), 1);
    let again = engine
        .commit_turn(turn("t-replay", varied_messages()), 7)
        .unwrap();
    assert_eq!(
        again.stored_messages, 0,
        "messages stored before the upgrade are recognised, not stored twice"
    );
    let report = doctor(&mut engine, false);
    assert!(report.ok, "{:?}", report.checks);
}

/// Migration 11 on a version-10 database: its trigger rows stand for one decision each, the next
/// repeated decision is folded into the latest row, and lookups by summary (and the foreign
/// key's, when a summary is deleted) still use the index that now skips rows without one.
pub fn a_version_10_database_keeps_its_compaction_log_and_folds_repeated_decisions<S: Sql>(
    open: impl Fn() -> S,
) {
    let mut sql = open();
    migrate_to(&mut sql, 10);
    sql.execute("INSERT INTO conversations (id, session_key, session_id, created_at) VALUES (1, 'k', 's1', 0)", &[]).unwrap();
    sql.execute("INSERT INTO summaries (id, conversation_id, kind, depth, content, token_count, source_token_count, summarizer, created_at) VALUES (7, 1, 'leaf', 0, 's', 7, 70, 'test', 0)", &[]).unwrap();
    for (id, pass, outcome, summary) in [
        (1, "trigger", "skipped", None),
        (2, "trigger", "skipped", None),
        (3, "leaf", "compacted", Some(7)),
    ] {
        sql.execute(
            "INSERT INTO compaction_events (id, conversation_id, created_at, pass, outcome, reason, summary_id) VALUES (?1, 1, ?1, ?2, ?3, 'below_leaf_chunk', ?4)",
            &[(id as i64).into(), pass.into(), outcome.into(), summary.map(|s: i64| s).into()],
        )
        .unwrap();
    }
    schema::migrate(&mut sql, 5).unwrap();
    assert_eq!(
        schema::current_version(&mut sql).unwrap(),
        schema::latest_version()
    );
    assert_eq!(
        count(
            &mut sql,
            "SELECT COUNT(*) FROM compaction_events WHERE repeats = 1 AND last_at IS NULL"
        ),
        3,
        "old rows are one decision each"
    );
    let plan = sql
        .query(
            "EXPLAIN QUERY PLAN SELECT id FROM compaction_events WHERE summary_id = ?1",
            &[7i64.into()],
        )
        .unwrap();
    assert!(
        plan.iter()
            .any(|r| r.text(3).unwrap().contains("compaction_events_by_summary")),
        "lookups by summary use the partial index"
    );
    let skipped = compaction::Event {
        conversation_id: 1,
        pass: "trigger",
        level: None,
        outcome: "skipped",
        reason: "below_leaf_chunk",
        tokens_before: Some(5),
        tokens_after: None,
        summary_id: None,
        telemetry_json: Some("{}"),
    };
    compaction::record_decision(&mut sql, &skipped, 10).unwrap();
    compaction::record_decision(&mut sql, &skipped, 11).unwrap();
    let row = sql.query_row("SELECT id, repeats, created_at, last_at FROM compaction_events ORDER BY id DESC LIMIT 1", &[]).unwrap().unwrap();
    assert_eq!(
        (
            row.int(0).unwrap(),
            row.int(1).unwrap(),
            row.int(2).unwrap(),
            row.int(3).unwrap()
        ),
        (4, 2, 10, 11),
        "after a compaction, a new run"
    );
    sql.execute("DELETE FROM compaction_events WHERE summary_id = 7", &[])
        .unwrap();
    sql.execute("DELETE FROM summaries WHERE id = 7", &[])
        .unwrap();
    assert_eq!(count(&mut sql, "SELECT COUNT(*) FROM compaction_events"), 3);
}

pub fn literal_search_finds_quotes_backslashes_newlines_cjk_and_tool_arguments<S: Sql>(
    open: impl Fn() -> S,
) {
    let mut engine = Engine::open(open(), Config::default(), 1).unwrap();
    engine
        .commit_turn(turn("t1", varied_messages()), 2)
        .unwrap();
    for pattern in [
        "say \"HI\" to",
        "C:\\path\\file",
        "file\nnext",
        "alpha\nbeta",
        "静默模式 😀",
        "😀",
        "{\"path\":\"a.txt\"",
        "\":\"",
        "\"x\\\"y\"",
        "tool call noargs",
        "body\twith",
        "nul\u{2400}here",
        "nul\u{0}here",
        "$ ls -la\ntotal",
    ] {
        assert_eq!(
            text_search(&mut engine, pattern).len(),
            1,
            "pattern {pattern:?}"
        );
    }
    for pattern in [
        "\\\\",
        "private reasoning",
        "say hi",
        "AAAA",
        "alphabeta",
        "\"hi\\",
    ] {
        assert_eq!(
            text_search(&mut engine, pattern).len(),
            0,
            "pattern {pattern:?} must not match"
        );
    }
    assert_eq!(
        text_search(&mut engine, "\\").len(),
        3,
        "a backslash: the path, the summary, the tool arguments' JSON"
    );
    let hit = text_search(&mut engine, "静默");
    assert!(hit[0].contains("静默模式"), "{hit:?}");
}

/// Words run together, split by punctuation, in several cases and scripts, so that patterns cut
/// from them start and end inside words as often as on a word's edge.
const SCAN_WORDS: [&str; 30] = [
    "TypeError",
    "error",
    "Error:",
    "parser",
    "my_parser",
    "reparse",
    "parse",
    "ok",
    "okay",
    "OK",
    "deploy",
    "deployment",
    "a4",
    "a4b",
    "x.y",
    "main.rs",
    "静默",
    "安静默认",
    "模式",
    "🚀",
    "100%",
    "f(1)",
    "café",
    "ÉCOLE",
    "école",
    "foo-bar",
    "snake_case",
    "CamelCase",
    "\"quoted\"",
    "path/to/file",
];
const SCAN_JOINS: [&str; 7] = [" ", " ", "\n", ", ", "", "-", "_"];

/// A small deterministic generator (xorshift64), so every backend sees the same messages.
struct Xorshift(u64);

impl Xorshift {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// Every literal search answers exactly what a scan of every stored text with
/// `literal::matches` answers: the index (FTS4 words on SQLite, trigrams on PostgreSQL) never
/// drops a match and the confirmation keeps nothing else. Patterns are cut at random from the
/// stored texts, so many begin or end inside a word. Fails, too, if too few patterns found
/// anything or too few were refused only for starting or ending inside a word.
pub fn literal_search_answers_what_a_scan_of_every_text_answers<S: Sql>(open: impl Fn() -> S) {
    use lossless_wasm::store::literal;
    let mut engine = Engine::open(open(), Config::default(), 1).unwrap();
    let mut rng = Xorshift(0x9e37_79b9_7f4a_7c15);
    for t in 0..10 {
        let messages: Vec<Value> = (0..20)
            .map(|i| {
                let mut text = String::new();
                for w in 0..4 + rng.below(6) {
                    if w > 0 {
                        text.push_str(SCAN_JOINS[rng.below(SCAN_JOINS.len())]);
                    }
                    text.push_str(SCAN_WORDS[rng.below(SCAN_WORDS.len())]);
                }
                json!({"role": if i % 2 == 0 { "user" } else { "assistant" }, "content": text, "timestamp": t * 100 + i})
            })
            .collect();
        engine
            .commit_turn(turn(&format!("t{t}"), messages), 2 + t as i64)
            .unwrap();
    }
    let stored: Vec<(i64, String)> = engine
        .sql()
        .query("SELECT id, raw_json FROM messages ORDER BY id", &[])
        .unwrap()
        .iter()
        .map(|row| {
            (
                row.int(0).unwrap(),
                lossless_wasm::core::message::text_of_raw_json(&row.text(1).unwrap()).unwrap(),
            )
        })
        .collect();
    assert_eq!(stored.len(), 200, "every generated message was stored");
    let mut patterns: Vec<String> = SCAN_WORDS.iter().map(|w| w.to_string()).collect();
    patterns.extend(
        [
            "Error", "ERROR", "pars", "ok", "o", "rs", "parse", "静", "_", "y", "ment",
        ]
        .map(str::to_owned),
    );
    while patterns.len() < 300 {
        let chars: Vec<char> = stored[rng.below(stored.len())].1.chars().collect();
        let start = rng.below(chars.len());
        let end = (start + 1 + rng.below(12)).min(chars.len());
        let pattern: String = chars[start..end].iter().collect();
        if !pattern.trim().is_empty() {
            patterns.push(pattern);
        }
    }
    let (mut with_hits, mut narrowed_by_edges) = (0, 0);
    for pattern in &patterns {
        let params = decode::<SearchParams>(
            "search",
            json!({"sessionId": "s1", "sessionKey": "k", "pattern": pattern, "limit": 500}),
        )
        .unwrap();
        let found: std::collections::BTreeSet<i64> = engine
            .search(params)
            .unwrap()
            .iter()
            .map(|hit| hit.id)
            .collect();
        let scanned: std::collections::BTreeSet<i64> = stored
            .iter()
            .filter(|(_, text)| literal::matches(text, pattern))
            .map(|(id, _)| *id)
            .collect();
        assert_eq!(
            found, scanned,
            "pattern {pattern:?}: the search (left) and the scan (right) differ"
        );
        let anywhere = stored
            .iter()
            .filter(|(_, text)| {
                text.to_ascii_lowercase()
                    .contains(&pattern.to_ascii_lowercase())
            })
            .count();
        with_hits += usize::from(!found.is_empty());
        narrowed_by_edges += usize::from(anywhere > found.len());
    }
    assert!(
        with_hits >= 100,
        "only {with_hits} of {} patterns found anything",
        patterns.len()
    );
    assert!(narrowed_by_edges >= 100, "only {narrowed_by_edges} patterns matched inside a word somewhere: the word rule was hardly tested");
}

/// A connection that counts the search's page queries (each ends `DESC LIMIT ?n` on every
/// backend) it passes on.
struct CountingPages<S: Sql> {
    inner: S,
    pages: std::rc::Rc<std::cell::Cell<usize>>,
}

impl<S: Sql> Sql for CountingPages<S> {
    fn execute(
        &mut self,
        sql: &str,
        params: &[lossless_wasm::store::SqlValue],
    ) -> lossless_wasm::error::Result<()> {
        self.inner.execute(sql, params)
    }
    fn query(
        &mut self,
        sql: &str,
        params: &[lossless_wasm::store::SqlValue],
    ) -> lossless_wasm::error::Result<Vec<lossless_wasm::store::Row>> {
        if sql.contains(" DESC LIMIT ?") {
            self.pages.set(self.pages.get() + 1);
        }
        self.inner.query(sql, params)
    }
    fn execute_script(&mut self, sql: &str) -> lossless_wasm::error::Result<()> {
        self.inner.execute_script(sql)
    }
    fn prepare(&mut self, sql: &str) -> lossless_wasm::error::Result<()> {
        self.inner.prepare(sql)
    }
    fn dialect(&self) -> lossless_wasm::store::Dialect {
        self.inner.dialect()
    }
}

/// A pattern that occurs in many texts but only inside words (`Error` in "TypeError") finds
/// nothing with one page query per source (messages, summaries), not a page after page of
/// candidates each refused in Rust: SQL already keeps to word starts (FTS4's words on SQLite, a
/// regular expression beside the trigram index on PostgreSQL). Checked to count at all: a
/// pattern that does match pages as usual.
pub fn a_pattern_found_only_inside_words_costs_one_page_per_source<S: Sql>(open: impl Fn() -> S) {
    let pages = std::rc::Rc::new(std::cell::Cell::new(0));
    let mut engine = Engine::open(
        CountingPages {
            inner: open(),
            pages: pages.clone(),
        },
        Config::default(),
        1,
    )
    .unwrap();
    for t in 0..4 {
        let messages: Vec<Value> = (0..100).map(|i| json!({"role": "user", "content": format!("step {t}.{i}: TypeError raised in handler_{i}"), "timestamp": t * 100 + i})).collect();
        engine
            .commit_turn(turn(&format!("t{t}"), messages), 2 + t as i64)
            .unwrap();
    }
    let mut search = |pattern: &str| {
        let params = decode::<SearchParams>(
            "search",
            json!({"sessionId": "s1", "sessionKey": "k", "pattern": pattern, "limit": 5}),
        )
        .unwrap();
        pages.set(0);
        let hits = engine.search(params).unwrap().len();
        (hits, pages.get())
    };
    let (hits, counted) = search("TypeError");
    assert_eq!(hits, 5, "the words are there to find");
    assert!(counted >= 1, "the page queries are counted ({counted})");
    assert_eq!(
        search("Error"),
        (0, 2),
        "a pattern found only inside words: no hit, one page per source"
    );
    assert_eq!(search("andler"), (0, 2));
}

pub fn the_index_view_derives_the_text_ingest_indexed_and_the_doctor_checks_it<S: Sql>(
    open: impl Fn() -> S,
) {
    let mut engine = Engine::open(open(), Config::default(), 1).unwrap();
    engine
        .commit_turn(turn("t1", varied_messages()), 2)
        .unwrap();
    // A turn's messages wait for the index (store/retrieval/search_index.rs): its content view covers
    // indexed messages only, `messages_text` every message.
    assert!(engine
        .sql()
        .query("SELECT rowid FROM messages_indexed_text", &[])
        .unwrap()
        .is_empty());
    assert_eq!(
        engine
            .sql()
            .query("SELECT rowid FROM messages_text", &[])
            .unwrap()
            .len(),
        5
    );
    let rows = engine.sql().query("SELECT m.raw_json, v.content FROM messages m JOIN messages_text v ON v.rowid = m.id ORDER BY m.id", &[]).unwrap();
    assert_eq!(rows.len(), 5);
    for row in &rows {
        let derived =
            lossless_wasm::core::message::text_of_raw_json(&row.text(0).unwrap()).unwrap();
        assert_eq!(
            row.text(1).unwrap(),
            derived,
            "the SQL view and Rust derive the same text"
        );
    }
    let integrity = engine
        .sql()
        .query_row("PRAGMA integrity_check", &[])
        .unwrap()
        .unwrap()
        .text(0)
        .unwrap();
    assert_eq!(integrity, "ok");
    assert!(doctor(&mut engine, false).ok);
    // A ghost entry and a message missing from the index: found, and repaired from raw_json.
    engine
        .sql()
        .execute(
            "INSERT INTO messages_fts (docid, content) VALUES (424242, 'ghost row')",
            &[],
        )
        .unwrap();
    engine.sql().execute("INSERT INTO messages (conversation_id, seq, role, token_count, identity_hash, raw_json, created_at) VALUES (1, 6, 'user', 5, 'unindexed', '{\"role\":\"user\",\"content\":\"zebra crossing\"}', 0)", &[]).unwrap();
    engine
        .sql()
        .execute(
            "UPDATE messages_fts_progress SET indexed_through = (SELECT MAX(id) FROM messages)",
            &[],
        )
        .unwrap();
    let found = doctor(&mut engine, false);
    assert!(
        found
            .checks
            .iter()
            .any(|c| c.name == "messages_fts" && !c.ok),
        "{:?}",
        found.checks
    );
    let fixed = doctor(&mut engine, true);
    assert!(fixed.fixed.contains(&"messages_fts"), "{:?}", fixed.checks);
    assert!(text_search(&mut engine, "ghost row").is_empty());
    assert_eq!(
        text_search(&mut engine, "zebra crossing").len(),
        1,
        "the rebuilt index holds the missing message"
    );
}

/// Migration 12 on a version-11 database: the per-conversation state moves onto `conversations`
/// (host facts, retry state, pending work, with their times), advancements move to a WITHOUT
/// ROWID table with every column, and summaries stay searchable after their index is rebuilt.
/// Fails if the migration drops or mangles any of those rows.
pub fn a_version_11_database_keeps_its_state_advancements_and_summary_search<S: Sql>(
    open: impl Fn() -> S,
) {
    use lossless_wasm::core::accounting::HostFacts;
    use lossless_wasm::core::compaction::RetryState;
    use lossless_wasm::store::accounting;
    let mut sql = open();
    migrate_to(&mut sql, 11);
    let facts = HostFacts {
        window: Some(200_000),
        overhead: Some(1234),
        last_output: Some(77),
        ..HostFacts::default()
    };
    let retry = RetryState {
        consecutive_failures: 2,
        breaker_open: true,
        next_retry_at_ms: Some(99),
        ..RetryState::default()
    };
    let pending = compaction::Pending {
        work: "sweep".into(),
        budget: 4000,
        reason: "over_threshold".into(),
    };
    let (facts_json, retry_json, pending_json) = (
        serde_json::to_string(&facts).unwrap(),
        serde_json::to_string(&retry).unwrap(),
        serde_json::to_string(&pending).unwrap(),
    );
    sql.execute_script(
        "INSERT INTO conversations (id, session_key, session_id, created_at) VALUES (1, 'k', 's1', 0), (2, 'k2', 's2', 0), (3, 'k3', 's3', 0);
         INSERT INTO turn_advancements (advancement_key, conversation_id, payload_hash, message_count, committed_at)
           VALUES ('a1', 1, 'h1', 3, 10), ('a2', 1, 'h2', 0, 11), ('b1', 2, 'h3', 5, 12);
         INSERT INTO summaries (id, conversation_id, kind, depth, content, token_count, source_token_count, summarizer, created_at)
           VALUES (4, 1, 'leaf', 0, 'the walrus migration plan', 5, 50, 'test', 0);",
    )
    .unwrap();
    sql.execute(
        "INSERT INTO host_accounting (conversation_id, facts_json, updated_at) VALUES (1, ?1, 21)",
        &[facts_json.as_str().into()],
    )
    .unwrap();
    sql.execute("INSERT INTO compaction_state (conversation_id, state_json, pending_json, updated_at) VALUES (1, ?1, ?2, 22), (2, ?1, NULL, 23)", &[retry_json.as_str().into(), pending_json.as_str().into()])
        .unwrap();
    schema::migrate(&mut sql, 5).unwrap();
    assert_eq!(
        schema::current_version(&mut sql).unwrap(),
        schema::latest_version()
    );
    for gone in [
        "host_accounting",
        "compaction_state",
        "turn_advancements_by_conversation",
        "summaries_fts_docsize",
        "turn_advancements_v12",
    ] {
        assert_eq!(
            count(
                &mut sql,
                &format!("SELECT COUNT(*) FROM sqlite_master WHERE name = '{gone}'")
            ),
            0,
            "{gone} is gone"
        );
    }
    assert_eq!(accounting::load(&mut sql, 1).unwrap(), facts);
    assert_eq!(
        accounting::load(&mut sql, 2).unwrap(),
        HostFacts::default(),
        "no facts stored: none invented"
    );
    assert_eq!(
        compaction::load_state(&mut sql, 1).unwrap(),
        (retry.clone(), Some(pending))
    );
    assert_eq!(compaction::load_state(&mut sql, 2).unwrap(), (retry, None));
    assert_eq!(
        compaction::load_state(&mut sql, 3).unwrap(),
        (RetryState::default(), None)
    );
    let times = sql
        .query(
            "SELECT id, host_facts_at, compaction_state_at FROM conversations ORDER BY id",
            &[],
        )
        .unwrap();
    let times: Vec<(i64, Option<i64>, Option<i64>)> = times
        .iter()
        .map(|r| {
            (
                r.int(0).unwrap(),
                r.opt_int(1).unwrap(),
                r.opt_int(2).unwrap(),
            )
        })
        .collect();
    assert_eq!(
        times,
        [
            (1, Some(21), Some(22)),
            (2, None, Some(23)),
            (3, None, None)
        ]
    );
    let rows = sql.query("SELECT advancement_key, conversation_id, payload_hash, message_count, committed_at FROM turn_advancements ORDER BY advancement_key", &[]).unwrap();
    let rows: Vec<String> = rows
        .iter()
        .map(|r| {
            format!(
                "{} {} {} {} {}",
                r.text(0).unwrap(),
                r.int(1).unwrap(),
                r.text(2).unwrap(),
                r.int(3).unwrap(),
                r.int(4).unwrap()
            )
        })
        .collect();
    assert_eq!(rows, ["a1 1 h1 3 10", "a2 1 h2 0 11", "b1 2 h3 5 12"]);
    let mut engine = Engine::open(sql, Config::default(), 30).unwrap();
    let full = |engine: &mut Engine<S>, pattern: &str| {
        let params = decode::<SearchParams>(
            "search",
            json!({"sessionId": "s1", "sessionKey": "k", "pattern": pattern, "mode": "full_text"}),
        )
        .unwrap();
        engine
            .search(params)
            .unwrap()
            .into_iter()
            .map(|h| (h.kind, h.id))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        full(&mut engine, "walrus"),
        [("summary", 4)],
        "the rebuilt summary index finds the old summary"
    );
    assert_eq!(text_search(&mut engine, "walrus migration").len(), 1);
    let replay = engine
        .commit_turn(
            turn(
                "a1",
                vec![json!({"role": "user", "content": "x", "timestamp": 1})],
            ),
            31,
        )
        .unwrap();
    assert_eq!(
        (replay.stored_messages, replay.warning.is_some()),
        (0, true),
        "an advancement key from before the upgrade is still known"
    );
    let report = doctor(&mut engine, false);
    assert!(report.ok, "{:?}", report.checks);
}

/// Runs every case, naming the one that fails.
#[macro_export]
macro_rules! for_each_store_case {
    ($run:ident) => {
        $run!(migrations_create_the_latest_schema_and_are_idempotent);
        $run!(a_version_1_database_upgrades_on_open_and_keeps_its_messages);
        $run!(backfill_marks_fallback_and_truncated_summaries_seed_01);
        $run!(a_newer_schema_is_refused_not_downgraded);
        $run!(per_turn_queries_use_indexes_not_scans);
        $run!(huge_messages_and_nul_bytes_are_stored_intact);
        $run!(search_finds_words_cjk_and_rejects_bad_fts_syntax);
        $run!(duplicate_tool_call_ids_and_parts_are_recorded);
        $run!(a_version_6_database_upgrades_keeping_every_message_searchable_and_recognised);
        $run!(a_version_10_database_keeps_its_compaction_log_and_folds_repeated_decisions);
        $run!(a_version_11_database_keeps_its_state_advancements_and_summary_search);
        $run!(literal_search_finds_quotes_backslashes_newlines_cjk_and_tool_arguments);
        $run!(the_index_view_derives_the_text_ingest_indexed_and_the_doctor_checks_it);
        $run!(literal_search_answers_what_a_scan_of_every_text_answers);
        $run!(a_pattern_found_only_inside_words_costs_one_page_per_source);
    };
}
