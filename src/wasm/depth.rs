//! A nesting limit for host values, checked before they are converted into Rust.
//!
//! Converting a JS value (serde-wasm-bindgen), and later hashing, serializing and dropping the
//! resulting `serde_json::Value`, all recurse once per nesting level. A message nested 10,000
//! levels deep overflows the wasm stack, which traps the instance ("memory access out of
//! bounds") and leaves it unusable for every session. So the depth is measured first, with an
//! explicit stack instead of recursion, and anything deeper than [`MAX_DEPTH`] is an input error
//! that names where it is.

use js_sys::{Array, Object};
use wasm_bindgen::{JsCast, JsValue};

use crate::error::Error;

/// Deepest nesting accepted in host values. Real agent messages (content blocks holding tool
/// arguments holding JSON) stay far below it; serde_json's own parser limit is 128.
pub(super) const MAX_DEPTH: usize = 100;

/// Errs when `value` is nested deeper than [`MAX_DEPTH`]; `what` names it in the error, and the
/// first few keys or indexes under it are added to the path.
pub(super) fn check(value: &JsValue, what: &str) -> Result<(), Error> {
    let mut stack: Vec<(JsValue, usize, Option<String>)> = vec![(value.clone(), 0, None)];
    while let Some((value, depth, top)) = stack.pop() {
        if depth > MAX_DEPTH {
            let at = top.map_or_else(|| what.to_owned(), |key| format!("{what}{key}"));
            return Err(Error::input(at, format!("is nested deeper than {MAX_DEPTH} levels; refusing it rather than risk the engine")));
        }
        // The path names the first few levels (`messages[3].content[0]`), enough to find it.
        let name = |key: String| {
            if depth < 3 {
                Some(format!("{}{key}", top.as_deref().unwrap_or("")))
            } else {
                top.clone()
            }
        };
        if let Some(array) = value.dyn_ref::<Array>() {
            for (i, item) in array.iter().enumerate() {
                if item.is_object() {
                    stack.push((item, depth + 1, name(format!("[{i}]"))));
                }
            }
        } else if value.is_object() && !value.is_function() {
            let object: &Object = value.unchecked_ref();
            for entry in Object::entries(object).iter() {
                let pair: Array = entry.unchecked_into();
                let item = pair.get(1);
                if item.is_object() {
                    let key = pair.get(0).as_string().unwrap_or_default();
                    stack.push((item, depth + 1, name(format!(".{key}"))));
                }
            }
        }
    }
    Ok(())
}
