// The lifecycle tests, shared by lifecycle_native.rs (SQLite) and lifecycle_pg.rs (PostgreSQL): each
// defines `Db` (the connection type) and `open_db()` (a fresh, empty store) and includes this file.
use lossless_wasm::core::config::Config;
use lossless_wasm::engine::*;
use lossless_wasm::store::Sql;
use serde_json::{json, Value};

fn small() -> Config {
    Config::from_json(&json!({"freshTailCount": 4, "leafChunkTokens": 1000, "leafBudgetHeadroomFactor": 0, "leafSkipReductionThreshold": 0})).unwrap()
}

fn engine() -> Engine<Db> {
    Engine::open(open_db(), small(), 0).unwrap()
}

fn count(e: &mut Engine<Db>, q: &str) -> i64 {
    e.sql().query_row(q, &[]).unwrap().unwrap().int(0).unwrap()
}

fn msg(role: &str, text: &str, ts: i64) -> Value {
    match role {
        "user" => json!({"role": "user", "content": text, "timestamp": ts}),
        _ => json!({"role": "assistant", "content": [{"type": "text", "text": text}], "timestamp": ts}),
    }
}

fn commit(e: &mut Engine<Db>, session_id: &str, key: &str, adv: &str, messages: Vec<Value>) -> CommitTurnResult {
    e.commit_turn(decode("commitTurn", json!({"sessionId": session_id, "sessionKey": key, "advancementKey": adv, "messages": messages})).unwrap(), 1).unwrap()
}

fn view(e: &mut Engine<Db>, session_id: &str, key: &str, history: Vec<Value>, budget: u32) -> AssembleResult {
    e.assemble(decode("assemble", json!({"sessionId": session_id, "sessionKey": key, "messages": history, "tokenBudget": budget, "historyIsComplete": true})).unwrap(), 2).unwrap()
}

fn turns(e: &mut Engine<Db>, session_id: &str, key: &str, from: usize, n: usize) -> Vec<Value> {
    let mut all = Vec::new();
    for t in from..from + n {
        let pair = vec![msg("user", &format!("{session_id} question {t} {}", "words ".repeat(60)), t as i64 * 2), msg("assistant", &format!("{session_id} answer {t} {}", "more ".repeat(60)), t as i64 * 2 + 1)];
        commit(e, session_id, key, &format!("{session_id}-{t}"), pair.clone());
        all.extend(pair);
    }
    all
}

#[test]
fn seed_04_after_a_rotation_new_messages_are_stored_and_compaction_triggers_on_the_new_conversation() {
    let mut e = engine();
    view(&mut e, "old-session", "agent:main:main", vec![], 100_000);
    turns(&mut e, "old-session", "agent:main:main", 0, 3);
    // The host rotates: a new session id (2026.7 /reset, or a new session file) for the same key.
    view(&mut e, "new-session", "agent:main:main", vec![], 100_000);
    let new_turns = turns(&mut e, "new-session", "agent:main:main", 10, 12);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM conversations WHERE status = 'archived' AND archive_cause = 'session-id-changed'"), 1);
    let new_id = count(&mut e, "SELECT id FROM conversations WHERE status = 'active'");
    assert_eq!(count(&mut e, &format!("SELECT COUNT(*) FROM messages WHERE conversation_id = {new_id}")), new_turns.len() as i64, "the new session's messages are ingested");
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM messages"), 6 + new_turns.len() as i64, "nothing of the old session was purged");
    let triggered = count(&mut e, &format!("SELECT COUNT(*) FROM compaction_events WHERE conversation_id = {new_id} AND outcome = 'triggered'"));
    assert!(triggered >= 1, "compaction triggers on the new conversation");
    let v = view(&mut e, "new-session", "agent:main:main", new_turns, 100_000);
    assert!(v.messages.iter().all(|m| !m.contains("old-session")), "the new view shows none of the old conversation");
}

#[test]
fn a_reset_that_keeps_the_session_id_starts_a_new_conversation() {
    let mut e = engine();
    let history = turns(&mut e, "s", "agent:main:main", 0, 3);
    assert_eq!(view(&mut e, "s", "agent:main:main", history.clone(), 100_000).messages.len(), 6);
    // OpenClaw 2026.9 /reset: same session id, the visible history starts over (empty).
    let after = view(&mut e, "s", "agent:main:main", vec![], 100_000);
    assert!(after.messages.is_empty(), "none of the old conversation is shown after the reset");
    let next = turns(&mut e, "s", "agent:main:main", 100, 2);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM conversations"), 2);
    assert_eq!(count(&mut e, "SELECT MAX(generation) FROM conversations"), 2);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM conversations WHERE status = 'archived' AND archive_cause = 'host-history-reset'"), 1);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM messages"), 10);
    let v = view(&mut e, "s", "agent:main:main", next, 100_000);
    assert_eq!(v.messages.len(), 4);
}

