//! `lcm_expand`: one page of a summary's children (or of every original message below it), or
//! of one message's text, under a token limit this module enforces whatever the caller asks;
//! an item too large for an empty page is cut, so every page makes progress.

use serde::Serialize;
use serde_json::Value;

use super::{char_slice, RecallTarget, Target};
use crate::core::tokens::estimate_text;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::store::recall::{self, MessageRow, SummaryRow};
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

impl ExpandItem {
    /// An item that shows `content` whole.
    fn whole(kind: &'static str, id: i64, role: String, content: String) -> ExpandItem {
        ExpandItem {
            kind,
            id,
            role,
            seq: None,
            depth: None,
            level: None,
            tokens: estimate_text(&content),
            content,
            truncated: false,
            continue_at: None,
        }
    }
}

fn summary_item(s: SummaryRow) -> ExpandItem {
    ExpandItem {
        depth: Some(s.depth),
        level: Some(s.level),
        ..ExpandItem::whole("summary", s.id, "summary".into(), s.content)
    }
}

fn message_item(m: MessageRow) -> ExpandItem {
    ExpandItem {
        seq: Some(m.seq),
        ..ExpandItem::whole("message", m.id, m.role, m.content)
    }
}

/// A page being filled: its items, their estimated tokens with framing, and its limit.
struct Page {
    items: Vec<ExpandItem>,
    used: u32,
    max_tokens: u32,
}

impl Page {
    /// Adds items until the next one would pass the limit. An item that alone does not fit an
    /// empty page is cut to fit, so every page makes progress. Returns how many were consumed,
    /// and whether the page is full.
    fn fill(&mut self, candidates: Vec<ExpandItem>) -> (usize, bool) {
        let mut consumed = 0;
        for mut item in candidates {
            let cost = item.tokens.saturating_add(ITEM_OVERHEAD_TOKENS);
            if self.used.saturating_add(cost) <= self.max_tokens {
                self.used += cost;
            } else if self.items.is_empty() {
                let budget = self.max_tokens.saturating_sub(ITEM_OVERHEAD_TOKENS);
                let keep = fitting_chars(&item.content, budget);
                item.content = char_slice(&item.content, 0, keep);
                item.tokens = estimate_text(&item.content);
                item.truncated = true;
                item.continue_at = Some(keep);
                self.used += item.tokens + ITEM_OVERHEAD_TOKENS;
            } else {
                return (consumed, true);
            }
            self.items.push(item);
            consumed += 1;
        }
        (consumed, false)
    }

    /// Fills the page with a message's text from character `cursor` on, as one item. Returns
    /// the listing's name ("content"), the message's length in characters, and where the next
    /// page starts.
    fn message_text(&mut self, m: &MessageRow, cursor: i64) -> (&'static str, i64, Option<String>) {
        let total = m.content.chars().count();
        let from = usize::try_from(cursor).unwrap_or(usize::MAX).min(total);
        let rest = char_slice(&m.content, from, total - from);
        let keep = fitting_chars(&rest, self.max_tokens.saturating_sub(ITEM_OVERHEAD_TOKENS));
        let end = from + keep;
        let mut item = message_item(MessageRow {
            content: char_slice(&rest, 0, keep),
            ..m.clone()
        });
        item.truncated = end < total;
        item.continue_at = item.truncated.then_some(end);
        self.used = item.tokens + ITEM_OVERHEAD_TOKENS;
        self.items.push(item);
        let next_cursor = (end < total).then(|| end.to_string());
        ("content", total as i64, next_cursor)
    }

    /// Fills the page with a summary's listing from position `cursor` on: its child summaries,
    /// then the messages it covers directly; or, `flatten`, every original message below it.
    /// Returns the listing's name, how many items it holds, and where the next page starts.
    fn summary_listing(
        &mut self,
        sql: &mut impl Sql,
        summary_id: i64,
        flatten: bool,
        cursor: i64,
    ) -> Result<(&'static str, i64, Option<String>)> {
        let children = if flatten {
            Vec::new()
        } else {
            recall::child_summaries(sql, summary_id)?
        };
        let (listing, total) = if flatten {
            ("messages", recall::coverage(sql, summary_id)?.messages)
        } else {
            (
                "children",
                children.len() as i64 + recall::direct_message_count(sql, summary_id)?,
            )
        };
        let mut position = cursor;
        if !flatten {
            let skip = usize::try_from(cursor).unwrap_or(usize::MAX);
            let summaries: Vec<ExpandItem> =
                children.into_iter().skip(skip).map(summary_item).collect();
            let offered = summaries.len();
            let (consumed, full) = self.fill(summaries);
            position += consumed as i64;
            if full || consumed < offered {
                return Ok((listing, total, Some(position.to_string())));
            }
        }
        let summary_children = total - recall::direct_message_count(sql, summary_id)?;
        loop {
            let offset = if flatten {
                position
            } else {
                position - summary_children
            };
            let rows = if flatten {
                recall::covered_messages(sql, summary_id, offset, PAGE_ROWS)?
            } else {
                recall::direct_messages(sql, summary_id, offset, PAGE_ROWS)?
            };
            if rows.is_empty() {
                break;
            }
            let fetched = rows.len();
            let (consumed, full) = self.fill(rows.into_iter().map(message_item).collect());
            position += consumed as i64;
            if full || consumed < fetched {
                break;
            }
        }
        Ok((
            listing,
            total,
            (position < total).then(|| position.to_string()),
        ))
    }
}

impl<S: Sql> Engine<S> {
    /// One page of a summary's children (or of every original message below it), or of one
    /// message's text, within the page's token limit.
    pub fn recall_expand(&mut self, params: RecallTarget) -> Result<Expansion> {
        let target = self.recall_target(&params)?;
        let cursor = parse_cursor(params.cursor.as_ref())?;
        let max_tokens = params
            .max_tokens
            .unwrap_or(EXPAND_DEFAULT_TOKENS)
            .clamp(EXPAND_MIN_TOKENS, EXPAND_MAX_TOKENS);
        let mut page = Page {
            items: Vec::new(),
            used: 0,
            max_tokens,
        };
        let (kind, id, conversation_id, (listing, total, next_cursor)) = match target {
            Target::Message(m) => (
                "message",
                m.id,
                m.conversation_id,
                page.message_text(&m, cursor),
            ),
            Target::Summary(s) => {
                let flatten = params.all_messages.unwrap_or(false);
                let listing = page.summary_listing(self.store.sql(), s.id, flatten, cursor)?;
                ("summary", s.id, s.conversation_id, listing)
            }
        };
        Ok(Expansion {
            target: kind,
            id,
            conversation_id,
            listing,
            total,
            items: page.items,
            tokens: page.used,
            max_tokens,
            next_cursor,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn fitting_chars_respects_the_budget_and_char_boundaries() {
        let text = "静默".repeat(100);
        let n = fitting_chars(&text, 10);
        assert!(n > 0 && estimate_text(&char_slice(&text, 0, n)) <= 10);
        assert!(estimate_text(&char_slice(&text, 0, n + 1)) > 10);
        assert_eq!(fitting_chars("", 10), 0);
    }
}
