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

use super::pass::{Allowed, Pass};
use super::runs::{AskPlan, Asking};
use super::target::{Goal, ViewAim};
use super::{
    CompactionParams, CompactionReport, CompactionStep, Summarizer, SummaryAnswer, SummaryRequest,
};
use crate::core::compaction::{
    extractive, CompactionConfig, Level, RetryKind, RetryState, Step, SummarizerOutput, SummaryKind,
};
use crate::engine::params::validate_session;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::store::compaction::{self as store, Event};
use crate::store::{conversations, spend, Sql};

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

/// One summarizer call and what came of it, to record in `summarizer_calls`.
#[derive(Debug, Clone)]
struct SpentCall {
    pass: &'static str,
    level: &'static str,
    input: i64,
    output: i64,
    estimated: bool,
    outcome: &'static str,
    reason: Option<String>,
}

impl SpentCall {
    fn record(&self, sql: &mut impl Sql, conversation_id: i64, now_ms: i64) -> Result<()> {
        let call = spend::Call {
            conversation_id,
            pass: self.pass,
            level: self.level,
            input_tokens: self.input,
            output_tokens: self.output,
            counted_by: if self.estimated {
                "estimate"
            } else {
                "provider"
            },
            outcome: self.outcome,
            reason: self.reason.as_deref(),
        };
        spend::record(sql, &call, now_ms)
    }
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

