//! Several writers on one PostgreSQL store (issue 24): two real connections, in two threads,
//! race on one conversation as two gateways would. Nothing may be lost or duplicated, and a
//! compaction may never be applied over items another writer changed meanwhile.
//! Run: `bash scripts/pg-server.sh run cargo test --features postgres --test postgres concurrency::`.

use crate::pg;

use std::sync::{Arc, Barrier};
use std::thread;

use lossless_wasm::core::config::Config;
use lossless_wasm::engine::{decode, CommitStatus, CommitTurnParams, Engine};
use lossless_wasm::error::Error;
use lossless_wasm::store::compaction::{self, NewSummary, Range};
use lossless_wasm::store::native_pg::PgSql;
use lossless_wasm::store::{Sql, WriteTx};
use serde_json::json;

const KEY: &str = "agent:main:shared";

fn turn(advancement: &str, texts: &[String]) -> CommitTurnParams {
    let messages: Vec<_> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| json!({"role": "user", "content": t, "timestamp": i}))
        .collect();
    decode("commitTurn", json!({"sessionId": "s1", "sessionKey": KEY, "advancementKey": advancement, "messages": messages})).unwrap()
}

fn int(sql: &mut PgSql, query: &str) -> i64 {
    sql.query_row(query, &[]).unwrap().unwrap().int(0).unwrap()
}

