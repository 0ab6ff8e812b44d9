//! Compaction in the engine: "plan -> run the summaries the plan asks for -> apply each result in
//! one transaction". The engine never awaits: when a pass needs the host's LLM it returns a
//! [`CompactionStep::NeedSummary`] request, the caller runs it and hands the output back with
//! [`Engine::compaction_continue`]. The extractive summarizer runs inline. Nothing is written for
//! a failed summary (seeds 01, 02); failures back off, and the backoff lives in the database.
//!
//! Entry points: `commitTurn` evaluates the trigger after storing the turn and records pending
//! work ([`trigger`]); `maintain` runs pending work; `compact` runs a full sweep to the target.

mod job;
mod pass;
mod runs;
pub(crate) mod tail_window;
mod target;
mod trigger;
mod window;

use serde::{Deserialize, Serialize};

use super::params::SessionRef;
use crate::core::compaction::{ErrorKind, SummarizerError, SummarizerOutput};
pub(crate) use job::Job;
pub(crate) use pass::{as_source_messages, as_source_summaries};
pub use trigger::TriggerOutcome;

/// Who answers a pass's summary request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Summarizer {
    /// The host's LLM, through the caller.
    Host,
    /// The built-in extractive summarizer, inline.
    Extractive,
}

impl Summarizer {
    /// The name stored in `summaries.summarizer`: "llm" or "extractive".
    pub fn name(self) -> &'static str {
        match self {
            Summarizer::Host => "llm",
            Summarizer::Extractive => crate::core::compaction::extractive::NAME,
        }
    }
}

/// What to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CompactionMode {
    /// Run the work the trigger recorded, if any (the host's `maintain`).
    Pending,
    /// A full sweep until the context is under the target (the host's `compact`).
    Sweep,
}

/// The arguments of the host's `maintain` and `compact` (the compaction entry points).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionParams {
    /// The session whose conversation to compact.
    #[serde(flatten)]
    pub session: SessionRef,
    /// What to run: the pending work or a full sweep.
    pub mode: CompactionMode,
    /// Who writes the summaries: "host" (through the caller) or "extractive".
    pub summarizer: Summarizer,
    /// The host's `force` (OpenClaw's preflight check sets it). Kept for the record: a forced
    /// compaction follows the same retry rule as any other and, when it may not summarize,
    /// still shrinks the view (see `target`).
    #[serde(default)]
    pub force: bool,
    /// The host's token budget for the assembled context, in tokens; `defaultTokenBudget` when
    /// absent.
    #[serde(default)]
    pub token_budget: Option<f64>,
    /// The host's own count of the prompt (its projection before a turn, or the prompt that
    /// overflowed), when it has one.
    #[serde(default)]
    pub current_token_count: Option<f64>,
    /// The model's context window, when the host reports it.
    #[serde(default)]
    pub context_window: Option<f64>,
    /// The reply budget the host requests, when it reports it.
    #[serde(default)]
    pub max_output_tokens: Option<f64>,
    /// The host's reserve below the window where its preflight check asks for compaction, when
    /// it is not OpenClaw 2026.9's (as in `assemble`).
    #[serde(default)]
    pub preflight_reserve_tokens: Option<f64>,
    /// The factor by which the host pads its own estimate of a prompt when it decides the
    /// reply's room, when it is not OpenClaw 2026.9's 1.2 (`core::accounting::HostFacts`).
    #[serde(default)]
    pub host_estimate_safety: Option<f64>,
    /// The host's turn waits for the call that runs this job (OpenClaw's maintenance before a
    /// turn, its preflight `compact()`): each request then says how long it may hold the call
    /// (`core::compaction::hold`).
    #[serde(default)]
    pub turn_waits: bool,
    /// One id per process, so the next process can tell a request this one left unanswered.
    #[serde(default)]
    pub runner: Option<String>,
    /// Turns that process has stored (any session): more than one means a long-lived process,
    /// whose background work outlives its turns.
    #[serde(default)]
    pub runner_turns: u32,
    /// The caller can start a successor process (`lcm summarize`) that writes the summaries a
    /// one-shot process cannot wait for (`core::compaction::hold`); with `runner` only.
    #[serde(default)]
    pub can_hand_over: bool,
    /// This job runs in such a successor: it asks and waits for every answer.
    #[serde(default)]
    pub successor: bool,
    /// The calling process ends with the turn it runs (a one-shot command such as
    /// `openclaw agent --local`): a request sent from it would die with it, so with
    /// `can_hand_over` the job hands over from its first request (`core::compaction::hold`).
    #[serde(default)]
    pub ends_with_turn: bool,
    /// The calling process outlives its turns (a gateway): the job asks here even when an
    /// earlier process left requests unanswered, instead of handing over (`core::compaction::hold`).
    #[serde(default)]
    pub outlives_turns: bool,
}

/// A summary the caller must obtain from the host's LLM.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SummaryRequest {
    /// The compaction job the answer goes back to (an id the engine assigns, in memory).
    pub job_id: u64,
    /// The prompt to send to the host's LLM.
    pub prompt: String,
    /// The completion's output limit, in tokens.
    pub max_tokens: u32,
    /// The `purpose` passed to the host's LLM (e.g. "lossless-wasm leaf summary").
    pub purpose: &'static str,
    /// "leaf" or "condensed": what the summary will be.
    pub kind: &'static str,
    /// The escalation level the prompt was written for: "normal" or "aggressive".
    pub level: &'static str,
    /// How long the caller may hold the host's call for this answer before the job goes on in
    /// the background; `None`: until the answer arrives.
    pub hold_ms: Option<u32>,
    /// This request is a catch-up: the turn waits for it (see `core::compaction::hold`).
    pub catch_up: bool,
}

