//! Storing an accepted summary: the summary, its vector, its event and the call it cost, in one
//! transaction; a plan gone stale meanwhile is recorded as skipped.

use crate::core::compaction::{extractive, Level, SummaryDraft};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::store::compaction::{self as store, Event};
use crate::store::{spend, Sql};

/// One summarizer call and what came of it, to record in `summarizer_calls`.
#[derive(Debug, Clone)]
pub(super) struct SpentCall {
    pub(super) pass: &'static str,
    pub(super) level: &'static str,
    pub(super) input: i64,
    pub(super) output: i64,
    pub(super) estimated: bool,
    pub(super) outcome: &'static str,
    pub(super) reason: Option<String>,
}

impl SpentCall {
    pub(super) fn record(
        &self,
        sql: &mut impl Sql,
        conversation_id: i64,
        now_ms: i64,
    ) -> Result<()> {
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

impl<S: Sql> Engine<S> {
    /// Stores an accepted summary in one transaction; a stale plan is logged and replanned.
    pub(super) fn accept(
        &mut self,
        id: u64,
        conversation_id: i64,
        draft: &SummaryDraft,
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
                        &Event::outcome(conversation_id, pass_name, "skipped", &reason),
                        now_ms,
                    )
                })?;
            }
            Err(err) => return Err(err),
        }
        Ok(())
    }
}
