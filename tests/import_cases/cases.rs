// The lossless-claw import tests, shared by import_native.rs (SQLite) and import_pg.rs
// (PostgreSQL): each defines `Db` (the connection type of the store imported into) and `open_db()`
// (a fresh, empty one) and includes this file. The source is always a SQLite file (`NativeSql`),
// as lossless-claw's `lcm.db` is.
use std::collections::BTreeSet;

use lossless_wasm::core::config::Config;
use lossless_wasm::engine::*;
use lossless_wasm::store::native::NativeSql;
use lossless_wasm::store::Sql;
use serde_json::{json, Value};

const SCHEMA: &str = "
CREATE TABLE conversations (conversation_id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, session_key TEXT,
  active INTEGER NOT NULL DEFAULT 1, archived_at TEXT, archive_cause TEXT, title TEXT, bootstrapped_at TEXT,
  created_at TEXT NOT NULL DEFAULT (datetime('now')), updated_at TEXT NOT NULL DEFAULT (datetime('now')));
CREATE TABLE messages (message_id INTEGER PRIMARY KEY AUTOINCREMENT, conversation_id INTEGER NOT NULL REFERENCES conversations ON DELETE CASCADE,
  seq INTEGER NOT NULL, role TEXT NOT NULL CHECK (role IN ('system','user','assistant','tool')), content TEXT NOT NULL,
  token_count INTEGER NOT NULL, identity_hash TEXT, openclaw_sender_metadata TEXT, transcript_entry_id TEXT,
  created_at TEXT NOT NULL DEFAULT (datetime('now')), large_content TEXT, stable_event_key TEXT, UNIQUE (conversation_id, seq));
CREATE TABLE message_parts (part_id TEXT PRIMARY KEY, message_id INTEGER NOT NULL REFERENCES messages ON DELETE CASCADE, session_id TEXT NOT NULL,
  part_type TEXT NOT NULL, ordinal INTEGER NOT NULL, text_content TEXT, tool_call_id TEXT, tool_name TEXT, tool_input TEXT, tool_output TEXT,
  metadata TEXT, UNIQUE (message_id, ordinal));
CREATE TABLE summaries (summary_id TEXT PRIMARY KEY, conversation_id INTEGER NOT NULL REFERENCES conversations ON DELETE CASCADE,
  kind TEXT NOT NULL CHECK (kind IN ('leaf','condensed')), depth INTEGER NOT NULL DEFAULT 0, content TEXT NOT NULL, token_count INTEGER NOT NULL,
  earliest_at TEXT, latest_at TEXT, descendant_count INTEGER NOT NULL DEFAULT 0, descendant_token_count INTEGER NOT NULL DEFAULT 0,
  source_message_token_count INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL DEFAULT (datetime('now')), file_ids TEXT NOT NULL DEFAULT '[]',
  model TEXT NOT NULL DEFAULT 'unknown');
CREATE TABLE summary_messages (summary_id TEXT NOT NULL REFERENCES summaries ON DELETE CASCADE, message_id INTEGER NOT NULL REFERENCES messages ON DELETE RESTRICT,
  ordinal INTEGER NOT NULL, PRIMARY KEY (summary_id, message_id));
CREATE TABLE summary_parents (summary_id TEXT NOT NULL REFERENCES summaries ON DELETE CASCADE, parent_summary_id TEXT NOT NULL REFERENCES summaries ON DELETE RESTRICT,
  ordinal INTEGER NOT NULL, PRIMARY KEY (summary_id, parent_summary_id));
CREATE TABLE context_items (conversation_id INTEGER NOT NULL REFERENCES conversations ON DELETE CASCADE, ordinal INTEGER NOT NULL,
  item_type TEXT NOT NULL CHECK (item_type IN ('message','summary')), message_id INTEGER REFERENCES messages ON DELETE RESTRICT,
  summary_id TEXT REFERENCES summaries ON DELETE RESTRICT, created_at TEXT NOT NULL DEFAULT (datetime('now')), PRIMARY KEY (conversation_id, ordinal));
";

