//! The assembled view of each conversation, kept between calls so a turn costs time proportional
//! to what changed, not to the size of the view. It also holds the rule that, without new
//! context, a view never grows: the OpenClaw host re-assembles inside a turn with a budget that
//! ignores its own system prompt (docs/openclaw-host-observed.md §3), and growing the view there
//! would overflow the model. A compaction that replaces part of the context is applied to the
//! view in place ([`ViewCache::replaced`]): the replaced items leave, the summary takes their
//! place, and the room they freed is filled from the store with the next older items, which is
//! what a rebuild would show. A view is rebuilt from the store when its context changed in any
//! other way (epoch change: a repair, an import) or a new turn brings a larger budget.
//!
//! Whatever the budget, a view holds the **active task** whole ([`crate::core::turns`]: the
//! current turn so far and the previous turn): older items leave first, and when the active task
//! alone is over the budget its big tool outputs become excerpts ([`squeeze`]) — a view is never
//! empty while the conversation holds a message, and never starts inside the active task.

mod cache;
mod rebuild;
mod squeeze;

pub(super) use cache::ViewCache;
use rebuild::rebuild;

use std::borrow::Cow;
use std::collections::VecDeque;

use crate::core::assemble::{
    dangling_calls, dated_omission_message, oldest_to_drop, omission_date, omission_message,
    render_summary_message, tool_links, unavailable_result, DanglingCall, ToolLinks,
    OMISSION_LINE_TOKENS, SYNTHETIC_RESULT_TOKENS,
};
use crate::core::message::Role;
use crate::core::turns::{active_task_start, is_answer, TurnItem};
use crate::error::Result;
use crate::store::context::{self, ContextItem, ItemContent};
use crate::store::Sql;

/// Items read per page while filling a budget from the newest end.
const PAGE: i64 = 256;
/// Items read first when a compaction freed room in a view: it usually frees room for a few.
const BACKFILL_PAGE: i64 = 16;
/// A view epoch no conversation has: the view is rebuilt on its next use.
const STALE_EPOCH: i64 = i64::MIN;
/// Conversations whose views are kept; beyond that the cache starts over.
const MAX_CACHED: usize = 64;
/// Items a rebuild reads beyond the budget to find the start of the active task, at most (a
/// history without requests has none to find).
const MAX_FLOOR_ITEMS: usize = 4_096;

/// A message's handover key: its id while it is shown whole; a stubbed message's JSON differs
/// from the stored one, so each stub variant gets keys of its own (the id plus the variant
/// times 2^44: exact integers in a JS number for any id below 2^44).
fn message_key(id: i64, stub: Option<i64>) -> i64 {
    id.saturating_add(stub.unwrap_or(0).saturating_mul(1 << 44))
}

/// One item as it enters the model's view.
#[derive(Debug, Clone)]
struct ViewItem {
    /// The item's place in the context (`context_items.ordinal`).
    ordinal: i64,
    /// What the item is, for handing the view over incrementally ([`super::handover`]): the
    /// message id, or the negated summary id.
    key: i64,
    tokens: u32,
    /// Original messages this item stands for: 1 for a message, its descendants for a summary.
    represents: i64,
    /// The role that matters for the view's start rule (summaries count as user turns).
    role: Role,
    json: String,
    links: ToolLinks,
    /// The stored message's id (None for a summary) and its stub variant as shown (a stored
    /// stub, or a view-time excerpt).
    message_id: Option<i64>,
    stub: Option<i64>,
    /// For a view-time excerpt: the item as stored (its JSON, tokens and key), put back before
    /// every fit, so a view is the same function of the store and the budget however it was
    /// reached.
    unsqueezed: Option<Box<(String, u32, i64)>>,
}

impl TurnItem for ViewItem {
    fn is_request(&self) -> bool {
        self.message_id.is_some() && self.role == Role::User
    }

    fn is_answer(&self) -> bool {
        self.message_id.is_some() && is_answer(self.role, !self.links.calls.is_empty())
    }
}

