//! Faults on a PostgreSQL store (issue 24, item 4, as far as the native store goes): a gateway
//! whose connection dies in the middle of a turn's transaction, and a server that cannot be
//! reached. Acknowledged turns survive, nothing is half-applied, the next gateway's turn works,
//! and no error shows the password.
//! Run: `bash scripts/pg-server.sh run cargo test --features postgres --test postgres faults::`.

use crate::pg;

use lossless_wasm::core::config::Config;
use lossless_wasm::engine::{decode, CommitTurnParams, Engine};
use lossless_wasm::store::native_pg::PgSql;
use lossless_wasm::store::{conversations, messages, Sql, WriteTx};
use serde_json::json;

fn turn(key: &str, text: &str) -> CommitTurnParams {
    decode("commitTurn", json!({"sessionId": "s1", "sessionKey": "agent:main:f", "advancementKey": key, "messages": [{"role": "user", "content": text, "timestamp": 1}]})).unwrap()
}

fn int(sql: &mut PgSql, query: &str) -> i64 {
    sql.query_row(query, &[]).unwrap().unwrap().int(0).unwrap()
}

#[test]
fn a_connection_killed_mid_transaction_leaves_nothing_half_written_and_the_next_gateway_continues()
{
    let schema = pg::fresh_schema();
    let mut first = Engine::open(pg::connect(&schema), Config::default(), 1).unwrap();
    first
        .commit_turn(turn("t1", "an acknowledged turn"), 2)
        .unwrap();

    // A second turn, half written: its message is inserted inside an open transaction (holding
    // the conversation's row lock) when the server ends the connection.
    let mut tx = WriteTx::begin(first.sql()).unwrap();
    let conversation = conversations::resolve(tx.sql(), "agent:main:f", "s1", 3).unwrap();
    let half = lossless_wasm::core::message::parse_message(
        &json!({"role": "user", "content": "a half-written turn", "timestamp": 3}),
        "m",
    )
    .unwrap();
    let appended = messages::append(&mut tx, &conversation, &[half], 3).unwrap();
    assert_eq!(
        appended.inserted, 1,
        "the half turn's message was written inside the transaction"
    );
    let backend = int(tx.sql(), "SELECT pg_backend_pid()");
    let mut killer = pg::connect(&schema);
    assert_eq!(
        int(
            &mut killer,
            &format!("SELECT CAST(pg_terminate_backend({backend}) AS int)")
        ),
        1,
        "the first gateway's connection was ended"
    );
    // Dropped uncommitted: its rollback fails on the ended connection, as the turn after it does.
    drop(tx);
    let after = first.commit_turn(turn("t3", "on a dead connection"), 4);
    assert!(
        after.is_err(),
        "a turn on the dead connection fails instead of pretending: {after:?}"
    );

    // Another gateway (a new connection): the acknowledged turn is there, the half one is not,
    // the dead connection's row lock is gone, and its turns go on.
    let mut next = Engine::open(pg::connect(&schema), Config::default(), 5).unwrap();
    let sql = next.sql();
    assert_eq!(
        int(sql, "SELECT COUNT(*) FROM messages"),
        1,
        "only the acknowledged turn's message"
    );
    assert_eq!(int(sql, "SELECT message_count FROM conversations"), 1);
    let stored = next
        .commit_turn(turn("t4", "the next turn works"), 6)
        .unwrap();
    assert_eq!(stored.stored_messages, 1);
    assert_eq!(
        int(next.sql(), "SELECT MAX(seq) FROM messages"),
        2,
        "numbering continues without a gap"
    );
}

#[test]
fn an_unreachable_server_is_one_clear_error_without_the_password() {
    // A loopback port nothing listens on: bind one, then let it go.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgres://lcm:very-secret-pw@127.0.0.1:{port}/lcm?connect_timeout=2");
    let err = PgSql::connect(&url)
        .err()
        .expect("connecting to a closed port fails")
        .to_string();
    assert!(
        err.contains("cannot connect to PostgreSQL at postgres://lcm:***@127.0.0.1"),
        "{err}"
    );
    assert!(
        !err.contains("very-secret-pw"),
        "the password leaked: {err}"
    );
    assert_eq!(err.lines().count(), 1, "one line: {err}");
}
