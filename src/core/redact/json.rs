//! Redaction of a host message's JSON (tool-call arguments, tool results, content blocks), so
//! what a summary copies from structured fields (the ledger reads commands and paths from tool
//! arguments) is redacted as much as the text is. Strings are redacted in their decoded form
//! (a JSON-escaped `\n` before a key would otherwise hide its word boundary), and a string
//! under a key that names a secret (`{"api_key": "…"}`) is replaced whole when its value looks
//! like one: the key is the context a plain-text rule would have seen.

use serde_json::Value;

use super::assign::{is_env_key, secret_key, secret_value};
use super::{placeholder, Counts, Redactor};

/// The class reported for a value replaced because of its key.
const KEYED_CLASS: &str = "secret-value";

pub(super) fn walk(redactor: &Redactor, value: &mut Value, counts: &mut Counts) {
    match value {
        Value::String(s) => redact_string(redactor, s, counts),
        Value::Array(items) => items.iter_mut().for_each(|v| walk(redactor, v, counts)),
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                let keyed = match &*v {
                    Value::String(s) if may_name_a_secret(key) => secret_key(key)
                        .is_some_and(|family| secret_value(s, family, true, is_env_key(key), "")),
                    _ => false,
                };
                if keyed {
                    // Reported under its own class when a rule recognizes the value.
                    let own = redactor.redact(v.as_str().unwrap_or_default()).counts;
                    let class = own
                        .iter()
                        .next()
                        .map_or(KEYED_CLASS, |(class, _)| class)
                        .to_owned();
                    counts.add(&class, 1);
                    *v = Value::String(placeholder(&class));
                } else {
                    walk(redactor, v, counts);
                }
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// A cheap look before the word split: most keys are `role`, `type`, `text`, `id`.
fn may_name_a_secret(key: &str) -> bool {
    const WORDS: [&[u8]; 8] = [
        b"pass",
        b"pwd",
        b"secret",
        b"token",
        b"key",
        b"credential",
        b"auth",
        b"dockerc",
    ];
    let bytes = key.as_bytes();
    WORDS.iter().any(|w| {
        bytes
            .windows(w.len())
            .any(|window| window.eq_ignore_ascii_case(w))
    })
}

fn redact_string(redactor: &Redactor, s: &mut String, counts: &mut Counts) {
    let redacted = redactor.redact(s);
    if !redacted.counts.is_empty() {
        counts.merge(&redacted.counts);
        *s = redacted.text;
    }
}
