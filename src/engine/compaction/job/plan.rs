//! Planning a job's next pass: the one redo of a fallback summary once the summarizer answers
//! again, then leaf and condensed passes while the job's goal is not reached, within
//! `MAX_PASSES`; a request whose answers were unusable waits out its hold.

use super::MAX_PASSES;
use crate::core::compaction::Step;
use crate::engine::compaction::pass::{Allowed, Pass};
use crate::engine::compaction::target::Goal;
use crate::engine::compaction::CompactionReport;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::store::compaction as store;
use crate::store::Sql;

impl<S: Sql> Engine<S> {
    /// Plans the job's next pass; returns the report when the job is done.
    pub(super) fn next_pass(&mut self, id: u64, now_ms: i64) -> Result<Option<CompactionReport>> {
        let job = self
            .jobs
            .get(&id)
            .ok_or_else(|| Error::unexpected_data("compaction job disappeared"))?
            .clone();
        let config = job.config.clone();
        let tokens = self.context_tokens_of(job.conversation_id)?;
        if let Some(why) = &job.no_summaries {
            return self.finish(id, true, why.clone(), now_ms).map(Some);
        }
        if job.llm_stored && !job.redone && job.fallback_only.is_none() {
            if let Some(job) = self.jobs.get_mut(&id) {
                job.redone = true;
            }
            if let Some(mut pass) = Pass::plan_redo(
                self.store.sql(),
                job.conversation_id,
                &config,
                job.summarizer.name(),
                &self.redactor,
            )? {
                let (retry, _) = store::load_state(self.store.sql(), job.conversation_id)?;
                let blocked = retry
                    .resend_blocked_until(pass.request_fingerprint(), now_ms)
                    .is_some();
                if !blocked && matches!(pass.start(), Step::Run(_)) {
                    if let Some(job) = self.jobs.get_mut(&id) {
                        job.pass = Some(pass);
                    }
                    return Ok(None);
                }
            }
        }
        let allowed = match job.goal {
            Goal::Pending if job.passes >= 2 => {
                return self
                    .finish(id, true, "pending compaction done".to_owned(), now_ms)
                    .map(Some)
            }
            Goal::Pending if job.passes == 1 => Allowed::CondenseOnly,
            Goal::Pending => Allowed::LeafThenCondense,
            Goal::Under(target) if tokens <= target => {
                return self
                    .finish(
                        id,
                        true,
                        format!("context is under target ({tokens} <= {target} tokens)"),
                        now_ms,
                    )
                    .map(Some);
            }
            Goal::Under(_) => Allowed::LeafThenCondense,
        };
        if job.passes >= MAX_PASSES {
            return self
                .finish(
                    id,
                    true,
                    format!(
                        "stopped after {MAX_PASSES} passes; the rest continues on a later call"
                    ),
                    now_ms,
                )
                .map(Some);
        }
        match Pass::plan(
            self.store.sql(),
            job.conversation_id,
            &config,
            allowed,
            job.summarizer.name(),
            &self.redactor,
        )? {
            Ok(mut pass) => {
                let (retry, _) = store::load_state(self.store.sql(), job.conversation_id)?;
                if let Some(at) = retry.resend_blocked_until(pass.request_fingerprint(), now_ms) {
                    let why = format!(
                        "the summarizer's answers to this same {} request were unusable {} time(s) in a row; it is sent again in {} s, or at once if it changes",
                        pass.kind().as_str(),
                        retry.unusable_repeats,
                        (at - now_ms + 999) / 1000
                    );
                    return self.finish(id, true, why, now_ms).map(Some);
                }
                if let Step::GiveUp(give_up) = pass.start() {
                    return self.finish(id, true, give_up.reason(), now_ms).map(Some);
                }
                let job = self
                    .jobs
                    .get_mut(&id)
                    .ok_or_else(|| Error::unexpected_data("compaction job disappeared"))?;
                job.passes += 1;
                job.pass = Some(pass);
                Ok(None)
            }
            Err(why) => self.finish(id, true, why, now_ms).map(Some),
        }
    }
}
