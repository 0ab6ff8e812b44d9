//! The `redactPatterns` config key: extra patterns a user adds to the built-in table, as regex
//! strings or `{name, pattern, keywords}` objects. Validated when the config is read, so a bad
//! regex is an error naming the key and the entry's index, never a failure at summary time.
//!
//! Owns the parsing only; [`super::Redactor`] compiles the patterns with the built-in ones.

use serde_json::Value;

use crate::error::{Error, Result};

/// The config key.
pub const KEY: &str = "redactPatterns";
/// The class of an extra pattern given without a name.
pub const DEFAULT_NAME: &str = "custom";
const MAX_PATTERNS: usize = 64;
const MAX_PATTERN_LEN: usize = 2_048;

/// One extra pattern. A capture group named `secret` limits the replacement to that group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomPattern {
    /// The placeholder's class: `[credential: <name>]`.
    pub name: String,
    /// The regex, as the user wrote it.
    pub pattern: String,
    /// Text every match contains or starts at (three characters or more, matched
    /// case-insensitively): the pattern then runs only around them, which keeps it fast on
    /// long prompts. Without keywords it runs over the whole text.
    pub keywords: Vec<String>,
}

/// Names the key (as every config error does) and the entry's index.
pub fn entry_error(index: usize, reason: impl Into<String>) -> Error {
    Error::config(KEY, format!("entry {index}: {}", reason.into()))
}

fn valid_name(name: &str) -> bool {
    (1..=40).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && name
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphanumeric())
}

/// Compiles a pattern the way the redactor will, or says why it cannot be used.
pub fn compile(pattern: &str) -> std::result::Result<regex_lite::Regex, String> {
    if pattern.len() > MAX_PATTERN_LEN {
        return Err(format!(
            "the pattern is longer than {MAX_PATTERN_LEN} characters"
        ));
    }
    let regex = regex_lite::Regex::new(pattern)
        .map_err(|err| format!("not a valid regular expression: {err}"))?;
    if regex.is_match("") {
        return Err(
            "the pattern matches the empty string, so it would match everywhere".to_owned(),
        );
    }
    Ok(regex)
}

fn parse_entry(index: usize, entry: &Value) -> Result<CustomPattern> {
    let (name, pattern, keywords) = match entry {
        Value::String(pattern) => (DEFAULT_NAME.to_owned(), pattern.clone(), Vec::new()),
        Value::Object(obj) => {
            if let Some(unknown) = obj
                .keys()
                .find(|k| !matches!(k.as_str(), "name" | "pattern" | "keywords"))
            {
                return Err(entry_error(
                    index,
                    format!("unknown field `{unknown}` (fields: name, pattern, keywords)"),
                ));
            }
            let pattern = obj
                .get("pattern")
                .and_then(Value::as_str)
                .ok_or_else(|| entry_error(index, "needs a `pattern` string"))?;
            let name = match obj.get("name") {
                None | Some(Value::Null) => DEFAULT_NAME.to_owned(),
                Some(Value::String(name)) if valid_name(name) => name.clone(),
                Some(_) => return Err(entry_error(index, "`name` must be 1 to 40 lower-case letters, digits or dashes, e.g. \"internal-token\"")),
            };
            let keywords = match obj.get("keywords") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(list)) => list
                    .iter()
                    .map(|k| match k.as_str() {
                        Some(k) if k.len() >= 3 && k.is_ascii() => Ok(k.to_ascii_lowercase()),
                        _ => Err(entry_error(
                            index,
                            "`keywords` must be ASCII strings of 3 characters or more",
                        )),
                    })
                    .collect::<Result<Vec<_>>>()?,
                Some(_) => {
                    return Err(entry_error(index, "`keywords` must be an array of strings"))
                }
            };
            (name, pattern.to_owned(), keywords)
        }
        _ => {
            return Err(entry_error(
                index,
                "must be a regex string or an object {name, pattern, keywords}",
            ))
        }
    };
    compile(&pattern).map_err(|reason| entry_error(index, reason))?;
    Ok(CustomPattern {
        name,
        pattern,
        keywords,
    })
}

/// Parses the `redactPatterns` value.
pub fn parse(value: &Value) -> Result<Vec<CustomPattern>> {
    let list = match value {
        Value::Null => return Ok(Vec::new()),
        Value::Array(list) => list,
        _ => {
            return Err(Error::config(
                KEY,
                "must be an array of regex strings or {name, pattern, keywords} objects",
            ))
        }
    };
    if list.len() > MAX_PATTERNS {
        return Err(Error::config(
            KEY,
            format!("at most {MAX_PATTERNS} patterns"),
        ));
    }
    list.iter()
        .enumerate()
        .map(|(i, entry)| parse_entry(i, entry))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strings_and_objects_are_accepted() {
        let parsed = parse(&json!(["itk_[a-z0-9]{32}", {"name": "acme-key", "pattern": "acme-(?P<secret>[0-9a-f]{24})", "keywords": ["ACME-"]}])).unwrap();
        assert_eq!(
            parsed[0],
            CustomPattern {
                name: "custom".into(),
                pattern: "itk_[a-z0-9]{32}".into(),
                keywords: vec![]
            }
        );
        assert_eq!(parsed[1].name, "acme-key");
        assert_eq!(parsed[1].keywords, ["acme-"]);
    }

    #[test]
    fn an_invalid_regex_is_rejected_naming_the_key_and_the_index() {
        let err = parse(&json!(["ok_[a-z]+", "broken(["]))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("`redactPatterns`: entry 1: not a valid regular expression"),
            "{err}"
        );
        let err = parse(&json!([{"pattern": "a*"}])).unwrap_err().to_string();
        assert!(
            err.contains("`redactPatterns`: entry 0: ") && err.contains("empty string"),
            "{err}"
        );
    }

    #[test]
    fn malformed_entries_name_what_is_wrong() {
        for (bad, needle) in [
            (json!("x"), "`redactPatterns`"),
            (json!([3]), "`redactPatterns`: entry 0"),
            (json!([{"name": "Bad Name", "pattern": "x+"}]), "`name`"),
            (json!([{"pattern": "x+", "keywords": ["ab"]}]), "`keywords`"),
            (
                json!([{"pattern": "x+", "flags": "i"}]),
                "unknown field `flags`",
            ),
            (json!([{"name": "n"}]), "`pattern`"),
        ] {
            let err = parse(&bad).unwrap_err().to_string();
            assert!(err.contains(needle), "{bad}: {err}");
        }
    }
}
