//! One pass of compaction: a leaf pass (oldest raw messages outside the fresh tail -> a depth-0
//! summary) or a condensed pass (a run of same-depth summaries -> one summary a level deeper).
//! A pass owns its sources, its escalation and its ledger; applying checks the plan against the
//! context again, inside the caller's transaction.
//!
//! Two more kinds of pass serve the rule that a range's summary is always in the view: the
//! *fallback* of a pass whose escalation gave up ([`Pass::fallback_draft`]: the extractive
//! summarizer's text, stored at level `fallback`), and the *redo* of such a summary once the
//! summarizer answers again ([`Pass::plan_redo`]: the same sources, asked of the summarizer,
//! the text rewritten in place as `/lcm repair` does).

use crate::core::assemble::summary_item_tokens;
use crate::core::compaction::chunking::fresh_tail_start;
use crate::core::compaction::ledger::Ledger;
use crate::core::compaction::SummarizerOutput;
use crate::core::compaction::{
    extractive, format, ledger, plan_condensation, prompts, select_leaf_chunk, CompactionConfig,
    CondensePlan, CondenseRules, ContextItem, Escalation, ItemKind, LeafPlan, Level, Prompt,
    SourceMessage, SourceSummary, Step, SummaryDraft, SummaryKind, ViewCost,
};
use crate::core::identity::Fingerprint;
use crate::core::redact::{Counts, Redactor};
use crate::engine::redaction;
use crate::error::Result;
use crate::store::compaction::{self as store, NewSummary, Range, SourceRow, SummaryRow};
use crate::store::context::{self, ItemContent};
use crate::store::{Sql, WriteTx};
use std::sync::Arc;

use super::window::{self, Planning};

#[derive(Debug, Clone)]
enum Sources {
    Messages {
        plan: LeafPlan,
        rows: Vec<SourceRow>,
        previous: Option<String>,
    },
    Summaries {
        plan: CondensePlan,
        rows: Vec<SummaryRow>,
    },
}

/// A planned pass, in progress.
/// What applying a pass's summary changed.
#[derive(Debug, Clone)]
pub(super) struct Applied {
    pub summary_id: i64,
    /// Tokens the replaced range held, and the summary's item holds now.
    pub tokens_before: i64,
    pub tokens_after: i64,
    /// The context items replaced, and the item that replaced them (at `first_ordinal`).
    pub first_ordinal: i64,
    pub last_ordinal: i64,
    pub item: context::ContextItem,
}

/// The fallback summary a redo pass rewrites.
#[derive(Debug, Clone)]
struct Redo {
    summary_id: i64,
    old_content: String,
    depth: i64,
    earliest_at: Option<i64>,
    latest_at: Option<i64>,
    descendant_messages: i64,
    /// Its item's ordinal and tokens in the context.
    ordinal: i64,
    item_tokens: i64,
}

#[derive(Debug, Clone)]
pub(super) struct Pass {
    sources: Sources,
    redo: Option<Redo>,
    escalation: Escalation,
    level: Level,
    ledger: Ledger,
    /// Redacts the sources when planned and every answer before it is stored.
    redactor: Arc<Redactor>,
    /// What redaction replaced in this pass, per class.
    redactions: Counts,
    /// Identifies the request this pass sends first (see [`Pass::request_fingerprint`]).
    fingerprint: String,
}

/// Which passes a plan may choose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Allowed {
    LeafThenCondense,
    CondenseOnly,
}

/// Stored message rows as the summarizer's prompts and the extractive summarizer read them.
pub(crate) fn as_source_messages(rows: &[SourceRow]) -> Vec<SourceMessage<'_>> {
    rows.iter()
        .map(|r| SourceMessage {
            role: r.role,
            text: &r.text,
            raw_json: &r.raw_json,
            timestamp_ms: r.timestamp_ms,
        })
        .collect()
}

