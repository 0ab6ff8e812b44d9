//! The per-turn trigger: after a turn is stored, decide (cheaply, from running totals) whether
//! compaction is due, record the decision with every input in `compaction_events` (a run of
//! unchanged "skipped" decisions shares one row, counted), and leave the work pending for the
//! next `maintain`, which has the host's LLM. Never summarizes by itself.

use serde_json::json;

use super::tail_window::Stamp;
use crate::core::compaction::fit::fit_for;
use crate::core::compaction::{
    evaluate_leaf_trigger, needs_full_sweep, LeafTriggerInput, TailRule,
};
use crate::engine::params::TriggerReport;
use crate::engine::Engine;
use crate::error::Result;
use crate::store::compaction::{self as store, Event, Pending};
use crate::store::conversations::Conversation;
use crate::store::Sql;

/// What the trigger decided, for the caller's log.
#[derive(Debug, Clone, PartialEq)]
pub struct TriggerOutcome {
    /// "leaf", "sweep", or None when nothing is due.
    pub work: Option<&'static str>,
    /// One line on what the trigger decided and why, for the caller's log.
    pub log_line: String,
}

impl<S: Sql> Engine<S> {
    /// Evaluates the trigger for a conversation a turn was just stored in, as the caller's write
    /// transaction holds it (no read of the row), for the turn's report. `appended`: the token
    /// counts of the context items the turn appended, oldest first, when known (see
    /// [`super::tail_window`]).
    pub(crate) fn trigger_for(
        &mut self,
        conversation: &Conversation,
        appended: Option<&[i64]>,
        now_ms: i64,
    ) -> Result<TriggerReport> {
        let outcome = self.evaluate_trigger(conversation, appended, now_ms)?;
        Ok(TriggerReport {
            pending: outcome.work,
            log_line: outcome.log_line,
        })
    }

    /// Evaluates the trigger for a conversation and records the decision. Sizes follow the
    /// budget of the latest view (see [`crate::core::compaction::fit`]). `conversation` is the
    /// row as read in the caller's write transaction, which holds it: its compaction state is
    /// the stored one.
    pub(crate) fn evaluate_trigger(
        &mut self,
        conversation: &Conversation,
        appended: Option<&[i64]>,
        now_ms: i64,
    ) -> Result<TriggerOutcome> {
        let budget = self.views.budget(conversation.id);
        let window = self.host_facts(conversation.id)?.window;
        // From the row as this transaction read it (it holds the conversation): no read here.
        let (mut retry, stored_pending) = store::state_of(conversation)?;
        let config = match budget {
            Some(b) => fit_for(&self.config.compaction, b, window, &retry),
            None => self.config.compaction.clone(),
        };
        let tail = self.fresh_tail_tokens(conversation, config.tail_rule(), appended)?;
        let raw_outside_tail = conversation.context_raw_tokens() - tail;
        let input = LeafTriggerInput::new(
            &config,
            raw_outside_tail,
            conversation.context_token_count,
            None,
            budget.map(i64::from),
        );
        let decision = evaluate_leaf_trigger(&input);
        let sweep = budget.is_some_and(|b| {
            needs_full_sweep(
                conversation.context_token_count.max(0) as u64,
                u64::from(b),
                config.context_threshold,
            )
        });
        // The last view could not hold even the current and previous turn: a summary could not
        // be shown, so none is asked for (no call that cannot pay off) until the budget has room.
        let no_room = (sweep || decision.compact)
            .then(|| self.views.pressure(conversation.id))
            .flatten();
        let work = if no_room.is_some() {
            None
        } else if sweep {
            Some("sweep")
        } else if decision.compact {
            Some("leaf")
        } else {
            None
        };
        let log_line = match (work, no_room) {
            (_, Some(p)) => format!(
                "no room for summaries: the view budget ({} tokens) is taken by the current and \
                 previous turn ({} tokens); {}",
                p.budget,
                p.active_tokens,
                decision.log_line()
            ),
            (Some("sweep"), None) => format!(
                "context over the {} threshold: full sweep due; {}",
                config.context_threshold,
                decision.log_line()
            ),
            _ => decision.log_line(),
        };
        let reason = if no_room.is_some() {
            "no_room_for_summaries"
        } else {
            decision.reason.name()
        };
        let mask = self.take_mask_decision(conversation.id);
        let telemetry = json!({ "decision": decision, "sweep": sweep, "budget": budget, "freshTailTokens": tail, "mask": mask, "activeTaskTokens": no_room.map(|p| p.active_tokens) }).to_string();
        let pending = work.map(|w| Pending {
            work: w.to_owned(),
            budget: budget.unwrap_or(self.config.default_token_budget),
            reason: reason.to_owned(),
        });
        let failing = retry.consecutive_failures > 0;
        retry.on_turn();
        self.store.write(|tx| {
            store::record_decision(
                tx.sql(),
                &Event {
                    conversation_id: conversation.id,
                    pass: "trigger",
                    level: None,
                    outcome: if work.is_some() {
                        "triggered"
                    } else {
                        "skipped"
                    },
                    reason,
                    tokens_before: Some(conversation.context_token_count),
                    tokens_after: None,
                    summary_id: None,
                    telemetry_json: Some(&telemetry),
                },
                now_ms,
            )?;
            if pending.is_some() || failing {
                store::save_state(
                    tx.sql(),
                    conversation.id,
                    &retry,
                    pending.as_ref().or(stored_pending.as_ref()),
                    now_ms,
                )?;
            }
            Ok(())
        })?;
        Ok(TriggerOutcome { work, log_line })
    }

    /// The fresh tail's tokens: from the conversation's kept window advanced by what the turn
    /// appended, or from the store when the window cannot be trusted (see [`super::tail_window`]).
    fn fresh_tail_tokens(
        &mut self,
        conversation: &Conversation,
        rule: TailRule,
        appended: Option<&[i64]>,
    ) -> Result<i64> {
        let stamp = Stamp {
            epoch: conversation.context_epoch,
            last_ordinal: conversation.next_ordinal,
            raw_tokens: conversation.context_raw_tokens(),
        };
        let tokens = match self
            .tails
            .advance(conversation.id, rule.count, stamp, appended)
        {
            Some(tokens) => tokens,
            None => {
                let tokens =
                    store::newest_message_tokens(self.store.sql(), conversation.id, rule.count)?;
                self.tails
                    .store(conversation.id, rule.count, stamp, tokens.clone());
                tokens
            }
        };
        Ok(rule.tokens_of(&tokens))
    }
}
