//! What a catch-up from the host's transcript (`ingest` with `fromTranscript`) must not store
//! again although no content identity finds it: a user message a turn stored in another shape
//! (OpenClaw 2026.7: the transcript's string and admission time, the turn's text parts and prompt
//! time; [`crate::core::transcript_match`]).

use super::Engine;
use crate::core::message::{parse_message, StoredMessage};
use crate::core::transcript_match::{matched_in_store, user_turn_key, SAME_TURN_WINDOW_MS};
use crate::error::Result;
use crate::store::archived_identities::stored_in_any;
use crate::store::user_messages_near::user_messages_between;
use crate::store::Sql;

impl<S: Sql> Engine<S> {
    /// For each of `messages` (read back from the host's transcript), whether a conversation of
    /// `session_key` stores it as the same user turn in another shape. One read by identity,
    /// then, for the user messages not stored as they are, one read of the key's user messages
    /// in the time span they cover (other roles are recognised by their content identity alone).
    pub(super) fn stored_in_another_shape(
        &mut self,
        session_key: &str,
        messages: &[StoredMessage],
    ) -> Result<Vec<bool>> {
        // A user message stored as it is needs no other shape (OpenClaw 2026.9's commits store
        // the transcript's own copy): one read by identity, and a steady turn stops there.
        let keyed: Vec<&str> = messages
            .iter()
            .filter(|m| user_turn_key(m).is_some())
            .map(|m| m.identity.as_str())
            .collect();
        if keyed.is_empty() {
            return Ok(vec![false; messages.len()]);
        }
        let exact = stored_in_any(self.store.sql(), session_key, &keyed)?;
        let keys: Vec<_> = messages
            .iter()
            .map(|m| user_turn_key(m).filter(|_| !exact.contains(&m.identity)))
            .collect();
        let span = keys.iter().flatten().map(|k| k.at_ms);
        let (Some(from), Some(to)) = (span.clone().min(), span.max()) else {
            return Ok(vec![false; messages.len()]);
        };
        let raw = user_messages_between(
            self.store.sql(),
            session_key,
            from,
            to.saturating_add(SAME_TURN_WINDOW_MS),
        )?;
        let stored = raw
            .iter()
            .map(|json| {
                let value = serde_json::from_str(json).map_err(|err| {
                    crate::error::Error::unexpected_data(format!(
                        "a stored message is not valid JSON: {err}"
                    ))
                })?;
                parse_message(&value, "stored message")
            })
            .collect::<Result<Vec<_>>>()?;
        // A stored copy that is some transcript message's own stands for that one only.
        let stored_keys: Vec<_> = stored
            .iter()
            .filter(|m| !exact.contains(&m.identity))
            .filter_map(user_turn_key)
            .collect();
        Ok(matched_in_store(&keys, &stored_keys))
    }
}