/// Stored summary rows as a merge's prompts and the extractive summarizer read them.
pub(crate) fn as_source_summaries(rows: &[SummaryRow]) -> Vec<SourceSummary<'_>> {
    rows.iter()
        .map(|r| SourceSummary {
            text: &r.content,
            earliest_ms: r.earliest_at,
            latest_ms: r.latest_at,
        })
        .collect()
}

/// What planning from a set of items came to.
enum Planned {
    Pass(Box<Pass>),
    /// Nothing to do, and why.
    Nothing(String),
    /// The plan would span items the set does not hold: plan again from the whole context.
    Crosses,
}

impl Planned {
    fn into_result(self) -> std::result::Result<Pass, String> {
        match self {
            Planned::Pass(pass) => Ok(*pass),
            Planned::Nothing(why) => Err(why),
            // Planning from the whole context never crosses a gap.
            Planned::Crosses => Err("the plan spans context items that were not read".to_owned()),
        }
    }
}

/// A leaf's sources as the summarizer sees them: redacted, tool outputs masked as in the view,
/// and the artifact ledger taken from the whole stored outputs.
fn leaf_sources(
    sql: &mut impl Sql,
    ids: &[i64],
    mut previous: Option<String>,
    redactor: &Arc<Redactor>,
) -> Result<(Vec<SourceRow>, Option<String>, Ledger, Counts)> {
    let mut rows = store::load_messages(sql, ids)?;
    let mut redactions = redaction::redact_rows(redactor, &mut rows);
    if let Some(previous) = previous.as_mut() {
        redactions.merge(&redaction::redact_text(redactor, previous));
    }
    let ledger = ledger::extract(&as_source_messages(&rows));
    // The ledger copies from whole outputs; the prompt shows stubbed ones masked.
    // Masking brings stub lines and excerpts back from the store: redact them too.
    crate::engine::masking::summarizer::mask_sources(sql, &mut rows)?;
    for row in rows.iter_mut() {
        redactions.merge(&redaction::redact_text(redactor, &mut row.text));
    }
    Ok((rows, previous, ledger, redactions))
}

/// The summary right before `ordinal` in the context, for continuity.
fn previous_summary(
    sql: &mut impl Sql,
    items: &[ContextItem],
    ordinal: i64,
) -> Result<Option<String>> {
    let Some(item) = items.iter().rev().find(|i| i.ordinal < ordinal) else {
        return Ok(None);
    };
    if !matches!(item.kind, ItemKind::Summary { .. }) {
        return Ok(None);
    }
    Ok(store::load_summaries(sql, &[item.id])?
        .into_iter()
        .next()
        .map(|s| s.content))
}

impl Pass {
    /// Plans the next pass over the conversation's context, or says why there is none.
    pub(super) fn plan(
        sql: &mut impl Sql,
        conversation_id: i64,
        config: &CompactionConfig,
        allowed: Allowed,
        summarizer: &str,
        redactor: &Arc<Redactor>,
    ) -> Result<std::result::Result<Pass, String>> {
        let planning = window::planning_items(
            sql,
            conversation_id,
            config.tail_rule(),
            config.leaf_chunk_tokens,
        )?;
        match Self::plan_from(sql, &planning, config, allowed, summarizer, redactor)? {
            Planned::Crosses => {
                let whole = window::whole(sql, conversation_id)?;
                Self::plan_from(sql, &whole, config, allowed, summarizer, redactor)
                    .map(Planned::into_result)
            }
            planned => Ok(planned.into_result()),
        }
    }

