//! The optimistic turn on PostgreSQL (`store::claim`, `engine::claims`): a steady turn claims its
//! conversation instead of reading it under the lock, and a claim that does not hold (another
//! gateway wrote, a message or key is already stored) writes nothing and the turn runs again,
//! reading. Each test first checks that the path under test was taken (the claim was sent, or
//! refused), then that nothing was lost or duplicated.
//! Run: `bash scripts/pg-server.sh run cargo test --features postgres --test postgres claim::`.

use crate::pg;

use std::sync::{Arc, Barrier, Mutex};
use std::thread;

use lossless_wasm::core::config::Config;
use lossless_wasm::engine::{decode, CommitStatus, CommitTurnParams, Engine};
use lossless_wasm::error::Result;
use lossless_wasm::store::claim::CLAIM_SQL;
use lossless_wasm::store::native_pg::PgSql;
use lossless_wasm::store::{Dialect, Row, Sql, SqlValue};
use serde_json::{json, Value};

const KEY: &str = "agent:main:claims";

/// One statement as the engine sent it: whether it read rows (`query`), or was only named to
/// follow the next COMMIT (`read_after_commit`), its text and its values.
#[derive(Debug, Clone)]
struct Sent {
    read: bool,
    hint: bool,
    sql: String,
    params: Vec<SqlValue>,
}

/// A connection that logs every statement the engine sends through it.
struct Logged {
    inner: PgSql,
    log: Arc<Mutex<Vec<Sent>>>,
}

impl Logged {
    fn note(&self, read: bool, hint: bool, sql: &str, params: &[SqlValue]) {
        self.log.lock().unwrap().push(Sent {
            read,
            hint,
            sql: sql.to_owned(),
            params: params.to_vec(),
        });
    }
}

impl Sql for Logged {
    fn execute(&mut self, sql: &str, params: &[SqlValue]) -> Result<()> {
        self.note(false, false, sql, params);
        self.inner.execute(sql, params)
    }
    fn query(&mut self, sql: &str, params: &[SqlValue]) -> Result<Vec<Row>> {
        self.note(true, false, sql, params);
        self.inner.query(sql, params)
    }
    fn read_after_commit(&mut self, sql: &str, params: &[SqlValue]) {
        self.note(false, true, sql, params);
    }
    fn execute_script(&mut self, sql: &str) -> Result<()> {
        self.inner.execute_script(sql)
    }
    fn dialect(&self) -> Dialect {
        self.inner.dialect()
    }
}

/// A gateway on `schema` whose statements land in the returned log.
fn gateway(schema: &str) -> (Engine<Logged>, Arc<Mutex<Vec<Sent>>>) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let engine = Engine::open(
        Logged {
            inner: pg::connect(schema),
            log: log.clone(),
        },
        Config::default(),
        1,
    )
    .expect("opening the store");
    (engine, log)
}

/// What `call` sent.
fn sent_by<T>(log: &Arc<Mutex<Vec<Sent>>>, call: impl FnOnce() -> T) -> (T, Vec<Sent>) {
    let from = log.lock().unwrap().len();
    let out = call();
    let sent = log.lock().unwrap()[from..].to_vec();
    (out, sent)
}

fn claimed(sent: &[Sent]) -> usize {
    sent.iter().filter(|s| s.sql == CLAIM_SQL).count()
}

fn reads(sent: &[Sent]) -> usize {
    sent.iter().filter(|s| s.read).count()
}

fn messages(texts: &[String]) -> Vec<Value> {
    texts.iter().enumerate().map(|(i, t)| json!({"role": if i % 2 == 0 { "user" } else { "assistant" }, "content": t, "timestamp": i})).collect()
}

fn commit(session: &str, key: &str, texts: &[String]) -> CommitTurnParams {
    decode("commitTurn", json!({"sessionId": session, "sessionKey": KEY, "advancementKey": key, "messages": messages(texts)})).unwrap()
}

fn texts(turn: &str) -> Vec<String> {
    vec![format!("{turn} question"), format!("{turn} answer")]
}

