//! Session lifecycle beyond plain appends: resets and rollovers. A reset never deletes anything:
//! the session key's active conversation is archived with its cause (kept, searchable) and the
//! next write starts a new conversation, so compaction and assembly work on the new session's
//! messages only (seed 04).

use super::params::{validate_session, ResetParams, SessionRef};
use super::Engine;
use crate::error::Result;
use crate::store::{conversations, Sql};

impl<S: Sql> Engine<S> {
    /// Archives the session key's active conversation. Returns whether there was one.
    pub fn reset(&mut self, params: ResetParams, now_ms: i64) -> Result<bool> {
        validate_session(&params.session)?;
        let cause = params
            .cause
            .as_deref()
            .filter(|c| !c.trim().is_empty())
            .unwrap_or("reset");
        self.archive_active(&params.session, &format!("host-{cause}"), now_ms)
    }

    pub(crate) fn archive_active(
        &mut self,
        session: &SessionRef,
        cause: &str,
        now_ms: i64,
    ) -> Result<bool> {
        let Some(conversation) = self.conversation(session)? else {
            return Ok(false);
        };
        self.store
            .write(|tx| conversations::archive(tx.sql(), conversation.id, cause, now_ms))?;
        Ok(true)
    }
}
