//! `describe`, `expand` and `compactionEvents`: read-only views of what a session's active
//! conversation holds, the base of the `lcm_describe` and `lcm_expand` recall tools (and of the
//! demo page). `describe` answers "what is this summary / message / conversation"; `expand`
//! walks a summary down to what it replaced — its direct children, or every original message
//! under it — paged under a token limit. Everything is scoped to the session's active
//! conversation: an id from another conversation is "not found", never shown. Nothing here writes.

use serde::{Deserialize, Serialize};

use super::params::{validate_session, SessionRef};
use super::Engine;
use crate::error::{Error, Result};
use crate::store::conversations::Conversation;
use crate::store::inspect::{self, EventInfo, MessageInfo, SummaryInfo};
use crate::store::Sql;

/// Default and largest token limit of one `expand` page.
pub const DEFAULT_EXPAND_TOKENS: i64 = 8_000;
/// Largest token limit of one `expand` page (a larger `tokenLimit` is an error).
pub const MAX_EXPAND_TOKENS: i64 = 200_000;
/// Rows read per page before the token limit is applied (a page never holds more).
const MAX_PAGE_ITEMS: i64 = 500;

/// `describe`'s arguments; with neither id it describes the conversation.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DescribeParams {
    /// The session whose active conversation to describe.
    #[serde(flatten)]
    pub session: SessionRef,
    /// Describe this summary.
    #[serde(default)]
    pub summary_id: Option<i64>,
    /// Describe this message (when no `summaryId`).
    #[serde(default)]
    pub message_id: Option<i64>,
}

/// The conversation as a whole: totals, what the active context holds, and the summary DAG.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ConversationInfo {
    /// Row id in `conversations`.
    pub conversation_id: i64,
    /// The host's session id of this generation of the conversation.
    pub session_id: String,
    /// The conversation's key: the host's session key, or the session id when it gave none.
    pub session_key: String,
    /// Messages stored in the conversation.
    pub message_count: i64,
    /// The stored messages' size, in estimated tokens.
    pub token_count: i64,
    /// The active context's size (messages and summaries), in estimated tokens.
    pub context_tokens: i64,
    /// The part of `contextTokens` taken by summaries, in estimated tokens.
    pub context_summary_tokens: i64,
    /// Raw messages and summaries in the active context.
    pub context_messages: i64,
    /// Summaries in the active context.
    pub context_summaries: i64,
    /// Every summary of the conversation (the DAG).
    pub summaries: Vec<SummaryInfo>,
}

/// `describe`'s answer.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Described {
    /// The session has no conversation yet.
    Empty,
    /// No id given: the conversation as a whole.
    Conversation(ConversationInfo),
    /// The summary asked for.
    #[serde(rename_all = "camelCase")]
    Summary {
        /// Its place in the DAG and its counts.
        summary: SummaryInfo,
        /// Its text.
        content: String,
    },
    /// The message asked for.
    #[serde(rename_all = "camelCase")]
    Message {
        /// Its place in the conversation, its size and its text.
        message: MessageInfo,
    },
}

/// `expand`'s arguments.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExpandParams {
    /// The session whose active conversation holds the summary.
    #[serde(flatten)]
    pub session: SessionRef,
    /// The summary to expand: a row id of `summaries`.
    pub summary_id: i64,
    /// Largest page, in tokens (at least one item is always returned).
    #[serde(default)]
    pub token_limit: Option<i64>,
    /// Every original message under the summary instead of its direct children.
    #[serde(default)]
    pub to_messages: bool,
    /// `nextCursor` of the previous page.
    #[serde(default)]
    pub cursor: Option<i64>,
}

/// One item of an expansion.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum ExpandItem {
    /// A child summary, with its text.
    #[serde(rename_all = "camelCase")]
    Summary {
        /// Its place in the DAG and its counts.
        summary: SummaryInfo,
        /// Its text.
        content: String,
    },
    /// An original message.
    #[serde(rename_all = "camelCase")]
    Message {
        /// Its place in the conversation, its size and its text.
        message: MessageInfo,
    },
}

impl ExpandItem {
    fn tokens(&self) -> i64 {
        match self {
            ExpandItem::Summary { summary, .. } => summary.tokens,
            ExpandItem::Message { message } => message.tokens,
        }
    }
}

/// `expand`'s answer: one page.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Expansion {
    /// The summary expanded.
    pub summary: SummaryInfo,
    /// This page's items, in order.
    pub items: Vec<ExpandItem>,
    /// This page's items' size, in estimated tokens.
    pub tokens: i64,
    /// Pass as `cursor` for the next page; None when this page ends the expansion.
    pub next_cursor: Option<i64>,
}

/// `compactionEvents`' arguments.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventsParams {
    /// The session whose active conversation's events to list.
    #[serde(flatten)]
    pub session: SessionRef,
    /// Only events with a larger id (for polling).
    #[serde(default)]
    pub after_id: Option<i64>,
    /// At most this many events (1–1,000, default 200).
    #[serde(default)]
    pub limit: Option<i64>,
}

/// Keeps items while they fit `limit` (always the first); returns the kept items and whether
/// the page was cut short.
fn fit(items: Vec<ExpandItem>, limit: i64) -> (Vec<ExpandItem>, i64, bool) {
    let mut kept = Vec::new();
    let mut tokens = 0;
    let total = items.len();
    for item in items {
        if !kept.is_empty() && tokens + item.tokens() > limit {
            break;
        }
        tokens += item.tokens();
        kept.push(item);
    }
    let cut = kept.len() < total;
    (kept, tokens, cut)
}