    fn plan_from(
        sql: &mut impl Sql,
        planning: &Planning,
        config: &CompactionConfig,
        allowed: Allowed,
        summarizer: &str,
        redactor: &Arc<Redactor>,
    ) -> Result<Planned> {
        let items = &planning.items;
        let mut no_leaf = None;
        if allowed == Allowed::LeafThenCondense {
            match select_leaf_chunk(items, config.tail_rule(), config.chunk_size()) {
                Ok(plan) if planning.crosses_gap(plan.first_ordinal, plan.last_ordinal) => {
                    return Ok(Planned::Crosses)
                }
                Ok(plan) => {
                    let previous = previous_summary(sql, items, plan.first_ordinal)?;
                    let (rows, previous, ledger, redactions) =
                        leaf_sources(sql, &plan.message_ids, previous, redactor)?;
                    return Ok(Planned::Pass(Box::new(Pass::new(
                        Sources::Messages {
                            plan,
                            rows,
                            previous,
                        },
                        None,
                        ledger,
                        config,
                        summarizer,
                        redactor,
                        redactions,
                    ))));
                }
                Err(why) => no_leaf = Some(why.sentence()),
            }
        }
        match plan_condensation(
            items,
            config.tail_rule(),
            &CondenseRules::from_config(config),
        ) {
            Some(plan) if planning.crosses_gap(plan.first_ordinal, plan.last_ordinal) => {
                Ok(Planned::Crosses)
            }
            Some(plan) => {
                let mut rows = store::load_summaries(sql, &plan.summary_ids)?;
                let redactions = redaction::redact_summaries(redactor, &mut rows);
                let texts: Vec<&str> = rows.iter().map(|r| r.content.as_str()).collect();
                let ledger = format::ledger_of(&texts);
                Ok(Planned::Pass(Box::new(Pass::new(
                    Sources::Summaries { plan, rows },
                    None,
                    ledger,
                    config,
                    summarizer,
                    redactor,
                    redactions,
                ))))
            }
            None => {
                let tail = items.len() - fresh_tail_start(items, config.tail_rule());
                Ok(Planned::Nothing(match no_leaf {
                    Some(why) => format!("nothing to compact: {why}, and no summaries are due to be merged ({tail} items in the fresh tail)"),
                    None => "no summaries are due to be merged".to_owned(),
                }))
            }
        }
    }

    /// Plans the redo of the oldest fallback summary in the conversation's context, if there is
    /// one: its sources asked of the summarizer, judged as any answer, and the accepted text
    /// written over the fallback's in place.
    pub(super) fn plan_redo(
        sql: &mut impl Sql,
        conversation_id: i64,
        config: &CompactionConfig,
        summarizer: &str,
        redactor: &Arc<Redactor>,
    ) -> Result<Option<Pass>> {
        let Some((ordinal, item_tokens, id)) =
            crate::store::repair::oldest_fallback_in_context(sql, conversation_id)?
        else {
            return Ok(None);
        };
        let Some(row) = store::load_summaries(sql, &[id])?.into_iter().next() else {
            return Ok(None);
        };
        let redo = Redo {
            summary_id: id,
            old_content: row.content,
            depth: row.depth,
            earliest_at: row.earliest_at,
            latest_at: row.latest_at,
            descendant_messages: row.descendant_messages,
            ordinal,
            item_tokens,
        };
        let tokens = u64::try_from(item_tokens.max(0)).unwrap_or(0);
        let children = crate::store::repair::source_summaries(sql, id)?;
        let (sources, ledger, redactions) = if children.is_empty() {
            let ids = crate::store::repair::source_messages(sql, id)?;
            if ids.is_empty() {
                return Ok(None);
            }
            let (rows, previous, ledger, redactions) = leaf_sources(sql, &ids, None, redactor)?;
            let plan = LeafPlan {
                first_ordinal: ordinal,
                last_ordinal: ordinal,
                message_ids: ids,
                tokens,
            };
            let sources = Sources::Messages {
                plan,
                rows,
                previous,
            };
            (sources, ledger, redactions)
        } else {
            let mut rows = store::load_summaries(sql, &children)?;
            let redactions = redaction::redact_summaries(redactor, &mut rows);
            let texts: Vec<&str> = rows.iter().map(|r| r.content.as_str()).collect();
            let ledger = format::ledger_of(&texts);
            let plan = CondensePlan {
                source_depth: u32::try_from(redo.depth.saturating_sub(1).max(0)).unwrap_or(0),
                first_ordinal: ordinal,
                last_ordinal: ordinal,
                summary_ids: children,
                tokens,
            };
            (Sources::Summaries { plan, rows }, ledger, redactions)
        };
        Ok(Some(Pass::new(
            sources,
            Some(redo),
            ledger,
            config,
            summarizer,
            redactor,
            redactions,
        )))
    }

