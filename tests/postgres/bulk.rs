//! Bulk appends on PostgreSQL (`store::bulk_pg`): a bootstrap of a long history writes the same
//! rows as the same messages appended one turn at a time, with ids from the sequence.
//! Run: `bash scripts/pg-server.sh run cargo test --features postgres --test postgres bulk::`.

use crate::pg;

use lossless_wasm::core::config::Config;
use lossless_wasm::engine::{decode, Engine};
use lossless_wasm::error::Result;
use lossless_wasm::store::native_pg::PgSql;
use lossless_wasm::store::{Dialect, Row, Sql, SqlValue};
use serde_json::{json, Value};

/// A connection that counts the statements it runs (each one a round trip with this driver).
struct Counted {
    inner: PgSql,
    statements: usize,
}

impl Sql for Counted {
    fn execute(&mut self, sql: &str, params: &[SqlValue]) -> Result<()> {
        self.statements += 1;
        self.inner.execute(sql, params)
    }
    fn query(&mut self, sql: &str, params: &[SqlValue]) -> Result<Vec<Row>> {
        self.statements += 1;
        self.inner.query(sql, params)
    }
    fn execute_script(&mut self, sql: &str) -> Result<()> {
        self.statements += 1;
        self.inner.execute_script(sql)
    }
    fn dialect(&self) -> Dialect {
        self.inner.dialect()
    }
}

fn history(n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| match i % 3 {
            0 => json!({"role": "user", "content": format!("request {i}: fix the parser, with a NUL \u{0} and café"), "timestamp": i}),
            1 => json!({"role": "assistant", "content": [{"type": "text", "text": "reading"}, {"type": "toolCall", "id": format!("c{i}"), "name": "read", "arguments": {"path": format!("f{i}.rs")}}], "timestamp": i}),
            _ => json!({"role": "toolResult", "toolCallId": format!("c{}", i - 1), "toolName": "read", "content": [{"type": "text", "text": format!("body {i} 上下文")}], "timestamp": i}),
        })
        .collect()
}

/// Every stored row that an append writes, without the ids (sequences differ between schemas).
fn rows(sql: &mut impl Sql) -> Vec<Vec<SqlValue>> {
    let mut out = Vec::new();
    for query in [
        "SELECT seq, role, token_count, encode(identity_hash, 'hex'), host_timestamp, raw_json, host_entry_id, search_text FROM messages ORDER BY seq",
        "SELECT m.seq, p.ordinal, p.kind, p.tool_call_id, p.tool_name FROM message_parts p JOIN messages m ON m.id = p.message_id ORDER BY m.seq, p.ordinal",
        "SELECT c.ordinal, m.seq, c.token_count FROM context_items c JOIN messages m ON m.id = c.message_id ORDER BY c.ordinal",
        "SELECT message_count, token_count, next_ordinal, context_token_count FROM conversations",
    ] {
        out.extend(sql.query(query, &[]).unwrap().into_iter().map(|r| r.0));
    }
    out
}

#[test]
fn a_bulk_bootstrap_stores_the_same_rows_as_appending_one_message_at_a_time() {
    let messages = history(120);
    let session = json!({"sessionId": "s", "sessionKey": "agent:main:b"});
    let mut bulk = Engine::open(
        Counted {
            inner: pg::fresh(),
            statements: 0,
        },
        Config::default(),
        1,
    )
    .unwrap();
    let mut params = session.clone();
    params["messages"] = json!(messages);
    let before = bulk.sql().statements;
    bulk.bootstrap(decode("bootstrap", params).unwrap(), 2)
        .unwrap();
    let spent = bulk.sql().statements - before;
    // Row by row it would be a statement per message, per tool-call link and per context item.
    assert!(
        spent < 20,
        "the bootstrap took the bulk path: {spent} statements for 120 messages"
    );

    let mut single = Engine::open(pg::fresh(), Config::default(), 1).unwrap();
    for (i, m) in messages.iter().enumerate() {
        let mut p = session.clone();
        p["advancementKey"] = json!(format!("t{i}"));
        p["messages"] = json!([m]);
        single
            .commit_turn(decode("commitTurn", p).unwrap(), 2)
            .unwrap();
    }
    let (a, b) = (rows(bulk.sql()), rows(single.sql()));
    assert_eq!(
        a.len(),
        120 + 40 + 40 + 120 + 1,
        "every message, part, item and the totals were stored"
    );
    assert_eq!(a, b);

    // A second bootstrap of the same history (and one new message) stores only the new one.
    let mut again = session.clone();
    let mut more = messages.clone();
    more.push(json!({"role": "user", "content": "one more", "timestamp": 999}));
    again["messages"] = json!(more);
    let result = bulk
        .bootstrap(decode("bootstrap", again).unwrap(), 3)
        .unwrap();
    let stored = bulk
        .sql()
        .query_row("SELECT COUNT(*), MAX(seq) FROM messages", &[])
        .unwrap()
        .unwrap();
    assert_eq!(
        (stored.int(0).unwrap(), stored.int(1).unwrap()),
        (121, 121),
        "{result:?}"
    );
}

/// When the planner last learned about `table` in this store's schema (None: never).
fn analyzed(sql: &mut impl Sql, table: &str) -> Option<String> {
    let rows = sql
        .query("SELECT CAST(last_analyze AS text) FROM pg_stat_user_tables WHERE schemaname = current_schema() AND relname = ?1", &[table.into()])
        .unwrap();
    rows.into_iter().next().and_then(|r| r.opt_text(0).unwrap())
}

#[test]
fn a_long_bootstrap_refreshes_the_planners_statistics_and_a_short_one_does_not() {
    let tables = ["messages", "message_parts", "context_items"];
    let mut engine = Engine::open(pg::fresh(), Config::default(), 1).unwrap();
    let bootstrap = |engine: &mut Engine<PgSql>, key: &str, n: usize| {
        let params = json!({"sessionId": key, "sessionKey": format!("agent:main:{key}"), "messages": history(n)});
        let result = engine
            .bootstrap(decode("bootstrap", params).unwrap(), 2)
            .unwrap();
        assert_eq!(
            result.imported_messages, n,
            "the bootstrap imported {n} messages"
        );
    };
    // Below the threshold: no ANALYZE (the statistics collector reports none).
    bootstrap(
        &mut engine,
        "short",
        lossless_wasm::store::statistics::REFRESH_MIN_MESSAGES - 1,
    );
    for table in tables {
        assert_eq!(
            analyzed(engine.sql(), table),
            None,
            "{table} was analyzed after a short bootstrap"
        );
    }
    // At the threshold: every table the bulk write filled is analyzed, after its commit.
    bootstrap(
        &mut engine,
        "long",
        lossless_wasm::store::statistics::REFRESH_MIN_MESSAGES,
    );
    for table in tables {
        assert!(
            analyzed(engine.sql(), table).is_some(),
            "{table} was not analyzed after a long bootstrap"
        );
    }
    let planned: i64 = engine.sql().query("SELECT CAST(reltuples AS bigint) FROM pg_class WHERE oid = CAST('messages' AS regclass)", &[]).unwrap()[0].int(0).unwrap();
    let stored: i64 = engine
        .sql()
        .query("SELECT count(*) FROM messages", &[])
        .unwrap()[0]
        .int(0)
        .unwrap();
    assert_eq!(planned, stored, "the planner counts the messages stored");
}