impl ViewItem {
    fn from_item(item: ContextItem) -> ViewItem {
        let ordinal = item.ordinal;
        match item.content {
            ItemContent::Message {
                id,
                role,
                raw_json,
                stub,
            } => ViewItem {
                ordinal,
                key: message_key(id, stub),
                tokens: item.tokens,
                represents: 1,
                role,
                links: tool_links(role, &raw_json),
                json: raw_json,
                message_id: Some(id),
                stub,
                unsqueezed: None,
            },
            ItemContent::Summary {
                id,
                depth,
                content,
                earliest_at,
                latest_at,
                descendant_messages,
            } => ViewItem {
                ordinal,
                key: -id,
                tokens: item.tokens,
                represents: descendant_messages.max(0),
                role: Role::User,
                json: render_summary_message(id, depth, &content, earliest_at, latest_at),
                links: ToolLinks::default(),
                message_id: None,
                stub: None,
                unsqueezed: None,
            },
        }
    }
}

/// A conversation's current view, oldest item first.
#[derive(Debug, Clone)]
pub(super) struct View {
    epoch: i64,
    /// The context epoch when the view was last built from the store ([`View::summaries_epoch`]).
    built_epoch: i64,
    /// The conversation's `next_ordinal` when the view was last brought up to date.
    through_ordinal: i64,
    budget: u32,
    items: VecDeque<ViewItem>,
    tokens: u64,
    /// Original messages the items stand for, and how many the conversation holds: the rest
    /// were left out to fit the budget and are announced by the omission line.
    represented: i64,
    message_count: i64,
    /// The tool calls without a result in the view, kept up to date by every change
    /// ([`View::refresh`]) so handing the view out does not recompute them.
    dangling: Vec<DanglingCall>,
    /// Set when the active task alone was over the budget at the last fit.
    pressure: Option<Pressure>,
}

/// The active task did not fit the view's budget: what it took, and what was done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Pressure {
    pub budget: u32,
    /// The active task's tokens before any excerpt.
    pub active_tokens: u64,
    /// Tool outputs of the active task shown as excerpts.
    pub excerpts: u32,
    /// The view's tokens after the excerpts (over the budget when they were not enough).
    pub view_tokens: u64,
}

impl View {
    fn compute_dangling(&self) -> Vec<DanglingCall> {
        if self.items.iter().all(|i| i.links.calls.is_empty()) {
            return Vec::new();
        }
        let links: Vec<&ToolLinks> = self.items.iter().map(|i| &i.links).collect();
        dangling_calls(&links)
    }

    fn refresh(&mut self) {
        self.dangling = self.compute_dangling();
    }

    /// Stored messages that neither appear in the view nor are covered by a summary in it, when
    /// the view says so (a budget too small for the line gets an empty view instead).
    pub(super) fn omitted(&self) -> i64 {
        if self.budget < OMISSION_LINE_TOKENS {
            return 0;
        }
        (self.message_count - self.represented).max(0)
    }

    fn omission_tokens(&self) -> u64 {
        if self.omitted() > 0 {
            u64::from(OMISSION_LINE_TOKENS)
        } else {
            0
        }
    }

    /// The view's messages: the omission line when older messages were left out, then the items,
    /// with a synthetic result after each tool call whose result is missing.
    pub(super) fn messages(&self) -> Vec<String> {
        self.entries()
            .into_iter()
            .map(|(_, json)| json.into_owned())
            .collect()
    }

    /// The view's messages with their keys: a message's id, a summary's negated id, or 0 for a
    /// line the view made up (the omission line, synthetic tool results).
    pub(super) fn entries(&self) -> Vec<(i64, Cow<'_, str>)> {
        let mut dangling = self.dangling.iter().peekable();
        let mut out = Vec::with_capacity(self.items.len() + 1);
        if self.omitted() > 0 {
            // Dated like the oldest item shown that has a date (never 1970-01-01 in a host that
            // renders dates); the same view gives the same bytes.
            let shown = self.items.iter().map(|i| i.json.as_str());
            let line = match omission_date(shown) {
                Some(at) => dated_omission_message(self.omitted(), at),
                None => omission_message(self.omitted()),
            };
            out.push((0, Cow::Owned(line)));
        }
        for (i, item) in self.items.iter().enumerate() {
            out.push((item.key, Cow::Borrowed(item.json.as_str())));
            while let Some(call) = dangling.next_if(|d| d.after == i) {
                out.push((0, Cow::Owned(unavailable_result(call))));
            }
        }
        out
    }

    /// The epoch a summary key of this view is valid in: the context epoch the view was built
    /// from the store in. Following a compaction in place keeps it, since a compaction writes
    /// new summaries and rewrites none; a repair rewrites summaries and moves the context epoch
    /// on, which makes the view be built again, under the new epoch.
    pub(super) fn summaries_epoch(&self) -> i64 {
        self.built_epoch
    }

