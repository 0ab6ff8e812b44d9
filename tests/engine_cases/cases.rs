// The engine's tests (commits, assembly, bootstrap, sessions, migrations), shared by
// tests/native/engine.rs (SQLite) and tests/postgres/engine.rs (PostgreSQL): each defines `Db` (the connection
// type), `open_db()` (a fresh, empty store) and `reopen_db(path)` (the store named `path`, opened
// again as a restarted process would) and includes this file.
use lossless_wasm::core::config::Config;
use lossless_wasm::engine::*;
use lossless_wasm::store::schema;
use lossless_wasm::store::Sql;
use serde_json::{json, Value};

fn engine() -> Engine<Db> {
    Engine::open(open_db(), Config::default(), 1_000).unwrap()
}

fn user(text: &str, ts: i64) -> Value {
    json!({"role": "user", "content": text, "timestamp": ts})
}

fn assistant(text: &str, ts: i64) -> Value {
    json!({"role": "assistant", "content": [{"type": "text", "text": text}], "timestamp": ts, "usage": {"input": 1}})
}

fn commit(key: &str, messages: Vec<Value>) -> CommitTurnParams {
    decode("commitTurn", json!({"sessionId": "s1", "sessionKey": "agent:main:t", "advancementKey": key, "messages": messages})).unwrap()
}

fn count(engine: &mut Engine<Db>, sql: &str) -> i64 {
    engine.sql().query_row(sql, &[]).unwrap().unwrap().int(0).unwrap()
}

#[test]
fn commit_turn_is_atomic_and_idempotent_by_advancement_key() {
    let mut e = engine();
    let first = e.commit_turn(commit("k1", vec![user("hi", 1), assistant("hello", 2)]), 10).unwrap();
    assert_eq!(first.status, CommitStatus::Committed);
    assert_eq!(first.stored_messages, 2);
    let retry = e.commit_turn(commit("k1", vec![user("hi", 1), assistant("hello", 2)]), 11).unwrap();
    assert_eq!(retry.status, CommitStatus::Duplicate);
    assert_eq!(retry.warning, None);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM messages"), 2);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM turn_advancements"), 1);
}

#[test]
fn reused_advancement_key_with_other_content_keeps_the_first_commit_and_warns() {
    let mut e = engine();
    e.commit_turn(commit("k1", vec![user("hi", 1)]), 10).unwrap();
    let again = e.commit_turn(commit("k1", vec![user("something else", 5)]), 11).unwrap();
    assert_eq!(again.status, CommitStatus::Duplicate);
    assert!(again.warning.unwrap().contains("k1"));
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM messages"), 1);
}

#[test]
fn the_same_message_through_two_paths_is_stored_once() {
    let mut e = engine();
    e.commit_turn(commit("k1", vec![user("hi", 1), assistant("hello", 2)]), 10).unwrap();
    // The host later passes the same history (with refreshed metadata) to assemble and ingest.
    let mut again = assistant("hello", 2);
    again["usage"] = json!({"input": 99});
    let params = decode("ingest", json!({"sessionId": "s1", "sessionKey": "agent:main:t", "messages": [user("hi", 1), again]})).unwrap();
    assert_eq!(e.ingest(params, 11).unwrap(), 0);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM messages"), 2);
}

#[test]
fn a_malformed_message_stores_nothing_of_its_batch() {
    let mut e = engine();
    let bad = commit("k1", vec![user("fine", 1), json!({"role": "robot", "content": "x"})]);
    let err = e.commit_turn(bad, 10).unwrap_err();
    assert!(err.to_string().contains("messages[1].role"), "{err}");
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM messages"), 0);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM turn_advancements"), 0);
    // The key was not consumed: the corrected turn commits.
    assert_eq!(e.commit_turn(commit("k1", vec![user("fine", 1)]), 11).unwrap().status, CommitStatus::Committed);
}

#[test]
fn missing_params_name_the_field() {
    let err = decode::<CommitTurnParams>("commitTurn", json!({"sessionId": "s1", "messages": []})).unwrap_err();
    assert!(err.to_string().contains("advancementKey"), "{err}");
    let mut e = engine();
    let empty = decode("assemble", json!({"sessionId": ""})).unwrap();
    assert!(e.assemble(empty, 1).unwrap_err().to_string().contains("sessionId"));
}

