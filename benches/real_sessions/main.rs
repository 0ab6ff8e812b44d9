//! The real-session benchmark (issue 39): the nine recorded coding-agent sessions of
//! `/work/shared/real-sessions/` replayed through the native engine the way OpenClaw 2026.9
//! drives it, measuring what the model is left with. A benchmark, not a test: it prints numbers
//! (docs/benchmarks.md, "Real sessions") and asserts nothing about them, but it exits non-zero
//! when a session file is missing or unreadable or any engine call fails.
//!
//! Per turn: `assemble` (the window as `tokenBudget`, the host's whole history, the turn's
//! prompt, the host's reply reserve as `maxOutputTokens`), then `commitTurn` with the turn's
//! messages (timestamps re-stamped 3 ms apart, the `REPLAY-0000n: ` marker on the prompt,
//! `modelContextWindow` = the window), then the pending compaction answered by the scripted host
//! summarizer of [`replay`]. `--usage recorded` commits each assistant message's usage as
//! recorded; `--usage modelled` replaces it by what the provider would report for the replayed
//! prompt: 4,000 + the system-prompt addition + the view + the turn's earlier messages.
//!
//! Edits are judged two ways. The read rule: an edit of a file read in an earlier turn is
//! *unseen* when no earlier read's result is whole in the view (nor a read earlier in the turn).
//! The old-text rule, closer to what the model needs: an edit call that names the text it
//! replaces (`oldText`, `old_string`, `old_str`), where that text was in an earlier turn (a read,
//! the content of a write, an earlier edit's new text), is *unseen* when the text is neither in
//! the view nor earlier in the turn.
//!
//! Run: `cargo bench --bench real_sessions` (options after `--`: `--session NAME`,
//! `--usage recorded|modelled` (default both), `--window N` (default 128000), `--config JSON`,
//! `--csv FILE` for per-turn rows, `--max-output N` for the reply reserve the host passes
//! (default 20000, at most a quarter of the window; 0: none), `--dir DIR` for the sessions' folder, `--verbose` for a line
//! per empty view, view missing the previous turn and unseen edit, `--files` for what the shell
//! rules of [`files`] make of every command that reads or edits a file).

#[path = "../shared/replay.rs"]
mod replay;

#[path = "../cost_model/price.rs"]
#[allow(dead_code)] // `turn` and the fixed per-turn constants are cost_model's
mod price;

mod files;

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use lossless_wasm::core::config::Config;
use lossless_wasm::engine::{decode, Engine};
use lossless_wasm::store::native::NativeSql;
use replay::tokens_of;
use serde_json::{json, Value};

const SESSIONS: [&str; 9] = [
    "pi-large-session",
    "pi-before-compaction",
    "claude-code-spotter-ae4a77f8",
    "claude-code-spotter-fa812bfe",
    "claude-code-spotter-258c7280",
    "claude-code-spotter-8463c716",
    "claude-code-spotter-4d5611e5",
    "mini-swe-agent-astroid-1333",
    "mini-swe-agent-sqlfluff-1733",
];
/// The host's system prompt and tool schemas, in the modelled usage and in the price.
const SYSTEM_TOKENS: u64 = 4_000;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Usage {
    Recorded,
    Modelled,
}

impl Usage {
    fn name(self) -> &'static str {
        match self {
            Usage::Recorded => "recorded",
            Usage::Modelled => "modelled",
        }
    }
}

struct Args {
    dir: String,
    sessions: Vec<String>,
    usages: Vec<Usage>,
    window: u64,
    config: Value,
    csv: Option<String>,
    verbose: bool,
    files: bool,
    /// The reply reserve passed as `maxOutputTokens` (None: not passed).
    max_output: Option<u64>,
}

