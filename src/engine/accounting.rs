//! The engine's side of prompt accounting (rules: [`crate::core::accounting`]). It keeps each
//! conversation's [`HostFacts`] (cached in memory, persisted in the transaction of the write
//! that learned them), learns from what the host reports — the window and reply budget it
//! passes, the provider usage on the assistant messages `commitTurn` stores (or, on hosts
//! without `commitTurn`, the turn `afterTurn` hands over), the token count of a forced
//! `compact` — and gives `assemble` and compaction the view budget.

use std::collections::HashMap;

use serde_json::Value;

use super::params::SessionRef;
use super::Engine;
use crate::core::accounting::{HostFacts, HostLimits, ViewBudget};
use crate::core::message::{Role, StoredMessage};
use crate::core::tokens::estimate_text;
use crate::error::Result;
use crate::store::conversations::Conversation;
use crate::store::{accounting as store, Sql, WriteTx};

/// Facts by conversation id, loaded once per process.
#[derive(Debug, Default)]
pub(super) struct FactsCache {
    pub(super) facts: HashMap<i64, HostFacts>,
}

/// A positive, finite host number as tokens.
pub(crate) fn tokens_of(value: Option<f64>) -> Option<u32> {
    value
        .filter(|v| v.is_finite() && *v > 0.0)
        .map(|v| v.min(f64::from(u32::MAX)) as u32)
}

/// The provider's usage on a host message: (prompt tokens, output tokens). Prompt tokens are
/// input plus cache reads and writes (the OpenClaw message format counts them apart).
fn reported_usage(message: &Value) -> Option<(u32, u32)> {
    let usage = message.get("usage")?;
    let n = |key: &str| {
        usage
            .get(key)
            .and_then(Value::as_f64)
            .filter(|v| v.is_finite() && *v >= 0.0)
            .unwrap_or(0.0)
    };
    let prompt = n("input") + n("cacheRead") + n("cacheWrite");
    if prompt <= 0.0 {
        return None;
    }
    Some((
        prompt.min(f64::from(u32::MAX)) as u32,
        n("output").min(f64::from(u32::MAX)) as u32,
    ))
}

/// The limits a call's parameters report: the reply budget, the preflight reserve (tokens) and
/// the estimate padding (a factor, kept in thousandths).
pub(crate) fn host_limits(
    max_output_tokens: Option<f64>,
    preflight_reserve_tokens: Option<f64>,
    estimate_safety: Option<f64>,
) -> HostLimits {
    HostLimits {
        max_output: tokens_of(max_output_tokens),
        preflight_reserve: tokens_of(preflight_reserve_tokens),
        estimate_safety_milli: estimate_safety
            .filter(|f| f.is_finite() && *f >= 1.0 && *f <= 10.0)
            .map(|f| (f * 1_000.0).round() as u32),
    }
}

/// Learns from one committed turn: `raw` are the host's messages, `parsed` the same messages
/// validated, and `view_tokens` the view this turn's model request was built from.
pub(crate) fn learn_from_turn(
    facts: &mut HostFacts,
    raw: &[Value],
    parsed: &[StoredMessage],
    view_tokens: Option<u32>,
) {
    let mut before = 0u32;
    let mut learned_overhead = false;
    for (value, message) in raw.iter().zip(parsed) {
        if message.role == Role::Assistant {
            if let Some((prompt, output)) = reported_usage(value) {
                // The first request of the turn is the overhead, our view and the user prompt;
                // later requests of a tool loop add the turn's own messages, counted in `before`.
                if let (false, Some(view)) = (learned_overhead, view_tokens) {
                    facts.learn_from_usage(prompt, view, before);
                    learned_overhead = true;
                }
                facts.last_reported_prompt = Some(prompt);
                facts.last_output = Some(output);
            }
        }
        before = before.saturating_add(message.tokens);
    }
    if let Some(user) = parsed.iter().find(|m| m.role == Role::User) {
        facts.last_prompt = Some(user.tokens);
    }
    if view_tokens.is_some() {
        facts.last_view = view_tokens;
    }
}

impl<S: Sql> Engine<S> {
    /// The conversation's facts (loaded once per process).
    pub(crate) fn host_facts(&mut self, conversation_id: i64) -> Result<HostFacts> {
        if let Some(facts) = self.accounting.facts.get(&conversation_id) {
            return Ok(facts.clone());
        }
        let facts = store::load(self.store.sql(), conversation_id)?;
        self.accounting.facts.insert(conversation_id, facts.clone());
        Ok(facts)
    }

