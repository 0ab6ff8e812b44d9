// The active task (the current and the previous turn) in the view and under compaction, shared by
// compaction_native.rs and compaction_pg.rs (after cases.rs, whose helpers it uses): whatever the
// host reports, the view is never empty and holds both turns (big tool outputs as excerpts when
// they must), and no pass summarizes them.

const WINDOW: u32 = 128_000;

/// One tool-loop turn: a request, a read of `output_tokens` tokens, an answer.
fn tool_turn(t: usize, output_tokens: usize) -> Vec<Value> {
    let ts = 1_000 + (t * 10) as i64;
    let body: String = (0..output_tokens / 8).map(|i| format!("line {i} of file {t}\n")).collect();
    vec![
        json!({"role": "user", "content": format!("REQUEST-{t}: change module {t}"), "timestamp": ts}),
        json!({"role": "assistant", "content": [{"type": "text", "text": format!("TEXT-{t}: reading it")}, {"type": "toolCall", "id": format!("c{t}"), "name": "read", "arguments": {"path": format!("src/m{t}.rs")}}], "timestamp": ts + 1}),
        json!({"role": "toolResult", "toolCallId": format!("c{t}"), "toolName": "read", "content": [{"type": "text", "text": body}], "isError": false, "timestamp": ts + 2}),
        json!({"role": "assistant", "content": [{"type": "text", "text": format!("ANSWER-{t}: done")}], "usage": {"input": 0, "output": 20}, "timestamp": ts + 3}),
    ]
}

/// Commits a turn whose answer's model request the provider reported as `reported` prompt
/// tokens, plus the turn's messages before the answer when `plus_turn` (a provider's real count).
fn commit_reported(e: &mut Engine<Db>, t: usize, output_tokens: usize, reported: u64, window: u32, plus_turn: bool) -> Vec<Value> {
    let mut messages = tool_turn(t, output_tokens);
    let turn: u64 = if plus_turn { messages[..3].iter().map(|m| m.to_string().len() as u64 / 4).sum() } else { 0 };
    messages[3]["usage"] = json!({"input": reported + turn, "output": 20});
    let p = decode("commitTurn", json!({"sessionId": "s", "sessionKey": KEY, "advancementKey": format!("t{t}"), "messages": messages, "modelContextWindow": window})).unwrap();
    e.commit_turn(p, 1_000 + (t * 10) as i64).unwrap();
    messages
}

fn assemble_at(e: &mut Engine<Db>, budget: u32, prompt: &str) -> AssembleResult {
    e.assemble(decode("assemble", json!({"sessionId": "s", "sessionKey": KEY, "tokenBudget": budget, "prompt": prompt})).unwrap(), 5_000).unwrap()
}

/// Every message of `turn` is in `view`, as committed or (a tool output) as its excerpt; the
/// requests and the assistant's text always verbatim.
fn assert_turn_in_view(view: &AssembleResult, turn: &[Value], what: &str) {
    for m in turn {
        let whole = m.to_string();
        if view.messages.contains(&whole) {
            continue;
        }
        assert_eq!(m["role"], "toolResult", "{what}: a {} message is missing from the view: {whole:.200}", m["role"]);
        let call = format!("\"toolCallId\":\"{}\"", m["toolCallId"].as_str().unwrap());
        assert!(
            view.messages.iter().any(|v| v.contains(&call) && v.contains("head and tail shown above")),
            "{what}: tool output {call} is neither whole nor an excerpt in the view"
        );
    }
}

#[test]
fn reported_prompts_from_zero_to_over_the_window_never_empty_the_view_nor_cut_the_active_task() {
    for (reported, output) in [0u64, 20_000, 60_000, 93_000, 106_000, 127_000, 128_000, 400_000].into_iter().flat_map(|r| [(r, 6_000), (r, 24_000)]) {
        let mut e = engine_with(config(json!({})));
        let mut previous = Vec::new();
        for t in 0..6 {
            let view = assemble_at(&mut e, WINDOW, &format!("REQUEST-{t}"));
            if t > 0 {
                assert!(!view.messages.is_empty(), "reported {reported}, output {output}, turn {t}: empty view");
                assert_turn_in_view(&view, &previous, &format!("reported {reported}, output {output}, turn {t}"));
            }
            previous = commit_reported(&mut e, t, output, reported, WINDOW, false);
            let _ = compact(&mut e, "pending", "extractive", json!({}), |_| panic!("extractive needs no LLM"), 5_000);
        }
        // Inside the tool loop of the next turn (its request stored, the loop still running):
        // the current turn so far and the previous turn.
        let current: Vec<Value> = tool_turn(6, 4_000).into_iter().take(3).collect();
        let p = decode("ingest", json!({"sessionId": "s", "sessionKey": KEY, "messages": current})).unwrap();
        e.ingest(p, 6_000).unwrap();
        let view = assemble_at(&mut e, WINDOW, "REQUEST-6");
        assert_turn_in_view(&view, &previous, &format!("reported {reported}, in the loop: previous turn"));
        assert_turn_in_view(&view, &current, &format!("reported {reported}, in the loop: current turn"));
    }
}

