//! What a pass summarizes. Given the active context items in order, pick
//!
//! - the **leaf chunk**: the oldest contiguous run of raw messages outside the fresh tail, up to
//!   `leafChunkTokens`, never separating an assistant's tool call from its results (a provider
//!   rejects a transcript where one survives without the other);
//! - the **condensation**: the oldest contiguous run of same-depth summaries that has reached
//!   the fanout or outgrown its token budget, to merge into one summary a level deeper.
//!
//! Selection only: this module neither reads the store nor renumbers anything. Plans carry
//! ordinals and ids so the engine can check, inside its transaction, that they still hold.

use std::collections::HashMap;

pub use super::chunk_size::{ChunkSize, MIN_PAYOFF_CHUNK_TOKENS, MIN_USEFUL_CHUNK_TOKENS};
use super::config::CompactionConfig;
use super::{CondensePlan, LeafPlan};
use crate::core::message::Role;
use crate::core::turns::{active_task_start, is_answer, opens_turn, TurnItem};

/// What a context item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemKind {
    /// A raw message.
    Message {
        /// Who wrote the message.
        role: Role,
    },
    /// A summary.
    Summary {
        /// How many levels of condensation it is above raw messages (a leaf summary is 0).
        depth: u32,
    },
}

/// One active context item, as selection needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextItem {
    /// The item's position in the conversation's active context (`context_items.ordinal`).
    pub ordinal: i64,
    /// The message id or summary id (which one, `kind` says).
    pub id: i64,
    /// Whether it is a message or a summary.
    pub kind: ItemKind,
    /// Tokens the item counts, as stored.
    pub tokens: u32,
    /// Tool-call ids this item issues (assistant messages).
    pub tool_calls: Vec<String>,
    /// The tool-call id this item answers (tool results).
    pub answers: Option<String>,
}

impl ContextItem {
    fn is_message(&self) -> bool {
        matches!(self.kind, ItemKind::Message { .. })
    }
}

impl TurnItem for ContextItem {
    fn is_request(&self) -> bool {
        self.kind == ItemKind::Message { role: Role::User }
    }

    fn is_answer(&self) -> bool {
        match self.kind {
            ItemKind::Message { role } => is_answer(role, !self.tool_calls.is_empty()),
            ItemKind::Summary { .. } => false,
        }
    }
}

/// Why no leaf chunk could be selected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoChunk {
    /// Every raw message is inside the fresh tail (or there are none).
    NothingOutsideTail,
    /// The oldest raw message's tool call is answered inside the fresh tail; it becomes
    /// compactable once the tail moves past the answer.
    PairReachesIntoTail,
    /// The raw messages outside the fresh tail are fewer tokens than a chunk that pays off.
    TooSmallToPayOff,
}

impl NoChunk {
    /// A short phrase for the log saying why no chunk was selected.
    pub fn sentence(self) -> &'static str {
        match self {
            NoChunk::NothingOutsideTail => "no raw messages outside the fresh tail",
            NoChunk::PairReachesIntoTail => "the oldest tool call is answered inside the fresh tail",
            NoChunk::TooSmallToPayOff => "the raw messages outside the fresh tail are too few tokens for a summary to save any",
        }
    }
}

/// Which newest raw messages are the fresh tail: at most `count` of them and at most
/// `max_tokens` tokens, but always the newest one (the tail yields to the budget, never to
/// nothing). Summaries between tail messages belong to the tail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TailRule {
    /// At most this many raw messages in the tail.
    pub count: u32,
    /// At most this many tokens of raw messages in the tail (the newest one always stays).
    pub max_tokens: u64,
}

impl TailRule {
    /// The fresh tail's tokens, from the token counts of the newest raw messages (oldest first;
    /// at least `count` of them when the context has that many): the rule [`fresh_tail_start`]
    /// applies, on counts alone. The per-turn trigger keeps these counts between turns.
    pub fn tokens_of(&self, newest: &[i64]) -> i64 {
        let cap = i64::try_from(self.max_tokens).unwrap_or(i64::MAX);
        let mut total = 0i64;
        for (i, t) in newest.iter().rev().take(self.count as usize).enumerate() {
            let t = (*t).max(0);
            if i > 0 && total.saturating_add(t) > cap {
                break;
            }
            total = total.saturating_add(t);
        }
        total
    }
}

