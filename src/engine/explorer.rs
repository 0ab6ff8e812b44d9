//! The context explorer's read calls (the gateway page in `js-shim/explorer/`): the conversations
//! of one agent, one conversation's summary DAG with its warnings (fallback summaries, failed
//! passes, rejected summarizer answers), one summary's text, and a summary expanded to its
//! children or its original messages, paged.
//!
//! Scoping is a security boundary and lives here, not in the page or its server: every call
//! names an agent, and only conversations whose session key starts with `agent:<id>:` exist for
//! it. An id from another agent's conversation gets the same answer as an id that does not
//! exist. Originals are shown exactly as `expand` (the base of `lcm_expand`) shows them. Nothing
//! here writes; repairs go through the ordinary `repairStart` job, scoped to one session key.

use serde::{Deserialize, Serialize};

use super::Engine;
use crate::engine::inspect::Expansion;
use crate::error::{Error, Result};
use crate::store::explorer::{self, ConversationRow, RejectedAnswer};
use crate::store::inspect::{self, EventInfo, SummaryInfo};
use crate::store::spend::{self, PassSpend};
use crate::store::Sql;

/// Most failed passes and rejected answers one DAG answer lists (the counts cover them all).
const WARNINGS_LIMIT: i64 = 20;

/// Which agent's history a call may read.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExplorerScope {
    /// The OpenClaw agent id (`main`, ...): the call reaches the keys under `agent:<id>:`.
    pub agent_id: String,
}

impl ExplorerScope {
    /// The session-key prefix of the agent's conversations; the id must be one an OpenClaw
    /// agent id can be, so a prefix can never widen into another agent's keys.
    fn prefix(&self) -> Result<String> {
        let id = self.agent_id.as_str();
        let ok = !id.is_empty()
            && id.len() <= 64
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
        if !ok {
            return Err(Error::input("agentId", format!("expected an agent id such as \"main\" (letters, digits, '_', '-', '.'; at most 64), got {id:?}")));
        }
        Ok(format!("agent:{id}:"))
    }
}

/// `explorerDag`'s arguments.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DagParams {
    /// The agent whose conversation it must be.
    #[serde(flatten)]
    pub scope: ExplorerScope,
    /// Row id in `conversations` of the conversation to show.
    pub conversation_id: i64,
}

/// One conversation's DAG and what went wrong while it was built.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Dag {
    /// The conversation's row: keys, state and totals.
    pub conversation: ConversationRow,
    /// Raw messages and summaries in the active context.
    pub context_messages: i64,
    /// Summaries in the active context.
    pub context_summaries: i64,
    /// Every summary of the conversation (the DAG).
    pub summaries: Vec<SummaryInfo>,
    /// The newest failed passes and rejected summarizer answers (at most 20 each).
    pub failures: Vec<EventInfo>,
    /// The newest summarizer answers the escalation rejected (at most 20).
    pub rejected: Vec<RejectedAnswer>,
    /// The summarizer's tokens spent on the conversation, per pass kind.
    pub spend: Vec<PassSpend>,
}

/// `explorerSummary`'s arguments.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SummaryParams {
    /// The agent whose conversation must hold the summary.
    #[serde(flatten)]
    pub scope: ExplorerScope,
    /// Row id in `summaries` of the summary to read.
    pub summary_id: i64,
}

/// `explorerSummary`'s answer.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SummaryText {
    /// Row id in `conversations` of the summary's conversation.
    pub conversation_id: i64,
    /// Its place in the DAG and its counts.
    pub summary: SummaryInfo,
    /// Its text.
    pub content: String,
}

/// `explorerExpand`'s arguments, as `expand` takes them.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExpandParams {
    /// The agent whose conversation must hold the summary.
    #[serde(flatten)]
    pub scope: ExplorerScope,
    /// Row id in `summaries` of the summary to expand.
    pub summary_id: i64,
    /// Largest page, in tokens (default 8,000; at most 200,000).
    #[serde(default)]
    pub token_limit: Option<i64>,
    /// Every original message under the summary instead of its direct children.
    #[serde(default)]
    pub to_messages: bool,
    /// `nextCursor` of the previous page.
    #[serde(default)]
    pub cursor: Option<i64>,
}

impl<S: Sql> Engine<S> {
    /// The agent's conversations (active and archived), newest first.
    pub fn explorer_conversations(&mut self, scope: ExplorerScope) -> Result<Vec<ConversationRow>> {
        let prefix = scope.prefix()?;
        explorer::conversations_with_prefix(self.store.sql(), &prefix)
    }

    fn explorer_conversation(&mut self, scope: &ExplorerScope, id: i64) -> Result<ConversationRow> {
        let prefix = scope.prefix()?;
        explorer::conversation_with_prefix(self.store.sql(), &prefix, id)?.ok_or_else(|| {
            Error::input(
                "conversationId",
                format!("no conversation {id} in this agent's history"),
            )
        })
    }

    /// The conversation a summary belongs to, if the agent may read it.
    fn explorer_summary_home(&mut self, scope: &ExplorerScope, summary_id: i64) -> Result<i64> {
        let prefix = scope.prefix()?;
        let not_found = || {
            Error::input(
                "summaryId",
                format!("no summary {summary_id} in this agent's history"),
            )
        };
        let conversation =
            explorer::summary_conversation(self.store.sql(), summary_id)?.ok_or_else(not_found)?;
        explorer::conversation_with_prefix(self.store.sql(), &prefix, conversation)?
            .ok_or_else(not_found)?;
        Ok(conversation)
    }

    /// One conversation's summary DAG, with its failures and rejected answers.
    pub fn explorer_dag(&mut self, params: DagParams) -> Result<Dag> {
        let conversation = self.explorer_conversation(&params.scope, params.conversation_id)?;
        let sql = self.store.sql();
        let (context_messages, context_summaries) = inspect::context_counts(sql, conversation.id)?;
        Ok(Dag {
            summaries: inspect::summaries(sql, conversation.id)?,
            failures: inspect::failed_events(sql, conversation.id, WARNINGS_LIMIT)?,
            rejected: explorer::rejected_answers(sql, conversation.id, WARNINGS_LIMIT)?,
            spend: spend::by_pass(sql, Some(conversation.id))?,
            context_messages,
            context_summaries,
            conversation,
        })
    }

    /// One summary with its text.
    pub fn explorer_summary(&mut self, params: SummaryParams) -> Result<SummaryText> {
        let conversation_id = self.explorer_summary_home(&params.scope, params.summary_id)?;
        let (summary, content) = self.summary_in(conversation_id, params.summary_id)?;
        Ok(SummaryText {
            conversation_id,
            summary,
            content,
        })
    }

    /// A summary's children, or (`toMessages`) its original messages, one page at a time.
    pub fn explorer_expand(&mut self, params: ExpandParams) -> Result<Expansion> {
        let conversation_id = self.explorer_summary_home(&params.scope, params.summary_id)?;
        self.expand_in(
            conversation_id,
            params.summary_id,
            params.token_limit,
            params.to_messages,
            params.cursor,
        )
    }
}