/// How a compaction ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionReport {
    /// False only when a summarizer failed (or the breaker is open); "nothing to do" is ok.
    pub ok: bool,
    /// The context got smaller: at least one summary was written, or the view was shrunk.
    pub compacted: bool,
    /// Why the job did what it did (or nothing), for the host's log.
    pub reason: String,
    /// The conversation's context before the job, in estimated tokens.
    pub tokens_before: i64,
    /// The conversation's context after the job, in estimated tokens.
    pub tokens_after: i64,
    /// Row ids in `summaries` of the summaries written.
    pub summary_ids: Vec<i64>,
    /// One line per failed pass: "compaction failed (<reason>); all N original messages preserved".
    pub failures: Vec<String>,
    /// The job handed this conversation's summaries to a successor: the caller starts one
    /// (`lcm summarize` for the session), which runs the pending work this job left.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub hand_over: bool,
}

/// One step of a compaction job: a summary the caller must obtain, or the job's end.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum CompactionStep {
    /// The caller runs the request and answers with `compactionContinue`.
    NeedSummary(SummaryRequest),
    /// The job has ended.
    Done(CompactionReport),
}

/// Names a compaction job (`compactionRenew`).
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobRef {
    /// The job, as in [`SummaryRequest::job_id`].
    pub job_id: u64,
}

/// A successor that has written what was pending and stays a while for more
/// (`successorStandby`): `standing` while it waits, false when it leaves.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SuccessorStandby {
    /// The successor's session.
    #[serde(flatten)]
    pub session: crate::engine::params::SessionRef,
    /// True while the successor waits for more work, false when it leaves.
    pub standing: bool,
}

/// The caller's answer to a [`SummaryRequest`].
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SummaryAnswer {
    /// The job the answer is for, as in [`SummaryRequest::job_id`].
    pub job_id: u64,
    /// The summary's text, when the LLM answered.
    #[serde(default)]
    pub text: Option<String>,
    /// Why there is no text, when the call failed.
    #[serde(default)]
    pub error: Option<AnswerError>,
    /// The model that wrote the summary, for the summary's metadata.
    #[serde(default)]
    pub model: Option<String>,
    /// Why the provider stopped (`stop`, `length`, ...): `length` means the answer was cut off
    /// at the output limit and is judged as such, whatever its text.
    #[serde(default)]
    pub stop_reason: Option<String>,
    /// The provider's token counts for the call, when it reported them.
    #[serde(default)]
    pub usage: Option<AnswerUsage>,
}

/// A provider's token counts for one call.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AnswerUsage {
    /// Tokens the provider counted in the prompt.
    #[serde(default)]
    pub input_tokens: Option<f64>,
    /// Tokens the provider counted in the answer.
    #[serde(default)]
    pub output_tokens: Option<f64>,
}

impl SummaryAnswer {
    /// The answer as the escalation judges it.
    pub(crate) fn output(&self) -> SummarizerOutput {
        match (&self.text, &self.error) {
            (_, Some(AnswerError { kind, message })) => {
                let kind = match kind.as_str() {
                    "auth" => ErrorKind::Auth,
                    "timeout" | "aborted" => ErrorKind::Timeout,
                    _ => ErrorKind::Other,
                };
                Err(SummarizerError::new(kind, message.clone()))
            }
            (Some(text), None) if self.stop_reason.as_deref() == Some("length") => {
                Err(SummarizerError::new(ErrorKind::Truncated, text.clone()))
            }
            (Some(text), None) => Ok(text.clone()),
            (None, None) => Err(SummarizerError::new(
                ErrorKind::Other,
                "the summarizer returned neither text nor an error",
            )),
        }
    }

    /// Tokens in and out: the provider's counts where it gave them, else estimates from the
    /// prompt and the answer's text; and whether any of it is an estimate.
    pub(crate) fn tokens(&self, prompt_tokens: u32) -> (i64, i64, bool) {
        let reported = |v: Option<f64>| {
            v.filter(|t| t.is_finite() && *t >= 0.0)
                .map(|t| t.min(9e15) as i64)
        };
        let usage = self.usage.unwrap_or_default();
        let input = reported(usage.input_tokens);
        let output = reported(usage.output_tokens);
        let estimated_out = || {
            i64::from(
                self.text
                    .as_deref()
                    .map_or(0, crate::core::tokens::estimate_text),
            )
        };
        (
            input.unwrap_or(i64::from(prompt_tokens)),
            output.unwrap_or_else(estimated_out),
            input.is_none() || output.is_none(),
        )
    }
}

/// Why the host's LLM call for a summary failed.
#[derive(Debug, Clone, Deserialize)]
pub struct AnswerError {
    /// "auth", "timeout", "aborted" (the host gave up on the call; no backoff) or anything else.
    pub kind: String,
    /// The error's message, for the log and the failure line.
    pub message: String,
}
