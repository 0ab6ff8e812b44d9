//! `assemble`: the model's view — the newest context items (messages and summaries) that fit the
//! token budget, messages exactly as the host sent them, plus a static system-prompt addition.
//! Messages the host passes that we have never seen (history from before the engine was
//! installed) are stored first.

use super::params::{validate_session, AssembleParams, AssembleResult};
use super::Engine;
use crate::core::assemble::{render_summary_message, select_newest, Candidate, SYSTEM_PROMPT_ADDITION};
use crate::core::message::Role;
use crate::error::Result;
use crate::store::context::{self, ItemContent};
use crate::store::{conversations, Sql};

/// Messages read per page while filling the budget.
const PAGE: i64 = 256;

impl<S: Sql> Engine<S> {
    pub fn assemble(&mut self, params: AssembleParams, now_ms: i64) -> Result<AssembleResult> {
        validate_session(&params.session)?;
        // Only when the host knows more messages than we stored is there anything to catch up on.
        if params.messages.len() as i64 > self.stored_count(&params.session)? {
            self.ingest_from(&params.session, &params.messages, 0, now_ms)?;
        }
        let budget = params
            .token_budget
            .filter(|b| b.is_finite() && *b >= 0.0)
            .map_or(self.config.default_token_budget, |b| b.min(f64::from(u32::MAX)) as u32);
        let Some(conversation) = conversations::find_active(self.store.sql(), params.session.key())? else {
            return Ok(AssembleResult {
                messages: Vec::new(),
                estimated_tokens: 0,
                system_prompt_addition: SYSTEM_PROMPT_ADDITION.to_owned(),
                stored_messages: 0,
            });
        };
        let mut newest_first = Vec::new();
        let mut before = conversation.next_ordinal + 1;
        let mut used: u64 = 0;
        loop {
            let page = context::newest_before(self.store.sql(), conversation.id, before, PAGE)?;
            let full_page = page.len() as i64 == PAGE;
            for item in page {
                before = item.ordinal;
                used += u64::from(item.tokens);
                newest_first.push(item);
            }
            if !full_page || used > u64::from(budget) {
                break;
            }
        }
        let candidates: Vec<Candidate> = newest_first
            .iter()
            .map(|item| {
                let role = match &item.content {
                    ItemContent::Message { role, .. } => *role,
                    ItemContent::Summary { .. } => Role::User,
                };
                Candidate { role, tokens: item.tokens }
            })
            .collect();
        let take = select_newest(&candidates, budget);
        newest_first.truncate(take);
        let estimated_tokens = newest_first.iter().map(|item| u64::from(item.tokens)).sum();
        let messages = newest_first
            .into_iter()
            .rev()
            .map(|item| match item.content {
                ItemContent::Message { raw_json, .. } => raw_json,
                ItemContent::Summary { id, depth, content, earliest_at, latest_at } => {
                    render_summary_message(id, depth, &content, earliest_at, latest_at)
                }
            })
            .collect();
        Ok(AssembleResult {
            messages,
            estimated_tokens,
            system_prompt_addition: SYSTEM_PROMPT_ADDITION.to_owned(),
            stored_messages: conversation.message_count,
        })
    }
}
