//! The recall tools' logic: `grep` (search this conversation or all of this agent's), `describe`
//! (a summary's place in the DAG, or a message's place in its conversation) and `expand` (a
//! summary's children down to the original messages, paged under a token limit this module
//! enforces whatever the caller asks).
//!
//! Scoping is a security boundary. The caller's reach is derived from its own session key, never
//! from the ids or scope it passes: a key `agent:<id>:...` reaches every conversation whose key
//! starts with `agent:<id>:` (its sub-agents included, archived ones too); any other key reaches
//! only conversations under exactly that key. Every row is checked against that reach before it
//! is returned, and an id outside it gets the same answer as an id that does not exist.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::params::{validate_session, SessionRef};
use super::Engine;
use crate::core::masking::{stub_line_of, STUB_LINE_VARIANT};
use crate::core::tokens::estimate_text;
use crate::error::{Error, Result};
use crate::store::masking;
use crate::store::recall::{self, MessageRow, SummaryRow};
use crate::store::search::{self, SearchHit, SearchMode, TimeWindow};
use crate::store::Sql;

/// Default and bounds of one expand page, in estimated tokens.
pub const EXPAND_DEFAULT_TOKENS: u32 = 4_000;
/// Smallest page token limit a caller may ask for (smaller requests are raised to it).
pub const EXPAND_MIN_TOKENS: u32 = 200;
/// Largest page token limit a caller may ask for (larger requests are lowered to it).
pub const EXPAND_MAX_TOKENS: u32 = 16_000;
/// Estimated tokens of an item's framing (ids, role) in a page.
const ITEM_OVERHEAD_TOKENS: u32 = 8;
/// Rows fetched per query while filling a page.
const PAGE_ROWS: i64 = 64;
const GREP_DEFAULT_LIMIT: usize = 20;
const GREP_MAX_LIMIT: usize = 200;

/// What a session may read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Reach {
    /// Every conversation whose session key starts with this prefix (`agent:<id>:`).
    Agent(String),
    /// Only conversations under exactly this session key.
    Key(String),
}

impl Reach {
    pub(super) fn of(session: &SessionRef) -> Reach {
        let key = session.key();
        let agent = key
            .strip_prefix("agent:")
            .and_then(|rest| rest.split_once(':'))
            .filter(|(id, rest)| !id.is_empty() && !rest.is_empty());
        match agent {
            Some((id, _)) => Reach::Agent(format!("agent:{id}:")),
            None => Reach::Key(key.to_owned()),
        }
    }

    pub(super) fn allows(&self, session_key: &str) -> bool {
        match self {
            Reach::Agent(prefix) => session_key.starts_with(prefix.as_str()),
            Reach::Key(key) => session_key == key,
        }
    }

    pub(super) fn conversations(&self, sql: &mut impl Sql) -> Result<Vec<i64>> {
        match self {
            Reach::Agent(prefix) => recall::conversations_with_key_prefix(sql, prefix),
            Reach::Key(key) => recall::conversations_with_key(sql, key),
        }
    }
}

/// Parses an id given as a number, a numeric string, or with our prefixes (`sum_12`, `msg_12`).
pub(super) fn parse_id(field: &str, value: &Value) -> Result<i64> {
    let bad = || {
        Error::input(
            field,
            format!("expected a numeric id such as 12 (or \"sum_12\" / \"msg_12\"), got {value}"),
        )
    };
    let id = match value {
        Value::Number(n) => n.as_i64().ok_or_else(bad)?,
        Value::String(s) => {
            // Also the labels lcm_ask cites (`m12`, `s5`) and `#12`, as models copy them.
            let t = s.trim().trim_start_matches('[').trim_end_matches(']');
            let digits = ["sum_", "msg_", "m", "s", "#"]
                .iter()
                .find_map(|p| t.strip_prefix(p))
                .unwrap_or(t);
            digits.parse::<i64>().map_err(|_| bad())?
        }
        _ => return Err(bad()),
    };
    if id <= 0 {
        return Err(bad());
    }
    Ok(id)
}

