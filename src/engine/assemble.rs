//! `assemble`: the model's view — the newest context items (messages and summaries) that fit the
//! token budget, messages exactly as the host sent them, plus a static system-prompt addition.
//! The view itself is maintained incrementally by [`super::view`].
//! Messages the host passes that we have never seen (history from before the engine was
//! installed) are stored first.

use super::params::{validate_session, AssembleParams, AssembleResult};
use super::Engine;
use crate::core::assemble::SYSTEM_PROMPT_ADDITION;
use crate::error::Result;
use crate::store::{conversations, Sql};

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
        let view = self.views.view(self.store.sql(), &conversation, budget)?;
        Ok(AssembleResult {
            messages: view.messages(),
            estimated_tokens: view.tokens(),
            system_prompt_addition: SYSTEM_PROMPT_ADDITION.to_owned(),
            stored_messages: conversation.message_count,
        })
    }
}
