//! Long JS strings into Rust in one native copy. wasm-bindgen's own conversion
//! (`JsValue::as_string`) copies a string's leading ASCII one character at a time in a JS loop
//! before handing the rest to `TextEncoder`: cheap for short strings, but for the JSON of a
//! bootstrap chunk (tens of KiB, nearly all ASCII) that loop ran interpreted until V8 optimized
//! it, ~5 ms of a 1,000-message bootstrap's 30 ms. Here `TextEncoder.encodeInto` writes the
//! UTF-8 straight into wasm memory.

use js_sys::{JsString, Uint8Array};
use wasm_bindgen::prelude::*;

/// Strings shorter than this (UTF-16 units) take wasm-bindgen's conversion: for them its loop
/// is cheaper than the calls `encodeInto` needs.
const NATIVE_COPY_FROM: u32 = 1024;

#[wasm_bindgen]
extern "C" {
    type TextEncoder;
    #[wasm_bindgen(constructor)]
    fn new() -> TextEncoder;
    #[wasm_bindgen(method, js_name = encodeInto)]
    fn encode_into(this: &TextEncoder, source: &JsString, destination: &Uint8Array) -> EncodeIntoResult;

    type EncodeIntoResult;
    #[wasm_bindgen(method, getter)]
    fn written(this: &EncodeIntoResult) -> u32;
}

thread_local! {
    static ENCODER: TextEncoder = TextEncoder::new();
}

/// `value` as a Rust string, or None when it is not a JS string. Lone surrogates become U+FFFD,
/// as with `as_string`.
pub fn string_of(value: &JsValue) -> Option<String> {
    let text = value.dyn_ref::<JsString>()?;
    let units = text.length();
    if units < NATIVE_COPY_FROM {
        return value.as_string();
    }
    // Each UTF-16 unit takes at most 3 bytes of UTF-8 (a surrogate pair, 2 units, takes 4).
    let capacity = units as usize * 3;
    let mut bytes: Vec<u8> = Vec::with_capacity(capacity);
    let written = ENCODER.with(|encoder| {
        // SAFETY: the view covers the vector's allocation, which nothing else uses, and is
        // dropped before any wasm allocation could grow (and so detach) the memory:
        // `encodeInto` only writes into it.
        let view = unsafe { Uint8Array::view_mut_raw(bytes.as_mut_ptr(), capacity) };
        encoder.encode_into(text, &view).written() as usize
    });
    // SAFETY: `encodeInto` wrote `written` bytes of UTF-8 at the start of the allocation.
    unsafe { bytes.set_len(written.min(capacity)) };
    // TextEncoder only writes valid UTF-8; a failure here would be a host bug, not bad input.
    String::from_utf8(bytes).ok().or_else(|| value.as_string())
}
