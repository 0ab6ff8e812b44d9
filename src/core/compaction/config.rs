//! Compaction settings: their defaults, and how one user-written key is validated and applied.
//! Values of the wrong type, or that cannot mean anything (a negative count, a zero chunk size),
//! are rejected with the key's name as the user wrote it; values of the right kind but outside
//! the useful range are clamped, and the caller is told so it can report the clamp.
//!
//! This module must not know about the other engine keys (`dbPath`, ...): `apply_key` answers
//! `None` for them so the engine's config parser can own the full key set.

use serde::Serialize;
use serde_json::Value;

use super::retry::BackoffPolicy;
use crate::error::{Error, Result};

/// Every compaction key, as users write it.
pub const KEYS: &[&str] = &[
    "freshTailCount",
    "leafChunkTokens",
    "contextThreshold",
    "leafBudgetHeadroomFactor",
    "leafSkipReductionThreshold",
    "condensedFanout",
    "leafTargetTokens",
    "condensedTargetTokens",
    "maxFailuresBeforeBreaker",
    "backoffBaseMs",
    "backoffMaxMs",
];

/// Compaction settings. Field names are the snake_case of the keys in [`KEYS`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionConfig {
    /// Newest raw messages that are never summarized.
    pub fresh_tail_count: u32,
    /// Tokens of raw history one leaf pass summarizes (and the leaf trigger's size).
    pub leaf_chunk_tokens: u32,
    /// Fraction of the token budget above which a full sweep runs.
    pub context_threshold: f64,
    /// In [0,1]; 0 disables the headroom gate.
    pub leaf_budget_headroom_factor: f64,
    /// In [0,1]; 0 disables the cache-aware skip.
    pub leaf_skip_reduction_threshold: f64,
    /// Same-depth summaries that trigger a merge into one summary a level deeper.
    pub condensed_fanout: u32,
    /// Length a leaf summary is asked for, in tokens (the prompt's target at the normal level,
    /// smaller for small inputs).
    pub leaf_target_tokens: u32,
    /// Length a condensed summary is asked for, in tokens (the prompt's target at the normal
    /// level, smaller for small inputs).
    pub condensed_target_tokens: u32,
    /// Consecutive auth failures that open the breaker.
    pub max_failures_before_breaker: u32,
    /// Backoff after the first failure, in ms; it doubles with each further failure.
    pub backoff_base_ms: u64,
    /// The longest backoff, in ms.
    pub backoff_max_ms: u64,
    /// Not a key: the fresh tail's token cap, set by [`super::fit`] from the view budget so the
    /// tail yields before it crowds summaries out of the view (unbounded until then).
    #[serde(skip)]
    pub fresh_tail_max_tokens: u64,
    /// Not a key: the smallest leaf chunk worth a summarizer call (see
    /// [`super::chunk_size::MIN_PAYOFF_CHUNK_TOKENS`]); raised after answers that ran too long
    /// for their chunk ([`super::retry::RetryState::chunk_floor`]).
    #[serde(skip)]
    pub leaf_chunk_min_tokens: u32,
}

impl Default for CompactionConfig {
    fn default() -> Self {
        CompactionConfig {
            fresh_tail_count: 32,
            leaf_chunk_tokens: 20_000,
            context_threshold: 0.75,
            leaf_budget_headroom_factor: 0.8,
            leaf_skip_reduction_threshold: 0.05,
            condensed_fanout: 4,
            leaf_target_tokens: 1_200,
            condensed_target_tokens: 2_000,
            max_failures_before_breaker: 3,
            backoff_base_ms: 30_000,
            backoff_max_ms: 3_600_000,
            fresh_tail_max_tokens: u64::MAX,
            leaf_chunk_min_tokens: super::chunk_size::MIN_PAYOFF_CHUNK_TOKENS,
        }
    }
}

