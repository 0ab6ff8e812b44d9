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
    fn encode_into(
        this: &TextEncoder,
        source: &JsString,
        destination: &Uint8Array,
    ) -> EncodeIntoResult;

    type EncodeIntoResult;
    #[wasm_bindgen(method, getter)]
    fn read(this: &EncodeIntoResult) -> u32;
    #[wasm_bindgen(method, getter)]
    fn written(this: &EncodeIntoResult) -> u32;
}

thread_local! {
    static ENCODER: TextEncoder = TextEncoder::new();
}

/// `value` as a Rust string, or None when it is not a JS string. Lone surrogates become U+FFFD,
/// as with `as_string`.
pub(super) fn string_of(value: &JsValue) -> Option<String> {
    let text = value.dyn_ref::<JsString>()?;
    let units = text.length();
    if units < NATIVE_COPY_FROM {
        return value.as_string();
    }
    // One byte per UTF-16 unit first, which holds ASCII exactly; whatever did not fit is
    // encoded again into room for 3 bytes per unit (a surrogate pair, 2 units, takes 4). Room
    // for the worst case up front would triple the wasm memory a long ASCII message needs, and
    // wasm memory never shrinks.
    let mut bytes: Vec<u8> = Vec::with_capacity(units as usize);
    let read = encode_into(&mut bytes, text);
    if read < units {
        let rest = text.slice(read, units);
        bytes.reserve_exact((units - read) as usize * 3);
        encode_into(&mut bytes, &rest);
    }
    // TextEncoder only writes valid UTF-8; a failure here would be a host bug, not bad input.
    String::from_utf8(bytes).ok().or_else(|| value.as_string())
}

/// Encodes as much of `text` as fits into the spare capacity of `bytes`, appending it; returns
/// how many UTF-16 units of `text` it read (a character that does not fit whole is left out).
#[allow(unsafe_code)]
fn encode_into(bytes: &mut Vec<u8>, text: &JsString) -> u32 {
    let start = bytes.len();
    let room = bytes.capacity() - start;
    let (read, written) = ENCODER.with(|encoder| {
        // SAFETY: the view covers the vector's spare capacity, which nothing else uses, and is
        // dropped before any wasm allocation could grow (and so detach) the memory:
        // `encodeInto` only writes into it.
        let view = unsafe { Uint8Array::view_mut_raw(bytes.as_mut_ptr().add(start), room) };
        let result = encoder.encode_into(text, &view);
        (result.read(), result.written() as usize)
    });
    // SAFETY: `encodeInto` wrote `written` (at most `room`) bytes of UTF-8 after `start`.
    unsafe { bytes.set_len(start + written.min(room)) };
    read
}
