//! The engine's side of `core::compaction::hold`: when a job starts, whether a summary for the
//! conversation is already being written in this process, what the last process left behind,
//! and whether and how long to ask; when a request goes out or its answer comes back, the record
//! in the database. Owns no awaiting (the shim waits, for as long as each request says).

use crate::core::compaction::hold::{self, Ask, HoldInput, SummaryRuns};
use crate::engine::compaction::CompactionParams;
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
    /// The job runs in a successor process (its answers are awaited in full).
    pub successor: bool,
    /// Its requests are leased: its process outlives its turns (a gateway, a successor).
    pub leases: bool,
    /// The job handed the conversation's summaries to a successor: it asks for nothing, leaves
    /// the pending work for the successor, and its report tells the caller to start one.
    pub hand_over: bool,
}

/// How a job may ask, decided when it starts.
pub(crate) enum Asking {
    Plan(AskPlan),
    /// It asks for nothing now (why, for the log).
    Refrain(String),
    /// It asks for nothing; the caller starts a successor that asks (why, for the log).
    HandOver(String),
}

/// Why a job asks for nothing while another process's leased request is out (asked `age_ms` ago).
fn written_elsewhere(age_ms: i64) -> String {
    format!("a summary for this conversation is being written by another process (asked {} s ago); it is applied when it arrives", age_ms.max(0) / 1000)
}

impl<S: Sql> Engine<S> {
    /// Decides, as a job for `conversation_id` starts, whether it may ask for summaries (the
    /// job then only shrinks the view, or does nothing, when it may not).
    pub(crate) fn plan_asking(
        &mut self,
        conversation_id: i64,
        params: &CompactionParams,
        now_ms: i64,
    ) -> Result<Asking> {
        if let Some(since) = self.live_request_since(conversation_id, now_ms) {
            return Ok(Asking::Refrain(format!(
                "a summary for this conversation is still being written (asked {} s ago); it is applied when it arrives",
                (now_ms - since).max(0) / 1000
            )));
        }
        // Only callers that record their requests (a runner id: the OpenClaw shim) take part in
        // the lost-request and lease rules; others (embedders, tests) have no turn that could
        // catch up and no other process to share a conversation with.
        let Some(runner) = params.runner.as_deref() else {
            let input = self.hold_input(params.turn_waits, &SummaryRuns::default(), 0);
            return Ok(Self::asking_from(hold::first_request(&input), &input, None));
        };
        let mut runs = store::load(self.store.sql(), conversation_id)?;
        let leased = runs
            .leased_elsewhere(runner, now_ms)
            .map(|other| other.since_ms);
        let mut changed = match leased {
            Some(_) => false,
            None => runs.observe(runner, false, params.runner_turns > 1, now_ms),
        };
        if params.successor && runs.handed_over_at_ms.is_some() {
            // A successor answers the hand-over, whatever it finds to do.
            runs.successor_started();
            changed = true;
        }
        if changed {
            self.store
                .write(|tx| store::save(tx.sql(), conversation_id, &runs))?;
        }
        if let Some(since) = leased {
            return Ok(Asking::Refrain(written_elsewhere(now_ms - since)));
        }
        let catch_up_turns = self.config.summary_catch_up_turns;
        let unserved = if params.turn_waits && runs.abandoned > 0 && !params.can_hand_over {
            store::unserved_turns(self.store.sql(), conversation_id, catch_up_turns)?
        } else {
            0
        };
        let mut input = self.hold_input(params.turn_waits, &runs, unserved);
        input.successor = params.successor;
        input.can_hand_over = params.can_hand_over;
        input.ends_with_turn = params.ends_with_turn;
        input.outlives_turns = params.outlives_turns;
        input.hand_over_pending_ms = runs.hand_over_pending(now_ms);
        let mut asking = Self::asking_from(hold::first_request(&input), &input, Some(runner));
        if let Asking::Plan(plan) = &mut asking {
            plan.leases = params.successor || params.outlives_turns || params.runner_turns > 1;
        }
        if let Asking::HandOver(_) = asking {
            runs.handed_over(now_ms);
            self.store
                .write(|tx| store::save(tx.sql(), conversation_id, &runs))?;
        }
        Ok(asking)
    }

    fn asking_from(ask: Ask, input: &HoldInput, runner: Option<&str>) -> Asking {
        match ask {
            Ask::Now { hold_ms, catch_up } => Asking::Plan(AskPlan {
                turn_waits: input.turn_waits,
                runner: runner.map(str::to_owned),
                first_hold_ms: hold_ms,
                catch_up,
                successor: input.successor,
                ..AskPlan::default()
            }),
            Ask::Refrain(why) => Asking::Refrain(why),
            Ask::HandOver(why) => Asking::HandOver(why),
        }
    }

    fn hold_input(&self, turn_waits: bool, runs: &SummaryRuns, unserved_turns: u32) -> HoldInput {
        HoldInput {
            turn_waits,
            unserved_turns,
            abandoned: runs.abandoned,
            turn_wait_ms: self.config.summary_turn_wait_ms,
            catch_up_turns: self.config.summary_catch_up_turns,
            summary_timeout_ms: self.config.summary_timeout_ms,
            can_hand_over: false,
            successor: false,
            ends_with_turn: false,
            outlives_turns: false,
            hand_over_pending_ms: None,
        }
    }

