// The fuzz properties that go through a store, shared by fuzz_native.rs (SQLite) and fuzz_pg.rs
// (PostgreSQL): each defines `Db` (the connection type), `open_db()` (a fresh, empty store),
// `search_config()` and `commit_config()` (the proptest configuration, case counts included, of
// the search and the commit/import property) and `with_search_engine(f)` (runs `f` on a seeded
// engine: a new one per case, or one reused across cases, which the search property allows since
// it checks that a search changes nothing) and includes this file. The message generators are
// here too; fuzz_native.rs's parsing property, which opens no store, uses them.
use lossless_wasm::core::config::Config;
use lossless_wasm::engine::*;
use lossless_wasm::store::Sql;
use lossless_wasm::Error;
use proptest::prelude::*;
use serde_json::{json, Map, Value};

/// Any JSON value, up to a few levels deep, with strings from all of Unicode.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>().prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        ".{0,40}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(".{0,12}", inner, 0..6).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

const ROLES: [&str; 9] = ["user", "assistant", "toolResult", "compactionSummary", "branchSummary", "bashExecution", "custom", "system", ""];
const BLOCKS: [&str; 7] = ["text", "thinking", "toolCall", "image", "file", "tool_use", "Text"];
const FIELDS: [&str; 10] = ["text", "thinking", "id", "name", "arguments", "toolCallId", "summary", "command", "output", "timestamp"];

/// A content block that is usually nearly right.
fn block() -> impl Strategy<Value = Value> {
    (prop::sample::select(&BLOCKS[..]), prop::collection::vec((prop::sample::select(&FIELDS[..]), any_json()), 0..4), any::<bool>(), any_json()).prop_map(
        |(kind, fields, well_formed, junk)| {
            if !well_formed && junk.is_object() {
                return junk;
            }
            let mut obj = Map::new();
            obj.insert("type".into(), json!(kind));
            for (k, v) in fields {
                obj.insert(k.into(), v);
            }
            Value::Object(obj)
        },
    )
}

/// A host message that is usually nearly right, sometimes anything.
fn message() -> impl Strategy<Value = Value> {
    let content = prop_oneof![".{0,60}".prop_map(Value::String), prop::collection::vec(block(), 0..4).prop_map(Value::Array), any_json()];
    let near = (prop::sample::select(&ROLES[..]), content, prop::collection::vec((prop::sample::select(&FIELDS[..]), any_json()), 0..3), any::<u32>()).prop_map(
        |(role, content, fields, ts)| {
            let mut obj = Map::new();
            obj.insert("role".into(), json!(role));
            obj.insert("content".into(), content);
            for (k, v) in fields {
                obj.insert(k.into(), v);
            }
            obj.entry("timestamp").or_insert(json!(ts));
            Value::Object(obj)
        },
    );
    prop_oneof![4 => near, 1 => any_json()]
}

/// Pieces of the syntaxes a pattern meets on its way: FTS4 (SQLite's MATCH, translated to a
/// `tsquery` on PostgreSQL), `tsquery`'s own operators, LIKE wildcards and SQL, with the seeded
/// words and some non-ASCII letters.
const PATTERN_PIECES: [&str; 48] = [
    "keep", "kept", "me", "a", "b", "kee*", "*", "\"", "(", ")", "AND", "OR", "NOT", "NEAR", "NEAR/0", "NEAR/3", "NEAR/100",
    "NEAR/101", "NEAR/-1", "NEAR/", "near", "-", "+", "^", "content:", "CONTENT:", "foo:", ":", "'", "''", "%", "_", "\\", "&", "|",
    "!", "<->", "<2>", ":*", ";", "--", "DROP TABLE messages", "' OR 1=1 --", "\0", "é", "日本語", "İ", "\u{2400}",
];

/// A search pattern: anything at all, or pieces of query syntax run together or spaced.
fn search_pattern() -> impl Strategy<Value = String> {
    let pieces = prop::collection::vec((prop::sample::select(&PATTERN_PIECES[..]), prop::sample::select(&["", " ", " ", "  "][..])), 0..8)
        .prop_map(|parts| parts.into_iter().map(|(piece, gap)| format!("{piece}{gap}")).collect::<String>());
    prop_oneof![".{0,30}", pieces]
}

