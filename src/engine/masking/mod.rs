//! Tool-output stubs in the engine: after a turn is stored (inside its transaction) and before
//! the compaction trigger looks, one cheap pass over the context items the conversation has not
//! considered yet ([`crate::store::masking`]) plans a batch ([`crate::core::masking::select`]),
//! decides whether it pays for its prompt-cache break ([`crate::core::masking::trigger`]), and
//! when it does renders the stubs ([`render`]) and applies them in one step: items, running
//! total, one context-epoch step, the cached view followed in place. So the leaf trigger sees
//! the smaller context, and summaries are asked for only when stubs are not enough.
//!
//! An applied batch is logged in `compaction_events` (`pass = 'mask'`, tokens before and after,
//! the decision with every input); every decision, applied or not, also rides in the telemetry
//! of the trigger's row for the same turn (`mask`), so a turn still writes one event row.
//!
//! What the summarizer sees of stubbed messages is [`summarizer`]'s.

mod render;
pub(crate) mod summarizer;
mod touches;
mod turn_items;

pub(crate) use touches::TouchCache;
pub(crate) use turn_items::TurnItems;

use std::collections::HashMap;

use serde_json::json;

use crate::core::compaction::fit::fit;
use crate::core::masking::{
    decide, excerpt_tokens, plan_with, MaskDecision, MaskInput, Plan, PlanRules, ScanItem, Touch,
    WorkingSetRules,
};
use crate::core::message::StoredMessage;
use crate::engine::Engine;
use crate::error::Result;
use crate::store::compaction::{self as events, Event};
use crate::store::context::{ContextItem, ItemContent};
use crate::store::conversations::Conversation;
use crate::store::masking as store;
use crate::store::Sql;

/// Items one turn looks at, at most: after a long import the frontier is far behind, and the
/// older items are left to summarization.
const MAX_SCAN: i64 = 512;
/// What a line stub is assumed to cost while planning (they come out at 35–70 tokens).
const STUB_TOKENS_ESTIMATE: u32 = 64;