/// An integer key's accepted range. `min_meaningful` is the smallest value that means anything
/// (below it: an error); values in `[min_meaningful, clamp_min)` or above `max` are clamped.
struct IntRange {
    min_meaningful: u64,
    clamp_min: u64,
    max: u64,
    why_min: &'static str,
}

// A chunk smaller than a summary's own target would make summaries no shorter than their source.
const LEAF_CHUNK: IntRange = IntRange {
    min_meaningful: 1,
    clamp_min: 1_000,
    max: 1_000_000,
    why_min: "a positive token count",
};
const TARGET: IntRange = IntRange {
    min_meaningful: 1,
    clamp_min: 64,
    max: 32_000,
    why_min: "a positive token count",
};
// Protecting zero messages would let a pass summarize the request the model is answering.
const TAIL: IntRange = IntRange {
    min_meaningful: 0,
    clamp_min: 1,
    max: 100_000,
    why_min: "a count",
};
const FANOUT: IntRange = IntRange {
    min_meaningful: 2,
    clamp_min: 2,
    max: 64,
    why_min: "at least 2 (merging one summary into one does nothing)",
};
const BREAKER: IntRange = IntRange {
    min_meaningful: 1,
    clamp_min: 1,
    max: 1_000,
    why_min: "at least 1",
};
// Below a second, retries would hammer a failing provider every turn.
const BACKOFF: IntRange = IntRange {
    min_meaningful: 0,
    clamp_min: 1_000,
    max: 7 * 24 * 3_600_000,
    why_min: "a duration in milliseconds",
};

fn int_value(key: &str, value: &Value, range: &IntRange) -> Result<(u64, bool)> {
    let n = match value.as_u64() {
        Some(n) => n,
        None if value
            .as_f64()
            .is_some_and(|f| f.is_finite() && f.fract() == 0.0 && f >= 0.0) =>
        {
            // Integral floats beyond u64 (e.g. 1e30) are simply huge: clamp them like any large value.
            return Ok((range.max, true));
        }
        None => {
            return Err(Error::config(
                key,
                format!(
                    "must be a non-negative integer ({}), got {value}",
                    range.why_min
                ),
            ))
        }
    };
    if n < range.min_meaningful {
        return Err(Error::config(
            key,
            format!("must be {}, got {n}", range.why_min),
        ));
    }
    let clamped = n.clamp(range.clamp_min, range.max);
    Ok((clamped, clamped != n))
}

fn u32_value(key: &str, value: &Value, range: &IntRange) -> Result<(u32, bool)> {
    let (n, clamped) = int_value(key, value, range)?;
    // Every range's max fits in u32; the fallback only guards a future edit.
    Ok((u32::try_from(n).unwrap_or(u32::MAX), clamped))
}

/// A fraction clamped into [0,1]; NaN cannot arrive from JSON, but a non-number can.
fn fraction(key: &str, value: &Value) -> Result<(f64, bool)> {
    let f = value.as_f64().filter(|f| f.is_finite()).ok_or_else(|| {
        Error::config(
            key,
            format!("must be a number between 0 and 1, got {value}"),
        )
    })?;
    let clamped = f.clamp(0.0, 1.0);
    Ok((clamped, clamped != f))
}

