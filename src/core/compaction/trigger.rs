//! When to compact. Two independent decisions:
//!
//! - the **leaf trigger** (seed 05), evaluated after every turn: is one incremental leaf pass
//!   worth the prompt-cache miss it causes? It returns the decision, a reason, and every input,
//!   so the engine can record it in `compaction_events` and log it as is;
//! - the **threshold** decision: is the assembled context over `contextThreshold × tokenBudget`,
//!   so that a full sweep must run until it is back under the target?
//!
//! Pure arithmetic on numbers the caller measured; this module must not look at messages.
//!
//! Rules, in order (the first that applies decides):
//! 1. nothing stored at all → no (`empty_conversation`);
//! 2. the per-pass reduction, `min(raw outside the tail, leafChunkTokens)`, is not positive → no;
//! 3. raw tokens outside the fresh tail are below `leafChunkTokens` → no;
//! 4. headroom gate: assembled below `factor × threshold × budget` → no (factor 0 disables it);
//! 5. budget pressure → **yes, whatever the cache skip would say**;
//! 6. cache-aware skip: reduction below `skip × assembled` → no (skip 0 disables it);
//! 7. otherwise yes.
//!
//! "Assembled" is `max(stored, live)`: stored counts lag right after ingestion, and a stale low
//! count must never suppress a needed compaction.
//!
//! Budget pressure starts where the headroom gate ends. Seed 05's scenario C (700K assembled of
//! a 1M budget, ceiling 750K) must compact: a 5% skip of a huge context would otherwise starve
//! compaction inside the band just below the ceiling. With the gate disabled (factor 0) or no
//! budget known, pressure means reaching the ceiling itself (`threshold × budget`), and the cache
//! skip governs everything below it; that keeps factor 0 from counting as permanent pressure.

use serde::Serialize;

use super::config::CompactionConfig;

/// Everything the leaf trigger looks at, recorded verbatim in its telemetry. Token counts are
/// signed so a broken caller-side count (negative) is reported as received, then read as zero.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LeafTriggerInput {
    /// Tokens of raw messages outside the fresh tail.
    pub raw_tokens_outside_tail: i64,
    /// `leafChunkTokens`: the most one leaf pass summarizes.
    pub leaf_chunk_tokens: i64,
    /// The assembled context's tokens by the stored counts.
    pub stored_assembled_tokens: i64,
    /// The host's live count of the prompt, when it reports one.
    pub live_assembled_tokens: Option<i64>,
    /// The host's token budget for the context, when known.
    pub token_budget: Option<i64>,
    /// `contextThreshold`: the fraction of the budget above which a full sweep runs.
    pub context_threshold: f64,
    /// `leafBudgetHeadroomFactor`, from 0 to 1; 0 disables the headroom gate.
    pub headroom_factor: f64,
    /// `leafSkipReductionThreshold`, from 0 to 1; 0 disables the cache-aware skip.
    pub skip_reduction_threshold: f64,
}

impl LeafTriggerInput {
    /// Inputs with the thresholds taken from `config`.
    pub fn new(
        config: &CompactionConfig,
        raw_tokens_outside_tail: i64,
        stored: i64,
        live: Option<i64>,
        budget: Option<i64>,
    ) -> Self {
        LeafTriggerInput {
            raw_tokens_outside_tail,
            leaf_chunk_tokens: i64::from(config.leaf_chunk_tokens),
            stored_assembled_tokens: stored,
            live_assembled_tokens: live,
            token_budget: budget,
            context_threshold: config.context_threshold,
            headroom_factor: config.leaf_budget_headroom_factor,
            skip_reduction_threshold: config.leaf_skip_reduction_threshold,
        }
    }
}

