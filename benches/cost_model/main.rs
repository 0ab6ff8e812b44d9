//! The cost benchmark of issue 23: a 200-turn tool-heavy coding session ([`session`]) replayed
//! through the engine at a 128K window, with a summarizer that answers every request at its
//! target size, priced under the prompt-cache model in [`price`]. A benchmark, not a test: it
//! prints numbers (docs/summarization.md, "Cost model") and asserts nothing about them.
//!
//! Per turn it measures the view's tokens, the prefix the view shares with the previous turn's
//! (whole messages, compared byte for byte), and the summarizer's tokens in and out; and it
//! checks that every message of the previous turn is in the view exactly as committed.
//!
//! Run: `cargo bench --bench cost_model` (options after `--`: `--turns N`, `--system N` for
//! always-cached host tokens per call, `--csv FILE` for the per-turn numbers, `--config JSON`
//! for engine config keys, e.g. `'{"toolOutputStubs": false}'`).

mod price;
#[path = "../shared/replay.rs"]
mod replay;
mod session;

use lossless_wasm::core::config::Config;
use lossless_wasm::engine::{decode, Engine};
use lossless_wasm::store::native::NativeSql;
use lossless_wasm::store::Sql;
use replay::tokens_of;
use serde_json::{json, Value};

const WINDOW: u64 = 128_000;
const KEY: &str = "agent:main:cost";

struct Args {
    turns: usize,
    system: u64,
    csv: Option<String>,
    config: Value,
}

fn args() -> Args {
    let mut out = Args {
        turns: 200,
        system: 0,
        csv: None,
        config: Value::Null,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--turns" => out.turns = it.next().and_then(|v| v.parse().ok()).unwrap_or(200),
            "--system" => out.system = it.next().and_then(|v| v.parse().ok()).unwrap_or(0),
            "--csv" => out.csv = it.next(),
            "--config" => {
                out.config = it
                    .next()
                    .and_then(|v| serde_json::from_str(&v).ok())
                    .expect("--config takes a JSON object")
            }
            _ => {}
        }
    }
    out
}

struct Totals {
    view: u64,
    prefix: u64,
    summary_in: u64,
    summary_out: u64,
    summary_calls: u64,
    leaf_in: u64,
    cost: price::TurnCost,
    summary_cost: f64,
    previous_turn_broken: usize,
    previous_turn_excerpts: usize,
    stubs_in_view: u64,
    max_view: u64,
    message_tokens: u64,
    messages: usize,
}

