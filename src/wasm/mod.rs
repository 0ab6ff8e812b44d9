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
    crate::core::config::all_keys().into_iter().map(str::to_owned).collect()
}

/// Turns a crate error into a JS `Error` whose message says what is wrong.
pub(crate) fn js_error(err: crate::error::Error) -> JsError {
    JsError::new(&err.to_string())
}
