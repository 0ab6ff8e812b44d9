// The slow-summarizer tests (hand-over, leases, the successor standing by), shared by
// slow_summarizer_native.rs (SQLite) and slow_summarizer_pg.rs (PostgreSQL): each defines `Db`
// (the connection type) and `reopen_db(path)` (the store named `path`, opened as one more process
// would open it) and includes this file.
use lossless_wasm::core::config::Config;
use lossless_wasm::engine::compaction::{CompactionReport, CompactionStep, SummaryRequest};
use lossless_wasm::engine::*;
use lossless_wasm::store::Sql;
use serde_json::{json, Value};

const KEY: &str = "agent:main:slow";

fn config(extra: Value) -> Config {
    let mut base = json!({"freshTailCount": 4, "leafChunkTokens": 1000, "leafBudgetHeadroomFactor": 0, "leafSkipReductionThreshold": 0,
                          "backoffBaseMs": 1000, "backoffMaxMs": 8000, "summaryTurnWaitMs": 1000, "summaryCatchUpTurns": 2});
    if let (Some(b), Some(e)) = (base.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            b.insert(k.clone(), v.clone());
        }
    }
    Config::from_json(&base).unwrap()
}

/// A store of its own for one test, named by a file path; engines opened on it stand for
/// processes (on PostgreSQL, connections to the schema named after the path).
struct Store(std::path::PathBuf);

