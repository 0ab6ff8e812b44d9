//! The checks a candidate must pass to count as a credential ([`super::patterns::Check`]), and
//! the small decoders they need. Each check errs towards redaction where a format is specific,
//! and towards leaving text alone where only context suggests a secret: a false positive costs
//! a summary one identifier (the original stays in the store), a false negative sends a key away.
//!
//! Pure functions of their input; nothing here knows about patterns or positions.

use super::patterns::Check;

/// Whether `candidate` passes `check`.
pub(super) fn passes(check: Check, candidate: &str) -> bool {
    match check {
        Check::None => true,
        Check::Mixed => mixed(candidate),
        Check::Random => random(candidate),
        Check::NotPlaceholder => !is_placeholder(candidate),
        Check::RandomValue => {
            !is_placeholder(candidate) && candidate.len() >= 8 && mixed(candidate)
        }
        Check::UrlPassword => !is_placeholder(candidate) && !is_port(candidate),
        Check::JwtHeader => jwt_header(candidate),
        Check::Base64PrivateKey => base64_private_key(candidate),
        Check::RandomBase64 => {
            let has = |f: fn(&u8) -> bool| candidate.bytes().any(|b| f(&b));
            has(u8::is_ascii_uppercase)
                && has(u8::is_ascii_lowercase)
                && has(u8::is_ascii_digit)
                && entropy(candidate) >= 4.2
        }
    }
}

/// At least two of: upper case, lower case, digits.
pub(super) fn mixed(s: &str) -> bool {
    let upper = s.bytes().any(|b| b.is_ascii_uppercase());
    let lower = s.bytes().any(|b| b.is_ascii_lowercase());
    let digit = s.bytes().any(|b| b.is_ascii_digit());
    u8::from(upper) + u8::from(lower) + u8::from(digit) >= 2
}

/// Shannon entropy in bits per byte.
pub(super) fn entropy(s: &str) -> f64 {
    if s.is_empty() {
        return 0.0;
    }
    let mut counts = [0u32; 256];
    for b in s.bytes() {
        counts[usize::from(b)] += 1;
    }
    let n = s.len() as f64;
    counts
        .iter()
        .filter(|c| **c > 0)
        .map(|c| f64::from(*c) / n)
        .map(|p| -p * p.log2())
        .sum()
}

/// Looks machine-generated: 2+ digits, 2+ letters, 3 bits of entropy per character, and a run
/// of 16 alphanumerics (so `sk-this-is-not-a-key-2024`, words joined by dashes, is not).
pub(super) fn random(s: &str) -> bool {
    let digits = s.bytes().filter(u8::is_ascii_digit).count();
    let letters = s.bytes().filter(u8::is_ascii_alphabetic).count();
    let longest_run = s
        .split(|c: char| !c.is_ascii_alphanumeric())
        .map(str::len)
        .max()
        .unwrap_or(0);
    digits >= 2 && letters >= 2 && longest_run >= 16 && entropy(s) >= 3.0
}

/// Words that stand for a value rather than being one: types, literals, placeholders.
const STAND_IN_WORDS: &[&str] = &[
    "null",
    "none",
    "nil",
    "true",
    "false",
    "undefined",
    "string",
    "str",
    "number",
    "int",
    "integer",
    "bool",
    "boolean",
    "any",
    "object",
    "bytes",
    "required",
    "optional",
    "redacted",
    "masked",
    "hidden",
    "empty",
    "example",
    "placeholder",
    "secret",
    "password",
    "passwd",
    "token",
    "xxx",
    "todo",
    "tbd",
    "env",
    "default",
    "value",
    "dummy",
    "test",
    "unknown",
    "unset",
    "blank",
    "omitted",
    "removed",
    "sensitive",
    "private",
    "stdin",
    "prompt",
    "apikey",
    "api_key",
    "api-key",
    "key",
];

