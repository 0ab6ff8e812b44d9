//! The working set: the old tool outputs the agent is still using, kept whole while there is
//! room. Stubbing is for outputs the agent no longer uses; these stay until the budget calls for
//! them.
//!
//! Rules (over the items a stub pass scans, oldest first; touches from [`super::touch`]):
//! - A tool output that **read a file** is in the working set when that file was read, edited
//!   or written (by any call) in the newest `recent_turns` turns — the turn it was read in counts
//!   — unless it is **superseded**: a newer output read the same file whole, or the same part of
//!   it, or a newer call wrote the file whole (its arguments, which stay in the view, carry the
//!   content). Only the newest read of each part of a file stays, then.
//! - Everything else old — test runs, greps, listings, edits' confirmations, superseded reads,
//!   reads of files left alone for `recent_turns` turns — is stubbed as before.
//! - **Room**: the working set stays whole while the context, after this turn's other stubs and
//!   excerpts, is at most `keep_line` tokens. Above it, working-set outputs are stubbed too,
//!   the file touched longest ago first (then the oldest output), until the context is at most
//!   `low_line`: one batch that frees a band, so the cached prefix is broken once, not every turn.
//!
//! Identical outputs still appear once: a re-read of an unchanged file is a newer read of it, so
//! the older copy is superseded (the renderer names the newer copy when their content is equal).
//!
//! Pure: the caller measured the tokens and classified the calls.

use std::collections::HashMap;

use serde::Serialize;

use super::scan_item::ScanItem;
use super::touch::{same_file, Op, Touch};
use crate::core::turns::opens_turn;

/// What the working set is told.
#[derive(Debug, Clone, Copy)]
pub struct WorkingSetRules<'a> {
    /// The files each tool output's call touched, by the output's ordinal (absent: none known).
    pub touches: &'a HashMap<i64, Vec<Touch>>,
    /// A file touched in this many newest turns keeps its newest read whole (0: no working set).
    pub recent_turns: u32,
    /// Larger reads are not kept: what a kept read costs grows with its size, what it spares
    /// the agent (a re-read) does not.
    pub max_tokens: u32,
    /// The context's tokens after this turn.
    pub context_tokens: u64,
    /// The working set stays whole while the context is at most this (None: no budget known,
    /// it always stays).
    pub keep_line: Option<u64>,
    /// Where a batch that stubs working-set outputs stops.
    pub low_line: u64,
}

impl WorkingSetRules<'_> {
    /// No working set: every old tool output is stubbed (the rule before issue 39).
    pub fn none() -> WorkingSetRules<'static> {
        static EMPTY: std::sync::OnceLock<HashMap<i64, Vec<Touch>>> = std::sync::OnceLock::new();
        WorkingSetRules {
            touches: EMPTY.get_or_init(HashMap::new),
            recent_turns: 0,
            max_tokens: 0,
            context_tokens: 0,
            keep_line: None,
            low_line: 0,
        }
    }
}

/// How an old tool output stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// Read a file still in use: kept whole while there is room. `last_touch`: the newest turn
    /// (index among the scanned items) that touched the file.
    Working {
        /// The newest turn (index among the scanned items) that touched the file.
        last_touch: usize,
    },
    /// A newer output carries the same content.
    Superseded,
    /// Anything else.
    Spent,
}

/// What the working set did in one plan, for the decision's telemetry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkingSetCounts {
    /// Working-set outputs kept whole, and their tokens.
    pub kept: u32,
    /// Tokens of the working-set outputs kept whole.
    pub kept_tokens: u64,
    /// Working-set outputs stubbed because the context passed the keep line.
    pub stubbed: u32,
    /// Old reads stubbed because a newer output carries their content.
    pub superseded: u32,
}

/// The turn index (0 for items before the first turn start) of every item.
fn turn_indices(items: &[ScanItem]) -> Vec<usize> {
    let mut turn = 0;
    (0..items.len())
        .map(|i| {
            if opens_turn(items, i) {
                turn += 1;
            }
            turn
        })
        .collect()
}

/// Whether the newer read `newer` carries what the older read of `part` showed.
fn covers(newer: &Op, part: &Option<String>) -> bool {
    match newer {
        Op::Write => true,
        Op::Read { part: None } => true,
        Op::Read { part: Some(p) } => part.as_deref() == Some(p.as_str()),
        Op::Edit => false,
    }
}