/// Why the leaf trigger decided as it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LeafReason {
    /// Nothing is stored yet (rule 1).
    EmptyConversation,
    /// A leaf pass would remove no tokens (rule 2).
    NoReduction,
    /// Raw history outside the fresh tail is smaller than one leaf chunk (rule 3).
    BelowLeafChunk,
    /// The context is below the headroom gate (rule 4).
    BelowHeadroom,
    /// The context has reached the pressure line, whatever the cache skip says (rule 5).
    BudgetPressure,
    /// One pass would remove too small a share of the context for a cache miss (rule 6).
    ReductionTooSmall,
    /// A full leaf chunk is ready and worth a cache miss (rule 7).
    LeafChunkReady,
}

impl LeafReason {
    /// Stable name for telemetry and logs; equal to the serialized form.
    pub fn name(self) -> &'static str {
        match self {
            LeafReason::EmptyConversation => "empty_conversation",
            LeafReason::NoReduction => "no_reduction",
            LeafReason::BelowLeafChunk => "below_leaf_chunk",
            LeafReason::BelowHeadroom => "below_headroom",
            LeafReason::BudgetPressure => "budget_pressure",
            LeafReason::ReductionTooSmall => "reduction_too_small",
            LeafReason::LeafChunkReady => "leaf_chunk_ready",
        }
    }

    /// One sentence for a human reading the log.
    pub fn sentence(self) -> &'static str {
        match self {
            LeafReason::EmptyConversation => "nothing is stored yet, so there is nothing to compact",
            LeafReason::NoReduction => "a leaf pass would remove no tokens",
            LeafReason::BelowLeafChunk => "raw history outside the fresh tail is smaller than one leaf chunk",
            LeafReason::BelowHeadroom => "the context is well under its budget, so compaction would only cost a prompt-cache miss",
            LeafReason::BudgetPressure => "the context is near its budget ceiling, which overrides the cache-aware skip",
            LeafReason::ReductionTooSmall => "one pass would remove too small a share of the context to be worth a prompt-cache miss",
            LeafReason::LeafChunkReady => "a full leaf chunk is ready and removing it is worth a prompt-cache miss",
        }
    }
}

/// The leaf trigger's answer, with everything needed to explain it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LeafDecision {
    /// Run one leaf pass now.
    pub compact: bool,
    /// The rule that decided.
    pub reason: LeafReason,
    /// Tokens one leaf pass would take out of the raw history.
    pub estimated_reduction: u64,
    /// `max(stored, live)`.
    pub assembled_tokens: u64,
    /// `threshold × budget`, when a budget is known.
    pub ceiling: Option<u64>,
    /// `factor × ceiling`, when the headroom gate is active.
    pub headroom_floor: Option<u64>,
    /// The assembled context has reached the pressure line (the headroom floor, or the ceiling).
    pub budget_pressure: bool,
    /// Every input, as received.
    pub inputs: LeafTriggerInput,
}

impl LeafDecision {
    /// A one-line log message, e.g. `leaf trigger: skip (below_headroom): ...`.
    pub fn log_line(&self) -> String {
        let verdict = if self.compact { "compact" } else { "skip" };
        let ceiling = self
            .ceiling
            .map_or_else(|| "none".to_owned(), |c| c.to_string());
        format!(
            "leaf trigger: {verdict} ({}): {}; assembled {} tokens, ceiling {ceiling}, one pass removes ~{}",
            self.reason.name(),
            self.reason.sentence(),
            self.assembled_tokens,
            self.estimated_reduction
        )
    }
}