    /// Whether this pass redoes a fallback summary (rather than replacing a range).
    pub(super) fn is_redo(&self) -> bool {
        self.redo.is_some()
    }

    /// The extractive summarizer's summary of this pass's sources, for a range whose escalation
    /// gave up: judged by the same checks (normal, then aggressive), stored at level `fallback`.
    /// `None` when even that cannot pay off (then the range stays as it is).
    pub(super) fn fallback_draft(&self, config: &CompactionConfig) -> Option<SummaryDraft> {
        let source_tokens = self.prompt(config).source_tokens;
        let kind = self.kind();
        let mut escalation = Escalation::fallback(
            source_tokens,
            prompts::output_limits(kind, source_tokens, config),
        );
        if self.redo.is_none() {
            escalation = escalation.with_view_cost(self.view_cost());
        }
        let mut step = escalation.start();
        while let Step::Run(level) = step {
            let output = self.extractive_at(level, config);
            let budget = prompts::max_output_tokens(kind, level, source_tokens, config);
            step =
                escalation.on_output(output, |text| format::finalize(text, &self.ledger, budget));
        }
        match step {
            Step::Accept(draft) => Some(draft),
            _ => None,
        }
    }

    fn new(
        sources: Sources,
        redo: Option<Redo>,
        ledger: Ledger,
        config: &CompactionConfig,
        summarizer: &str,
        redactor: &Arc<Redactor>,
        redactions: Counts,
    ) -> Pass {
        let escalation = Escalation::new(
            0,
            prompts::output_limits(SummaryKind::Leaf, 0, config),
            summarizer,
        );
        let mut pass = Pass {
            sources,
            redo,
            escalation,
            level: Level::Normal,
            ledger,
            redactor: Arc::clone(redactor),
            redactions,
            fingerprint: String::new(),
        };
        let prompt = pass.prompt(config);
        let limits = prompts::output_limits(pass.kind(), prompt.source_tokens, config);
        let cost = pass.view_cost();
        pass.fingerprint = Fingerprint::new()
            .field(pass.kind().as_str())
            .field(&prompt.text)
            .field(&prompt.max_output_tokens.to_string())
            .hex();
        let escalation =
            Escalation::new(prompt.source_tokens, limits, summarizer).with_prompt(&prompt.text);
        // A redo replaces a summary by a summary: it must be shorter than its sources, and any
        // size it comes to is what the view holds of the range.
        pass.escalation = if pass.redo.is_some() {
            escalation
        } else {
            escalation.with_view_cost(cost)
        };
        pass
    }

    /// What the range costs in the view now, and what a summary's framing would add to its text
    /// there (rendered with the widest id, so the estimate never runs short).
    fn view_cost(&self) -> ViewCost {
        let (range, depth, earliest, latest) = match &self.sources {
            Sources::Messages { plan, rows, .. } => {
                let times = rows.iter().filter_map(|r| r.timestamp_ms);
                (plan.tokens, 0, times.clone().min(), times.max())
            }
            Sources::Summaries { plan, rows } => (
                plan.tokens,
                i64::from(plan.target_depth()),
                rows.iter().filter_map(|r| r.earliest_at).min(),
                rows.iter().filter_map(|r| r.latest_at).max(),
            ),
        };
        ViewCost {
            range_tokens: u32::try_from(range).unwrap_or(u32::MAX),
            framing_tokens: summary_item_tokens(i64::MAX, depth, "", earliest, latest),
        }
    }

    /// The tokens the range to replace holds in the view.
    pub(super) fn range_tokens(&self) -> u64 {
        match &self.sources {
            Sources::Messages { plan, .. } => plan.tokens,
            Sources::Summaries { plan, .. } => plan.tokens,
        }
    }

    /// Identifies the request: its kind, its first prompt and output limit. Two passes with the
    /// same fingerprint send the summarizer exactly the same thing.
    pub(super) fn request_fingerprint(&self) -> &str {
        &self.fingerprint
    }

