//! `commitTurn`: the host's durable turn advancement. One transaction stores the turn's messages
//! and its advancement key; a retry with the same key stores nothing and reports `duplicate`.
//! The same transaction keeps what the turn's provider usage teaches about the real prompt.

use super::accounting::{learn_from_turn, tokens_of};
use super::ingest::appended_tokens;
use super::masking::TurnItems;
use super::params::{validate_session, CommitStatus, CommitTurnParams, CommitTurnResult, SessionRef};
use super::Engine;
use crate::core::identity::Fingerprint;
use crate::core::accounting::HostFacts;
use crate::core::message::{parse_messages, StoredMessage};
use crate::error::{Error, Result};
use crate::store::{advancements, bulk, conversations, Sql};

impl<S: Sql> Engine<S> {
    /// Commits a turn atomically and idempotently by `advancementKey`.
    pub fn commit_turn(&mut self, params: CommitTurnParams, now_ms: i64) -> Result<CommitTurnResult> {
        validate_session(&params.session)?;
        if params.advancement_key.is_empty() {
            return Err(Error::input("advancementKey", "must be a non-empty string"));
        }
        let mut parsed = parse_messages(&params.messages, 0)?;
        // The host's anchors name the turn's first (user) and last entries.
        let entry = |anchor: &Option<super::params::EntryAnchor>| anchor.as_ref().and_then(|a| a.entry_id.clone());
        if let Some(first) = parsed.first_mut().filter(|m| m.role == crate::core::message::Role::User) {
            first.host_entry_id = entry(&params.admission);
        }
        if let Some(last) = parsed.last_mut().filter(|m| m.host_entry_id.is_none()) {
            last.host_entry_id = entry(&params.terminal);
        }
        let mut fp = Fingerprint::new();
        for message in &parsed {
            fp.field(&message.identity);
        }
        let payload_hash = fp.hex();
        let session = &params.session;
        let facts = self.facts_after_turn(&params, &parsed)?;
        // The turn's messages, its advancement record and the trigger's decision: one transaction.
        self.in_turn_transaction(|e| e.commit_parsed(params.advancement_key.as_str(), session, &parsed, &payload_hash, facts, now_ms))
    }

    fn commit_parsed(&mut self, key: &str, session: &SessionRef, parsed: &[StoredMessage], payload_hash: &str, facts: HostFacts, now_ms: i64) -> Result<CommitTurnResult> {
        let (mut result, learned) = self.store.write(|sql| {
            if let Some(recorded) = advancements::find(sql, key)? {
                let warning = (recorded != payload_hash).then(|| {
                    format!("advancementKey {key:?} was committed before with different messages; the first commit is kept")
                });
                return Ok((CommitTurnResult { status: CommitStatus::Duplicate, stored_messages: 0, warning, compaction: None }, None));
            }
            // As `afterTurn` stores its tail (ingest.rs `store_parsed`): the lock statement also
            // says which identities are stored and returns the items the stubs consider.
            let locked = conversations::resolve_for_append(sql, session.key(), &session.session_id, parsed, TurnItems::lock_limit(parsed.len()), now_ms)?;
            let appended = bulk::append_resolved(sql, &locked.conversation, parsed, locked.stored, now_ms)?;
            let after = appended.applied_to(&locked.conversation);
            let items = locked.unstubbed.and_then(|before| TurnItems::after_append(before, &after, parsed, &appended));
            advancements::record(sql, key, after.id, payload_hash, parsed.len() as i64, now_ms)?;
            Self::save_facts(sql, after.id, &facts, now_ms)?;
            let result = CommitTurnResult { status: CommitStatus::Committed, stored_messages: appended.inserted, warning: None, compaction: None };
            Ok((result, Some((after, items, appended_tokens(parsed, &appended)))))
        })?;
        if let Some((conversation, items, tokens)) = learned {
            self.remember_facts(conversation.id, facts);
            if result.stored_messages > 0 {
                // Stubs first: the trigger then sees the smaller context. The conversation as
                // the append left it, not read again: this transaction holds it.
                let conversation = self.stub_after_turn(conversation, result.stored_messages, items, now_ms)?;
                result.compaction = Some(self.trigger_for(&conversation, tokens.as_deref(), now_ms)?);
            }
        }
        Ok(result)
    }

    /// What this turn teaches about the host's prompt (see [`super::accounting`]): the view its
    /// request was built from is the one the last `assemble` returned for this conversation, or
    /// nothing when there was no conversation to show.
    fn facts_after_turn(&mut self, params: &CommitTurnParams, parsed: &[StoredMessage]) -> Result<HostFacts> {
        let prior = self.conversation(&params.session)?.filter(|c| c.session_id == params.session.session_id);
        let (mut facts, view_tokens) = match &prior {
            Some(c) => (self.host_facts(c.id)?, self.views.tokens(c.id).map(|t| u32::try_from(t).unwrap_or(u32::MAX))),
            None => (HostFacts::default(), Some(0)),
        };
        if let Some(window) = tokens_of(params.model_context_window) {
            facts.window = Some(window);
        }
        learn_from_turn(&mut facts, &params.messages, parsed, view_tokens);
        Ok(facts)
    }
}