fn parse_cursor(value: Option<&Value>) -> Result<i64> {
    let bad = |v: &Value| {
        Error::input(
            "cursor",
            format!("expected the nextCursor of a previous page, got {v}"),
        )
    };
    match value {
        None | Some(Value::Null) => Ok(0),
        Some(v @ Value::Number(n)) => n.as_i64().filter(|c| *c >= 0).ok_or_else(|| bad(v)),
        Some(v @ Value::String(s)) => s
            .trim()
            .parse::<i64>()
            .ok()
            .filter(|c| *c >= 0)
            .ok_or_else(|| bad(v)),
        Some(v) => Err(bad(v)),
    }
}

/// `lcm_grep`'s arguments.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GrepParams {
    /// The caller's session, from which its reach is derived.
    #[serde(flatten)]
    pub session: SessionRef,
    /// What to search for: literal text (`text`, `ranked`) or an FTS4 query (`full_text`).
    pub pattern: String,
    /// "text" (default), "full_text", or "ranked" (lexical and semantic candidates fused, best
    /// first).
    #[serde(default)]
    pub mode: Option<String>,
    /// "conversation" (default: this session's conversations, archived ones included) or "agent".
    #[serde(default)]
    pub scope: Option<String>,
    /// "both" (default), "messages" or "summaries".
    #[serde(default)]
    pub kind: Option<String>,
    /// ms since the epoch, inclusive.
    #[serde(default)]
    pub since: Option<i64>,
    /// ms since the epoch, exclusive.
    #[serde(default)]
    pub before: Option<i64>,
    /// At most this many hits (1–200, default 20).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// A grep hit, with where to go next: for a message summarized away, the summary in the view
/// that covers it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GrepHit {
    #[serde(flatten)]
    pub hit: SearchHit,
    pub in_view: bool,
    /// A message in the view as a stub or an excerpt (expand it to read it whole).
    pub stubbed: bool,
    /// The highest summary above the hit that is in the current view (expand it to reach the hit).
    pub covered_by: Option<i64>,
}

/// `lcm_grep`'s answer.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GrepResult {
    /// The scope searched: "conversation" or "agent".
    pub scope: &'static str,
    /// How many conversations in reach were searched.
    pub conversations: usize,
    /// The hits, newest first (`ranked`: best first).
    pub hits: Vec<GrepHit>,
}

/// The arguments of `lcm_describe` and `lcm_expand`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecallTarget {
    /// The caller's session, from which its reach is derived.
    #[serde(flatten)]
    pub session: SessionRef,
    /// A row id of `summaries`: a number, a numeric string or `"sum_<id>"`.
    #[serde(default)]
    pub summary_id: Option<Value>,
    /// A row id of `messages`: a number or a numeric string.
    #[serde(default)]
    pub message_id: Option<Value>,
    /// expand: where the previous page stopped.
    #[serde(default)]
    pub cursor: Option<Value>,
    /// expand: the page's token limit (clamped to [EXPAND_MIN_TOKENS, EXPAND_MAX_TOKENS]).
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// expand: list the original messages under the summary at any depth instead of its children.
    #[serde(default)]
    pub all_messages: Option<bool>,
}

pub(super) enum Target {
    Summary(SummaryRow),
    Message(MessageRow),
}

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

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExpandItem {
    /// "summary" or "message".
    pub kind: &'static str,
    pub id: i64,
    pub role: String,
    pub seq: Option<i64>,
    pub depth: Option<i64>,
    pub level: Option<String>,
    pub content: String,
    pub tokens: u32,
    /// Only part of the content fits this page: expand `{messageId}` (or read the summary with
    /// describe) from `continueAt` for the rest.
    pub truncated: bool,
    pub continue_at: Option<usize>,
}

/// `lcm_expand`'s answer: one page of items under the token limit.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Expansion {
    /// "summary" or "message".
    pub target: &'static str,
    /// Row id of the target in `summaries` or `messages`.
    pub id: i64,
    /// Row id of the target's conversation in `conversations`.
    pub conversation_id: i64,
    /// "children", "messages" (every original message below), or "content" (one message's text).
    pub listing: &'static str,
    /// How many items the listing holds in all (for "content": the message's characters).
    pub total: i64,
    /// This page's items, in order.
    pub items: Vec<ExpandItem>,
    /// The page's estimated tokens, item framing included.
    pub tokens: u32,
    /// The token limit this page was filled under, after clamping.
    pub max_tokens: u32,
    /// Where the next page starts (pass it back as `cursor`); none on the last page.
    pub next_cursor: Option<String>,
}

