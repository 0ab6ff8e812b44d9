//! The tool-output stub settings: defaults, and how one user-written key is validated and
//! applied (wrong types and meaningless values are errors naming the key; values of the right
//! kind outside the useful range are clamped, and the caller is told). This module must not know
//! the other keys: `apply_key` answers `None` for them.

use serde::Serialize;
use serde_json::Value;

use crate::error::{Error, Result};

/// Every stub key, as users write it.
pub const KEYS: &[&str] = &[
    "toolOutputStubs",
    "stubMinTokens",
    "stubBatchRatio",
    "workingSetTurns",
    "workingSetShare",
    "workingSetMaxTokens",
];

/// Field names are the snake_case of the keys (the switch is `enabled`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MaskingConfig {
    /// Old tool outputs become stubs, huge messages excerpts (`toolOutputStubs`).
    pub enabled: bool,
    /// Tool outputs smaller than this stay whole.
    pub min_tokens: u32,
    /// A batch runs when it saves at least this multiple of the tokens it re-writes.
    pub batch_ratio: f64,
    /// A file read, edited or written in this many newest turns keeps its newest read whole
    /// while there is room (0: no working set).
    pub working_set_turns: u32,
    /// The working set stays whole while the context is at most this share of the view budget.
    pub working_set_share: f64,
    /// Larger reads are not kept in the working set.
    pub working_set_max_tokens: u32,
}

impl Default for MaskingConfig {
    fn default() -> Self {
        MaskingConfig {
            enabled: true,
            min_tokens: 200,
            batch_ratio: 1.0,
            working_set_turns: 0,
            working_set_share: 0.6,
            working_set_max_tokens: 2_048,
        }
    }
}

const MIN_TOKENS: (u64, u64) = (64, 1_000_000);
const MAX_RATIO: f64 = 100.0;
const MAX_WORKING_SET_TURNS: u64 = 1_000_000;

impl MaskingConfig {
    /// Applies one key. `Ok(None)`: not a stub key. `Ok(Some(clamped))`: applied, and whether the
    /// value had to be clamped. `Err`: wrong type or meaningless value, naming `key`.
    pub fn apply_key(&mut self, key: &str, value: &Value) -> Result<Option<bool>> {
        match key {
            "toolOutputStubs" => {
                self.enabled = value.as_bool().ok_or_else(|| {
                    Error::config(key, format!("must be true or false, got {value}"))
                })?;
                Ok(Some(false))
            }
            "stubMinTokens" => {
                let n = value.as_u64().ok_or_else(|| {
                    Error::config(
                        key,
                        format!("must be a non-negative integer (a token count), got {value}"),
                    )
                })?;
                let clamped = n.clamp(MIN_TOKENS.0, MIN_TOKENS.1);
                self.min_tokens = u32::try_from(clamped).unwrap_or(u32::MAX);
                Ok(Some(clamped != n))
            }
            "stubBatchRatio" => {
                let f = value
                    .as_f64()
                    .filter(|f| f.is_finite() && *f >= 0.0)
                    .ok_or_else(|| Error::config(key, format!("must be a non-negative number (saved tokens per re-written token), got {value}")))?;
                self.batch_ratio = f.min(MAX_RATIO);
                Ok(Some(f > MAX_RATIO))
            }
            "workingSetTurns" => {
                let n = value.as_u64().ok_or_else(|| {
                    Error::config(
                        key,
                        format!("must be a non-negative integer (a number of turns), got {value}"),
                    )
                })?;
                let clamped = n.min(MAX_WORKING_SET_TURNS);
                self.working_set_turns = u32::try_from(clamped).unwrap_or(u32::MAX);
                Ok(Some(clamped != n))
            }
            "workingSetMaxTokens" => {
                let n = value.as_u64().ok_or_else(|| {
                    Error::config(
                        key,
                        format!("must be a non-negative integer (a token count), got {value}"),
                    )
                })?;
                self.working_set_max_tokens = u32::try_from(n).unwrap_or(u32::MAX);
                Ok(Some(n > u64::from(u32::MAX)))
            }
            "workingSetShare" => {
                let f = value
                    .as_f64()
                    .filter(|f| f.is_finite() && *f >= 0.0)
                    .ok_or_else(|| Error::config(key, format!("must be a number from 0 to 1 (a share of the view budget), got {value}")))?;
                self.working_set_share = f.min(1.0);
                Ok(Some(f > 1.0))
            }
            _ => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_are_on_with_documented_sizes() {
        let c = MaskingConfig::default();
        assert_eq!((c.enabled, c.min_tokens, c.batch_ratio), (true, 200, 1.0));
        assert_eq!(
            (
                c.working_set_turns,
                c.working_set_share,
                c.working_set_max_tokens
            ),
            (0, 0.6, 2_048),
            "the working set is off until its cost is paid for (docs/view.md)"
        );
    }

    #[test]
    fn keys_apply_clamp_and_reject_naming_the_key() {
        let mut c = MaskingConfig::default();
        for key in KEYS {
            let value = if *key == "toolOutputStubs" {
                json!(false)
            } else {
                json!(300)
            };
            assert!(c.apply_key(key, &value).unwrap().is_some(), "{key}");
        }
        assert_eq!((c.enabled, c.min_tokens), (false, 300));
        assert_eq!(c.apply_key("stubMinTokens", &json!(1)).unwrap(), Some(true));
        assert_eq!(c.min_tokens, 64);
        assert_eq!(
            c.apply_key("stubBatchRatio", &json!(1e9)).unwrap(),
            Some(true)
        );
        assert_eq!(c.batch_ratio, 100.0);
        assert_eq!(
            c.apply_key("stubBatchRatio", &json!(0)).unwrap(),
            Some(false)
        );
        assert_eq!(c.apply_key("dbPath", &json!("/x")).unwrap(), None);
        for (key, bad) in [
            ("toolOutputStubs", json!("yes")),
            ("stubMinTokens", json!(-3)),
            ("stubMinTokens", json!(2.5)),
            ("stubBatchRatio", json!(-1)),
            ("stubBatchRatio", json!("1")),
        ] {
            let before = c.clone();
            let err = c.apply_key(key, &bad).unwrap_err().to_string();
            assert!(err.contains(&format!("`{key}`")), "{err}");
            assert_eq!(c, before, "a rejected value leaves the config untouched");
        }
    }
}