/// Builds the fixture: conversation 1 (agent main, active) with 24 messages, three leaves (one
/// normal, one `[Truncated from N tokens]`, one emergency fallback), one condensed summary over
/// the first two, and a view of [condensed, leaf 3, last 6 raw]; conversation 2 (archived) whose
/// view lost a message; conversation 3 of another agent.
fn fixture(path: &str) {
    let mut db = NativeSql::open(path).unwrap();
    db.execute_script(SCHEMA).unwrap();
    let ex = |db: &mut NativeSql, q: &str| db.execute_script(q).unwrap();
    ex(&mut db, "INSERT INTO conversations (conversation_id, session_id, session_key, active, created_at) VALUES (1, 'sess-a1', 'agent:main:telegram:direct:42', 1, '2026-05-02 09:00:00');");
    ex(&mut db, "INSERT INTO conversations (conversation_id, session_id, session_key, active, archive_cause, archived_at, created_at) VALUES (2, 'sess-a0', 'agent:main:telegram:direct:42', 0, 'manual-reset', '2026-05-01 18:00:00', '2026-05-01 08:00:00');");
    ex(&mut db, "INSERT INTO conversations (conversation_id, session_id, session_key, active, created_at) VALUES (3, 'sess-b1', 'agent:ops:main', 1, '2026-05-02 10:00:00');");
    let mut id: i64 = 0;
    for seq in 1..=24 {
        id += 1;
        let minute = seq;
        let (role, content) = match seq % 3 {
            1 => ("user", format!("Step {seq}: please migrate module_{seq} to the new logger; keep the `--json` flag working (ticket OPS-{}).", 1000 + seq)),
            2 => ("assistant", format!("Reading src/module_{seq}.ts and running `pnpm test module_{seq}` first.")),
            _ => ("tool", format!("PASS src/module_{seq}.test.ts (12 tests) — coverage 8{}%", seq % 10)),
        };
        db.execute(
            "INSERT INTO messages (message_id, conversation_id, seq, role, content, token_count, created_at) VALUES (?1, 1, ?2, ?3, ?4, ?5, ?6)",
            &[id.into(), (seq as i64).into(), role.into(), content.clone().into(), ((content.len() / 4) as i64).into(), format!("2026-05-02 09:{minute:02}:00").into()],
        )
        .unwrap();
        if role == "tool" {
            db.execute(
                "INSERT INTO message_parts (part_id, message_id, session_id, part_type, ordinal, tool_call_id, tool_name) VALUES (?1, ?2, 'sess-a1', 'tool', 0, ?3, 'bash')",
                &[format!("part-{id}").into(), id.into(), format!("toolu_{id:012}").into()],
            )
            .unwrap();
        }
    }
    // The same text twice in a row: both messages must survive the import.
    for (seq, mid) in [(1, 25), (2, 26), (3, 27)] {
        db.execute(
            "INSERT INTO messages (message_id, conversation_id, seq, role, content, token_count, created_at) VALUES (?1, 2, ?2, 'user', 'ok', 1, '2026-05-01 08:00:00')",
            &[(mid as i64).into(), (seq as i64).into()],
        )
        .unwrap();
    }
    db.execute("INSERT INTO messages (message_id, conversation_id, seq, role, content, token_count) VALUES (28, 3, 1, 'user', 'deploy the ops dashboard', 5)", &[]).unwrap();
    ex(&mut db, "INSERT INTO summaries (summary_id, conversation_id, kind, depth, content, token_count, earliest_at, latest_at, source_message_token_count, model, created_at) VALUES
        ('sum_aaaaaaaaaaaaaaaa', 1, 'leaf', 0, 'Migrated modules 1-6 to the new logger; tests pass; OPS-1001..OPS-1006 done.', 20, '2026-05-02T09:01:00.000Z', '2026-05-02T09:06:00.000Z', 120, 'claude-sonnet', '2026-05-02 09:30:00'),
        ('sum_bbbbbbbbbbbbbbbb', 1, 'leaf', 0, '[Truncated from 4120 tokens] Step 7: please migrate module_7 to the new logger; keep the', 25, '2026-05-02T09:07:00.000Z', '2026-05-02T09:12:00.000Z', 4120, 'claude-sonnet', '2026-05-02 09:31:00'),
        ('sum_cccccccccccccccc', 1, 'leaf', 0, '[LCM fallback summary; truncated for context management] Step 13: please migrate module_13', 22, '2026-05-02T09:13:00.000Z', '2026-05-02T09:18:00.000Z', 150, 'emergency-fallback', '2026-05-02 09:32:00'),
        ('sum_dddddddddddddddd', 1, 'condensed', 1, 'Modules 1-12 migrated to the new logger (module 7 partially summarized).', 18, '2026-05-02T09:01:00.000Z', '2026-05-02T09:12:00.000Z', 0, 'claude-sonnet', '2026-05-02 09:40:00');");
    for (summary, from, to) in [("sum_aaaaaaaaaaaaaaaa", 1, 6), ("sum_bbbbbbbbbbbbbbbb", 7, 12), ("sum_cccccccccccccccc", 13, 18)] {
        for m in from..=to {
            db.execute("INSERT INTO summary_messages (summary_id, message_id, ordinal) VALUES (?1, ?2, ?3)", &[summary.into(), (m as i64).into(), ((m - from) as i64).into()]).unwrap();
        }
    }
    // Inverted naming: parent_summary_id is the source of summary_id.
    ex(&mut db, "INSERT INTO summary_parents VALUES ('sum_dddddddddddddddd', 'sum_aaaaaaaaaaaaaaaa', 0), ('sum_dddddddddddddddd', 'sum_bbbbbbbbbbbbbbbb', 1);");
    ex(&mut db, "INSERT INTO context_items (conversation_id, ordinal, item_type, summary_id) VALUES (1, 0, 'summary', 'sum_dddddddddddddddd'), (1, 1, 'summary', 'sum_cccccccccccccccc');");
    for (i, m) in (19..=24).enumerate() {
        db.execute("INSERT INTO context_items (conversation_id, ordinal, item_type, message_id) VALUES (1, ?1, 'message', ?2)", &[((i + 2) as i64).into(), (m as i64).into()]).unwrap();
    }
    // Conversation 2's view lost message 25 (a bug class of the engine we replace).
    ex(&mut db, "INSERT INTO context_items (conversation_id, ordinal, item_type, message_id) VALUES (2, 0, 'message', 26), (2, 1, 'message', 27);");
    ex(&mut db, "INSERT INTO context_items (conversation_id, ordinal, item_type, message_id) VALUES (3, 0, 'message', 28);");
}

fn temp_path(name: &str) -> String {
    let dir = std::env::temp_dir().join(format!("lossless-wasm-import-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("lcm.db").to_string_lossy().into_owned()
}

fn engine() -> Engine<Db> {
    Engine::open(open_db(), Config::default(), 0).unwrap()
}

fn count(e: &mut Engine<Db>, q: &str) -> i64 {
    e.sql().query_row(q, &[]).unwrap().unwrap().int(0).unwrap()
}

fn file_bytes(path: &str) -> Vec<u8> {
    std::fs::read(path).unwrap()
}

#[test]
fn import_brings_over_conversations_messages_summaries_the_dag_and_the_view_and_marks_fallbacks() {
    let path = temp_path("full");
    fixture(&path);
    let before = file_bytes(&path);
    let mut e = engine();
    let mut src = NativeSql::open(&path).unwrap();
    let report = e.import_lossless_claw(&mut src, 5_000).unwrap();
    drop(src);
    assert_eq!(file_bytes(&path), before, "the source file is never modified");
    assert_eq!((report.conversations, report.messages, report.summaries, report.fallback_summaries), (3, 28, 4, 2), "{report:?}");
    assert_eq!(report.views, 2, "{report:?}");
    assert!(report.notes.iter().any(|n| n.contains("leaves 1 messages unreachable")), "{:?}", report.notes);

    // Archived: the host passes its own transcript of these sessions next turn, which starts the
    // active conversation; imported history stays searchable under the same key.
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM conversations WHERE status = 'active'"), 0);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM conversations WHERE archive_cause = 'imported-from-lossless-claw'"), 2);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM conversations WHERE archive_cause = 'manual-reset'"), 1);
    let first_texts: Vec<Value> = e.sql().query("SELECT raw_json FROM messages", &[]).unwrap().iter().map(|r| serde_json::from_str::<Value>(&r.text(0).unwrap()).unwrap()["content"][0]["text"].clone()).collect();
    assert_eq!(first_texts.iter().filter(|t| *t == "ok").count(), 3, "repeated messages all survive");
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM messages WHERE role = 'toolResult'"), 8);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM message_parts WHERE tool_call_id = 'toolu_000000000003'"), 1, "tool results keep their call id");
    let levels: Vec<(String, String)> = e.sql().query("SELECT substr(content, 1, 12), level FROM summaries ORDER BY id", &[]).unwrap().iter().map(|r| (r.text(0).unwrap(), r.text(1).unwrap())).collect();
    assert_eq!(levels.iter().filter(|(_, l)| l == "fallback").count(), 2, "{levels:?}");
    assert!(levels.iter().all(|(c, l)| (c.starts_with('[')) == (l == "fallback")), "{levels:?}");
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM summary_sources"), 2);
    assert_eq!(count(&mut e, "SELECT descendant_message_count FROM summaries WHERE depth = 1"), 12);

    // The imported view: condensed + leaf + 6 raw messages; everything reachable and findable.
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM context_items WHERE conversation_id = 1"), 8);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM context_items WHERE conversation_id = 1 AND summary_id IS NOT NULL"), 2);
    let doctor = e.doctor(decode("doctor", json!({})).unwrap()).unwrap();
    assert!(doctor.ok, "{:?}", doctor.checks);
    let key = "agent:main:telegram:direct:42";
    let hit = e.recall_grep(decode("grep", json!({"sessionId": "sess-a1", "sessionKey": key, "pattern": "OPS-1004"})).unwrap()).unwrap();
    let message = hit.hits.iter().find(|h| h.hit.kind == "message").expect("a summarized message is found");
    assert!(!message.in_view && message.covered_by.is_some());
    let archived = e.recall_grep(decode("grep", json!({"sessionId": "sess-a1", "sessionKey": key, "pattern": "ok", "scope": "conversation"})).unwrap()).unwrap();
    // The three "ok" messages of the segment archived before the import. (Summaries are left out:
    // "ok" is inside "tokens" in one, a literal match on PostgreSQL, not on SQLite, whose index
    // matches a pattern's first and last words whole; docs/scale-out.md, Not yet.)
    let found: Vec<_> = archived.hits.iter().filter(|h| h.hit.kind == "message").collect();
    assert_eq!(found.len(), 3, "the archived conversations of the same key are in scope");
    for h in found {
        assert_eq!(h.hit.snippet, "ok");
        assert_eq!(count(&mut e, &format!("SELECT COUNT(*) FROM conversations WHERE id = {} AND archive_cause = 'manual-reset'", h.hit.conversation_id)), 1);
    }
    // The host's next turn starts the active conversation; the imported history stays in reach.
    e.commit_turn(decode("commitTurn", json!({"sessionId": "sess-a1", "sessionKey": key, "advancementKey": "k1", "messages": [{"role": "user", "content": "continue", "timestamp": 1}]})).unwrap(), 7_000).unwrap();
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM conversations WHERE status = 'active'"), 1);
    let after = e.recall_grep(decode("grep", json!({"sessionId": "sess-a1", "sessionKey": key, "pattern": "OPS-1004"})).unwrap()).unwrap();
    assert!(!after.hits.is_empty());
    let other = e.recall_grep(decode("grep", json!({"sessionId": "sess-a1", "sessionKey": key, "pattern": "ops dashboard", "scope": "agent"})).unwrap()).unwrap();
    assert!(other.hits.is_empty(), "another agent's imported conversation stays out of reach");

    // The fallbacks are what repair redoes.
    let plan = e.repair_start(decode("repairStart", json!({"dryRun": true})).unwrap()).unwrap();
    let RepairStep::Done(plan) = plan else { panic!("a dry run is done at once") };
    assert_eq!(plan.planned.iter().filter(|p| p.reason == "fallback").count(), 2);
    assert_eq!(plan.planned.iter().filter(|p| p.reason == "cascade").count(), 1, "the condensed summary over the truncated leaf");
}