#[test]
fn a_tiny_budget_still_shows_the_last_turn_and_passing_it_back_is_not_a_reset() {
    let mut e = engine();
    let history = turns(&mut e, "s", "k", 0, 3);
    // A budget of 1 still shows the newest turn (the previous turn of the next request); the
    // host's second assemble passes that view back as its history.
    let tiny = view(&mut e, "s", "k", history.clone(), 1);
    assert!(!tiny.messages.is_empty(), "never an empty view");
    let newest: Vec<String> = history[history.len() - 2..].iter().map(Value::to_string).collect();
    assert!(newest.iter().all(|m| tiny.messages.contains(m)), "the newest turn is whole: {:?}", tiny.messages);
    let shown: Vec<Value> = tiny.messages.iter().map(|m| serde_json::from_str(m).unwrap()).collect();
    view(&mut e, "s", "k", shown, 60_000);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM conversations WHERE status = 'archived'"), 0);
}

#[test]
fn a_reset_reported_by_the_host_archives_and_keeps_everything() {
    let mut e = engine();
    turns(&mut e, "s", "k", 0, 2);
    let reset: ResetParams = decode("reset", json!({"sessionId": "s", "sessionKey": "k", "cause": "new"})).unwrap();
    assert!(e.reset(reset.clone(), 5).unwrap());
    assert!(!e.reset(reset, 6).unwrap(), "a second reset has nothing to archive");
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM conversations WHERE archive_cause = 'host-new'"), 1);
    turns(&mut e, "s", "k", 10, 1);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM messages"), 6);
    let hits = e.search(decode("search", json!({"sessionId": "s", "sessionKey": "k", "pattern": "question 0", "scope": "all"})).unwrap()).unwrap();
    assert_eq!(hits.len(), 1, "archived conversations stay searchable");
    let active_only = e.search(decode("search", json!({"sessionId": "s", "sessionKey": "k", "pattern": "question 0"})).unwrap()).unwrap();
    assert!(active_only.is_empty());
}

#[test]
fn a_rotation_in_the_middle_of_a_turn_loses_nothing() {
    let mut e = engine();
    let history = turns(&mut e, "s1", "k", 0, 2);
    view(&mut e, "s1", "k", history, 100_000);
    // The turn started under s1 and is committed under s2.
    let result = commit(&mut e, "s2", "k", "mid", vec![msg("user", "asked before rotation", 50), msg("assistant", "answered after", 51)]);
    assert_eq!(result.status, CommitStatus::Committed);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM messages"), 6);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM conversations WHERE status = 'active' AND session_id = 's2'"), 1);
    let v = view(&mut e, "s2", "k", vec![msg("user", "asked before rotation", 50), msg("assistant", "answered after", 51)], 100_000);
    assert_eq!(v.messages.len(), 2);
}

#[test]
fn two_sessions_of_one_agent_interleaved_stay_separate() {
    let mut e = engine();
    let (mut history_a, mut history_b) = (Vec::new(), Vec::new());
    for t in 0..5 {
        history_a.push(msg("user", &format!("from a {t}"), t));
        history_b.push(msg("user", &format!("from b {t}"), t));
        commit(&mut e, "a", "agent:main:a", &format!("a{t}"), vec![history_a[t as usize].clone()]);
        view(&mut e, "b", "agent:main:b", history_b[..t as usize].to_vec(), 100_000);
        commit(&mut e, "b", "agent:main:b", &format!("b{t}"), vec![history_b[t as usize].clone()]);
    }
    let a = view(&mut e, "a", "agent:main:a", history_a, 100_000);
    let b = view(&mut e, "b", "agent:main:b", history_b, 100_000);
    assert!(a.messages.iter().all(|m| m.contains("from a")) && a.messages.len() == 5);
    assert!(b.messages.iter().all(|m| m.contains("from b")) && b.messages.len() == 5);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM conversations"), 2);
}

