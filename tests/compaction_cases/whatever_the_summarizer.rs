// A long session at a small budget with summarizers that answer well, loop, echo, copy their
// template, fail or hang: the view holds a summary of the older history on nearly every turn
// after the first compaction, and no stored summary holds error text, a loop or a run (issue 39,
// item 4). Included after cases.rs by compaction_native.rs and compaction_pg.rs (its imports are
// those of cases.rs).

/// Turns of the session, its view budget, and the share of turns after the first compaction
/// whose view must hold a summary.
const LONG_TURNS: usize = 300;
const LONG_BUDGET: u32 = 6_000;
const MIN_TURNS_WITH_SUMMARY_PERCENT: usize = 90;

/// How a scripted summarizer answers.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Answers {
    Well,
    /// A sentence over and over on even calls, a digit 250 times inside a URL on odd ones.
    Loops,
    /// Every bullet of its input (the previous summary's, the merged summaries') carried forward,
    /// plus each message's first line, word for word.
    EchoesEveryBullet,
    /// The prompt's template lines (the shape with its hints, the instructions) sent back, then
    /// the same echo.
    CopiesTemplateThenEchoes,
    /// An HTTP error every time.
    Fails,
    /// Never answers: the shim's time limit turns each call into a timeout.
    Hangs,
}

/// The lines of a prompt's data blocks (`<messages>`, `<previous_summary>`, `<summaries>`).
fn data_lines(prompt: &str) -> Vec<&str> {
    let start = ["\n<previous_summary>\n", "\n<messages>\n", "\n<summaries>\n"]
        .iter()
        .filter_map(|t| prompt.find(t))
        .min()
        .unwrap_or(prompt.len());
    prompt[start..].lines().collect()
}

fn echo_of(prompt: &str) -> String {
    let lines = data_lines(prompt);
    let mut out = Vec::new();
    let mut after_header = false;
    for line in lines {
        let t = line.trim();
        if t.starts_with('[') && t.ends_with(']') {
            after_header = true;
            continue;
        }
        if t.starts_with("- ") {
            out.push(t.to_owned());
        } else if after_header && !t.is_empty() && !t.starts_with('<') {
            out.push(format!("- {t}"));
            after_header = false;
        }
    }
    out.dedup();
    format!("## Progress\n{}", out.join("\n"))
}

fn template_of(prompt: &str) -> String {
    let cut = ["\n<previous_summary>\n", "\n<messages>\n", "\n<summaries>\n", "\nFor continuity"]
        .iter()
        .filter_map(|t| prompt.find(t))
        .min()
        .unwrap_or(prompt.len());
    // Small models send the instructions back from the second line on (not the marker line).
    prompt[..cut].lines().skip(1).collect::<Vec<_>>().join("\n")
}

fn scripted(answers: Answers, call: usize, request: &SummaryRequest) -> Value {
    match answers {
        Answers::Well => json!({"text": format!("## Goal\n- keep the report service green\n## Progress\n- summary {call}: the {} request was handled and its tests pass", request.kind)}),
        Answers::Loops if call % 2 == 0 => json!({"text": "The AI agent is trained to perform the following actions. ".repeat(40)}),
        Answers::Loops => json!({"text": format!("The chat is here: [https://chat.discordapp.com/chat/Threads/{}]", "1".repeat(250))}),
        Answers::EchoesEveryBullet => json!({"text": echo_of(&request.prompt)}),
        Answers::CopiesTemplateThenEchoes => json!({"text": format!("{}\n{}", template_of(&request.prompt), echo_of(&request.prompt))}),
        Answers::Fails => json!({"error": {"kind": "other", "message": "503 Service Unavailable: upstream overloaded"}}),
        Answers::Hangs => json!({"error": {"kind": "timeout", "message": "no answer within 120000 ms"}}),
    }
}

/// One turn of a coding session: a request, a file read and its output, a test run, a reply.
fn long_turn(t: usize) -> Vec<Value> {
    const FILES: [&str; 7] = ["report", "ledger", "invoice", "parser", "scheduler", "mailer", "cache"];
    const VERBS: [&str; 5] = ["rename the field", "fix the off-by-one", "add a test for", "remove the retry in", "document"];
    let file = FILES[t % FILES.len()];
    let verb = VERBS[(t / 3) % VERBS.len()];
    let ts = (t as i64) * 60_000;
    let body: String = (0..18).map(|i| format!("    let v{i}_{t} = {file}_{}(x{i}, {});\n", i * 7 + t, t * 13 + i)).collect();
    vec![
        json!({"role": "user", "content": format!("Turn {t}: please {verb} {file}::handle_{t} in src/{file}.rs; customer ticket T-{} depends on it.", 4_000 + t), "timestamp": ts}),
        json!({"role": "assistant", "content": [{"type": "text", "text": format!("Reading src/{file}.rs to {verb} handle_{t}.")}, {"type": "toolCall", "id": format!("r{t}"), "name": "read", "arguments": {"path": format!("src/{file}.rs")}}], "timestamp": ts + 1}),
        json!({"role": "toolResult", "toolCallId": format!("r{t}"), "toolName": "read", "content": [{"type": "text", "text": format!("fn handle_{t}() {{\n{body}}}")}], "isError": false, "timestamp": ts + 2}),
        json!({"role": "assistant", "content": [{"type": "toolCall", "id": format!("b{t}"), "name": "bash", "arguments": {"command": format!("cargo test {file}::handle_{t}")}}], "timestamp": ts + 3}),
        json!({"role": "toolResult", "toolCallId": format!("b{t}"), "toolName": "bash", "content": [{"type": "text", "text": format!("running 4 tests\ntest {file}::handle_{t}::case_{} ... ok\ntest result: ok. 4 passed; 0 failed", t % 9)}], "isError": false, "timestamp": ts + 4}),
        json!({"role": "assistant", "content": [{"type": "text", "text": format!("Done: handle_{t} in src/{file}.rs now does what ticket T-{} asks, and its tests pass. We will keep the old name as an alias.", 4_000 + t)}], "timestamp": ts + 5}),
    ]
}

