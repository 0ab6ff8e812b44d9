//! `WasmEngine`: the engine as JS sees it. Every method takes the host's parameter object and the
//! current time, converts with serde-wasm-bindgen, calls [`Engine`], and converts the result.
//! Errors become JS `Error`s with the crate's message.

use serde::Serialize;
use serde_json::Value;
use wasm_bindgen::prelude::*;

use super::js_error;
use super::sqljs::{SqlJsDatabase, SqlJsSql};
use crate::core::config::Config;
use crate::engine::{decode, Engine};
use crate::error::Error;

/// The context engine over a sql.js database.
#[wasm_bindgen]
pub struct WasmEngine {
    inner: Engine<SqlJsSql>,
}

fn from_js(call: &str, value: JsValue) -> Result<Value, JsError> {
    serde_wasm_bindgen::from_value(value).map_err(|e| js_error(Error::input(format!("{call} params"), e.to_string())))
}

fn to_js<T: Serialize>(value: &T) -> Result<JsValue, JsError> {
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| JsError::new(&format!("converting a result for JS: {e}")))
}

fn now(ms: f64) -> i64 {
    if ms.is_finite() {
        ms as i64
    } else {
        0
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AssembleOut {
    /// A JSON array of the view's messages: one `JSON.parse` on the JS side instead of a
    /// conversion per field.
    messages_json: String,
    estimated_tokens: u64,
    system_prompt_addition: String,
    stored_messages: i64,
}

#[wasm_bindgen]
impl WasmEngine {
    /// Opens the engine on a sql.js database, validating `config` and migrating the schema.
    #[wasm_bindgen(constructor)]
    pub fn new(db: SqlJsDatabase, config: JsValue, now_ms: f64) -> Result<WasmEngine, JsError> {
        let config = Config::from_json(&from_js("config", config)?).map_err(js_error)?;
        let sql = SqlJsSql::new(db).map_err(js_error)?;
        Ok(WasmEngine { inner: Engine::open(sql, config, now(now_ms)).map_err(js_error)? })
    }

    pub fn bootstrap(&mut self, params: JsValue, now_ms: f64) -> Result<JsValue, JsError> {
        let params = decode("bootstrap", from_js("bootstrap", params)?).map_err(js_error)?;
        to_js(&self.inner.bootstrap(params, now(now_ms)).map_err(js_error)?)
    }

    /// Ingests `{sessionId, sessionKey?, messages}`; returns how many messages were new.
    pub fn ingest(&mut self, params: JsValue, now_ms: f64) -> Result<u32, JsError> {
        let params = decode("ingest", from_js("ingest", params)?).map_err(js_error)?;
        let inserted = self.inner.ingest(params, now(now_ms)).map_err(js_error)?;
        Ok(u32::try_from(inserted).unwrap_or(u32::MAX))
    }

    #[wasm_bindgen(js_name = afterTurn)]
    pub fn after_turn(&mut self, params: JsValue, now_ms: f64) -> Result<u32, JsError> {
        let params = decode("afterTurn", from_js("afterTurn", params)?).map_err(js_error)?;
        let inserted = self.inner.after_turn(params, now(now_ms)).map_err(js_error)?;
        Ok(u32::try_from(inserted).unwrap_or(u32::MAX))
    }

    #[wasm_bindgen(js_name = commitTurn)]
    pub fn commit_turn(&mut self, params: JsValue, now_ms: f64) -> Result<JsValue, JsError> {
        let params = decode("commitTurn", from_js("commitTurn", params)?).map_err(js_error)?;
        to_js(&self.inner.commit_turn(params, now(now_ms)).map_err(js_error)?)
    }

    pub fn assemble(&mut self, params: JsValue, now_ms: f64) -> Result<JsValue, JsError> {
        let params = decode("assemble", from_js("assemble", params)?).map_err(js_error)?;
        let view = self.inner.assemble(params, now(now_ms)).map_err(js_error)?;
        to_js(&AssembleOut {
            messages_json: format!("[{}]", view.messages.join(",")),
            estimated_tokens: view.estimated_tokens,
            system_prompt_addition: view.system_prompt_addition,
            stored_messages: view.stored_messages,
        })
    }

    pub fn compact(&mut self, params: JsValue) -> Result<JsValue, JsError> {
        let params = decode("compact", from_js("compact", params)?).map_err(js_error)?;
        to_js(&self.inner.compact(params).map_err(js_error)?)
    }

    /// True when a write committed since the last call: the caller should persist.
    #[wasm_bindgen(js_name = takeDirty)]
    pub fn take_dirty(&mut self) -> bool {
        self.inner.take_dirty()
    }

    /// The database as SQLite file bytes, for persisting.
    #[wasm_bindgen(js_name = exportDatabase)]
    pub fn export_database(&mut self) -> Result<Vec<u8>, JsError> {
        self.inner.sql().export().map_err(js_error)
    }
}