fn args() -> Result<Args, String> {
    let mut out = Args {
        dir: "/work/shared/real-sessions".into(),
        sessions: SESSIONS.iter().map(|s| s.to_string()).collect(),
        usages: vec![Usage::Recorded, Usage::Modelled],
        window: 128_000,
        config: Value::Null,
        csv: None,
        verbose: false,
        files: false,
        max_output: Some(20_000),
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().ok_or(format!("{name} takes a value"));
        match a.as_str() {
            "--session" => {
                let name = value("--session")?;
                out.sessions = vec![name.trim_end_matches(".jsonl").to_owned()];
            }
            "--usage" => {
                out.usages = match value("--usage")?.as_str() {
                    "recorded" => vec![Usage::Recorded],
                    "modelled" => vec![Usage::Modelled],
                    "both" => vec![Usage::Recorded, Usage::Modelled],
                    other => {
                        return Err(format!(
                            "--usage {other}: expected recorded, modelled or both"
                        ))
                    }
                }
            }
            "--window" => {
                out.window = value("--window")?
                    .parse()
                    .map_err(|e| format!("--window: {e}"))?
            }
            "--config" => {
                out.config = serde_json::from_str(&value("--config")?)
                    .map_err(|e| format!("--config takes a JSON object: {e}"))?
            }
            "--csv" => out.csv = Some(value("--csv")?),
            "--dir" => out.dir = value("--dir")?,
            "--verbose" => out.verbose = true,
            "--files" => out.files = true,
            "--max-output" => {
                let n: u64 = value("--max-output")?
                    .parse()
                    .map_err(|e| format!("--max-output: {e}"))?;
                out.max_output = (n > 0).then_some(n);
            }
            // `cargo bench` passes `--bench` to every bench binary.
            "--bench" => {}
            other => return Err(format!("unknown option {other}")),
        }
    }
    Ok(out)
}

/// One line of a session file.
struct Turn {
    prompt: String,
    messages: Vec<Value>,
}

fn load(dir: &str, name: &str) -> Result<Vec<Turn>, String> {
    let path = format!("{dir}/{name}.jsonl");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    let mut turns = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let mut value: Value =
            serde_json::from_str(line).map_err(|e| format!("{path}:{}: {e}", i + 1))?;
        let prompt = value["prompt"].as_str().unwrap_or_default().to_owned();
        let Some(Value::Array(messages)) = value.get_mut("messages").map(Value::take) else {
            return Err(format!("{path}:{}: no messages array", i + 1));
        };
        if messages.is_empty() {
            return Err(format!("{path}:{}: a turn without messages", i + 1));
        }
        turns.push(Turn { prompt, messages });
    }
    if turns.is_empty() {
        return Err(format!("{path}: no turns"));
    }
    Ok(turns)
}

/// Totals of one replay (or of several, summed).
#[derive(Debug, Default, Clone)]
struct Stats {
    turns: u64,
    empty: u64,
    previous_missing: u64,
    previous_excerpts: u64,
    stubs: u64,
    max_view: u64,
    summary_calls: u64,
    /// What the summarizer calls cost (part of the engine's cost), all turns.
    summary_cost: f64,
    edits: u64,
    edits_after_read: u64,
    unseen: u64,
    /// Unseen edits where an earlier read's result is in the view as its stub line.
    unseen_stubbed: u64,
    /// Edits whose old text was in an earlier turn (see [`TurnEdits`]).
    text_seen_before: u64,
    /// Of those, where the old text is neither in the view nor earlier in the turn.
    text_unseen: u64,
    /// Turns before the whole history would overflow the window.
    fit_turns: u64,
    engine_fit: f64,
    whole_fit: f64,
    engine_all: f64,
    empty_turns: Vec<usize>,
    unseen_turns: Vec<usize>,
}

impl Stats {
    fn add(&mut self, o: &Stats) {
        self.turns += o.turns;
        self.empty += o.empty;
        self.previous_missing += o.previous_missing;
        self.previous_excerpts += o.previous_excerpts;
        self.stubs += o.stubs;
        self.max_view = self.max_view.max(o.max_view);
        self.summary_calls += o.summary_calls;
        self.summary_cost += o.summary_cost;
        self.edits += o.edits;
        self.edits_after_read += o.edits_after_read;
        self.unseen += o.unseen;
        self.unseen_stubbed += o.unseen_stubbed;
        self.text_seen_before += o.text_seen_before;
        self.text_unseen += o.text_unseen;
        self.fit_turns += o.fit_turns;
        self.engine_fit += o.engine_fit;
        self.whole_fit += o.whole_fit;
        self.engine_all += o.engine_all;
    }
}