    /// Runs the job until it needs the host's LLM or is finished.
    fn drive(
        &mut self,
        id: u64,
        mut answer: Option<Answered>,
        now_ms: i64,
    ) -> Result<CompactionStep> {
        let backoff = self.config.compaction.backoff_policy();
        loop {
            let Some(job) = self.jobs.get_mut(&id) else {
                return Err(Error::unexpected_data(format!(
                    "compaction job {id} disappeared"
                )));
            };
            let (summarizer, conversation_id, config) =
                (job.summarizer, job.conversation_id, job.config.clone());
            let (step, model, call) = match (&mut job.pass, answer.take()) {
                (
                    Some(pass),
                    Some(Answered {
                        output,
                        model,
                        tokens,
                    }),
                ) => {
                    let level = pass.level();
                    (
                        pass.feed(output, &config),
                        model,
                        Some((pass.kind(), level, tokens)),
                    )
                }
                (Some(pass), None) if summarizer == Summarizer::Extractive => {
                    let output = pass.run_extractive(&config);
                    (pass.feed(output, &config), None, None)
                }
                (Some(pass), None) if job.fallback_only.is_some() => {
                    let Some(draft) = pass.fallback_draft(&config) else {
                        let why = format!(
                            "the extractive fallback of this {} pass would not save view tokens; its range stays as it is ({})",
                            pass.kind().as_str(),
                            job.fallback_only.clone().unwrap_or_default()
                        );
                        job.pass = None;
                        return Ok(CompactionStep::Done(self.finish(id, true, why, now_ms)?));
                    };
                    (Step::Accept(draft), None, None)
                }
                (Some(pass), None) => {
                    let prompt = pass.prompt(&config);
                    let catch_up = job.asking.catch_up && job.asking.sent == 0;
                    job.asked_tokens = crate::core::tokens::estimate_text(&prompt.text);
                    let hold_ms = match self.next_request(id, now_ms)? {
                        Ok(hold_ms) => hold_ms,
                        Err(why) => {
                            return Ok(CompactionStep::Done(self.finish(id, true, why, now_ms)?))
                        }
                    };
                    return Ok(CompactionStep::NeedSummary(SummaryRequest {
                        job_id: id,
                        prompt: prompt.text,
                        max_tokens: prompt.max_output_tokens,
                        purpose: prompt.purpose,
                        kind: prompt.kind.as_str(),
                        level: prompt.level.as_str(),
                        hold_ms,
                        catch_up,
                    }));
                }
                (None, _) => {
                    if let Some(report) = self.next_pass(id, now_ms)? {
                        return Ok(CompactionStep::Done(report));
                    }
                    continue;
                }
            };
            let spent = |outcome: &'static str, reason: Option<String>| {
                call.map(|(kind, level, (input, output, estimated))| SpentCall {
                    pass: kind.as_str(),
                    level: level.as_str(),
                    input,
                    output,
                    estimated,
                    outcome,
                    reason,
                })
            };
            match step {
                Step::Run(_) => {
                    let reason = self
                        .jobs
                        .get(&id)
                        .and_then(|j| j.pass.as_ref())
                        .and_then(Pass::last_rejection);
                    if let Some(call) = spent("rejected", reason) {
                        self.store
                            .write(|tx| call.record(tx.sql(), conversation_id, now_ms))?;
                    }
                }
                Step::Accept(draft) => self.accept(
                    id,
                    conversation_id,
                    &draft,
                    model.as_deref(),
                    spent("stored", None),
                    now_ms,
                )?,
                Step::GiveUp(give_up) => {
                    let job = self
                        .jobs
                        .get_mut(&id)
                        .ok_or_else(|| Error::unexpected_data("compaction job disappeared"))?;
                    let pass = job.pass.take();
                    let covered = pass.as_ref().map_or(0, |p| p.covered_messages());
                    let line = give_up.log_line(covered);
                    job.failures.push(line.clone());
                    let policy = backoff;
                    let pass_name = pass.as_ref().map_or("leaf", |p| p.kind().as_str());
                    // An answer too long for a leaf chunk raises the chunk floor (a larger chunk
                    // next time); an unusable answer also holds back this same request for the
                    // backoff, so a chunk that cannot grow is not asked for again every turn.
                    let too_long = give_up
                        .last_failure()
                        .filter(|f| f.too_long())
                        .and_then(|f| f.answer_tokens());
                    let grow = match (&pass, too_long) {
                        // A redo's range is a summary: its size says nothing of the chunks.
                        (Some(p), Some(answer))
                            if p.kind() == SummaryKind::Leaf && !p.is_redo() =>
                        {
                            Some((u32::try_from(p.range_tokens()).unwrap_or(u32::MAX), answer))
                        }
                        _ => None,
                    };
                    let request = pass.as_ref().map(|p| p.request_fingerprint().to_owned());
                    let count_it = !job.host_aborted;
                    let outcome = if give_up.retry_kind() == RetryKind::Output {
                        "rejected"
                    } else {
                        "failed"
                    };
                    let call = spent(outcome, Some(give_up.reason()));
                    let telemetry = pass.as_ref().and_then(Pass::redaction_telemetry);
                    self.store.write(|tx| {
                        store::record_event(
                            tx.sql(),
                            &Event {
                                conversation_id,
                                pass: pass_name,
                                level: None,
                                outcome: "failed",
                                reason: &line,
                                tokens_before: None,
                                tokens_after: None,
                                summary_id: None,
                                telemetry_json: telemetry.as_deref(),
                            },
                            now_ms,
                        )?;
                        if let Some(call) = &call {
                            call.record(tx.sql(), conversation_id, now_ms)?;
                        }
                        if !count_it {
                            return Ok(());
                        }
                        let (mut retry, pending) = store::load_state(tx.sql(), conversation_id)?;
                        let kind = give_up.retry_kind();
                        if let Some((chunk, answer)) = grow {
                            retry.on_answer_too_long(chunk, answer);
                        }
                        if let (RetryKind::Output, Some(request)) = (kind, &request) {
                            retry.on_unusable_request(request, now_ms, &policy);
                        }
                        retry.on_failure(kind, now_ms, &policy);
                        store::save_state(
                            tx.sql(),
                            conversation_id,
                            &retry,
                            pending.as_ref(),
                            now_ms,
                        )
                    })?;
                    // No usable answer for the range: its extractive summary goes into the view
                    // instead (level `fallback`), and the rest of the job asks no more. Not for
                    // a redo (the fallback is there already), nor when the host aborted the call.
                    let fallback = match &pass {
                        Some(p) if count_it && !p.is_redo() && summarizer == Summarizer::Host => {
                            p.fallback_draft(&config)
                        }
                        _ => None,
                    };
                    let Some(draft) = fallback else {
                        return Ok(CompactionStep::Done(self.finish(id, false, line, now_ms)?));
                    };
                    if let Some(job) = self.jobs.get_mut(&id) {
                        job.pass = pass;
                        job.fallback_only = Some(format!(
                            "the summarizer gave no usable answer in this job ({})",
                            give_up.reason()
                        ));
                    }
                    self.accept(id, conversation_id, &draft, None, None, now_ms)?;
                }
            }
        }
    }

    /// Stores an accepted summary in one transaction; a stale plan is logged and replanned.
    fn accept(
        &mut self,
        id: u64,
        conversation_id: i64,
        draft: &crate::core::compaction::SummaryDraft,
        model: Option<&str>,
        call: Option<SpentCall>,
        now_ms: i64,
    ) -> Result<()> {
        let job = self
            .jobs
            .get_mut(&id)
            .ok_or_else(|| Error::unexpected_data("compaction job disappeared"))?;
        let Some(pass) = job.pass.take() else {
            return Ok(());
        };
        let level = draft.level().as_str();
        let telemetry = pass.redaction_telemetry();
        let embedder = self.embedder.clone();
        let applied = self.store.write(|tx| {
            let applied = pass.apply(tx, conversation_id, draft, model, now_ms)?;
            crate::engine::semantic::embed_summary(
                tx.sql(),
                embedder.as_ref(),
                applied.summary_id,
                conversation_id,
                draft.text(),
            )?;
            let (before, after) = (applied.tokens_before, applied.tokens_after);
            let reason = match (pass.is_redo(), draft.level()) {
                (true, _) => format!(
                    "fallback summary {} redone by the summarizer: {before} tokens into {after}",
                    applied.summary_id
                ),
                (false, Level::Fallback) => format!(
                    "{} pass summarized {before} tokens into {after} with the extractive fallback (the summarizer gave no usable answer)",
                    pass.kind().as_str()
                ),
                _ => format!(
                    "{} pass summarized {before} tokens into {after}",
                    pass.kind().as_str()
                ),
            };
            store::record_event(
                tx.sql(),
                &Event {
                    conversation_id,
                    pass: pass.kind().as_str(),
                    level: Some(level),
                    outcome: "compacted",
                    reason: &reason,
                    tokens_before: Some(before),
                    tokens_after: Some(after),
                    summary_id: Some(applied.summary_id),
                    telemetry_json: telemetry.as_deref(),
                },
                now_ms,
            )?;
            if let Some(call) = &call {
                call.record(tx.sql(), conversation_id, now_ms)?;
            }
            // A fallback says nothing about the summarizer: its failures keep counting.
            if draft.level() != Level::Fallback {
                let (mut retry, pending) = store::load_state(tx.sql(), conversation_id)?;
                retry.on_success();
                store::save_state(tx.sql(), conversation_id, &retry, pending.as_ref(), now_ms)?;
            }
            Ok(applied)
        });
        if let Ok(applied) = &applied {
            self.views.replaced(
                self.store.sql(),
                conversation_id,
                applied.first_ordinal,
                applied.last_ordinal,
                applied.item.clone(),
            );
        }
        let job = self
            .jobs
            .get_mut(&id)
            .ok_or_else(|| Error::unexpected_data("compaction job disappeared"))?;
        match applied {
            Ok(applied) => {
                if !job.summary_ids.contains(&applied.summary_id) {
                    job.summary_ids.push(applied.summary_id);
                }
                job.llm_stored |=
                    draft.level() != Level::Fallback && draft.summarizer() != extractive::NAME;
            }
            Err(Error::Stale(reason)) => {
                let pass_name = pass.kind().as_str();
                let call = call.map(|c| SpentCall {
                    outcome: "stale",
                    reason: Some(reason.clone()),
                    ..c
                });
                self.store.write(|tx| {
                    if let Some(call) = &call {
                        call.record(tx.sql(), conversation_id, now_ms)?;
                    }
                    store::record_event(
                        tx.sql(),
                        &Event {
                            conversation_id,
                            pass: pass_name,
                            level: None,
                            outcome: "skipped",
                            reason: &reason,
                            tokens_before: None,
                            tokens_after: None,
                            summary_id: None,
                            telemetry_json: None,
                        },
                        now_ms,
                    )
                })?;
            }
            Err(err) => return Err(err),
        }
        Ok(())
    }

    /// Plans the job's next pass; returns the report when the job is done.
    fn next_pass(&mut self, id: u64, now_ms: i64) -> Result<Option<CompactionReport>> {
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

    /// Ends a job: clears pending work when it succeeded, and reports. A `compact` job reports
    /// how far the prompt shrinks: its summaries, and the view under its budget (which leaves
    /// out the oldest messages when summaries could not keep up). It never fails a turn while
    /// the view could shrink; when nothing could, it says so in words hosts treat as a skip.
    fn finish(
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
    fn view_tokens_under(
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

    fn clear_pending(&mut self, conversation_id: i64, now_ms: i64) -> Result<()> {
        self.store.write(|tx| {
            let (retry, pending) = store::load_state(tx.sql(), conversation_id)?;
            if pending.is_some() {
                store::save_state(tx.sql(), conversation_id, &retry, None, now_ms)?;
            }
            Ok(())
        })
    }

    /// The active context's tokens of a conversation.
    fn context_tokens_of(&mut self, conversation_id: i64) -> Result<i64> {
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
