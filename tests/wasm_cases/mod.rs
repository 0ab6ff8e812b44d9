//! Engine tests for the wasm build on real sql.js. Included by `wasm_node.rs` (Node) and
//! `wasm_browser.rs` (headless Chromium), so the same cases run in both.

use js_sys::{Function, Promise, Reflect};
use lossless_wasm::wasm::{SqlJsDatabase, SqlJsSql, WasmEngine};
use serde::Serialize;
use serde_json::{json, Value};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::wasm_bindgen_test;

/// Loads sql.js from the repo's node_modules: `require` in Node, a script tag in a browser
/// (the test runner serves the repo root). Fails loudly when `npm ci` has not run.
const LOAD_SQL_JS: &str = r#"
  if (typeof process !== "undefined" && process.versions && process.versions.node) {
    const { createRequire } = process.getBuiltinModule("module");
    return createRequire(process.cwd() + "/")("sql.js")();
  }
  const base = "/node_modules/sql.js/dist/";
  return new Promise((resolve, reject) => {
    if (globalThis.initSqlJs) return resolve(globalThis.initSqlJs);
    const script = document.createElement("script");
    script.src = base + "sql-wasm.js";
    script.onload = () => resolve(globalThis.initSqlJs);
    script.onerror = () => reject(new Error("could not load " + base + "sql-wasm.js: run `npm ci`"));
    document.head.appendChild(script);
  }).then((init) => init({ locateFile: (file) => base + file }));
"#;

async fn sql_js() -> JsValue {
    let promise: Promise = Function::new_no_args(LOAD_SQL_JS)
        .call0(&JsValue::NULL)
        .expect("sql.js loader threw")
        .unchecked_into();
    JsFuture::from(promise)
        .await
        .expect("sql.js failed to load")
}

async fn database(bytes: Option<&[u8]>) -> SqlJsDatabase {
    new_database(&sql_js().await, bytes)
}

/// `new SQL.Database(bytes?)` on a loaded sql.js module.
pub fn new_database(sql: &JsValue, bytes: Option<&[u8]>) -> SqlJsDatabase {
    let ctor: Function = Reflect::get(sql, &"Database".into())
        .unwrap()
        .unchecked_into();
    let args = js_sys::Array::new();
    if let Some(bytes) = bytes {
        args.push(&js_sys::Uint8Array::from(bytes));
    }
    Reflect::construct(&ctor, &args)
        .expect("new SQL.Database")
        .unchecked_into()
}

fn js(value: &Value) -> JsValue {
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .unwrap()
}

fn rust(value: JsValue) -> Value {
    serde_wasm_bindgen::from_value(value).unwrap()
}

fn turn(key: &str, text: &str, ts: i64) -> JsValue {
    js(&json!({
        "sessionId": "s1", "sessionKey": "agent:main:w", "advancementKey": key,
        "messages": [
            {"role": "user", "content": text, "timestamp": ts},
            {"role": "assistant", "content": [{"type": "text", "text": format!("re: {text}")}], "timestamp": ts + 1}
        ]
    }))
}

fn error_text(err: JsValue) -> String {
    Reflect::get(&err, &"message".into())
        .unwrap()
        .as_string()
        .unwrap()
}

/// The error's own string field `name` (`code`, `field`, `key`, …).
fn error_field(err: &JsValue, name: &str) -> Option<String> {
    Reflect::get(err, &name.into()).unwrap().as_string()
}