impl From<u32> for TailRule {
    /// A tail of `count` messages, whatever their size.
    fn from(count: u32) -> Self {
        TailRule {
            count,
            max_tokens: u64::MAX,
        }
    }
}

/// Index of the first item of the fresh tail (see [`TailRule`]). The tail always holds the
/// active task whole ([`crate::core::turns`]: the current turn and the one before it), whatever
/// the rule's count and tokens; when the rule would start it inside an older turn, it starts at
/// the next turn's request instead (the rest of that older turn goes with its request), so no
/// pass summarizes a request while keeping what answers it. A tail never
/// starts with a tool result whose call lies before it (history without requests): the call
/// joins the tail, so no pass can separate them.
pub fn fresh_tail_start(items: &[ContextItem], tail: impl Into<TailRule>) -> usize {
    let by_rule = tail_start_by_rule(items, tail.into());
    let Some(active) = active_task_start(items) else {
        return by_rule;
    };
    if by_rule >= active {
        return active;
    }
    // Inside an older turn: on to the request that opens the next one.
    (by_rule..active)
        .find(|&i| opens_turn(items, i))
        .unwrap_or(active)
}

/// The fresh tail by count and tokens alone, widened over a tool pair it would split.
fn tail_start_by_rule(items: &[ContextItem], rule: TailRule) -> usize {
    let mut remaining = rule.count;
    let mut tokens = 0u64;
    let mut start = items.len();
    for (i, item) in items.iter().enumerate().rev() {
        if remaining == 0 {
            break;
        }
        if item.is_message() {
            let next = tokens + u64::from(item.tokens);
            if next > rule.max_tokens && start < items.len() {
                break;
            }
            tokens = next;
            remaining -= 1;
            start = i;
        }
    }
    if let Some(call) = items.get(start).and_then(|first| first.answers.as_deref()) {
        if let Some(caller) = items[..start]
            .iter()
            .rposition(|item| item.tool_calls.iter().any(|id| id == call))
        {
            start = caller;
        }
    }
    start
}

/// For each item from `base` on, the farthest index of a tool-call partner (the results of a
/// call, or the call of a result); `None` when it has none. Indices are absolute.
fn partner_reach(items: &[ContextItem], base: usize) -> Vec<Option<usize>> {
    let tail = items.get(base..).unwrap_or(&[]);
    let mut callers: HashMap<&str, usize> = HashMap::new();
    let mut answers: HashMap<&str, usize> = HashMap::new();
    for (offset, item) in tail.iter().enumerate() {
        for id in &item.tool_calls {
            callers.entry(id.as_str()).or_insert(base + offset);
        }
        if let Some(id) = &item.answers {
            answers.insert(id.as_str(), base + offset);
        }
    }
    tail.iter()
        .map(|item| {
            let from_calls = item
                .tool_calls
                .iter()
                .filter_map(|id| answers.get(id.as_str()).copied())
                .max();
            let from_answer = item
                .answers
                .as_deref()
                .and_then(|id| callers.get(id).copied());
            from_calls.max(from_answer)
        })
        .collect()
}

fn reach(reaches: &[Option<usize>], base: usize, index: usize) -> Option<usize> {
    reaches.get(index.checked_sub(base)?).copied().flatten()
}

/// The first index in `start..end` whose partner lies at or beyond `end`.
fn first_open_pair(
    reaches: &[Option<usize>],
    base: usize,
    start: usize,
    end: usize,
) -> Option<usize> {
    (start..end).find(|&i| reach(reaches, base, i).is_some_and(|r| r >= end))
}

/// Selects the leaf chunk: the oldest run of raw messages outside the fresh tail that yields a
/// chunk of at least `size.min_tokens`. A run that ends at a summary and is too small is left
/// raw (it can never grow, and summarizing it would not pay); the run that ends at the fresh
/// tail grows with every turn, so when it is too small the answer is "not yet".
pub fn select_leaf_chunk(
    items: &[ContextItem],
    tail: impl Into<TailRule>,
    size: impl Into<ChunkSize>,
) -> Result<LeafPlan, NoChunk> {
    let size = size.into();
    let tail = fresh_tail_start(items, tail);
    let outside = items.get(..tail).unwrap_or(&[]);
    let mut from = 0;
    let mut skipped = None;
    loop {
        let Some(start) = outside
            .iter()
            .skip(from)
            .position(ContextItem::is_message)
            .map(|p| from + p)
        else {
            return Err(skipped.unwrap_or(NoChunk::NothingOutsideTail));
        };
        let run_end = outside
            .iter()
            .skip(start)
            .position(|item| !item.is_message())
            .map_or(tail, |n| start + n);
        match chunk_in_run(items, start, run_end, size) {
            Ok(plan) => return Ok(plan),
            Err(why) if run_end < tail => {
                skipped.get_or_insert(why);
                from = run_end;
            }
            Err(why) => return Err(why),
        }
    }
}