fn engine() -> Engine<Db> {
    match Engine::open(open_db(), Config::default(), 1_000) {
        Ok(engine) => engine,
        Err(err) => panic!("engine must open: {err}"),
    }
}

/// A count the snapshot compares. Unreadable, it fails the case: a -1 before and after would
/// compare equal and pass without having read anything.
fn count(engine: &mut Engine<Db>, sql: &str) -> i64 {
    match engine.sql().query_row(sql, &[]) {
        Ok(Some(row)) => row.int(0).unwrap_or_else(|err| panic!("{sql}: {err}")),
        other => panic!("{sql} read no count: {other:?}"),
    }
}

/// The stored state a rejected call must not change.
fn snapshot(engine: &mut Engine<Db>) -> (i64, i64, i64) {
    (count(engine, "SELECT COUNT(*) FROM messages"), count(engine, "SELECT COUNT(*) FROM turn_advancements"), count(engine, "SELECT COUNT(*) FROM context_items"))
}

fn seeded() -> Engine<Db> {
    let mut e = engine();
    let params = json!({"sessionId": "s", "sessionKey": "k", "advancementKey": "seed", "messages": [
        {"role": "user", "content": "keep me", "timestamp": 1},
        {"role": "assistant", "content": [{"type": "text", "text": "kept"}], "timestamp": 2}]});
    let seeded = decode::<CommitTurnParams>("commitTurn", params).and_then(|p| e.commit_turn(p, 10));
    assert!(seeded.is_ok(), "{seeded:?}");
    e
}

proptest! {
    #![proptest_config(search_config())]

    #[test]
    fn any_search_pattern_is_answered_or_refused_and_changes_nothing(pattern in search_pattern(), mode in prop::sample::select(&["text", "full_text", "regex", ""][..])) {
        with_search_engine(|e| {
            let before = snapshot(e);
            let params = decode::<SearchParams>("search", json!({"sessionId": "s", "sessionKey": "k", "pattern": pattern, "mode": mode}));
            match params.and_then(|p| e.search(p)) {
                Ok(_) => {}
                Err(Error::InvalidInput { .. }) => {}
                Err(other) => prop_assert!(false, "search gave {other}"),
            }
            prop_assert_eq!(snapshot(e), before);
            Ok(())
        })?;
    }
}

proptest! {
    #![proptest_config(commit_config())]

    #[test]
    fn a_rejected_commit_or_import_stores_nothing(messages in prop::collection::vec(message(), 0..5), import in any::<bool>()) {
        let mut e = seeded();
        let before = snapshot(&mut e);
        let n = messages.len() as i64;
        let outcome = if import {
            decode::<BootstrapParams>("bootstrap", json!({"sessionId": "s", "sessionKey": "k", "messages": messages})).and_then(|p| e.bootstrap(p, 20).map(|_| ()))
        } else {
            decode::<CommitTurnParams>("commitTurn", json!({"sessionId": "s", "sessionKey": "k", "advancementKey": "fuzz", "messages": messages})).and_then(|p| e.commit_turn(p, 20).map(|_| ()))
        };
        let after = snapshot(&mut e);
        match outcome {
            Ok(()) => prop_assert!(after.0 >= before.0 && after.0 <= before.0 + n, "{before:?} -> {after:?}"),
            Err(Error::InvalidInput { field, .. }) => {
                prop_assert!(!field.is_empty());
                prop_assert_eq!(after, before, "a rejected call changed what was stored");
            }
            Err(other) => prop_assert!(false, "gave a non-input error: {other}"),
        }
        // Whatever happened, the engine keeps answering and the seed is still there.
        let view = decode::<AssembleParams>("assemble", json!({"sessionId": "s", "sessionKey": "k", "tokenBudget": 100000})).and_then(|p| e.assemble(p, 30));
        prop_assert!(view.is_ok(), "{view:?}");
        prop_assert!(after.0 >= 2);
    }
}