    /// [`Engine::host_facts`], when the conversation's `host_facts_json` was read with its row
    /// (`stored`: `Some(None)` when none are stored; None: not read, read it now).
    pub(crate) fn host_facts_with(
        &mut self,
        conversation_id: i64,
        stored: Option<Option<String>>,
    ) -> Result<HostFacts> {
        match stored {
            Some(json) if !self.accounting.facts.contains_key(&conversation_id) => {
                let facts = store::parse(json.as_deref())?;
                self.accounting.facts.insert(conversation_id, facts.clone());
                Ok(facts)
            }
            _ => self.host_facts(conversation_id),
        }
    }

    /// Keeps facts in memory only (values the host repeats on every call).
    pub(crate) fn remember_facts(&mut self, conversation_id: i64, facts: HostFacts) {
        self.accounting.facts.insert(conversation_id, facts);
    }

    /// Stores facts; then [`Engine::remember_facts`].
    pub(crate) fn save_facts(
        tx: &mut WriteTx<'_, S>,
        conversation_id: i64,
        facts: &HostFacts,
        now_ms: i64,
    ) -> Result<()> {
        store::save(tx, conversation_id, facts, now_ms)
    }

    /// Learns from a turn a host handed over through `afterTurn` (hosts without `commitTurn`,
    /// such as OpenClaw 2026.7): `turn` are the messages after `prePromptMessageCount` (and
    /// `parsed` the same, parsed), already stored; `window` the model's window when the host reports one. The same lessons as a
    /// commit, against the view the last `assemble` returned. A session we hold no conversation
    /// for (or an older one under its key) teaches nothing.
    /// `conversation`: the session's active conversation as the turn left it (the caller reads
    /// it once for this and the trigger).
    pub(crate) fn learn_after_turn(
        &mut self,
        session: &SessionRef,
        conversation: Option<&Conversation>,
        turn: &[Value],
        parsed: &[StoredMessage],
        window: Option<f64>,
        now_ms: i64,
    ) -> Result<()> {
        let Some(conversation) = conversation.filter(|c| c.session_id == session.session_id) else {
            return Ok(());
        };
        let mut facts = self.host_facts(conversation.id)?;
        let before = facts.clone();
        if let Some(window) = tokens_of(window) {
            facts.window = Some(window);
        }
        let view_tokens = self
            .views
            .tokens(conversation.id)
            .map(|t| u32::try_from(t).unwrap_or(u32::MAX));
        learn_from_turn(&mut facts, turn, parsed, view_tokens);
        if facts != before {
            self.store
                .write(|tx| Self::save_facts(tx, conversation.id, &facts, now_ms))?;
            self.remember_facts(conversation.id, facts);
        }
        Ok(())
    }

    /// The view budget for an `assemble` of this conversation.
    pub(crate) fn view_budget(
        &mut self,
        conversation_id: i64,
        host_budget: u32,
        prompt: Option<&str>,
        limits: HostLimits,
    ) -> Result<ViewBudget> {
        let mut facts = self.host_facts(conversation_id)?;
        if limits.apply_to(&mut facts) {
            self.remember_facts(conversation_id, facts.clone());
        }
        Ok(facts.view_budget(host_budget, prompt.map_or(0, estimate_text)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::message::parse_messages;
    use serde_json::json;

    #[test]
    fn a_turn_teaches_overhead_reply_and_prompt_sizes() {
        let raw = vec![
            json!({"role":"user","content":"x".repeat(400),"timestamp":1}),
            json!({"role":"assistant","content":[{"type":"text","text":"ok"}],"timestamp":2,
                   "usage":{"input":3000,"cacheRead":1000,"cacheWrite":0,"output":40}}),
        ];
        let parsed = parse_messages(&raw, 0).unwrap();
        let mut facts = HostFacts::default();
        learn_from_turn(&mut facts, &raw, &parsed, Some(1_500));
        let user = parsed[0].tokens;
        assert_eq!(facts.overhead, Some(4_000 - 1_500 - user));
        assert_eq!(facts.last_output, Some(40));
        assert_eq!(facts.last_prompt, Some(user));
        assert_eq!(facts.last_view, Some(1_500));
    }

    #[test]
    fn a_turn_without_usage_or_view_learns_no_overhead() {
        let raw = vec![
            json!({"role":"user","content":"hi","timestamp":1}),
            json!({"role":"assistant","content":"yo","timestamp":2}),
        ];
        let parsed = parse_messages(&raw, 0).unwrap();
        let mut facts = HostFacts::default();
        learn_from_turn(&mut facts, &raw, &parsed, None);
        assert_eq!(facts.overhead, None);
        let with_usage = vec![
            raw[0].clone(),
            json!({"role":"assistant","content":"yo","timestamp":2,"usage":{"input":"many"}}),
        ];
        learn_from_turn(&mut facts, &with_usage, &parsed, Some(10));
        assert_eq!(
            facts.overhead, None,
            "usage that is not a number teaches nothing"
        );
    }
}
