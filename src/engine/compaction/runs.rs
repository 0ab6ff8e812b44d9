//! The engine's side of `core::compaction::hold`: when a job starts, whether a summary for the
//! conversation is already being written in this process, what the last process left behind,
//! and whether and how long to ask; when a request goes out or its answer comes back, the record
//! in the database. Owns no awaiting (the shim waits, for as long as each request says).

use crate::core::compaction::hold::{self, Ask, HoldInput, SummaryRuns};
use crate::engine::Engine;
use crate::error::Result;
use crate::store::summary_runs as store;
use crate::store::Sql;

/// How a job may ask the summarizer, decided when it starts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct AskPlan {
    /// The host's turn waits for the call that runs the job.
    pub turn_waits: bool,
    /// The process's runner id, when the caller gave one (records outstanding requests).
    pub runner: Option<String>,
    /// The first request's hold (`None`: until the answer arrives).
    pub first_hold_ms: Option<u32>,
    /// The first request is a catch-up (see `core::compaction::hold`).
    pub catch_up: bool,
    /// Requests the job has sent.
    pub sent: u32,
    /// When the job's latest request went out.
    pub asked_at_ms: Option<i64>,
}

impl<S: Sql> Engine<S> {
    /// Decides, as a job for `conversation_id` starts, whether it may ask for summaries: `Err`
    /// with the reason when it may not (the job then only shrinks the view, or does nothing).
    pub(crate) fn plan_asking(&mut self, conversation_id: i64, turn_waits: bool, runner: Option<(&str, u32)>, now_ms: i64) -> Result<std::result::Result<AskPlan, String>> {
        if let Some(since) = self.live_request_since(conversation_id, now_ms) {
            return Ok(Err(format!(
                "a summary for this conversation is still being written (asked {} s ago); it is applied when it arrives",
                (now_ms - since).max(0) / 1000
            )));
        }
        // Only callers that record their requests (a runner id: the OpenClaw shim) take part in
        // the lost-request rule; others (embedders, tests) have no turn that could catch up.
        let mut runs = SummaryRuns::default();
        if let Some((runner, turns)) = runner {
            runs = store::load(self.store.sql(), conversation_id)?;
            if runs.observe(runner, false, turns > 1, now_ms) {
                self.store.write(|sql| store::save(sql, conversation_id, &runs))?;
            }
        }
        let catch_up_turns = self.config.summary_catch_up_turns;
        let unserved = if turn_waits && runs.abandoned > 0 { store::unserved_turns(self.store.sql(), conversation_id, catch_up_turns)? } else { 0 };
        let input = self.hold_input(turn_waits, &runs, unserved);
        Ok(match hold::first_request(&input) {
            Ask::Now { hold_ms, catch_up } => Ok(AskPlan { turn_waits, runner: runner.map(|(r, _)| r.to_owned()), first_hold_ms: hold_ms, catch_up, sent: 0, asked_at_ms: None }),
            Ask::Refrain(why) => Err(why),
        })
    }

    fn hold_input(&self, turn_waits: bool, runs: &SummaryRuns, unserved_turns: u32) -> HoldInput {
        HoldInput {
            turn_waits,
            unserved_turns,
            abandoned: runs.abandoned,
            turn_wait_ms: self.config.summary_turn_wait_ms,
            catch_up_turns: self.config.summary_catch_up_turns,
            summary_timeout_ms: self.config.summary_timeout_ms,
        }
    }

    /// When the request of a live job of this conversation went out, if one is waiting for its
    /// answer here. A job whose answer never came back (its caller is gone) is dropped once its
    /// request must have ended by its own time limit.
    fn live_request_since(&mut self, conversation_id: i64, now_ms: i64) -> Option<i64> {
        let limit = i64::from(self.config.summary_timeout_ms).saturating_mul(2);
        self.jobs.retain(|_, job| job.conversation_id() != conversation_id || job.asking().asked_at_ms.is_none_or(|at| now_ms.saturating_sub(at) <= limit));
        self.jobs.values().filter(|job| job.conversation_id() == conversation_id).filter_map(|job| job.asking().asked_at_ms).max()
    }

    /// Job `id` is about to send a request: its hold, and the record of the request in flight;
    /// or why it sends none (a catch-up asks for one summary only).
    pub(crate) fn next_request(&mut self, id: u64, now_ms: i64) -> Result<std::result::Result<Option<u32>, String>> {
        let Some(job) = self.jobs.get(&id) else { return Ok(Ok(None)) };
        let (plan, conversation_id) = (job.asking().clone(), job.conversation_id());
        let hold = if plan.sent == 0 {
            plan.first_hold_ms
        } else {
            let runs = if plan.runner.is_some() { store::load(self.store.sql(), conversation_id)? } else { SummaryRuns::default() };
            match hold::later_request(&self.hold_input(plan.turn_waits, &runs, 0), plan.catch_up) {
                Ask::Now { hold_ms, .. } => hold_ms,
                Ask::Refrain(why) => return Ok(Err(why)),
            }
        };
        if let Some(runner) = &plan.runner {
            self.store.write(|sql| {
                let mut runs = store::load(sql, conversation_id)?;
                runs.asked(runner, now_ms);
                store::save(sql, conversation_id, &runs)
            })?;
        }
        if let Some(job) = self.jobs.get_mut(&id) {
            let plan = job.asking_mut();
            plan.sent += 1;
            plan.asked_at_ms = Some(now_ms);
        }
        Ok(Ok(hold))
    }

    /// Job `id`'s request was answered (a summary or an error).
    pub(crate) fn request_answered(&mut self, id: u64) -> Result<()> {
        let Some(job) = self.jobs.get_mut(&id) else { return Ok(()) };
        job.asking_mut().asked_at_ms = None;
        let plan = job.asking().clone();
        let Some(_) = plan.runner else { return Ok(()) };
        // The first request of a catch-up job is the one the turn waited for.
        let catch_up = plan.catch_up && plan.sent == 1;
        let conversation_id = job.conversation_id();
        self.store.write(|sql| {
            let mut runs = store::load(sql, conversation_id)?;
            let before = runs.clone();
            runs.answered(catch_up);
            if runs == before {
                return Ok(());
            }
            store::save(sql, conversation_id, &runs)
        })
    }
}
