//! Which items of the newest part of a context may be stubbed, which must become excerpts now,
//! and what a batch would save and re-write. Pure selection over `(ordinal, role, tokens, stub
//! state)` rows the engine read, oldest first.
//!
//! Rules:
//! - A **turn** is a user message and everything after it up to the next user message (a run of
//!   user messages opens one turn together; the rule is [`crate::core::turns`]'s).
//! - **Never stub the current turn or the turn before it.** Stubbing is decided after a turn is
//!   stored, for the views of the turns to come: the newest stored turn is the one before the
//!   next current turn, so it is protected. A turn is finished when it ends with the assistant's
//!   answer (an assistant message that calls no tool); a newest turn that does not (a host that
//!   stores the user's message before the model call, or a tool loop still running) is the
//!   current turn, and the one before it is protected too. Without a user message among the
//!   rows, everything is protected.
//! - Before the protected turns, tool outputs (`toolResult`, `bashExecution`) of at least
//!   `min_tokens`, and earlier excerpts of tool outputs, are **candidates** for a line stub.
//! - A message of any role, anywhere (the protected turns included), larger than `huge_tokens`
//!   (the fresh tail's share of the budget) is **huge**: it crowds the fresh tail out, so it
//!   becomes an excerpt at once, whatever the cache (an old tool output becomes a line stub
//!   instead, with the candidates). One exception: the user message of an unfinished newest
//!   turn is the request the model is answering (hosts that store it before the model call),
//!   and it is cut only when it does not fit the whole view (`request_tokens`). And inside the
//!   protected turns, a user's request or an assistant's text is cut only when it is larger than
//!   `text_tokens` (at least a quarter of the window): the active task keeps its words whole,
//!   its tool outputs are what shrinks (the view cuts them further when it must).
//! - A batch **re-writes** every token from its first changed item to the end of what the
//!   previous view held: the provider's cached prefix ends at the first change. Items the turn
//!   just appended are not counted: they are new to the cache whatever happens.

use serde::Serialize;

use super::scan_item::ScanItem;
use super::workset::{standings, Standing, WorkingSetCounts, WorkingSetRules};
use crate::core::message::Role;
use crate::core::turns::{active_task_start, is_answer, TurnItem};

/// The sizes selection works with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanRules {
    /// Smaller tool outputs stay whole: a stub would hardly be shorter.
    pub min_tokens: u32,
    /// Larger messages are huge.
    pub huge_tokens: u32,
    /// Larger requests still being answered are huge (the view budget).
    pub request_tokens: u32,
    /// Larger requests and assistant texts of the protected turns are huge.
    pub text_tokens: u32,
    /// An excerpt's size (head and tail together).
    pub excerpt_tokens: u32,
    /// What a line stub is assumed to cost before it is rendered.
    pub stub_tokens: u32,
}

/// What a candidate becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// A one-line stub.
    Line,
    /// An excerpt: head and tail of the message.
    Excerpt,
}

/// An item to change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Candidate {
    /// The item's position in the active context (`context_items.ordinal`).
    pub ordinal: i64,
    /// The stored message (row id in `messages`).
    pub message_id: i64,
    /// The message's role.
    pub role: Role,
    /// Its tokens in the view now.
    pub tokens: u32,
    /// What it becomes.
    pub change: Change,
}

/// What a batch over the scanned rows would do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// The first protected ordinal; None when every row is protected (no user message among them).
    pub protected_from: Option<i64>,
    /// Old tool outputs to stub, oldest first.
    pub candidates: Vec<Candidate>,
    /// Huge messages to excerpt now, oldest first.
    pub huge: Vec<Candidate>,
    /// Old tool outputs below `min_tokens`: stubbed only when a newer copy repeats them exactly.
    pub small: Vec<Candidate>,
    /// Estimated tokens the candidates' stubs save.
    pub saved: u64,
    /// Estimated tokens the huge messages' excerpts save.
    pub huge_saved: u64,
    /// Estimated tokens from the first candidate up to the items appended this turn, after the batch.
    pub rewritten: u64,
    /// The oldest working-set output kept whole, whose ordinal the next turns must scan again.
    pub kept_from: Option<i64>,
    /// What the working set kept and stubbed.
    pub working_set: WorkingSetCounts,
}

fn is_tool_output(role: Role) -> bool {
    matches!(role, Role::ToolResult | Role::BashExecution)
}

fn user_positions(items: &[ScanItem]) -> Vec<usize> {
    items
        .iter()
        .enumerate()
        .filter(|(_, i)| i.message_id.is_some() && i.role == Some(Role::User))
        .map(|(n, _)| n)
        .collect()
}

