//! The native PostgreSQL driver never waits without end (`store::native_pg::PgTimeouts`): a
//! server that accepts and stays silent, a lock another connection holds, a statement that runs
//! too long — each ends in an error naming what happened, the password never in it, and the
//! connection (or the next one) works afterwards. On the test server `scripts/pg-server.sh run`
//! starts: `bash scripts/pg-server.sh run cargo test --features postgres --test postgres timeouts::`.

use crate::pg;

use std::net::TcpListener;
use std::time::Duration;

use lossless_wasm::store::native_pg::{PgSql, PgTimeouts};
use lossless_wasm::store::Sql;

fn short(lock_ms: u64, statement_ms: u64) -> PgTimeouts {
    PgTimeouts {
        connect: Duration::from_secs(10),
        lock: Duration::from_millis(lock_ms),
        statement: Duration::from_millis(statement_ms),
    }
}

fn setting(sql: &mut PgSql, name: &str) -> String {
    sql.query_row(&format!("SHOW {name}"), &[])
        .unwrap()
        .unwrap()
        .text(0)
        .unwrap()
}

#[test]
fn a_server_that_accepts_and_stays_silent_is_given_up_after_the_connect_timeout() {
    // The kernel completes the TCP handshake for the listener's backlog; nothing ever answers
    // the start-up message.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let url = format!("postgres://lcm:s3cret-pw@127.0.0.1:{port}/lcm");
    let timeouts = PgTimeouts {
        connect: Duration::from_millis(300),
        ..PgTimeouts::default()
    };
    let err = PgSql::connect_with(&url, timeouts)
        .err()
        .expect("a silent server must not give a connection")
        .to_string();
    assert!(err.contains("no answer within 300 ms"), "{err}");
    assert!(
        err.contains(&format!("postgres://lcm:***@127.0.0.1:{port}/lcm")),
        "the error names the server: {err}"
    );
    assert!(
        !err.contains("s3cret-pw"),
        "the password is in the error: {err}"
    );
    drop(silent);
}

#[test]
fn a_bad_connection_string_is_refused_without_its_password() {
    let err = PgSql::connect("postgres://lcm:s3cret-pw@127.0.0.1:notaport/lcm")
        .err()
        .expect("a bad port must be refused")
        .to_string();
    assert!(err.contains("invalid connection string"), "{err}");
    assert!(
        !err.contains("s3cret-pw"),
        "the password is in the error: {err}"
    );
}

#[test]
fn the_default_timeouts_reach_the_server() {
    let mut sql = pg::connect(&pg::fresh_schema());
    assert_eq!(setting(&mut sql, "lock_timeout"), "30s");
    assert_eq!(setting(&mut sql, "statement_timeout"), "90s");
    let mut tuned =
        PgSql::connect_in_schema_with(&pg::url(), &pg::fresh_schema(), short(250, 4_000)).unwrap();
    assert_eq!(setting(&mut tuned, "lock_timeout"), "250ms");
    assert_eq!(setting(&mut tuned, "statement_timeout"), "4s");
}

#[test]
fn a_lock_held_elsewhere_fails_after_the_lock_timeout_and_the_connection_works_on() {
    let schema = pg::fresh_schema();
    let mut holder = pg::connect(&schema);
    holder.execute_script("CREATE TABLE held (id integer PRIMARY KEY, n integer NOT NULL); INSERT INTO held VALUES (1, 0);").unwrap();
    holder
        .execute_script("BEGIN; SELECT n FROM held WHERE id = 1 FOR UPDATE;")
        .unwrap();
    let mut waiter =
        PgSql::connect_in_schema_with(&pg::url(), &schema, short(200, 10_000)).unwrap();
    let err = waiter
        .execute("UPDATE held SET n = n + 1 WHERE id = 1", &[])
        .expect_err("the row is locked: the update must fail")
        .to_string();
    assert!(
        err.contains("55P03") && err.contains("lock timeout"),
        "{err}"
    );
    holder.execute_script("COMMIT;").unwrap();
    waiter
        .execute("UPDATE held SET n = n + 1 WHERE id = 1", &[])
        .unwrap();
    let n = waiter
        .query_row("SELECT n FROM held WHERE id = 1", &[])
        .unwrap()
        .unwrap()
        .int(0)
        .unwrap();
    assert_eq!(
        n, 1,
        "the failed update changed nothing; the one after the lock was released did"
    );
}

#[test]
fn a_statement_running_past_its_timeout_is_cancelled_and_the_connection_works_on() {
    let mut sql =
        PgSql::connect_in_schema_with(&pg::url(), &pg::fresh_schema(), short(200, 300)).unwrap();
    let err = sql
        .query("SELECT pg_sleep(30)", &[])
        .expect_err("a 30 s sleep must be cancelled")
        .to_string();
    assert!(
        err.contains("57014") && err.contains("statement timeout"),
        "{err}"
    );
    assert_eq!(
        sql.query_row("SELECT 41 + 1", &[])
            .unwrap()
            .unwrap()
            .int(0)
            .unwrap(),
        42
    );
}
