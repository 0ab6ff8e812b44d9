//! A compaction job: a sequence of passes run for one `maintain` or `compact` call. Jobs live in
//! the engine between a summary request and its answer; every database write happens inside
//! [`Engine::compaction_continue`] or [`Engine::compaction_start`], never across an await.
//!
//! A range's summary is in the view whatever the summarizer does. When a pass's escalation
//! gives up (error, timeout, loop, echo, too long), the extractive summary of its range is
//! stored at level `fallback` (the failure is still recorded and counts for backoff), and the
//! rest of the job summarizes extractively too, without asking; a job that may not ask at all
//! (backoff, breaker) does the same. Once the summarizer's answer is stored again, the job
//! redoes the oldest fallback summary in the context with it (one per job), as `/lcm repair`
//! does for all of them.

use super::pass::Pass;
use super::runs::{AskPlan, Asking};
use super::target::{Goal, ViewAim};
use super::{CompactionParams, CompactionReport, CompactionStep, Summarizer, SummaryAnswer};
use crate::core::compaction::{CompactionConfig, RetryState, SummarizerOutput};
use crate::engine::params::validate_session;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::store::compaction as store;
use crate::store::Sql;

mod accept;
mod drive;
mod finish;
mod plan;

use accept::SpentCall;

/// Passes one job may run before it stops and reports (a sweep resumes on a later call).
const MAX_PASSES: u32 = 24;

#[derive(Debug, Clone)]
pub(crate) struct Job {
    conversation_id: i64,
    session_key: String,
    summarizer: Summarizer,
    goal: Goal,
    /// The compaction config fitted to this job's budget.
    config: CompactionConfig,
    /// For `compact`: the view budget it establishes and the view before it.
    view: Option<ViewAim>,
    /// Why the summarizer may not be asked now (another process is writing, a successor
    /// takes over), when it may not: the job then writes nothing.
    no_summaries: Option<String>,
    /// Why the summarizer is not asked in this job (backoff, breaker, or an answer of this job
    /// was unusable), when it is not: its passes store the extractive fallback instead.
    fallback_only: Option<String>,
    /// A summarizer answer was stored in this job (it answers again).
    llm_stored: bool,
    /// The job has planned its one redo of a fallback summary.
    redone: bool,
    /// The breaker was open when the job started: its report is a failure to report, whatever
    /// fallbacks it stored.
    breaker_open: bool,
    tokens_before: i64,
    host_counted: bool,
    /// The host aborted the call: a failure that says nothing about the provider.
    host_aborted: bool,
    passes: u32,
    summary_ids: Vec<i64>,
    failures: Vec<String>,
    pass: Option<Pass>,
    /// Estimated tokens of the prompt awaiting an answer.
    asked_tokens: u32,
    /// Whether and how long its requests may hold the host's call.
    asking: AskPlan,
}

impl Job {
    pub(crate) fn conversation_id(&self) -> i64 {
        self.conversation_id
    }

    pub(crate) fn asking(&self) -> &AskPlan {
        &self.asking
    }

    pub(crate) fn asking_mut(&mut self) -> &mut AskPlan {
        &mut self.asking
    }
}

/// A summarizer's answer on its way into the escalation, with what the call cost.
struct Answered {
    output: SummarizerOutput,
    model: Option<String>,
    /// Tokens in and out, and whether either is our estimate.
    tokens: (i64, i64, bool),
}

/// Why the summarizer may not be asked now, if it may not.
fn summaries_blocked(retry: &RetryState, now_ms: i64) -> Option<String> {
    if retry.breaker_open && !retry.may_attempt(now_ms) {
        return Some("summarization is paused: repeated authentication failures opened the breaker; it probes again later".to_owned());
    }
    if retry.may_attempt(now_ms) {
        return None;
    }
    let until = retry
        .next_retry_at_ms
        .map_or_else(String::new, |t| format!(" until {t}"));
    Some(format!(
        "compaction is backing off after {} failures{until}",
        retry.consecutive_failures
    ))
}