/// Whether the newest turn ends with the assistant's answer.
fn newest_turn_finished(items: &[ScanItem]) -> bool {
    items
        .last()
        .is_some_and(|last| last.role == Some(Role::Assistant) && !last.calls_tools)
}

impl TurnItem for ScanItem {
    fn is_request(&self) -> bool {
        self.message_id.is_some() && self.role == Some(Role::User)
    }

    fn is_answer(&self) -> bool {
        self.role
            .is_some_and(|role| is_answer(role, self.calls_tools))
    }
}

/// The first ordinal of the protected turns: the active task ([`crate::core::turns`]), or None
/// when every row is protected (no request among them).
pub fn protected_from(items: &[ScanItem]) -> Option<i64> {
    active_task_start(items).map(|start| items[start].ordinal)
}

/// The ordinal of the request the model is still answering, if any.
fn open_request(items: &[ScanItem]) -> Option<i64> {
    (!newest_turn_finished(items))
        .then(|| user_positions(items).last().map(|n| items[*n].ordinal))
        .flatten()
}

/// Plans a batch over `items` (oldest first, ending with the context's newest item); the items
/// from ordinal `new_from` on were appended by the turn just stored. No working set: every old
/// tool output is a candidate (see [`plan_with`]).
pub fn plan(items: &[ScanItem], rules: &PlanRules, new_from: i64) -> Plan {
    plan_with(items, rules, new_from, &WorkingSetRules::none())
}