impl<S: Sql> Engine<S> {
    /// Runs the stub pass for a conversation a turn just stored `appended` messages in (`parsed`:
    /// the turn's messages, as parsed). Returns the conversation as it is afterwards (what a batch
    /// wrote, applied to it).
    ///
    /// Only inside the write transaction that stored the turn, with `conversation` as that
    /// transaction read it: the transaction already holds the conversation (PostgreSQL's row lock
    /// from `conversations::resolve`, SQLite's write lock), so its `stubbed_through` is current
    /// and a batch is applied without locking the row again.
    ///
    /// `known`: the items after the frontier, when the turn's lock statement could return them
    /// ([`TurnItems`]); else they are read here. A batch that applies reads them either way: it
    /// renders from the stored messages, by id.
    pub(crate) fn stub_after_turn(
        &mut self,
        conversation: Conversation,
        appended: usize,
        parsed: &[StoredMessage],
        known: Option<TurnItems>,
        now_ms: i64,
    ) -> Result<Conversation> {
        let masking = self.config.masking.clone();
        let window = self.host_facts(conversation.id)?.window;
        // The latest view's budget; before any view of this conversation (its first turn), the
        // model's window when the host reported it. Without either nothing is huge, and there
        // is no pressure.
        let budget = self.views.budget(conversation.id).or(window);
        let fitted = budget.map(|b| fit(&self.config.compaction, b, window));
        let tail_share = fitted
            .as_ref()
            .map(|f| u32::try_from(f.fresh_tail_max_tokens).unwrap_or(u32::MAX));
        let rules = PlanRules {
            min_tokens: masking.min_tokens,
            huge_tokens: tail_share.unwrap_or(u32::MAX),
            request_tokens: budget.unwrap_or(u32::MAX),
            // The active task's words stay whole unless they cannot fit a quarter of the window.
            text_tokens: budget.unwrap_or(u32::MAX).max(window.map_or(0, |w| w / 4)),
            excerpt_tokens: excerpt_tokens(tail_share.unwrap_or(0) / 8),
            stub_tokens: STUB_TOKENS_ESTIMATE,
        };
        // Carried on the conversation's row, read in this transaction: no read of its own.
        let frontier = conversation.stubbed_through;
        let new_from = conversation.next_ordinal - i64::try_from(appended).unwrap_or(i64::MAX) + 1;
        let context = u64::try_from(conversation.context_token_count).unwrap_or(0);
        let pressure_line = match (&fitted, budget) {
            (Some(f), Some(b)) => {
                let ceiling = (f64::from(b) * f.context_threshold.clamp(0.0, 1.0)).floor();
                let factor = f.leaf_budget_headroom_factor.clamp(0.0, 1.0);
                Some(if factor > 0.0 {
                    (ceiling * factor).floor()
                } else {
                    ceiling
                } as u64)
            }
            _ => None,
        };
        let working_set_on = masking.enabled && masking.working_set_turns > 0;
        if working_set_on && appended == parsed.len() {
            // Every message got its item, in order: the turn's outputs are classified here.
            self.touches.record_turn(conversation.id, new_from, parsed);
        }
        // The working set stays whole up to its share of the budget; a batch that stubs it frees
        // a tenth of the budget more, so it is not due again on the next turn.
        let keep_line =
            budget.map(|b| (f64::from(b) * masking.working_set_share.clamp(0.0, 1.0)) as u64);
        let low_line = keep_line.map_or(0, |line| {
            line.saturating_sub(budget.map_or(0, |b| u64::from(b) / 10))
        });
        let decide_over =
            |items: &[ScanItem], touches: &HashMap<i64, Vec<Touch>>| -> (Plan, MaskDecision) {
                let working_set = WorkingSetRules {
                    touches,
                    recent_turns: masking.working_set_turns,
                    max_tokens: masking.working_set_max_tokens,
                    context_tokens: context,
                    keep_line,
                    low_line,
                };
                let planned = plan_with(items, &rules, new_from, &working_set);
                let input = MaskInput {
                    enabled: masking.enabled,
                    candidates: u32::try_from(planned.candidates.len()).unwrap_or(u32::MAX),
                    saved_tokens: planned.saved,
                    rewritten_tokens: planned.rewritten,
                    huge: u32::try_from(planned.huge.len()).unwrap_or(u32::MAX),
                    context_tokens: context.saturating_sub(planned.huge_saved),
                    pressure_line,
                    batch_ratio: masking.batch_ratio,
                    working_set: planned.working_set,
                };
                let decision = decide(&input);
                (planned, decision)
            };
        let (mut items, mut truncated, stand_ins) = match known {
            Some(k) => {
                let stand_ins = k.has_stand_ins();
                (k.items, k.truncated, stand_ins)
            }
            None => {
                let (items, truncated) =
                    store::scan(self.store.sql(), conversation.id, frontier, MAX_SCAN)?;
                (items, truncated, false)
            }
        };
        let mut touches = if working_set_on {
            self.touches
                .for_items(self.store.sql(), conversation.id, &items)?
                .clone()
        } else {
            Default::default()
        };
        let (mut planned, mut decision) = decide_over(&items, &touches);
        if decision.applies() && stand_ins {
            // The same items, now with the turn's message ids, which the batch renders from.
            (items, truncated) =
                store::scan(self.store.sql(), conversation.id, frontier, MAX_SCAN)?;
            if !touches.is_empty() {
                touches = self
                    .touches
                    .for_items(self.store.sql(), conversation.id, &items)?
                    .clone();
            }
            (planned, decision) = decide_over(&items, &touches);
        }
        self.masks.insert(conversation.id, decision.clone());
        // After a truncated scan the frontier jumps to the oldest item read; and everything
        // before the oldest candidate (or the protected turns) is settled: the next turns need
        // not read it again, however long a batch waits.
        let read_from = if truncated {
            items.first().map_or(frontier, |i| i.ordinal - 1)
        } else {
            frontier
        };
        // Working-set outputs kept whole are considered again on the next turns.
        let first_open = [
            planned.candidates.first().map(|c| c.ordinal),
            planned.kept_from,
        ]
        .into_iter()
        .flatten()
        .min();
        let settled = first_open
            .or(planned.protected_from)
            .map_or(read_from, |o| o - 1);
        let floor = read_from.max(settled);
        if !decision.applies() {
            let conversation = if floor > frontier {
                self.store
                    .write(|tx| store::apply_held(tx, conversation.id, &[], floor).map(|_| ()))?;
                Conversation {
                    stubbed_through: floor,
                    ..conversation
                }
            } else {
                conversation
            };
            // Every item after the frontier is among `items` (a truncated read moved the
            // frontier to its oldest): what the next turn may claim (`claims`; a store that
            // cannot check a claim never gets one).
            let after: Vec<ScanItem> = items
                .into_iter()
                .filter(|i| i.ordinal > conversation.stubbed_through)
                .collect();
            self.claims.turn_stored(&conversation, after);
            return Ok(conversation);
        }
        // Stubs change items this process does not keep a picture of.
        self.claims.forget(conversation.id);
        let batch = render::batch(
            self.store.sql(),
            conversation.id,
            &items,
            &planned,
            &decision,
            rules.excerpt_tokens,
        )?;
        // Everything before the protected turns has been considered once the candidates are stubbed.
        let new_frontier = match (decision.stub, planned.protected_from) {
            (true, Some(protected)) => {
                floor.max(planned.kept_from.unwrap_or(protected).min(protected) - 1)
            }
            _ => floor,
        };
        let epoch_before = conversation.context_epoch;
        let restubs = batch.restubs();
        let telemetry = json!({
            "decision": decision,
            "stubs": batch.lines,
            "identical": batch.identical,
            "excerpts": batch.excerpts,
            "rewrittenFromOrdinal": batch.first_ordinal(),
        })
        .to_string();
        let reason = if decision.stub {
            decision.reason.name()
        } else {
            "huge_message"
        };
        let restubs_delta = self.store.write(|tx| {
            let delta = store::apply_held(tx, conversation.id, &restubs, new_frontier)?;
            if restubs.is_empty() {
                return Ok(delta);
            }
            let before = conversation.context_token_count;
            let event = Event {
                conversation_id: conversation.id,
                pass: "mask",
                level: None,
                outcome: "compacted",
                reason,
                tokens_before: Some(before),
                tokens_after: Some(before + delta),
                summary_id: None,
                telemetry_json: Some(&telemetry),
            };
            events::record_event(tx.sql(), &event, now_ms)?;
            Ok(delta)
        })?;
        let stubbed_through = conversation.stubbed_through.max(new_frontier);
        if restubs.is_empty() {
            return Ok(Conversation {
                stubbed_through,
                ..conversation
            });
        }
        let changed: Vec<ContextItem> = batch
            .items
            .into_iter()
            .map(|s| ContextItem {
                ordinal: s.ordinal,
                tokens: s.rendered.tokens,
                content: ItemContent::Message {
                    id: s.message_id,
                    role: s.role,
                    raw_json: s.rendered.json,
                    stub: Some(s.rendered.variant),
                },
            })
            .collect();
        self.views
            .restubbed(self.store.sql(), conversation.id, epoch_before, changed);
        // What `apply` wrote, without reading the row again.
        Ok(Conversation {
            context_token_count: conversation.context_token_count + restubs_delta,
            context_epoch: conversation.context_epoch + 1,
            stubbed_through,
            ..conversation
        })
    }

    /// The stub decision of the turn just stored in `conversation_id`, for the trigger's telemetry.
    pub(crate) fn take_mask_decision(&mut self, conversation_id: i64) -> Option<MaskDecision> {
        self.masks.remove(&conversation_id)
    }
}