impl<S: Sql> Engine<S> {
    /// Starts a compaction job; returns a summary request or the finished report.
    pub fn compaction_start(
        &mut self,
        params: CompactionParams,
        now_ms: i64,
    ) -> Result<CompactionStep> {
        validate_session(&params.session)?;
        let Some(conversation) = self.conversation(&params.session)? else {
            return Ok(CompactionStep::Done(CompactionReport {
                ok: true,
                compacted: false,
                reason: "nothing to compact: no conversation stored for this session yet"
                    .to_owned(),
                tokens_before: 0,
                tokens_after: 0,
                summary_ids: Vec::new(),
                failures: Vec::new(),
                hand_over: false,
            }));
        };
        let (retry, pending) = store::load_state(self.store.sql(), conversation.id)?;
        let live = params
            .current_token_count
            .filter(|t| t.is_finite() && *t > 0.0)
            .map(|t| t.min(9e15) as i64);
        let done = |ok: bool, reason: String, tokens: i64, hand_over: bool| {
            Ok(CompactionStep::Done(CompactionReport {
                ok,
                compacted: false,
                reason,
                tokens_before: tokens,
                tokens_after: tokens,
                summary_ids: Vec::new(),
                failures: Vec::new(),
                hand_over,
            }))
        };
        let fallback_tokens = conversation.context_token_count.max(live.unwrap_or(0));
        let Some(aim) = self.aim(&conversation, &params, pending.as_ref(), &retry)? else {
            return done(
                true,
                "no compaction is pending".to_owned(),
                fallback_tokens,
                false,
            );
        };
        // Backoff and breaker stop the summarizer's calls, not the summaries: the job's passes
        // store extractive fallbacks (redone once the summarizer answers again).
        let paused =
            summaries_blocked(&retry, now_ms).filter(|_| params.summarizer == Summarizer::Host);
        let mut blocked = None;
        if let Goal::Under(target) = aim.goal {
            let nothing_to_shrink = aim.view.is_none_or(|v| v.before <= v.budget);
            if conversation.context_token_count <= target && nothing_to_shrink {
                self.clear_pending(conversation.id, now_ms)?;
                return done(
                    true,
                    format!(
                        "already under target ({} <= {target} tokens)",
                        conversation.context_token_count
                    ),
                    aim.tokens_before,
                    false,
                );
            }
        }
        // Asked only now, so that a job with nothing to do hands nothing over.
        let mut asking = AskPlan::default();
        if paused.is_none() && params.summarizer == Summarizer::Host {
            match self.plan_asking(conversation.id, &params, now_ms)? {
                Asking::Plan(plan) => asking = plan,
                Asking::Refrain(why) => blocked = Some(why),
                Asking::HandOver(why) => {
                    blocked = Some(why);
                    asking.hand_over = true;
                }
            }
        }
        if let (Some(why), None) = (&blocked, &aim.view) {
            return done(true, why.clone(), aim.tokens_before, asking.hand_over);
        }
        let breaker_open = retry.breaker_open && paused.is_some();
        let job = Job {
            conversation_id: conversation.id,
            session_key: conversation.session_key.clone(),
            summarizer: params.summarizer,
            goal: aim.goal,
            config: aim.config,
            view: aim.view,
            no_summaries: blocked,
            fallback_only: paused,
            llm_stored: false,
            redone: false,
            breaker_open,
            tokens_before: aim.tokens_before,
            host_counted: aim.host_counted,
            host_aborted: false,
            passes: 0,
            summary_ids: Vec::new(),
            failures: Vec::new(),
            pass: None,
            asked_tokens: 0,
            asking,
        };
        self.next_job += 1;
        let id = self.next_job;
        self.jobs.insert(id, job);
        self.drive(id, None, now_ms)
    }

    /// Hands the answer to a summary request back; returns the next request or the report.
    pub fn compaction_continue(
        &mut self,
        answer: SummaryAnswer,
        now_ms: i64,
    ) -> Result<CompactionStep> {
        let id = answer.job_id;
        if !self.jobs.contains_key(&id) {
            return Err(Error::input(
                "jobId",
                format!("no compaction job {id} is waiting for a summary"),
            ));
        }
        let asked = self.jobs.get(&id).map_or(0, |job| job.asked_tokens);
        self.request_answered(id)?;
        if answer.error.as_ref().is_some_and(|e| e.kind == "aborted") {
            if let Some(job) = self.jobs.get_mut(&id) {
                job.host_aborted = true;
            }
        }
        let answered = Answered {
            output: answer.output(),
            model: answer.model.clone(),
            tokens: answer.tokens(asked),
        };
        self.drive(id, Some(answered), now_ms)
    }
}
