//! `commitTurn`: the host's durable turn advancement. One transaction stores the turn's messages
//! and its advancement key; a retry with the same key stores nothing and reports `duplicate`.

use super::params::{validate_session, CommitStatus, CommitTurnParams, CommitTurnResult};
use super::Engine;
use crate::core::identity::Fingerprint;
use crate::core::message::parse_messages;
use crate::error::{Error, Result};
use crate::store::{advancements, conversations, messages, Sql};

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
        let key = params.advancement_key.as_str();
        let session = &params.session;
        let mut result = self.store.write(|sql| {
            if let Some(recorded) = advancements::find(sql, key)? {
                let warning = (recorded != payload_hash).then(|| {
                    format!("advancementKey {key:?} was committed before with different messages; the first commit is kept")
                });
                return Ok(CommitTurnResult { status: CommitStatus::Duplicate, stored_messages: 0, warning, compaction: None });
            }
            let conversation = conversations::resolve(sql, session.key(), &session.session_id, now_ms)?;
            let appended = messages::append(sql, &conversation, &parsed, now_ms)?;
            advancements::record(sql, key, conversation.id, &payload_hash, parsed.len() as i64, now_ms)?;
            Ok(CommitTurnResult { status: CommitStatus::Committed, stored_messages: appended.inserted, warning: None, compaction: None })
        })?;
        if result.stored_messages > 0 {
            result.compaction = self.trigger_for(session, now_ms)?;
        }
        Ok(result)
    }
}
