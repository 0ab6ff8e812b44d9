//! Compaction sizes that follow the view budget. The configured values (a 32-message fresh
//! tail, 20,000-token leaf chunks, 1,200-token summaries) suit a 128K window; at 8K they would
//! protect everything (nothing could ever be summarized) and ask for summaries larger than the
//! whole view. So every pass and every trigger decision works on a copy fitted to the budget:
//!
//! - the fresh tail keeps at most [`TAIL_SHARE`] of the budget (it always keeps the newest
//!   message), so summaries of the older history always have room in the view;
//! - a leaf chunk is at most half the budget, and at most half the window, so the summarization
//!   request itself fits the model;
//! - summaries target at most an eighth (leaf) or a sixth (condensed) of the budget, so a few of
//!   them plus the tail fit.
//!
//! Configured values are upper bounds: fitting only ever shrinks them.

use super::CompactionConfig;

/// The share of the view budget the fresh tail may keep.
pub const TAIL_SHARE: f64 = 0.4;
/// Smallest leaf chunk fitting ever asks for (smaller chunks make summaries no shorter).
pub const MIN_LEAF_CHUNK: u32 = 256;
const MIN_LEAF_TARGET: u32 = 64;
const MIN_CONDENSED_TARGET: u32 = 96;

fn share(budget: u32, fraction: f64) -> u32 {
    (f64::from(budget) * fraction).floor() as u32
}

/// `config` fitted to a view budget of `budget` tokens and, when known, the model's window.
pub fn fit(config: &CompactionConfig, budget: u32, window: Option<u32>) -> CompactionConfig {
    let mut fitted = config.clone();
    fitted.fresh_tail_max_tokens =
        u64::from(share(budget, TAIL_SHARE)).min(config.fresh_tail_max_tokens);
    let mut chunk = config
        .leaf_chunk_tokens
        .min((budget / 2).max(MIN_LEAF_CHUNK));
    if let Some(window) = window.filter(|w| *w > 0) {
        chunk = chunk.min((window / 2).max(MIN_LEAF_CHUNK));
    }
    fitted.leaf_chunk_tokens = chunk;
    fitted.leaf_chunk_min_tokens = config.leaf_chunk_min_tokens.min(chunk);
    fitted.leaf_target_tokens = config
        .leaf_target_tokens
        .min((budget / 8).max(MIN_LEAF_TARGET));
    fitted.condensed_target_tokens = config
        .condensed_target_tokens
        .min((budget / 6).max(MIN_CONDENSED_TARGET));
    fitted
}

/// [`fit`], with the leaf chunk's minimum raised to what the summarizer's answers showed they
/// need ([`super::retry::RetryState::chunk_min`]).
pub fn fit_for(
    config: &CompactionConfig,
    budget: u32,
    window: Option<u32>,
    retry: &super::RetryState,
) -> CompactionConfig {
    let mut fitted = fit(config, budget, window);
    fitted.leaf_chunk_min_tokens =
        retry.chunk_min(fitted.leaf_chunk_min_tokens, fitted.leaf_chunk_tokens);
    fitted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_budgets_keep_the_configured_sizes() {
        let config = CompactionConfig::default();
        let fitted = fit(&config, 100_000, Some(128_000));
        assert_eq!(fitted.leaf_chunk_tokens, config.leaf_chunk_tokens);
        assert_eq!(fitted.leaf_target_tokens, config.leaf_target_tokens);
        assert_eq!(
            fitted.condensed_target_tokens,
            config.condensed_target_tokens
        );
        assert_eq!(fitted.fresh_tail_max_tokens, 40_000);
        assert_eq!(fitted.fresh_tail_count, config.fresh_tail_count);
    }

    #[test]
    fn small_budgets_shrink_tail_chunks_and_summaries_so_summaries_have_room() {
        let fitted = fit(&CompactionConfig::default(), 1_600, Some(8_000));
        assert_eq!(fitted.fresh_tail_max_tokens, 640);
        assert_eq!(fitted.leaf_chunk_tokens, 800);
        assert_eq!(fitted.leaf_target_tokens, 200);
        assert_eq!(fitted.condensed_target_tokens, 266);
        assert!(
            fitted.fresh_tail_max_tokens
                + u64::from(fitted.condensed_target_tokens)
                + 2 * u64::from(fitted.leaf_target_tokens)
                <= 1_600
        );
    }

    #[test]
    fn the_summarization_request_fits_the_window_and_fitting_never_grows_a_value() {
        let mut config = CompactionConfig {
            leaf_target_tokens: 100,
            ..CompactionConfig::default()
        };
        config.leaf_chunk_tokens = 5_000;
        let fitted = fit(&config, 50_000, Some(6_000));
        assert_eq!(fitted.leaf_chunk_tokens, 3_000);
        assert_eq!(fitted.leaf_target_tokens, 100);
        let tiny = fit(&config, 0, None);
        assert_eq!(tiny.leaf_chunk_tokens, MIN_LEAF_CHUNK);
        assert_eq!(
            tiny.fresh_tail_max_tokens, 0,
            "the tail then keeps only the newest message"
        );
    }
}
