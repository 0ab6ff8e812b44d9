//! `assemble`: the model's view — the newest context items (messages and summaries) that fit the
//! token budget, messages exactly as the host sent them, plus a static system-prompt addition.
//! The view itself is maintained incrementally by [`super::view`]; its budget comes from
//! [`super::accounting`]. The addition names only the recall tools the host says the model can
//! call.
//! Messages the host passes that we have never seen (history from before the engine was
//! installed) are stored first.

use serde_json::Value;

use super::accounting::host_limits;
use super::params::{validate_session, AssembleHandover, AssembleParams, AssembleResult};
use super::view::Pressure;
use super::Engine;
use crate::core::assemble::system_prompt_addition;
use crate::error::Result;
use crate::store::context::{self, Newer};
use crate::store::conversations::Conversation;
use crate::store::Sql;

impl<S: Sql> Engine<S> {
    /// The view for the host's next model call, under its token budget, with the system-prompt
    /// addition; first detects a rollover or reset and stores history the host passed that was
    /// never stored.
    pub fn assemble(&mut self, mut params: AssembleParams, now_ms: i64) -> Result<AssembleResult> {
        let history = std::mem::take(&mut params.messages);
        let history_len = history.len();
        self.assemble_with(params, history_len, move || Ok(history), now_ms)
    }

    /// `assemble` where the host's history (`history_len` messages) is produced only if it is
    /// needed: the host passes its whole history on every turn, and converting it is the cost
    /// that would otherwise grow with the conversation. `params.messages` is ignored.
    pub fn assemble_with(
        &mut self,
        params: AssembleParams,
        history_len: usize,
        history: impl FnOnce() -> Result<Vec<Value>>,
        now_ms: i64,
    ) -> Result<AssembleResult> {
        let addition = system_prompt_addition(params.available_tools.as_deref());
        let Some((conversation, budget, newer)) =
            self.prepare_view(params, history_len, history, now_ms)?
        else {
            return Ok(AssembleResult {
                messages: Vec::new(),
                estimated_tokens: 0,
                system_prompt_addition: addition,
                stored_messages: 0,
                notice: None,
            });
        };
        let view = self
            .views
            .view_with(self.store.sql(), &conversation, budget, newer)?;
        let (messages, estimated_tokens, pressure) =
            (view.messages(), view.tokens(), view.pressure());
        let notice = self.pressure_notice(conversation.id, pressure)?;
        Ok(AssembleResult {
            messages,
            estimated_tokens,
            system_prompt_addition: addition,
            stored_messages: conversation.message_count,
            notice,
        })
    }

    /// `assemble_with`, handing the view over incrementally to a caller that holds the
    /// hand-over named `held` (see [`super::handover`]).
    pub fn assemble_handover(
        &mut self,
        params: AssembleParams,
        history_len: usize,
        history: impl FnOnce() -> Result<Vec<Value>>,
        held: Option<u64>,
        now_ms: i64,
    ) -> Result<AssembleHandover> {
        let addition = system_prompt_addition(params.available_tools.as_deref());
        let Some((conversation, budget, newer)) =
            self.prepare_view(params, history_len, history, now_ms)?
        else {
            return Ok(AssembleHandover {
                view: self.handovers.hand_over(0, 0, None, &[]),
                estimated_tokens: 0,
                system_prompt_addition: addition,
                stored_messages: 0,
                notice: None,
            });
        };
        let view = self
            .views
            .view_with(self.store.sql(), &conversation, budget, newer)?;
        let handover = self.handovers.hand_over(
            conversation.id,
            view.summaries_epoch(),
            held,
            &view.entries(),
        );
        let (estimated_tokens, pressure) = (view.tokens(), view.pressure());
        let notice = self.pressure_notice(conversation.id, pressure)?;
        Ok(AssembleHandover {
            view: handover,
            estimated_tokens,
            system_prompt_addition: addition,
            stored_messages: conversation.message_count,
            notice,
        })
    }