/// A file read of an earlier turn: the path and the committed JSON of its result.
struct Read {
    path: String,
    call_id: String,
    result: Option<String>,
    /// The turn of the read.
    turn: usize,
}

/// The read's result is in the view as the engine's stub line (not whole).
fn stubbed_in_view(read: &Read, view: &[String]) -> bool {
    let id = format!("\"toolCallId\":\"{}\"", read.call_id);
    view.iter()
        .any(|m| m.contains(&id) && m.contains("[tool output stored:"))
}

/// The texts an edit call replaces: `oldText` (pi), `old_string` (Claude Code's `Edit`, and each
/// of `MultiEdit`'s `edits`), `old_str`; blank ones are left out.
fn old_texts(arguments: &Value) -> Vec<String> {
    let keys = ["oldText", "old_string", "old_str"];
    let of = |v: &Value| -> Vec<String> {
        keys.iter()
            .filter_map(|k| v[*k].as_str())
            .filter(|t| !t.trim().is_empty())
            .map(str::to_owned)
            .collect()
    };
    let mut out = of(arguments);
    if let Some(edits) = arguments["edits"].as_array() {
        out.extend(edits.iter().flat_map(of));
    }
    out
}

/// `text` as it appears inside a JSON string (escaped, without the quotes).
fn json_inner(text: &str) -> String {
    let quoted = Value::String(text.to_owned()).to_string();
    quoted[1..quoted.len() - 1].to_owned()
}

/// Puts the replay marker before the first text of a user message.
fn mark(message: &mut Value, marker: &str) {
    match message.get_mut("content") {
        Some(Value::String(text)) => *text = format!("{marker}{text}"),
        Some(Value::Array(blocks)) => {
            if let Some(text) = blocks
                .iter_mut()
                .find(|b| b["type"] == "text")
                .and_then(|b| b.get_mut("text"))
            {
                *text = Value::String(format!("{marker}{}", text.as_str().unwrap_or_default()));
            }
        }
        _ => {}
    }
}

fn output_tokens(message: &Value) -> u64 {
    message["usage"]["output"].as_f64().unwrap_or(0.0).max(0.0) as u64
}

/// "3–5, 9" from sorted turn numbers.
fn ranges(turns: &[usize]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < turns.len() {
        let mut j = i;
        while j + 1 < turns.len() && turns[j + 1] == turns[j] + 1 {
            j += 1;
        }
        if !out.is_empty() {
            out.push_str(", ");
        }
        if j == i {
            let _ = write!(out, "{}", turns[i]);
        } else {
            let _ = write!(out, "{}–{}", turns[i], turns[j]);
        }
        i = j + 1;
    }
    out
}

/// A turn and what the model had seen before it, for [`edits_of_turn`].
#[derive(Clone, Copy)]
struct TurnSeen<'a> {
    /// The turn's number (from 1).
    number: usize,
    /// Its messages, and the same as committed JSON.
    messages: &'a [Value],
    committed: &'a [String],
    /// The file reads of earlier turns.
    reads: &'a [Read],
    /// The view the turn was given.
    view: &'a [String],
    /// Every earlier turn's committed JSON, one message a line.
    earlier_turns: &'a str,
}

/// The edits of one turn, counted by the rules of the "unseen edits" metric.
#[derive(Debug, Default, Clone, Copy)]
struct TurnEdits {
    edits: u64,
    /// Of a file read in an earlier turn.
    after_read: u64,
    /// Of those, where no earlier read's result is whole in the view and the file was not
    /// read in an earlier call of this turn.
    unseen: u64,
    /// Of the unseen, where a read's result is in the view as its stub line.
    stubbed: u64,
    /// Edits that name the text they replace (`oldText`, `old_string`, `old_str`) where that
    /// text was in an earlier turn's messages (a read, a write's content, an earlier edit).
    text_seen_before: u64,
    /// Of those, where the old text is neither in the view nor earlier in this turn: the model
    /// had to edit from memory (the issue's own words: "an edit whose old text the model could
    /// not see").
    text_unseen: u64,
}