/// [`plan`], keeping the working set ([`super::workset`]) whole while there is room.
pub fn plan_with(
    items: &[ScanItem],
    rules: &PlanRules,
    new_from: i64,
    working_set: &WorkingSetRules<'_>,
) -> Plan {
    let mut out = Plan {
        protected_from: protected_from(items),
        ..Plan::default()
    };
    let protected = out.protected_from.unwrap_or(i64::MIN);
    let request = open_request(items);
    let standing = standings(items, working_set, protected);
    // Working-set outputs kept so far: (last touch, ordinal, index in `after`, candidate).
    let mut working: Vec<(usize, i64, usize, Candidate)> = Vec::new();
    let mut after: Vec<(i64, u32)> = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let (Some(message_id), Some(role)) = (item.message_id, item.role) else {
            after.push((item.ordinal, item.tokens));
            continue;
        };
        let candidate = |change| Candidate {
            ordinal: item.ordinal,
            message_id,
            role,
            tokens: item.tokens,
            change,
        };
        let old_output = item.ordinal < protected && is_tool_output(role);
        let excerpted = item.stub.is_some_and(|v| v >= 2);
        let new_tokens = if old_output && item.stub.is_none() && item.tokens < rules.min_tokens {
            out.small.push(candidate(Change::Line));
            item.tokens
        } else if old_output && (item.stub.is_none() || excerpted) {
            match standing.get(&index) {
                Some(Standing::Working { last_touch }) => {
                    working.push((
                        *last_touch,
                        item.ordinal,
                        after.len(),
                        candidate(Change::Line),
                    ));
                    item.tokens
                }
                other => {
                    if other == Some(&Standing::Superseded) {
                        out.working_set.superseded += 1;
                    }
                    out.candidates.push(candidate(Change::Line));
                    out.saved += u64::from(item.tokens.saturating_sub(rules.stub_tokens));
                    rules.stub_tokens.min(item.tokens)
                }
            }
        } else if item.stub.is_none()
            && item.tokens
                > if item.ordinal >= protected && !is_tool_output(role) {
                    rules.text_tokens.max(rules.huge_tokens)
                } else if request == Some(item.ordinal) {
                    rules.request_tokens.max(rules.huge_tokens)
                } else {
                    rules.huge_tokens
                }
        {
            let excerpt = rules.excerpt_tokens.saturating_add(rules.stub_tokens);
            out.huge.push(candidate(Change::Excerpt));
            out.huge_saved += u64::from(item.tokens.saturating_sub(excerpt));
            excerpt.min(item.tokens)
        } else {
            item.tokens
        };
        after.push((item.ordinal, new_tokens));
    }
    // Room: above the keep line, the working set goes too, the file touched longest ago first,
    // down to the low line.
    let mut context = working_set
        .context_tokens
        .saturating_sub(out.huge_saved)
        .saturating_sub(out.saved);
    working.sort_by_key(|(touch, ordinal, _, _)| (*touch, *ordinal));
    let over = working_set.keep_line.is_some_and(|line| context > line);
    for (_, _, at, c) in working {
        if over && context > working_set.low_line {
            let saved = u64::from(c.tokens.saturating_sub(rules.stub_tokens));
            out.saved += saved;
            context = context.saturating_sub(saved);
            after[at].1 = rules.stub_tokens.min(c.tokens);
            out.candidates.push(c);
            out.working_set.stubbed += 1;
        } else {
            out.working_set.kept += 1;
            out.working_set.kept_tokens += u64::from(c.tokens);
            out.kept_from = Some(out.kept_from.map_or(c.ordinal, |k: i64| k.min(c.ordinal)));
        }
    }
    out.candidates.sort_by_key(|c| c.ordinal);
    if let Some(first) = out.candidates.first().map(|c| c.ordinal) {
        out.rewritten = after
            .iter()
            .filter(|(o, _)| *o >= first && *o < new_from)
            .map(|(_, t)| u64::from(*t))
            .sum();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULES: PlanRules = PlanRules {
        min_tokens: 200,
        huge_tokens: 20_000,
        request_tokens: 50_000,
        text_tokens: 50_000,
        excerpt_tokens: 4_096,
        stub_tokens: 60,
    };

    /// Items from a compact description: `u` user, `a` assistant, `c` assistant calling tools,
    /// `r` tool result, each with its tokens.
    fn items(spec: &[(char, u32)]) -> Vec<ScanItem> {
        spec.iter()
            .enumerate()
            .map(|(i, (kind, tokens))| {
                let role = match kind {
                    'u' => Role::User,
                    'r' => Role::ToolResult,
                    _ => Role::Assistant,
                };
                ScanItem {
                    ordinal: i as i64 + 1,
                    message_id: Some(100 + i as i64),
                    role: Some(role),
                    tokens: *tokens,
                    stub: None,
                    calls_tools: *kind == 'c',
                }
            })
            .collect()
    }

    /// A finished turn with one tool call, as [`items`] reads it: a 50-token request, a 30-token
    /// call, a `result`-token output and an `answer`-token reply.
    fn tool_turn(result: u32, answer: u32) -> [(char, u32); 4] {
        [('u', 50), ('c', 30), ('r', result), ('a', answer)]
    }

    #[test]
    fn the_newest_finished_turn_is_protected_and_older_tool_outputs_are_candidates() {
        let rows = items(&[tool_turn(3_000, 80), tool_turn(5_000, 90)].concat());
        let p = plan(&rows, &RULES, i64::MAX);
        assert_eq!(
            p.protected_from,
            Some(5),
            "the newest turn starts at its user message"
        );
        assert_eq!(
            p.candidates.iter().map(|c| c.ordinal).collect::<Vec<_>>(),
            vec![3]
        );
        assert_eq!(p.saved, 3_000 - 60);
        assert_eq!(
            p.rewritten,
            60 + 80 + 50 + 30 + 5_000 + 90,
            "from the stub to the end"
        );
        assert_eq!(
            plan(&rows, &RULES, 5).rewritten,
            60 + 80,
            "the turn just appended is new to the cache anyway"
        );
        assert!(p.huge.is_empty() && p.small.is_empty());
    }

    #[test]
    fn an_unfinished_newest_turn_protects_the_turn_before_it_too() {
        let rows = items(
            &[
                &tool_turn(3_000, 80)[..],
                &tool_turn(5_000, 90),
                &[('u', 40), ('c', 30), ('r', 900)],
            ]
            .concat(),
        );
        let p = plan(&rows, &RULES, i64::MAX);
        assert_eq!(p.protected_from, Some(5));
        assert_eq!(p.candidates.len(), 1);
        let mut calling = items(&[
            ('u', 50),
            ('r', 3_000),
            ('u', 50),
            ('r', 3_000),
            ('u', 50),
            ('c', 30),
        ]);
        assert_eq!(
            protected_from(&calling),
            Some(3),
            "a trailing tool call is an unfinished turn"
        );
        let asked = items(
            &[
                &tool_turn(3_000, 80)[..],
                &tool_turn(3_000, 80),
                &[('u', 60)],
            ]
            .concat(),
        );
        assert_eq!(
            protected_from(&asked),
            Some(5),
            "a user message the model has not answered yet is the current turn"
        );
        calling.truncate(2);
        assert_eq!(
            plan(&calling, &RULES, i64::MAX).candidates,
            vec![],
            "the only turn ends with a result: all protected"
        );
    }

    #[test]
    fn without_a_user_message_everything_is_protected() {
        let rows = items(&[('c', 30), ('r', 3_000), ('a', 80)]);
        let p = plan(&rows, &RULES, i64::MAX);
        assert_eq!(p.protected_from, None);
        assert!(p.candidates.is_empty());
        assert_eq!(p.saved, 0);
        assert_eq!(p.rewritten, 0);
    }

    #[test]
    fn small_outputs_stay_whole_unless_repeated_and_stubs_are_not_stubbed_again() {
        let mut rows = items(&[
            ('u', 50),
            ('c', 30),
            ('r', 150),
            ('c', 30),
            ('r', 3_000),
            ('c', 30),
            ('r', 60),
            ('u', 50),
            ('a', 10),
        ]);
        rows[6].stub = Some(1);
        let p = plan(&rows, &RULES, i64::MAX);
        assert_eq!(
            p.small.iter().map(|c| c.ordinal).collect::<Vec<_>>(),
            vec![3]
        );
        assert_eq!(
            p.candidates.iter().map(|c| c.ordinal).collect::<Vec<_>>(),
            vec![5],
            "ordinal 7 is stubbed already"
        );
    }

    #[test]
    fn a_huge_message_is_excerpted_even_in_the_newest_turn_and_an_old_one_becomes_a_line() {
        let mut rows = items(&[
            ('u', 50),
            ('c', 30),
            ('r', 45_000),
            ('a', 80),
            ('u', 60_000),
            ('c', 30),
            ('r', 45_000),
            ('a', 90),
        ]);
        let p = plan(&rows, &RULES, i64::MAX);
        assert_eq!(
            p.huge
                .iter()
                .map(|c| (c.ordinal, c.role))
                .collect::<Vec<_>>(),
            vec![(5, Role::User), (7, Role::ToolResult)]
        );
        assert!(p.huge.iter().all(|c| c.change == Change::Excerpt));
        assert_eq!(
            p.candidates
                .iter()
                .map(|c| (c.ordinal, c.change))
                .collect::<Vec<_>>(),
            vec![(3, Change::Line)]
        );
        assert_eq!(p.huge_saved, 60_000 - 4_156 + 45_000 - 4_156);
        // An excerpt of an old tool output is stubbed on; an excerpted user message stays.
        rows[2].stub = Some(6);
        rows[2].tokens = 4_150;
        rows[4].stub = Some(6);
        let p = plan(&rows, &RULES, i64::MAX);
        assert_eq!(
            p.candidates.iter().map(|c| c.ordinal).collect::<Vec<_>>(),
            vec![3]
        );
        assert_eq!(
            p.huge.iter().map(|c| c.ordinal).collect::<Vec<_>>(),
            vec![7]
        );
    }

    #[test]
    fn the_request_being_answered_is_cut_only_when_it_does_not_fit_the_view() {
        let rows = items(&[('u', 50), ('a', 80), ('u', 30_000)]);
        assert!(
            plan(&rows, &RULES, i64::MAX).huge.is_empty(),
            "30K of a 50K view: the model gets the whole request"
        );
        let rows = items(&[('u', 50), ('a', 80), ('u', 60_000)]);
        assert_eq!(
            plan(&rows, &RULES, i64::MAX).huge.len(),
            1,
            "larger than the view: an excerpt beats nothing"
        );
        let answered = items(&[('u', 50), ('a', 80), ('u', 30_000), ('a', 80)]);
        assert_eq!(
            plan(&answered, &RULES, i64::MAX).huge.len(),
            0,
            "once answered it is the previous turn's request: whole below text_tokens"
        );
        let older = items(&[
            ('u', 50),
            ('a', 80),
            ('u', 30_000),
            ('a', 80),
            ('u', 9),
            ('a', 9),
        ]);
        assert_eq!(
            plan(&older, &RULES, i64::MAX).huge.len(),
            1,
            "outside the protected turns, the tail's share decides"
        );
    }

    #[test]
    fn summaries_are_neither_candidates_nor_turn_starts() {
        let mut rows = items(&[('u', 50), ('r', 3_000), ('u', 50), ('a', 10)]);
        rows.insert(
            0,
            ScanItem {
                ordinal: 0,
                message_id: None,
                role: None,
                tokens: 900,
                stub: None,
                calls_tools: false,
            },
        );
        let p = plan(&rows, &RULES, i64::MAX);
        assert_eq!(p.protected_from, Some(3));
        assert_eq!(p.candidates.len(), 1);
        assert_eq!(p.rewritten, 60 + 50 + 10);
    }
}
