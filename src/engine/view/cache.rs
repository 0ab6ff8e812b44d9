//! The views of the conversations a process serves, by conversation id: kept between calls,
//! brought up to date with what was appended, changed in place by a compaction, and rebuilt from
//! the store when their context changed otherwise (see the parent module).

use std::collections::HashMap;

use super::{rebuild, Pressure, View, MAX_CACHED, STALE_EPOCH};
use crate::error::{Result, StorageErrorKind};
use crate::store::context::{self, ContextItem, Newer};
use crate::store::conversations::Conversation;
use crate::store::Sql;

/// Views by conversation id.
#[derive(Debug, Default)]
pub(in crate::engine) struct ViewCache {
    views: HashMap<i64, View>,
    /// The conversation each session key's latest view was of (so `assemble` can ask for what
    /// was appended to it in the same statement that finds the key's conversation).
    by_key: HashMap<String, i64>,
    /// Conversations whose active task was once over the budget (logged once each).
    pressed: std::collections::HashSet<i64>,
}

impl ViewCache {
    /// For a session key whose conversation has a cached view: that conversation's id and the
    /// ordinal its view is current through.
    pub(in crate::engine) fn known(&self, session_key: &str) -> Option<(i64, i64)> {
        let id = *self.by_key.get(session_key)?;
        self.views.get(&id).map(|v| (id, v.through_ordinal))
    }

    /// True the first time in this process that the conversation's view had its active task over
    /// the budget (the caller logs it once).
    pub(in crate::engine) fn first_pressure(&mut self, conversation_id: i64) -> bool {
        self.pressed.insert(conversation_id)
    }

    /// Whether the conversation's latest view had any item (None: no view in this process).
    pub(in crate::engine) fn last_view_nonempty(&self, conversation_id: i64) -> Option<bool> {
        self.views
            .get(&conversation_id)
            .map(|v| !v.items.is_empty())
    }

    /// When the conversation's latest view could not hold its active task within the budget.
    pub(in crate::engine) fn pressure(&self, conversation_id: i64) -> Option<Pressure> {
        self.views.get(&conversation_id).and_then(|v| v.pressure)
    }

    /// The tokens of the conversation's latest view (None: no view in this process).
    pub(in crate::engine) fn tokens(&self, conversation_id: i64) -> Option<u64> {
        self.views.get(&conversation_id).map(View::tokens)
    }

    /// The budget of the conversation's latest view: the tightest budget the host gave in the
    /// current turn, which accounts for its system prompt.
    pub(in crate::engine) fn budget(&self, conversation_id: i64) -> Option<u32> {
        self.views.get(&conversation_id).map(|v| v.budget)
    }

    /// Follows a committed compaction of `conversation_id` that replaced its context items
    /// `first_ordinal..=last_ordinal` by `summary` and moved the context epoch on by one: the
    /// cached view changes in place and takes in older items for the room it gained, so the next
    /// `assemble` need not rebuild it. A view that cannot follow is rebuilt on its next use.
    pub(in crate::engine) fn replaced(
        &mut self,
        sql: &mut impl Sql,
        conversation_id: i64,
        first_ordinal: i64,
        last_ordinal: i64,
        summary: ContextItem,
    ) {
        let Some(view) = self.views.get_mut(&conversation_id) else {
            return;
        };
        let followed = view.replace(first_ordinal, last_ordinal, summary)
            && view.backfill(sql, conversation_id).is_ok();
        if !followed {
            view.epoch = STALE_EPOCH;
        }
    }

    /// Follows a committed batch of stubs of `conversation_id` that moved its context epoch on
    /// from `epoch_before` by one: the cached view, when it was current, changes in place and
    /// takes in older items for the room it gained, so the next `assemble` need not rebuild it.
    pub(in crate::engine) fn restubbed(
        &mut self,
        sql: &mut impl Sql,
        conversation_id: i64,
        epoch_before: i64,
        items: Vec<ContextItem>,
    ) {
        let Some(view) = self.views.get_mut(&conversation_id) else {
            return;
        };
        if view.epoch != epoch_before {
            view.epoch = STALE_EPOCH;
            return;
        }
        view.restub(items);
        // Stubs only shrink items and keep their tool links: a view that leaves nothing out has
        // no older item to take in and still fits.
        if view.omitted() > 0 && view.backfill(sql, conversation_id).is_err() {
            view.epoch = STALE_EPOCH;
        }
    }

    /// The conversation's view under `budget`, updated from the store as little as possible.
    pub(in crate::engine) fn view(
        &mut self,
        sql: &mut impl Sql,
        conversation: &Conversation,
        budget: u32,
    ) -> Result<&View> {
        self.view_with(sql, conversation, budget, None)
    }

    /// [`ViewCache::view`], taking the items appended since the cached view from `newer` when
    /// they were read for this conversation after the view's last ordinal, in the same statement
    /// as `conversation` (see `context::active_with_newer`); else reading them.
    pub(in crate::engine) fn view_with(
        &mut self,
        sql: &mut impl Sql,
        conversation: &Conversation,
        budget: u32,
        newer: Option<Newer>,
    ) -> Result<&View> {
        // A view squeezed into a smaller budget is rebuilt whole when the budget grows.
        let reusable = self.views.get(&conversation.id).is_some_and(|v| {
            v.epoch == conversation.context_epoch
                && (budget <= v.budget || v.through_ordinal == conversation.next_ordinal)
                && (budget <= v.budget || v.pressure.is_none_or(|p| p.excerpts == 0))
        });
        if !reusable {
            let view = rebuild(sql, conversation, budget)?;
            if self.views.len() >= MAX_CACHED {
                self.views.clear();
                self.by_key.clear();
            }
            self.views.insert(conversation.id, view);
        }
        if self.by_key.get(&conversation.session_key) != Some(&conversation.id) {
            if self.by_key.len() >= MAX_CACHED {
                self.by_key.clear();
            }
            self.by_key
                .insert(conversation.session_key.clone(), conversation.id);
        }
        let Some(view) = self.views.get_mut(&conversation.id) else {
            return Err(crate::error::Error::storage(
                StorageErrorKind::Other,
                "view cache lost a view",
            ));
        };
        view.message_count = conversation.message_count;
        if reusable {
            let appended = view.through_ordinal != conversation.next_ordinal;
            if appended {
                let items = match newer {
                    Some(n)
                        if n.conversation_id == conversation.id
                            && n.after == view.through_ordinal =>
                    {
                        n.items
                    }
                    _ => context::newer_than(sql, conversation.id, view.through_ordinal)?,
                };
                for item in items {
                    view.push(item);
                }
                view.through_ordinal = conversation.next_ordinal;
                if view.may_lack_active_task() {
                    *view = rebuild(sql, conversation, budget)?;
                    return Ok(view);
                }
            }
            if budget <= view.budget || view.tokens > u64::from(budget) {
                view.fit(budget);
            } else if appended {
                view.refresh();
            }
        }
        Ok(view)
    }
}