    /// The view's tokens, synthetic results and the omission line included.
    pub(super) fn tokens(&self) -> u64 {
        self.tokens
            + self.dangling.len() as u64 * u64::from(SYNTHETIC_RESULT_TOKENS)
            + self.omission_tokens()
    }

    /// Index of the first item no fit may drop: the start of the active task, or, in a history
    /// without requests, the newest item that is not a tool result (so a call keeps its
    /// results). The view's length when it is empty.
    fn floor(&mut self) -> usize {
        let items = &*self.items.make_contiguous();
        active_task_start(items).unwrap_or_else(|| {
            items
                .iter()
                .rposition(|i| i.role != Role::ToolResult)
                .unwrap_or(0)
        })
    }

    /// Whether the view may lack part of the active task: the newest turn is unfinished, no
    /// earlier request is in the view, and older items were left out (a view fitted before the
    /// turn's tool loop began). The caller rebuilds it from the store.
    fn may_lack_active_task(&self) -> bool {
        let requests = self.items.iter().filter(|i| i.is_request()).count();
        let unfinished = !self.items.back().is_some_and(TurnItem::is_answer);
        unfinished && requests <= 1 && self.omitted() > 0
    }

    /// Drops the oldest items until the view, synthetic results included, fits `budget`
    /// (see [`oldest_to_drop`]), never the active task ([`View::floor`]); when the active task
    /// alone is over the budget, its big tool outputs become excerpts ([`View::squeeze`]).
    fn fit(&mut self, budget: u32) {
        self.budget = budget;
        if self.pressure.take().is_some_and(|p| p.excerpts > 0) {
            self.unsqueeze();
        }
        loop {
            let dangling = self.compute_dangling();
            let synthetic = dangling.len() as u64 * u64::from(SYNTHETIC_RESULT_TOKENS);
            // Once anything is left out, the line that says so needs room too.
            let over = self.tokens + synthetic > u64::from(budget);
            let line = if (over || self.omitted() > 0) && budget >= OMISSION_LINE_TOKENS {
                u64::from(OMISSION_LINE_TOKENS)
            } else {
                0
            };
            let room = u64::from(budget).saturating_sub(synthetic + line);
            let room = u32::try_from(room).unwrap_or(u32::MAX);
            let drop = oldest_to_drop(
                self.items.iter().map(|i| (i.role, i.tokens)),
                self.tokens,
                room,
            )
            .min(self.floor());
            if drop == 0 {
                self.dangling = dangling;
                if self.tokens() > u64::from(budget) {
                    self.squeeze(budget);
                }
                break;
            }
            for item in self.items.drain(..drop) {
                self.tokens -= u64::from(item.tokens);
                self.represented -= item.represents;
            }
        }
    }

    /// The active task is over `budget` once everything older left: its tool outputs above
    /// one common cap become excerpts, the largest first ([`squeeze`]). Records the pressure.
    fn squeeze(&mut self, budget: u32) {
        let floor = self.floor();
        let active_tokens: u64 = self
            .items
            .iter()
            .skip(floor)
            .map(|i| u64::from(i.tokens))
            .sum();
        let over = self.tokens().saturating_sub(u64::from(budget));
        let cuttable: Vec<squeeze::Cuttable> = self
            .items
            .iter()
            .enumerate()
            .skip(floor)
            .filter(|(_, i)| {
                i.stub.is_none()
                    && i.message_id.is_some()
                    && matches!(i.role, Role::ToolResult | Role::BashExecution)
            })
            .map(|(index, i)| squeeze::Cuttable {
                index,
                tokens: i.tokens,
            })
            .collect();
        let mut excerpts = 0;
        if let Some(cap) = squeeze::cap_for(&cuttable, over) {
            for c in cuttable.iter().filter(|c| c.tokens > cap) {
                let item = &self.items[c.index];
                let call = item.links.answers.as_deref().and_then(|id| {
                    self.items
                        .iter()
                        .take(c.index)
                        .rev()
                        .find(|i| i.links.calls.iter().any(|(call, _)| call == id))
                        .and_then(|i| squeeze::call_in(&i.json, id))
                });
                let Some(id) = item.message_id else { continue };
                let Some((json, tokens, variant)) =
                    squeeze::excerpt(id, item.role, &item.json, item.tokens, call.as_ref(), cap)
                else {
                    continue;
                };
                let item = &mut self.items[c.index];
                self.tokens = self.tokens - u64::from(item.tokens) + u64::from(tokens);
                let stored = std::mem::replace(&mut item.json, json);
                item.unsqueezed = Some(Box::new((stored, item.tokens, item.key)));
                item.tokens = tokens;
                item.stub = Some(variant);
                item.key = message_key(id, Some(variant));
                excerpts += 1;
            }
        }
        self.pressure = Some(Pressure {
            budget,
            active_tokens,
            excerpts,
            view_tokens: self.tokens(),
        });
    }