impl CompactionConfig {
    /// Applies one key. `Ok(None)`: not a compaction key. `Ok(Some(clamped))`: applied, and
    /// whether the value had to be clamped. `Err`: wrong type or meaningless value, naming `key`.
    pub fn apply_key(&mut self, key: &str, value: &Value) -> Result<Option<bool>> {
        let clamped = match key {
            "freshTailCount" => set(&mut self.fresh_tail_count, u32_value(key, value, &TAIL)?),
            "leafChunkTokens" => set(
                &mut self.leaf_chunk_tokens,
                u32_value(key, value, &LEAF_CHUNK)?,
            ),
            "contextThreshold" => {
                let (f, clamped) = fraction(key, value)?;
                // At 0 every turn would be "over threshold": a full sweep on every turn.
                if f <= 0.0 {
                    return Err(Error::config(
                        key,
                        format!(
                            "must be greater than 0 (a fraction of the token budget), got {value}"
                        ),
                    ));
                }
                self.context_threshold = f;
                clamped
            }
            "leafBudgetHeadroomFactor" => {
                set(&mut self.leaf_budget_headroom_factor, fraction(key, value)?)
            }
            "leafSkipReductionThreshold" => set(
                &mut self.leaf_skip_reduction_threshold,
                fraction(key, value)?,
            ),
            "condensedFanout" => set(&mut self.condensed_fanout, u32_value(key, value, &FANOUT)?),
            "leafTargetTokens" => set(
                &mut self.leaf_target_tokens,
                u32_value(key, value, &TARGET)?,
            ),
            "condensedTargetTokens" => set(
                &mut self.condensed_target_tokens,
                u32_value(key, value, &TARGET)?,
            ),
            "maxFailuresBeforeBreaker" => set(
                &mut self.max_failures_before_breaker,
                u32_value(key, value, &BREAKER)?,
            ),
            "backoffBaseMs" => set(&mut self.backoff_base_ms, int_value(key, value, &BACKOFF)?),
            "backoffMaxMs" => set(&mut self.backoff_max_ms, int_value(key, value, &BACKOFF)?),
            _ => return Ok(None),
        };
        Ok(Some(clamped))
    }

    /// The fresh tail as chunk selection applies it.
    pub fn tail_rule(&self) -> super::TailRule {
        super::TailRule {
            count: self.fresh_tail_count,
            max_tokens: self.fresh_tail_max_tokens,
        }
    }

    /// The retry policy. A maximum below the base is read as "no growth" rather than an error,
    /// because the two keys are applied one at a time and either order must work.
    /// The leaf chunk's size limits: at most `leaf_chunk_tokens`, at least the payoff minimum.
    pub fn chunk_size(&self) -> super::chunk_size::ChunkSize {
        super::chunk_size::ChunkSize {
            max_tokens: self.leaf_chunk_tokens,
            min_tokens: self.leaf_chunk_min_tokens.min(self.leaf_chunk_tokens),
        }
    }

    /// The retry timing these settings give.
    pub fn backoff_policy(&self) -> BackoffPolicy {
        BackoffPolicy {
            base_ms: self.backoff_base_ms,
            max_ms: self.backoff_max_ms.max(self.backoff_base_ms),
            breaker_after: self.max_failures_before_breaker.max(1),
        }
    }
}

