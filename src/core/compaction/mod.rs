//! The pure compaction core: deciding *whether* to compact ([`trigger`]), *what* to compact
//! ([`chunking`]), *how* to ask for a summary ([`prompts`], [`extractive`]), *whether to keep*
//! what came back ([`escalation`]), and *how a summary reads* ([`format`], [`ledger`]).
//!
//! Compaction is "plan -> run the summaries the plan asks for -> apply the results in one
//! transaction". This module owns the first and the judgement in the middle; the engine owns the
//! awaiting and the applying. Nothing here performs I/O, awaits, reads a clock or draws a random
//! number: time arrives as `now_ms`, ids arrive from the caller, so every decision replays
//! exactly in a test.
//!
//! The one rule every submodule serves: compaction is an optimization. When it cannot produce a
//! real summary, nothing is produced — there is no code path here that fabricates, truncates or
//! pads a summary (seeds 01 and 02), and merged summaries stay flat and bounded (seed 03).

pub mod chunk_size;
pub mod chunking;
pub mod config;
pub mod degenerate;
pub mod escalation;
pub mod extractive;
pub mod failure;
pub mod fit;
pub mod format;
pub mod hold;
pub mod ledger;
pub mod level;
pub mod markup;
pub mod plausibility;
pub mod prompts;
pub mod reasoning;
pub mod retry;
pub(crate) mod timefmt;
pub mod trigger;

use serde::Serialize;

use super::message::{Role, StoredMessage};

pub use chunking::{
    plan_condensation, select_leaf_chunk, CondenseRules, ContextItem, ItemKind, NoChunk, TailRule,
};
pub use config::CompactionConfig;
pub use escalation::{
    failure_log_line, Escalation, Failure, GiveUp, Level, OutputLimits, Step, ViewCost,
};
pub use format::{render_for_context, SummaryView};
pub use prompts::{Prompt, PROMPT_MARKER};
pub use retry::{BackoffPolicy, RetryKind, RetryState};
pub use trigger::{
    evaluate_leaf_trigger, needs_full_sweep, sweep_target, LeafDecision, LeafReason,
    LeafTriggerInput,
};

/// Which kind of summary a pass produces: a leaf summarizes raw messages, a condensed summary
/// merges same-depth summaries into one a level deeper.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SummaryKind {
    /// Summarizes raw messages.
    Leaf,
    /// Merges same-depth summaries into one a level deeper.
    Condensed,
}

impl SummaryKind {
    /// The name stored and logged for this kind: `leaf` or `condensed`.
    pub fn as_str(self) -> &'static str {
        match self {
            SummaryKind::Leaf => "leaf",
            SummaryKind::Condensed => "condensed",
        }
    }
}

/// A leaf pass to run: a contiguous range of raw messages outside the fresh tail.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LeafPlan {
    /// Ordinal of the first and last context item replaced (inclusive).
    pub first_ordinal: i64,
    /// Ordinal of the last context item replaced (inclusive).
    pub last_ordinal: i64,
    /// The message ids summarized, oldest first.
    pub message_ids: Vec<i64>,
    /// Sum of the messages' stored token counts.
    pub tokens: u64,
}

/// A condensed pass to run: contiguous summaries of one depth, merged into one of `depth + 1`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CondensePlan {
    /// Depth of the sources; the result has depth `source_depth + 1`.
    pub source_depth: u32,
    /// Ordinal of the first context item replaced (inclusive).
    pub first_ordinal: i64,
    /// Ordinal of the last context item replaced (inclusive).
    pub last_ordinal: i64,
    /// The summary ids merged, oldest first.
    pub summary_ids: Vec<i64>,
    /// Sum of the summaries' stored token counts.
    pub tokens: u64,
}

impl CondensePlan {
    /// Depth of the summary the pass produces (`source_depth + 1`).
    pub fn target_depth(&self) -> u32 {
        self.source_depth.saturating_add(1)
    }
}

/// A summary that passed every check in [`escalation`] and may be stored.
///
/// Its fields are private on purpose: outside this module the only way to obtain one is an
/// accepted summarizer output, so no caller can build a placeholder or truncated summary and
/// store it as if it were real.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SummaryDraft {
    text: String,
    tokens: u32,
    level: Level,
    summarizer: String,
}

impl SummaryDraft {
    /// The summary's text as it will be stored.
    pub fn text(&self) -> &str {
        &self.text
    }
    /// Tokens the summary's text counts, by the engine's estimate.
    pub fn tokens(&self) -> u32 {
        self.tokens
    }
    /// The escalation level whose output was accepted.
    pub fn level(&self) -> Level {
        self.level
    }
    /// Which summarizer produced it (e.g. `llm`, `extractive`, `scripted`), recorded in metadata.
    pub fn summarizer(&self) -> &str {
        &self.summarizer
    }
    /// The summary's text, consuming the draft.
    pub fn into_text(self) -> String {
        self.text
    }
}

/// How a summarizer call failed, as far as retry policy cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// Credentials refused: retrying soon will not help, and repeated ones open the breaker.
    Auth,
    /// The call did not finish within its time limit.
    Timeout,
    /// Any other failure: an error thrown by the host LLM, or an answer that is not text.
    Other,
    /// The provider stopped at the output limit; the message holds the cut-off text. Not a
    /// provider failure: the escalation judges it as an answer that ran too long.
    Truncated,
}

/// A summarizer's own failure (thrown by the host LLM, timed out, or not text at all).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SummarizerError {
    /// How the call failed, for retry policy.
    pub kind: ErrorKind,
    /// What went wrong, as the host or provider said it (for a truncated answer, the cut-off text).
    pub message: String,
}

impl SummarizerError {
    /// A failure of `kind` described by `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        SummarizerError {
            kind,
            message: message.into(),
        }
    }
}

/// What one summarizer call returned.
pub type SummarizerOutput = std::result::Result<String, SummarizerError>;

/// A raw message as summarization sees it. Borrowed so a pass over stored rows copies nothing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SourceMessage<'a> {
    /// Who wrote the message.
    pub role: Role,
    /// Plain text (tool calls rendered, reasoning excluded), as [`StoredMessage::text`].
    pub text: &'a str,
    /// The host's original JSON; the ledger reads tool arguments and `isError` from it.
    pub raw_json: &'a str,
    /// When the message was sent (ms since the epoch), if the host said.
    pub timestamp_ms: Option<i64>,
}

impl<'a> From<&'a StoredMessage> for SourceMessage<'a> {
    fn from(m: &'a StoredMessage) -> Self {
        SourceMessage {
            role: m.role,
            text: &m.text,
            raw_json: &m.raw_json,
            timestamp_ms: m.timestamp_ms,
        }
    }
}

/// A stored summary as a condensed pass sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SourceSummary<'a> {
    /// The summary's stored text.
    pub text: &'a str,
    /// The earliest time the summary covers (ms since the epoch), if known.
    pub earliest_ms: Option<i64>,
    /// The latest time the summary covers (ms since the epoch), if known.
    pub latest_ms: Option<i64>,
}