impl Store {
    fn new(name: &str) -> Store {
        let dir = std::env::temp_dir().join(format!("lossless-wasm-slow-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Store(dir.join("db.sqlite"))
    }

    fn process(&self) -> Engine<Db> {
        self.process_with(json!({}))
    }

    fn process_with(&self, extra: Value) -> Engine<Db> {
        Engine::open(reopen_db(self.0.to_str().unwrap()), config(extra), 0).unwrap()
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        if let Some(dir) = self.0.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

fn count(e: &mut Engine<Db>, q: &str) -> i64 {
    e.sql().query_row(q, &[]).unwrap().unwrap().int(0).unwrap()
}

fn text(e: &mut Engine<Db>, q: &str) -> Option<String> {
    e.sql().query_row(q, &[]).unwrap().and_then(|r| r.opt_text(0).unwrap())
}

/// Commits turns `first..first + turns`: a request and a reply each.
fn fill(e: &mut Engine<Db>, first: usize, turns: usize) {
    for t in first..first + turns {
        let ts = (t * 10) as i64;
        let messages = vec![
            json!({"role": "user", "content": format!("Request {t}: look at the harbour log number {t} {}", "detail ".repeat(40)), "timestamp": ts}),
            json!({"role": "assistant", "content": [{"type": "text", "text": format!("Log {t} read: {}", "the tide was high ".repeat(20))}], "timestamp": ts + 1}),
        ];
        let p = decode("commitTurn", json!({"sessionId": "s", "sessionKey": KEY, "advancementKey": format!("t{t}"), "messages": messages})).unwrap();
        e.commit_turn(p, 10_000 + ts).unwrap();
    }
}

fn assemble(e: &mut Engine<Db>, budget: u32) -> AssembleResult {
    e.assemble(decode("assemble", json!({"sessionId": "s", "sessionKey": KEY, "tokenBudget": budget})).unwrap(), 1).unwrap()
}

fn start(e: &mut Engine<Db>, mode: &str, extra: Value, now: i64) -> CompactionStep {
    let mut p = json!({"sessionId": "s", "sessionKey": KEY, "mode": mode, "summarizer": "host"});
    if let (Some(b), Some(x)) = (p.as_object_mut(), extra.as_object()) {
        for (k, v) in x {
            b.insert(k.clone(), v.clone());
        }
    }
    e.compaction_start(decode("compactionStart", p).unwrap(), now).unwrap()
}

fn answer(e: &mut Engine<Db>, request: &SummaryRequest, now: i64) -> CompactionStep {
    let reply = json!({"jobId": request.job_id, "text": "## Goal\n- read the harbour logs\n## Progress\n- logs read and noted", "model": "slow-1"});
    e.compaction_continue(decode("compactionContinue", reply).unwrap(), now).unwrap()
}

/// Answers every request until the job ends.
fn finish(e: &mut Engine<Db>, mut step: CompactionStep, now: i64) -> CompactionReport {
    loop {
        match step {
            CompactionStep::Done(report) => return report,
            CompactionStep::NeedSummary(request) => step = answer(e, &request, now),
        }
    }
}

fn request(step: CompactionStep) -> SummaryRequest {
    match step {
        CompactionStep::NeedSummary(request) => request,
        CompactionStep::Done(report) => panic!("expected a summary request, the job ended: {report:?}"),
    }
}

fn done(step: CompactionStep) -> CompactionReport {
    match step {
        CompactionStep::Done(report) => report,
        CompactionStep::NeedSummary(request) => panic!("expected no summary request, got one (job {})", request.job_id),
    }
}

/// A conversation with compaction due (the trigger recorded pending work).
fn due(e: &mut Engine<Db>) {
    assemble(e, 50_000);
    fill(e, 0, 12);
    assert!(count(e, "SELECT COUNT(*) FROM compaction_events WHERE pass = 'trigger' AND outcome = 'triggered'") >= 1, "compaction is due");
}

#[test]
fn a_call_the_turn_waits_on_is_held_for_the_turn_wait_a_background_call_until_the_answer() {
    let db = Store::new("hold");
    let mut e = db.process();
    due(&mut e);
    let waiting = request(start(&mut e, "pending", json!({"turnWaits": true, "runner": "p1"}), 20_000));
    assert_eq!((waiting.hold_ms, waiting.catch_up), (Some(1000), false));
    let report = finish(&mut e, CompactionStep::NeedSummary(waiting), 21_000);
    assert!(report.compacted, "{report:?}");
    fill(&mut e, 12, 12);
    let background = request(start(&mut e, "pending", json!({"turnWaits": false, "runner": "p1"}), 30_000));
    assert_eq!((background.hold_ms, background.catch_up), (None, false));
    // Callers that say nothing (embedders, the library) are not held either.
    let _ = finish(&mut e, CompactionStep::NeedSummary(background), 31_000);
    fill(&mut e, 24, 12);
    let unsaid = request(start(&mut e, "pending", json!({}), 40_000));
    assert_eq!(unsaid.hold_ms, None);
}

#[test]
fn while_a_summary_is_in_flight_no_second_is_asked_and_a_forced_compact_shrinks_the_view_instead() {
    let db = Store::new("in-flight");
    let mut e = db.process();
    due(&mut e);
    let first = request(start(&mut e, "pending", json!({"turnWaits": true, "runner": "p1"}), 20_000));
    // The maintenance before the next turn finds it still being written: it asks for nothing.
    let maintain = done(start(&mut e, "pending", json!({"turnWaits": true, "runner": "p1"}), 21_000));
    assert!(maintain.ok && !maintain.compacted, "{maintain:?}");
    assert!(maintain.reason.contains("still being written"), "{}", maintain.reason);
    // The host's preflight compact() must get the prompt under its target now: the view shrinks.
    let view_before = assemble(&mut e, 4000).messages.len();
    let forced = done(start(&mut e, "sweep", json!({"turnWaits": true, "runner": "p1", "force": true, "tokenBudget": 4000, "contextWindow": 4000, "currentTokenCount": 3600}), 22_000));
    assert!(forced.ok && forced.compacted, "the view shrank: {forced:?}");
    assert!(forced.reason.contains("still being written"), "{}", forced.reason);
    assert_eq!(forced.summary_ids, Vec::<i64>::new(), "no summary without an answer");
    assert!(assemble(&mut e, 4000).messages.len() < view_before, "the next view is smaller");
    // The answer arrives later and is applied.
    let step = answer(&mut e, &first, 30_000);
    let report = finish(&mut e, step, 30_000);
    assert!(report.compacted && !report.summary_ids.is_empty(), "{report:?}");
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM summaries"), report.summary_ids.len() as i64);
    assert_eq!(count(&mut e, "SELECT COUNT(*) FROM messages"), 24, "every message is kept");
}

#[test]
fn requests_a_process_left_unanswered_stop_new_ones_until_a_catch_up_turn_waits_for_one() {
    let db = Store::new("catch-up");
    let due_turns = {
        let mut p1 = db.process();
        due(&mut p1);
        let asked = request(start(&mut p1, "pending", json!({"turnWaits": false, "runner": "p1"}), 20_000));
        assert_eq!(asked.hold_ms, None);
        // The process exits before the summarizer answers.
        count(&mut p1, "SELECT COUNT(*) FROM compaction_events WHERE pass = 'trigger' AND outcome = 'triggered'")
    };
    // A catch-up two due turns from now.
    let catch_up_turns = json!({"summaryCatchUpTurns": due_turns + 2});
    let mut p2 = db.process_with(catch_up_turns.clone());
    assemble(&mut p2, 50_000);
    fill(&mut p2, 12, 1);
    // (After p1's lease ran out unrenewed: p1 is gone.)
    let refrained = done(start(&mut p2, "pending", json!({"turnWaits": true, "runner": "p2"}), 45_000));
    assert!(refrained.ok && !refrained.compacted, "{refrained:?}");
    assert!(refrained.reason.contains("end unanswered (1 in a row"), "{}", refrained.reason);
    let runs: Value = serde_json::from_str(&text(&mut p2, "SELECT summary_runs_json FROM conversations").unwrap()).unwrap();
    assert_eq!((runs["abandoned"].as_u64(), runs["outstanding"].is_null()), (Some(1), true), "{runs}");
    // Its background maintenance sends nothing either: it would be lost the same way.
    let background = done(start(&mut p2, "pending", json!({"turnWaits": false, "runner": "p2"}), 46_000));
    assert!(background.reason.contains("end unanswered"), "{}", background.reason);
    assert_eq!(count(&mut p2, "SELECT COUNT(*) FROM summaries"), 0);
    drop(p2);

    // summaryCatchUpTurns turns on which compaction was due and nothing was stored: the next
    // call the turn waits on waits for one summary.
    let mut p3 = db.process_with(catch_up_turns.clone());
    assemble(&mut p3, 50_000);
    fill(&mut p3, 13, 1);
    // (The host's preflight compact(): a sweep that would take several summaries.)
    let catch_up = request(start(&mut p3, "sweep", json!({"turnWaits": true, "runner": "p3", "force": true, "tokenBudget": 1500}), 50_000));
    assert_eq!((catch_up.hold_ms, catch_up.catch_up), (None, true));
    let step = answer(&mut p3, &catch_up, 65_000);
    assert_eq!(count(&mut p3, "SELECT COUNT(*) FROM summaries"), 1, "the catch-up summary is stored");
    // It asks for that one only: another request would be lost with the process.
    let report = done(step);
    assert!(report.reason.contains("waits for the next catch-up"), "{}", report.reason);
    assert_eq!(report.summary_ids.len(), 1);
    let runs: Value = serde_json::from_str(&text(&mut p3, "SELECT summary_runs_json FROM conversations").unwrap()).unwrap();
    assert_eq!(runs["abandoned"].as_u64(), Some(1), "a catch-up's answer says nothing about answers nobody waits for: {runs}");
    drop(p3);
    // The next process refrains again.
    let mut p4 = db.process_with(catch_up_turns.clone());
    assemble(&mut p4, 50_000);
    fill(&mut p4, 14, 1);
    let again = done(start(&mut p4, "pending", json!({"turnWaits": true, "runner": "p4", "runnerTurns": 1}), 70_000));
    assert!(again.reason.contains("end unanswered"), "{}", again.reason);
    // A process that has stored more than one turn (a gateway) lives long enough for its answers.
    fill(&mut p4, 15, 1);
    let normal = request(start(&mut p4, "pending", json!({"turnWaits": true, "runner": "p4", "runnerTurns": 2}), 80_000));
    assert_eq!((normal.hold_ms, normal.catch_up), (Some(1000), false));
}

#[test]
fn a_caller_that_records_no_requests_is_never_stopped_by_lost_ones() {
    let db = Store::new("no-runner");
    {
        let mut p1 = db.process();
        due(&mut p1);
        let _ = request(start(&mut p1, "pending", json!({"runner": "p1"}), 20_000));
    }
    let mut p2 = db.process();
    assemble(&mut p2, 50_000);
    fill(&mut p2, 12, 1);
    // An embedder's call (no runner id): it asks, and waits for the answer.
    let asked = request(start(&mut p2, "pending", json!({}), 30_000));
    assert_eq!((asked.hold_ms, asked.catch_up), (None, false));
}

#[test]
fn catch_up_turns_zero_never_holds_a_turn_for_a_summary() {
    let db = Store::new("no-catch-up");
    {
        let mut p1 = db.process();
        due(&mut p1);
        let _ = request(start(&mut p1, "pending", json!({"runner": "p1"}), 20_000));
    }
    // One process per turn, as `openclaw agent --local` runs them.
    for t in 12..20 {
        let mut next = db.process_with(json!({"summaryCatchUpTurns": 0}));
        assemble(&mut next, 50_000);
        fill(&mut next, t, 1);
        // (Each after p1's lease ran out: p1 is gone.)
        let report = done(start(&mut next, "pending", json!({"turnWaits": true, "runner": format!("p{t}")}), 45_000 + t as i64));
        assert!(report.reason.contains("summaryCatchUpTurns 0"), "{}", report.reason);
    }
}

#[test]
fn an_answer_that_arrives_after_another_process_summarized_its_range_is_replanned_never_applied_over_it() {
    let db = Store::new("stale");
    let mut slow = db.process();
    due(&mut slow);
    // The slow process asks; its answer takes long.
    let late = request(start(&mut slow, "pending", json!({"turnWaits": false, "runner": "slow"}), 20_000));
    // Meanwhile another process stores a turn and catches up (it takes the unanswered request,
    // whose lease ran out unrenewed, for lost): it summarizes the same oldest messages.
    let mut other = db.process_with(json!({"summaryCatchUpTurns": 1}));
    assemble(&mut other, 50_000);
    fill(&mut other, 12, 1);
    let caught = request(start(&mut other, "pending", json!({"turnWaits": true, "runner": "other"}), 41_000));
    assert!(caught.catch_up);
    let report = finish(&mut other, CompactionStep::NeedSummary(caught), 42_000);
    assert!(report.compacted, "{report:?}");
    let stored = count(&mut other, "SELECT COUNT(*) FROM summaries");
    // The slow answer arrives: checked against what changed, logged, replanned.
    let step = answer(&mut slow, &late, 50_000);
    let _ = finish(&mut slow, step, 50_000);
    assert!(
        count(&mut slow, "SELECT COUNT(*) FROM compaction_events WHERE outcome = 'skipped' AND reason LIKE '%context changed%'") >= 1,
        "the stale plan was logged and not applied"
    );
    let covered_twice = count(&mut slow, "SELECT COUNT(*) FROM (SELECT sm.message_id FROM summary_messages sm JOIN summaries s ON s.id = sm.summary_id WHERE s.depth = 0 GROUP BY sm.message_id HAVING COUNT(*) > 1) AS covered");
    assert_eq!(covered_twice, 0, "no message is under two leaf summaries ({stored} stored before the late answer)");
    assert_eq!(count(&mut slow, "SELECT COUNT(*) FROM messages"), 26, "every message is kept");
    let in_context = count(&mut slow, "SELECT COUNT(*) FROM context_items ci JOIN summaries s ON s.id = ci.summary_id");
    assert!(in_context >= 1, "the view holds the summaries");
}

#[test]
fn a_request_another_live_process_keeps_leased_is_not_asked_again_and_one_whose_lease_ran_out_is() {
    let db = Store::new("lease");
    let mut a = db.process();
    due(&mut a);
    // Gateway A asks; its answer takes long, and A renews the request's lease while it waits.
    let slow = request(start(&mut a, "pending", json!({"turnWaits": false, "runner": "gateway-a", "runnerTurns": 2}), 20_000));
    assert!(a.compaction_renew(slow.job_id, 35_000).unwrap(), "the lease of a request out is renewed");
    // Gateway B, on the same store, 30 s after A asked (past the first lease, within the renewed
    // one): it asks for nothing, so the summary is paid for once.
    let mut b = db.process();
    assemble(&mut b, 50_000);
    fill(&mut b, 12, 1);
    let held = done(start(&mut b, "pending", json!({"turnWaits": false, "runner": "gateway-b", "runnerTurns": 2}), 50_000));
    assert!(held.reason.contains("being written by another process (asked 30 s ago)"), "{}", held.reason);
    let runs: Value = serde_json::from_str(&text(&mut b, "SELECT summary_runs_json FROM conversations").unwrap()).unwrap();
    assert_eq!((runs["outstanding"]["runner"].as_str(), runs["abandoned"].as_u64()), (Some("gateway-a"), Some(0)), "{runs}");
    // A dies without renewing again: once its lease ran out, B asks.
    let asked = request(start(&mut b, "pending", json!({"turnWaits": false, "runner": "gateway-b", "runnerTurns": 2}), 56_000));
    assert_eq!(asked.hold_ms, None);
    assert!(!a.compaction_renew(slow.job_id, 57_000).unwrap(), "A's request is no longer the one in flight: nothing to renew");
    let report = finish(&mut b, CompactionStep::NeedSummary(asked), 60_000);
    assert!(report.compacted && !report.summary_ids.is_empty(), "{report:?}");
}

#[test]
fn a_one_shot_process_hands_summaries_it_cannot_await_to_a_successor_and_no_turn_waits() {
    let db = Store::new("successor");
    // The first one-shot process asks, and exits before the answer.
    {
        let mut p1 = db.process();
        due(&mut p1);
        let _ = request(start(&mut p1, "pending", json!({"turnWaits": false, "runner": "p1", "canHandOver": true}), 20_000));
    }
    // The next one (after p1's lease ran out): compaction is due again; it hands the summaries over
    // instead of asking or waiting (a catch-up would be due at once: summaryCatchUpTurns 2 here).
    let mut p2 = db.process();
    assemble(&mut p2, 50_000);
    fill(&mut p2, 12, 2);
    let handed = done(start(&mut p2, "pending", json!({"turnWaits": true, "runner": "p2", "canHandOver": true}), 45_000));
    assert!(handed.hand_over && handed.ok && handed.summary_ids.is_empty(), "{handed:?}");
    assert!(handed.reason.contains("successor process writes"), "{}", handed.reason);
    let pending = |e: &mut Engine<Db>| text(e, "SELECT compaction_pending_json FROM conversations").is_some();
    assert!(pending(&mut p2), "the pending work is left for the successor");
    // Until the successor asks, no second one is started.
    let again = done(start(&mut p2, "pending", json!({"turnWaits": true, "runner": "p2", "canHandOver": true}), 46_000));
    assert!(!again.hand_over && again.reason.contains("handed to a successor process 1 s ago"), "{again:?}");
    drop(p2);
    // The successor: it asks without a hold and waits for every answer.
    let mut successor = db.process();
    let first = request(start(&mut successor, "pending", json!({"runner": "succ", "successor": true}), 47_000));
    assert_eq!((first.hold_ms, first.catch_up), (None, false));
    // A one-shot turn meanwhile sees the successor's lease: it neither asks nor waits nor hands over.
    let mut p3 = db.process();
    let meanwhile = done(start(&mut p3, "pending", json!({"turnWaits": true, "runner": "p3", "canHandOver": true}), 48_000));
    assert!(!meanwhile.hand_over && meanwhile.reason.contains("being written by another process"), "{meanwhile:?}");
    let report = finish(&mut successor, CompactionStep::NeedSummary(first), 70_000);
    assert!(report.compacted && !report.summary_ids.is_empty(), "{report:?}");
    assert!(!pending(&mut successor), "the successor finished the pending work");
    let runs: Value = serde_json::from_str(&text(&mut successor, "SELECT summary_runs_json FROM conversations").unwrap()).unwrap();
    assert_eq!((runs["abandoned"].as_u64(), runs["outstanding"].is_null(), runs["handedOverAtMs"].is_null()), (Some(1), true, true), "{runs}");
    assert_eq!(count(&mut successor, "SELECT COUNT(*) FROM messages"), 28, "every message is kept");
    // The successor's answers do not show that answers arrive in one-shot processes: the next
    // one hands over again rather than sending a request that would be lost.
    fill(&mut p3, 14, 4);
    let next = done(start(&mut p3, "pending", json!({"turnWaits": true, "runner": "p3", "canHandOver": true}), 80_000));
    assert!(next.hand_over, "{next:?}");
}

#[test]
fn a_gateway_restarted_after_a_crash_asks_itself_where_a_one_shot_process_would_hand_over() {
    let db = Store::new("gateway-restart");
    // The gateway that crashed: its request ends unanswered when its lease runs out.
    {
        let mut dead = db.process();
        due(&mut dead);
        let _ = request(start(&mut dead, "pending", json!({"turnWaits": false, "runner": "gw-1", "canHandOver": true, "outlivesTurns": true}), 20_000));
    }
    // The restarted gateway, at its first turn: the dead one's request counts as abandoned, yet it
    // asks (in the background) instead of starting a successor process.
    let mut restarted = db.process();
    assemble(&mut restarted, 50_000);
    fill(&mut restarted, 12, 2);
    let asked = request(start(&mut restarted, "pending", json!({"turnWaits": false, "runner": "gw-2", "canHandOver": true, "outlivesTurns": true}), 45_000));
    assert_eq!((asked.hold_ms, asked.catch_up), (None, false));
    let runs: Value = serde_json::from_str(&text(&mut restarted, "SELECT summary_runs_json FROM conversations").unwrap()).unwrap();
    assert_eq!((runs["abandoned"].as_u64(), runs["handedOverAtMs"].is_null()), (Some(1), true), "counted, and nothing handed over: {runs}");
    let report = finish(&mut restarted, CompactionStep::NeedSummary(asked), 50_000);
    assert!(report.compacted && !report.summary_ids.is_empty() && !report.hand_over, "{report:?}");
    // Without `outlivesTurns` the same first turn hands over, as a one-shot process must.
    let db = Store::new("one-shot-restart");
    {
        let mut dead = db.process();
        due(&mut dead);
        let _ = request(start(&mut dead, "pending", json!({"turnWaits": false, "runner": "p-1", "canHandOver": true}), 20_000));
    }
    let mut next = db.process();
    assemble(&mut next, 50_000);
    fill(&mut next, 12, 2);
    assert!(done(start(&mut next, "pending", json!({"turnWaits": false, "runner": "p-2", "canHandOver": true}), 45_000)).hand_over);
}

#[test]
fn a_process_that_ends_with_its_turn_hands_over_its_first_request_and_the_successor_writes_it() {
    let db = Store::new("one-shot-first");
    let one_shot = |runner: &str| json!({"turnWaits": false, "runner": runner, "canHandOver": true, "endsWithTurn": true});
    let mut p1 = db.process();
    due(&mut p1);
    // The conversation's first request: nothing is lost yet, and still none is sent from here.
    let handed = done(start(&mut p1, "pending", one_shot("p1"), 20_000));
    assert!(handed.hand_over && handed.ok && handed.summary_ids.is_empty(), "{handed:?}");
    assert!(handed.reason.contains("ends with its turn"), "{}", handed.reason);
    assert!(text(&mut p1, "SELECT compaction_pending_json FROM conversations").is_some(), "the pending work is left for the successor");
    let runs: Value = serde_json::from_str(&text(&mut p1, "SELECT summary_runs_json FROM conversations").unwrap()).unwrap();
    assert_eq!((runs["abandoned"].as_u64(), runs["outstanding"].is_null(), runs["handedOverAtMs"].as_i64()), (Some(0), true, Some(20_000)), "{runs}");
    drop(p1);
    // The next one-shot turn, before the successor asked: no request, no second successor.
    let mut p2 = db.process();
    fill(&mut p2, 12, 2);
    let next = done(start(&mut p2, "pending", one_shot("p2"), 23_000));
    assert!(!next.hand_over && next.reason.contains("handed to a successor process 3 s ago"), "{next:?}");
    drop(p2);
    // The successor writes the summaries.
    let mut successor = db.process();
    let first = start(&mut successor, "pending", json!({"runner": "succ", "successor": true}), 25_000);
    let written = finish(&mut successor, first, 50_000);
    assert!(written.compacted && !written.summary_ids.is_empty(), "{written:?}");
    assert!(text(&mut successor, "SELECT compaction_pending_json FROM conversations").is_none(), "the successor finished the pending work");
    assert_eq!(count(&mut successor, "SELECT COUNT(*) FROM messages"), 28, "every message is kept");
    // A later one-shot turn whose compaction is due hands over again (the successor has exited).
    fill(&mut successor, 14, 4);
    let again = done(start(&mut successor, "pending", one_shot("p3"), 90_000));
    assert!(again.hand_over, "{again:?}");
}

#[test]
fn a_successor_standing_by_takes_the_next_turns_work_and_no_turn_starts_another() {
    use lossless_wasm::engine::compaction::SuccessorStandby;
    let db = Store::new("standby");
    let one_shot = |runner: &str| json!({"turnWaits": false, "runner": runner, "canHandOver": true, "endsWithTurn": true});
    let standby = |standing: bool| -> SuccessorStandby { decode("successorStandby", json!({"sessionId": "s", "sessionKey": KEY, "standing": standing})).unwrap() };
    let mut p1 = db.process();
    due(&mut p1);
    assert!(done(start(&mut p1, "pending", one_shot("p1"), 20_000)).hand_over);
    drop(p1);
    let mut successor = db.process();
    let first = start(&mut successor, "pending", json!({"runner": "succ", "successor": true}), 24_000);
    assert!(finish(&mut successor, first, 30_000).compacted);
    // Done with what was pending, it stands by: nothing to do yet, and the mark is down.
    assert!(!successor.successor_standby(&standby(true), 31_000).unwrap(), "nothing pending");
    let runs: Value = serde_json::from_str(&text(&mut successor, "SELECT summary_runs_json FROM conversations").unwrap()).unwrap();
    assert_eq!(runs["handedOverAtMs"].as_i64(), Some(31_000), "{runs}");
    // The next one-shot turn: compaction is due again, and it neither asks nor starts a successor.
    let mut p2 = db.process();
    fill(&mut p2, 12, 6);
    let refrained = done(start(&mut p2, "pending", one_shot("p2"), 33_000));
    assert!(!refrained.hand_over && refrained.reason.contains("handed to a successor process 2 s ago"), "{refrained:?}");
    drop(p2);
    // The standing successor finds the work and writes it.
    assert!(successor.successor_standby(&standby(true), 34_000).unwrap(), "the turn's work is pending");
    let next = start(&mut successor, "pending", json!({"runner": "succ", "successor": true}), 34_001);
    let written = finish(&mut successor, next, 40_000);
    assert!(written.compacted && !written.summary_ids.is_empty(), "{written:?}");
    // Its run took the mark down (a successor that asks answers the hand-over); the next poll
    // puts it up, polls within the refresh interval write nothing, a later one renews it.
    let mark = |e: &mut Engine<Db>| serde_json::from_str::<Value>(&text(e, "SELECT summary_runs_json FROM conversations").unwrap()).unwrap()["handedOverAtMs"].as_i64();
    assert_eq!(mark(&mut successor), None);
    assert!(!successor.successor_standby(&standby(true), 41_000).unwrap());
    assert!(!successor.successor_standby(&standby(true), 45_000).unwrap());
    assert_eq!(mark(&mut successor), Some(41_000), "not rewritten within 10 s");
    assert!(!successor.successor_standby(&standby(true), 51_500).unwrap());
    assert_eq!(mark(&mut successor), Some(51_500), "renewed after 10 s");
    // It leaves (its mark now older than the refresh interval): the mark is cleared, and the
    // next turn with work hands over anew.
    assert!(!successor.successor_standby(&standby(false), 80_000).unwrap());
    assert_eq!(mark(&mut successor), None);
    fill(&mut successor, 18, 6);
    let mut p3 = db.process();
    assert!(done(start(&mut p3, "pending", one_shot("p3"), 81_000)).hand_over, "a new successor is started");
    assert_eq!(count(&mut p3, "SELECT COUNT(*) FROM messages"), 48, "every message is kept");
    // Unknown sessions: nothing to stand by for.
    let other: SuccessorStandby = decode("successorStandby", json!({"sessionId": "x", "sessionKey": "agent:main:nobody", "standing": true})).unwrap();
    assert!(!p3.successor_standby(&other, 82_000).unwrap());
}

#[test]
fn a_job_whose_next_request_finds_another_process_asking_meanwhile_asks_for_nothing_more() {
    let db = Store::new("lease-between-passes");
    let mut a = db.process();
    due(&mut a);
    // A, at its first turn (no lease), starts a sweep that takes several passes.
    let first = request(start(&mut a, "sweep", json!({"runner": "process-a", "force": true, "tokenBudget": 1500}), 20_000));
    // Meanwhile gateway B takes A's unleased request for lost and asks, leased.
    let mut b = db.process();
    let b_asked = request(start(&mut b, "pending", json!({"runner": "gateway-b", "runnerTurns": 2}), 20_500));
    assert_eq!(b_asked.hold_ms, None);
    // A's answer arrives: stored; A's next request finds B's lease and is not sent.
    let reply = json!({"jobId": first.job_id, "text": "## Goal\n- read the harbour logs\n## Progress\n- logs read and noted", "model": "slow-1"});
    let report = done(a.compaction_continue(decode("compactionContinue", reply).unwrap(), 21_000).unwrap());
    assert!(report.reason.contains("being written by another process"), "{}", report.reason);
    assert_eq!(report.summary_ids.len(), 1, "A's answer is stored");
    let runs: Value = serde_json::from_str(&text(&mut a, "SELECT summary_runs_json FROM conversations").unwrap()).unwrap();
    assert_eq!(runs["outstanding"]["runner"].as_str(), Some("gateway-b"), "A's answer leaves B's request on record: {runs}");
}
