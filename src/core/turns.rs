//! The active task: the part of a context that no pass may summarize and no view may leave out.
//!
//! A **turn** is a user message and everything after it up to the next user message (a short run
//! of consecutive user messages — an interruption note and a task notification — opens one turn
//! together; a longer run is cut every [`MAX_REQUEST_RUN`] messages, so a history made only of
//! user messages still has turns). A turn is **finished** when its last message is the
//! assistant's answer (an assistant message that calls no tool).
//!
//! The active task starts at the newest stored turn when that turn is finished: the next turn's
//! request is not stored yet (the host sends it with the view), so the newest stored turn is the
//! "previous turn" of the request the model is about to answer. When the newest stored turn is
//! not finished (a tool loop that is still running, or a host that stores the request before the
//! model call), it is the current turn, and the active task starts one turn earlier, so the
//! previous turn is whole too. With a single turn stored, it starts at that turn's request.
//! Items older than the first user message (history without any request) belong to no turn.
//!
//! The same rule is used by chunk selection (never summarize the active task), the view (never
//! leave it out) and stubbing (never stub it), so what one protects the others keep.

use super::message::Role;

/// What the active-task rule needs to know of one context item.
pub trait TurnItem {
    /// A user message (the request that opens a turn); summaries are not.
    fn is_request(&self) -> bool;
    /// An assistant message that calls no tool: the answer that finishes a turn.
    fn is_answer(&self) -> bool;
}

/// Whether a message of `role` that calls `calls_tools` finishes a turn.
pub fn is_answer(role: Role, calls_tools: bool) -> bool {
    role == Role::Assistant && !calls_tools
}

/// Consecutive user messages that open one turn together, at most.
pub const MAX_REQUEST_RUN: usize = 4;

/// Index of the first request of the run of consecutive requests that holds `items[at]`.
fn run_start<T: TurnItem>(items: &[T], mut at: usize) -> usize {
    while at > 0 && items[at - 1].is_request() {
        at -= 1;
    }
    at
}

/// Index of the request that opens the turn holding the request `items[at]`: the run's first,
/// or in a run longer than [`MAX_REQUEST_RUN`], the first of its group of that many.
fn turn_start<T: TurnItem>(items: &[T], at: usize) -> usize {
    let first = run_start(items, at);
    first + (at - first) / MAX_REQUEST_RUN * MAX_REQUEST_RUN
}

/// Index of the newest turn start strictly before `end`.
fn newest_turn_before<T: TurnItem>(items: &[T], end: usize) -> Option<usize> {
    let newest = items[..end].iter().rposition(TurnItem::is_request)?;
    Some(turn_start(items, newest))
}

/// Index of the first item of the active task (see the module doc), or None when no item is a
/// request (nothing is a turn; the callers' own rules apply).
pub fn active_task_start<T: TurnItem>(items: &[T]) -> Option<usize> {
    let newest = newest_turn_before(items, items.len())?;
    if items.last().is_some_and(TurnItem::is_answer) {
        return Some(newest);
    }
    Some(newest_turn_before(items, newest).unwrap_or(newest))
}

/// Whether index `at` opens a turn (a request not preceded by another request): where a chunk
/// may end.
pub fn opens_turn<T: TurnItem>(items: &[T], at: usize) -> bool {
    items.get(at).is_some_and(TurnItem::is_request) && turn_start(items, at) == at
}

#[cfg(test)]
mod tests {
    use super::*;

    /// u: request, a: answer, c: assistant tool call, r: tool result, s: summary.
    struct Item(char);

    impl TurnItem for Item {
        fn is_request(&self) -> bool {
            self.0 == 'u'
        }
        fn is_answer(&self) -> bool {
            self.0 == 'a'
        }
    }

    fn start(shape: &str) -> Option<usize> {
        let items: Vec<Item> = shape.chars().map(Item).collect();
        active_task_start(&items)
    }

    #[test]
    fn a_finished_newest_turn_is_the_previous_turn_of_the_next_request() {
        assert_eq!(start("sucrauca"), Some(5));
        assert_eq!(start("ua"), Some(0));
    }

    #[test]
    fn an_unfinished_newest_turn_keeps_the_turn_before_it_too() {
        assert_eq!(start("sucraucr"), Some(1));
        assert_eq!(start("sucrau"), Some(1));
        assert_eq!(
            start("ucrcr"),
            Some(0),
            "a single turn is protected from its request"
        );
    }

    #[test]
    fn a_run_of_requests_opens_one_turn() {
        assert_eq!(start("uauucr"), Some(0));
        assert_eq!(start("uauua"), Some(2));
    }

    #[test]
    fn a_long_run_of_requests_is_cut_into_turns() {
        // Ten requests and nothing else: turns open at 0, 4 and 8; the newest (8..) is not
        // finished, so the active task starts at 4.
        assert_eq!(start("uuuuuuuuuu"), Some(4));
        let items: Vec<Item> = "uuuuuuuuuua".chars().map(Item).collect();
        let opens: Vec<usize> = (0..items.len())
            .filter(|&i| opens_turn(&items, i))
            .collect();
        assert_eq!(opens, vec![0, 4, 8]);
        assert_eq!(active_task_start(&items), Some(8));
    }

    #[test]
    fn no_request_means_no_turn() {
        assert_eq!(start(""), None);
        assert_eq!(start("scrcr"), None);
    }

    #[test]
    fn turn_openings_are_the_first_request_of_a_run() {
        let items: Vec<Item> = "cruuau".chars().map(Item).collect();
        let opens: Vec<usize> = (0..items.len())
            .filter(|&i| opens_turn(&items, i))
            .collect();
        assert_eq!(opens, vec![2, 5]);
    }
}
