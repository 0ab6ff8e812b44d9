//! `repair` (seed 01): re-summarizes every summary whose `level` is `fallback` (backfilled,
//! imported, or left by older versions), shallowest first, then every summary built on one of
//! them (the cascade), so a parent is redone from children that were redone. It is a job like
//! compaction, with the same request/answer protocol (`needSummary` / `done`), so the same driver
//! carries its prompts to the host's LLM; each summary is judged by the same escalation and
//! formatting, and written in its own transaction. A summary whose answer fails is left in place
//! and reported, and so is every summary above it (redoing a parent from a fallback child would
//! only hide the problem). `dryRun` lists what would be redone and writes nothing. Sources
//! and answers are redacted as in compaction ([`super::redaction`]); the report counts what.

use std::collections::{HashSet, VecDeque};

use serde::{Deserialize, Serialize};

use super::compaction::{
    as_source_messages, as_source_summaries, Summarizer, SummaryAnswer, SummaryRequest,
};
use super::params::SessionRef;
use super::{redaction, Engine};
use crate::core::assemble::summary_item_tokens;
use crate::core::compaction::ledger::{self, Ledger};
use crate::core::compaction::{
    extractive, format, prompts, CompactionConfig, Escalation, Level, Prompt, Step,
    SummarizerOutput, SummaryKind,
};
use crate::core::redact::Counts;
use crate::error::{Error, Result};
use crate::store::compaction::{load_messages, load_summaries, SourceRow, SummaryRow};
use crate::store::repair::{self as store, Rewrite};
use crate::store::Sql;

/// `repairStart`'s arguments (`/lcm repair`).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RepairParams {
    /// Limit the repair to this session's conversations (all conversations when absent).
    #[serde(default)]
    pub session_id: Option<String>,
    /// The session key of that session, when the host gave one.
    #[serde(default)]
    pub session_key: Option<String>,
    /// List what would be redone and write nothing.
    #[serde(default)]
    pub dry_run: bool,
    /// "host" (answers come from the caller) or "extractive"; required unless `dryRun`.
    #[serde(default)]
    pub summarizer: Option<Summarizer>,
}

/// One summary a repair would redo.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Planned {
    /// Row id in `summaries`.
    pub id: i64,
    /// Its depth in the DAG (0: a leaf summary).
    pub depth: i64,
    /// "fallback", or "cascade" (built on a fallback summary).
    pub reason: &'static str,
}

/// How a repair ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RepairReport {
    /// False when some summary could not be redone.
    pub ok: bool,
    /// The run was a dry run: nothing was written.
    pub dry_run: bool,
    /// The summaries to redo, in the order they are redone (shallowest first, then the cascade).
    pub planned: Vec<Planned>,
    /// Row ids in `summaries` of the summaries redone (rewritten in place).
    pub repaired: Vec<i64>,
    /// One line per summary left in place, with the reason.
    pub failures: Vec<String>,
    /// Credentials replaced before the sources went to the summarizer, per class.
    pub redacted: Counts,
}

/// One step of a repair job: a summary the caller must obtain, or the job's end.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum RepairStep {
    /// The caller runs the request and answers with `repairContinue`.
    NeedSummary(SummaryRequest),
    /// The job has ended.
    Done(RepairReport),
}

#[derive(Debug, Clone)]
enum Sources {
    Messages(Vec<SourceRow>),
    Summaries(Vec<SummaryRow>),
}

/// The summary being redone.
#[derive(Debug, Clone)]
struct Current {
    id: i64,
    depth: i64,
    old_content: String,
    earliest_at: Option<i64>,
    latest_at: Option<i64>,
    sources: Sources,
    ledger: Ledger,
    escalation: Escalation,
    level: Level,
}

/// A repair in progress.
#[derive(Debug, Clone)]
pub(super) struct RepairJob {
    summarizer: Summarizer,
    planned: Vec<Planned>,
    queue: VecDeque<i64>,
    current: Option<Current>,
    left_in_place: HashSet<i64>,
    repaired: Vec<i64>,
    failures: Vec<String>,
    redacted: Counts,
}

impl Current {
    fn kind(&self) -> SummaryKind {
        match self.sources {
            Sources::Messages(_) => SummaryKind::Leaf,
            Sources::Summaries(_) => SummaryKind::Condensed,
        }
    }

    fn prompt(&self, config: &CompactionConfig) -> Prompt {
        match &self.sources {
            Sources::Messages(rows) => {
                prompts::leaf_prompt(self.level, &as_source_messages(rows), None, config)
            }
            Sources::Summaries(rows) => prompts::condensed_prompt(
                self.level,
                &as_source_summaries(rows),
                u32::try_from(self.depth).unwrap_or(1),
                config,
            ),
        }
    }