/// Returns once backend `pid` waits for a lock (`pg_stat_activity`), as seen from `watcher`;
/// fails with `what` after 20 s.
fn wait_for_lock_wait(watcher: &mut PgSql, pid: i64, what: &str) {
    let waiting = format!(
        "SELECT COUNT(*) FROM pg_stat_activity WHERE pid = {pid} AND wait_event_type = 'Lock'"
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while int(watcher, &waiting) == 0 {
        assert!(std::time::Instant::now() < deadline, "{what}");
        thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Runs `work(gateway)` for gateways 0 and 1 at once, each with its own engine on `schema`.
fn two_gateways<T: Send + 'static>(
    schema: &str,
    work: impl Fn(usize, &mut Engine<PgSql>) -> T + Send + Sync + 'static,
) -> Vec<T> {
    let work = Arc::new(work);
    let start = Arc::new(Barrier::new(2));
    let threads: Vec<_> = (0..2)
        .map(|gateway| {
            let (schema, work, start) = (schema.to_owned(), work.clone(), start.clone());
            thread::spawn(move || {
                let mut engine = Engine::open(pg::connect(&schema), Config::default(), 1)
                    .expect("opening the store");
                start.wait();
                work(gateway, &mut engine)
            })
        })
        .collect();
    threads
        .into_iter()
        .map(|t| t.join().expect("a gateway thread panicked"))
        .collect()
}

#[test]
fn two_gateways_appending_to_one_conversation_lose_and_duplicate_nothing() {
    let schema = pg::fresh_schema();
    const TURNS: usize = 15;
    let results = two_gateways(&schema, |gateway, engine| {
        (0..TURNS)
            .map(|t| {
                let texts = vec![
                    format!("gateway {gateway} turn {t} question"),
                    format!("gateway {gateway} turn {t} detail"),
                ];
                engine
                    .commit_turn(turn(&format!("g{gateway}-t{t}"), &texts), 10 + t as i64)
                    .expect("a turn failed")
                    .stored_messages
            })
            .sum::<usize>()
    });
    assert_eq!(
        results,
        [2 * TURNS, 2 * TURNS],
        "every turn of both gateways was stored"
    );
    let mut sql = pg::connect(&schema);
    assert_eq!(
        int(&mut sql, "SELECT COUNT(*) FROM conversations"),
        1,
        "one conversation for the key, created once"
    );
    assert_eq!(
        int(&mut sql, "SELECT COUNT(*) FROM messages"),
        4 * TURNS as i64
    );
    assert_eq!(
        int(
            &mut sql,
            "SELECT COUNT(DISTINCT seq) FROM messages WHERE seq BETWEEN 1 AND 60"
        ),
        4 * TURNS as i64,
        "seqs 1..n, each once"
    );
    assert_eq!(
        int(
            &mut sql,
            "SELECT COUNT(DISTINCT ordinal) FROM context_items WHERE message_id IS NOT NULL"
        ),
        4 * TURNS as i64
    );
    assert_eq!(
        int(&mut sql, "SELECT message_count FROM conversations"),
        4 * TURNS as i64,
        "the running total counts every message"
    );
    let tokens = int(
        &mut sql,
        "SELECT COALESCE(SUM(token_count), 0) FROM context_items",
    );
    assert_eq!(
        int(&mut sql, "SELECT context_token_count FROM conversations"),
        tokens,
        "the running token total matches the items"
    );
}

#[test]
fn the_same_turn_committed_on_two_gateways_at_once_is_stored_once() {
    let schema = pg::fresh_schema();
    let results = two_gateways(&schema, |_, engine| {
        let texts = vec![
            "the retried turn".to_owned(),
            "its second message".to_owned(),
        ];
        engine
            .commit_turn(turn("retried-turn", &texts), 5)
            .expect("the commit failed")
            .status
    });
    assert!(
        results.contains(&CommitStatus::Committed),
        "one gateway committed: {results:?}"
    );
    assert!(
        results.contains(&CommitStatus::Duplicate),
        "the other saw the first commit: {results:?}"
    );
    let mut sql = pg::connect(&schema);
    assert_eq!(int(&mut sql, "SELECT COUNT(*) FROM messages"), 2);
    assert_eq!(int(&mut sql, "SELECT COUNT(*) FROM turn_advancements"), 1);
}

#[test]
fn a_compaction_racing_another_over_the_same_items_is_refused_not_applied() {
    let schema = pg::fresh_schema();
    let mut engine = Engine::open(pg::connect(&schema), Config::default(), 1).unwrap();
    let texts: Vec<String> = (0..4)
        .map(|i| format!("message number {i} to summarize"))
        .collect();
    engine.commit_turn(turn("t1", &texts), 2).unwrap();
    let sql = engine.sql();
    let conversation = int(sql, "SELECT id FROM conversations");
    let ids: Vec<i64> = sql
        .query(
            "SELECT message_id FROM context_items ORDER BY ordinal LIMIT 3",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.int(0).unwrap())
        .collect();
    let (first, last) = (
        int(sql, "SELECT MIN(ordinal) FROM context_items"),
        int(sql, "SELECT MIN(ordinal) + 2 FROM context_items"),
    );
    assert_eq!(ids.len(), 3, "the range to summarize exists");

    // Both gateways planned a summary of the same three messages; each applies it in its own
    // transaction. The first holds its transaction open while the second tries.
    let applied_first = Arc::new(Barrier::new(2));
    let threads: Vec<_> = (0..2)
        .map(|gateway| {
            let (schema, ids, applied_first) = (schema.clone(), ids.clone(), applied_first.clone());
            thread::spawn(move || {
                let mut sql = pg::connect(&schema);
                if gateway == 1 {
                    applied_first.wait();
                }
                let mut tx = WriteTx::begin(&mut sql).unwrap();
                let content = format!("summary written by gateway {gateway}");
                let summary = NewSummary {
                    conversation_id: conversation,
                    kind: "leaf",
                    depth: 0,
                    content: &content,
                    tokens: 5,
                    earliest_at: None,
                    latest_at: None,
                    descendant_messages: 3,
                    descendant_summaries: 0,
                    source_tokens: 30,
                    summarizer: "test",
                    model: None,
                    level: "normal",
                };
                let range = Range {
                    first_ordinal: first,
                    last_ordinal: last,
                    ids: &ids,
                    summaries: false,
                };
                let outcome = compaction::apply(&mut tx, &range, &summary, |_| 5, 3);
                if gateway == 0 {
                    applied_first.wait();
                    // Gateway 1 is now waiting for this transaction (or about to): commit late.
                    thread::sleep(std::time::Duration::from_millis(300));
                }
                // Committed when it went through; dropped, so rolled back, when it did not.
                if outcome.is_ok() {
                    tx.commit().unwrap();
                }
                outcome.map(|(id, _)| id)
            })
        })
        .collect();
    let outcomes: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    assert!(
        outcomes[0].is_ok(),
        "the first apply went through: {:?}",
        outcomes[0]
    );
    assert!(
        matches!(outcomes[1], Err(Error::Stale(_))),
        "the second found the items changed: {:?}",
        outcomes[1]
    );
    let sql = engine.sql();
    assert_eq!(
        int(sql, "SELECT COUNT(*) FROM summaries"),
        1,
        "one summary, not two"
    );
    assert_eq!(
        int(sql, "SELECT COUNT(*) FROM context_items"),
        2,
        "three messages became one summary; the fourth stays"
    );
    assert_eq!(int(sql, "SELECT COUNT(*) FROM summary_messages"), 3);
    let tokens = int(
        sql,
        "SELECT COALESCE(SUM(token_count), 0) FROM context_items",
    );
    assert_eq!(
        int(sql, "SELECT context_token_count FROM conversations"),
        tokens,
        "the running total was adjusted once"
    );
}

#[test]
fn two_gateways_creating_different_conversations_write_in_parallel_with_distinct_ids() {
    let schema = pg::fresh_schema();
    let results = two_gateways(&schema, |gateway, engine| {
        let mut stored = 0;
        for t in 0..10 {
            let messages = vec![
                json!({"role": "user", "content": format!("conversation {gateway} turn {t}"), "timestamp": t}),
            ];
            let params = decode("commitTurn", json!({"sessionId": "s", "sessionKey": format!("agent:main:{gateway}"), "advancementKey": format!("{gateway}-{t}"), "messages": messages})).unwrap();
            stored += engine.commit_turn(params, t).unwrap().stored_messages;
        }
        stored
    });
    assert_eq!(results, [10, 10]);
    let mut sql = pg::connect(&schema);
    assert_eq!(
        int(&mut sql, "SELECT COUNT(DISTINCT id) FROM messages"),
        20,
        "ids from the sequence never collide"
    );
    assert_eq!(int(&mut sql, "SELECT COUNT(*) FROM conversations"), 2);
    assert_eq!(int(&mut sql, "SELECT COUNT(*) FROM (SELECT conversation_id FROM messages GROUP BY conversation_id HAVING MAX(seq) = 10 AND COUNT(*) = 10) AS complete"), 2);
}

/// Both gateways pass the host's same snapshot to `afterTurn` at once, turn after turn: one
/// stores the new messages, the other waits for its lock and must then find them stored (the
/// lock statement's own answer about stored identities is stale after such a wait) and skip
/// them, without an error and without a duplicate.
#[test]
fn the_same_after_turn_on_two_gateways_at_once_stores_each_message_once_and_fails_neither() {
    let schema = pg::fresh_schema();
    const TURNS: usize = 12;
    // The schema first: two gateways creating it at once would race on its name.
    drop(pg::connect(&schema));
    let round = Arc::new(Barrier::new(2));
    let results = two_gateways(&schema, move |_, engine| {
        let mut messages = Vec::new();
        let mut stored = 0;
        for t in 0..TURNS {
            messages.push(json!({"role": "user", "content": format!("turn {t} question"), "timestamp": 2 * t}));
            messages.push(json!({"role": "assistant", "content": [{"type": "text", "text": format!("turn {t} answer")}], "timestamp": 2 * t + 1}));
            let params = decode("afterTurn", json!({"sessionId": "s1", "sessionKey": KEY, "messages": messages, "prePromptMessageCount": messages.len() - 2})).unwrap();
            round.wait();
            stored += engine
                .after_turn(params, 10 + t as i64)
                .expect("an afterTurn failed");
        }
        stored
    });
    assert_eq!(
        results.iter().sum::<usize>(),
        2 * TURNS,
        "every message stored by exactly one gateway: {results:?}"
    );
    let mut sql = pg::connect(&schema);
    assert_eq!(
        int(&mut sql, "SELECT COUNT(*) FROM messages"),
        2 * TURNS as i64
    );
    assert_eq!(
        int(
            &mut sql,
            "SELECT COUNT(DISTINCT seq) FROM messages WHERE seq BETWEEN 1 AND 24"
        ),
        2 * TURNS as i64,
        "seqs 1..n, each once"
    );
    assert_eq!(int(&mut sql, "SELECT COUNT(*) FROM context_items ci JOIN messages m ON m.id = ci.message_id AND m.seq = ci.ordinal"), 2 * TURNS as i64, "each item names its own message");
    assert_eq!(
        int(&mut sql, "SELECT message_count FROM conversations"),
        2 * TURNS as i64
    );
}

/// Gateways opening one new store at the same moment: every one opens it (creating its schema
/// and applying its migrations once), none fails on the catalog's unique index.
#[test]
fn gateways_opening_a_new_store_at_once_all_open_it() {
    const ROUNDS: usize = 5;
    for _ in 0..ROUNDS {
        let schema = pg::fresh_schema();
        const GATEWAYS: usize = 6;
        let start = Arc::new(Barrier::new(GATEWAYS));
        let threads: Vec<_> = (0..GATEWAYS)
            .map(|_| {
                let (schema, start) = (schema.clone(), start.clone());
                thread::spawn(move || {
                    start.wait();
                    let sql =
                        PgSql::connect_in_schema(&pg::url(), &schema).map_err(|e| e.to_string())?;
                    Engine::open(sql, Config::default(), 1)
                        .map(|_| ())
                        .map_err(|e| e.to_string())
                })
            })
            .collect();
        let outcomes: Vec<Result<(), String>> = threads
            .into_iter()
            .map(|t| t.join().expect("a gateway thread panicked"))
            .collect();
        assert!(outcomes.iter().all(Result::is_ok), "{outcomes:?}");
        let mut sql = pg::connect(&schema);
        assert_eq!(
            int(&mut sql, "SELECT COUNT(*) FROM conversations"),
            0,
            "the store is there, empty"
        );
    }
}

/// A turn's stub pass takes the context items it considers from the statement that locks the
/// conversation (`resolve_for_append`), not from a read after the append. When that statement
/// waited for another gateway's uncommitted turn, its subqueries still see the snapshot from
/// before the wait, without that turn's items: it must then return none (the pass reads), never
/// the stale list. Whatever it returns is what a read under the lock finds.
#[test]
fn the_items_sent_with_the_lock_are_never_older_than_a_turn_the_lock_waited_for() {
    use lossless_wasm::core::message::parse_messages;
    use lossless_wasm::store::{bulk, conversations, masking};
    let schema = pg::fresh_schema();
    let mut first =
        Engine::open(pg::connect(&schema), Config::default(), 1).expect("opening the store");
    let opening = vec![
        json!({"role": "user", "content": "the first question", "timestamp": 1}),
        json!({"role": "assistant", "content": [{"type": "text", "text": "the first answer"}], "timestamp": 2}),
    ];
    first.after_turn(decode("afterTurn", json!({"sessionId": "s1", "sessionKey": KEY, "messages": opening, "prePromptMessageCount": 0})).unwrap(), 10).unwrap();
    // Gateway B: its turn appended, the row held, not committed yet.
    let mut b = pg::connect(&schema);
    let mut b = WriteTx::begin(&mut b).unwrap();
    let held = conversations::resolve(b.sql(), KEY, "s1", 20).unwrap();
    let b_turn = parse_messages(&[json!({"role": "user", "content": "b's question", "timestamp": 3}), json!({"role": "assistant", "content": [{"type": "text", "text": "b's answer"}], "timestamp": 4})], 0).unwrap();
    assert_eq!(
        bulk::append_any(&mut b, &held, &b_turn, 20)
            .unwrap()
            .inserted,
        2
    );
    // Gateway A's lock statement waits for B's row lock.
    let mut a = pg::connect(&schema);
    let a_pid = int(&mut a, "SELECT pg_backend_pid()");
    let waiter = thread::spawn(move || {
        a.execute("BEGIN", &[]).unwrap();
        let a_turn = parse_messages(
            &[json!({"role": "user", "content": "a's question", "timestamp": 5})],
            0,
        )
        .unwrap();
        let locked = lossless_wasm::store::lock_before_append::resolve_for_append(
            &mut a, KEY, "s1", &a_turn, 100, None, 30,
        )
        .unwrap();
        let read = masking::scan(
            &mut a,
            locked.conversation.id,
            locked.conversation.stubbed_through,
            100,
        )
        .unwrap();
        a.execute("ROLLBACK", &[]).unwrap();
        (locked, read)
    });
    let mut watcher = pg::connect(&schema);
    wait_for_lock_wait(&mut watcher, a_pid, "gateway A never waited for B's lock");
    b.commit().unwrap();
    let (locked, read) = waiter.join().expect("gateway A panicked");
    assert_eq!(
        locked.conversation.message_count, 4,
        "the row as B committed it"
    );
    assert_eq!(
        read.0.len(),
        4,
        "a read under the lock finds both turns' items: {read:?}"
    );
    assert_eq!(
        locked.unstubbed, None,
        "the items from before the wait are not passed on as current"
    );
    assert_eq!(locked.stored, None, "nor are the identities");
    // Without a writer to wait for, the same statement returns exactly what the read finds.
    let mut a = pg::connect(&schema);
    a.execute("BEGIN", &[]).unwrap();
    let a_turn = parse_messages(
        &[json!({"role": "user", "content": "a's question", "timestamp": 5})],
        0,
    )
    .unwrap();
    let locked = lossless_wasm::store::lock_before_append::resolve_for_append(
        &mut a, KEY, "s1", &a_turn, 100, None, 40,
    )
    .unwrap();
    let read = masking::scan(
        &mut a,
        locked.conversation.id,
        locked.conversation.stubbed_through,
        100,
    )
    .unwrap();
    a.execute("ROLLBACK", &[]).unwrap();
    assert_eq!(
        locked.unstubbed,
        Some(read),
        "uncontended, the lock's items are the stored ones"
    );
}

/// A retried turn whose key another gateway commits while this gateway's commit waits: the
/// other holds the conversation's row with the same turn appended and its key recorded, not
/// committed yet. When it took the key's advisory lock (as every `commitTurn` does), this commit
/// waits at that lock; when it did not, at the lock statement, whose snapshot then predates the
/// other's commit (the key's lookup rides in it: `advancements::lock_for_commit`). Either way
/// the commit must report `duplicate` and store nothing twice.
fn a_key_committed_while_the_commit_waited_is_seen(other_takes_the_key_lock: bool) {
    use lossless_wasm::core::message::parse_messages;
    use lossless_wasm::store::{advancements, bulk, conversations};
    let schema = pg::fresh_schema();
    let mut a =
        Engine::open(pg::connect(&schema), Config::default(), 1).expect("opening the store");
    let opening = vec![
        "the first question".to_owned(),
        "the first answer".to_owned(),
    ];
    assert_eq!(
        a.commit_turn(turn("t1", &opening), 10)
            .unwrap()
            .stored_messages,
        2
    );
    let retried = vec!["the retried question".to_owned(), "its answer".to_owned()];
    // Gateway B: the retried turn appended and its key recorded, the row held, not committed.
    let mut b = pg::connect(&schema);
    let mut b = WriteTx::begin(&mut b).unwrap();
    if other_takes_the_key_lock {
        advancements::lock_key(b.sql(), "t2").unwrap();
    }
    let held = conversations::resolve(b.sql(), KEY, "s1", 20).unwrap();
    let params = turn("t2", &retried);
    let b_turn = parse_messages(&params.messages, 0).unwrap();
    assert_eq!(
        bulk::append_any(&mut b, &held, &b_turn, 20)
            .unwrap()
            .inserted,
        2
    );
    advancements::record(&mut b, "t2", held.id, "b's payload", 2, 20).unwrap();
    // Gateway A commits the same turn and waits for B.
    let a_pid = int(a.sql(), "SELECT pg_backend_pid()");
    let waiter = thread::spawn(move || a.commit_turn(turn("t2", &retried), 30));
    let mut watcher = pg::connect(&schema);
    wait_for_lock_wait(&mut watcher, a_pid, "gateway A never waited for B");
    b.commit().unwrap();
    let outcome = waiter
        .join()
        .expect("gateway A panicked")
        .expect("the retried commit failed");
    assert_eq!(
        (outcome.status, outcome.stored_messages),
        (CommitStatus::Duplicate, 0),
        "{outcome:?}"
    );
    assert!(
        outcome.warning.is_some(),
        "B recorded another payload: the first commit is kept, with a warning"
    );
    let mut sql = pg::connect(&schema);
    assert_eq!(
        int(&mut sql, "SELECT COUNT(*) FROM messages"),
        4,
        "the retried turn stored once"
    );
    assert_eq!(int(&mut sql, "SELECT COUNT(*) FROM turn_advancements"), 2);
    assert_eq!(int(&mut sql, "SELECT message_count FROM conversations"), 4);
}

#[test]
fn a_key_another_gateway_committed_while_the_lock_statement_waited_is_a_duplicate() {
    a_key_committed_while_the_commit_waited_is_seen(false);
}

#[test]
fn a_key_another_gateway_committed_while_its_key_lock_was_awaited_is_a_duplicate() {
    a_key_committed_while_the_commit_waited_is_seen(true);
}

/// Uncontended, the statement that locks the conversation answers for the key itself: recorded
/// or not, and with the recorded payload hash.
#[test]
fn the_lock_statement_answers_for_the_advancement_key_when_nothing_was_waited_for() {
    use lossless_wasm::core::message::parse_messages;
    let schema = pg::fresh_schema();
    let mut engine =
        Engine::open(pg::connect(&schema), Config::default(), 1).expect("opening the store");
    engine
        .commit_turn(
            turn("t1", &["a question".to_owned(), "an answer".to_owned()]),
            10,
        )
        .unwrap();
    let recorded = int(
        engine.sql(),
        "SELECT COUNT(*) FROM turn_advancements WHERE advancement_key = 't1'",
    );
    assert_eq!(recorded, 1);
    let mut sql = pg::connect(&schema);
    let next = parse_messages(&turn("t2", &["next question".to_owned()]).messages, 0).unwrap();
    let mut ask = |key: &str| {
        sql.execute("BEGIN", &[]).unwrap();
        let locked = lossless_wasm::store::lock_before_append::lock_for_append(
            &mut sql,
            KEY,
            "s1",
            &next,
            10,
            Some(key),
        )
        .unwrap()
        .expect("the conversation is there");
        sql.execute("ROLLBACK", &[]).unwrap();
        locked
    };
    let hash = ask("t1")
        .recorded
        .expect("current")
        .expect("t1 is recorded");
    assert_eq!(hash.len(), 32, "a payload hash: {hash}");
    assert_eq!(ask("t2").recorded, Some(None), "t2 is not");
    assert_eq!(
        ask("t2").host_facts_json.map(|j| j.is_some()),
        Some(true),
        "the row's facts come along"
    );
}

/// Two gateways asking for the same conversation's summary: the request is claimed under the
/// conversation's row lock (`summary_runs::load_for_update`). Another gateway has recorded its
/// leased request, not committed yet, while this gateway's job starts: the job's claim waits for
/// that transaction and then finds the lease — it asks for nothing and leaves the other's record
/// as it is (a plain read would have found no request in flight, asked, and overwritten it).
#[test]
fn a_summary_request_recorded_while_another_gateway_claims_one_is_seen_not_overwritten() {
    use lossless_wasm::engine::compaction::CompactionStep;
    let schema = pg::fresh_schema();
    let config = Config::from_json(&json!({"freshTailCount": 4, "leafChunkTokens": 1000, "leafBudgetHeadroomFactor": 0, "leafSkipReductionThreshold": 0})).unwrap();
    let mut a = Engine::open(pg::connect(&schema), config, 1).expect("opening the store");
    a.assemble(
        decode(
            "assemble",
            json!({"sessionId": "s1", "sessionKey": KEY, "tokenBudget": 50_000}),
        )
        .unwrap(),
        1,
    )
    .unwrap();
    for t in 0..12 {
        let texts = vec![
            format!(
                "Request {t}: the harbour log number {t} {}",
                "detail ".repeat(40)
            ),
            format!("Log {t} read: {}", "the tide was high ".repeat(20)),
        ];
        a.commit_turn(turn(&format!("t{t}"), &texts), 10_000 + t * 10)
            .unwrap();
    }
    let id = int(a.sql(), "SELECT id FROM conversations");
    // Gateway B: its leased request recorded under the row lock, not committed yet.
    let mut b = pg::connect(&schema);
    b.execute("BEGIN", &[]).unwrap();
    b.query_row(
        "SELECT id FROM conversations WHERE id = ?1 FOR UPDATE",
        &[id.into()],
    )
    .unwrap();
    let theirs = r#"{"outstanding":{"runner":"gateway-b","sinceMs":20000,"leaseUntilMs":40000},"abandoned":0}"#;
    b.execute(
        "UPDATE conversations SET summary_runs_json = ?2 WHERE id = ?1",
        &[id.into(), theirs.into()],
    )
    .unwrap();
    // Gateway A (a long-lived process) starts a job that would ask.
    let a_pid = int(a.sql(), "SELECT pg_backend_pid()");
    let waiter = thread::spawn(move || {
        let params = json!({"sessionId": "s1", "sessionKey": KEY, "mode": "pending", "summarizer": "host", "runner": "gateway-a", "runnerTurns": 2});
        let step = a.compaction_start(decode("compactionStart", params).unwrap(), 21_000);
        (step, a)
    });
    let mut watcher = pg::connect(&schema);
    wait_for_lock_wait(
        &mut watcher,
        a_pid,
        "gateway A never waited for B's row lock",
    );
    b.execute("COMMIT", &[]).unwrap();
    let (step, _a) = waiter.join().expect("gateway A panicked");
    match step.expect("the job failed") {
        CompactionStep::Done(report) => assert!(
            report.reason.contains("being written by another process"),
            "{report:?}"
        ),
        CompactionStep::NeedSummary(request) => panic!(
            "gateway A asked (job {}) although B's leased request was recorded",
            request.job_id
        ),
    }
    let runs: serde_json::Value = serde_json::from_str(
        &watcher
            .query_row("SELECT summary_runs_json FROM conversations", &[])
            .unwrap()
            .unwrap()
            .text(0)
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        runs["outstanding"]["runner"], "gateway-b",
        "B's request stays recorded: {runs}"
    );
}
