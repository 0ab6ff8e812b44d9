//! `lcm_describe`: a summary's place in the DAG (parents, children, what it covers, its ledger
//! and text), or a message's place in its conversation and in the view.

use serde::Serialize;

use super::RecallTarget;
use super::{char_slice, Target};
use crate::core::masking::{stub_line_of, STUB_LINE_VARIANT};
use crate::engine::Engine;
use crate::error::Result;
use crate::store::masking;
use crate::store::recall;
use crate::store::Sql;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChildRef {
    pub id: i64,
    pub depth: i64,
    pub level: String,
    pub token_count: i64,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AboveRef {
    pub id: i64,
    pub depth: i64,
    pub in_view: bool,
}

/// A one-shot answer, serialized at once: the size difference between variants costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Description {
    /// A summary: its place in the DAG, what it covers, and its content.
    #[serde(rename_all = "camelCase")]
    Summary {
        /// Row id in `summaries`.
        id: i64,
        /// Row id of its conversation in `conversations`.
        conversation_id: i64,
        /// "leaf" (summarizes messages) or "condensed" (summarizes summaries).
        kind: String,
        /// Its escalation level: "normal", "aggressive" or "fallback" (the extractive text stored
        /// when the summarizer gave up, which `repair` redoes).
        level: String,
        /// 0 for a leaf summary; a condensed one is one deeper than its sources.
        depth: i64,
        /// Whether it is in the conversation's current context view.
        in_view: bool,
        /// Its own size, in estimated tokens.
        token_count: i64,
        /// The size of what it summarized when it was made, in estimated tokens.
        source_token_count: i64,
        /// Original messages below it at any depth, as recorded when it was made.
        descendant_message_count: i64,
        /// Summaries below it at any depth, as recorded when it was made.
        descendant_summary_count: i64,
        /// Time of the earliest message it covers, in ms since the epoch.
        earliest_at: Option<i64>,
        /// Time of the latest message it covers, in ms since the epoch.
        latest_at: Option<i64>,
        /// When it was made, in ms since the epoch.
        created_at: i64,
        /// Which summarizer wrote it: "llm" (the host's LLM) or "extractive".
        summarizer: String,
        /// The host's model that wrote it, when the host named one.
        model: Option<String>,
        /// Row ids of the condensed summaries built on it.
        parents: Vec<i64>,
        /// Child summaries (condensed summaries).
        children: Vec<ChildRef>,
        /// Messages covered directly (leaf summaries).
        direct_messages: i64,
        /// The original messages under it at any depth: count, tokens, first and last `seq`.
        covered_messages: i64,
        /// The original messages' estimated tokens.
        covered_tokens: i64,
        /// `seq` of the first original message it covers.
        first_seq: Option<i64>,
        /// `seq` of the last original message it covers.
        last_seq: Option<i64>,
        /// The artifact ledger (files, commands, errors) as the summary records it.
        ledger: Vec<String>,
        /// Its full text.
        content: String,
    },
    /// A message: its place in its conversation and in the view.
    #[serde(rename_all = "camelCase")]
    Message {
        /// Row id in `messages`.
        id: i64,
        /// Row id of its conversation in `conversations`.
        conversation_id: i64,
        /// Its position in the conversation (`#seq of N`).
        seq: i64,
        /// How many messages the conversation holds.
        of: i64,
        /// Its role as the host recorded it ("user", "assistant", "toolResult", ...).
        role: String,
        /// Its size whole, in estimated tokens.
        token_count: i64,
        /// When it was sent, in ms since the epoch.
        timestamp: i64,
        /// Whether it is in the conversation's current context view (whole, stubbed or excerpted).
        in_view: bool,
        /// How the view shows it when not whole: "stub" (one line) or "excerpt" (head and tail).
        shown_as: Option<&'static str>,
        /// Its tokens in the view, when it is in the view.
        view_tokens: Option<i64>,
        /// The stub line the view shows for it, when stubbed.
        stub_line: Option<String>,
        /// The summaries above it, lowest first; expand the one in view to reach it.
        summaries: Vec<AboveRef>,
        /// The first 200 characters of its content.
        preview: String,
    },
}

/// The lines of the summary's `## Artifacts` section.
fn ledger_lines(content: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut inside = false;
    for line in content.lines() {
        if line.starts_with("## ") {
            inside = line.trim().eq_ignore_ascii_case("## artifacts");
        } else if inside && !line.trim().is_empty() {
            lines.push(line.to_owned());
        }
    }
    lines
}
impl<S: Sql> Engine<S> {
    /// Describes a summary or a message the caller may read.
    pub fn recall_describe(&mut self, params: RecallTarget) -> Result<Description> {
        match self.recall_target(&params)? {
            Target::Summary(s) => {
                let sql = self.store.sql();
                let children = recall::child_summaries(sql, s.id)?
                    .into_iter()
                    .map(|c| ChildRef {
                        id: c.id,
                        depth: c.depth,
                        level: c.level,
                        token_count: c.token_count,
                    })
                    .collect();
                let coverage = recall::coverage(sql, s.id)?;
                Ok(Description::Summary {
                    id: s.id,
                    conversation_id: s.conversation_id,
                    in_view: recall::summary_in_view(sql, s.id)?,
                    parents: recall::parent_summaries(sql, s.id)?,
                    children,
                    direct_messages: recall::direct_message_count(sql, s.id)?,
                    covered_messages: coverage.messages,
                    covered_tokens: coverage.tokens,
                    first_seq: coverage.first_seq,
                    last_seq: coverage.last_seq,
                    ledger: ledger_lines(&s.content),
                    kind: s.kind,
                    level: s.level,
                    depth: s.depth,
                    token_count: s.token_count,
                    source_token_count: s.source_token_count,
                    descendant_message_count: s.descendant_message_count,
                    descendant_summary_count: s.descendant_summary_count,
                    earliest_at: s.earliest_at,
                    latest_at: s.latest_at,
                    created_at: s.created_at,
                    summarizer: s.summarizer,
                    model: s.model,
                    content: s.content,
                })
            }
            Target::Message(m) => {
                let sql = self.store.sql();
                let summaries = recall::summaries_above_message(sql, m.id)?
                    .into_iter()
                    .map(|(id, depth, in_view)| AboveRef { id, depth, in_view })
                    .collect();
                let view = masking::message_view(sql, m.id)?;
                let shown_as = view.as_ref().and_then(|v| v.stub).map(|s| {
                    if s == STUB_LINE_VARIANT {
                        "stub"
                    } else {
                        "excerpt"
                    }
                });
                Ok(Description::Message {
                    id: m.id,
                    conversation_id: m.conversation_id,
                    seq: m.seq,
                    of: recall::message_total(sql, m.conversation_id)?,
                    in_view: view.is_some(),
                    shown_as,
                    view_tokens: view.as_ref().map(|v| v.tokens),
                    stub_line: view
                        .and_then(|v| v.view_json)
                        .as_deref()
                        .and_then(stub_line_of),
                    summaries,
                    preview: char_slice(&m.content, 0, 200),
                    role: m.role,
                    token_count: m.token_count,
                    timestamp: m.timestamp,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn ledger_lines_are_the_artifacts_section() {
        let content = "# Summary\n## Goal\n- x\n## Artifacts\n- modified: a.rs\n- ran: cargo test\n## Latest request\n> go";
        assert_eq!(
            ledger_lines(content),
            vec!["- modified: a.rs", "- ran: cargo test"]
        );
    }
}