#[test]
fn a_host_whose_fixed_prompt_is_60_percent_of_the_window_gets_both_turns_with_excerpts_and_one_notice() {
    // With stubs on, the engine excerpts huge outputs when it stores them; with them off, the
    // view itself must cut the active task's outputs to fit.
    for stubs in [true, false] {
        let window = 16_000;
        let mut e = engine_with(config(json!({"toolOutputStubs": stubs})));
        let mut previous = Vec::new();
        let mut notices = Vec::new();
        for t in 0..8 {
            let view = assemble_at(&mut e, window, &format!("REQUEST-{t}"));
            notices.extend(view.notice.clone());
            if t > 0 {
                assert!(!view.messages.is_empty(), "stubs {stubs}, turn {t}: empty view");
                assert_turn_in_view(&view, &previous, &format!("stubs {stubs}, turn {t}"));
            }
            // The provider counts the host's 9,600-token prompt beside our view and the turn.
            let view_tokens = view.estimated_tokens;
            previous = commit_reported(&mut e, t, 5_000, 9_600 + view_tokens, window, true);
            let _ = compact(&mut e, "pending", "extractive", json!({}), |_| panic!("extractive needs no LLM"), 5_000);
        }
        let view = assemble_at(&mut e, window, "REQUEST-8");
        notices.extend(view.notice.clone());
        assert!(view.messages.iter().any(|m| m.contains("head and tail shown above")), "stubs {stubs}: the previous turn's big output is an excerpt");
        assert!(view.messages.iter().any(|m| m.contains("REQUEST-7")) && view.messages.iter().any(|m| m.contains("ANSWER-7")));
        assert!(notices.len() <= 1, "logged once per conversation at most: {notices:?}");
        if !stubs {
            // A view that cannot hold the active task cannot show a summary: none is asked for.
            let no_room = count(&mut e, "SELECT COUNT(*) FROM compaction_events WHERE pass = 'trigger' AND reason = 'no_room_for_summaries'");
            assert!(no_room >= 1, "the trigger says why it asks for no summary");
            assert_eq!(notices.len(), 1, "the view had to cut the active task: logged once");
            let notice = &notices[0];
            assert!(notice.contains(&format!("window {window}")) && notice.contains("learned overhead 9") && notice.contains("excerpts"), "{notice}");
        }
    }
}

#[test]
fn no_pass_summarizes_the_current_or_previous_turn() {
    // A tight budget and a small tail rule: every pass is under pressure.
    let mut e = engine_with(config(json!({"freshTailCount": 1})));
    for t in 0..10 {
        commit_reported(&mut e, t, 800, 0, 8_000, false);
        let _ = compact(&mut e, "pending", "extractive", json!({"tokenBudget": 2_000}), |_| panic!("no LLM"), 5_000);
    }
    // The host's overflow compact() and a forced sweep, far over the budget.
    let _ = compact(&mut e, "sweep", "extractive", json!({"tokenBudget": 2_000, "currentTokenCount": 50_000, "force": true}), |_| panic!("no LLM"), 6_000);
    let _ = compact(&mut e, "sweep", "extractive", json!({"tokenBudget": 1_000, "force": true}), |_| panic!("no LLM"), 7_000);
    assert!(count(&mut e, "SELECT COUNT(*) FROM summaries") > 0, "the older turns were summarized");
    let summarized_requests: Vec<i64> = (0..10)
        .filter(|t| {
            count(&mut e, &format!("SELECT COUNT(*) FROM summary_messages sm JOIN messages m ON m.id = sm.message_id WHERE m.raw_json LIKE '%REQUEST-{t}:%'")) > 0
        })
        .map(|t| t as i64)
        .collect();
    assert!(!summarized_requests.contains(&9), "the newest turn is whole: {summarized_requests:?}");
    // The newest turn is answered: it is the previous turn of the next request; turn 8 is not
    // protected and may go. No summary covers part of a turn of 9 (its request or its output).
    let parts_of_9 = count(&mut e, "SELECT COUNT(*) FROM summary_messages sm JOIN messages m ON m.id = sm.message_id WHERE m.raw_json LIKE '%c9%' OR m.raw_json LIKE '%-9:%'");
    assert_eq!(parts_of_9, 0);
    // Every summarized turn was summarized whole: its request and its answer together.
    for t in summarized_requests {
        let answer = count(&mut e, &format!("SELECT COUNT(*) FROM summary_messages sm JOIN messages m ON m.id = sm.message_id WHERE m.raw_json LIKE '%ANSWER-{t}:%'"));
        assert_eq!(answer, 1, "turn {t}: request summarized without its answer");
    }
    let view = assemble_at(&mut e, 1_000, "REQUEST-10");
    assert!(view.messages.iter().any(|m| m.contains("REQUEST-9")), "the previous turn's request is in the view");
}
