// The stubs tests, shared by stubs_native.rs (SQLite) and stubs_pg.rs (PostgreSQL): each
// defines `Db` (the connection type) and `open_db()` (a fresh, empty store) and includes this file.
use lossless_wasm::core::config::Config;
use lossless_wasm::core::message::text_of_raw_json;
use lossless_wasm::engine::compaction::CompactionStep;
use lossless_wasm::engine::*;
use lossless_wasm::store::Sql;
use serde_json::{json, Value};

const KEY: &str = "agent:main:stubs";

fn engine_with(sql: Db, config: Value) -> Engine<Db> {
    Engine::open(sql, Config::from_json(&config).unwrap(), 0).unwrap()
}

fn engine(config: Value) -> Engine<Db> {
    engine_with(open_db(), config)
}

fn count(e: &mut Engine<Db>, q: &str) -> i64 {
    e.sql().query_row(q, &[]).unwrap().unwrap().int(0).unwrap()
}

/// A tool output of about `tokens` tokens whose every line names it (`out{t}x{k}`), so grep
/// finds exactly this one.
fn output(t: usize, k: usize, tokens: usize) -> String {
    let mut text = String::new();
    let mut line = 0;
    while text.len() < tokens * 4 {
        text.push_str(&format!("out{t}x{k} line {line}: let value = compute(input, {line});\n"));
        line += 1;
    }
    text
}

/// One turn: a request, one tool round per `(tool, arguments, output, isError)`, an answer.
fn turn_messages(t: usize, tools: Vec<(&str, Value, String, bool)>) -> Vec<Value> {
    let ts = (t * 100) as i64;
    let mut messages = vec![json!({"role": "user", "content": format!("Request {t}: keep going"), "timestamp": ts})];
    for (k, (name, args, text, is_error)) in tools.into_iter().enumerate() {
        let id = format!("call_{t}_{k}");
        messages.push(json!({"role": "assistant", "content": [{"type": "text", "text": "Running it."}, {"type": "toolCall", "id": id, "name": name, "arguments": args}], "timestamp": ts + 2 * k as i64 + 1}));
        messages.push(json!({"role": "toolResult", "toolCallId": id, "toolName": name, "content": [{"type": "text", "text": text}], "isError": is_error, "timestamp": ts + 2 * k as i64 + 2}));
    }
    messages.push(json!({"role": "assistant", "content": [{"type": "text", "text": format!("Done with request {t}.")}], "timestamp": ts + 99}));
    messages
}

/// A turn reading three files of `tokens` tokens each.
fn reading_turn(t: usize, tokens: usize) -> Vec<Value> {
    turn_messages(t, (0..3).map(|k| ("read", json!({"path": format!("src/f{t}_{k}.rs")}), output(t, k, tokens), false)).collect())
}

fn commit(e: &mut Engine<Db>, t: usize, messages: &[Value]) {
    let p = decode("commitTurn", json!({"sessionId": "s", "sessionKey": KEY, "advancementKey": format!("t{t}"), "messages": messages})).unwrap();
    e.commit_turn(p, (t * 100) as i64).unwrap();
}

fn assemble(e: &mut Engine<Db>, budget: u32) -> AssembleResult {
    e.assemble(decode("assemble", json!({"sessionId": "s", "sessionKey": KEY, "tokenBudget": budget})).unwrap(), 1).unwrap()
}

fn parsed(view: &AssembleResult) -> Vec<Value> {
    view.messages.iter().map(|m| serde_json::from_str(m).unwrap()).collect()
}

fn stubs_in(view: &AssembleResult) -> usize {
    view.messages.iter().filter(|m| m.contains("[tool output stored:")).count()
}

/// Every tool result follows the assistant message that calls it, every call is answered, and
/// no result had to be made up.
fn assert_paired(view: &[Value]) {
    let mut open: Vec<String> = Vec::new();
    for m in view {
        if m["role"] == "assistant" {
            assert!(open.is_empty(), "calls {open:?} were not answered before the next assistant message");
            open = m["content"].as_array().into_iter().flatten().filter(|b| b["type"] == "toolCall").map(|b| b["id"].as_str().unwrap().to_owned()).collect();
        } else if m["role"] == "toolResult" {
            let id = m["toolCallId"].as_str().unwrap();
            assert!(open.iter().any(|o| o == id), "result {id} without its call");
            open.retain(|o| o != id);
            assert!(!m.to_string().contains("result unavailable"), "a made-up result: {m}");
        } else {
            assert!(open.is_empty(), "calls {open:?} were not answered");
        }
    }
}