#[test]
fn assemble_returns_the_newest_history_that_fits_the_budget_verbatim() {
    let mut e = engine();
    for turn in 0..50 {
        let key = format!("k{turn}");
        let messages = vec![user(&format!("question {turn} {}", "x".repeat(100)), turn * 2), assistant(&format!("answer {turn}"), turn * 2 + 1)];
        e.commit_turn(commit(&key, messages), 10).unwrap();
    }
    let params = |budget: u32| decode::<AssembleParams>("assemble", json!({"sessionId": "s1", "sessionKey": "agent:main:t", "tokenBudget": budget})).unwrap();
    let small = e.assemble(params(200), 20).unwrap();
    assert!(small.estimated_tokens <= 200);
    assert!(!small.messages.is_empty() && small.messages.len() < 100);
    let last: Value = serde_json::from_str(small.messages.last().unwrap()).unwrap();
    assert_eq!(last, assistant("answer 49", 99), "newest message comes back exactly as sent");
    assert!(small.system_prompt_addition.starts_with("[lossless-wasm]"));
    // Same state, same view: the prompt-cache prefix stays stable.
    assert_eq!(e.assemble(params(200), 21).unwrap(), small);
    // Within a turn (nothing new stored) a larger budget does not grow the view: the host's
    // second assemble passes a budget that ignores its system prompt.
    assert_eq!(e.assemble(params(1_000_000), 22).unwrap(), small);
    // A new turn brings the larger budget into effect.
    e.commit_turn(commit("k50", vec![user("next", 200), assistant("turn", 201)]), 23).unwrap();
    let all = e.assemble(params(1_000_000), 24).unwrap();
    assert_eq!(all.messages.len(), 102);
    assert_eq!(all.stored_messages, 102);
    // A smaller budget shrinks the view at once, and keeps the newest messages.
    let shrunk = e.assemble(params(100), 25).unwrap();
    assert!(shrunk.estimated_tokens <= 100 && !shrunk.messages.is_empty());
    assert_eq!(shrunk.messages.last(), all.messages.last());
}

#[test]
fn an_incrementally_updated_view_equals_a_fresh_one() {
    let mut cached = engine();
    let params = |budget: u32| decode::<AssembleParams>("assemble", json!({"sessionId": "s1", "sessionKey": "agent:main:t", "tokenBudget": budget})).unwrap();
    let mut turns = Vec::new();
    for turn in 0..40 {
        let messages = vec![user(&format!("q{turn} {}", "y".repeat(turn * 7 % 90)), turn as i64 * 2), assistant(&format!("a{turn}"), turn as i64 * 2 + 1)];
        cached.commit_turn(commit(&format!("k{turn}"), messages.clone()), 1).unwrap();
        turns.push(messages);
        let incremental = cached.assemble(params(300), 2).unwrap();
        let mut fresh = engine();
        for (i, m) in turns.iter().enumerate() {
            fresh.commit_turn(commit(&format!("k{i}"), m.clone()), 1).unwrap();
        }
        assert_eq!(incremental, fresh.assemble(params(300), 2).unwrap(), "after turn {turn}");
    }
}

#[test]
fn assemble_stores_host_history_it_has_not_seen() {
    let mut e = engine();
    let params = decode("assemble", json!({"sessionId": "s1", "sessionKey": "agent:main:t", "messages": [user("old", 1), assistant("older reply", 2)]})).unwrap();
    let view = e.assemble(params, 5).unwrap();
    assert_eq!(view.messages.len(), 2);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM messages"), 2);
}

#[test]
fn after_turn_stores_only_the_new_tail() {
    let mut e = engine();
    let history = vec![user("a", 1), assistant("b", 2), user("c", 3), assistant("d", 4)];
    let params = decode("afterTurn", json!({"sessionId": "s1", "messages": history, "prePromptMessageCount": 2})).unwrap();
    assert_eq!(e.after_turn(params, 5).unwrap(), 2);
    let bad = decode("afterTurn", json!({"sessionId": "s1", "messages": [], "prePromptMessageCount": 3})).unwrap();
    assert!(e.after_turn(bad, 6).unwrap_err().to_string().contains("prePromptMessageCount"));
}

