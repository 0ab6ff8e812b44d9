//! A compaction job: a sequence of passes run for one `maintain` or `compact` call. Jobs live in
//! the engine between a summary request and its answer; every database write happens inside
//! [`Engine::compaction_continue`] or [`Engine::compaction_start`], never across an await.

use super::pass::{Allowed, Pass};
use super::{AnswerError, CompactionMode, CompactionParams, CompactionReport, CompactionStep, Summarizer, SummaryAnswer, SummaryRequest};
use crate::core::compaction::{sweep_target, ErrorKind, Step, SummarizerError, SummarizerOutput};
use crate::engine::params::validate_session;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::store::compaction::{self as store, Event};
use crate::store::{conversations, Sql};

/// Passes one job may run before it stops and reports (a sweep resumes on a later call).
const MAX_PASSES: u32 = 24;

/// When a job is done.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Goal {
    /// One leaf pass, then a condensed pass if one is due.
    Pending,
    /// Until the active context is at or under this many tokens.
    Under(i64),
}

#[derive(Debug, Clone)]
pub(crate) struct Job {
    conversation_id: i64,
    summarizer: Summarizer,
    goal: Goal,
    tokens_before: i64,
    passes: u32,
    summary_ids: Vec<i64>,
    failures: Vec<String>,
    pass: Option<Pass>,
}

fn answer_output(answer: SummaryAnswer) -> SummarizerOutput {
    match (answer.text, answer.error) {
        (_, Some(AnswerError { kind, message })) => {
            let kind = match kind.as_str() {
                "auth" => ErrorKind::Auth,
                "timeout" => ErrorKind::Timeout,
                _ => ErrorKind::Other,
            };
            Err(SummarizerError::new(kind, message))
        }
        (Some(text), None) => Ok(text),
        (None, None) => Err(SummarizerError::new(ErrorKind::Other, "the summarizer returned neither text nor an error")),
    }
}

impl<S: Sql> Engine<S> {
    /// Starts a compaction job; returns a summary request or the finished report.
    pub fn compaction_start(&mut self, params: CompactionParams, now_ms: i64) -> Result<CompactionStep> {
        validate_session(&params.session)?;
        let Some(conversation) = self.conversation(&params.session)? else {
            return Ok(CompactionStep::Done(CompactionReport {
                ok: true,
                compacted: false,
                reason: "no conversation stored for this session yet".to_owned(),
                tokens_before: 0,
                tokens_after: 0,
                summary_ids: Vec::new(),
                failures: Vec::new(),
            }));
        };
        let (retry, pending) = store::load_state(self.store.sql(), conversation.id)?;
        let live = params.current_token_count.filter(|t| t.is_finite() && *t > 0.0).map(|t| t as i64);
        let tokens_before = conversation.context_token_count.max(live.unwrap_or(0));
        let done = |ok: bool, reason: String| {
            Ok(CompactionStep::Done(CompactionReport {
                ok,
                compacted: false,
                reason,
                tokens_before,
                tokens_after: tokens_before,
                summary_ids: Vec::new(),
                failures: Vec::new(),
            }))
        };
        let goal = match params.mode {
            CompactionMode::Pending => match &pending {
                None => return done(true, "no compaction is pending".to_owned()),
                Some(p) if p.work == "sweep" => {
                    Goal::Under(sweep_target(u64::from(p.budget), self.config.compaction.context_threshold) as i64)
                }
                Some(_) => Goal::Pending,
            },
            CompactionMode::Sweep => {
                let budget = self.prompt_budget(&conversation, params.token_budget);
                Goal::Under(sweep_target(u64::from(budget), self.config.compaction.context_threshold) as i64)
            }
        };
        if retry.breaker_open && !retry.may_attempt(now_ms) {
            return done(false, "summarization is paused: repeated authentication failures opened the breaker; it probes again later".to_owned());
        }
        let may = if params.force { retry.may_attempt_forced(now_ms) } else { retry.may_attempt(now_ms) };
        if !may {
            let until = retry.next_retry_at_ms.map_or_else(String::new, |t| format!(" until {t}"));
            return done(true, format!("compaction is backing off after {} failures{until}", retry.consecutive_failures));
        }
        if let Goal::Under(target) = goal {
            if tokens_before <= target {
                self.clear_pending(conversation.id, now_ms)?;
                return done(true, format!("already under target ({tokens_before} <= {target} tokens)"));
            }
        }
        let job = Job {
            conversation_id: conversation.id,
            summarizer: params.summarizer,
            goal,
            tokens_before,
            passes: 0,
            summary_ids: Vec::new(),
            failures: Vec::new(),
            pass: None,
        };
        self.next_job += 1;
        let id = self.next_job;
        self.jobs.insert(id, job);
        self.drive(id, None, now_ms)
    }