    /// Puts the stored form back into every view-time excerpt.
    fn unsqueeze(&mut self) {
        for item in self.items.iter_mut() {
            if let Some(original) = item.unsqueezed.take() {
                let (json, tokens, key) = *original;
                self.tokens = self.tokens - u64::from(item.tokens) + u64::from(tokens);
                item.json = json;
                item.tokens = tokens;
                item.key = key;
                item.stub = None;
            }
        }
    }

    /// Set when the active task alone was over the budget at the last fit.
    pub(super) fn pressure(&self) -> Option<Pressure> {
        self.pressure
    }

    fn push(&mut self, item: ContextItem) {
        let item = ViewItem::from_item(item);
        self.tokens += u64::from(item.tokens);
        self.represented += item.represents;
        self.items.push_back(item);
    }

    fn push_front(&mut self, item: ContextItem) {
        let item = ViewItem::from_item(item);
        self.tokens += u64::from(item.tokens);
        self.represented += item.represents;
        self.items.push_front(item);
    }

    /// Follows a compaction that replaced the context items `first..=last` by `summary` (at
    /// ordinal `first`). The view is a contiguous run of the newest items up to
    /// `through_ordinal`, so the range either overlaps it (its items leave and the summary takes
    /// their place), lies wholly after it (the summary arrives with the next appended items), or
    /// wholly before it (only the room changes). False when none of these holds (an empty view
    /// with the range around its end): the caller rebuilds it.
    fn replace(&mut self, first: i64, last: i64, summary: ContextItem) -> bool {
        let start = self.items.partition_point(|i| i.ordinal < first);
        let end = self.items.partition_point(|i| i.ordinal <= last);
        if start < end {
            for item in self.items.drain(start..end) {
                self.tokens -= u64::from(item.tokens);
                self.represented -= item.represents;
            }
            let item = ViewItem::from_item(summary);
            self.tokens += u64::from(item.tokens);
            self.represented += item.represents;
            self.items.insert(start, item);
        } else if first <= self.through_ordinal
            && self
                .items
                .front()
                .is_none_or(|oldest| last >= oldest.ordinal)
        {
            return false;
        }
        self.epoch += 1;
        true
    }

    /// Follows a batch of stubs: each restubbed item still in the view takes its new form in
    /// place (its ordinal, so its place, is unchanged).
    fn restub(&mut self, items: Vec<ContextItem>) {
        for item in items {
            let at = self.items.partition_point(|i| i.ordinal < item.ordinal);
            if self
                .items
                .get(at)
                .is_some_and(|i| i.ordinal == item.ordinal)
            {
                let new = ViewItem::from_item(item);
                if let Some(old) = self.items.get_mut(at) {
                    self.tokens = self.tokens - u64::from(old.tokens) + u64::from(new.tokens);
                    self.represented += new.represents - old.represents;
                    *old = new;
                }
            }
        }
        self.epoch += 1;
    }

    /// Fills the room a compaction freed with the next older items, reading backwards from the
    /// oldest item until they pass the budget, as [`rebuild`] reads from the newest; then fits.
    fn backfill(&mut self, sql: &mut impl Sql, conversation_id: i64) -> Result<()> {
        let budget = u64::from(self.budget);
        let mut used = self.tokens;
        let mut before = self
            .items
            .front()
            .map_or(self.through_ordinal + 1, |i| i.ordinal);
        let mut page = BACKFILL_PAGE;
        while used <= budget {
            let items = context::newest_before(sql, conversation_id, before, page)?;
            let full_page = items.len() as i64 == page;
            for item in items {
                before = item.ordinal;
                used += u64::from(item.tokens);
                self.push_front(item);
                if used > budget {
                    break;
                }
            }
            if !full_page {
                break;
            }
            page = PAGE;
        }
        self.fit(self.budget);
        Ok(())
    }
}
