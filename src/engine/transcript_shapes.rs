//! What a catch-up from the host's transcript (`ingest` with `fromTranscript`) must not store
//! again although no content identity finds it: a user message a turn stored in another shape
//! (OpenClaw 2026.7: the transcript's string and admission time, the turn's text parts and prompt
//! time; [`crate::core::transcript_match`]).

use super::Engine;
use crate::core::message::{parse_message, StoredMessage};
use crate::core::transcript_match::{matched_in_store, user_turn_key, SAME_TURN_WINDOW_MS};
use crate::error::Result;
use crate::store::user_messages_near::user_messages_between;
use crate::store::Sql;

impl<S: Sql> Engine<S> {
    /// For each of `messages` (read back from the host's transcript), whether a conversation of
    /// `session_key` stores it as the same user turn in another shape. One read of the key's
    /// user messages in the time span the transcript's user messages cover; none when they
    /// have no key (other roles are recognised by their content identity alone).
    pub(super) fn stored_in_another_shape(
        &mut self,
        session_key: &str,
        messages: &[StoredMessage],
    ) -> Result<Vec<bool>> {
        let keys: Vec<_> = messages.iter().map(user_turn_key).collect();
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
        let stored_keys: Vec<_> = stored.iter().filter_map(user_turn_key).collect();
        Ok(matched_in_store(&keys, &stored_keys))
    }
}
