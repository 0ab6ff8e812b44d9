//! `commitTurn`: the host's durable turn advancement. One transaction stores the turn's messages
//! and its advancement key; a retry with the same key stores nothing and reports `duplicate`.
//! The same transaction keeps what the turn's provider usage teaches about the real prompt.

use super::accounting::{learn_from_turn, tokens_of};
use super::ingest::appended_tokens;
use super::masking::TurnItems;
use super::params::{validate_session, CommitStatus, CommitTurnParams, CommitTurnResult};
use super::Engine;
use crate::core::accounting::HostFacts;
use crate::core::identity::Fingerprint;
use crate::core::message::{parse_messages, StoredMessage};
use crate::error::{Error, Result};
use crate::store::advancements::{self, CommitLock};
use crate::store::claim::{self, Claim};
use crate::store::{bulk, context, Sql};

/// The turn's conversation before the turn, as its transaction found it.
enum Prior {
    /// Created (or the key rotated to it) by this turn: nothing learned yet, no view shown.
    New,
    /// Already the session's: its `host_facts_json` when the lock statement read it
    /// (`Some(None)`: none stored; None: not read).
    Existing(Option<Option<String>>),
}

impl<S: Sql> Engine<S> {
    /// Commits a turn atomically and idempotently by `advancementKey`.
    pub fn commit_turn(
        &mut self,
        params: CommitTurnParams,
        now_ms: i64,
    ) -> Result<CommitTurnResult> {
        validate_session(&params.session)?;
        if params.advancement_key.is_empty() {
            return Err(Error::input("advancementKey", "must be a non-empty string"));
        }
        let mut parsed = parse_messages(&params.messages, 0)?;
        // The host's anchors name the turn's first (user) and last entries.
        let entry = |anchor: &Option<super::params::EntryAnchor>| {
            anchor.as_ref().and_then(|a| a.entry_id.clone())
        };
        if let Some(first) = parsed
            .first_mut()
            .filter(|m| m.role == crate::core::message::Role::User)
        {
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
        // The turn's messages, its advancement record, what it taught about the host's prompt
        // and the trigger's decision: one transaction. A steady turn on PostgreSQL first tries
        // it on a claim (`claims`); a claim that did not hold wrote nothing, and the turn runs
        // again, reading under the lock.
        // `assemble`'s read follows the turn: on PostgreSQL it may travel with the COMMIT.
        let known = self.views.known(params.session.key());
        if let Some(claim) = self.claims.take(
            params.session.key(),
            &params.session.session_id,
            self.store.commits(),
        ) {
            context::read_active_after_commit(self.store.sql(), params.session.key(), known);
            match self.in_turn_transaction(|e| {
                e.commit_parsed(&params, &parsed, &payload_hash, Some(claim), now_ms)
            }) {
                Err(err) if claim::is_conflict(&err) => {}
                outcome => return outcome,
            }
        }
        context::read_active_after_commit(self.store.sql(), params.session.key(), known);
        self.in_turn_transaction(|e| e.commit_parsed(&params, &parsed, &payload_hash, None, now_ms))
    }

    fn commit_parsed(
        &mut self,
        params: &CommitTurnParams,
        parsed: &[StoredMessage],
        payload_hash: &str,
        claim: Option<Claim>,
        now_ms: i64,
    ) -> Result<CommitTurnResult> {
        let (key, session) = (params.advancement_key.as_str(), &params.session);
        let embedder = self.turn_embedder();
        let (mut result, learned) = self.store.write(|tx| {
            // The key's lookup and the conversation's lock, in one statement when the store can
            // (it also says which identities are stored and returns the items the stubs
            // consider, as for `afterTurn`: ingest.rs `store_parsed`), or none on a claim.
            let (locked, existed) = match advancements::lock_for_commit(tx.sql(), key, session.key(), &session.session_id, parsed, TurnItems::lock_limit(parsed.len()), claim, now_ms)? {
                CommitLock::Recorded(recorded) => {
                    let warning = (recorded != payload_hash).then(|| {
                        format!("advancementKey {key:?} was committed before with different messages; the first commit is kept")
                    });
                    return Ok((CommitTurnResult { status: CommitStatus::Duplicate, stored_messages: 0, warning, compaction: None }, None));
                }
                CommitLock::Locked { locked, existed } => (*locked, existed),
            };
            let appended = bulk::append_resolved(tx, &locked.conversation, parsed, locked.stored, now_ms)?;
            super::semantic::embed_appended(tx, embedder.as_ref(), &locked.conversation, parsed, &appended)?;
            let after = appended.applied_to(&locked.conversation);
            let items = locked.unstubbed.and_then(|before| TurnItems::after_append(before, &after, parsed, &appended));
            advancements::record(tx, key, after.id, payload_hash, parsed.len() as i64, now_ms)?;
            let result = CommitTurnResult { status: CommitStatus::Committed, stored_messages: appended.inserted, warning: None, compaction: None };
            let prior = if existed { Prior::Existing(locked.host_facts_json) } else { Prior::New };
            Ok((result, Some((after, items, appended_tokens(parsed, &appended), prior))))
        })?;
        if let Some((conversation, items, tokens, prior)) = learned {
            // Under the same lock: the facts as this transaction found them.
            let facts = self.facts_after_turn(params, parsed, conversation.id, prior)?;
            self.store
                .write(|tx| Self::save_facts(tx, conversation.id, &facts, now_ms))?;
            self.remember_facts(conversation.id, facts);
            if result.stored_messages > 0 {
                // Stubs first: the trigger then sees the smaller context. The conversation as
                // the append left it, not read again: this transaction holds it.
                let conversation = self.stub_after_turn(
                    conversation,
                    result.stored_messages,
                    parsed,
                    items,
                    now_ms,
                )?;
                result.compaction =
                    Some(self.trigger_for(&conversation, tokens.as_deref(), now_ms)?);
            }
        }
        Ok(result)
    }

    /// What this turn teaches about the host's prompt (see [`super::accounting`]): the view its
    /// request was built from is the one the last `assemble` returned for this conversation, or
    /// nothing when there was no conversation to show.
    fn facts_after_turn(
        &mut self,
        params: &CommitTurnParams,
        parsed: &[StoredMessage],
        conversation_id: i64,
        prior: Prior,
    ) -> Result<HostFacts> {
        let (mut facts, view_tokens) = match prior {
            Prior::Existing(stored) => (
                self.host_facts_with(conversation_id, stored)?,
                self.views
                    .tokens(conversation_id)
                    .map(|t| u32::try_from(t).unwrap_or(u32::MAX)),
            ),
            Prior::New => (HostFacts::default(), Some(0)),
        };
        if let Some(window) = tokens_of(params.model_context_window) {
            facts.window = Some(window);
        }
        learn_from_turn(&mut facts, &params.messages, parsed, view_tokens);
        Ok(facts)
    }
}
