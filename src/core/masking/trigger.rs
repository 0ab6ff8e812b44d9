//! Whether a batch of stubs is worth its prompt-cache break. Stubbing rewrites the view from the
//! first stubbed item on, so the provider's cached prefix ends there and everything after it is
//! written to the cache again (at 12.5× the price of reading it, under the prices in
//! docs/summarization.md). A batch pays for that when the tokens it takes out of every later
//! call are worth the tokens it makes the next call re-write.
//!
//! Rules, in order (the first that applies decides), the same shape as the leaf trigger (seed 05):
//! 1. masking is switched off (`toolOutputStubs: false`) → no stubs, no excerpts (`disabled`);
//! 2. no candidate → no stubs (`nothing_to_stub`);
//! 3. budget pressure: the context (after this turn, and after any huge-message excerpts) has
//!    reached the leaf trigger's pressure line → **stub, whatever the cache** (`budget_pressure`):
//!    stubbing is what keeps a summary from being asked for;
//! 4. the batch saves at least `stubBatchRatio` × the tokens it re-writes → stub
//!    (`pays_for_cache_break`);
//! 5. otherwise wait (`too_small_for_cache_break`): candidates gather until a batch pays.
//!
//! Huge messages are excerpted whenever masking is on, independently of these rules: a message
//! that crowds the fresh tail out is a budget problem now, and it is new to the cache anyway.
//!
//! Pure arithmetic on numbers the caller measured; the decision carries every input so the
//! engine records it as is.

use serde::Serialize;

use super::workset::WorkingSetCounts;

/// Everything the decision looks at, recorded verbatim in its telemetry.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MaskInput {
    /// Masking is switched on (`toolOutputStubs`).
    pub enabled: bool,
    /// Old tool outputs that could be stubbed.
    pub candidates: u32,
    /// Tokens their stubs would take out of the view.
    pub saved_tokens: u64,
    /// Tokens from the first candidate to the end of the context, after the batch.
    pub rewritten_tokens: u64,
    /// Huge messages to excerpt now.
    pub huge: u32,
    /// The context's tokens after this turn and after the excerpts.
    pub context_tokens: u64,
    /// Where budget pressure starts (the leaf trigger's headroom floor, or its ceiling), when a
    /// budget is known.
    pub pressure_line: Option<u64>,
    /// `stubBatchRatio`: the share of re-written tokens a batch must save to be worth it.
    pub batch_ratio: f64,
    /// What the working set kept whole and stubbed in this plan (`super::workset`).
    pub working_set: WorkingSetCounts,
}

/// Why the decision came out as it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MaskReason {
    /// Masking is switched off (rule 1).
    Disabled,
    /// No candidate (rule 2).
    NothingToStub,
    /// The context has reached the pressure line (rule 3).
    BudgetPressure,
    /// The batch saves enough to pay for the re-write (rule 4).
    PaysForCacheBreak,
    /// The batch saves too little; candidates gather (rule 5).
    TooSmallForCacheBreak,
}

impl MaskReason {
    /// Stable name for telemetry and logs; equal to the serialized form.
    pub fn name(self) -> &'static str {
        match self {
            MaskReason::Disabled => "disabled",
            MaskReason::NothingToStub => "nothing_to_stub",
            MaskReason::BudgetPressure => "budget_pressure",
            MaskReason::PaysForCacheBreak => "pays_for_cache_break",
            MaskReason::TooSmallForCacheBreak => "too_small_for_cache_break",
        }
    }

    /// One sentence for a human reading the log.
    pub fn sentence(self) -> &'static str {
        match self {
            MaskReason::Disabled => "tool-output stubs are switched off",
            MaskReason::NothingToStub => "no old tool output is waiting to be stubbed",
            MaskReason::BudgetPressure => {
                "the context is near its budget, which overrides the cache: stubs before summaries"
            }
            MaskReason::PaysForCacheBreak => {
                "the stubs save enough to pay for re-writing the cached prompt after them"
            }
            MaskReason::TooSmallForCacheBreak => {
                "the stubs would save too little to pay for re-writing the cached prompt after them"
            }
        }
    }
}

/// The decision, with everything needed to explain it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MaskDecision {
    /// Stub the candidates now.
    pub stub: bool,
    /// Excerpt the huge messages now.
    pub excerpt_huge: bool,
    /// The rule that decided.
    pub reason: MaskReason,
    /// The context has reached the pressure line.
    pub budget_pressure: bool,
    /// Every input, as received.
    pub inputs: MaskInput,
}

impl MaskDecision {
    /// A one-line log message, e.g. `tool-output stubs: wait (too_small_for_cache_break): ...`.
    pub fn log_line(&self) -> String {
        let verdict = if self.stub { "stub" } else { "wait" };
        let i = &self.inputs;
        format!(
            "tool-output stubs: {verdict} ({}): {}; {} candidates save ~{} tokens, re-writing ~{}; {} huge messages; working set: {} kept whole (~{} tokens), {} stubbed for room, {} superseded reads",
            self.reason.name(),
            self.reason.sentence(),
            i.candidates,
            i.saved_tokens,
            i.rewritten_tokens,
            i.huge,
            i.working_set.kept,
            i.working_set.kept_tokens,
            i.working_set.stubbed,
            i.working_set.superseded,
        )
    }