    /// When the request of a live job of this conversation went out, if one is waiting for its
    /// answer here. A job whose answer never came back (its caller is gone) is dropped once its
    /// request must have ended by its own time limit.
    fn live_request_since(&mut self, conversation_id: i64, now_ms: i64) -> Option<i64> {
        let limit = i64::from(self.config.summary_timeout_ms).saturating_mul(2);
        self.jobs.retain(|_, job| {
            job.conversation_id() != conversation_id
                || job
                    .asking()
                    .asked_at_ms
                    .is_none_or(|at| now_ms.saturating_sub(at) <= limit)
        });
        self.jobs
            .values()
            .filter(|job| job.conversation_id() == conversation_id)
            .filter_map(|job| job.asking().asked_at_ms)
            .max()
    }

    /// Job `id` is about to send a request: its hold, and the record of the request in flight;
    /// or why it sends none (a catch-up asks for one summary only).
    pub(crate) fn next_request(
        &mut self,
        id: u64,
        now_ms: i64,
    ) -> Result<std::result::Result<Option<u32>, String>> {
        let Some(job) = self.jobs.get(&id) else {
            return Ok(Ok(None));
        };
        let (plan, conversation_id) = (job.asking().clone(), job.conversation_id());
        let hold = if plan.sent == 0 {
            plan.first_hold_ms
        } else {
            let runs = if plan.runner.is_some() {
                store::load(self.store.sql(), conversation_id)?
            } else {
                SummaryRuns::default()
            };
            match hold::later_request(&self.hold_input(plan.turn_waits, &runs, 0), plan.catch_up) {
                Ask::Now { hold_ms, .. } => hold_ms,
                Ask::Refrain(why) | Ask::HandOver(why) => return Ok(Err(why)),
            }
        };
        if let Some(runner) = &plan.runner {
            // Checked again in the write: another process may have asked since this job started.
            let taken = self.store.write(|tx| {
                let mut runs = store::load_for_update(tx.sql(), conversation_id)?;
                if let Some(other) = runs.leased_elsewhere(runner, now_ms) {
                    return Ok(Some(other.since_ms));
                }
                runs.asked(runner, plan.leases, now_ms);
                store::save(tx.sql(), conversation_id, &runs)?;
                Ok(None)
            })?;
            if let Some(since) = taken {
                return Ok(Err(written_elsewhere(now_ms - since)));
            }
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
        let Some(job) = self.jobs.get_mut(&id) else {
            return Ok(());
        };
        job.asking_mut().asked_at_ms = None;
        let plan = job.asking().clone();
        let Some(runner) = plan.runner else {
            return Ok(());
        };
        // The first request of a catch-up job is the one the turn waited for; a successor waits
        // for all of its own.
        let awaited = plan.successor || (plan.catch_up && plan.sent == 1);
        let conversation_id = job.conversation_id();
        self.store.write(|tx| {
            let mut runs = store::load_for_update(tx.sql(), conversation_id)?;
            let before = runs.clone();
            runs.answered(&runner, awaited);
            if runs == before {
                return Ok(());
            }
            store::save(tx.sql(), conversation_id, &runs)
        })
    }

    /// Job `id` still waits for its request's answer: renews the request's lease
    /// (`core::compaction::hold::LEASE_MS` from now) so other processes keep taking it for live.
    /// Returns false when there is nothing to renew (no such job, no request out, or the
    /// request was meanwhile taken for abandoned by another process).
    pub fn compaction_renew(&mut self, id: u64, now_ms: i64) -> Result<bool> {
        let Some(job) = self.jobs.get(&id) else {
            return Ok(false);
        };
        let (plan, conversation_id) = (job.asking().clone(), job.conversation_id());
        let (Some(runner), Some(_)) = (plan.runner, plan.asked_at_ms) else {
            return Ok(false);
        };
        self.store.write(|tx| {
            let mut runs = store::load_for_update(tx.sql(), conversation_id)?;
            let renewed = runs.renew(&runner, now_ms);
            if renewed {
                store::save(tx.sql(), conversation_id, &runs)?;
            }
            Ok(renewed)
        })
    }

    /// A successor between jobs (`standing`): records it as a hand-over made now, so one-shot
    /// turns meanwhile refrain instead of starting another successor, and answers whether the
    /// conversation has compaction pending (the successor then runs it). When it leaves
    /// (`!standing`) the mark is cleared, so the next turn hands over anew. A successor that
    /// dies standing leaves the mark to run out ([`hold::HAND_OVER_GRACE_MS`]).
    pub fn successor_standby(
        &mut self,
        params: &crate::engine::compaction::SuccessorStandby,
        now_ms: i64,
    ) -> Result<bool> {
        crate::engine::params::validate_session(&params.session)?;
        let key = params.session.key().to_owned();
        let Some(conversation) = crate::store::conversations::find_active(self.store.sql(), &key)?
        else {
            return Ok(false);
        };
        let pending = params.standing && conversation.compaction_pending_json.is_some();
        // A poll writes only to put the mark up, renew it, or take it down.
        let mark = store::load(self.store.sql(), conversation.id)?.handed_over_at_ms;
        let fresh = mark.is_some_and(|at| now_ms.saturating_sub(at) < hold::STANDBY_REFRESH_MS);
        let write = if params.standing {
            !fresh
        } else {
            mark.is_some()
        };
        if !write {
            return Ok(pending);
        }
        self.store.write(|tx| {
            let mut runs = store::load_for_update(tx.sql(), conversation.id)?;
            if params.standing {
                runs.handed_over(now_ms);
            } else {
                runs.successor_started();
            }
            store::save(tx.sql(), conversation.id, &runs)
        })?;
        Ok(pending)
    }
}
