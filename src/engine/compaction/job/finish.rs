//! Ending a job: what it reports (summaries written, how far the view and the prompt shrank)
//! and the pending work it clears; and the token counts a job reads on its way.

use crate::engine::compaction::CompactionReport;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::store::compaction as store;
use crate::store::{conversations, Sql};

impl<S: Sql> Engine<S> {
    /// Ends a job: clears pending work when it succeeded, and reports. A `compact` job reports
    /// how far the prompt shrinks: its summaries, and the view under its budget (which leaves
    /// out the oldest messages when summaries could not keep up). It never fails a turn while
    /// the view could shrink; when nothing could, it says so in words hosts treat as a skip.
    pub(super) fn finish(
        &mut self,
        id: u64,
        ok: bool,
        reason: String,
        now_ms: i64,
    ) -> Result<CompactionReport> {
        let job = self
            .jobs
            .remove(&id)
            .ok_or_else(|| Error::unexpected_data("compaction job disappeared"))?;
        let context_after = self.context_tokens_of(job.conversation_id)?;
        let view_after = match job.view {
            Some(aim) => {
                self.view_tokens_under(&job.session_key, job.conversation_id, aim.budget)?
            }
            None => None,
        };
        let shrunk = match (job.view, view_after) {
            (Some(aim), Some(after)) => u64::from(aim.before).saturating_sub(after),
            _ => 0,
        };
        let compacted = !job.summary_ids.is_empty() || shrunk > 0;
        // The job ran to its end: the pending work is done (ranges the summarizer failed on
        // have their fallbacks), whatever it reports.
        let work_done = ok;
        // Fallbacks keep the view whole, but a summarizer that failed is still a failure to
        // report (to `maintain`'s caller; `compact` reports how the prompt shrank).
        let ok = ok && job.failures.is_empty() && !job.breaker_open;
        let ok = ok || (job.view.is_some() && compacted);
        let reason = match &job.fallback_only {
            Some(why) => format!(
                "{reason}; extractive fallback summaries instead of the summarizer's: {why}"
            ),
            None => reason,
        };
        // A job that handed its summaries over leaves the pending work to the successor.
        let hand_over = job.asking().hand_over;
        if (ok || work_done) && !hand_over {
            self.clear_pending(job.conversation_id, now_ms)?;
        }
        let tokens_after = if job.host_counted {
            job.tokens_before
                .saturating_sub(i64::try_from(shrunk).unwrap_or(i64::MAX))
        } else {
            context_after
        };
        let reason = match (compacted, job.view, view_after) {
            (true, Some(aim), Some(after)) => format!(
                "{} summaries written, view {} -> {after} tokens ({} -> {tokens_after} prompt tokens); {reason}",
                job.summary_ids.len(),
                aim.before,
                job.tokens_before
            ),
            (true, _, _) => format!("{} summaries written ({} -> {} tokens); {reason}", job.summary_ids.len(), job.tokens_before, context_after),
            (false, Some(_), after) if !reason.starts_with("already under target") && !reason.starts_with("nothing to compact") => {
                let view = after.map_or_else(String::new, |a| format!(" the view is already down to {a} tokens and"));
                format!("nothing to compact:{view} {reason}")
            }
            (false, _, _) => reason,
        };
        let ok = ok || job.view.is_some();
        Ok(CompactionReport {
            ok,
            compacted,
            reason,
            tokens_before: job.tokens_before,
            tokens_after,
            summary_ids: job.summary_ids,
            failures: job.failures,
            hand_over,
        })
    }

    /// The tokens of the conversation's view under `budget` (None when it is no longer active).
    pub(super) fn view_tokens_under(
        &mut self,
        session_key: &str,
        conversation_id: i64,
        budget: u32,
    ) -> Result<Option<u64>> {
        let Some(conversation) = conversations::find_active(self.store.sql(), session_key)?
            .filter(|c| c.id == conversation_id)
        else {
            return Ok(None);
        };
        Ok(Some(
            self.views
                .view(self.store.sql(), &conversation, budget)?
                .tokens(),
        ))
    }

    pub(super) fn clear_pending(&mut self, conversation_id: i64, now_ms: i64) -> Result<()> {
        self.store.write(|tx| {
            let (retry, pending) = store::load_state(tx.sql(), conversation_id)?;
            if pending.is_some() {
                store::save_state(tx.sql(), conversation_id, &retry, None, now_ms)?;
            }
            Ok(())
        })
    }

    /// The active context's tokens of a conversation.
    pub(super) fn context_tokens_of(&mut self, conversation_id: i64) -> Result<i64> {
        let row = self.store.sql().query_row(
            "SELECT context_token_count FROM conversations WHERE id = ?1",
            &[conversation_id.into()],
        )?;
        row.map_or(Ok(0), |r| r.int(0))
    }

    /// The budget the model's prompt really has: the smallest of the host's value and the
    /// budget of the latest assemble (which accounts for the system prompt).
    pub(crate) fn prompt_budget(
        &self,
        conversation: &conversations::Conversation,
        host: Option<f64>,
    ) -> u32 {
        let host = host
            .filter(|b| b.is_finite() && *b > 0.0)
            .map(|b| b.min(f64::from(u32::MAX)) as u32);
        match (host, self.views.budget(conversation.id)) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => self.config.default_token_budget,
        }
    }
}