impl<S: Sql> Engine<S> {
    fn active(&mut self, session: &SessionRef) -> Result<Option<Conversation>> {
        validate_session(session)?;
        self.conversation(session)
    }

    fn active_or_err(&mut self, session: &SessionRef) -> Result<Conversation> {
        self.active(session)?.ok_or_else(|| {
            Error::input(
                "sessionKey",
                format!("no conversation is stored for {:?}", session.key()),
            )
        })
    }

    pub(crate) fn summary_in(
        &mut self,
        conversation_id: i64,
        id: i64,
    ) -> Result<(SummaryInfo, String)> {
        inspect::summary(self.store.sql(), conversation_id, id)?.ok_or_else(|| {
            Error::input("summaryId", format!("no summary {id} in this conversation"))
        })
    }

    /// Describes the conversation, one of its summaries, or one of its messages.
    pub fn describe(&mut self, params: DescribeParams) -> Result<Described> {
        let Some(conversation) = self.active(&params.session)? else {
            return match (params.summary_id, params.message_id) {
                (None, None) => Ok(Described::Empty),
                _ => Err(Error::input(
                    "sessionKey",
                    format!("no conversation is stored for {:?}", params.session.key()),
                )),
            };
        };
        if let Some(id) = params.summary_id {
            let (summary, content) = self.summary_in(conversation.id, id)?;
            return Ok(Described::Summary { summary, content });
        }
        if let Some(id) = params.message_id {
            let message =
                inspect::message(self.store.sql(), conversation.id, id)?.ok_or_else(|| {
                    Error::input("messageId", format!("no message {id} in this conversation"))
                })?;
            return Ok(Described::Message { message });
        }
        let (context_messages, context_summaries) =
            inspect::context_counts(self.store.sql(), conversation.id)?;
        let summaries = inspect::summaries(self.store.sql(), conversation.id)?;
        Ok(Described::Conversation(ConversationInfo {
            conversation_id: conversation.id,
            session_id: conversation.session_id,
            session_key: conversation.session_key,
            message_count: conversation.message_count,
            token_count: conversation.token_count,
            context_tokens: conversation.context_token_count,
            context_summary_tokens: conversation.context_summary_tokens,
            context_messages,
            context_summaries,
            summaries,
        }))
    }

    /// Expands a summary into its children (or its original messages), one page at a time.
    pub fn expand(&mut self, params: ExpandParams) -> Result<Expansion> {
        let conversation = self.active_or_err(&params.session)?;
        self.expand_in(
            conversation.id,
            params.summary_id,
            params.token_limit,
            params.to_messages,
            params.cursor,
        )
    }

    /// [`Self::expand`] within a conversation the caller has already checked it may read.
    pub(crate) fn expand_in(
        &mut self,
        conversation_id: i64,
        summary_id: i64,
        token_limit: Option<i64>,
        to_messages: bool,
        cursor: Option<i64>,
    ) -> Result<Expansion> {
        let limit = token_limit.unwrap_or(DEFAULT_EXPAND_TOKENS);
        if !(1..=MAX_EXPAND_TOKENS).contains(&limit) {
            return Err(Error::input(
                "tokenLimit",
                format!("must be between 1 and {MAX_EXPAND_TOKENS}"),
            ));
        }
        let cursor = cursor.unwrap_or(0);
        if cursor < 0 {
            return Err(Error::input("cursor", "must not be negative"));
        }
        let (summary, _) = self.summary_in(conversation_id, summary_id)?;
        // Messages page by `seq` (the cursor is the last seq shown); child summaries by position.
        if to_messages || summary.kind == "leaf" {
            let sql = self.store.sql();
            let rows = if to_messages {
                inspect::covered_messages(sql, summary.id, cursor, MAX_PAGE_ITEMS)?
            } else {
                inspect::leaf_messages(sql, summary.id, cursor, MAX_PAGE_ITEMS)?
            };
            let more = rows.len() as i64 == MAX_PAGE_ITEMS;
            let (items, tokens, cut) = fit(
                rows.into_iter()
                    .map(|message| ExpandItem::Message { message })
                    .collect(),
                limit,
            );
            let last = items.iter().rev().find_map(|item| match item {
                ExpandItem::Message { message } => Some(message.seq),
                ExpandItem::Summary { .. } => None,
            });
            let next_cursor = if cut || more { last } else { None };
            return Ok(Expansion {
                summary,
                items,
                tokens,
                next_cursor,
            });
        }
        let start = usize::try_from(cursor).unwrap_or(usize::MAX);
        let mut children = Vec::new();
        for id in summary
            .children
            .iter()
            .skip(start)
            .take(MAX_PAGE_ITEMS as usize)
        {
            let (child, content) = self.summary_in(conversation_id, *id)?;
            children.push(ExpandItem::Summary {
                summary: child,
                content,
            });
        }
        let (items, tokens, _) = fit(children, limit);
        let end = start.saturating_add(items.len());
        let next_cursor = (end < summary.children.len()).then_some(end as i64);
        Ok(Expansion {
            summary,
            items,
            tokens,
            next_cursor,
        })
    }

    /// The compaction log of the session's active conversation (trigger decisions with their
    /// reasons, passes, failures), oldest first.
    pub fn compaction_events(&mut self, params: EventsParams) -> Result<Vec<EventInfo>> {
        let limit = params.limit.unwrap_or(200).clamp(1, 1_000);
        let Some(conversation) = self.active(&params.session)? else {
            return Ok(Vec::new());
        };
        inspect::events(
            self.store.sql(),
            conversation.id,
            params.after_id.unwrap_or(0),
            limit,
        )
    }
}
