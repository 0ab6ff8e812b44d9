//! The `#[wasm_bindgen]` surface (wasm32 only): conversions between JS values and the engine's
//! plain data, and nothing else. No logic lives here.

mod depth;
mod engine;
mod js_text;
mod json_messages;
mod sqljs;

pub use engine::WasmEngine;
pub use sqljs::{SqlJsDatabase, SqlJsSql};

use wasm_bindgen::prelude::*;

/// Forwards any panic to `console.error` instead of an opaque "unreachable" trap.
#[wasm_bindgen(start)]
fn start() {
    console_error_panic_hook::set_once();
}

/// Every config key the engine accepts (the manifest's configSchema must list the same).
#[wasm_bindgen(js_name = configKeys)]
pub fn config_keys() -> Vec<String> {
    crate::core::config::all_keys()
        .into_iter()
        .map(str::to_owned)
        .collect()
}

/// The text PostgreSQL stores in `messages.search_text` for a stored message's `raw_json`: what
/// the engine derives at ingest, NUL shown as U+2400. The SQLite → PostgreSQL copy
/// (js-shim/operator/copy-to-postgres.js) calls it so copied rows hold exactly what the engine writes.
#[wasm_bindgen(js_name = messageSearchText)]
pub fn message_search_text(raw_json: &str) -> Result<String, JsValue> {
    let text = crate::core::message::text_of_raw_json(raw_json).map_err(js_error)?;
    Ok(crate::store::messages::search_text(&text))
}

/// Turns a crate error into a JS `Error` whose message says what is wrong, with what a caller
/// matches on as its own fields: `code` ([`crate::error::Error::code`]), and `field` (bad input),
/// `key` (bad config), or `storageKind` and, when the backend gave one, `backendCode` (a
/// SQLSTATE, a SQLite result code). They survive the shim's worker boundaries (js-shim/errors.js
/// carries a foreign error's own fields).
pub(crate) fn js_error(err: crate::error::Error) -> JsValue {
    use crate::error::Error;
    let out = js_sys::Error::new(&err.to_string());
    let set = |name: &str, value: &str| {
        // Setting a plain data property on a fresh Error cannot fail.
        let _ = js_sys::Reflect::set(&out, &name.into(), &value.into());
    };
    set("code", &err.code());
    match &err {
        Error::InvalidInput { field, .. } => set("field", field),
        Error::InvalidConfig { key, .. } => set("key", key),
        Error::Storage(storage) => {
            set("storageKind", storage.kind().name());
            if let Some(code) = storage.code() {
                set("backendCode", code);
            }
        }
        Error::Stale(_) => {}
    }
    out.into()
}

/// A JS `Error` with `message`, for a failure outside the crate's errors (converting a value).
pub(crate) fn plain_error(message: &str) -> JsValue {
    js_sys::Error::new(message).into()
}