fn main() {
    let args = args();
    let mut engine = Engine::open(
        NativeSql::in_memory().expect("in-memory SQLite"),
        Config::from_json(&args.config).expect("config"),
        0,
    )
    .expect("engine");
    let mut session = session::Session::new(23);
    let mut previous_view: Vec<String> = Vec::new();
    let mut previous_turn: Vec<String> = Vec::new();
    let mut totals = Totals {
        view: 0,
        prefix: 0,
        summary_in: 0,
        summary_out: 0,
        summary_calls: 0,
        leaf_in: 0,
        cost: Default::default(),
        summary_cost: 0.0,
        previous_turn_broken: 0,
        previous_turn_excerpts: 0,
        stubs_in_view: 0,
        max_view: 0,
        message_tokens: 0,
        messages: 0,
    };
    let mut csv = String::from("turn,view_tokens,prefix_tokens,turn_tokens,summary_in,summary_out,turn_cost,summary_cost\n");
    let mut now = 1_750_000_000_000i64;
    for t in 0..args.turns {
        let turn = session.turn(t);
        now += 60_000;
        let assembled = engine
            .assemble(decode("assemble", json!({"sessionId": "s", "sessionKey": KEY, "tokenBudget": WINDOW, "prompt": turn.prompt})).expect("params"), now)
            .expect("assemble");
        let (view, prefix) = replay::view_and_cached_prefix(&assembled.messages, &previous_view);
        // The previous turn's messages, each in the view as committed, or (a huge one) as its excerpt.
        let (broken, excerpted) = replay::previous_turn_gaps(&previous_turn, &assembled.messages);
        totals.previous_turn_excerpts += excerpted;
        if broken > 0 {
            totals.previous_turn_broken += 1;
            eprintln!("turn {t}: {broken} of the previous turn's {} messages are not in the view as committed", previous_turn.len());
        }
        totals.stubs_in_view += assembled
            .messages
            .iter()
            .filter(|m| m.contains("[tool output stored:"))
            .count() as u64;
        let turn_json: Vec<String> = turn.messages.iter().map(Value::to_string).collect();
        let turn_tokens: u64 = turn_json.iter().map(|m| tokens_of(m)).sum();
        totals.message_tokens += turn_tokens;
        totals.messages += turn_json.len();
        let commit = json!({"sessionId": "s", "sessionKey": KEY, "advancementKey": format!("turn-{t}"), "messages": turn.messages, "modelContextWindow": WINDOW});
        engine
            .commit_turn(decode("commitTurn", commit).expect("params"), now + 1)
            .expect("commitTurn");
        // maintain: run the pending compaction with the "host LLM".
        let work = replay::run_pending(&mut engine, "s", KEY, totals.summary_calls, now + 2)
            .expect("compaction");
        let (tin, tout) = (work.tokens_in, work.tokens_out);
        totals.leaf_in += work.leaf_in;
        totals.summary_calls += work.calls;
        let cost = price::turn(view, prefix, args.system);
        let summary_cost = price::summaries(tin, tout);
        csv.push_str(&format!(
            "{t},{view},{prefix},{turn_tokens},{tin},{tout},{:.4},{summary_cost:.4}\n",
            cost.cache_read + cost.cache_write + cost.output
        ));
        totals.view += view;
        totals.max_view = totals.max_view.max(view);
        totals.prefix += prefix;
        totals.summary_in += tin;
        totals.summary_out += tout;
        totals.summary_cost += summary_cost;
        totals.cost.cache_read += cost.cache_read;
        totals.cost.cache_write += cost.cache_write;
        totals.cost.output += cost.output;
        totals.cost.read_tokens += cost.read_tokens;
        totals.cost.write_tokens += cost.write_tokens;
        previous_view = assembled.messages;
        previous_turn = turn_json;
    }
    let n = args.turns.max(1) as u64;
    let covered = engine
        .sql()
        .query_row("SELECT COUNT(*), COALESCE(SUM(m.token_count), 0) FROM summary_messages sm JOIN messages m ON m.id = sm.message_id", &[])
        .expect("query")
        .expect("a row");
    let (covered_messages, covered_tokens) =
        (covered.int(0).expect("count"), covered.int(1).expect("sum"));
    let model = totals.cost.cache_read + totals.cost.cache_write + totals.cost.output;
    println!(
        "session: {} turns, {} messages, {} tokens",
        args.turns, totals.messages, totals.message_tokens
    );
    println!("price model: input $3, cache write $3.75, cache read $0.30, output $15 per M; {} calls/turn, {} reply tokens/call, system {} tokens", price::CALLS_PER_TURN, price::REPLY_TOKENS, args.system);
    println!(
        "view: average {} tokens, max {}; cached prefix average {} tokens",
        totals.view / n,
        totals.max_view,
        totals.prefix / n
    );
    println!(
        "cache hit share (read / (read + write)): {:.3}",
        totals.cost.read_tokens as f64
            / (totals.cost.read_tokens + totals.cost.write_tokens).max(1) as f64
    );
    println!(
        "summarizer: {} calls, {} tokens in, {} tokens out",
        totals.summary_calls, totals.summary_in, totals.summary_out
    );
    println!(
        "leaf summaries: {covered_messages} messages of {covered_tokens} stored tokens summarized; leaf prompts {} tokens ({:.2} per stored token)",
        totals.leaf_in,
        totals.leaf_in as f64 / covered_tokens.max(1) as f64
    );
    println!(
        "stub lines in views (summed over turns): {}",
        totals.stubs_in_view
    );
    println!("turns whose view lacked part of the previous turn: {}; previous-turn messages shown as excerpts (huge): {}", totals.previous_turn_broken, totals.previous_turn_excerpts);
    println!(
        "cost: ${:.2} total = model ${model:.2} (cache read ${:.2}, cache write ${:.2}, output ${:.2}) + summaries ${:.2}",
        model + totals.summary_cost,
        totals.cost.cache_read,
        totals.cost.cache_write,
        totals.cost.output,
        totals.summary_cost
    );
    if let Some(path) = args.csv {
        std::fs::write(&path, csv).expect("write the csv");
        println!("per-turn numbers: {path}");
    }
}