fn non_negative(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

/// Callers should pass validated config; this keeps a bad value from turning into NaN arithmetic.
fn unit_interval(f: f64) -> f64 {
    if f.is_finite() {
        f.clamp(0.0, 1.0)
    } else {
        0.0
    }
}

fn usable_threshold(f: f64) -> f64 {
    if f.is_finite() && f > 0.0 {
        f.min(1.0)
    } else {
        1.0
    }
}

fn scaled(tokens: u64, fraction: f64) -> u64 {
    // f64 carries integers exactly up to 2^53, far beyond any token budget.
    (tokens as f64 * fraction).floor() as u64
}

/// Evaluates the leaf trigger (see the module doc for the rules).
pub fn evaluate_leaf_trigger(input: &LeafTriggerInput) -> LeafDecision {
    let raw = input.raw_tokens_outside_tail;
    let reduction_signed = raw.min(input.leaf_chunk_tokens);
    let estimated_reduction = non_negative(reduction_signed);
    let stored = non_negative(input.stored_assembled_tokens);
    let live = input.live_assembled_tokens.map_or(0, non_negative);
    let assembled = stored.max(live);
    let budget = input.token_budget.map(non_negative).filter(|b| *b > 0);
    let threshold = usable_threshold(input.context_threshold);
    let factor = unit_interval(input.headroom_factor);
    let skip = unit_interval(input.skip_reduction_threshold);

    let ceiling = budget.map(|b| scaled(b, threshold));
    let headroom_floor = ceiling.filter(|_| factor > 0.0).map(|c| scaled(c, factor));
    let pressure_line = headroom_floor.or(ceiling);
    let budget_pressure = pressure_line.is_some_and(|line| assembled >= line);

    let reason = if assembled == 0 && raw <= 0 {
        LeafReason::EmptyConversation
    } else if reduction_signed <= 0 {
        LeafReason::NoReduction
    } else if raw < input.leaf_chunk_tokens {
        LeafReason::BelowLeafChunk
    } else if headroom_floor.is_some_and(|floor| assembled < floor) {
        LeafReason::BelowHeadroom
    } else if budget_pressure {
        LeafReason::BudgetPressure
    } else if skip > 0.0 && (estimated_reduction as f64) < skip * assembled as f64 {
        LeafReason::ReductionTooSmall
    } else {
        LeafReason::LeafChunkReady
    };
    let compact = matches!(
        reason,
        LeafReason::BudgetPressure | LeafReason::LeafChunkReady
    );
    LeafDecision {
        compact,
        reason,
        estimated_reduction,
        assembled_tokens: assembled,
        ceiling,
        headroom_floor,
        budget_pressure,
        inputs: *input,
    }
}

/// The token count a full sweep brings the context down to: `threshold × budget`.
pub fn sweep_target(budget: u64, threshold: f64) -> u64 {
    scaled(budget, usable_threshold(threshold))
}

/// Whether the context is over the threshold, so a full sweep must run until it is at or under
/// [`sweep_target`].
pub fn needs_full_sweep(assembled: u64, budget: u64, threshold: f64) -> bool {
    assembled > sweep_target(budget, threshold)
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: i64 = 1_000;

    fn input(raw: i64, chunk: i64, assembled: i64, budget: Option<i64>) -> LeafTriggerInput {
        LeafTriggerInput {
            raw_tokens_outside_tail: raw,
            leaf_chunk_tokens: chunk,
            stored_assembled_tokens: assembled,
            live_assembled_tokens: None,
            token_budget: budget,
            context_threshold: 0.75,
            headroom_factor: 0.8,
            skip_reduction_threshold: 0.05,
        }
    }

    #[test]
    fn leaf_trigger_scenarios_a_to_e_match_seed_05() {
        // (scenario, raw outside tail, leafChunkTokens, assembled, budget, expected compact, reason)
        let table = [
            (
                "A: original issue, 2K leaf chunks",
                60 * K,
                2 * K,
                150 * K,
                200 * K,
                true,
                LeafReason::BudgetPressure,
            ),
            (
                "B: small context, genuine pressure",
                40 * K,
                20 * K,
                90 * K,
                128 * K,
                true,
                LeafReason::BudgetPressure,
            ),
            (
                "C: 1M context at 93% of its ceiling",
                300 * K,
                20 * K,
                700 * K,
                1_000 * K,
                true,
                LeafReason::BudgetPressure,
            ),
            (
                "D: orchestrator with headroom",
                25 * K,
                20 * K,
                40 * K,
                200 * K,
                false,
                LeafReason::BelowHeadroom,
            ),
            (
                "E: rapid tool use at the ceiling",
                80 * K,
                20 * K,
                150 * K,
                200 * K,
                true,
                LeafReason::BudgetPressure,
            ),
        ];
        for (name, raw, chunk, assembled, budget, compact, reason) in table {
            let d = evaluate_leaf_trigger(&input(raw, chunk, assembled, Some(budget)));
            assert_eq!(
                (d.compact, d.reason),
                (compact, reason),
                "{name}: {}",
                d.log_line()
            );
        }
    }

    #[test]
    fn budget_pressure_overrides_cache_skip() {
        // One pass removes 20K of 700K (2.9% < 5%): the cache skip alone would say no.
        let d = evaluate_leaf_trigger(&input(300 * K, 20 * K, 700 * K, Some(1_000 * K)));
        assert!(d.compact && d.budget_pressure, "{}", d.log_line());
        // The same with the headroom gate disabled: pressure is reaching the ceiling itself.
        let mut no_gate = input(300 * K, 20 * K, 750 * K, Some(1_000 * K));
        no_gate.headroom_factor = 0.0;
        let d = evaluate_leaf_trigger(&no_gate);
        assert_eq!((d.compact, d.reason), (true, LeafReason::BudgetPressure));
    }

    #[test]
    fn cache_aware_skip_applies_without_pressure() {
        let mut i = input(300 * K, 20 * K, 700 * K, None);
        assert_eq!(
            evaluate_leaf_trigger(&i).reason,
            LeafReason::ReductionTooSmall
        );
        i.skip_reduction_threshold = 0.0;
        assert_eq!(
            evaluate_leaf_trigger(&i).reason,
            LeafReason::LeafChunkReady,
            "0 disables the skip"
        );
        i.skip_reduction_threshold = 0.02;
        assert!(evaluate_leaf_trigger(&i).compact, "20K is above 2% of 700K");
    }

    #[test]
    fn below_leaf_chunk_never_compacts_even_under_pressure() {
        let d = evaluate_leaf_trigger(&input(19_999, 20 * K, 190 * K, Some(200 * K)));
        assert_eq!((d.compact, d.reason), (false, LeafReason::BelowLeafChunk));
    }

    #[test]
    fn empty_conversation_does_not_compact() {
        let d = evaluate_leaf_trigger(&input(0, 20 * K, 0, Some(200 * K)));
        assert_eq!(
            (d.compact, d.reason),
            (false, LeafReason::EmptyConversation)
        );
        assert_eq!(d.estimated_reduction, 0);
    }

    #[test]
    fn negative_reduction_does_not_compact_and_is_reported_as_received() {
        let d = evaluate_leaf_trigger(&input(-5_000, 20 * K, 150 * K, Some(200 * K)));
        assert_eq!((d.compact, d.reason), (false, LeafReason::NoReduction));
        assert_eq!(d.inputs.raw_tokens_outside_tail, -5_000);
        let zero_chunk = evaluate_leaf_trigger(&input(50 * K, 0, 150 * K, Some(200 * K)));
        assert_eq!(
            (zero_chunk.compact, zero_chunk.reason),
            (false, LeafReason::NoReduction)
        );
    }

    #[test]
    fn headroom_factor_at_or_above_one_is_clamped_to_the_ceiling() {
        let mut i = input(80 * K, 20 * K, 149 * K, Some(200 * K));
        i.headroom_factor = 7.5;
        let d = evaluate_leaf_trigger(&i);
        assert_eq!(
            d.headroom_floor,
            Some(150 * K as u64),
            "clamped to 1.0 × ceiling"
        );
        assert_eq!((d.compact, d.reason), (false, LeafReason::BelowHeadroom));
        i.stored_assembled_tokens = 150 * K;
        assert_eq!(
            evaluate_leaf_trigger(&i).reason,
            LeafReason::BudgetPressure,
            "still compacts at the ceiling"
        );
    }

    #[test]
    fn headroom_factor_zero_disables_the_gate_without_faking_pressure() {
        let mut i = input(25 * K, 20 * K, 40 * K, Some(200 * K));
        i.headroom_factor = 0.0;
        let d = evaluate_leaf_trigger(&i);
        assert_eq!(d.headroom_floor, None);
        assert!(!d.budget_pressure);
        assert_eq!(
            (d.compact, d.reason),
            (true, LeafReason::LeafChunkReady),
            "20K of 40K is worth it"
        );
        i.raw_tokens_outside_tail = 500 * K;
        i.stored_assembled_tokens = 600 * K;
        i.token_budget = Some(1_000 * K);
        assert_eq!(
            evaluate_leaf_trigger(&i).reason,
            LeafReason::ReductionTooSmall,
            "no false pressure under the ceiling"
        );
    }

    #[test]
    fn undefined_budget_skips_headroom_and_pressure() {
        let d = evaluate_leaf_trigger(&input(25 * K, 20 * K, 40 * K, None));
        assert_eq!(
            (d.ceiling, d.headroom_floor, d.budget_pressure),
            (None, None, false)
        );
        assert_eq!((d.compact, d.reason), (true, LeafReason::LeafChunkReady));
        let zero_budget = evaluate_leaf_trigger(&input(25 * K, 20 * K, 40 * K, Some(0)));
        assert_eq!(zero_budget.ceiling, None, "a zero budget is no budget");
    }

    #[test]
    fn per_pass_reduction_is_capped_at_one_leaf_chunk() {
        let d = evaluate_leaf_trigger(&input(900 * K, 20 * K, 950 * K, None));
        assert_eq!(d.estimated_reduction, 20 * K as u64);
    }

    #[test]
    fn stale_stored_count_does_not_suppress_compaction_when_live_is_higher() {
        let mut i = input(80 * K, 20 * K, 40 * K, Some(200 * K));
        assert_eq!(evaluate_leaf_trigger(&i).reason, LeafReason::BelowHeadroom);
        i.live_assembled_tokens = Some(160 * K);
        let d = evaluate_leaf_trigger(&i);
        assert_eq!(
            (d.assembled_tokens, d.reason),
            (160 * K as u64, LeafReason::BudgetPressure)
        );
        i.live_assembled_tokens = Some(-1);
        assert_eq!(
            evaluate_leaf_trigger(&i).assembled_tokens,
            40 * K as u64,
            "a negative live count is ignored"
        );
    }

    #[test]
    fn telemetry_serializes_reason_by_its_stable_name_with_every_input() {
        let d = evaluate_leaf_trigger(&input(25 * K, 20 * K, 40 * K, Some(200 * K)));
        let json = serde_json::to_value(&d).unwrap();
        assert_eq!(json["reason"], d.reason.name());
        assert_eq!(json["compact"], false);
        for key in [
            "rawTokensOutsideTail",
            "leafChunkTokens",
            "storedAssembledTokens",
            "liveAssembledTokens",
            "tokenBudget",
            "contextThreshold",
            "headroomFactor",
            "skipReductionThreshold",
        ] {
            assert!(json["inputs"].get(key).is_some(), "missing input {key}");
        }
        for reason in [
            LeafReason::EmptyConversation,
            LeafReason::NoReduction,
            LeafReason::BelowLeafChunk,
            LeafReason::BelowHeadroom,
            LeafReason::BudgetPressure,
            LeafReason::ReductionTooSmall,
            LeafReason::LeafChunkReady,
        ] {
            assert_eq!(serde_json::to_value(reason).unwrap(), reason.name());
            assert!(!reason.sentence().is_empty());
        }
        assert!(d
            .log_line()
            .starts_with("leaf trigger: skip (below_headroom)"));
    }

    #[test]
    fn threshold_path_sweeps_until_under_target() {
        assert_eq!(sweep_target(200_000, 0.75), 150_000);
        assert!(!needs_full_sweep(150_000, 200_000, 0.75));
        assert!(needs_full_sweep(150_001, 200_000, 0.75));
        assert!(
            !needs_full_sweep(0, 0, 0.75),
            "an empty context with no budget needs nothing"
        );
        assert_eq!(
            sweep_target(200_000, f64::NAN),
            200_000,
            "a broken threshold falls back to the whole budget"
        );
    }
}