    /// The log line for a view whose active task was over its budget, the first time in this
    /// process for the conversation, with the numbers that set the budget.
    fn pressure_notice(
        &mut self,
        conversation_id: i64,
        pressure: Option<Pressure>,
    ) -> Result<Option<String>> {
        let Some(p) = pressure else {
            return Ok(None);
        };
        if !self.views.first_pressure(conversation_id) {
            return Ok(None);
        }
        let facts = self.host_facts(conversation_id)?;
        let known = |n: Option<u32>| n.map_or_else(|| "unknown".to_owned(), |n| n.to_string());
        Ok(Some(format!(
            "the current and previous turn ({} tokens) do not fit the view budget of {} tokens              (window {}, last reported prompt {}, learned overhead {}): {} tool outputs of them              shown as head-and-tail excerpts, view {} tokens; nothing of the two turns left out              (logged once per conversation)",
            p.active_tokens,
            p.budget,
            known(facts.window),
            known(facts.last_reported_prompt),
            known(facts.overhead),
            p.excerpts,
            p.view_tokens,
        )))
    }

    /// Everything `assemble` does before reading the view: rollover and reset detection, catching
    /// up on history we never stored, and the view's budget. None when there is no conversation.
    /// The conversation is read together with the items appended to it since this process's
    /// view of it (one statement: `context::active_with_newer`); those items come back with it
    /// unless a step here changed the conversation.
    fn prepare_view(
        &mut self,
        params: AssembleParams,
        history_len: usize,
        history: impl FnOnce() -> Result<Vec<Value>>,
        now_ms: i64,
    ) -> Result<Option<(Conversation, u32, Option<Newer>)>> {
        validate_session(&params.session)?;
        let known = self.views.known(params.session.key());
        let (mut conversation, mut newer) =
            match context::active_with_newer(self.store.sql(), params.session.key(), known)? {
                Some(read) => {
                    // What the next turn may claim instead of reading (PostgreSQL; see `claims`).
                    self.claims
                        .row_read(&read.conversation, read.version, self.store.commits());
                    (Some(read.conversation), read.newer)
                }
                None => (None, None),
            };
        // A new session id under the same key is a rollover: the old conversation must not be
        // shown for the new session (seed 04). It is archived, never purged.
        if conversation
            .as_ref()
            .is_some_and(|c| c.session_id != params.session.session_id)
        {
            self.archive_active(&params.session, "session-id-changed", now_ms)?;
            conversation = None;
            newer = None;
        }
        // The host's whole visible history is empty while we hold this key's messages: the host
        // reset the session without a new session id (OpenClaw 2026.9 keeps the id on /reset).
        // A view we returned empty (a tiny budget) comes back empty too, which is not a reset.
        let reset = params.history_is_complete
            && history_len == 0
            && conversation.as_ref().is_some_and(|c| {
                c.message_count > 0 && self.views.last_view_nonempty(c.id).unwrap_or(true)
            });
        if reset {
            self.archive_active(&params.session, "host-history-reset", now_ms)?;
            conversation = None;
            newer = None;
        }
        // Only when the host knows more messages than we stored is there anything to catch up on.
        if history_len as i64 > conversation.as_ref().map_or(0, |c| c.message_count) {
            self.ingest_from(&params.session, &history()?, 0, now_ms)?;
            conversation = self.conversation(&params.session)?;
            newer = None;
        }
        let host_budget = params
            .token_budget
            .filter(|b| b.is_finite() && *b >= 0.0)
            .map_or(self.config.default_token_budget, |b| {
                b.min(f64::from(u32::MAX)) as u32
            });
        let Some(conversation) = conversation else {
            return Ok(None);
        };
        // The view shares the prompt with the host's system prompt, tools, the user's prompt
        // and the reply: its budget is what they leave (docs/prompt-accounting.md).
        let limits = host_limits(
            params.max_output_tokens,
            params.preflight_reserve_tokens,
            params.host_estimate_safety,
        );
        let budget = self
            .view_budget(
                conversation.id,
                host_budget,
                params.prompt.as_deref(),
                limits,
            )?
            .tokens;
        Ok(Some((conversation, budget, newer)))
    }
}