    fn extractive(&self, config: &CompactionConfig) -> SummarizerOutput {
        let target = prompts::target_tokens(
            self.kind(),
            self.level,
            self.prompt(config).source_tokens,
            config,
        );
        match &self.sources {
            Sources::Messages(rows) => {
                extractive::summarize_leaf(&as_source_messages(rows), self.level, target)
            }
            Sources::Summaries(rows) => {
                extractive::summarize_condensed(&as_source_summaries(rows), self.level, target)
            }
        }
    }
}

impl<S: Sql> Engine<S> {
    /// Plans a repair; with `dryRun` returns the plan, else runs it until it needs the LLM.
    pub fn repair_start(&mut self, params: RepairParams) -> Result<RepairStep> {
        let conversations = match params.session_id.filter(|s| !s.trim().is_empty()) {
            None => None,
            Some(session_id) => {
                let session = SessionRef {
                    session_id,
                    session_key: params.session_key,
                };
                Some(crate::store::recall::conversations_with_key(
                    self.store.sql(),
                    session.key(),
                )?)
            }
        };
        let order = store::repair_order(self.store.sql(), conversations.as_deref())?;
        let planned: Vec<Planned> = order
            .iter()
            .map(|(id, depth, fallback)| Planned {
                id: *id,
                depth: *depth,
                reason: if *fallback { "fallback" } else { "cascade" },
            })
            .collect();
        if params.dry_run {
            return Ok(RepairStep::Done(RepairReport {
                ok: true,
                dry_run: true,
                planned,
                repaired: Vec::new(),
                failures: Vec::new(),
                redacted: Counts::default(),
            }));
        }
        let summarizer = params.summarizer.ok_or_else(|| {
            Error::input(
                "summarizer",
                "required unless dryRun: \"host\" or \"extractive\"",
            )
        })?;
        let queue = planned.iter().map(|p| p.id).collect();
        let job = RepairJob {
            summarizer,
            planned,
            queue,
            current: None,
            left_in_place: HashSet::new(),
            repaired: Vec::new(),
            failures: Vec::new(),
            redacted: Counts::default(),
        };
        self.next_job += 1;
        let id = self.next_job;
        self.repairs.insert(id, job);
        self.drive_repair(id, None)
    }

    /// Answers a repair's summary request (`{jobId, text}` or `{jobId, error}`, `model?`).
    pub fn repair_continue(&mut self, answer: SummaryAnswer) -> Result<RepairStep> {
        let id = answer.job_id;
        if self.repairs.get(&id).is_none_or(|j| j.current.is_none()) {
            return Err(Error::input(
                "jobId",
                format!("no repair job {id} is waiting for a summary"),
            ));
        }
        let model = answer.model.clone();
        self.drive_repair(id, Some((answer.output(), model)))
    }