fn totals_are_right(e: &mut Engine<Db>) {
    let report = e.doctor(DoctorParams { fix: false }).unwrap();
    assert!(report.ok, "{report:?}");
}

#[test]
fn old_tool_outputs_become_stubs_and_the_previous_turn_stays_whole() {
    let mut e = engine(json!({}));
    let mut previous: Vec<Value> = Vec::new();
    for t in 0..12 {
        let view = assemble(&mut e, 100_000);
        for m in &previous {
            assert!(view.messages.contains(&m.to_string()), "turn {t}: the previous turn's message is not whole: {m}");
        }
        assert_paired(&parsed(&view));
        previous = reading_turn(t, 1_500);
        commit(&mut e, t, &previous);
    }
    let view = assemble(&mut e, 100_000);
    let stubs = stubs_in(&view);
    assert_eq!(stubs, 3 * 11, "every output but the newest turn's is a stub");
    for m in &previous {
        assert!(view.messages.contains(&m.to_string()), "the newest turn is whole: {m}");
    }
    let values = parsed(&view);
    assert_paired(&values);
    let stub = values.iter().find(|m| m.to_string().contains("[tool output stored:")).unwrap();
    let line = stub["content"][0]["text"].as_str().unwrap();
    assert!(line.starts_with(r#"[tool output stored: read {"path":"src/f0_0.rs"} → "#) && line.contains(" tokens, ") && line.contains(", ok; lcm_expand {\"messageId\": "), "{line}");
    let whole: u64 = (0..12).flat_map(|t| reading_turn(t, 1_500)).map(|m| u64::from(lossless_wasm::core::message::parse_message(&m, "m").unwrap().tokens)).sum();
    assert!(view.estimated_tokens * 4 < whole, "the view ({}) is a fraction of the session ({whole})", view.estimated_tokens);
    assert!(count(&mut e, "SELECT COUNT(*) FROM compaction_events WHERE pass = 'mask' AND outcome = 'compacted'") >= 1);
    totals_are_right(&mut e);
}

#[test]
fn identical_outputs_appear_once_the_older_copy_naming_the_newer() {
    let mut e = engine(json!({}));
    assemble(&mut e, 100_000);
    let failing = format!("running 40 tests\n{}test result: FAILED. 39 passed; 1 failed\n", output(0, 9, 1_200));
    let test_run = |t: usize, cmd: &str| turn_messages(t, vec![("bash", json!({"command": cmd}), failing.clone(), true)]);
    // Stubs follow each turn: turn 1's run is stubbed once turn 2 is stored, and turn 2 repeats it.
    commit(&mut e, 0, &test_run(0, "cargo test -p other"));
    commit(&mut e, 1, &test_run(1, "cargo test"));
    commit(&mut e, 2, &test_run(2, "cargo test"));
    let view = assemble(&mut e, 100_000);
    assert_eq!(stubs_in(&view), 2, "the two older runs are stubs");
    let newest_result = count(&mut e, "SELECT id FROM messages WHERE role = 'toolResult' ORDER BY seq DESC LIMIT 1");
    let identical: Vec<&String> = view.messages.iter().filter(|m| m.contains("identical to the newer output")).collect();
    assert_eq!(identical.len(), 1, "only the run with the same tool, arguments and content: {identical:?}");
    assert!(identical[0].contains("cargo test\\\"} →") && identical[0].contains(&format!("identical to the newer output in message {newest_result};")), "{}", identical[0]);
    let shown = view.messages.iter().filter(|m| m.contains("test result: FAILED. 39 passed")).count();
    assert_eq!(shown, 1, "the output itself appears once in the view");
    assert!(count(&mut e, "SELECT COUNT(*) FROM compaction_events WHERE pass = 'mask' AND telemetry_json LIKE '%\"identical\":1%'") == 1);
}

#[test]
fn a_huge_message_becomes_an_excerpt_from_its_first_turn_and_the_tail_keeps_its_room() {
    let budget = 20_000;
    let mut e = engine(json!({}));
    commit(&mut e, 0, &reading_turn(0, 300));
    assemble(&mut e, budget);
    let huge = output(1, 0, 12_000);
    let turn = turn_messages(1, vec![("bash", json!({"command": "cat server.log"}), huge.clone(), false)]);
    commit(&mut e, 1, &turn);
    let view = assemble(&mut e, budget);
    let values = parsed(&view);
    let excerpt = values.iter().find(|m| m["toolCallId"] == "call_1_0").expect("the huge output's result is in the view");
    let text = excerpt["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("; head and tail shown above; lcm_expand"), "an excerpt from the first turn after: {text}");
    let last_line = huge.lines().last().unwrap();
    assert!(text.starts_with("out1x0 line 0:") && text.contains(last_line), "head and tail are kept");
    assert!(text.contains("tokens of this message left out of the view"));
    assert!(view.estimated_tokens <= u64::from(budget));
    for m in [&turn[0], &turn[1], &turn[3]] {
        assert!(view.messages.contains(&m.to_string()), "the rest of the turn is whole: {m}");
    }
    assert_eq!(stubs_in(&view), 3 + 1, "turn 0's outputs are stubs; the excerpt carries its stub line");
    assert!(view.messages.iter().any(|m| m.contains("Request 0:")), "older turns keep their room in the view");
    // A pasted file in a user message larger than the whole view is excerpted the same way,
    // keeping its role (a request of the active task that fits the view stays whole).
    let pasted = json!({"role": "user", "content": format!("Please review:\n{}", output(2, 0, 24_000)), "timestamp": 300});
    commit(&mut e, 2, &[pasted, json!({"role": "assistant", "content": [{"type": "text", "text": "Reviewed."}], "timestamp": 301})]);
    let view = assemble(&mut e, budget);
    let user = parsed(&view).into_iter().find(|m| m["role"] == "user" && m.to_string().contains("Please review")).unwrap();
    assert!(user["content"].as_str().unwrap().contains("[message stored: user → "), "{user}");
    assert!(view.estimated_tokens <= u64::from(budget));
    assert_paired(&parsed(&view));
    totals_are_right(&mut e);
}

#[test]
fn grep_finds_every_stubbed_output_and_expand_returns_it_whole() {
    let mut e = engine(json!({}));
    assemble(&mut e, 100_000);
    let mut committed = Vec::new();
    for t in 0..5 {
        let turn = reading_turn(t, 900);
        commit(&mut e, t, &turn);
        committed.extend(turn);
    }
    let stubbed: Vec<(i64, String)> = e
        .sql()
        .query("SELECT c.message_id, m.raw_json FROM context_items c JOIN messages m ON m.id = c.message_id WHERE c.stub IS NOT NULL ORDER BY c.ordinal", &[])
        .unwrap()
        .iter()
        .map(|r| (r.int(0).unwrap(), r.text(1).unwrap()))
        .collect();
    assert_eq!(stubbed.len(), 12, "the outputs of turns 0..=3 are stubbed");
    for (id, raw) in &stubbed {
        assert!(committed.iter().any(|m| serde_json::to_string(m).unwrap() == *raw), "the stored message is exactly as committed");
        let text = text_of_raw_json(raw).unwrap();
        let marker = text.split_whitespace().next().unwrap().to_owned();
        let hits = e.recall_grep(decode("grep", json!({"sessionId": "s", "sessionKey": KEY, "pattern": marker})).unwrap()).unwrap();
        let hit = hits.hits.iter().find(|h| h.hit.id == *id).unwrap_or_else(|| panic!("grep {marker} misses message {id}"));
        assert!(hit.in_view && hit.stubbed, "{hit:?}");
        let mut back = String::new();
        let mut cursor: Option<String> = None;
        loop {
            let p = json!({"sessionId": "s", "sessionKey": KEY, "messageId": id, "cursor": cursor, "maxTokens": 500});
            let page = e.recall_expand(decode("expand", p).unwrap()).unwrap();
            back.push_str(&page.items[0].content);
            cursor = page.next_cursor;
            if cursor.is_none() {
                break;
            }
        }
        assert_eq!(back, text, "expand returns message {id} whole");
    }
}

#[test]
fn describe_says_a_message_is_shown_as_a_stub_and_how_big() {
    let mut e = engine(json!({}));
    assemble(&mut e, 100_000);
    for t in 0..3 {
        commit(&mut e, t, &reading_turn(t, 900));
    }
    let id = count(&mut e, "SELECT message_id FROM context_items WHERE stub = 1 ORDER BY ordinal LIMIT 1");
    let d = e.recall_describe(decode("describe", json!({"sessionId": "s", "sessionKey": KEY, "messageId": id})).unwrap()).unwrap();
    let Description::Message { in_view, shown_as, view_tokens, stub_line, token_count, .. } = d else { panic!("a message") };
    assert!(in_view);
    assert_eq!(shown_as, Some("stub"));
    assert!(view_tokens.unwrap() * 5 < token_count, "{view_tokens:?} of {token_count}");
    assert!(stub_line.unwrap().ends_with(&format!("lcm_expand {{\"messageId\": {id}}}]")));
    let whole = count(&mut e, "SELECT message_id FROM context_items WHERE stub IS NULL AND message_id IS NOT NULL ORDER BY ordinal DESC LIMIT 1");
    let d = e.recall_describe(decode("describe", json!({"sessionId": "s", "sessionKey": KEY, "messageId": whole})).unwrap()).unwrap();
    assert!(matches!(d, Description::Message { shown_as: None, stub_line: None, in_view: true, .. }), "{d:?}");
}

#[test]
fn stubs_survive_a_reopen_and_the_view_is_the_same_bytes() {
    let path = std::env::temp_dir().join(format!("lossless-stubs-{}.sqlite", std::process::id()));
    let path = path.to_str().unwrap().to_owned();
    let _ = std::fs::remove_file(&path);
    let before = {
        let mut e = engine_with(reopen_db(&path), json!({}));
        assemble(&mut e, 100_000);
        for t in 0..6 {
            commit(&mut e, t, &reading_turn(t, 900));
        }
        assemble(&mut e, 100_000)
    };
    assert_eq!(stubs_in(&before), 15);
    let mut e = engine_with(reopen_db(&path), json!({}));
    let after = assemble(&mut e, 100_000);
    assert_eq!(after, before, "a new engine on the same database shows the same view");
    let batches = count(&mut e, "SELECT COUNT(*) FROM compaction_events WHERE pass = 'mask'");
    commit(&mut e, 6, &reading_turn(6, 900));
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM compaction_events WHERE pass = 'mask'"), batches + 1, "one more batch, for turn 5 only");
    assert_eq!(stubs_in(&assemble(&mut e, 100_000)), 18);
    totals_are_right(&mut e);
    drop(e);
    let _ = std::fs::remove_file(&path);
}

fn last_mask_decision(e: &mut Engine<Db>) -> Value {
    let telemetry = e.sql().query_row("SELECT telemetry_json FROM compaction_events WHERE pass = 'trigger' ORDER BY id DESC LIMIT 1", &[]).unwrap().unwrap().text(0).unwrap();
    serde_json::from_str::<Value>(&telemetry).unwrap()["mask"].clone()
}

#[test]
fn stubs_wait_until_a_batch_pays_for_its_cache_break_but_budget_pressure_always_wins() {
    let mut e = engine(json!({"stubBatchRatio": 100}));
    assemble(&mut e, 100_000);
    for t in 0..4 {
        commit(&mut e, t, &reading_turn(t, 600));
        let mask = last_mask_decision(&mut e);
        if t > 0 {
            assert_eq!(mask["reason"], "too_small_for_cache_break", "turn {t}: {mask}");
            assert_eq!(mask["stub"], false);
            assert!(mask["inputs"]["savedTokens"].as_u64().unwrap() > 0 && mask["inputs"]["rewrittenTokens"].as_u64().unwrap() > 0, "{mask}");
        }
    }
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM context_items WHERE stub IS NOT NULL"), 0, "no stub was written while waiting");
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM compaction_events WHERE pass = 'mask'"), 0);
    assert_eq!(count(&mut e, "SELECT context_epoch FROM conversations"), 0, "the view never had to be rebuilt");
    // A smaller budget puts the context under pressure: the batch runs whatever the cache.
    assemble(&mut e, 8_000);
    let before = count(&mut e, "SELECT context_token_count FROM conversations");
    commit(&mut e, 4, &reading_turn(4, 600));
    let mask = last_mask_decision(&mut e);
    assert_eq!((mask["reason"].as_str(), mask["stub"].as_bool()), (Some("budget_pressure"), Some(true)), "{mask}");
    let row = e.sql().query_row("SELECT reason, tokens_before, tokens_after, telemetry_json FROM compaction_events WHERE pass = 'mask'", &[]).unwrap().unwrap();
    assert_eq!(row.text(0).unwrap(), "budget_pressure");
    let (tokens_before, tokens_after) = (row.int(1).unwrap(), row.int(2).unwrap());
    assert!(tokens_before > before && tokens_after < before, "tokens saved are recorded: {tokens_before} -> {tokens_after}");
    assert!(row.text(3).unwrap().contains("\"stubs\":12"), "{}", row.text(3).unwrap());
    assert_eq!(count(&mut e, "SELECT context_epoch FROM conversations"), 1, "one epoch step for the whole batch");
    totals_are_right(&mut e);
}

#[test]
fn the_working_set_stays_whole_while_there_is_room_and_each_decision_is_recorded() {
    let mut e = engine(json!({"workingSetTurns": 4}));
    let read = |t: usize, k: usize| ("read", json!({"path": "src/a.rs"}), output(t, k, 1_500), false);
    let run = |t: usize, k: usize, command: &str| ("bash", json!({"command": command}), output(t, k, 1_500), false);
    let edit = ("edit", json!({"path": "/repo/src/a.rs", "oldText": "a", "newText": "b"}), "Edited src/a.rs".to_owned(), false);
    let turns = [
        turn_messages(0, vec![read(0, 0), run(0, 1, "cargo test")]),
        turn_messages(1, vec![run(1, 0, "cargo build")]),
        turn_messages(2, vec![edit.clone()]),
        turn_messages(3, vec![run(3, 0, "ls -la")]),
    ];
    assemble(&mut e, 100_000);
    for (t, messages) in turns.iter().enumerate() {
        commit(&mut e, t, messages);
        assemble(&mut e, 100_000);
    }
    // Turn 3 is the previous turn; of the older outputs, the read of the file edited in turn 2
    // stays whole, the test and build runs are stubs.
    let view = assemble(&mut e, 100_000);
    assert!(view.messages.contains(&turns[0][2].to_string()), "the read of src/a.rs is whole");
    for spent in [&turns[0][4], &turns[1][2]] {
        let id = spent["toolCallId"].as_str().unwrap();
        assert!(view.messages.iter().any(|m| m.contains(id) && m.contains("[tool output stored:")), "{id} is a stub");
    }
    let mask = last_mask_decision(&mut e);
    assert_eq!(mask["inputs"]["workingSet"]["kept"], 1, "{mask}");
    assert!(mask["inputs"]["workingSet"]["keptTokens"].as_u64().unwrap() >= 1_500, "{mask}");
    // A newer whole read of the file supersedes the old one: stubbed, the newer read carries it.
    let reread = turn_messages(4, vec![read(4, 0)]);
    commit(&mut e, 4, &reread);
    assemble(&mut e, 100_000);
    commit(&mut e, 5, &turn_messages(5, vec![run(5, 0, "git status")]));
    let view = assemble(&mut e, 100_000);
    let old = turns[0][2]["toolCallId"].as_str().unwrap();
    assert!(view.messages.iter().any(|m| m.contains(old) && m.contains("[tool output stored:")), "the superseded read is a stub");
    assert!(view.messages.contains(&reread[2].to_string()), "the newer read is whole");
    let superseded = count(&mut e, "SELECT COUNT(*) FROM compaction_events WHERE pass = 'mask' AND telemetry_json LIKE '%\"superseded\":1%'");
    assert_eq!(superseded, 1, "the batch that stubbed it records the superseded read");
    // Under budget pressure the working set goes too.
    assemble(&mut e, 4_000);
    commit(&mut e, 6, &turn_messages(6, vec![run(6, 0, "cargo test")]));
    let mask = last_mask_decision(&mut e);
    assert_eq!(mask["inputs"]["workingSet"]["stubbed"], 1, "{mask}");
    assert_eq!(mask["stub"], true, "{mask}");
    let view = assemble(&mut e, 100_000);
    let newer = reread[2]["toolCallId"].as_str().unwrap();
    assert!(view.messages.iter().any(|m| m.contains(newer) && m.contains("[tool output stored:")), "the kept read is a stub now");
    totals_are_right(&mut e);
}

#[test]
fn summaries_are_asked_for_only_when_stubs_are_not_enough() {
    let triggered = |config: Value| {
        let mut e = engine(config);
        assemble(&mut e, 30_000);
        for t in 0..10 {
            commit(&mut e, t, &reading_turn(t, 1_500));
        }
        count(&mut e, "SELECT COUNT(*) FROM compaction_events WHERE pass = 'trigger' AND outcome = 'triggered'")
    };
    let without = triggered(json!({"toolOutputStubs": false}));
    assert!(without > 0, "without stubs this session needs summaries");
    assert_eq!(triggered(json!({})), 0, "with stubs the trigger sees a context that needs none");
}

#[test]
fn the_summarizer_sees_stubbed_outputs_as_head_tail_and_stub_line_and_the_ledger_keeps_their_errors() {
    let mut e = engine(json!({"freshTailCount": 2, "leafChunkTokens": 1000}));
    assemble(&mut e, 100_000);
    let failing = format!("{}error[E0308]: mismatched types in the middle\n{}test result: FAILED\n", output(0, 0, 400), output(0, 1, 400));
    commit(&mut e, 0, &turn_messages(0, vec![("bash", json!({"command": "cargo build"}), failing, true)]));
    for t in 1..6 {
        commit(&mut e, t, &reading_turn(t, 400));
    }
    let p = decode("compactionStart", json!({"sessionId": "s", "sessionKey": KEY, "mode": "sweep", "summarizer": "host", "tokenBudget": 2_000})).unwrap();
    let step = e.compaction_start(p, 1_000).unwrap();
    let CompactionStep::NeedSummary(request) = step else { panic!("a summary is requested: {step:?}") };
    assert!(request.prompt.contains(r#"[tool output stored: bash {"command":"cargo build"} → "#), "the summarizer sees the stub line");
    assert!(request.prompt.contains("out0x0 line 0:") && request.prompt.contains("test result: FAILED\n[tool output stored:"), "and the head and tail");
    assert!(!request.prompt.contains("error[E0308]"), "but not the middle of the output");
    assert!(!request.prompt.contains("out0x1 line 3:"));
    let answer = json!({"jobId": request.job_id, "text": "## Goal\n- fix the build\n## Progress\n- the build failed with a type error"});
    let mut step = e.compaction_continue(decode("compactionContinue", answer).unwrap(), 1_001).unwrap();
    while let CompactionStep::NeedSummary(r) = step {
        step = e.compaction_continue(decode("compactionContinue", json!({"jobId": r.job_id, "text": "## Progress\n- more work"})).unwrap(), 1_002).unwrap();
    }
    let summary: String = e.sql().query_row("SELECT content FROM summaries ORDER BY id LIMIT 1", &[]).unwrap().unwrap().text(0).unwrap();
    assert!(summary.contains("error[E0308]: mismatched types in the middle"), "the ledger copies the error from the whole output: {summary}");
}

#[test]
fn after_turn_hosts_get_stubs_too() {
    let mut e = engine(json!({}));
    assemble(&mut e, 100_000);
    let mut history: Vec<Value> = Vec::new();
    for t in 0..3 {
        let before = history.len();
        history.extend(reading_turn(t, 900));
        let p = decode("afterTurn", json!({"sessionId": "s", "sessionKey": KEY, "messages": history, "prePromptMessageCount": before})).unwrap();
        e.after_turn(p, (t * 100) as i64).unwrap();
    }
    assert_eq!(stubs_in(&assemble(&mut e, 100_000)), 6);
}

#[test]
fn with_stubs_switched_off_every_output_stays_whole() {
    let mut e = engine(json!({"toolOutputStubs": false}));
    assemble(&mut e, 100_000);
    for t in 0..4 {
        commit(&mut e, t, &reading_turn(t, 900));
    }
    let view = assemble(&mut e, 100_000);
    assert_eq!(view.messages.len(), 4 * 8, "every message is in the view");
    assert_eq!(stubs_in(&view), 0);
    assert_eq!(last_mask_decision(&mut e)["reason"], "disabled");
}

#[test]
fn a_huge_output_in_the_first_turn_is_excerpted_by_the_window_the_host_reported() {
    let mut e = engine(json!({}));
    let turn = turn_messages(0, vec![("bash", json!({"command": "cat dump.txt"}), output(0, 0, 20_000), false)]);
    let p = decode("commitTurn", json!({"sessionId": "s", "sessionKey": KEY, "advancementKey": "t0", "messages": turn, "modelContextWindow": 32_000})).unwrap();
    e.commit_turn(p, 0).unwrap();
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM context_items WHERE stub >= 2"), 1, "no view yet: the window sizes the tail");
    let view = assemble(&mut e, 32_000);
    assert!(view.messages.iter().any(|m| m.contains("head and tail shown above")));
    assert_eq!(view.messages.len(), 4, "the whole first turn is in the view");
}

#[test]
fn each_turn_reads_only_the_items_it_has_not_settled() {
    let mut e = engine(json!({"stubBatchRatio": 100}));
    assemble(&mut e, 100_000);
    for t in 0..6 {
        let chat = [json!({"role": "user", "content": format!("question {t}"), "timestamp": t * 10}), json!({"role": "assistant", "content": [{"type": "text", "text": "answer"}], "timestamp": t * 10 + 1})];
        commit(&mut e, t, &chat);
    }
    let next = count(&mut e, "SELECT next_ordinal FROM conversations");
    assert_eq!(count(&mut e, "SELECT stubbed_through FROM conversations"), next - 2, "a chat turn settles everything before the newest turn");
    // Waiting candidates keep the frontier just before the oldest of them.
    commit(&mut e, 6, &reading_turn(6, 600));
    commit(&mut e, 7, &reading_turn(7, 600));
    assert_eq!(last_mask_decision(&mut e)["reason"], "too_small_for_cache_break");
    let first_candidate = count(&mut e, "SELECT MIN(c.ordinal) FROM context_items c JOIN messages m ON m.id = c.message_id WHERE m.role = 'toolResult'");
    assert_eq!(count(&mut e, "SELECT stubbed_through FROM conversations"), first_candidate - 1);
}

/// Each item's ordinal, stub variant (0: whole) and tokens in the view.
fn stub_rows(e: &mut Engine<Db>) -> Vec<(i64, i64, i64)> {
    let rows = e.sql().query("SELECT ordinal, COALESCE(stub, 0), token_count FROM context_items ORDER BY ordinal", &[]).unwrap();
    rows.iter().map(|r| (r.int(0).unwrap(), r.int(1).unwrap(), r.int(2).unwrap())).collect()
}

/// One host turn on gateway `e`: the view, then `afterTurn` with turn `t` added to `history`.
fn view_then_after_turn(e: &mut Engine<Db>, history: &mut Vec<Value>, t: usize) {
    assemble(e, 100_000);
    let before = history.len();
    history.extend(reading_turn(t, 900));
    let p = decode("afterTurn", json!({"sessionId": "s", "sessionKey": KEY, "messages": history, "prePromptMessageCount": before})).unwrap();
    e.after_turn(p, (t * 100) as i64).unwrap();
}

/// Two gateways on one store, taking turns: a gateway's stub pass considers the turns the other
/// stored since its own last turn (PostgreSQL reads them with the conversation's lock, never
/// from what the gateway holds in memory), so the stubs come out exactly as one gateway's.
#[test]
fn a_gateway_stubs_the_outputs_of_turns_another_gateway_stored_meanwhile() {
    const TURNS: usize = 5;
    let alone = {
        let mut e = engine(json!({}));
        let mut history = Vec::new();
        for t in 0..TURNS {
            view_then_after_turn(&mut e, &mut history, t);
        }
        stub_rows(&mut e)
    };
    let path = std::env::temp_dir().join(format!("lossless-stubs-shared-{}.sqlite", std::process::id()));
    let path = path.to_str().unwrap().to_owned();
    let _ = std::fs::remove_file(&path);
    let mut gateways = [engine_with(reopen_db(&path), json!({})), engine_with(reopen_db(&path), json!({}))];
    let mut history = Vec::new();
    // Gateway 0 takes turns 0, 1 and 4; gateway 1 turns 2 and 3, between them.
    for (t, g) in [0, 0, 1, 1, 0].into_iter().enumerate() {
        view_then_after_turn(&mut gateways[g], &mut history, t);
    }
    let shared = stub_rows(&mut gateways[0]);
    let stubbed_in = |rows: &[(i64, i64, i64)], range: std::ops::RangeInclusive<i64>| rows.iter().filter(|r| range.contains(&r.0) && r.1 > 0).count();
    // Turn 3's outputs (ordinals 25..31, 8 items a turn) are stubbed by gateway 0's turn 4.
    assert_eq!(stubbed_in(&alone, 25..=32), 3, "one gateway stubs turn 3's three outputs at turn 4: {alone:?}");
    assert_eq!(shared, alone, "two gateways taking turns leave the same stubs as one");
    drop(gateways);
    let _ = std::fs::remove_file(&path);
}