    /// Hands the answer to a summary request back; returns the next request or the report.
    pub fn compaction_continue(&mut self, answer: SummaryAnswer, now_ms: i64) -> Result<CompactionStep> {
        let id = answer.job_id;
        if !self.jobs.contains_key(&id) {
            return Err(Error::input("jobId", format!("no compaction job {id} is waiting for a summary")));
        }
        let model = answer.model.clone();
        self.drive(id, Some((answer_output(answer), model)), now_ms)
    }

    /// Runs the job until it needs the host's LLM or is finished.
    fn drive(&mut self, id: u64, mut answer: Option<(SummarizerOutput, Option<String>)>, now_ms: i64) -> Result<CompactionStep> {
        let config = self.config.compaction.clone();
        loop {
            let Some(job) = self.jobs.get_mut(&id) else {
                return Err(Error::storage(format!("compaction job {id} disappeared")));
            };
            let (summarizer, conversation_id) = (job.summarizer, job.conversation_id);
            let step = match (&mut job.pass, answer.take()) {
                (Some(pass), Some((output, model))) => (pass.feed(output, &config), model),
                (Some(pass), None) if summarizer == Summarizer::Extractive => {
                    let output = pass.run_extractive(&config);
                    (pass.feed(output, &config), None)
                }
                (Some(pass), None) => {
                    let prompt = pass.prompt(&config);
                    return Ok(CompactionStep::NeedSummary(SummaryRequest {
                        job_id: id,
                        prompt: prompt.text,
                        max_tokens: prompt.max_output_tokens,
                        purpose: prompt.purpose,
                        kind: prompt.kind.as_str(),
                        level: prompt.level.as_str(),
                    }));
                }
                (None, _) => {
                    if let Some(report) = self.next_pass(id, now_ms)? {
                        return Ok(CompactionStep::Done(report));
                    }
                    continue;
                }
            };
            match step {
                (Step::Run(_), _) => {}
                (Step::Accept(draft), model) => self.accept(id, conversation_id, &draft, model.as_deref(), now_ms)?,
                (Step::GiveUp(give_up), _) => {
                    let job = self.jobs.get_mut(&id).ok_or_else(|| Error::storage("compaction job disappeared"))?;
                    let pass = job.pass.take();
                    let covered = pass.as_ref().map_or(0, |p| p.covered_messages());
                    let line = give_up.log_line(covered);
                    job.failures.push(line.clone());
                    let kind = give_up.retry_kind();
                    let policy = config.backoff_policy();
                    let pass_name = pass.as_ref().map_or("leaf", |p| p.kind().as_str());
                    self.store.write(|sql| {
                        store::record_event(sql, &Event { conversation_id, pass: pass_name, level: None, outcome: "failed", reason: &line, tokens_before: None, tokens_after: None, summary_id: None, telemetry_json: None }, now_ms)?;
                        let (mut retry, pending) = store::load_state(sql, conversation_id)?;
                        retry.on_failure(kind, now_ms, &policy);
                        store::save_state(sql, conversation_id, &retry, pending.as_ref(), now_ms)
                    })?;
                    return Ok(CompactionStep::Done(self.finish(id, false, line, now_ms)?));
                }
            }
        }
    }

    /// Stores an accepted summary in one transaction; a stale plan is logged and replanned.
    fn accept(&mut self, id: u64, conversation_id: i64, draft: &crate::core::compaction::SummaryDraft, model: Option<&str>, now_ms: i64) -> Result<()> {
        let job = self.jobs.get_mut(&id).ok_or_else(|| Error::storage("compaction job disappeared"))?;
        let Some(pass) = job.pass.take() else { return Ok(()) };
        let level = draft.level().as_str();
        let applied = self.store.write(|sql| {
            let (summary_id, before, after) = pass.apply(sql, conversation_id, draft, model, now_ms)?;
            let reason = format!("{} pass summarized {before} tokens into {after}", pass.kind().as_str());
            store::record_event(sql, &Event { conversation_id, pass: pass.kind().as_str(), level: Some(level), outcome: "compacted", reason: &reason, tokens_before: Some(before), tokens_after: Some(after), summary_id: Some(summary_id), telemetry_json: None }, now_ms)?;
            let (mut retry, pending) = store::load_state(sql, conversation_id)?;
            retry.on_success();
            store::save_state(sql, conversation_id, &retry, pending.as_ref(), now_ms)?;
            Ok(summary_id)
        });
        let job = self.jobs.get_mut(&id).ok_or_else(|| Error::storage("compaction job disappeared"))?;
        match applied {
            Ok(summary_id) => job.summary_ids.push(summary_id),
            Err(Error::Stale(reason)) => {
                let pass_name = pass.kind().as_str();
                self.store.write(|sql| store::record_event(sql, &Event { conversation_id, pass: pass_name, level: None, outcome: "skipped", reason: &reason, tokens_before: None, tokens_after: None, summary_id: None, telemetry_json: None }, now_ms))?;
            }
            Err(err) => return Err(err),
        }
        Ok(())
    }