    /// Whether the batch changes anything.
    pub fn applies(&self) -> bool {
        self.stub || self.excerpt_huge
    }
}

/// Decides (see the module doc for the rules).
pub fn decide(input: &MaskInput) -> MaskDecision {
    let budget_pressure = input
        .pressure_line
        .is_some_and(|line| input.context_tokens >= line);
    let ratio = if input.batch_ratio.is_finite() {
        input.batch_ratio.max(0.0)
    } else {
        1.0
    };
    let reason = if !input.enabled {
        MaskReason::Disabled
    } else if input.candidates == 0 || input.saved_tokens == 0 {
        MaskReason::NothingToStub
    } else if budget_pressure {
        MaskReason::BudgetPressure
    } else if input.saved_tokens as f64 >= ratio * input.rewritten_tokens as f64 {
        MaskReason::PaysForCacheBreak
    } else {
        MaskReason::TooSmallForCacheBreak
    };
    let stub = matches!(
        reason,
        MaskReason::BudgetPressure | MaskReason::PaysForCacheBreak
    );
    MaskDecision {
        stub,
        excerpt_huge: input.enabled && input.huge > 0,
        reason,
        budget_pressure,
        inputs: *input,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(saved: u64, rewritten: u64, context: u64) -> MaskInput {
        MaskInput {
            enabled: true,
            candidates: 3,
            saved_tokens: saved,
            rewritten_tokens: rewritten,
            huge: 0,
            context_tokens: context,
            pressure_line: Some(60_000),
            batch_ratio: 1.0,
            working_set: WorkingSetCounts::default(),
        }
    }

    #[test]
    fn a_batch_runs_when_it_saves_what_it_rewrites_and_waits_otherwise() {
        let d = decide(&input(12_000, 11_000, 30_000));
        assert_eq!(
            (d.stub, d.reason),
            (true, MaskReason::PaysForCacheBreak),
            "{}",
            d.log_line()
        );
        let d = decide(&input(4_000, 11_000, 30_000));
        assert_eq!(
            (d.stub, d.reason),
            (false, MaskReason::TooSmallForCacheBreak),
            "{}",
            d.log_line()
        );
        let mut eager = input(4_000, 11_000, 30_000);
        eager.batch_ratio = 0.0;
        assert!(decide(&eager).stub, "ratio 0 stubs on every turn");
    }

    #[test]
    fn budget_pressure_always_wins_over_the_cache() {
        let d = decide(&input(400, 50_000, 60_000));
        assert_eq!(
            (d.stub, d.reason, d.budget_pressure),
            (true, MaskReason::BudgetPressure, true)
        );
        let mut no_budget = input(400, 50_000, 900_000);
        no_budget.pressure_line = None;
        assert_eq!(
            decide(&no_budget).reason,
            MaskReason::TooSmallForCacheBreak,
            "no budget, no pressure"
        );
    }

    #[test]
    fn nothing_to_stub_and_disabled_change_nothing_but_huge_messages_are_excerpted_when_enabled() {
        let mut i = input(0, 0, 70_000);
        i.candidates = 0;
        i.huge = 1;
        let d = decide(&i);
        assert_eq!(
            (d.stub, d.excerpt_huge, d.reason),
            (false, true, MaskReason::NothingToStub)
        );
        assert!(d.applies());
        i.enabled = false;
        let d = decide(&i);
        assert_eq!(
            (d.stub, d.excerpt_huge, d.reason),
            (false, false, MaskReason::Disabled)
        );
        assert!(!d.applies());
    }

    #[test]
    fn telemetry_serializes_the_reason_by_its_stable_name_with_every_input() {
        let d = decide(&input(4_000, 11_000, 30_000));
        let json = serde_json::to_value(&d).unwrap();
        assert_eq!(json["reason"], d.reason.name());
        for key in [
            "enabled",
            "candidates",
            "savedTokens",
            "rewrittenTokens",
            "huge",
            "contextTokens",
            "pressureLine",
            "batchRatio",
            "workingSet",
        ] {
            assert!(json["inputs"].get(key).is_some(), "missing input {key}");
        }
        for reason in [
            MaskReason::Disabled,
            MaskReason::NothingToStub,
            MaskReason::BudgetPressure,
            MaskReason::PaysForCacheBreak,
            MaskReason::TooSmallForCacheBreak,
        ] {
            assert_eq!(serde_json::to_value(reason).unwrap(), reason.name());
            assert!(!reason.sentence().is_empty());
        }
        assert!(d
            .log_line()
            .starts_with("tool-output stubs: wait (too_small_for_cache_break)"));
    }
}