fn set<T>(slot: &mut T, (value, clamped): (T, bool)) -> bool {
    *slot = value;
    clamped
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_match_the_documented_values() {
        let c = CompactionConfig::default();
        assert_eq!(
            (c.fresh_tail_count, c.leaf_chunk_tokens, c.condensed_fanout),
            (32, 20_000, 4)
        );
        assert_eq!(
            (
                c.context_threshold,
                c.leaf_budget_headroom_factor,
                c.leaf_skip_reduction_threshold
            ),
            (0.75, 0.8, 0.05)
        );
        assert_eq!(
            (
                c.leaf_target_tokens,
                c.condensed_target_tokens,
                c.max_failures_before_breaker
            ),
            (1_200, 2_000, 3)
        );
        assert_eq!((c.backoff_base_ms, c.backoff_max_ms), (30_000, 3_600_000));
    }

    #[test]
    fn every_listed_key_is_applied_and_other_keys_are_not_ours() {
        let mut c = CompactionConfig::default();
        for key in KEYS {
            let value = if key.contains("Threshold") || key.contains("Factor") {
                json!(0.5)
            } else {
                json!(5000)
            };
            assert!(c.apply_key(key, &value).unwrap().is_some(), "{key}");
        }
        assert_eq!(c.apply_key("dbPath", &json!("/x")).unwrap(), None);
        assert_eq!(c.apply_key("freshtailcount", &json!(3)).unwrap(), None);
    }

    #[test]
    fn valid_values_are_applied_unclamped() {
        let mut c = CompactionConfig::default();
        assert_eq!(
            c.apply_key("freshTailCount", &json!(8)).unwrap(),
            Some(false)
        );
        assert_eq!(
            c.apply_key("leafBudgetHeadroomFactor", &json!(0)).unwrap(),
            Some(false)
        );
        assert_eq!(
            c.apply_key("leafSkipReductionThreshold", &json!(0.1))
                .unwrap(),
            Some(false)
        );
        assert_eq!(
            c.apply_key("contextThreshold", &json!(1)).unwrap(),
            Some(false)
        );
        assert_eq!(
            (
                c.fresh_tail_count,
                c.leaf_budget_headroom_factor,
                c.context_threshold
            ),
            (8, 0.0, 1.0)
        );
    }

    #[test]
    fn out_of_range_fractions_are_clamped_to_zero_one_and_reported() {
        let mut c = CompactionConfig::default();
        assert_eq!(
            c.apply_key("leafBudgetHeadroomFactor", &json!(1.7))
                .unwrap(),
            Some(true)
        );
        assert_eq!(c.leaf_budget_headroom_factor, 1.0);
        assert_eq!(
            c.apply_key("leafSkipReductionThreshold", &json!(-0.2))
                .unwrap(),
            Some(true)
        );
        assert_eq!(c.leaf_skip_reduction_threshold, 0.0);
        assert_eq!(
            c.apply_key("contextThreshold", &json!(3)).unwrap(),
            Some(true)
        );
        assert_eq!(c.context_threshold, 1.0);
    }

    #[test]
    fn out_of_range_integers_are_clamped_and_reported() {
        let mut c = CompactionConfig::default();
        assert_eq!(
            c.apply_key("leafChunkTokens", &json!(10)).unwrap(),
            Some(true)
        );
        assert_eq!(c.leaf_chunk_tokens, 1_000);
        assert_eq!(
            c.apply_key("freshTailCount", &json!(0)).unwrap(),
            Some(true)
        );
        assert_eq!(c.fresh_tail_count, 1);
        assert_eq!(
            c.apply_key("backoffMaxMs", &json!(1e30)).unwrap(),
            Some(true)
        );
        assert_eq!(c.backoff_max_ms, 7 * 24 * 3_600_000);
    }

    #[test]
    fn wrong_types_and_meaningless_values_are_errors_naming_the_key() {
        for (key, bad) in [
            ("freshTailCount", json!("32")),
            ("freshTailCount", json!(-1)),
            ("leafChunkTokens", json!(0)),
            ("leafChunkTokens", json!(2.5)),
            ("contextThreshold", json!(0)),
            ("contextThreshold", json!(-0.5)),
            ("contextThreshold", json!(null)),
            ("leafBudgetHeadroomFactor", json!(true)),
            ("leafSkipReductionThreshold", json!([0.1])),
            ("condensedFanout", json!(1)),
            ("maxFailuresBeforeBreaker", json!(0)),
            ("backoffBaseMs", json!({"ms": 5})),
        ] {
            let mut c = CompactionConfig::default();
            let err = c.apply_key(key, &bad).unwrap_err();
            assert!(
                err.to_string().contains(&format!("`{key}`")),
                "{key}={bad}: {err}"
            );
            assert_eq!(
                c,
                CompactionConfig::default(),
                "a rejected value must leave the config untouched"
            );
        }
    }

    #[test]
    fn backoff_policy_tolerates_a_max_below_the_base() {
        let mut c = CompactionConfig::default();
        c.apply_key("backoffBaseMs", &json!(60_000)).unwrap();
        c.apply_key("backoffMaxMs", &json!(5_000)).unwrap();
        let p = c.backoff_policy();
        assert_eq!((p.base_ms, p.max_ms, p.breaker_after), (60_000, 60_000, 3));
    }
}