#[test]
fn restarts_rebootstraps_retries_and_replays_never_duplicate_a_message() {
    let dir = std::env::temp_dir().join(format!("lossless-wasm-restart-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("db.sqlite");
    let _ = std::fs::remove_file(&path);
    let path = path.to_str().unwrap().to_owned();
    let history: Vec<Value> = (0..100).map(|i| msg(if i % 2 == 0 { "user" } else { "assistant" }, &format!("m{i}"), i)).collect();
    let boot = || decode::<BootstrapParams>("bootstrap", json!({"sessionId": "s", "sessionKey": "k", "messages": history.clone()})).unwrap();
    {
        let mut e = Engine::open(reopen_db(&path), small(), 0).unwrap();
        assert_eq!(e.bootstrap(boot(), 1).unwrap().imported_messages, 100);
    }
    let mut e = Engine::open(reopen_db(&path), small(), 0).unwrap();
    assert_eq!(e.bootstrap(boot(), 2).unwrap().imported_messages, 0, "re-bootstrap after a restart imports nothing");
    assert_eq!(e.ingest(decode("ingest", json!({"sessionId": "s", "sessionKey": "k", "messages": history.clone()})).unwrap(), 3).unwrap(), 0);
    let snapshot = decode("afterTurn", json!({"sessionId": "s", "sessionKey": "k", "messages": history.clone(), "prePromptMessageCount": 90})).unwrap();
    assert_eq!(e.after_turn(snapshot, 4).unwrap(), 0);
    let turn = vec![msg("user", "new", 1000), msg("assistant", "reply", 1001)];
    assert_eq!(commit(&mut e, "s", "k", "adv", turn.clone()).status, CommitStatus::Committed);
    assert_eq!(commit(&mut e, "s", "k", "adv", turn.clone()).status, CommitStatus::Duplicate);
    assert_eq!(commit(&mut e, "s", "k", "adv-retry-with-new-key", turn).stored_messages, 0, "same content under another key is still not stored twice");
    view(&mut e, "s", "k", history, 100_000);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM messages"), 102);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bootstrap_imports_ten_thousand_messages_once() {
    let mut e = engine();
    let history: Vec<Value> = (0..10_000).map(|i| msg(if i % 2 == 0 { "user" } else { "assistant" }, &format!("message {i}"), i)).collect();
    let params = || decode::<BootstrapParams>("bootstrap", json!({"sessionId": "s", "sessionKey": "k", "messages": history.clone()})).unwrap();
    assert_eq!(e.bootstrap(params(), 1).unwrap().imported_messages, 10_000);
    assert_eq!(e.bootstrap(params(), 2).unwrap().imported_messages, 0);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM messages"), 10_000);
}

#[test]
fn a_forked_child_session_never_writes_into_its_parents_conversation() {
    let mut e = engine();
    let parent_history = turns(&mut e, "parent", "agent:main:main", 0, 3);
    // A forked subagent starts with a copy of the parent's history under its own key.
    let child = view(&mut e, "child", "agent:main:subagent:1", parent_history, 100_000);
    assert_eq!(child.messages.len(), 6);
    commit(&mut e, "child", "agent:main:subagent:1", "c1", vec![msg("user", "child work", 500)]);
    assert_eq!(count(&mut e, "SELECT message_count FROM conversations WHERE session_key = 'agent:main:main'"), 6, "the parent is untouched");
    assert_eq!(count(&mut e, "SELECT message_count FROM conversations WHERE session_key = 'agent:main:subagent:1'"), 7);
}

#[test]
fn host_entry_ids_are_kept_with_the_turns_messages() {
    let mut e = engine();
    let p = decode("commitTurn", json!({"sessionId": "s", "sessionKey": "k", "advancementKey": "a",
        "messages": [msg("user", "u", 1), msg("assistant", "x", 2), msg("assistant", "y", 3)],
        "admission": {"entryId": "entry-user"}, "terminal": {"entryId": "entry-last"}})).unwrap();
    e.commit_turn(p, 1).unwrap();
    let ids: Vec<Option<String>> = e.sql().query("SELECT host_entry_id FROM messages ORDER BY seq", &[]).unwrap().iter().map(|r| r.opt_text(0).unwrap()).collect();
    assert_eq!(ids, [Some("entry-user".into()), None, Some("entry-last".into())]);
}

#[test]
fn a_transcript_catch_up_after_a_reset_stores_only_what_no_conversation_of_the_key_holds() {
    let mut e = engine();
    // Before a /reset that keeps the session id (OpenClaw 2026.9): three turns, then the reset.
    let before = turns(&mut e, "s", "agent:main:main", 0, 3);
    view(&mut e, "s", "agent:main:main", vec![], 100_000);
    let after = turns(&mut e, "s", "agent:main:main", 100, 1);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM conversations WHERE status = 'archived'"), 1, "the reset archived the first conversation");
    // A restarted gateway reads the whole transcript: what came before the reset, the turn after
    // it, and a user message that no commit carried (the turn the restart interrupted).
    let lost = msg("user", "the note a crash kept out of every commit", 400);
    let transcript: Vec<Value> = before.iter().chain(after.iter()).cloned().chain([lost.clone()]).collect();
    let caught = |e: &mut Engine<Db>, key: &str, messages: &[Value]| {
        e.ingest(decode("ingest", json!({"sessionId": "s", "sessionKey": key, "messages": messages, "fromTranscript": true})).unwrap(), 9).unwrap()
    };
    assert_eq!(caught(&mut e, "agent:main:main", &transcript), 1, "only the message no commit carried is new");
    let active = "SELECT COUNT(*) FROM messages m JOIN conversations c ON c.id = m.conversation_id WHERE c.status = 'active'";
    assert_eq!(count(&mut e, active), 3, "the new conversation: the turn after the reset and the lost note");
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM messages"), 9);
    assert_eq!(caught(&mut e, "agent:main:main", &transcript), 0, "a second catch-up stores nothing");
    // The rule is the session key's: another key's archive does not hide a message from this one.
    assert_eq!(caught(&mut e, "agent:main:other", &before[..2]), 2);
    // Without `fromTranscript` an ingest is the plain append it always was (the active conversation only).
    let plain = e.ingest(decode("ingest", json!({"sessionId": "s", "sessionKey": "agent:main:main", "messages": &before[..1]})).unwrap(), 10).unwrap();
    assert_eq!(plain, 1);
}

#[test]
fn a_transcript_catch_up_knows_a_user_message_a_turn_stored_as_text_parts_stamped_later() {
    // OpenClaw 2026.7: `afterTurn` hands over the agent's copy of the user's message (text parts,
    // stamped when the model was prompted); the transcript (JSONL) keeps the host's copy (a
    // string, stamped at admission, 0.2–1.1 s earlier in the real gateway). After a crash mid-turn
    // the next turn ran as one merged user message; the transcript keeps the second note apart.
    let mut e = engine();
    let key = "agent:main:main";
    let parts = |text: &str, ts: i64| json!({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ts});
    let reply = |text: &str, ts: i64| msg("assistant", text, ts);
    let after_turn = |e: &mut Engine<Db>, messages: Vec<Value>| {
        e.after_turn(decode("afterTurn", json!({"sessionId": "s", "sessionKey": key, "messages": messages, "prePromptMessageCount": 0})).unwrap(), 5).unwrap()
    };
    let merged = "[Queued user message that arrived while the previous turn was still active]\nnote 3\n\nnote 4";
    assert_eq!(after_turn(&mut e, vec![parts("note 1", 10_800), reply("reply 1", 10_900)]), 2);
    assert_eq!(after_turn(&mut e, vec![parts("ok", 20_300)]), 1, "the tool-loop hook stores the user's message before the model call");
    assert_eq!(after_turn(&mut e, vec![parts("note 3", 30_200)]), 1, "killed while the model answers");
    assert_eq!(after_turn(&mut e, vec![parts(merged, 40_900), reply("reply 3", 41_000)]), 2, "the turn after the restart");
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM messages"), 6);
    let transcript = vec![
        msg("user", "note 1", 10_000),
        reply("reply 1", 10_900),
        msg("user", "ok", 20_000),
        msg("user", "note 3", 30_000),
        msg("user", "note 4", 40_000),
        reply("reply 3", 41_000),
        // The same words as an earlier message, sent again: a message of its own, lost in a crash.
        msg("user", "ok", 50_000),
    ];
    let caught = |e: &mut Engine<Db>, messages: &[Value]| {
        e.ingest(decode("ingest", json!({"sessionId": "s", "sessionKey": key, "messages": messages, "fromTranscript": true})).unwrap(), 9).unwrap()
    };
    assert_eq!(caught(&mut e, &transcript), 2, "note 4 and the second 'ok' are new; every other message is stored already");
    let stored: Vec<String> = e.sql().query("SELECT raw_json FROM messages ORDER BY seq", &[]).unwrap().iter().map(|r| r.text(0).unwrap()).collect();
    assert!(stored[6].contains("\"note 4\"") && stored[7].contains("\"ok\""), "stored as the transcript has them: {:?}", &stored[6..]);
    assert_eq!(caught(&mut e, &transcript), 0, "a second catch-up stores nothing");
    assert_eq!(caught(&mut e, &transcript[4..5]), 0, "nor does a page with the caught-up message alone");
    // A message stored as it is (OpenClaw 2026.9's commits) stands for itself only: the same
    // words sent just before it and lost are still new, though its time is in their window.
    assert_eq!(after_turn(&mut e, vec![msg("user", "again", 60_000)]), 1);
    assert_eq!(caught(&mut e, &[msg("user", "again", 59_500), msg("user", "again", 60_000)]), 1);
    // Without `fromTranscript` the shapes stay apart: a plain ingest stores by content identity.
    let plain = e.ingest(decode("ingest", json!({"sessionId": "s", "sessionKey": key, "messages": &transcript[..1]})).unwrap(), 10).unwrap();
    assert_eq!(plain, 1);
}