    /// The current level's name (what a call at this point is asked at).
    pub(super) fn level(&self) -> Level {
        self.level
    }

    /// The reason of the latest rejected attempt, if any.
    pub(super) fn last_rejection(&self) -> Option<String> {
        self.escalation
            .attempts()
            .last()
            .map(|a| a.failure.reason())
    }

    pub(super) fn kind(&self) -> SummaryKind {
        match self.sources {
            Sources::Messages { .. } => SummaryKind::Leaf,
            Sources::Summaries { .. } => SummaryKind::Condensed,
        }
    }

    /// The first step of the escalation.
    pub(super) fn start(&mut self) -> Step {
        let step = self.escalation.start();
        if let Step::Run(level) = step {
            self.level = level;
        }
        step
    }

    /// The prompt for the current level.
    pub(super) fn prompt(&self, config: &CompactionConfig) -> Prompt {
        match &self.sources {
            Sources::Messages { rows, previous, .. } => prompts::leaf_prompt(
                self.level,
                &as_source_messages(rows),
                previous.as_deref(),
                config,
            ),
            Sources::Summaries { plan, rows } => prompts::condensed_prompt(
                self.level,
                &as_source_summaries(rows),
                plan.target_depth(),
                config,
            ),
        }
    }

    /// The built-in summarizer's answer at the current level.
    pub(super) fn run_extractive(&self, config: &CompactionConfig) -> SummarizerOutput {
        self.extractive_at(self.level, config)
    }

    fn extractive_at(&self, level: Level, config: &CompactionConfig) -> SummarizerOutput {
        let source_tokens = self.prompt(config).source_tokens;
        let target = prompts::target_tokens(self.kind(), level, source_tokens, config);
        match &self.sources {
            Sources::Messages { rows, .. } => {
                extractive::summarize_leaf(&as_source_messages(rows), level, target)
            }
            Sources::Summaries { rows, .. } => {
                extractive::summarize_condensed(&as_source_summaries(rows), level, target)
            }
        }
    }

    /// Judges a summarizer output: accept, retry at the next level, or give up.
    pub(super) fn feed(&mut self, output: SummarizerOutput, config: &CompactionConfig) -> Step {
        let budget = self.prompt(config).max_output_tokens;
        let (ledger, redactor, redactions) = (&self.ledger, &self.redactor, &mut self.redactions);
        // Belt and braces: the sources were redacted, but a summary is stored for good.
        let step = self.escalation.on_output(output, |text| {
            let answer = redactor.redact(text);
            redactions.merge(&answer.counts);
            format::finalize(&answer.text, ledger, budget)
        });
        if let Step::Run(level) = step {
            self.level = level;
        }
        step
    }

    /// What redaction replaced in this pass, as `compaction_events.telemetry_json`.
    pub(super) fn redaction_telemetry(&self) -> Option<String> {
        redaction::telemetry(&self.redactions)
    }

    /// How many original messages this pass covers (for failure log lines).
    pub(super) fn covered_messages(&self) -> u64 {
        match &self.sources {
            Sources::Messages { rows, .. } => rows.len() as u64,
            Sources::Summaries { rows, .. } => rows
                .iter()
                .map(|r| r.descendant_messages.max(0) as u64)
                .sum(),
        }
    }