#[wasm_bindgen_test]
async fn commit_turn_on_sql_js_is_idempotent() {
    let mut engine = WasmEngine::new(database(None).await, JsValue::NULL, 1.0).unwrap();
    assert_eq!(
        rust(engine.commit_turn(turn("k1", "hello", 10), 2.0).unwrap())["status"],
        "committed"
    );
    assert_eq!(
        rust(engine.commit_turn(turn("k1", "hello", 10), 3.0).unwrap())["status"],
        "duplicate"
    );
    let view = rust(
        engine
            .assemble(
                js(&json!({"sessionId": "s1", "sessionKey": "agent:main:w", "tokenBudget": 1000})),
                4.0,
            )
            .unwrap(),
    );
    let messages: Value = serde_json::from_str(view["messagesJson"].as_str().unwrap()).unwrap();
    assert_eq!(messages.as_array().unwrap().len(), 2);
    assert_eq!(messages[0]["content"], "hello");
    assert!(view["systemPromptAddition"]
        .as_str()
        .unwrap()
        .starts_with("[lossless-wasm]"));
}

#[wasm_bindgen_test]
async fn exported_database_reopens_with_every_message() {
    let mut engine = WasmEngine::new(database(None).await, JsValue::NULL, 1.0).unwrap();
    for i in 0..20 {
        engine
            .commit_turn(turn(&format!("k{i}"), &format!("message {i}"), i * 10), 2.0)
            .unwrap();
    }
    assert!(engine.take_dirty());
    let bytes = engine.export_database().unwrap();
    // Statements cached before the export must still work after it.
    engine
        .commit_turn(turn("k-after", "after export", 999), 3.0)
        .unwrap();
    let mut reopened = WasmEngine::new(database(Some(&bytes)).await, JsValue::NULL, 4.0).unwrap();
    let view = rust(
        reopened
            .assemble(
                js(&json!({"sessionId": "s1", "sessionKey": "agent:main:w"})),
                5.0,
            )
            .unwrap(),
    );
    assert_eq!(view["storedMessages"], 40);
    assert_eq!(
        rust(
            reopened
                .commit_turn(turn("k3", "message 3", 30), 6.0)
                .unwrap()
        )["status"],
        "duplicate"
    );
}

#[wasm_bindgen_test]
async fn bad_input_is_a_clear_error_and_stores_nothing() {
    let mut engine = WasmEngine::new(database(None).await, JsValue::NULL, 1.0).unwrap();
    let bad = js(
        &json!({"sessionId": "s1", "advancementKey": "k", "messages": [{"role": "user", "content": "ok"}, {"role": "alien"}]}),
    );
    let err = engine.commit_turn(bad, 2.0).unwrap_err();
    assert_eq!(
        error_field(&err, "code").as_deref(),
        Some("LOSSLESS_INVALID_INPUT")
    );
    assert_eq!(
        error_field(&err, "field").as_deref(),
        Some("messages[1].role")
    );
    let message = error_text(err);
    assert!(message.contains("messages[1].role"), "{message}");
    let view = rust(
        engine
            .assemble(js(&json!({"sessionId": "s1"})), 3.0)
            .unwrap(),
    );
    assert_eq!(view["storedMessages"], 0);
    let not_an_object = error_text(engine.ingest(JsValue::from_f64(3.0), 4.0).unwrap_err());
    assert!(not_an_object.contains("ingest params"), "{not_an_object}");
}

#[wasm_bindgen_test]
async fn invalid_config_names_the_key() {
    let err = WasmEngine::new(
        database(None).await,
        js(&json!({"defaultTokenBudget": -5})),
        1.0,
    )
    .err()
    .unwrap();
    assert_eq!(
        error_field(&err, "code").as_deref(),
        Some("LOSSLESS_INVALID_CONFIG")
    );
    assert_eq!(
        error_field(&err, "key").as_deref(),
        Some("defaultTokenBudget")
    );
    let message = error_text(err);
    assert!(message.contains("defaultTokenBudget"), "{message}");
}

/// The storage suite (`store_cases`) on sql.js.
mod store_on_sql_js {
    use super::*;

    macro_rules! sql_js_case {
        ($name:ident) => {
            #[wasm_bindgen_test]
            async fn $name() {
                let sql = sql_js().await;
                crate::store_cases::$name(|| SqlJsSql::new(new_database(&sql, None)).unwrap());
            }
        };
    }

    crate::for_each_store_case!(sql_js_case);
}
