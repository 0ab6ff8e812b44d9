//! What a compaction job aims for, and the sizes it works with.
//!
//! - `maintain` (pending work) aims where the trigger said: one leaf pass, or the threshold
//!   target of the budget the trigger saw.
//! - `compact` aims for a context that fits the view budget of [`crate::core::accounting`].
//!   When the host says how many tokens it counts (`currentTokenCount`, OpenClaw's preflight
//!   projection or an overflowed prompt), "under target" is judged by the larger of its count
//!   and ours: a host count over its threshold means the view must shrink by the excess, and
//!   the excess over what we predicted is overhead we learn.
//!
//! Every job works on the compaction config fitted to its budget ([`fit`]), with the leaf chunk
//! halved after answers that were not summaries ([`RetryState::chunk_tokens`]).

use crate::core::compaction::fit::fit_for;
use crate::core::compaction::{sweep_target, CompactionConfig, RetryState};
use crate::engine::accounting::{host_limits, tokens_of};
use crate::engine::compaction::{CompactionMode, CompactionParams};
use crate::engine::Engine;
use crate::error::Result;
use crate::store::compaction::Pending;
use crate::store::conversations::Conversation;
use crate::store::Sql;

/// When a job is done.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Goal {
    /// One leaf pass, then a condensed pass if one is due.
    Pending,
    /// Until the active context is at or under this many tokens.
    Under(i64),
}

/// A job's aim, as planned at its start.
#[derive(Debug, Clone)]
pub(crate) struct Aim {
    pub goal: Goal,
    pub config: CompactionConfig,
    /// For `compact`: the view budget the job establishes, and the view before it (the view
    /// the host's count was based on), to report how far the prompt shrinks.
    pub view: Option<ViewAim>,
    /// The prompt's tokens by the larger of the host's count and ours when the host counted;
    /// else the active context's tokens.
    pub tokens_before: i64,
    /// Whether `tokens_before` is the host's count (so the report speaks in prompt tokens).
    pub host_counted: bool,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct ViewAim {
    pub budget: u32,
    pub before: u32,
}

impl<S: Sql> Engine<S> {
    /// Plans a job's aim; `None` when `maintain` has nothing pending.
    pub(crate) fn aim(
        &mut self,
        conversation: &Conversation,
        params: &CompactionParams,
        pending: Option<&Pending>,
        retry: &RetryState,
    ) -> Result<Option<Aim>> {
        let config = self.config.compaction.clone();
        let live = params
            .current_token_count
            .filter(|t| t.is_finite() && *t > 0.0)
            .map(|t| t.min(9e15) as i64);
        let ours = conversation.context_token_count;
        let fitted = |budget: u32, window: Option<u32>| fit_for(&config, budget, window, retry);
        match params.mode {
            CompactionMode::Pending => {
                let Some(pending) = pending else {
                    return Ok(None);
                };
                let facts = self.host_facts(conversation.id)?;
                let goal = if pending.work == "sweep" {
                    Goal::Under(
                        sweep_target(u64::from(pending.budget), config.context_threshold) as i64,
                    )
                } else {
                    Goal::Pending
                };
                Ok(Some(Aim {
                    goal,
                    config: fitted(pending.budget, facts.window),
                    view: None,
                    tokens_before: ours.max(live.unwrap_or(0)),
                    host_counted: false,
                }))
            }
            CompactionMode::Sweep => {
                let mut facts = self.host_facts(conversation.id)?;
                if let Some(window) = tokens_of(params.context_window) {
                    facts.window = Some(window);
                }
                host_limits(
                    params.max_output_tokens,
                    params.preflight_reserve_tokens,
                    params.host_estimate_safety,
                )
                .apply_to(&mut facts);
                let host_budget = self.prompt_budget(conversation, params.token_budget);
                let prompt = facts.last_prompt.unwrap_or(0);
                let mut budget = facts.view_budget(host_budget, prompt).tokens;
                // The view as the model would get it now, without compaction: what the host's
                // count (its last prompt plus the last reply and the new prompt) is based on.
                let before = u32::try_from(
                    self.views
                        .view(self.store.sql(), conversation, budget)?
                        .tokens(),
                )
                .unwrap_or(u32::MAX);
                let threshold = facts.window.and_then(|w| facts.preflight_threshold(w));
                if let (Some(count), Some(threshold), Some(window)) =
                    (live, threshold, facts.window)
                {
                    let count = u32::try_from(count).unwrap_or(u32::MAX);
                    if count >= threshold {
                        // The host sees the prompt over its threshold: the view must shrink by the excess.
                        let margin = window / 50;
                        let required = before.saturating_sub(count - threshold + margin);
                        if required < budget {
                            facts.learn_from_host_count(count, before);
                            budget = facts.view_budget(host_budget, prompt).tokens.min(required);
                        }
                    }
                }
                self.remember_facts(conversation.id, facts.clone());
                // In the host's units (the whole prompt) when it counted; else the context's tokens.
                let tokens_before = live.map_or(ours, |count| {
                    count.max(i64::from(facts.predicted_prompt(before)))
                });
                // Summaries aim below the view budget by the threshold, so the next turns have room.
                let goal =
                    Goal::Under(sweep_target(u64::from(budget), config.context_threshold) as i64);
                Ok(Some(Aim {
                    goal,
                    config: fitted(budget, facts.window),
                    view: Some(ViewAim { budget, before }),
                    tokens_before,
                    host_counted: live.is_some(),
                }))
            }
        }
    }
}
