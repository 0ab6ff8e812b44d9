//! Rebuilding a view from the store: the newest items that fit the budget, read page by page from
//! the newest end, and at least the whole active task ([`crate::core::turns`]).

use std::collections::VecDeque;

use super::{View, MAX_FLOOR_ITEMS, PAGE};
use crate::core::assemble::tool_links;
use crate::core::message::Role;
use crate::core::turns::is_answer;
use crate::error::Result;
use crate::store::context::{self, ContextItem, ItemContent};
use crate::store::conversations::Conversation;
use crate::store::Sql;

/// Counts, newest first, the request runs that opened turns, to know when a rebuild has read the
/// whole active task ([`crate::core::turns`]): the newest turn when it is finished, else the
/// newest two.
#[derive(Debug, Default)]
struct FloorSearch {
    turns_needed: Option<usize>,
    turns_seen: usize,
    in_request_run: bool,
    beyond: usize,
}

impl FloorSearch {
    fn see(&mut self, item: &ContextItem) {
        let role = match &item.content {
            ItemContent::Message { role, .. } => Some(*role),
            ItemContent::Summary { .. } => None,
        };
        // Only the newest item says how many turns to read: whether it is an answer (the only
        // place its tool calls are parsed here).
        if self.turns_needed.is_none() {
            let answer = match &item.content {
                ItemContent::Message { role, raw_json, .. } => {
                    is_answer(*role, !tool_links(*role, raw_json).calls.is_empty())
                }
                ItemContent::Summary { .. } => false,
            };
            self.turns_needed = Some(if answer { 1 } else { 2 });
        }
        let request = role == Some(Role::User);
        if request {
            self.in_request_run = true;
        } else if self.in_request_run {
            self.in_request_run = false;
            self.turns_seen += 1;
        }
    }

    /// Whether the active task has been read (or reading on would cost too much).
    fn done(&self) -> bool {
        self.turns_needed.is_some_and(|n| self.turns_seen >= n) || self.beyond >= MAX_FLOOR_ITEMS
    }
}

/// Reads the newest items that fit `budget`, and at least the whole active task, page by page
/// from the newest end.
pub(super) fn rebuild(
    sql: &mut impl Sql,
    conversation: &Conversation,
    budget: u32,
) -> Result<View> {
    let mut newest_first = Vec::new();
    let mut before = conversation.next_ordinal + 1;
    let mut used: u64 = 0;
    let mut floor = FloorSearch::default();
    let enough = |used: u64, floor: &FloorSearch| used > u64::from(budget) && floor.done();
    loop {
        let page = context::newest_before(sql, conversation.id, before, PAGE)?;
        let full_page = page.len() as i64 == PAGE;
        for item in page {
            before = item.ordinal;
            used += u64::from(item.tokens);
            if used > u64::from(budget) {
                floor.beyond += 1;
            }
            floor.see(&item);
            newest_first.push(item);
            if enough(used, &floor) {
                break;
            }
        }
        if !full_page || enough(used, &floor) {
            break;
        }
    }
    let mut view = View {
        epoch: conversation.context_epoch,
        built_epoch: conversation.context_epoch,
        through_ordinal: conversation.next_ordinal,
        budget,
        items: VecDeque::new(),
        tokens: 0,
        represented: 0,
        message_count: conversation.message_count,
        dangling: Vec::new(),
        pressure: None,
    };
    for item in newest_first.into_iter().rev() {
        view.push(item);
    }
    view.fit(budget);
    Ok(view)
}