#[test]
fn a_second_import_adds_nothing_and_a_grown_source_adds_only_what_is_new() {
    let path = temp_path("twice");
    fixture(&path);
    let mut e = engine();
    e.import_lossless_claw(&mut NativeSql::open(&path).unwrap(), 5_000).unwrap();
    let totals = |e: &mut Engine<Db>| {
        ["conversations", "messages", "summaries", "summary_messages", "summary_sources", "context_items"].map(|t| count(e, &format!("SELECT COUNT(*) FROM {t}")))
    };
    let first = totals(&mut e);
    let again = e.import_lossless_claw(&mut NativeSql::open(&path).unwrap(), 6_000).unwrap();
    assert_eq!((again.conversations, again.messages, again.summaries, again.views), (0, 0, 0, 0), "{again:?}");
    assert_eq!(totals(&mut e), first);
    // The anchor kept running and stored one more message.
    NativeSql::open(&path).unwrap().execute_script("INSERT INTO messages (conversation_id, seq, role, content, token_count) VALUES (1, 25, 'user', 'one more step', 3);").unwrap();
    let grown = e.import_lossless_claw(&mut NativeSql::open(&path).unwrap(), 7_000).unwrap();
    assert_eq!((grown.conversations, grown.messages, grown.summaries), (0, 1, 0), "{grown:?}");
    let seen: BTreeSet<i64> = e.sql().query("SELECT seq FROM messages WHERE conversation_id = 1", &[]).unwrap().iter().map(|r| r.int(0).unwrap()).collect();
    assert_eq!(seen, (1..=25).collect());
}

#[test]
fn a_database_that_is_not_lossless_claws_is_refused_by_name() {
    let mut e = engine();
    let mut other = NativeSql::in_memory().unwrap();
    other.execute_script("CREATE TABLE notes (id INTEGER PRIMARY KEY);").unwrap();
    let err = e.import_lossless_claw(&mut other, 1).unwrap_err().to_string();
    assert!(err.contains("not a lossless-claw database"), "{err}");
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM conversations"), 0);
}
