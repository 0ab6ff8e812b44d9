//! Bulk messages cross into wasm as one JSON string: `JSON.stringify` runs natively in the JS
//! engine and serde_json parses it in one pass, several times faster than converting a large
//! array value by value (serde-wasm-bindgen makes a JS call per field). Used where a call can
//! carry thousands of messages (`bootstrap`, `ingest`).
//!
//! The nesting limit of [`super::depth`] holds here too: serde_json refuses anything deeper than
//! its own recursion limit (128) while parsing, and what it accepts is measured against
//! [`MAX_DEPTH`] before anything else walks it.

use js_sys::Array;
use serde_json::value::RawValue;
use serde_json::Value;

use super::depth::MAX_DEPTH;
use crate::core::message::HostMessage;
use crate::error::Error;

fn too_deep(what: &str) -> Error {
    Error::input(
        what,
        format!(
            "is nested deeper than {MAX_DEPTH} levels; refusing it rather than risk the engine"
        ),
    )
}

/// The deepest nesting in `value` (a scalar is 0), measured without recursion.
fn depth_of(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 0usize)];
    while let Some((value, depth)) = stack.pop() {
        deepest = deepest.max(depth);
        match value {
            Value::Array(items) => stack.extend(items.iter().map(|v| (v, depth + 1))),
            Value::Object(map) => stack.extend(map.values().map(|v| (v, depth + 1))),
            _ => {}
        }
    }
    deepest
}

/// The messages of `call`, converted through JSON; `first_index` is the position of the first
/// in the caller's whole list, for error messages.
pub(super) fn messages_from_js(
    call: &str,
    messages: &Array,
    first_index: usize,
) -> Result<Vec<Value>, Error> {
    let (json, what) = stringify(call, messages)?;
    let values: Vec<Value> = match serde_json::from_str(&json) {
        Ok(values) => values,
        Err(err) => return value_by_value(messages, &what, &err),
    };
    check_depths(call, &values, first_index)?;
    Ok(values)
}

/// [`messages_from_js`] for a bulk import: each message keeps the JSON text it crossed as (stored
/// as its `raw_json` instead of serializing it again), and the JSON's length is returned too (to
/// size the next batch). The text is parsed twice (split into messages, then each into a value),
/// still cheaper than writing every value back out.
pub(super) fn sized_messages_from_js(
    call: &str,
    messages: &Array,
    first_index: usize,
) -> Result<(Vec<HostMessage>, usize), Error> {
    let (json, what) = stringify(call, messages)?;
    let parsed = serde_json::from_str::<Vec<&RawValue>>(&json).and_then(|raws| {
        raws.into_iter()
            .map(|raw| {
                Ok(HostMessage {
                    value: serde_json::from_str(raw.get())?,
                    json: Some(raw.get().to_owned()),
                })
            })
            .collect::<Result<Vec<_>, serde_json::Error>>()
    });
    let hosted = match parsed {
        Ok(hosted) => hosted,
        Err(err) => value_by_value(messages, &what, &err)?
            .into_iter()
            .map(HostMessage::from)
            .collect(),
    };
    for (i, m) in hosted.iter().enumerate() {
        check_depth(call, &m.value, first_index + i)?;
    }
    Ok((hosted, json.len()))
}

/// `messages` as one JSON string, and how errors name them.
fn stringify(call: &str, messages: &Array) -> Result<(String, String), Error> {
    let what = format!("{call} messages");
    let json = js_sys::JSON::stringify(messages).map_err(|err| {
        let reason = js_sys::Error::from(err)
            .message()
            .as_string()
            .unwrap_or_default();
        if reason.contains("call stack") {
            // The value-by-value check names the message and field that nest too deep.
            super::depth::check(messages, &what)
                .err()
                .unwrap_or_else(|| too_deep(&what))
        } else {
            Error::input(&what, format!("cannot be read as JSON ({reason})"))
        }
    })?;
    Ok((super::js_text::string_of(&json).unwrap_or_default(), what))
}

/// When serde_json refused what `JSON.stringify` wrote (`err`): the messages converted value by
/// value, or the depth error that explains the refusal.
fn value_by_value(
    messages: &Array,
    what: &str,
    err: &serde_json::Error,
) -> Result<Vec<Value>, Error> {
    if err.to_string().contains("recursion limit") {
        return Err(super::depth::check(messages, what)
            .err()
            .unwrap_or_else(|| too_deep(what)));
    }
    // JSON.stringify writes a lone surrogate (broken UTF-16 from the host) as a `\uD800`
    // escape, which serde_json refuses; the value-by-value conversion stores it as U+FFFD,
    // as it always did. Nothing else JSON.stringify writes fails to parse.
    super::depth::check(messages, what)?;
    serde_wasm_bindgen::from_value(messages.into()).map_err(|e| Error::input(what, e.to_string()))
}

fn check_depths(call: &str, values: &[Value], first_index: usize) -> Result<(), Error> {
    values
        .iter()
        .enumerate()
        .try_for_each(|(i, value)| check_depth(call, value, first_index + i))
}

fn check_depth(call: &str, value: &Value, index: usize) -> Result<(), Error> {
    // The array is level 0 of the limit in the value-by-value check; a message is level 1.
    if depth_of(value) + 1 > MAX_DEPTH {
        return Err(too_deep(&format!("{call} messages[{index}]")));
    }
    Ok(())
}