    /// Stores the accepted summary in place of the pass's range.
    pub(super) fn apply(
        &self,
        tx: &mut WriteTx<'_, impl Sql>,
        conversation_id: i64,
        draft: &SummaryDraft,
        model: Option<&str>,
        now_ms: i64,
    ) -> Result<Applied> {
        if let Some(redo) = &self.redo {
            return Self::apply_redo(tx, redo, draft, model);
        }
        let (range, summary) = match &self.sources {
            Sources::Messages { plan, rows, .. } => {
                let times = rows.iter().filter_map(|r| r.timestamp_ms);
                let range = Range {
                    first_ordinal: plan.first_ordinal,
                    last_ordinal: plan.last_ordinal,
                    ids: &plan.message_ids,
                    summaries: false,
                };
                let summary = NewSummary {
                    conversation_id,
                    kind: "leaf",
                    depth: 0,
                    content: draft.text(),
                    tokens: draft.tokens(),
                    earliest_at: times.clone().min(),
                    latest_at: times.max(),
                    descendant_messages: rows.len() as i64,
                    descendant_summaries: 0,
                    source_tokens: plan.tokens as i64,
                    summarizer: draft.summarizer(),
                    model,
                    level: draft.level().as_str(),
                };
                (range, summary)
            }
            Sources::Summaries { plan, rows } => {
                let range = Range {
                    first_ordinal: plan.first_ordinal,
                    last_ordinal: plan.last_ordinal,
                    ids: &plan.summary_ids,
                    summaries: true,
                };
                let summary = NewSummary {
                    conversation_id,
                    kind: "condensed",
                    depth: i64::from(plan.target_depth()),
                    content: draft.text(),
                    tokens: draft.tokens(),
                    earliest_at: rows.iter().filter_map(|r| r.earliest_at).min(),
                    latest_at: rows.iter().filter_map(|r| r.latest_at).max(),
                    descendant_messages: rows.iter().map(|r| r.descendant_messages).sum(),
                    descendant_summaries: rows.iter().map(|r| r.descendant_summaries + 1).sum(),
                    source_tokens: rows.iter().map(|r| r.source_tokens).sum(),
                    summarizer: draft.summarizer(),
                    model,
                    level: draft.level().as_str(),
                };
                (range, summary)
            }
        };
        let before = match &self.sources {
            Sources::Messages { plan, .. } => plan.tokens as i64,
            Sources::Summaries { plan, .. } => plan.tokens as i64,
        };
        let (earliest, latest, depth, text) = (
            summary.earliest_at,
            summary.latest_at,
            summary.depth,
            summary.content,
        );
        let (id, tokens) = store::apply(
            tx,
            &range,
            &summary,
            |id| summary_item_tokens(id, depth, text, earliest, latest),
            now_ms,
        )?;
        let content = ItemContent::Summary {
            id,
            depth,
            content: text.to_owned(),
            earliest_at: earliest,
            latest_at: latest,
            descendant_messages: summary.descendant_messages,
        };
        Ok(Applied {
            summary_id: id,
            tokens_before: before,
            tokens_after: i64::from(tokens),
            first_ordinal: range.first_ordinal,
            last_ordinal: range.last_ordinal,
            item: context::ContextItem {
                ordinal: range.first_ordinal,
                tokens,
                content,
            },
        })
    }

    /// Writes a redone fallback summary over the old text, keeping its id and coverage.
    fn apply_redo(
        tx: &mut WriteTx<'_, impl Sql>,
        redo: &Redo,
        draft: &SummaryDraft,
        model: Option<&str>,
    ) -> Result<Applied> {
        let item_tokens = summary_item_tokens(
            redo.summary_id,
            redo.depth,
            draft.text(),
            redo.earliest_at,
            redo.latest_at,
        );
        crate::store::repair::rewrite(
            tx,
            &crate::store::repair::Rewrite {
                id: redo.summary_id,
                expected_content: &redo.old_content,
                content: draft.text(),
                tokens: draft.tokens(),
                item_tokens,
                level: draft.level().as_str(),
                summarizer: draft.summarizer(),
                model,
            },
        )?;
        Ok(Applied {
            summary_id: redo.summary_id,
            tokens_before: redo.item_tokens,
            tokens_after: i64::from(item_tokens),
            first_ordinal: redo.ordinal,
            last_ordinal: redo.ordinal,
            item: context::ContextItem {
                ordinal: redo.ordinal,
                tokens: item_tokens,
                content: ItemContent::Summary {
                    id: redo.summary_id,
                    depth: redo.depth,
                    content: draft.text().to_owned(),
                    earliest_at: redo.earliest_at,
                    latest_at: redo.latest_at,
                    descendant_messages: redo.descendant_messages,
                },
            },
        })
    }
}