/// A reference or a stand-in, not a credential: `$TOKEN`, `${X}`, `%s`, `{{ x }}`, `<token>`,
/// `[credential: x]`, masks (`****`, `xxxx`), ellipses, `YOUR_API_KEY`, `your-token-here`.
pub(super) fn is_placeholder(value: &str) -> bool {
    let v = value.trim();
    let Some(first) = v.chars().next() else {
        return true;
    };
    if matches!(first, '$' | '%' | '{' | '<' | '[' | '(') || v.ends_with('>') {
        return true;
    }
    if v.chars()
        .all(|c| matches!(c, '*' | 'x' | 'X' | '.' | '•' | '#' | '-' | '_' | '0'))
    {
        return true;
    }
    let lower = v.to_ascii_lowercase();
    let masked = lower.contains("****")
        || lower.contains("xxxx")
        || lower.contains("...")
        || lower.contains('…');
    let template = ["${", "$(", "{{", "%("].iter().any(|t| v.contains(t));
    if masked || template || lower.starts_with("your") {
        return true;
    }
    // An environment variable's name written where its value goes.
    let env_name = v
        .bytes()
        .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        && v.contains('_')
        && first.is_ascii_uppercase();
    env_name || STAND_IN_WORDS.contains(&lower.as_str())
}

/// A port number (`host:5000@sha256:...` is an image reference, not a password).
fn is_port(value: &str) -> bool {
    value.len() <= 5 && value.bytes().all(|b| b.is_ascii_digit())
}

fn sextet(b: u8) -> Option<u32> {
    match b {
        b'A'..=b'Z' => Some(u32::from(b - b'A')),
        b'a'..=b'z' => Some(u32::from(b - b'a') + 26),
        b'0'..=b'9' => Some(u32::from(b - b'0') + 52),
        b'+' | b'-' => Some(62),
        b'/' | b'_' => Some(63),
        _ => None,
    }
}

/// Decodes standard or URL-safe base64, padding optional; `None` on any other character.
pub(super) fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let body = s.trim_end_matches('=');
    let mut out = Vec::with_capacity(body.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for b in body.bytes() {
        acc = (acc << 6) | sextet(b)?;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// A JWT's first part is base64url JSON naming its algorithm or type.
fn jwt_header(token: &str) -> bool {
    let Some(header) = token.split('.').next().and_then(base64_decode) else {
        return false;
    };
    let Ok(header) = std::str::from_utf8(&header) else {
        return false;
    };
    let header = header.trim_start();
    header.starts_with('{')
        && ["\"alg\"", "\"typ\"", "\"enc\"", "\"kid\""]
            .iter()
            .any(|k| header.contains(k))
}

/// A base64 blob whose text starts a PEM private key (a Kubernetes `tls.key`, say).
fn base64_private_key(blob: &str) -> bool {
    let head: String = blob.chars().take(96).collect();
    let head = &head[..head.len() - head.len() % 4];
    base64_decode(head).is_some_and(|bytes| String::from_utf8_lossy(&bytes).contains("PRIVATE KEY"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_and_references_are_not_credentials() {
        for v in [
            "$TOKEN",
            "${API_KEY}",
            "%s",
            "{{ secrets.X }}",
            "<your-token>",
            "changeme-${RANDOM}",
            "[credential: jwt]",
            "****",
            "xxxxxxxx",
            "sk-...abcd",
            "YOUR_API_KEY",
            "your-token-here",
            "null",
            "string",
            "",
        ] {
            assert!(is_placeholder(v), "{v:?} is a placeholder");
        }
        for v in [
            "hunter2",
            "s3cr3t-P@ss",
            "ghp_abc",
            "Tr0ub4dor&3",
            "postgres",
        ] {
            assert!(!is_placeholder(v), "{v:?} is a value");
        }
    }

    #[test]
    fn random_tells_generated_keys_from_words_joined_by_dashes() {
        assert!(random("sk-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"));
        assert!(random("T3BlbkFJx9Qm2Lr8Zp4Wn6Yt1Vb5Kc7Hd3Js"));
        assert!(!random("sk-this-is-not-a-key-2024"));
        assert!(!random("abcdefghijklmnopqrstuvwxyz"), "no digits");
    }

    #[test]
    fn base64_decodes_both_alphabets_with_or_without_padding() {
        assert_eq!(base64_decode("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(base64_decode("aGVsbG8").unwrap(), b"hello");
        assert_eq!(base64_decode("-_8").unwrap(), vec![0xfb, 0xff]);
        assert!(base64_decode("a b").is_none());
    }

    #[test]
    fn a_jwt_header_must_decode_to_json_naming_its_algorithm() {
        assert!(jwt_header("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.x.y"));
        assert!(
            !jwt_header("eyJ1IjoibWFwYm94In0.x.y"),
            "JSON without alg/typ"
        );
        assert!(!jwt_header("eyJ!!.x.y"));
    }
}
