//! How long a host call may wait for a summary, and whether to ask for one at all.
//!
//! A summary can take tens of seconds (a local model on a CPU, a busy provider). The host's turn
//! waits on some calls (OpenClaw's maintenance before a turn, its preflight `compact()`) and not
//! on others (turn maintenance it runs in the background). Rules:
//!
//! - A call the turn does not wait on may wait for its summaries as long as they take (the
//!   request's own time limit still applies).
//! - A call the turn waits on holds it at most `summaryTurnWaitMs` per summary; after that the
//!   summary goes on in the background and is applied when it arrives (the view shrinks meanwhile).
//! - A request that a process left unanswered (it exited first: `openclaw agent --local` exits
//!   right after its reply) was sent for nothing, and a request still out when such a process
//!   exits holds up its exit while the host closes its connections. Once that happened, the
//!   engine stops asking (a local model server would also still work on the lost request, and a
//!   provider still bills it) — except for a **catch-up**: after `summaryCatchUpTurns` turns on
//!   which compaction was due and no summary was stored, one call the turn waits on waits for
//!   one summary, and asks for no other, so a conversation whose summarizer is slower than its
//!   processes live still gets summaries (one slow turn in `summaryCatchUpTurns + 1`, at most).
//! - This lasts until answers arrive without a turn waiting for them (an answer to a request
//!   that was not a catch-up), or a job starts in a process that has stored more than one turn
//!   (a gateway, whose background work lives on): requests sent from there do arrive.
//!
//! [`SummaryRuns`] is the per-conversation record behind the last two rules, kept in the
//! database so that the next process sees what the last one left. Pure: time arrives as
//! `now_ms`, the runner id (one per process) and its turn count from the caller.

use serde::{Deserialize, Serialize};

/// A summary request that was sent and not yet answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Outstanding {
    /// Who sent it: one id per process (the shim's runner id).
    pub runner: String,
    pub since_ms: i64,
}

/// What became of a conversation's summary requests, across processes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SummaryRuns {
    /// The request in flight, if any.
    #[serde(default)]
    pub outstanding: Option<Outstanding>,
    /// Requests in a row whose process never saw the answer.
    #[serde(default)]
    pub abandoned: u32,
    /// When the last one was found abandoned.
    #[serde(default)]
    pub abandoned_at_ms: Option<i64>,
}

impl SummaryRuns {
    /// A job starts in `runner`, which holds a live request for the conversation when
    /// `live_here` and has stored more than one turn when `long_lived` (a gateway: its
    /// background work outlives its turns). A request another runner left (or this runner lost
    /// track of) was abandoned. Returns whether anything changed (so the caller saves it).
    pub fn observe(&mut self, runner: &str, live_here: bool, long_lived: bool, now_ms: i64) -> bool {
        let before = self.clone();
        if let Some(o) = &self.outstanding {
            if !(o.runner == runner && live_here) {
                self.outstanding = None;
                self.abandoned = self.abandoned.saturating_add(1);
                self.abandoned_at_ms = Some(now_ms);
            }
        }
        if long_lived {
            self.abandoned = 0;
            self.abandoned_at_ms = None;
        }
        *self != before
    }

    /// A request was sent.
    pub fn asked(&mut self, runner: &str, now_ms: i64) {
        self.outstanding = Some(Outstanding { runner: runner.to_owned(), since_ms: now_ms });
    }

    /// An answer (a summary or an error) came back. One the turn did not wait for in full shows
    /// that answers arrive here; a catch-up's answer only shows that a turn waited for it.
    pub fn answered(&mut self, catch_up: bool) {
        self.outstanding = None;
        if !catch_up {
            self.abandoned = 0;
            self.abandoned_at_ms = None;
        }
    }
}

/// What the decision needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HoldInput {
    /// The host's turn waits for this call to return.
    pub turn_waits: bool,
    /// Turns since the last stored summary on which compaction was due.
    pub unserved_turns: u32,
    /// Requests in a row that a process left unanswered ([`SummaryRuns::abandoned`]).
    pub abandoned: u32,
    /// `summaryTurnWaitMs`.
    pub turn_wait_ms: u32,
    /// `summaryCatchUpTurns` (0: never).
    pub catch_up_turns: u32,
    /// `summaryTimeoutMs`: a request ends by itself after this long.
    pub summary_timeout_ms: u32,
}

/// Whether to ask the summarizer now, and how long the host's call may wait for the answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ask {
    /// Ask. `hold_ms`: how long the call may be held for the answer; `None`: until it arrives.
    Now { hold_ms: Option<u32>, catch_up: bool },
    /// Do not ask now; the reason, for the log.
    Refrain(String),
}

impl HoldInput {
    fn catch_up_due(&self) -> bool {
        self.turn_waits && self.catch_up_turns > 0 && self.unserved_turns >= self.catch_up_turns
    }
}

/// The first request of a job.
pub fn first_request(input: &HoldInput) -> Ask {
    if input.abandoned == 0 {
        // Answers arrive here (in the background when not within the hold): ask.
        return Ask::Now { hold_ms: later_hold(input), catch_up: false };
    }
    if input.catch_up_due() {
        return Ask::Now { hold_ms: None, catch_up: true };
    }
    let catch_up = match input.catch_up_turns {
        0 => "catch-up turns are off (summaryCatchUpTurns 0)".to_owned(),
        n => format!("a turn waits for one after {n} turns without a stored summary ({} so far)", input.unserved_turns),
    };
    Ask::Refrain(format!(
        "summary requests here end unanswered ({} in a row: the process exited before the summarizer answered); none is sent \
         until one can be awaited: {catch_up}",
        input.abandoned
    ))
}