fn tokens_between(items: &[ContextItem], start: usize, end: usize) -> u64 {
    items
        .get(start..end)
        .unwrap_or(&[])
        .iter()
        .map(|item| u64::from(item.tokens))
        .sum()
}

/// The chunk at the start of one run (`items[start..run_end]`, all raw messages). Prefers
/// shrinking the chunk so a tool pair stays in the next one (keeping the chunk within budget);
/// extends it over the pair when shrinking would leave less than the minimum, which is also how
/// a single message larger than the chunk becomes a chunk of its own.
fn chunk_in_run(
    items: &[ContextItem],
    start: usize,
    run_end: usize,
    size: ChunkSize,
) -> Result<LeafPlan, NoChunk> {
    let budget = u64::from(size.max_tokens);
    let min = u64::from(size.min_tokens).min(budget);
    let mut end = start;
    let mut tokens = 0u64;
    for item in items.get(start..run_end).unwrap_or(&[]) {
        let next = tokens + u64::from(item.tokens);
        // Below the minimum the chunk takes the next message along, however large.
        if end > start && next > budget && tokens >= min {
            break;
        }
        tokens = next;
        end += 1;
        if tokens >= budget {
            break;
        }
    }

    let reaches = partner_reach(items, start);
    let initial_end = end;
    while let Some(open) = first_open_pair(&reaches, start, start, end) {
        end = open;
    }
    if end == start || tokens_between(items, start, end) < min {
        end = initial_end;
        while let Some(open) = first_open_pair(&reaches, start, start, end) {
            let needed = reach(&reaches, start, open).map_or(end, |r| r + 1);
            if needed > run_end {
                return Err(NoChunk::PairReachesIntoTail);
            }
            end = needed;
        }
    }

    let end = at_turn_boundary(items, start, end, run_end, budget, min);
    let chosen = items.get(start..end).unwrap_or(&[]);
    let tokens: u64 = chosen.iter().map(|item| u64::from(item.tokens)).sum();
    if tokens < min {
        return Err(NoChunk::TooSmallToPayOff);
    }
    match (chosen.first(), chosen.last()) {
        (Some(first), Some(last)) => Ok(LeafPlan {
            first_ordinal: first.ordinal,
            last_ordinal: last.ordinal,
            message_ids: chosen.iter().map(|item| item.id).collect(),
            tokens,
        }),
        _ => Err(NoChunk::NothingOutsideTail),
    }
}

/// How many chunk budgets one old turn may take as a single chunk (see [`at_turn_boundary`]).
pub const WHOLE_TURN_CHUNK_FACTOR: u64 = 2;

/// Moves a chunk's end (`items[start..end]`, inside the run ending at `run_end`) to a turn
/// boundary, so a summary never takes a turn's request and leaves what answers it raw: back to
/// the newest turn opening inside the chunk when the chunk keeps its minimum; else on to the end
/// of the chunk's first turn when that turn is at most [`WHOLE_TURN_CHUNK_FACTOR`] chunk budgets.
/// An older turn larger than that stays cut where the tool pairs allow (the active task is never
/// in a run: the fresh tail holds it). History without any request is cut as before.
fn at_turn_boundary(
    items: &[ContextItem],
    start: usize,
    end: usize,
    run_end: usize,
    budget: u64,
    min: u64,
) -> usize {
    let boundary = |i: usize| i == run_end || opens_turn(items, i);
    // History without requests has no turns to keep whole.
    if boundary(end) || !items[..run_end].iter().any(TurnItem::is_request) {
        return end;
    }
    if let Some(back) = (start + 1..end).rev().find(|&i| boundary(i)) {
        if tokens_between(items, start, back) >= min {
            return back;
        }
    }
    let Some(on) = (end + 1..=run_end).find(|&i| boundary(i)) else {
        return end;
    };
    if tokens_between(items, start, on) <= budget.saturating_mul(WHOLE_TURN_CHUNK_FACTOR) {
        on
    } else {
        end
    }
}