    fn drive_repair(
        &mut self,
        id: u64,
        mut answer: Option<(SummarizerOutput, Option<String>)>,
    ) -> Result<RepairStep> {
        let config = self.config.compaction.clone();
        let redactor = std::sync::Arc::clone(&self.redactor);
        loop {
            let job = self
                .repairs
                .get_mut(&id)
                .ok_or_else(|| Error::unexpected_data(format!("repair job {id} disappeared")))?;
            let Some(current) = job.current.as_mut() else {
                let Some(next) = job.queue.pop_front() else {
                    let Some(job) = self.repairs.remove(&id) else {
                        return Err(Error::unexpected_data("repair job disappeared"));
                    };
                    let ok = job.failures.is_empty();
                    return Ok(RepairStep::Done(RepairReport {
                        ok,
                        dry_run: false,
                        planned: job.planned,
                        repaired: job.repaired,
                        failures: job.failures,
                        redacted: job.redacted,
                    }));
                };
                self.begin_repair(id, next, &config)?;
                continue;
            };
            let output = match answer.take() {
                Some(answer) => answer,
                None if job.summarizer == Summarizer::Extractive => {
                    (current.extractive(&config), None)
                }
                None => {
                    let prompt = current.prompt(&config);
                    return Ok(RepairStep::NeedSummary(SummaryRequest {
                        job_id: id,
                        prompt: prompt.text,
                        max_tokens: prompt.max_output_tokens,
                        purpose: "lossless-wasm repair of a fallback summary",
                        kind: prompt.kind.as_str(),
                        level: prompt.level.as_str(),
                        // An operator's repair waits for its answers.
                        hold_ms: None,
                        catch_up: false,
                    }));
                }
            };
            let budget = current.prompt(&config).max_output_tokens;
            let ledger = &current.ledger;
            let redacted = &mut job.redacted;
            let step = current.escalation.on_output(output.0, |text| {
                let answer = redactor.redact(text);
                redacted.merge(&answer.counts);
                format::finalize(&answer.text, ledger, budget)
            });
            match step {
                Step::Run(level) => current.level = level,
                Step::Accept(draft) => {
                    let Some(current) = job.current.take() else {
                        continue;
                    };
                    let rewrite = Rewrite {
                        id: current.id,
                        expected_content: &current.old_content,
                        content: draft.text(),
                        tokens: draft.tokens(),
                        item_tokens: summary_item_tokens(
                            current.id,
                            current.depth,
                            draft.text(),
                            current.earliest_at,
                            current.latest_at,
                        ),
                        level: draft.level().as_str(),
                        summarizer: draft.summarizer(),
                        model: output.1.as_deref(),
                    };
                    match self.store.write(|tx| store::rewrite(tx, &rewrite)) {
                        Ok(()) => {
                            self.views = Default::default();
                            if let Some(job) = self.repairs.get_mut(&id) {
                                job.repaired.push(current.id);
                            }
                        }
                        Err(Error::Stale(reason)) => self.leave_in_place(id, current.id, &reason),
                        Err(err) => return Err(err),
                    }
                }
                Step::GiveUp(give_up) => {
                    let Some(current) = job.current.take() else {
                        continue;
                    };
                    self.leave_in_place(id, current.id, &give_up.reason());
                }
            }
        }
    }

    fn leave_in_place(&mut self, id: u64, summary: i64, reason: &str) {
        if let Some(job) = self.repairs.get_mut(&id) {
            job.left_in_place.insert(summary);
            job.failures
                .push(format!("summary {summary} left in place: {reason}"));
        }
    }

    /// Loads a summary's sources and starts its escalation; a summary built on one that was left
    /// in place is left in place too.
    fn begin_repair(&mut self, id: u64, summary: i64, config: &CompactionConfig) -> Result<()> {
        let sql = self.store.sql();
        let Some(row) = crate::store::recall::summary(sql, summary)? else {
            return Ok(());
        };
        let children = store::source_summaries(sql, summary)?;
        let blocked = self.repairs.get(&id).and_then(|job| {
            children
                .iter()
                .find(|c| job.left_in_place.contains(c))
                .copied()
        });
        if let Some(child) = blocked {
            self.leave_in_place(
                id,
                summary,
                &format!("built on summary {child}, which could not be repaired"),
            );
            return Ok(());
        }
        let sql = self.store.sql();
        let (sources, ledger, redacted) = if children.is_empty() {
            let ids = store::source_messages(sql, summary)?;
            let mut rows = load_messages(sql, &ids)?;
            let redacted = redaction::redact_rows(&self.redactor, &mut rows);
            let ledger = ledger::extract(&as_source_messages(&rows));
            (Sources::Messages(rows), ledger, redacted)
        } else {
            let mut rows = load_summaries(sql, &children)?;
            let redacted = redaction::redact_summaries(&self.redactor, &mut rows);
            let texts: Vec<&str> = rows.iter().map(|r| r.content.as_str()).collect();
            let ledger = format::ledger_of(&texts);
            (Sources::Summaries(rows), ledger, redacted)
        };
        let Some(job) = self.repairs.get_mut(&id) else {
            return Err(Error::unexpected_data("repair job disappeared"));
        };
        job.redacted.merge(&redacted);
        let mut current = Current {
            id: summary,
            depth: row.depth,
            old_content: row.content,
            earliest_at: row.earliest_at,
            latest_at: row.latest_at,
            sources,
            ledger,
            escalation: Escalation::new(
                0,
                prompts::output_limits(SummaryKind::Leaf, 0, config),
                job.summarizer.name(),
            ),
            level: Level::Normal,
        };
        let prompt = current.prompt(config);
        current.escalation = Escalation::new(
            prompt.source_tokens,
            prompts::output_limits(current.kind(), prompt.source_tokens, config),
            job.summarizer.name(),
        );
        match current.escalation.start() {
            Step::Run(level) => {
                current.level = level;
                job.current = Some(current);
            }
            Step::GiveUp(give_up) => self.leave_in_place(id, summary, &give_up.reason()),
            Step::Accept(_) => {}
        }
        Ok(())
    }
}