/// Every later request of a job (the next pass, or the next escalation level). A catch-up asks
/// for one summary only: requests here do not outlive the turn, so the rest waits for the next.
pub fn later_request(input: &HoldInput, catch_up_job: bool) -> Ask {
    if catch_up_job && input.abandoned > 0 {
        return Ask::Refrain("the catch-up waited for one summary; the rest waits for the next catch-up".to_owned());
    }
    Ask::Now { hold_ms: later_hold(input), catch_up: false }
}

fn later_hold(input: &HoldInput) -> Option<u32> {
    // A hold as long as the request's own limit is no hold at all.
    (input.turn_waits && input.turn_wait_ms < input.summary_timeout_ms).then_some(input.turn_wait_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input() -> HoldInput {
        HoldInput { turn_waits: true, unserved_turns: 0, abandoned: 0, turn_wait_ms: 1_000, catch_up_turns: 4, summary_timeout_ms: 120_000 }
    }

    #[test]
    fn a_call_the_turn_waits_on_holds_it_for_the_turn_wait_only() {
        assert_eq!(first_request(&input()), Ask::Now { hold_ms: Some(1_000), catch_up: false });
        assert_eq!(later_request(&input(), false), Ask::Now { hold_ms: Some(1_000), catch_up: false });
    }

    #[test]
    fn a_call_the_turn_does_not_wait_on_waits_for_the_answer() {
        let background = HoldInput { turn_waits: false, unserved_turns: 9, ..input() };
        assert_eq!(first_request(&background), Ask::Now { hold_ms: None, catch_up: false });
        assert_eq!(later_request(&background, false), Ask::Now { hold_ms: None, catch_up: false });
    }

    #[test]
    fn a_turn_wait_as_long_as_the_request_limit_is_no_hold() {
        let long = HoldInput { turn_wait_ms: 120_000, ..input() };
        assert_eq!(first_request(&long), Ask::Now { hold_ms: None, catch_up: false });
    }

    #[test]
    fn after_requests_were_abandoned_none_is_sent_that_cannot_be_awaited() {
        let abandoned = HoldInput { abandoned: 1, unserved_turns: 2, ..input() };
        let Ask::Refrain(why) = first_request(&abandoned) else { panic!("should refrain") };
        assert!(why.contains("1 in a row") && why.contains("after 4 turns") && why.contains("2 so far"), "{why}");
        // Background calls of a process that exits first are abandoned too: they refrain as well.
        let background = HoldInput { turn_waits: false, ..abandoned };
        assert!(matches!(first_request(&background), Ask::Refrain(_)));
    }

    #[test]
    fn a_catch_up_turn_waits_for_one_summary_after_the_configured_unserved_turns() {
        let due = HoldInput { abandoned: 3, unserved_turns: 4, ..input() };
        assert_eq!(first_request(&due), Ask::Now { hold_ms: None, catch_up: true });
        // It asks for that one summary only: a second request would be lost with the process.
        assert!(matches!(later_request(&due, true), Ask::Refrain(_)));
        let not_yet = HoldInput { unserved_turns: 3, ..due };
        assert!(matches!(first_request(&not_yet), Ask::Refrain(_)));
    }

    #[test]
    fn no_catch_up_while_answers_arrive() {
        // Unserved turns alone (answers that were failures, a backoff) never hold a turn.
        let answered = HoldInput { abandoned: 0, unserved_turns: 40, ..input() };
        assert_eq!(first_request(&answered), Ask::Now { hold_ms: Some(1_000), catch_up: false });
    }

    #[test]
    fn catch_up_turns_zero_never_holds_a_turn_beyond_the_turn_wait() {
        let off = HoldInput { catch_up_turns: 0, abandoned: 2, unserved_turns: 50, ..input() };
        let Ask::Refrain(why) = first_request(&off) else { panic!("should refrain") };
        assert!(why.contains("summaryCatchUpTurns 0"), "{why}");
        let fresh = HoldInput { catch_up_turns: 0, unserved_turns: 50, ..input() };
        assert_eq!(first_request(&fresh), Ask::Now { hold_ms: Some(1_000), catch_up: false });
    }

    #[test]
    fn a_request_left_by_another_process_counts_as_abandoned_and_an_answer_resets_the_count() {
        let mut runs = SummaryRuns::default();
        assert!(!runs.observe("process-a", false, false, 50));
        runs.asked("process-a", 100);
        assert!(!runs.observe("process-a", true, false, 150), "a live request of this process is not abandoned");
        assert!(runs.observe("process-b", false, false, 200));
        assert_eq!((runs.outstanding.clone(), runs.abandoned, runs.abandoned_at_ms), (None, 1, Some(200)));
        runs.asked("process-b", 300);
        assert!(runs.observe("process-b", false, false, 400), "a request this process lost track of is abandoned too");
        assert_eq!(runs.abandoned, 2);
        runs.asked("process-c", 500);
        runs.answered(true);
        assert_eq!(runs.abandoned, 2, "a catch-up's answer says nothing about answers nobody waits for");
        runs.asked("process-c", 600);
        runs.answered(false);
        assert_eq!((runs.outstanding.clone(), runs.abandoned), (None, 0));
    }

    #[test]
    fn a_process_that_stored_more_than_one_turn_lives_long_enough_for_its_answers() {
        let mut runs = SummaryRuns { abandoned: 3, abandoned_at_ms: Some(1), ..SummaryRuns::default() };
        assert!(!runs.observe("one-shot", false, false, 100), "a process at its first turn proves nothing");
        assert_eq!(runs.abandoned, 3);
        assert!(runs.observe("gateway", false, true, 200));
        assert_eq!((runs.abandoned, runs.abandoned_at_ms), (0, None));
    }
}
