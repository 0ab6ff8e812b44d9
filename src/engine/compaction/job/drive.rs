//! Driving a job: runs its passes until one needs the host's LLM or the job is done, and turns
//! each step of a pass (a rejected answer, an accepted draft, a pass that gave up) into what is
//! stored and what comes next. A pass that gives up stores its range's extractive fallback and
//! counts the failure for backoff.

use super::{Answered, SpentCall};
use crate::core::compaction::{RetryKind, Step, SummaryKind};
use crate::engine::compaction::pass::Pass;
use crate::engine::compaction::{CompactionStep, Summarizer, SummaryRequest};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::store::compaction::{self as store, Event};
use crate::store::Sql;

impl<S: Sql> Engine<S> {
    /// Runs the job until it needs the host's LLM or is finished.
    pub(super) fn drive(
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
                                telemetry_json: telemetry.as_deref(),
                                ..Event::outcome(conversation_id, pass_name, "failed", &line)
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
}