/// The view `assemble` returns, as its messages' texts.
fn view<S: Sql>(engine: &mut Engine<S>) -> Vec<String> {
    let out = engine
        .assemble(
            decode(
                "assemble",
                json!({"sessionId": "s1", "sessionKey": KEY, "tokenBudget": 100_000}),
            )
            .unwrap(),
            1,
        )
        .unwrap();
    out.messages
        .iter()
        .map(|m| {
            serde_json::from_str::<Value>(m).unwrap()["content"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

fn int(sql: &mut PgSql, query: &str) -> i64 {
    sql.query_row(query, &[]).unwrap().unwrap().int(0).unwrap()
}

/// The store is consistent: `n` messages, each once, seqs and ordinals distinct, running totals
/// equal to the rows.
fn assert_consistent(schema: &str, n: i64) {
    let mut sql = pg::connect(schema);
    assert_eq!(
        int(&mut sql, "SELECT COUNT(*) FROM messages"),
        n,
        "messages stored"
    );
    assert_eq!(
        int(&mut sql, "SELECT COUNT(DISTINCT seq) FROM messages"),
        n,
        "each seq once"
    );
    assert_eq!(
        int(
            &mut sql,
            "SELECT COUNT(DISTINCT ordinal) FROM context_items WHERE message_id IS NOT NULL"
        ),
        n,
        "each item once"
    );
    assert_eq!(
        int(
            &mut sql,
            "SELECT message_count FROM conversations WHERE status = 'active'"
        ),
        n,
        "the running message total"
    );
    let tokens = int(
        &mut sql,
        "SELECT COALESCE(SUM(token_count), 0) FROM context_items",
    );
    assert_eq!(
        int(
            &mut sql,
            "SELECT context_token_count FROM conversations WHERE status = 'active'"
        ),
        tokens,
        "the running token total"
    );
}

#[test]
fn a_steady_turn_claims_its_conversation_and_reads_nothing_before_its_commit() {
    let schema = pg::fresh_schema();
    let (mut a, log) = gateway(&schema);
    let mut claims = Vec::new();
    for t in 0..4 {
        let ((), sent) = sent_by(&log, || {
            let out = a
                .commit_turn(
                    commit("s1", &format!("t{t}"), &texts(&format!("turn {t}"))),
                    10 + t,
                )
                .unwrap();
            assert_eq!(
                (out.status, out.stored_messages),
                (CommitStatus::Committed, 2),
                "turn {t}"
            );
        });
        claims.push((claimed(&sent), reads(&sent)));
        view(&mut a);
    }
    // The first turn has no picture of the conversation (it creates it); the second's comes
    // from the first turn and the read of its view. From then on: claimed, nothing read.
    assert_eq!(claims[0], (0, claims[0].1));
    assert!(claims[0].1 > 0, "the first turn reads: {claims:?}");
    for (t, c) in claims.iter().enumerate().skip(1) {
        assert_eq!(*c, (1, 0), "turn {t} claims and reads nothing: {claims:?}");
    }
    assert_consistent(&schema, 8);
    let shown = view(&mut a);
    let expected: Vec<String> = (0..4).flat_map(|t| texts(&format!("turn {t}"))).collect();
    assert!(
        shown.ends_with(&expected),
        "the view shows every turn in order: {shown:?}"
    );
}

/// What a turn names to follow its COMMIT (`read_after_commit`; the Node driver sends it in the
/// COMMIT's round trip) is exactly the statement, with the same values, that the next
/// `assemble` sends first, on the first turn (no view yet), on claims, and on a turn whose
/// claim was refused. A difference would cost a steady turn a round trip, never correctness:
/// the driver answers only an identical query from it.
#[test]
fn the_read_named_to_follow_a_turns_commit_is_the_one_assemble_sends_first() {
    let schema = pg::fresh_schema();
    let (mut a, log) = gateway(&schema);
    let (mut b, _) = gateway(&schema);
    let mut checked = 0;
    for t in 0..5 {
        if t == 3 {
            // Another gateway's turn: a's next claim is refused and its turn runs again.
            b.commit_turn(commit("s1", "b0", &texts("b 0")), 50)
                .unwrap();
        }
        let (_, sent) = sent_by(&log, || {
            a.commit_turn(
                commit("s1", &format!("a{t}"), &texts(&format!("a {t}"))),
                10 + t,
            )
            .unwrap()
        });
        let hints: Vec<&Sent> = sent.iter().filter(|s| s.hint).collect();
        assert!(
            !hints.is_empty(),
            "turn {t} named no read to follow its COMMIT: {sent:?}"
        );
        assert_eq!(
            sent.iter().position(|s| s.hint),
            Some(0),
            "turn {t}: the hint comes before the transaction begins"
        );
        let (_, assembled) = sent_by(&log, || view(&mut a));
        let first = assembled.iter().find(|s| s.read).expect("assemble reads");
        let last_hint = hints.last().unwrap();
        assert_eq!(
            (&last_hint.sql, &last_hint.params),
            (&first.sql, &first.params),
            "turn {t}"
        );
        if t == 3 {
            assert_eq!(claimed(&sent), 1, "turn 3 claimed: {sent:?}");
            assert!(
                sent.iter().any(|s| s.sql == "ROLLBACK"),
                "and was refused: {sent:?}"
            );
            assert_eq!(hints.len(), 2, "the turn run again names the read again");
        }
        checked += 1;
    }
    assert_eq!(checked, 5);
    assert_consistent(&schema, 12);
}

#[test]
fn a_claim_after_another_gateways_turn_is_refused_and_the_turn_runs_again_reading() {
    let schema = pg::fresh_schema();
    let (mut a, log) = gateway(&schema);
    let (mut b, _) = gateway(&schema);
    for t in 0..2 {
        a.commit_turn(
            commit("s1", &format!("a{t}"), &texts(&format!("a {t}"))),
            10 + t,
        )
        .unwrap();
        view(&mut a);
    }
    // Gateway b continues the conversation between a's view and a's next turn.
    let out = b
        .commit_turn(commit("s1", "b0", &texts("b 0")), 20)
        .unwrap();
    assert_eq!(out.status, CommitStatus::Committed);
    let (out, sent) = sent_by(&log, || {
        a.commit_turn(commit("s1", "a2", &texts("a 2")), 30)
            .unwrap()
    });
    assert_eq!(claimed(&sent), 1, "a claimed: {sent:?}");
    assert!(
        sent.iter().any(|s| s.sql == "ROLLBACK"),
        "the claim was refused and rolled back: {sent:?}"
    );
    assert!(reads(&sent) > 0, "then the turn read under the lock");
    assert_eq!(
        (out.status, out.stored_messages),
        (CommitStatus::Committed, 2)
    );
    assert_consistent(&schema, 8);
    let shown = view(&mut a);
    let expected: Vec<String> = ["a 0", "a 1", "b 0", "a 2"]
        .iter()
        .flat_map(|t| texts(t))
        .collect();
    assert!(
        shown.ends_with(&expected),
        "a's view shows b's turn before its own: {shown:?}"
    );
    // And a's next turn claims again.
    let (_, sent) = sent_by(&log, || {
        a.commit_turn(commit("s1", "a3", &texts("a 3")), 40)
            .unwrap()
    });
    assert_eq!((claimed(&sent), reads(&sent)), (1, 0), "{sent:?}");
    assert_consistent(&schema, 10);
}

#[test]
fn a_retried_key_on_a_claim_is_a_duplicate_that_stores_nothing() {
    let schema = pg::fresh_schema();
    let (mut a, log) = gateway(&schema);
    for t in 0..2 {
        a.commit_turn(
            commit("s1", &format!("t{t}"), &texts(&format!("turn {t}"))),
            10 + t,
        )
        .unwrap();
        view(&mut a);
    }
    let (out, sent) = sent_by(&log, || {
        a.commit_turn(commit("s1", "t1", &texts("turn 1")), 20)
            .unwrap()
    });
    assert_eq!(claimed(&sent), 1, "the retry claimed: {sent:?}");
    assert_eq!(
        (out.status, out.stored_messages, out.warning),
        (CommitStatus::Duplicate, 0, None)
    );
    // The same key with other messages: a duplicate too, with the warning. (The refused claim
    // forgot this process's picture; the next stored turn makes a new one: no claim now.)
    view(&mut a);
    let (out, sent) = sent_by(&log, || {
        a.commit_turn(commit("s1", "t1", &texts("something else")), 30)
            .unwrap()
    });
    assert_eq!(claimed(&sent), 0, "{sent:?}");
    assert_eq!(out.status, CommitStatus::Duplicate);
    assert!(out
        .warning
        .is_some_and(|w| w.contains("different messages")));
    assert_consistent(&schema, 4);
}

#[test]
fn an_after_turn_that_repeats_a_stored_message_on_a_claim_stores_only_the_new_ones() {
    let schema = pg::fresh_schema();
    let (mut a, log) = gateway(&schema);
    let all: Vec<String> = (0..3).flat_map(|t| texts(&format!("turn {t}"))).collect();
    let after_turn = |upto: usize, pre_prompt: usize| {
        decode("afterTurn", json!({"sessionId": "s1", "sessionKey": KEY, "messages": messages(&all[..upto]), "prePromptMessageCount": pre_prompt})).unwrap()
    };
    assert_eq!(a.after_turn(after_turn(2, 0), 10).unwrap(), 2);
    view(&mut a);
    assert_eq!(a.after_turn(after_turn(4, 2), 11).unwrap(), 2);
    view(&mut a);
    // The host hands over its last turn again with the new one: the claim takes none of them as
    // stored, the unique identity index refuses it, and the turn stores the two new ones.
    let (stored, sent) = sent_by(&log, || a.after_turn(after_turn(6, 2), 12).unwrap());
    assert_eq!(claimed(&sent), 1, "{sent:?}");
    assert!(
        sent.iter().any(|s| s.sql == "ROLLBACK"),
        "refused: {sent:?}"
    );
    assert_eq!(stored, 2);
    assert_consistent(&schema, 6);
    assert_eq!(view(&mut a), all);
}

#[test]
fn two_gateways_taking_turns_with_views_on_one_conversation_lose_and_duplicate_nothing() {
    let schema = pg::fresh_schema();
    const TURNS: i64 = 12;
    let start = Arc::new(Barrier::new(2));
    let threads: Vec<_> = (0..2)
        .map(|g| {
            let (schema, start) = (schema.clone(), start.clone());
            thread::spawn(move || {
                let (mut engine, log) = gateway(&schema);
                start.wait();
                for t in 0..TURNS {
                    let out = engine
                        .commit_turn(
                            commit("s1", &format!("g{g}-t{t}"), &texts(&format!("g{g} t{t}"))),
                            10 + t,
                        )
                        .expect("a turn failed");
                    assert_eq!(
                        (out.status, out.stored_messages),
                        (CommitStatus::Committed, 2)
                    );
                    let shown = view(&mut engine);
                    assert!(
                        shown.ends_with(&texts(&format!("g{g} t{t}")))
                            || shown.iter().any(|m| m == &format!("g{g} t{t} answer")),
                        "g{g} sees its turn {t}"
                    );
                }
                let sent = log.lock().unwrap().clone();
                claimed(&sent)
            })
        })
        .collect();
    let claims: Vec<usize> = threads
        .into_iter()
        .map(|t| t.join().expect("a gateway panicked"))
        .collect();
    assert!(
        claims.iter().sum::<usize>() > 0,
        "some turns claimed: {claims:?}"
    );
    assert_consistent(&schema, 4 * TURNS);
    let (mut reader, _) = gateway(&schema);
    let shown = view(&mut reader);
    for g in 0..2 {
        let own: Vec<&String> = shown
            .iter()
            .filter(|m| m.starts_with(&format!("g{g} ")))
            .collect();
        let expected: Vec<String> = (0..TURNS)
            .flat_map(|t| texts(&format!("g{g} t{t}")))
            .collect();
        assert_eq!(
            own,
            expected.iter().collect::<Vec<_>>(),
            "gateway {g}'s turns, each once, in order"
        );
    }
}