/// Counts the edits of a turn (`messages`, and `committed`: the same as committed JSON) against
/// the reads of earlier turns and the `view` the turn was given; returns the counts and the
/// turn's own reads. `on_unseen(path, earlier reads, whole)` is called for each unseen edit
/// (`whole`: the call writes the file whole, without its old text); `list`
/// prints what the shell rules make of each command that reads or edits.
fn edits_of_turn(
    turn: &TurnSeen<'_>,
    classifier: &mut files::Classifier,
    on_unseen: impl Fn(&str, &[&Read], bool),
    list: bool,
) -> (TurnEdits, Vec<Read>) {
    let TurnSeen {
        number: turn,
        messages,
        committed,
        reads,
        view,
        earlier_turns,
    } = *turn;
    let in_view: HashSet<&str> = view.iter().map(String::as_str).collect();
    let mut counts = TurnEdits::default();
    let results: HashMap<&str, &String> = messages
        .iter()
        .zip(committed)
        .filter_map(|(m, json)| m["toolCallId"].as_str().map(|id| (id, json)))
        .collect();
    let mut read_this_turn: Vec<String> = Vec::new();
    let mut new_reads: Vec<Read> = Vec::new();
    for (index, m) in messages.iter().enumerate() {
        if m["role"] != "assistant" {
            continue;
        }
        let mut read_here = Vec::new();
        let blocks = m["content"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        for call in blocks.iter().filter(|b| b["type"] == "toolCall") {
            let ops = classifier.classify(
                call["name"].as_str().unwrap_or_default(),
                &call["arguments"],
            );
            // The old-text rule: each text the call replaces, as it appears inside JSON.
            let known: Vec<String> = old_texts(&call["arguments"])
                .into_iter()
                .map(|t| json_inner(&t))
                .filter(|t| earlier_turns.contains(t.as_str()))
                .collect();
            if !known.is_empty() {
                counts.text_seen_before += 1;
                let visible = |t: &String| {
                    view.iter().any(|v| v.contains(t.as_str()))
                        || committed[..index].iter().any(|c| c.contains(t.as_str()))
                };
                if !known.iter().all(visible) {
                    counts.text_unseen += 1;
                }
            }
            for path in &ops.edits {
                counts.edits += 1;
                let earlier: Vec<&Read> = reads
                    .iter()
                    .filter(|r| files::same_file(&r.path, path))
                    .collect();
                if earlier.is_empty() {
                    continue;
                }
                counts.after_read += 1;
                let seen = earlier
                    .iter()
                    .any(|r| r.result.as_deref().is_some_and(|j| in_view.contains(j)))
                    || read_this_turn.iter().any(|p| files::same_file(p, path));
                if !seen {
                    counts.unseen += 1;
                    let stubbed = earlier.iter().any(|r| stubbed_in_view(r, view));
                    counts.stubbed += u64::from(stubbed);
                    on_unseen(path, &earlier, ops.whole.contains(path));
                }
            }
            if list
                && call["name"]
                    .as_str()
                    .is_some_and(|n| n.eq_ignore_ascii_case("bash"))
                && (!ops.reads.is_empty() || !ops.edits.is_empty())
            {
                let c = call["arguments"]["command"].as_str().unwrap_or_default();
                eprintln!(
                    "FILES {:?} {:?} <- {}",
                    ops.reads,
                    ops.edits,
                    c.chars().take(100).collect::<String>().replace('\n', "\\n")
                );
            }
            let id = call["id"].as_str().unwrap_or_default();
            for path in ops.reads {
                read_here.push(path.clone());
                new_reads.push(Read {
                    path,
                    call_id: id.to_owned(),
                    result: results.get(id).map(|j| (*j).clone()),
                    turn,
                });
            }
        }
        read_this_turn.extend(read_here);
    }
    (counts, new_reads)
}

fn replay(
    name: &str,
    turns: &[Turn],
    usage: Usage,
    args: &Args,
    csv: &mut String,
) -> Result<Stats, String> {
    let fail = |what: &str, t: usize, e: lossless_wasm::Error| {
        format!("{name} ({}) turn {t}: {what} failed: {e}", usage.name())
    };
    let mut clock = 1_780_000_000_000i64;
    let config = Config::from_json(&args.config).map_err(|e| format!("--config: {e}"))?;
    let sql = NativeSql::in_memory().map_err(|e| format!("in-memory SQLite: {e}"))?;
    let mut engine = Engine::open(sql, config, clock).map_err(|e| format!("open: {e}"))?;
    let (session_id, key) = (format!("replay-{name}"), format!("agent:main:{name}"));
    // OpenClaw 2026.9's compaction reserve, min(20000, window / 4), reported as
    // runtimeSettings.limits.maxOutputTokens.
    let reply_reserve = args.max_output.map(|n| n.min(args.window / 4));
    let mut stats = Stats::default();
    let mut history: Vec<Value> = Vec::new();
    let mut history_tokens = 0u64;
    // The whole history in the harness's measure (compact JSON / 4), for the overflow rule.
    let mut history_chars = 0u64;
    let mut previous_view: Vec<String> = Vec::new();
    let mut previous_turn: Vec<String> = Vec::new();
    let mut previous_whole = 0u64;
    let mut whole_overflowed = false;
    let mut reads: Vec<Read> = Vec::new();
    // Every earlier turn's committed JSON, for the old-text rule.
    let mut earlier_text = String::new();
    let mut classifier = files::Classifier::default();
    // Turns are numbered from 1, as in the replay marker.
    for (t, turn) in (1..).zip(turns) {
        let marker = format!("REPLAY-{t:05}: ");
        clock += 3;
        let params = json!({
            "sessionId": session_id, "sessionKey": key, "tokenBudget": args.window,
            "historyIsComplete": true, "prompt": format!("{marker}{}", turn.prompt),
            "maxOutputTokens": reply_reserve,
        });
        let params = decode("assemble", params).map_err(|e| fail("assemble", t, e))?;
        let assembled = engine
            .assemble_with(params, history.len(), || Ok(history.clone()), clock)
            .map_err(|e| fail("assemble", t, e))?;
        let view = &assembled.messages;
        let (view_tokens, prefix) = replay::view_and_cached_prefix(view, &previous_view);
        let empty = t > 1 && view.is_empty();
        let (missing, excerpts) = replay::previous_turn_gaps(&previous_turn, view);
        let stubs = view
            .iter()
            .filter(|m| m.contains("[tool output stored:"))
            .count() as u64;
        stats.turns += 1;
        if empty {
            stats.empty += 1;
            stats.empty_turns.push(t);
        }
        stats.previous_missing += u64::from(missing > 0);
        stats.previous_excerpts += excerpts as u64;
        stats.stubs += stubs;
        stats.max_view = stats.max_view.max(assembled.estimated_tokens);

        // The turn as the host commits it.
        let addition = assembled.system_prompt_addition.len() as u64 / 4;
        let mut messages = Vec::with_capacity(turn.messages.len());
        let mut earlier_chars = 0u64;
        let (mut calls, mut output) = (0u64, 0u64);
        // The whole history is measured on the messages with their recorded usage, so both
        // usage modes compare against the same baseline.
        let (mut turn_tokens, mut turn_chars) = (0u64, 0u64);
        for (i, original) in turn.messages.iter().enumerate() {
            let mut m = original.clone();
            clock += 3;
            m["timestamp"] = json!(clock);
            if i == 0 {
                mark(&mut m, &marker);
            }
            let as_recorded = m.to_string();
            turn_tokens += tokens_of(&as_recorded);
            turn_chars += as_recorded.len() as u64;
            if m["role"] == "assistant" {
                calls += 1;
                output += output_tokens(original);
                if usage == Usage::Modelled {
                    let input =
                        SYSTEM_TOKENS + addition + assembled.estimated_tokens + earlier_chars / 4;
                    let out = output_tokens(original);
                    m["usage"] = json!({"input": input, "output": out, "cacheRead": 0, "cacheWrite": 0, "totalTokens": input + out});
                }
            }
            earlier_chars += m.to_string().len() as u64;
            messages.push(m);
        }
        let committed: Vec<String> = messages.iter().map(Value::to_string).collect();

        // Edits of files read in an earlier turn, against the view this turn was given.
        let seen = TurnSeen {
            number: t,
            messages: &messages,
            committed: &committed,
            reads: &reads,
            view,
            earlier_turns: &earlier_text,
        };
        let (turn_edits, new_reads) = edits_of_turn(
            &seen,
            &mut classifier,
            |path, earlier, whole| {
                if args.verbose {
                    // The newest earlier read: how old, how big, and what the view holds of it.
                    let newest = earlier.iter().max_by_key(|r| r.turn);
                    let (age, tokens, state) = newest.map_or((0, 0, "none"), |r| {
                        let id = format!("\"toolCallId\":\"{}\"", r.call_id);
                        let shown = view.iter().find(|m| m.contains(&id));
                        let state = match shown {
                            None => "absent",
                            Some(m) if m.contains("head and tail shown") => "excerpt",
                            Some(m) if m.contains("[tool output stored:") => "stub",
                            Some(_) => "changed",
                        };
                        (t - r.turn, r.result.as_deref().map_or(0, tokens_of), state)
                    });
                    eprintln!(
                        "{name} ({}) turn {t}: edit of {path} unseen ({} earlier reads, none whole in the view; newest {age} turns old, {tokens} tokens, {state}{})",
                        usage.name(),
                        earlier.len(),
                        if whole { "; written whole" } else { "" }
                    );
                }
            },
            args.files,
        );
        stats.edits += turn_edits.edits;
        stats.edits_after_read += turn_edits.after_read;
        stats.unseen += turn_edits.unseen;
        stats.unseen_stubbed += turn_edits.stubbed;
        stats.text_seen_before += turn_edits.text_seen_before;
        stats.text_unseen += turn_edits.text_unseen;
        if turn_edits.unseen > 0 {
            stats.unseen_turns.push(t);
        }

        clock += 3;
        let commit = json!({
            "sessionId": session_id, "sessionKey": key, "advancementKey": format!("replay-{t}"),
            "messages": messages, "modelContextWindow": args.window,
        });
        let commit = decode("commitTurn", commit).map_err(|e| fail("commitTurn", t, e))?;
        engine
            .commit_turn(commit, clock)
            .map_err(|e| fail("commitTurn", t, e))?;
        clock += 3;
        let work = replay::run_pending(&mut engine, &session_id, &key, stats.summary_calls, clock)
            .map_err(|e| fail("compaction", t, e))?;
        stats.summary_calls += work.calls;

        // Prices: the engine's view against the whole history, both with prompt caching.
        let engine_cost =
            price::turn_with(view_tokens, prefix, SYSTEM_TOKENS + addition, calls, output);
        let summary_cost = price::summaries(work.tokens_in, work.tokens_out);
        stats.summary_cost += summary_cost;
        let engine_cost =
            engine_cost.cache_read + engine_cost.cache_write + engine_cost.output + summary_cost;
        let whole = price::turn_with(history_tokens, previous_whole, SYSTEM_TOKENS, calls, output);
        let whole_cost = whole.cache_read + whole.cache_write + whole.output;
        whole_overflowed |= SYSTEM_TOKENS + (history_chars + turn_chars) / 4 > args.window;
        stats.engine_all += engine_cost;
        if !whole_overflowed {
            stats.fit_turns += 1;
            stats.engine_fit += engine_cost;
            stats.whole_fit += whole_cost;
        }
        let _ = writeln!(
            csv,
            "{name},{},{t},{},{},{view_tokens},{prefix},{},{missing},{excerpts},{stubs},{},{},{},{},{},{},{},{engine_cost:.4},{history_tokens},{whole_cost:.4},{}",
            usage.name(),
            messages.len(),
            view.len(),
            u8::from(empty),
            turn_edits.edits,
            turn_edits.after_read,
            turn_edits.unseen,
            turn_edits.stubbed,
            work.calls,
            work.tokens_in,
            work.tokens_out,
            u8::from(!whole_overflowed),
        );
        if args.verbose && (empty || missing > 0) {
            eprintln!("{name} ({}) turn {t}: view of {} messages, {view_tokens} tokens; {missing} of the previous turn's {} messages missing", usage.name(), view.len(), previous_turn.len());
        }

        previous_whole = history_tokens;
        history_tokens += turn_tokens;
        history_chars += turn_chars;
        for json in &committed {
            earlier_text.push_str(json);
            earlier_text.push('\n');
        }
        history.extend(messages);
        reads.extend(new_reads);
        previous_view = assembled.messages;
        previous_turn = committed;
    }
    Ok(stats)
}

fn saving(s: &Stats) -> String {
    if s.whole_fit > 0.0 {
        format!("{:.0} %", 100.0 * (1.0 - s.engine_fit / s.whole_fit))
    } else {
        "–".into()
    }
}

fn row(name: &str, usage: &str, s: &Stats) -> String {
    format!(
        "| {name} | {usage} | {} | {} | {} | {} | {} | {} (${:.2}) | {} ({} stub) / {} / {} | {} / {} | {} | ${:.2} | ${:.2} | {} | ${:.2} |",
        s.turns,
        s.empty,
        s.previous_missing,
        s.stubs,
        s.max_view,
        s.summary_calls,
        s.summary_cost,
        s.unseen,
        s.unseen_stubbed,
        s.edits_after_read,
        s.edits,
        s.text_unseen,
        s.text_seen_before,
        s.fit_turns,
        s.engine_fit,
        s.whole_fit,
        saving(s),
        s.engine_all,
    )
}

fn run() -> Result<(), String> {
    let args = args()?;
    // Every file first: a missing session fails before any replay runs.
    let mut sessions = Vec::new();
    for name in &args.sessions {
        sessions.push((name.clone(), load(&args.dir, name)?));
    }
    let mut csv = String::from("session,usage,turn,messages,view_messages,view_tokens,prefix_tokens,empty,previous_missing,previous_excerpts,stubs,edits,edits_after_read,unseen_edits,unseen_stubbed,summary_calls,summary_in,summary_out,engine_cost,whole_tokens,whole_cost,whole_fits\n");
    println!(
        "window {}, maxOutputTokens {}, config {}; price: input $3, cache write $3.75, cache read $0.30, output $15 per M; system {} tokens",
        args.window,
        args.max_output.map_or("not passed".to_owned(), |n| n.min(args.window / 4).to_string()),
        if args.config.is_null() { "default".to_owned() } else { args.config.to_string() },
        SYSTEM_TOKENS
    );
    println!();
    println!("| session | usage | turns | empty views | prev. turn missing | stubs in views | max view | summarizer calls ($) | unseen / edits after read / edits | old text unseen / seen before | turns fit | engine $ (fit) | whole history $ (fit) | saving | engine $ (all) |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut notes = Vec::new();
    for usage in &args.usages {
        let mut total = Stats::default();
        for (name, turns) in &sessions {
            let s = replay(name, turns, *usage, &args, &mut csv)?;
            println!("{}", row(name, usage.name(), &s));
            if !s.empty_turns.is_empty() || !s.unseen_turns.is_empty() {
                notes.push(format!(
                    "{name} ({}): empty views at turns [{}]; unseen edits at turns [{}]",
                    usage.name(),
                    ranges(&s.empty_turns),
                    ranges(&s.unseen_turns)
                ));
            }
            total.add(&s);
        }
        if sessions.len() > 1 {
            println!("{}", row("**total**", usage.name(), &total));
        }
    }
    println!();
    for n in notes {
        println!("{n}");
    }
    if let Some(path) = &args.csv {
        std::fs::write(path, csv).map_err(|e| format!("{path}: {e}"))?;
        println!("per-turn rows: {path}");
    }
    Ok(())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("real_sessions: {e}");
        std::process::exit(1);
    }
}
