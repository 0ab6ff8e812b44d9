//! Secrets by their name: `DB_PASSWORD=…`, `export OPENAI_API_KEY=…`, `password: …` (YAML),
//! `"client_secret": "…"` (JSON), `'token' => '…'` (PHP), `?access_token=…&` (a query string),
//! `Password=…;` (a connection string). The key is kept, only the value is replaced.
//!
//! Hand-written because the rules are about words, not characters: the key's *last* word must
//! name a secret (`token`, but not `max_tokens` or `next_page_token`), and the value must not be
//! code (`token = tokens.next()`), a type (`password: string`), a reference (`$TOKEN`) or prose.
//! What counts as a placeholder is [`super::checks`]'s call.

use super::checks::{is_placeholder, mixed};

/// How sure a key's name makes us that its value is a secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Family {
    /// Passwords may be short plain words.
    Password,
    /// Tokens and keys are long and random.
    Secret,
}

/// Last words of a key that name a password.
const PASSWORD_WORDS: &[&str] = &[
    "password",
    "passwd",
    "pwd",
    "pass",
    "passphrase",
    "passcode",
    "pw",
];
/// Last words of a key that name some other secret.
const SECRET_WORDS: &[&str] = &[
    "secret",
    "token",
    "apikey",
    "credential",
    "credentials",
    "dockerconfigjson",
    "dockercfg",
    "secretkey",
    "accesskey",
    "privatekey",
    "authkey",
    "auth",
    "authtoken",
    "accesstoken",
    "refreshtoken",
    "sastoken",
    "connectionstring",
];
/// Words before a final `key` that make it a secret key (`api_key`, `signingKey`).
const KEY_QUALIFIERS: &[&str] = &[
    "api",
    "access",
    "secret",
    "private",
    "auth",
    "signing",
    "encryption",
    "master",
    "account",
    "app",
    "license",
    "subscription",
    "storage",
    "shared",
    "service",
    "admin",
    "client",
    "consumer",
    "webhook",
    "deploy",
    "encrypt",
    "hmac",
    "jwt",
    "cookie",
    "crypt",
    "cipher",
    "sign",
    "management",
    "write",
    "read",
    "ingest",
    "personal",
];
/// Words that, anywhere before the last, say the value is not a credential (`next_page_token`,
/// `eos_token`, `max_completion_token`).
const NOT_SECRET_WORDS: &[&str] = &[
    "page",
    "next",
    "prev",
    "previous",
    "continuation",
    "cursor",
    "cancel",
    "cancellation",
    "sync",
    "resume",
    "eos",
    "bos",
    "pad",
    "unk",
    "sep",
    "cls",
    "mask",
    "special",
    "max",
    "min",
    "num",
    "count",
    "total",
    "input",
    "output",
    "prompt",
    "completion",
    "reasoning",
    "cache",
    "cached",
    "public",
    "publishable",
    "csrf",
    "xsrf",
    "nonce",
    "length",
    "len",
    "size",
    "type",
    "file",
    "path",
];

/// Longest value read after a key.
const MAX_VALUE_BYTES: usize = 4_096;

fn floor_boundary(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn is_key_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')
}