    /// Plans the job's next pass; returns the report when the job is done.
    fn next_pass(&mut self, id: u64, now_ms: i64) -> Result<Option<CompactionReport>> {
        let config = self.config.compaction.clone();
        let job = self.jobs.get(&id).ok_or_else(|| Error::storage("compaction job disappeared"))?.clone();
        let tokens = self.context_tokens_of(job.conversation_id)?;
        let allowed = match job.goal {
            Goal::Pending if job.passes >= 2 => return self.finish(id, true, "pending compaction done".to_owned(), now_ms).map(Some),
            Goal::Pending if job.passes == 1 => Allowed::CondenseOnly,
            Goal::Pending => Allowed::LeafThenCondense,
            Goal::Under(target) if tokens <= target => {
                return self.finish(id, true, format!("context is under target ({tokens} <= {target} tokens)"), now_ms).map(Some);
            }
            Goal::Under(_) => Allowed::LeafThenCondense,
        };
        if job.passes >= MAX_PASSES {
            return self.finish(id, true, format!("stopped after {MAX_PASSES} passes; the rest continues on a later call"), now_ms).map(Some);
        }
        match Pass::plan(self.store.sql(), job.conversation_id, &config, allowed, job.summarizer.name())? {
            Ok(mut pass) => {
                if let Step::GiveUp(give_up) = pass.start() {
                    return self.finish(id, true, give_up.reason(), now_ms).map(Some);
                }
                let job = self.jobs.get_mut(&id).ok_or_else(|| Error::storage("compaction job disappeared"))?;
                job.passes += 1;
                job.pass = Some(pass);
                Ok(None)
            }
            Err(why) => self.finish(id, true, why, now_ms).map(Some),
        }
    }

    /// Ends a job: clears pending work when it succeeded, and reports.
    fn finish(&mut self, id: u64, ok: bool, reason: String, now_ms: i64) -> Result<CompactionReport> {
        let job = self.jobs.remove(&id).ok_or_else(|| Error::storage("compaction job disappeared"))?;
        let tokens_after = self.context_tokens_of(job.conversation_id)?;
        if ok {
            self.clear_pending(job.conversation_id, now_ms)?;
        }
        let compacted = !job.summary_ids.is_empty();
        let reason = if compacted && ok {
            format!("{} summaries written ({} -> {} tokens); {reason}", job.summary_ids.len(), job.tokens_before, tokens_after)
        } else {
            reason
        };
        Ok(CompactionReport { ok, compacted, reason, tokens_before: job.tokens_before, tokens_after, summary_ids: job.summary_ids, failures: job.failures })
    }

    fn clear_pending(&mut self, conversation_id: i64, now_ms: i64) -> Result<()> {
        self.store.write(|sql| {
            let (retry, pending) = store::load_state(sql, conversation_id)?;
            if pending.is_some() {
                store::save_state(sql, conversation_id, &retry, None, now_ms)?;
            }
            Ok(())
        })
    }

    /// The active context's tokens of a conversation.
    fn context_tokens_of(&mut self, conversation_id: i64) -> Result<i64> {
        let row = self.store.sql().query_row("SELECT context_token_count FROM conversations WHERE id = ?1", &[conversation_id.into()])?;
        row.map_or(Ok(0), |r| r.int(0))
    }

    /// The budget the model's prompt really has: the smallest of the host's value and the
    /// budget of the latest assemble (which accounts for the system prompt).
    pub(crate) fn prompt_budget(&self, conversation: &conversations::Conversation, host: Option<f64>) -> u32 {
        let host = host.filter(|b| b.is_finite() && *b > 0.0).map(|b| b.min(f64::from(u32::MAX)) as u32);
        match (host, self.views.budget(conversation.id)) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => self.config.default_token_budget,
        }
    }
}