/// When same-depth summaries are merged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CondenseRules {
    /// A run of at least this many summaries is merged (the engine may pass 2 under pressure).
    pub fanout: u32,
    /// A run of at least two whose tokens exceed this is merged even below the fanout.
    pub run_budget_tokens: u64,
    /// The most source tokens one merge takes (at least two summaries are always taken).
    pub max_input_tokens: u64,
}

impl CondenseRules {
    /// Runs outgrow their budget at one leaf chunk's worth of summary text, and one merge reads
    /// at most that much, so a condensed prompt is never larger than a leaf prompt.
    pub fn from_config(config: &CompactionConfig) -> Self {
        let chunk = u64::from(config.leaf_chunk_tokens);
        CondenseRules {
            fanout: config.condensed_fanout.max(2),
            run_budget_tokens: chunk,
            max_input_tokens: chunk,
        }
    }
}

/// Plans the next condensation: the shallowest depth with a qualifying run, its oldest run.
/// Only summaries before the fresh tail are considered.
pub fn plan_condensation(
    items: &[ContextItem],
    tail: impl Into<TailRule>,
    rules: &CondenseRules,
) -> Option<CondensePlan> {
    let outside = items.get(..fresh_tail_start(items, tail)).unwrap_or(&[]);
    let mut runs: Vec<(u32, &[ContextItem])> = Vec::new();
    let mut i = 0;
    while let Some(item) = outside.get(i) {
        let ItemKind::Summary { depth } = item.kind else {
            i += 1;
            continue;
        };
        let len = outside
            .iter()
            .skip(i)
            .take_while(|other| other.kind == ItemKind::Summary { depth })
            .count();
        runs.push((depth, outside.get(i..i + len).unwrap_or(&[])));
        i += len;
    }
    let fanout = rules.fanout.max(2) as usize;
    let qualifies = |run: &[ContextItem]| {
        let tokens: u64 = run.iter().map(|s| u64::from(s.tokens)).sum();
        run.len() >= fanout || (run.len() >= 2 && tokens > rules.run_budget_tokens)
    };
    let (depth, run) = runs
        .iter()
        .filter(|(_, run)| qualifies(run))
        .min_by_key(|(depth, run)| (*depth, run.first().map_or(i64::MAX, |s| s.ordinal)))?;

    let mut taken = 0usize;
    let mut tokens = 0u64;
    for summary in run.iter() {
        let next = tokens + u64::from(summary.tokens);
        if taken >= 2 && next > rules.max_input_tokens {
            break;
        }
        tokens = next;
        taken += 1;
    }
    let chosen = run.get(..taken)?;
    Some(CondensePlan {
        source_depth: *depth,
        first_ordinal: chosen.first()?.ordinal,
        last_ordinal: chosen.last()?.ordinal,
        summary_ids: chosen.iter().map(|s| s.id).collect(),
        tokens,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_counts_the_newest_first_within_the_cap_and_always_the_newest() {
        let all = TailRule {
            count: 3,
            max_tokens: u64::MAX,
        };
        assert_eq!(all.tokens_of(&[5, 7, 9, 11]), 27);
        assert_eq!(
            TailRule {
                count: 3,
                max_tokens: 20
            }
            .tokens_of(&[5, 7, 9, 11]),
            20
        );
        assert_eq!(
            TailRule {
                count: 3,
                max_tokens: 19
            }
            .tokens_of(&[5, 7, 9, 11]),
            11
        );
        assert_eq!(
            TailRule {
                count: 3,
                max_tokens: 0
            }
            .tokens_of(&[5, 7, 9, 11]),
            11,
            "the newest always counts"
        );
        assert_eq!(all.tokens_of(&[]), 0);
    }

    fn msg(ordinal: i64, role: Role, tokens: u32) -> ContextItem {
        ContextItem {
            ordinal,
            id: 100 + ordinal,
            kind: ItemKind::Message { role },
            tokens,
            tool_calls: vec![],
            answers: None,
        }
    }
    fn call(ordinal: i64, tokens: u32, ids: &[&str]) -> ContextItem {
        ContextItem {
            tool_calls: ids.iter().map(|s| s.to_string()).collect(),
            ..msg(ordinal, Role::Assistant, tokens)
        }
    }
    fn result(ordinal: i64, tokens: u32, id: &str) -> ContextItem {
        ContextItem {
            answers: Some(id.to_owned()),
            ..msg(ordinal, Role::ToolResult, tokens)
        }
    }
    fn summary(ordinal: i64, depth: u32, tokens: u32) -> ContextItem {
        ContextItem {
            ordinal,
            id: 900 + ordinal,
            kind: ItemKind::Summary { depth },
            tokens,
            tool_calls: vec![],
            answers: None,
        }
    }

    #[test]
    fn fresh_tail_counts_raw_messages_from_the_end() {
        let items = [
            summary(0, 0, 10),
            msg(1, Role::Custom, 10),
            msg(2, Role::Assistant, 10),
            msg(3, Role::Custom, 10),
        ];
        assert_eq!(fresh_tail_start(&items, 2), 2);
        assert_eq!(fresh_tail_start(&items, 0), 4);
        assert_eq!(fresh_tail_start(&items, 99), 1);
        assert_eq!(fresh_tail_start(&[], 5), 0);
    }

    #[test]
    fn fresh_tail_yields_to_its_token_cap_but_keeps_the_newest_message() {
        let items = [
            msg(0, Role::Custom, 500),
            msg(1, Role::Assistant, 500),
            msg(2, Role::Custom, 500),
            msg(3, Role::Assistant, 900),
        ];
        assert_eq!(
            fresh_tail_start(
                &items,
                TailRule {
                    count: 32,
                    max_tokens: 1_500
                }
            ),
            2
        );
        assert_eq!(
            fresh_tail_start(
                &items,
                TailRule {
                    count: 32,
                    max_tokens: 1_399
                }
            ),
            3
        );
        assert_eq!(
            fresh_tail_start(
                &items,
                TailRule {
                    count: 32,
                    max_tokens: 10
                }
            ),
            3,
            "the newest message always stays"
        );
        assert_eq!(
            fresh_tail_start(
                &items,
                TailRule {
                    count: 0,
                    max_tokens: 10
                }
            ),
            4
        );
    }

    #[test]
    fn a_tiny_chunk_takes_the_next_message_along_instead_of_being_summarized_alone() {
        let items = [
            msg(0, Role::Assistant, 19),
            msg(1, Role::Custom, 4_056),
            msg(2, Role::Assistant, 19),
        ];
        let plan = select_leaf_chunk(
            &items,
            TailRule {
                count: 32,
                max_tokens: 100,
            },
            1_127,
        )
        .unwrap();
        assert_eq!(plan.message_ids, vec![100, 101]);
        let roomy = [
            msg(0, Role::Custom, 600),
            msg(1, Role::Custom, 4_056),
            msg(2, Role::Assistant, 19),
        ];
        let plan = select_leaf_chunk(
            &roomy,
            TailRule {
                count: 32,
                max_tokens: 100,
            },
            1_127,
        )
        .unwrap();
        assert_eq!(
            plan.message_ids,
            vec![100],
            "a chunk of useful size stops at its budget"
        );
    }

    #[test]
    fn fresh_tail_never_starts_with_a_result_whose_call_is_outside() {
        let items = [
            msg(0, Role::Custom, 10),
            call(1, 10, &["a"]),
            result(2, 5_000, "a"),
        ];
        assert_eq!(
            fresh_tail_start(
                &items,
                TailRule {
                    count: 32,
                    max_tokens: 100
                }
            ),
            1
        );
        let plan = select_leaf_chunk(
            &items,
            TailRule {
                count: 32,
                max_tokens: 100,
            },
            ChunkSize {
                max_tokens: 1_000,
                min_tokens: 0,
            },
        )
        .unwrap();
        assert_eq!(
            plan.message_ids,
            vec![100],
            "the pair stays together in the tail"
        );
    }

    #[test]
    fn leaf_chunk_is_the_oldest_raw_run_outside_the_tail_within_budget() {
        let items = [
            summary(0, 0, 50),
            msg(1, Role::User, 40),
            msg(2, Role::Assistant, 40),
            msg(3, Role::User, 40),
            msg(4, Role::Assistant, 40),
            msg(5, Role::User, 40),
        ];
        let plan = select_leaf_chunk(&items, 1, 100).unwrap();
        assert_eq!(
            (plan.first_ordinal, plan.last_ordinal, plan.tokens),
            (1, 2, 80)
        );
        assert_eq!(plan.message_ids, vec![101, 102]);
    }

    #[test]
    fn leaf_chunk_stops_at_a_summary_and_never_enters_the_tail() {
        let items = [
            msg(0, Role::User, 10),
            summary(1, 0, 10),
            msg(2, Role::User, 10),
            msg(3, Role::Assistant, 10),
        ];
        let plan = select_leaf_chunk(
            &items,
            2,
            ChunkSize {
                max_tokens: 1_000,
                min_tokens: 0,
            },
        )
        .unwrap();
        assert_eq!((plan.first_ordinal, plan.last_ordinal), (0, 0));
        assert_eq!(
            select_leaf_chunk(&items[2..], 2, 1_000),
            Err(NoChunk::NothingOutsideTail)
        );
        assert_eq!(
            select_leaf_chunk(&[], 2, 1_000),
            Err(NoChunk::NothingOutsideTail)
        );
    }

    const PAYING: ChunkSize = ChunkSize {
        max_tokens: 3_000,
        min_tokens: MIN_PAYOFF_CHUNK_TOKENS,
    };

    #[test]
    fn a_lone_small_message_before_the_tail_is_never_a_chunk() {
        let items = [
            msg(0, Role::Custom, 50),
            msg(1, Role::Assistant, 40),
            msg(2, Role::Custom, 30),
        ];
        assert_eq!(
            select_leaf_chunk(&items, 1, PAYING),
            Err(NoChunk::TooSmallToPayOff)
        );
        // Once the run has grown past the minimum it is a chunk.
        let grown = [
            msg(0, Role::Custom, 50),
            msg(1, Role::Assistant, 700),
            msg(2, Role::Custom, 30),
        ];
        assert_eq!(
            select_leaf_chunk(&grown, 1, PAYING).map(|p| p.message_ids),
            Ok(vec![100, 101])
        );
    }

    #[test]
    fn a_small_run_between_summaries_stays_raw_and_the_next_run_is_chunked() {
        let items = [
            summary(0, 0, 100),
            msg(1, Role::Custom, 48),
            summary(2, 0, 100),
            msg(3, Role::Custom, 900),
            msg(4, Role::Assistant, 900),
            msg(5, Role::Custom, 20),
        ];
        let plan = select_leaf_chunk(&items, 1, PAYING).unwrap();
        assert_eq!(
            plan.message_ids,
            vec![103, 104],
            "the 48-token orphan is not summarized alone"
        );
        assert_eq!(
            select_leaf_chunk(&items[..3], 0, PAYING),
            Err(NoChunk::TooSmallToPayOff)
        );
    }

    #[test]
    fn keeping_a_pair_together_extends_the_chunk_rather_than_leaving_a_lone_message() {
        // The budget ends between the call and its 2,000-token result. Shrinking would leave the
        // 50-token request alone; the chunk takes the pair instead.
        let items = [
            msg(0, Role::Custom, 50),
            call(1, 40, &["a"]),
            result(2, 2_000, "a"),
            msg(3, Role::Assistant, 30),
            msg(4, Role::Custom, 30),
        ];
        let size = ChunkSize {
            max_tokens: 1_000,
            min_tokens: MIN_PAYOFF_CHUNK_TOKENS,
        };
        let plan = select_leaf_chunk(&items, 1, size).unwrap();
        assert_eq!(plan.message_ids, vec![100, 101, 102]);
        assert_eq!(plan.tokens, 2_090);
    }

    fn answer(ordinal: i64, tokens: u32) -> ContextItem {
        msg(ordinal, Role::Assistant, tokens)
    }

    #[test]
    fn the_active_task_is_in_the_tail_whatever_the_tail_rule_says() {
        // Three turns; the newest is a tool loop still running, so the turn before it is the
        // previous turn: both stay, however few messages the rule keeps.
        let items = [
            msg(0, Role::User, 400),
            answer(1, 400),
            msg(2, Role::User, 400),
            call(3, 50, &["a"]),
            result(4, 5_000, "a"),
            answer(5, 100),
            msg(6, Role::User, 50),
            call(7, 50, &["b"]),
            result(8, 50, "b"),
        ];
        for count in [0, 1, 2, 5] {
            assert_eq!(fresh_tail_start(&items, count), 2, "count {count}");
        }
        let plan = select_leaf_chunk(&items, 1, 10_000).unwrap();
        assert_eq!(plan.message_ids, vec![100, 101], "only the oldest turn");
        // Once the newest turn is answered, it is the previous turn of the next request.
        let mut answered = items.to_vec();
        answered.push(answer(9, 20));
        assert_eq!(fresh_tail_start(&answered, 1), 6);
        let plan = select_leaf_chunk(&answered, 1, 10_000).unwrap();
        assert_eq!(plan.message_ids, vec![100, 101, 102, 103, 104, 105]);
    }

    #[test]
    fn a_tail_rule_ending_inside_an_old_turn_moves_on_to_the_next_request() {
        let items = [
            msg(0, Role::User, 10),
            call(1, 10, &["a"]),
            result(2, 10, "a"),
            answer(3, 10),
            msg(4, Role::User, 10),
            answer(5, 10),
            msg(6, Role::User, 10),
            answer(7, 10),
        ];
        // Four messages by count would start at the answer of turn 4; the tail starts at turn 6's
        // request, the active task, and the chunk takes turn 4 whole.
        assert_eq!(fresh_tail_start(&items, 3), 6);
        let size = ChunkSize {
            max_tokens: 1_000,
            min_tokens: 0,
        };
        let plan = select_leaf_chunk(&items, 3, size).unwrap();
        assert_eq!(plan.message_ids, vec![100, 101, 102, 103, 104, 105]);
    }

    #[test]
    fn a_chunk_ends_where_a_turn_begins() {
        let items = [
            msg(0, Role::User, 100),
            call(1, 50, &["a"]),
            result(2, 500, "a"),
            answer(3, 50),
            msg(4, Role::User, 100),
            call(5, 50, &["b"]),
            result(6, 500, "b"),
            answer(7, 50),
            msg(8, Role::User, 100),
            answer(9, 50),
        ];
        let size = ChunkSize {
            max_tokens: 1_000,
            min_tokens: 256,
        };
        // The budget would cut turn 4 after its call: the chunk is turn 0 alone.
        let plan = select_leaf_chunk(&items, 1, size).unwrap();
        assert_eq!(plan.message_ids, vec![100, 101, 102, 103]);
        // A first turn larger than the chunk, up to twice its budget, is taken whole.
        let small = ChunkSize {
            max_tokens: 400,
            min_tokens: 100,
        };
        let plan = select_leaf_chunk(&items, 1, small).unwrap();
        assert_eq!(plan.message_ids, vec![100, 101, 102, 103]);
        // Beyond that it is cut where its tool pairs allow.
        let tiny = ChunkSize {
            max_tokens: 200,
            min_tokens: 100,
        };
        let plan = select_leaf_chunk(&items, 1, tiny).unwrap();
        assert_eq!(plan.message_ids, vec![100]);
    }

    #[test]
    fn leaf_chunk_never_splits_a_tool_call_from_its_results() {
        // Budget cuts after the call; the chunk shrinks to keep call and results together.
        let items = [
            msg(0, Role::Custom, 30),
            call(1, 30, &["a", "b"]),
            result(2, 30, "a"),
            result(3, 30, "b"),
            msg(4, Role::Assistant, 30),
            msg(5, Role::Custom, 30),
        ];
        let plan = select_leaf_chunk(&items, 1, 70).unwrap();
        assert_eq!(plan.message_ids, vec![100], "shrunk to before the call");
        // Budget cuts between the two results: also shrunk before the call.
        let plan = select_leaf_chunk(&items, 1, 100).unwrap();
        assert_eq!(plan.message_ids, vec![100]);
        // Budget covers the pair entirely: kept whole.
        let plan = select_leaf_chunk(&items, 1, 120).unwrap();
        assert_eq!(plan.message_ids, vec![100, 101, 102, 103]);
    }

    #[test]
    fn leaf_chunk_extends_when_the_oldest_message_opens_a_pair() {
        let items = [
            call(0, 500, &["x"]),
            result(1, 200, "x"),
            msg(2, Role::Assistant, 10),
            msg(3, Role::Custom, 10),
        ];
        let plan = select_leaf_chunk(&items, 1, 100).unwrap();
        assert_eq!(
            plan.message_ids,
            vec![100, 101],
            "extended to include the result"
        );
        assert_eq!(plan.tokens, 700);
        // When the answer is inside the fresh tail, its call joins the tail: nothing can be taken yet.
        assert_eq!(
            select_leaf_chunk(&items, 3, 100),
            Err(NoChunk::NothingOutsideTail)
        );
    }

    #[test]
    fn a_single_message_larger_than_the_chunk_is_a_chunk_of_its_own() {
        let items = [
            msg(0, Role::Custom, 200_000),
            msg(1, Role::Assistant, 10),
            msg(2, Role::Custom, 10),
        ];
        let plan = select_leaf_chunk(&items, 1, 20_000).unwrap();
        assert_eq!(
            (plan.message_ids.clone(), plan.tokens),
            (vec![100], 200_000)
        );
    }

    #[test]
    fn conversation_of_only_tool_results_is_chunked_without_panicking() {
        let items: Vec<_> = (0..10)
            .map(|i| result(i, 100, &format!("orphan{i}")))
            .collect();
        let plan = select_leaf_chunk(&items, 2, 250).unwrap();
        assert_eq!(plan.message_ids, vec![100, 101]);
    }

    #[test]
    fn condensation_merges_the_shallowest_run_reaching_the_fanout() {
        let rules = CondenseRules {
            fanout: 4,
            run_budget_tokens: 10_000,
            max_input_tokens: 10_000,
        };
        let mut items: Vec<_> = vec![
            summary(0, 1, 500),
            summary(1, 1, 500),
            summary(2, 1, 500),
            summary(3, 1, 500),
        ];
        items.extend((4..8).map(|o| summary(o, 0, 1_000)));
        items.push(msg(8, Role::User, 10));
        let plan = plan_condensation(&items, 1, &rules).unwrap();
        assert_eq!(
            (
                plan.source_depth,
                plan.target_depth(),
                plan.first_ordinal,
                plan.last_ordinal
            ),
            (0, 1, 4, 7)
        );
        assert_eq!(plan.tokens, 4_000);
    }

    #[test]
    fn condensation_waits_for_the_fanout_unless_the_run_outgrows_its_budget() {
        let rules = CondenseRules {
            fanout: 4,
            run_budget_tokens: 5_000,
            max_input_tokens: 20_000,
        };
        let small = [
            summary(0, 0, 1_000),
            summary(1, 0, 1_000),
            summary(2, 0, 1_000),
            msg(3, Role::User, 1),
        ];
        assert_eq!(plan_condensation(&small, 1, &rules), None);
        let big = [
            summary(0, 0, 3_000),
            summary(1, 0, 3_000),
            msg(2, Role::User, 1),
        ];
        assert_eq!(
            plan_condensation(&big, 1, &rules).unwrap().summary_ids,
            vec![900, 901]
        );
        let single = [summary(0, 0, 90_000), msg(1, Role::User, 1)];
        assert_eq!(
            plan_condensation(&single, 1, &rules),
            None,
            "one summary alone is never merged"
        );
    }

    #[test]
    fn condensation_input_is_bounded_but_takes_at_least_two() {
        let rules = CondenseRules {
            fanout: 2,
            run_budget_tokens: 1_000,
            max_input_tokens: 2_500,
        };
        let items: Vec<_> = (0..6).map(|o| summary(o, 0, 1_000)).collect();
        assert_eq!(
            plan_condensation(&items, 0, &rules)
                .unwrap()
                .summary_ids
                .len(),
            2
        );
        let huge = [
            summary(0, 0, 9_000),
            summary(1, 0, 9_000),
            summary(2, 0, 9_000),
        ];
        assert_eq!(
            plan_condensation(&huge, 0, &rules)
                .unwrap()
                .summary_ids
                .len(),
            2
        );
    }

    #[test]
    fn condensation_runs_are_contiguous_and_same_depth() {
        let rules = CondenseRules {
            fanout: 3,
            run_budget_tokens: 100_000,
            max_input_tokens: 100_000,
        };
        let items = [
            summary(0, 0, 1),
            summary(1, 0, 1),
            summary(2, 1, 1),
            summary(3, 0, 1),
            msg(4, Role::User, 1),
            summary(5, 0, 1),
        ];
        assert_eq!(plan_condensation(&items, 0, &rules), None);
    }
}