#[test]
fn bootstrap_twice_imports_nothing_the_second_time() {
    let mut e = engine();
    let params = || decode::<BootstrapParams>("bootstrap", json!({"sessionId": "s1", "messages": [user("a", 1), assistant("b", 2)]})).unwrap();
    assert_eq!(e.bootstrap(params(), 1).unwrap().imported_messages, 2);
    assert_eq!(e.bootstrap(params(), 2).unwrap().imported_messages, 0);
}

#[test]
fn a_new_session_id_archives_the_old_conversation_and_keeps_its_messages() {
    let mut e = engine();
    e.commit_turn(commit("k1", vec![user("hi", 1)]), 10).unwrap();
    let next = decode("commitTurn", json!({"sessionId": "s2", "sessionKey": "agent:main:t", "advancementKey": "k2", "messages": [user("new", 20)]})).unwrap();
    e.commit_turn(next, 30).unwrap();
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM conversations WHERE status = 'archived'"), 1);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM messages"), 2);
    let view = e.assemble(decode("assemble", json!({"sessionId": "s2", "sessionKey": "agent:main:t"})).unwrap(), 31).unwrap();
    assert_eq!(view.messages.len(), 1, "the new conversation does not show the old one's messages");
}

#[test]
fn migrations_are_idempotent_and_a_newer_schema_is_refused() {
    let dir = std::env::temp_dir().join(format!("lossless-wasm-migrate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("db.sqlite");
    let path = path.to_str().unwrap();
    let _ = std::fs::remove_file(path);
    {
        let mut e = Engine::open(reopen_db(path), Config::default(), 1).unwrap();
        e.commit_turn(commit("k1", vec![user("kept", 1)]), 2).unwrap();
    }
    {
        let mut e = Engine::open(reopen_db(path), Config::default(), 3).unwrap();
        assert_eq!(count(&mut e, "SELECT COUNT(*) FROM messages"), 1, "reopening keeps data");
        assert_eq!(schema::current_version(e.sql()).unwrap(), schema::latest_version_for(e.sql().dialect()));
        e.sql().execute("INSERT INTO schema_migrations (version, applied_at) VALUES (999, 0)", &[]).unwrap();
    }
    let err = Engine::open(reopen_db(path), Config::default(), 4).err().unwrap();
    assert!(err.to_string().contains("newer"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_tool_call_without_its_result_gets_a_synthetic_unavailable_result() {
    let mut e = engine();
    let call = json!({"role": "assistant", "content": [{"type": "toolCall", "id": "c9", "name": "bash", "arguments": {"command": "make"}}], "timestamp": 2});
    e.commit_turn(commit("k1", vec![user("build it", 1), call]), 10).unwrap();
    e.commit_turn(commit("k2", vec![user("what happened?", 3), assistant("The build was interrupted.", 4)]), 11).unwrap();
    let params = decode::<AssembleParams>("assemble", json!({"sessionId": "s1", "sessionKey": "agent:main:t", "tokenBudget": 10_000})).unwrap();
    let view = e.assemble(params, 12).unwrap();
    let roles: Vec<String> = view.messages.iter().map(|m| serde_json::from_str::<Value>(m).unwrap()["role"].as_str().unwrap().to_owned()).collect();
    assert_eq!(roles, ["user", "assistant", "toolResult", "user", "assistant"]);
    let synthetic: Value = serde_json::from_str(&view.messages[2]).unwrap();
    assert_eq!(synthetic["toolCallId"], "c9");
    assert_eq!(synthetic["isError"], true);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM messages"), 4, "the synthetic result is shown, never stored");
    let again = e.assemble(decode::<AssembleParams>("assemble", json!({"sessionId": "s1", "sessionKey": "agent:main:t", "tokenBudget": 10_000})).unwrap(), 13).unwrap();
    assert_eq!(again, view, "byte-identical for the same state");
}

#[test]
fn a_bootstrap_written_in_several_writes_skips_duplicates_across_them_and_numbers_without_gaps() {
    // Messages of ~200 KB: the bootstrap writes whenever BULK_WRITE_BYTES of them are pending, so
    // the duplicates of later chunks are found in the database, not in the pending batch.
    let session = SessionRef { session_id: "s1".into(), session_key: Some("agent:main:t".into()) };
    let big = |word: &str, ts: i64| user(&format!("{word} {}", "x".repeat(200_000)), ts);
    let mut queue = vec![vec![big("a", 1), big("b", 2)], vec![big("b", 2), big("c", 3)], vec![big("a", 1), big("d", 4)], vec![big("d", 4)]].into_iter();
    let mut e = engine();
    let report = e.bootstrap_chunked(&session, || Ok(queue.next()), 5).unwrap();
    assert_eq!(report.imported_messages, 4, "{}", report.reason);
    assert!(report.reason.contains("of 7 messages (3 already stored)"), "{}", report.reason);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM messages"), 4);
    assert_eq!(count(&mut e, "SELECT MAX(seq) - MIN(seq) + 1 FROM messages"), 4);
    assert_eq!(count(&mut e, "SELECT COUNT(DISTINCT ordinal) FROM context_items"), 4);
    assert_eq!(count(&mut e, "SELECT message_count FROM conversations"), 4);
}

#[test]
fn a_bootstrap_in_chunks_is_one_transaction_and_skips_duplicates_across_chunks() {
    let session = SessionRef { session_id: "s1".into(), session_key: Some("agent:main:t".into()) };
    let chunks = || vec![vec![user("a", 1), user("b", 2)], vec![user("b", 2), user("c", 3)], vec![assistant("d", 4)]];
    let mut e = engine();
    let mut queue = chunks().into_iter();
    let report = e.bootstrap_chunked(&session, || Ok(queue.next()), 5).unwrap();
    assert_eq!(report.imported_messages, 4, "{}", report.reason);
    assert!(report.reason.contains("of 5 messages (1 already stored)"), "{}", report.reason);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM messages"), 4);
    assert_eq!(count(&mut e, "SELECT MAX(seq) FROM messages"), 4);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM context_items"), 4);

    // A bad message in the last chunk: nothing of any chunk is stored, and the error counts
    // positions across chunks.
    let mut e = engine();
    let mut queue = vec![vec![user("a", 1), user("b", 2)], vec![user("c", 3), json!({"role": "robot", "content": "x"})]].into_iter();
    let err = e.bootstrap_chunked(&session, || Ok(queue.next()), 5).unwrap_err().to_string();
    assert!(err.contains("messages[3].role"), "{err}");
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM messages"), 0);
}

#[test]
fn the_omission_line_is_dated_by_the_oldest_message_in_the_view_not_1970() {
    let mut e = engine();
    let base = 1_764_800_000_000_i64;
    for turn in 0..50 {
        let messages = vec![user(&format!("question {turn} {}", "x".repeat(100)), base + turn * 2), assistant(&format!("answer {turn}"), base + turn * 2 + 1)];
        e.commit_turn(commit(&format!("k{turn}"), messages), 10).unwrap();
    }
    let params = json!({"sessionId": "s1", "sessionKey": "agent:main:t", "tokenBudget": 400});
    let view = e.assemble(decode("assemble", params.clone()).unwrap(), 20).unwrap();
    let line: Value = serde_json::from_str(&view.messages[0]).unwrap();
    assert!(line["content"].as_str().unwrap().contains("earlier messages of this conversation are stored"), "{line}");
    let oldest_shown: Value = serde_json::from_str(&view.messages[1]).unwrap();
    assert!(oldest_shown["timestamp"].as_i64().unwrap() > base, "{oldest_shown}");
    assert_eq!(line["timestamp"], oldest_shown["timestamp"], "dated by the oldest message shown");
    // Same view, same bytes (the prompt cache).
    assert_eq!(e.assemble(decode("assemble", params.clone()).unwrap(), 21).unwrap(), view);
    // The incremental hand-over (the shim's path) dates it the same way.
    let handed = e.assemble_handover(decode("assemble", params).unwrap(), 0, || Ok(Vec::new()), None, 22).unwrap();
    let fresh: Vec<Value> = serde_json::from_str(&handed.view.fresh_json).unwrap();
    assert_eq!(fresh[0], line, "{}", handed.view.fresh_json);
}

#[test]
fn the_system_prompt_addition_names_only_the_recall_tools_the_host_offers() {
    let mut e = engine();
    e.commit_turn(commit("k1", vec![user("hi", 1), assistant("hello", 2)]), 10).unwrap();
    let addition = |e: &mut Engine<Db>, tools: Value| {
        let mut p = json!({"sessionId": "s1", "sessionKey": "agent:main:t", "tokenBudget": 4_000});
        if !tools.is_null() {
            p["availableTools"] = tools;
        }
        e.assemble(decode("assemble", p).unwrap(), 20).unwrap().system_prompt_addition
    };
    // A host that does not say (older OpenClaw, browser embedders): all four.
    let all = addition(&mut e, Value::Null);
    assert!(["lcm_grep", "lcm_describe", "lcm_expand", "lcm_ask"].iter().all(|t| all.contains(t)), "{all}");
    // tools.profile "minimal" and the host's memory-flush runs: none to name, no addition.
    assert_eq!(addition(&mut e, json!(["read", "exec"])), "");
    assert_eq!(addition(&mut e, json!([])), "");
    let some = addition(&mut e, json!(["exec", "lcm_grep", "lcm_expand"]));
    assert!(some.contains("lcm_grep") && some.contains("lcm_expand"), "{some}");
    assert!(!some.contains("lcm_describe") && !some.contains("lcm_ask"), "{some}");
    assert_eq!(addition(&mut e, json!(["lcm_expand", "lcm_grep"])), some, "byte-stable for the same recall tools");
    // A new conversation (no view yet) follows the same rule.
    let p = json!({"sessionId": "other", "sessionKey": "agent:main:new", "availableTools": ["read"]});
    assert_eq!(e.assemble(decode("assemble", p).unwrap(), 30).unwrap().system_prompt_addition, "");
    let bad = decode::<AssembleParams>("assemble", json!({"sessionId": "s1", "availableTools": "lcm_grep"})).unwrap_err();
    assert!(bad.to_string().contains("availableTools"), "{bad}");
}

#[test]
fn a_catch_up_from_the_host_transcript_stores_only_what_no_commit_carried_wherever_it_stands() {
    // A turn killed before its commit (issue 42): the user's note stays in the host's transcript,
    // the host's re-run commits only its own "[System] …" message and reply. Reading the whole
    // transcript back (the shim's catch-up) stores the note once and nothing else, by identity:
    // not by position (the note is not at the end) and not by text alone (the same words typed
    // again later are another message).
    let mut e = engine();
    let (u1, a1) = (user("note 1", 1), assistant("reply 1", 2));
    let note2 = user("note 2", 3);
    let (system, a2) = (user("[System] Your previous turn was interrupted", 4), assistant("reply 2", 5));
    e.commit_turn(commit("k1", vec![u1.clone(), a1.clone()]), 10).unwrap();
    e.commit_turn(commit("k2", vec![system.clone(), a2.clone()]), 11).unwrap();
    let transcript = vec![u1.clone(), a1.clone(), note2.clone(), system.clone(), a2.clone()];
    let catch_up = |e: &mut Engine<Db>, messages: Vec<Value>| {
        e.ingest(decode("ingest", json!({"sessionId": "s1", "sessionKey": "agent:main:t", "messages": messages})).unwrap(), 12).unwrap()
    };
    assert_eq!(catch_up(&mut e, transcript.clone()), 1, "only the note no commit carried is new");
    assert_eq!(catch_up(&mut e, transcript), 0, "a second catch-up stores nothing");
    assert_eq!(catch_up(&mut e, vec![user("note 1", 6)]), 1, "the same words at another time are another message");
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM messages"), 6);
    // A commit that comes after the catch-up (the host's outbox retry) stores nothing twice.
    let late = user("note 3", 7);
    catch_up(&mut e, vec![late.clone()]);
    let retry = e.commit_turn(commit("k3", vec![late, assistant("reply 3", 8)]), 13).unwrap();
    assert_eq!(retry.status, CommitStatus::Committed);
    assert_eq!(retry.stored_messages, 1, "the reply only: the note was caught up before");
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM messages"), 8);
}