#[derive(Debug)]
struct LongRun {
    calls: usize,
    stored_by_summarizer: i64,
    fallbacks: i64,
    turns_after_first: usize,
    turns_with_summary: usize,
}

/// Runs the session the way a host does: assemble, commit the turn, maintain; every request
/// answered by the scripted summarizer.
fn long_session(answers: Answers) -> LongRun {
    let mut e = engine_with(Config::from_json(&json!({})).unwrap());
    let mut calls = 0;
    let (mut first, mut after, mut with) = (None, 0, 0);
    for t in 0..LONG_TURNS {
        let now = (t as i64) * 60_000;
        let view = e.assemble(decode("assemble", json!({"sessionId": "s", "sessionKey": KEY, "tokenBudget": LONG_BUDGET})).unwrap(), now).unwrap();
        if first.is_some() {
            after += 1;
            let has = view.messages.iter().any(|m| m.contains("<lossless-summary"));
            with += usize::from(has);
            if !has && std::env::var("LONG_DEBUG").is_ok() {
                let items: Vec<String> = e.sql().query("SELECT COALESCE('s' || summary_id, 'm' || message_id) || ':' || token_count FROM context_items ORDER BY ordinal", &[]).unwrap().iter().map(|r| r.text(0).unwrap()).collect();
                let events: Vec<String> = e.sql().query("SELECT pass || ' ' || outcome || ' ' || reason FROM compaction_events WHERE pass <> 'trigger' ORDER BY id DESC LIMIT 4", &[]).unwrap().iter().map(|r| r.text(0).unwrap()).collect();
                eprintln!("turn {t}: {} view messages, {} tokens; items {items:?}; events {events:?}", view.messages.len(), view.estimated_tokens);
            }
        }
        let p = decode("commitTurn", json!({"sessionId": "s", "sessionKey": KEY, "advancementKey": format!("t{t}"), "messages": long_turn(t)})).unwrap();
        e.commit_turn(p, now).unwrap();
        let p = decode("compactionStart", json!({"sessionId": "s", "sessionKey": KEY, "mode": "pending", "summarizer": "host", "tokenBudget": LONG_BUDGET})).unwrap();
        let step = e.compaction_start(p, now + 10).unwrap();
        run(&mut e, step, |request| {
            calls += 1;
            scripted(answers, calls, request)
        }, now + 20);
        if first.is_none() && count(&mut e, "SELECT COUNT(*) FROM summaries") > 0 {
            first = Some(t);
        }
    }
    // Nothing a summarizer sent that is not a summary is ever stored.
    let contents: Vec<String> = e.sql().query("SELECT content FROM summaries", &[]).unwrap().iter().map(|r| r.text(0).unwrap()).collect();
    for content in &contents {
        for bad in ["503", "Service Unavailable", "120000 ms", "trained to perform", "discordapp", "Reply with the summary only", "what the user is trying to achieve", "<think"] {
            assert!(!content.contains(bad), "{answers:?}: a stored summary holds {bad:?}:\n{content}");
        }
        assert_eq!(lossless_wasm::core::compaction::degenerate::char_run(content), None, "{answers:?}: a run is stored:\n{content}");
        assert_eq!(lossless_wasm::core::compaction::degenerate::repetition_loop(content), None, "{answers:?}: a loop is stored:\n{content}");
    }
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM messages") as usize, LONG_TURNS * 6, "every message is kept");
    LongRun {
        calls,
        stored_by_summarizer: count(&mut e, "SELECT COUNT(*) FROM summaries WHERE level <> 'fallback'"),
        fallbacks: count(&mut e, "SELECT COUNT(*) FROM summaries WHERE level = 'fallback'"),
        turns_after_first: after,
        turns_with_summary: with,
    }
}

#[test]
fn the_view_holds_summaries_whatever_the_summarizer_does() {
    for answers in [Answers::Well, Answers::Loops, Answers::EchoesEveryBullet, Answers::CopiesTemplateThenEchoes, Answers::Fails, Answers::Hangs] {
        let run = long_session(answers);
        println!("{answers:?}: {run:?}, {} % of turns with a summary in view", run.turns_with_summary * 100 / run.turns_after_first.max(1));
        assert!(run.turns_after_first >= LONG_TURNS / 2, "{answers:?}: compaction started late: {run:?}");
        assert!(run.calls > 1, "{answers:?}: the summarizer is asked, and asked again: {run:?}");
        assert!(run.turns_with_summary * 100 >= run.turns_after_first * MIN_TURNS_WITH_SUMMARY_PERCENT, "{answers:?}: {run:?}");
        match answers {
            Answers::Well => assert!(run.stored_by_summarizer > 0 && run.fallbacks == 0, "{run:?}"),
            Answers::Loops | Answers::Fails | Answers::Hangs => assert_eq!(run.stored_by_summarizer, 0, "{run:?}"),
            // The echoes quote their input, but a leaf's is a real reduction of it: stored.
            Answers::EchoesEveryBullet | Answers::CopiesTemplateThenEchoes => assert!(run.stored_by_summarizer > 0, "{run:?}"),
        }
    }
}