/// The words of a key, lower-cased: snake, kebab, dotted and camel case are split.
fn words(key: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut prev_lower = false;
    for c in key.chars() {
        if !c.is_ascii_alphanumeric() {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            prev_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && prev_lower && !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        current.push(c.to_ascii_lowercase());
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// An environment-style key (`STRIPE_KEY`, `DB_PASS`): upper case, digits and underscores.
pub(super) fn is_env_key(key: &str) -> bool {
    let key = key.trim_start_matches(['-', '_', '.']);
    !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        && key.bytes().any(|b| b.is_ascii_uppercase())
}

/// Whether a key names a secret, and how sure that makes us.
pub(super) fn secret_key(key: &str) -> Option<Family> {
    let words = words(key);
    let (last, before) = words.split_last()?;
    if before
        .iter()
        .any(|w| NOT_SECRET_WORDS.contains(&w.as_str()))
    {
        return None;
    }
    let prev = before.last().map(String::as_str);
    // Fused names: `PGPASSWORD`, `APITOKEN`, `clientsecret`.
    let fused = |suffixes: &[&str]| {
        last.len() > 6
            && suffixes
                .iter()
                .any(|s| last.len() > s.len() && last.ends_with(s))
    };
    if fused(&["password", "passwd"]) {
        return Some(Family::Password);
    }
    if fused(&[
        "secret",
        "token",
        "apikey",
        "accesskey",
        "secretkey",
        "privatekey",
    ]) {
        return Some(Family::Secret);
    }
    if PASSWORD_WORDS.contains(&last.as_str()) {
        // `pw` and `pass` alone say too little (`pass: "trigger"`); `db_pw`, `DB_PASS` are passwords.
        return (!matches!(last.as_str(), "pw" | "pass") || prev.is_some())
            .then_some(Family::Password);
    }
    if SECRET_WORDS.contains(&last.as_str()) {
        return Some(Family::Secret);
    }
    let qualified_key = last == "key" && prev.is_some_and(|p| KEY_QUALIFIERS.contains(&p));
    let env_key = last == "key" && prev.is_some() && is_env_key(key);
    let key_base = last == "base" && prev == Some("key") && before.iter().any(|w| w == "secret");
    (qualified_key || env_key || key_base).then_some(Family::Secret)
}

/// Types and words that stand for a value in code (`password: str`, `token: Token`).
fn looks_like_code(value: &str, env_key: bool) -> bool {
    if value.contains(['(', ')'])
        || value.contains("::")
        || value.starts_with(['&', '!', '*', '@', '?'])
    {
        return true;
    }
    let identifier = value
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && value
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_');
    // `self.token`, `ctx?.sessionKey`, `user!.password`: a property path.
    let path = value.replace(['?', '!'], "");
    let dotted_path = path.contains('.')
        && path.split('.').all(|part| {
            part.bytes()
                .next()
                .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
                && part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        });
    if dotted_path {
        return true;
    }
    if !identifier || env_key || value.bytes().any(|b| b.is_ascii_digit()) {
        return false;
    }
    let snake = value.contains('_');
    let camel = value
        .as_bytes()
        .windows(2)
        .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase());
    let pascal_type = value.as_bytes().first().is_some_and(u8::is_ascii_uppercase)
        && value.as_bytes().get(1).is_some_and(u8::is_ascii_lowercase);
    snake || camel || pascal_type
}

/// Whether `value`, written under a key of `family`, is a credential. `quoted`: it was in
/// quotes (so not code); `rest_of_line`: what follows it, to tell a value from prose.
pub(super) fn secret_value(
    value: &str,
    family: Family,
    quoted: bool,
    env_key: bool,
    rest_of_line: &str,
) -> bool {
    let v = value.trim();
    if is_placeholder(v) || v.contains("://") || v.starts_with("arn:") {
        return false;
    }
    if (v.starts_with('/') && v[1..].contains('/'))
        || v.starts_with("./")
        || v.starts_with("../")
        || v.starts_with("~/")
    {
        return false;
    }
    if !quoted && looks_like_code(v, env_key) {
        return false;
    }
    match family {
        Family::Password => {
            let plain_word = v.bytes().all(|b| b.is_ascii_lowercase());
            let prose_follows = rest_of_line
                .split_whitespace()
                .filter(|w| w.bytes().all(|b| b.is_ascii_alphabetic()))
                .count()
                >= 2;
            v.chars().count() >= 4 && !(plain_word && !quoted && prose_follows)
        }
        Family::Secret => v.len() >= 8 && mixed(v) && !v.bytes().all(|b| b.is_ascii_digit()),
    }
}

/// The value after `key_end`, if a separator follows: its span and whether it was quoted.
fn value_after(text: &str, key_start: usize, key_end: usize) -> Option<(usize, usize, bool)> {
    let bytes = text.as_bytes();
    let at = |i: usize| bytes.get(i).copied();
    let before = |n: usize| key_start.checked_sub(n).and_then(at);
    let mut i = key_end;
    // A closing quote counts only when the same quote opened the key: in `"all checks pass" :
    // "x"` the quote closes a sentence, not a key.
    if at(i) == Some(b'\\')
        && matches!(at(i + 1), Some(b'"' | b'\''))
        && before(1) == at(i + 1)
        && before(2) == Some(b'\\')
    {
        i += 2;
    } else if matches!(at(i), Some(b'"' | b'\'')) && before(1) == at(i) {
        i += 1;
    }
    if at(i) == Some(b']') {
        i += 1;
    }
    while matches!(at(i), Some(b' ' | b'\t')) {
        i += 1;
    }
    match (at(i), at(i + 1)) {
        (Some(b':'), Some(b'=')) | (Some(b'='), Some(b'>')) => i += 2,
        (Some(b'='), Some(b'=' | b'~')) | (Some(b':'), Some(b':')) => return None,
        (Some(b'=' | b':'), _) => i += 1,
        _ => return None,
    }
    while matches!(at(i), Some(b' ' | b'\t')) {
        i += 1;
    }
    // Bounded, and one scan: a minified JSON of one long line must not make every key read to
    // its end.
    let cap = floor_boundary(text, i.saturating_add(MAX_VALUE_BYTES).min(text.len()));
    let escaped = at(i) == Some(b'\\') && matches!(at(i + 1), Some(b'"' | b'\''));
    let open = if escaped { at(i + 1) } else { at(i) };
    match open {
        Some(q @ (b'"' | b'\'' | b'`')) => {
            let start = i + if escaped { 2 } else { 1 };
            let mut j = start;
            while j < cap && !matches!(bytes[j], b'\n' | b'\r') {
                let closes = if escaped {
                    bytes[j] == b'\\' && at(j + 1) == Some(q)
                } else {
                    bytes[j] == q && (j == start || bytes[j - 1] != b'\\')
                };
                if closes {
                    return Some((start, j, true));
                }
                j += 1;
            }
            None
        }
        _ => {
            let end = text[i..cap]
                .find(|c: char| c.is_whitespace() || "\"'`,;&)]}<>\\".contains(c))
                .map_or(cap, |n| i + n);
            (end > i).then_some((i, end, false))
        }
    }
}

/// Value spans of `key = value` assignments whose key contains one of the `hits`.
pub(super) fn find(text: &str, hits: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut last_key = usize::MAX;
    for &(start, end) in hits {
        let mut key_start = start;
        while key_start > 0 && is_key_byte(bytes[key_start - 1]) && start - key_start < 128 {
            key_start -= 1;
        }
        let mut key_end = end;
        while key_end < bytes.len() && is_key_byte(bytes[key_end]) && key_end - end < 128 {
            key_end += 1;
        }
        if key_start == last_key {
            continue;
        }
        last_key = key_start;
        let key = &text[key_start..key_end];
        let Some(family) = secret_key(key) else {
            continue;
        };
        let Some((v_start, v_end, quoted)) = value_after(text, key_start, key_end) else {
            continue;
        };
        let rest_cap = floor_boundary(text, v_end.saturating_add(256).min(text.len()));
        let rest = text[v_end..rest_cap]
            .split(['\n', '\r'])
            .next()
            .unwrap_or("");
        if secret_value(&text[v_start..v_end], family, quoted, is_env_key(key), rest) {
            out.push((v_start, v_end));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_names_are_split_into_words_and_judged_by_the_last() {
        assert_eq!(
            words("AWS_SECRET_ACCESS_KEY"),
            ["aws", "secret", "access", "key"]
        );
        assert_eq!(words("clientSecret"), ["client", "secret"]);
        assert_eq!(words("_authToken"), ["auth", "token"]);
        for key in [
            "DB_PASSWORD",
            "password",
            "clientSecret",
            "apiKey",
            "x-api-key",
            "_authToken",
            "STRIPE_KEY",
            "spring.datasource.password",
            "SECRET_KEY_BASE",
            "api_key",
            "PGPASSWORD",
            "clientsecret",
        ] {
            assert!(secret_key(key).is_some(), "{key} names a secret");
        }
        for key in [
            "max_tokens",
            "next_page_token",
            "eos_token",
            "passwordHash",
            "public_key",
            "key",
            "token_type",
            "bypass",
            "monkey",
            "pw",
            "primary_key",
        ] {
            assert!(secret_key(key).is_none(), "{key} does not name a secret");
        }
    }

    fn found(text: &str) -> Vec<&str> {
        let lower = text.to_ascii_lowercase();
        let hits: Vec<(usize, usize)> = ["pass", "pwd", "secret", "token", "key", "auth"]
            .iter()
            .flat_map(|k| {
                lower
                    .match_indices(k)
                    .map(|(i, m)| (i, i + m.len()))
                    .collect::<Vec<_>>()
            })
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        find(text, &hits)
            .into_iter()
            .map(|(s, e)| &text[s..e])
            .collect()
    }

    #[test]
    fn values_of_secret_keys_are_found_in_env_yaml_json_and_code() {
        assert_eq!(
            found("export OPENAI_API_KEY=abc123DEF456ghi"),
            ["abc123DEF456ghi"]
        );
        assert_eq!(found("DB_PASSWORD=hunter22 # dev"), ["hunter22"]);
        assert_eq!(found("  password: s3cret!x"), ["s3cret!x"]);
        assert_eq!(
            found(r#"{"client_secret": "Zx9-QwErTy12", "name": "x"}"#),
            ["Zx9-QwErTy12"]
        );
        assert_eq!(found(r#"'token' => 'Ab12Cd34Ef56'"#), ["Ab12Cd34Ef56"]);
        assert_eq!(
            found("GET /cb?access_token=Ab12Cd34Ef56Gh&x=1"),
            ["Ab12Cd34Ef56Gh"]
        );
        assert_eq!(
            found("Server=db;User Id=sa;Password=Pa55word;"),
            ["Pa55word"]
        );
        assert_eq!(
            found(r#"{\"api_key\":\"Ab12Cd34Ef56Gh\"}"#),
            ["Ab12Cd34Ef56Gh"]
        );
    }

    #[test]
    fn code_types_references_and_prose_are_not_values() {
        for text in [
            "let token = tokens.next();",
            "password: string",
            "token: Token,",
            "pub password: Option<String>,",
            "const secret = process.env.SECRET;",
            "API_KEY=${OPENAI_API_KEY}",
            "password: the one from the vault",
            "if token == \"abc12345678\"",
            "max_tokens: 1200",
            "token = access_token",
            "SSH_KEY=~/.ssh/id_rsa",
            "DATABASE_PASSWORD=$(cat /run/secrets/db)",
            "password: \"********\"",
            "secret_key: Option<SecretKey>",
            "const lines = [d.ok ? \"all checks pass\" : \"problems found\"];",
            "pass: \"trigger\",",
            "sessionKey: ctx?.sessionKey,",
            "WHERE session_key = 'agent:main:subagent:1'",
        ] {
            assert!(found(text).is_empty(), "{text:?} -> {:?}", found(text));
        }
    }
}