/// At most `limit` hits, newest first, where neither kind crowds the other out: a fact quoted in
/// many summaries must not hide the original message (what expand and describe start from), so
/// each kind keeps at least half the limit when it has that many hits.
fn fair_mix(hits: Vec<SearchHit>, limit: usize) -> Vec<SearchHit> {
    let newest_first =
        |a: &SearchHit, b: &SearchHit| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id));
    let (mut messages, mut summaries): (Vec<SearchHit>, Vec<SearchHit>) =
        hits.into_iter().partition(|h| h.kind == "message");
    messages.sort_by(newest_first);
    summaries.sort_by(newest_first);
    let take_messages = messages
        .len()
        .min(limit.div_ceil(2).max(limit - summaries.len().min(limit)));
    let take_summaries = summaries.len().min(limit - take_messages);
    let mut out: Vec<SearchHit> = messages
        .into_iter()
        .take(take_messages)
        .chain(summaries.into_iter().take(take_summaries))
        .collect();
    out.sort_by(newest_first);
    out
}

/// The longest prefix of `text` (in chars) whose estimate fits `budget`.
fn fitting_chars(text: &str, budget: u32) -> usize {
    let bounds: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(text.len()))
        .collect();
    let (mut lo, mut hi) = (0usize, bounds.len() - 1);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if estimate_text(&text[..bounds[mid]]) <= budget {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

fn char_slice(text: &str, from: usize, count: usize) -> String {
    text.chars().skip(from).take(count).collect()
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

fn summary_item(s: SummaryRow) -> ExpandItem {
    ExpandItem {
        kind: "summary",
        id: s.id,
        role: "summary".into(),
        seq: None,
        depth: Some(s.depth),
        level: Some(s.level),
        tokens: estimate_text(&s.content),
        content: s.content,
        truncated: false,
        continue_at: None,
    }
}

fn message_item(m: MessageRow) -> ExpandItem {
    ExpandItem {
        kind: "message",
        id: m.id,
        role: m.role,
        seq: Some(m.seq),
        depth: None,
        level: None,
        tokens: estimate_text(&m.content),
        content: m.content,
        truncated: false,
        continue_at: None,
    }
}

/// Adds items to a page until the next one would pass `budget`. An item that alone does not fit
/// an empty page is cut to fit, so every page makes progress. Returns how many were consumed.
fn fill(
    page: &mut Vec<ExpandItem>,
    used: &mut u32,
    budget: u32,
    candidates: Vec<ExpandItem>,
) -> (usize, bool) {
    let mut consumed = 0;
    for mut item in candidates {
        let cost = item.tokens.saturating_add(ITEM_OVERHEAD_TOKENS);
        if used.saturating_add(cost) <= budget {
            *used += cost;
        } else if page.is_empty() {
            let keep = fitting_chars(&item.content, budget.saturating_sub(ITEM_OVERHEAD_TOKENS));
            item.content = char_slice(&item.content, 0, keep);
            item.tokens = estimate_text(&item.content);
            item.truncated = true;
            item.continue_at = Some(keep);
            *used += item.tokens + ITEM_OVERHEAD_TOKENS;
        } else {
            return (consumed, true);
        }
        page.push(item);
        consumed += 1;
    }
    (consumed, false)
}

impl<S: Sql> Engine<S> {
    /// Searches what the caller may read, newest first.
    pub fn recall_grep(&mut self, params: GrepParams) -> Result<GrepResult> {
        validate_session(&params.session)?;
        // "ranked": lexical and semantic candidates fused, best first (engine/hybrid.rs).
        let ranked = params.mode.as_deref() == Some("ranked");
        let mode = if ranked {
            SearchMode::Text
        } else {
            SearchMode::parse(params.mode.as_deref().unwrap_or("text"))?
        };
        let (scope, conversations) =
            self.scoped_conversations(&params.session, params.scope.as_deref())?;
        let limit = params
            .limit
            .unwrap_or(GREP_DEFAULT_LIMIT)
            .clamp(1, GREP_MAX_LIMIT);
        let window = TimeWindow {
            since: params.since,
            before: params.before,
        };
        let kinds = match params.kind.as_deref().unwrap_or("both") {
            "both" => ["message", "summary"].as_slice(),
            "messages" => ["message"].as_slice(),
            "summaries" => ["summary"].as_slice(),
            other => {
                return Err(Error::input(
                    "kind",
                    format!(
                        "unknown kind {other:?} (expected \"messages\", \"summaries\" or \"both\")"
                    ),
                ))
            }
        };
        self.store.index_waiting_messages()?;
        let found = search::search_in(
            self.store.sql(),
            Some(&conversations),
            &params.pattern,
            mode,
            limit,
            window,
        )?;
        let hits = if ranked {
            // search_in above validated the pattern and the window the same way for both.
            self.ranked_hits(&params.pattern, &conversations, window, kinds, limit)?
        } else {
            fair_mix(
                found
                    .into_iter()
                    .filter(|h| kinds.contains(&h.kind))
                    .collect(),
                limit,
            )
        };
        let mut out = Vec::with_capacity(hits.len());
        for hit in hits {
            let (in_view, stubbed, covered_by) = if hit.kind == "message" {
                let view = masking::message_view(self.store.sql(), hit.id)?;
                let above = recall::summaries_above_message(self.store.sql(), hit.id)?;
                (
                    view.is_some(),
                    view.is_some_and(|v| v.stub.is_some()),
                    above
                        .iter()
                        .filter(|(_, _, v)| *v)
                        .map(|(id, _, _)| *id)
                        .next(),
                )
            } else {
                (
                    recall::summary_in_view(self.store.sql(), hit.id)?,
                    false,
                    None,
                )
            };
            out.push(GrepHit {
                hit,
                in_view,
                stubbed,
                covered_by,
            });
        }
        Ok(GrepResult {
            scope,
            conversations: conversations.len(),
            hits: out,
        })
    }

    /// The conversations a recall call searches: `conversation` (default: this session key's,
    /// archived segments included) or `agent` (every conversation the caller's reach allows).
    pub(super) fn scoped_conversations(
        &mut self,
        session: &SessionRef,
        scope: Option<&str>,
    ) -> Result<(&'static str, Vec<i64>)> {
        match scope.unwrap_or("conversation") {
            "conversation" => Ok((
                "conversation",
                recall::conversations_with_key(self.store.sql(), session.key())?,
            )),
            "agent" | "all" => Ok(("agent", Reach::of(session).conversations(self.store.sql())?)),
            other => Err(Error::input(
                "scope",
                format!("unknown scope {other:?} (expected \"conversation\" or \"agent\")"),
            )),
        }
    }

    /// Loads the summary or message the caller names, if its reach allows it.
    pub(super) fn recall_target(&mut self, params: &RecallTarget) -> Result<Target> {
        validate_session(&params.session)?;
        let reach = Reach::of(&params.session);
        let given = |v: &Option<Value>| v.clone().filter(|v| !v.is_null());
        let (field, target) = match (given(&params.summary_id), given(&params.message_id)) {
            (Some(id), None) => {
                let id = parse_id("summaryId", &id)?;
                (
                    "summaryId",
                    recall::summary(self.store.sql(), id)?
                        .map(Target::Summary)
                        .ok_or(id),
                )
            }
            (None, Some(id)) => {
                let id = parse_id("messageId", &id)?;
                (
                    "messageId",
                    recall::message(self.store.sql(), id)?
                        .map(Target::Message)
                        .ok_or(id),
                )
            }
            _ => {
                return Err(Error::input(
                    "summaryId",
                    "give exactly one of summaryId or messageId",
                ))
            }
        };
        let not_found = |id: i64| {
            Error::input(
                field,
                format!(
                    "no {} {id} in this agent's history",
                    &field[..field.len() - 2]
                ),
            )
        };
        let target = target.map_err(not_found)?;
        let (id, conversation) = match &target {
            Target::Summary(s) => (s.id, s.conversation_id),
            Target::Message(m) => (m.id, m.conversation_id),
        };
        let key = recall::conversation_key(self.store.sql(), conversation)?;
        if !key.is_some_and(|k| reach.allows(&k)) {
            return Err(not_found(id));
        }
        Ok(target)
    }

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

    /// One page of a summary's children (or of every original message below it), or of one
    /// message's text, within the page's token limit.
    pub fn recall_expand(&mut self, params: RecallTarget) -> Result<Expansion> {
        let target = self.recall_target(&params)?;
        let cursor = parse_cursor(params.cursor.as_ref())?;
        let max_tokens = params
            .max_tokens
            .unwrap_or(EXPAND_DEFAULT_TOKENS)
            .clamp(EXPAND_MIN_TOKENS, EXPAND_MAX_TOKENS);
        let mut items = Vec::new();
        let mut used = 0u32;
        let sql = self.store.sql();
        match target {
            Target::Message(m) => {
                let total = m.content.chars().count();
                let from = usize::try_from(cursor).unwrap_or(usize::MAX).min(total);
                let rest = char_slice(&m.content, from, total - from);
                let keep = fitting_chars(&rest, max_tokens.saturating_sub(ITEM_OVERHEAD_TOKENS));
                let end = from + keep;
                let mut item = message_item(MessageRow {
                    content: char_slice(&rest, 0, keep),
                    ..m.clone()
                });
                item.truncated = end < total;
                item.continue_at = item.truncated.then_some(end);
                used = item.tokens + ITEM_OVERHEAD_TOKENS;
                items.push(item);
                let next_cursor = (end < total).then(|| end.to_string());
                Ok(Expansion {
                    target: "message",
                    id: m.id,
                    conversation_id: m.conversation_id,
                    listing: "content",
                    total: total as i64,
                    items,
                    tokens: used,
                    max_tokens,
                    next_cursor,
                })
            }
            Target::Summary(s) => {
                let flatten = params.all_messages.unwrap_or(false);
                let children = if flatten {
                    Vec::new()
                } else {
                    recall::child_summaries(sql, s.id)?
                };
                let (listing, total) = if flatten {
                    ("messages", recall::coverage(sql, s.id)?.messages)
                } else {
                    (
                        "children",
                        children.len() as i64 + recall::direct_message_count(sql, s.id)?,
                    )
                };
                let mut position = cursor;
                if !flatten {
                    let skip = usize::try_from(cursor).unwrap_or(usize::MAX);
                    let summaries: Vec<ExpandItem> =
                        children.into_iter().skip(skip).map(summary_item).collect();
                    let offered = summaries.len();
                    let (consumed, full) = fill(&mut items, &mut used, max_tokens, summaries);
                    position += consumed as i64;
                    if full || consumed < offered {
                        return Ok(Expansion {
                            target: "summary",
                            id: s.id,
                            conversation_id: s.conversation_id,
                            listing,
                            total,
                            items,
                            tokens: used,
                            max_tokens,
                            next_cursor: Some(position.to_string()),
                        });
                    }
                }
                let summary_children = total - recall::direct_message_count(sql, s.id)?;
                loop {
                    let offset = if flatten {
                        position
                    } else {
                        position - summary_children
                    };
                    let rows = if flatten {
                        recall::covered_messages(sql, s.id, offset, PAGE_ROWS)?
                    } else {
                        recall::direct_messages(sql, s.id, offset, PAGE_ROWS)?
                    };
                    if rows.is_empty() {
                        break;
                    }
                    let fetched = rows.len();
                    let (consumed, full) = fill(
                        &mut items,
                        &mut used,
                        max_tokens,
                        rows.into_iter().map(message_item).collect(),
                    );
                    position += consumed as i64;
                    if full || consumed < fetched {
                        break;
                    }
                }
                let next_cursor = (position < total).then(|| position.to_string());
                Ok(Expansion {
                    target: "summary",
                    id: s.id,
                    conversation_id: s.conversation_id,
                    listing,
                    total,
                    items,
                    tokens: used,
                    max_tokens,
                    next_cursor,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(key: &str) -> SessionRef {
        SessionRef {
            session_id: "s".into(),
            session_key: Some(key.into()),
        }
    }

    #[test]
    fn reach_comes_from_the_callers_own_key() {
        assert_eq!(
            Reach::of(&session("agent:main:telegram:1")),
            Reach::Agent("agent:main:".into())
        );
        assert_eq!(
            Reach::of(&session("agent:main:subagent:x")),
            Reach::Agent("agent:main:".into())
        );
        assert_eq!(
            Reach::of(&session("agent::x")),
            Reach::Key("agent::x".into())
        );
        assert_eq!(
            Reach::of(&session("agent:main")),
            Reach::Key("agent:main".into())
        );
        assert!(!Reach::Agent("agent:main:".into()).allows("agent:mainframe:x"));
        assert!(!Reach::Key("k".into()).allows("k2"));
    }

    #[test]
    fn ids_parse_from_numbers_and_prefixed_strings_and_reject_the_rest() {
        assert_eq!(parse_id("summaryId", &Value::from(12)).ok(), Some(12));
        assert_eq!(parse_id("summaryId", &Value::from("sum_12")).ok(), Some(12));
        assert_eq!(parse_id("messageId", &Value::from(" 7 ")).ok(), Some(7));
        assert_eq!(
            parse_id("messageId", &Value::from("m7")).ok(),
            Some(7),
            "lcm_ask's labels"
        );
        assert_eq!(parse_id("summaryId", &Value::from("[s5]")).ok(), Some(5));
        assert_eq!(parse_id("messageId", &Value::from("#9")).ok(), Some(9));
        for bad in [
            Value::from("12; DROP TABLE x"),
            Value::from(-1),
            Value::from(1.5),
            Value::Null,
            Value::from(""),
        ] {
            let err = parse_id("summaryId", &bad)
                .map(|_| ())
                .unwrap_err()
                .to_string();
            assert!(err.contains("summaryId"), "{err}");
        }
    }

    #[test]
    fn fitting_chars_respects_the_budget_and_char_boundaries() {
        let text = "静默".repeat(100);
        let n = fitting_chars(&text, 10);
        assert!(n > 0 && estimate_text(&char_slice(&text, 0, n)) <= 10);
        assert!(estimate_text(&char_slice(&text, 0, n + 1)) > 10);
        assert_eq!(fitting_chars("", 10), 0);
    }

    fn hit(kind: &'static str, id: i64) -> SearchHit {
        SearchHit {
            kind,
            id,
            conversation_id: 1,
            role: "user".into(),
            snippet: String::new(),
            created_at: id,
        }
    }

    #[test]
    fn neither_kind_of_hit_crowds_the_other_out() {
        let kinds = |hits: Vec<SearchHit>| hits.iter().map(|h| h.kind).collect::<Vec<_>>();
        let many_summaries: Vec<SearchHit> = (1..=3)
            .map(|i| hit("message", i))
            .chain((10..20).map(|i| hit("summary", i)))
            .collect();
        let mixed = fair_mix(many_summaries, 5);
        assert_eq!(mixed.len(), 5);
        assert_eq!(
            kinds(mixed).iter().filter(|k| **k == "message").count(),
            3,
            "half the limit rounded up is kept for messages"
        );
        let few_summaries: Vec<SearchHit> = (1..=10)
            .map(|i| hit("message", i))
            .chain([hit("summary", 50)])
            .collect();
        assert_eq!(
            kinds(fair_mix(few_summaries, 5))
                .iter()
                .filter(|k| **k == "summary")
                .count(),
            1
        );
        let only_messages: Vec<SearchHit> = (1..=10).map(|i| hit("message", i)).collect();
        let newest = fair_mix(only_messages, 4);
        assert_eq!(
            newest.iter().map(|h| h.id).collect::<Vec<_>>(),
            vec![10, 9, 8, 7],
            "newest first"
        );
    }

    #[test]
    fn ledger_lines_are_the_artifacts_section() {
        let content = "# Summary\n## Goal\n- x\n## Artifacts\n- modified: a.rs\n- ran: cargo test\n## Latest request\n> go";
        assert_eq!(
            ledger_lines(content),
            vec!["- modified: a.rs", "- ran: cargo test"]
        );
    }
}