/// The standing of every item (by index) before `protected` that is a tool output with touches.
pub fn standings(
    items: &[ScanItem],
    rules: &WorkingSetRules<'_>,
    protected: i64,
) -> HashMap<usize, Standing> {
    let mut out = HashMap::new();
    if rules.recent_turns == 0 || rules.touches.is_empty() {
        return out;
    }
    let turns = turn_indices(items);
    let newest = turns.last().copied().unwrap_or(0);
    // Every touch with its item index, oldest first.
    let touched: Vec<(usize, &Touch)> = items
        .iter()
        .enumerate()
        .filter_map(|(i, item)| rules.touches.get(&item.ordinal).map(|t| (i, t)))
        .flat_map(|(i, ts)| ts.iter().map(move |t| (i, t)))
        .collect();
    for (i, item) in items.iter().enumerate() {
        if item.ordinal >= protected || item.role.is_none() {
            continue;
        }
        let reads: Vec<(&str, &Option<String>)> = rules
            .touches
            .get(&item.ordinal)
            .into_iter()
            .flatten()
            .filter_map(|t| match &t.op {
                Op::Read { part } => Some((t.path.as_str(), part)),
                _ => None,
            })
            .collect();
        if reads.is_empty() {
            continue;
        }
        let superseded = reads.iter().all(|(path, part)| {
            touched
                .iter()
                .any(|(j, t)| *j > i && same_file(&t.path, path) && covers(&t.op, part))
        });
        let last_touch = reads
            .iter()
            .flat_map(|(path, _)| {
                touched
                    .iter()
                    .filter(|(_, t)| same_file(&t.path, path))
                    .map(|(j, _)| turns[*j])
            })
            .max()
            .unwrap_or(turns[i]);
        let standing = if superseded {
            Standing::Superseded
        } else if item.tokens <= rules.max_tokens
            && newest.saturating_sub(last_touch) < rules.recent_turns as usize
        {
            Standing::Working { last_touch }
        } else {
            Standing::Spent
        };
        out.insert(i, standing);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::masking::select::{plan_with, PlanRules};
    use crate::core::message::Role;

    const RULES: PlanRules = PlanRules {
        min_tokens: 200,
        huge_tokens: 50_000,
        request_tokens: 50_000,
        text_tokens: 50_000,
        excerpt_tokens: 4_096,
        stub_tokens: 60,
    };

    /// A session from turns of `(what the turn's calls do, output tokens)`: each turn is a
    /// request, one tool call and its output, and the answer. `what`: `r:PATH` read, `e:PATH`
    /// edit, `w:PATH` write, `t` a test run.
    fn session(turns: &[(&str, u32)]) -> (Vec<ScanItem>, HashMap<i64, Vec<Touch>>) {
        let mut items = Vec::new();
        let mut touches = HashMap::new();
        for (what, tokens) in turns {
            for (role, t) in [
                (Role::User, 50),
                (Role::Assistant, 40),
                (Role::ToolResult, *tokens),
                (Role::Assistant, 30),
            ] {
                let ordinal = items.len() as i64 + 1;
                items.push(ScanItem {
                    ordinal,
                    message_id: Some(100 + ordinal),
                    role: Some(role),
                    tokens: t,
                    stub: None,
                    calls_tools: role == Role::Assistant && t == 40,
                });
                if role == Role::ToolResult {
                    let op = match what.split_once(':') {
                        Some(("r", _)) => Some(Op::Read { part: None }),
                        Some(("e", _)) => Some(Op::Edit),
                        Some(("w", _)) => Some(Op::Write),
                        _ => None,
                    };
                    if let (Some(op), Some((_, path))) = (op, what.split_once(':')) {
                        touches.insert(
                            ordinal,
                            vec![Touch {
                                path: path.into(),
                                op,
                            }],
                        );
                    }
                }
            }
        }
        (items, touches)
    }

    fn rules(touches: &HashMap<i64, Vec<Touch>>, context: u64, keep: u64) -> WorkingSetRules<'_> {
        WorkingSetRules {
            touches,
            recent_turns: 4,
            max_tokens: u32::MAX,
            context_tokens: context,
            keep_line: Some(keep),
            low_line: keep.saturating_sub(10_000),
        }
    }

    fn stubbed(items: &[ScanItem], rules: &WorkingSetRules<'_>) -> Vec<i64> {
        plan_with(items, &RULES, i64::MAX, rules)
            .candidates
            .iter()
            .map(|c| c.ordinal)
            .collect()
    }

    #[test]
    fn a_file_read_then_edited_two_turns_later_stays_whole_while_there_is_room() {
        // Turn 1 reads a.rs (ordinal 3), turn 2 runs the tests (7), turn 3 edits a.rs (11),
        // turn 4 runs the tests again (15): turns 1 and 2 are old.
        let (items, touches) = session(&[
            ("r:src/a.rs", 3_000),
            ("t", 2_000),
            ("e:src/a.rs", 300),
            ("t", 2_000),
        ]);
        let room = rules(&touches, 20_000, 50_000);
        let p = plan_with(&items, &RULES, i64::MAX, &room);
        assert_eq!(
            p.candidates.iter().map(|c| c.ordinal).collect::<Vec<_>>(),
            vec![7, 11],
            "the test run and the edit's confirmation go; the read of the file being edited stays"
        );
        assert_eq!(
            (p.working_set.kept, p.working_set.kept_tokens, p.kept_from),
            (1, 3_000, Some(3))
        );
        let none = WorkingSetRules::none();
        assert_eq!(
            stubbed(&items, &none),
            vec![3, 7, 11],
            "without a working set the read goes too"
        );
        // Left alone for four turns, the read is spent.
        let (items, touches) = session(&[
            ("r:src/a.rs", 3_000),
            ("t", 2_000),
            ("t", 2_000),
            ("t", 2_000),
            ("t", 2_000),
        ]);
        assert_eq!(
            stubbed(&items, &rules(&touches, 20_000, 50_000)),
            vec![3, 7, 11, 15]
        );
    }

    #[test]
    fn a_superseded_read_is_stubbed_and_identical_reads_appear_once() {
        // a.rs read in turn 1, read again whole in turn 2: the older read is superseded; the
        // newer one, in the working set, stays.
        let (items, touches) = session(&[
            ("r:src/a.rs", 3_000),
            ("r:/repo/src/a.rs", 3_000),
            ("t", 2_000),
            ("t", 500),
        ]);
        let p = plan_with(&items, &RULES, i64::MAX, &rules(&touches, 20_000, 50_000));
        assert_eq!(
            p.candidates.iter().map(|c| c.ordinal).collect::<Vec<_>>(),
            vec![3, 11]
        );
        assert_eq!((p.working_set.superseded, p.working_set.kept), (1, 1));
        assert_eq!(p.kept_from, Some(7));
        // A whole-file write supersedes the reads before it; a part read supersedes only the
        // same part.
        let (items, mut touches) = session(&[
            ("r:b.rs", 3_000),
            ("w:b.rs", 300),
            ("r:c.rs", 3_000),
            ("r:c.rs", 3_000),
            ("t", 500),
        ]);
        touches.insert(
            15,
            vec![Touch {
                path: "c.rs".into(),
                op: Op::Read {
                    part: Some("10,20p".into()),
                },
            }],
        );
        assert_eq!(
            stubbed(&items, &rules(&touches, 20_000, 50_000)),
            vec![3, 7],
            "b.rs was rewritten whole; c.rs's whole read is not covered by a part of it"
        );
    }

    #[test]
    fn above_the_keep_line_the_working_set_is_stubbed_file_touched_longest_ago_first() {
        // Three files read in turns 1-3 (5,000 tokens each), edited in reverse order in turns
        // 4-6 (a.rs last): the least recently touched is c.rs, then b.rs.
        let (items, touches) = session(&[
            ("r:a.rs", 5_000),
            ("r:b.rs", 5_000),
            ("r:c.rs", 5_000),
            ("e:c.rs", 300),
            ("e:b.rs", 300),
            ("e:a.rs", 300),
            ("t", 500),
        ]);
        let mut r = rules(&touches, 40_000, 60_000);
        r.recent_turns = 6;
        let p = plan_with(&items, &RULES, i64::MAX, &r);
        assert_eq!(p.working_set.kept, 3, "room: all three stay");
        assert_eq!(p.working_set.stubbed, 0);
        // 40,000 less the edits' confirmations is still over a keep line at 35,000: with a low
        // line at 30,000, two of the three go, c.rs then b.rs; a.rs, edited last, stays.
        r.keep_line = Some(35_000);
        r.low_line = 30_000;
        let p = plan_with(&items, &RULES, i64::MAX, &r);
        let ws: Vec<i64> = p
            .candidates
            .iter()
            .map(|c| c.ordinal)
            .filter(|o| [3, 7, 11].contains(o))
            .collect();
        assert_eq!(ws, vec![7, 11]);
        assert_eq!((p.working_set.stubbed, p.working_set.kept), (2, 1));
        assert_eq!(p.kept_from, Some(3));
        assert!(
            p.rewritten > 0 && p.saved >= 2 * 4_940,
            "the batch counts what it saves and re-writes"
        );
        // No budget known: the working set stays.
        r.keep_line = None;
        assert_eq!(plan_with(&items, &RULES, i64::MAX, &r).working_set.kept, 3);
    }

    fn item(ordinal: i64, role: Role) -> ScanItem {
        ScanItem {
            ordinal,
            message_id: Some(ordinal),
            role: Some(role),
            tokens: 1_000,
            stub: None,
            calls_tools: role == Role::Assistant,
        }
    }

    #[test]
    fn turns_are_counted_from_each_request() {
        let items = [
            item(1, Role::ToolResult),
            item(2, Role::User),
            item(3, Role::ToolResult),
            item(4, Role::User),
            item(5, Role::User),
            item(6, Role::ToolResult),
        ];
        assert_eq!(turn_indices(&items), vec![0, 1, 1, 2, 2, 2]);
    }
}
