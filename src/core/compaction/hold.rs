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
//! - Where the caller can start a **successor** (the OpenClaw plugin: a detached
//!   `openclaw lcm summarize` process that outlives the one-shot command), a job that would
//!   otherwise refrain or wait for a catch-up **hands over** instead: it asks for nothing, the
//!   caller starts the successor, and the successor asks and waits for as long as the summaries
//!   take. No turn waits. A caller that knows its process ends with its turn (a one-shot
//!   command: `openclaw agent --local`) hands over from its very first request: a request sent
//!   there would die with the process, and the host's exit would wait for it (OpenClaw 2026.9's
//!   CLI waits up to 5 s for a plugin's LLM call before it exits). A successor done with its
//!   work stands by a while, renewing the hand-over's mark ([`STANDBY_REFRESH_MS`]), so the
//!   next one-shot turns start no other. Catch-ups remain for callers that cannot start one (a
//!   browser, an embedder). A successor's answers, like a catch-up's, do not show that answers arrive in the
//!   one-shot process itself.
//! - A request sent by a process that outlives its turns (one that stored more than one turn: a
//!   gateway; or a successor) holds a **lease** ([`LEASE_MS`]) that its sender renews while it
//!   waits ([`LEASE_RENEW_MS`]). While another process's lease runs, a job asks for nothing (the
//!   view shrinks meanwhile): two gateways, or a gateway and a successor, never pay twice for the
//!   same summary. A lease nobody renews (its process died) runs out and the request counts as
//!   abandoned. A process at its first turn takes no lease: it may be a one-shot command whose
//!   request dies with it, and the next process must see that at once.
//!
//! [`SummaryRuns`] is the per-conversation record behind these rules, kept in the
//! database so that the next process sees what the last one left. Pure: time arrives as
//! `now_ms`, the runner id (one per process) and its turn count from the caller.

use serde::{Deserialize, Serialize};

/// How long a request's lease lasts after it was sent or last renewed.
pub const LEASE_MS: i64 = 20_000;
/// How often the sender renews the lease while it waits (a quarter of [`LEASE_MS`]; the shim's
/// `LEASE_RENEW_MS` in engine/compaction-driver.js).
pub const LEASE_RENEW_MS: u32 = 5_000;
/// How long a hand-over waits for its successor to ask before it counts as failed (a successor
/// that could not start): another may then be started.
pub const HAND_OVER_GRACE_MS: i64 = 60_000;
/// How often a successor standing by for more work renews its mark (well within
/// [`HAND_OVER_GRACE_MS`], so the mark of a successor that died runs out soon after).
pub const STANDBY_REFRESH_MS: i64 = 10_000;

/// A summary request that was sent and not yet answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Outstanding {
    /// Who sent it: one id per process (the shim's runner id).
    pub runner: String,
    /// When it was sent (ms since the epoch).
    pub since_ms: i64,
    /// Until when the sender is known to wait for it (absent in records written before leases:
    /// such a request is never taken for live in another process).
    #[serde(default)]
    pub lease_until_ms: Option<i64>,
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
    /// When a job last handed the conversation's summaries to a successor that has not asked yet.
    #[serde(default)]
    pub handed_over_at_ms: Option<i64>,
}

impl SummaryRuns {
    /// A job starts in `runner`, which holds a live request for the conversation when
    /// `live_here` and has stored more than one turn when `long_lived` (a gateway: its
    /// background work outlives its turns). A request another runner left (or this runner lost
    /// track of) was abandoned. Returns whether anything changed (so the caller saves it).
    /// Another runner's request still leased ([`LEASE_MS`]) is live, not abandoned.
    pub fn observe(
        &mut self,
        runner: &str,
        live_here: bool,
        long_lived: bool,
        now_ms: i64,
    ) -> bool {
        let before = self.clone();
        let leased_elsewhere = self.leased_elsewhere(runner, now_ms).is_some();
        if let Some(o) = &self.outstanding {
            let live = leased_elsewhere || (o.runner == runner && live_here);
            if !live {
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

    /// The request another runner is waiting for under a lease that has not run out.
    pub fn leased_elsewhere(&self, runner: &str, now_ms: i64) -> Option<&Outstanding> {
        self.outstanding
            .as_ref()
            .filter(|o| o.runner != runner && o.lease_until_ms.is_some_and(|until| until > now_ms))
    }

    /// A request was sent (by a successor too, which so takes over a hand-over), `leased` when
    /// its sender will renew the lease while it waits.
    pub fn asked(&mut self, runner: &str, leased: bool, now_ms: i64) {
        let lease_until_ms = leased.then(|| now_ms.saturating_add(LEASE_MS));
        self.outstanding = Some(Outstanding {
            runner: runner.to_owned(),
            since_ms: now_ms,
            lease_until_ms,
        });
        self.handed_over_at_ms = None;
    }

    /// `runner` still waits for its leased request: the lease runs [`LEASE_MS`] from now.
    /// Returns false when the request in flight is no longer that runner's (answered, or taken
    /// for abandoned) or was sent without a lease.
    pub fn renew(&mut self, runner: &str, now_ms: i64) -> bool {
        match &mut self.outstanding {
            Some(o) if o.runner == runner && o.lease_until_ms.is_some() => {
                o.lease_until_ms = Some(now_ms.saturating_add(LEASE_MS));
                true
            }
            _ => false,
        }
    }

    /// A job handed the conversation's summaries to a successor process.
    pub fn handed_over(&mut self, now_ms: i64) {
        self.handed_over_at_ms = Some(now_ms);
    }

    /// How long ago a hand-over was made whose successor has not asked yet, while it may still
    /// ([`HAND_OVER_GRACE_MS`]).
    pub fn hand_over_pending(&self, now_ms: i64) -> Option<i64> {
        self.handed_over_at_ms
            .map(|at| now_ms.saturating_sub(at))
            .filter(|age| *age < HAND_OVER_GRACE_MS)
    }

    /// A successor started: whatever it does, the hand-over it answers is no longer pending.
    pub fn successor_started(&mut self) {
        self.handed_over_at_ms = None;
    }

    /// `runner`'s answer (a summary or an error) came back: its request is no longer in flight
    /// (another process's, recorded meanwhile, still is). One that nobody waited for in full
    /// shows that answers arrive in the process that asks; a catch-up's or a successor's answer
    /// (`awaited`) only shows that a process waited for it.
    pub fn answered(&mut self, runner: &str, awaited: bool) {
        if self
            .outstanding
            .as_ref()
            .is_some_and(|o| o.runner == runner)
        {
            self.outstanding = None;
        }
        if !awaited {
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
    /// The caller can start a successor process for the summaries this one cannot await.
    pub can_hand_over: bool,
    /// This job runs in such a successor: it asks, and waits for every answer.
    pub successor: bool,
    /// The process ends with its turn (a one-shot command): whatever it asks is lost with it.
    pub ends_with_turn: bool,
    /// The process outlives its turns (a gateway): answers arrive here, whatever requests an
    /// earlier process (one that crashed, or a one-shot command) left unanswered.
    pub outlives_turns: bool,
    /// A hand-over made this long ago still waits for its successor
    /// ([`SummaryRuns::hand_over_pending`]).
    pub hand_over_pending_ms: Option<i64>,
}

/// Whether to ask the summarizer now, and how long the host's call may wait for the answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ask {
    /// Ask. `hold_ms`: how long the call may be held for the answer; `None`: until it arrives.
    Now {
        /// How long the call may be held for the answer, in ms; `None`: until it arrives.
        hold_ms: Option<u32>,
        /// A catch-up: after `summaryCatchUpTurns` turns without a stored summary, the turn
        /// waits for one.
        catch_up: bool,
    },
    /// Do not ask now; the reason, for the log.
    Refrain(String),
    /// Do not ask here: the caller starts a successor process that asks (the reason, for the log).
    HandOver(String),
}

impl HoldInput {
    fn catch_up_due(&self) -> bool {
        self.turn_waits && self.catch_up_turns > 0 && self.unserved_turns >= self.catch_up_turns
    }
}

/// The first request of a job.
pub fn first_request(input: &HoldInput) -> Ask {
    if input.successor {
        return Ask::Now {
            hold_ms: None,
            catch_up: false,
        };
    }
    let one_shot = input.can_hand_over && input.ends_with_turn;
    if input.abandoned == 0 && !one_shot {
        // Answers arrive here (in the background when not within the hold): ask.
        return Ask::Now {
            hold_ms: later_hold(input),
            catch_up: false,
        };
    }
    if let Some(age) = input.hand_over_pending_ms {
        return Ask::Refrain(format!(
            "summaries for this conversation were handed to a successor process {} s ago; it writes them after this process exits",
            age.max(0) / 1000
        ));
    }
    // A gateway's answers arrive here: the requests a dead process left unanswered say nothing
    // about this one, which needs no successor.
    if input.outlives_turns {
        return Ask::Now {
            hold_ms: later_hold(input),
            catch_up: false,
        };
    }
    if input.can_hand_over {
        let why = if input.abandoned > 0 {
            format!("summary requests here end unanswered ({} in a row: the process exited before the summarizer answered)", input.abandoned)
        } else {
            "this process ends with its turn (a one-shot command): a request sent here would die with it, and its exit would wait for it".to_owned()
        };
        return Ask::HandOver(format!("{why}; a successor process writes this conversation's summaries instead, and no turn waits for them"));
    }
    if input.catch_up_due() {
        return Ask::Now {
            hold_ms: None,
            catch_up: true,
        };
    }
    let catch_up = match input.catch_up_turns {
        0 => "catch-up turns are off (summaryCatchUpTurns 0)".to_owned(),
        n => format!(
            "a turn waits for one after {n} turns without a stored summary ({} so far)",
            input.unserved_turns
        ),
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
        return Ask::Refrain(
            "the catch-up waited for one summary; the rest waits for the next catch-up".to_owned(),
        );
    }
    Ask::Now {
        hold_ms: later_hold(input),
        catch_up: false,
    }
}

fn later_hold(input: &HoldInput) -> Option<u32> {
    // A hold as long as the request's own limit is no hold at all.
    (input.turn_waits && input.turn_wait_ms < input.summary_timeout_ms)
        .then_some(input.turn_wait_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input() -> HoldInput {
        HoldInput {
            turn_waits: true,
            unserved_turns: 0,
            abandoned: 0,
            turn_wait_ms: 1_000,
            catch_up_turns: 4,
            summary_timeout_ms: 120_000,
            can_hand_over: false,
            successor: false,
            ends_with_turn: false,
            outlives_turns: false,
            hand_over_pending_ms: None,
        }
    }

    #[test]
    fn a_process_that_outlives_its_turns_asks_itself_after_a_crash_left_requests_unanswered() {
        // A gateway restarted after a crash: the dead process's request counts as abandoned, and
        // the restarted one is at its first turn (no answer arrived here yet).
        let restarted = HoldInput {
            abandoned: 1,
            can_hand_over: true,
            turn_waits: false,
            outlives_turns: true,
            ..input()
        };
        assert_eq!(
            first_request(&restarted),
            Ask::Now {
                hold_ms: None,
                catch_up: false
            }
        );
        // The same process not known to outlive its turns hands over, as before.
        assert!(matches!(
            first_request(&HoldInput {
                outlives_turns: false,
                ..restarted
            }),
            Ask::HandOver(_)
        ));
        // A successor already started for a hand-over asks instead: the gateway refrains.
        assert!(matches!(
            first_request(&HoldInput {
                hand_over_pending_ms: Some(3_000),
                ..restarted
            }),
            Ask::Refrain(_)
        ));
    }

    #[test]
    fn a_call_the_turn_waits_on_holds_it_for_the_turn_wait_only() {
        assert_eq!(
            first_request(&input()),
            Ask::Now {
                hold_ms: Some(1_000),
                catch_up: false
            }
        );
        assert_eq!(
            later_request(&input(), false),
            Ask::Now {
                hold_ms: Some(1_000),
                catch_up: false
            }
        );
    }

    #[test]
    fn a_call_the_turn_does_not_wait_on_waits_for_the_answer() {
        let background = HoldInput {
            turn_waits: false,
            unserved_turns: 9,
            ..input()
        };
        assert_eq!(
            first_request(&background),
            Ask::Now {
                hold_ms: None,
                catch_up: false
            }
        );
        assert_eq!(
            later_request(&background, false),
            Ask::Now {
                hold_ms: None,
                catch_up: false
            }
        );
    }

    #[test]
    fn a_turn_wait_as_long_as_the_request_limit_is_no_hold() {
        let long = HoldInput {
            turn_wait_ms: 120_000,
            ..input()
        };
        assert_eq!(
            first_request(&long),
            Ask::Now {
                hold_ms: None,
                catch_up: false
            }
        );
    }

    #[test]
    fn after_requests_were_abandoned_none_is_sent_that_cannot_be_awaited() {
        let abandoned = HoldInput {
            abandoned: 1,
            unserved_turns: 2,
            ..input()
        };
        let Ask::Refrain(why) = first_request(&abandoned) else {
            panic!("should refrain")
        };
        assert!(
            why.contains("1 in a row") && why.contains("after 4 turns") && why.contains("2 so far"),
            "{why}"
        );
        // Background calls of a process that exits first are abandoned too: they refrain as well.
        let background = HoldInput {
            turn_waits: false,
            ..abandoned
        };
        assert!(matches!(first_request(&background), Ask::Refrain(_)));
    }

    #[test]
    fn a_catch_up_turn_waits_for_one_summary_after_the_configured_unserved_turns() {
        let due = HoldInput {
            abandoned: 3,
            unserved_turns: 4,
            ..input()
        };
        assert_eq!(
            first_request(&due),
            Ask::Now {
                hold_ms: None,
                catch_up: true
            }
        );
        // It asks for that one summary only: a second request would be lost with the process.
        assert!(matches!(later_request(&due, true), Ask::Refrain(_)));
        let not_yet = HoldInput {
            unserved_turns: 3,
            ..due
        };
        assert!(matches!(first_request(&not_yet), Ask::Refrain(_)));
    }

    #[test]
    fn no_catch_up_while_answers_arrive() {
        // Unserved turns alone (answers that were failures, a backoff) never hold a turn.
        let answered = HoldInput {
            abandoned: 0,
            unserved_turns: 40,
            ..input()
        };
        assert_eq!(
            first_request(&answered),
            Ask::Now {
                hold_ms: Some(1_000),
                catch_up: false
            }
        );
    }

    #[test]
    fn catch_up_turns_zero_never_holds_a_turn_beyond_the_turn_wait() {
        let off = HoldInput {
            catch_up_turns: 0,
            abandoned: 2,
            unserved_turns: 50,
            ..input()
        };
        let Ask::Refrain(why) = first_request(&off) else {
            panic!("should refrain")
        };
        assert!(why.contains("summaryCatchUpTurns 0"), "{why}");
        let fresh = HoldInput {
            catch_up_turns: 0,
            unserved_turns: 50,
            ..input()
        };
        assert_eq!(
            first_request(&fresh),
            Ask::Now {
                hold_ms: Some(1_000),
                catch_up: false
            }
        );
    }

    #[test]
    fn a_request_left_by_another_process_counts_as_abandoned_and_an_answer_resets_the_count() {
        let mut runs = SummaryRuns::default();
        assert!(!runs.observe("process-a", false, false, 50));
        runs.asked("process-a", false, 100);
        assert!(
            !runs.observe("process-a", true, false, 150),
            "a live request of this process is not abandoned"
        );
        // Another process: once the request's lease ran out unrenewed (its sender died), it was
        // abandoned.
        let expired = 100 + LEASE_MS;
        assert!(runs.observe("process-b", false, false, expired));
        assert_eq!(
            (
                runs.outstanding.clone(),
                runs.abandoned,
                runs.abandoned_at_ms
            ),
            (None, 1, Some(expired))
        );
        runs.asked("process-b", false, 300);
        assert!(
            runs.observe("process-b", false, false, 400),
            "a request this process lost track of is abandoned too"
        );
        assert_eq!(runs.abandoned, 2);
        runs.asked("process-c", false, 500);
        runs.answered("process-c", true);
        assert_eq!(
            runs.abandoned, 2,
            "a catch-up's answer says nothing about answers nobody waits for"
        );
        runs.asked("process-c", false, 600);
        runs.asked("process-d", true, 650);
        runs.answered("process-c", false);
        assert_eq!(
            runs.outstanding.as_ref().map(|o| o.runner.as_str()),
            Some("process-d"),
            "another process's request, recorded meanwhile, stays"
        );
        assert_eq!(runs.abandoned, 0);
        runs.answered("process-d", false);
        assert_eq!(runs.outstanding, None);
    }

    #[test]
    fn a_process_that_stored_more_than_one_turn_lives_long_enough_for_its_answers() {
        let mut runs = SummaryRuns {
            abandoned: 3,
            abandoned_at_ms: Some(1),
            ..SummaryRuns::default()
        };
        assert!(
            !runs.observe("one-shot", false, false, 100),
            "a process at its first turn proves nothing"
        );
        assert_eq!(runs.abandoned, 3);
        assert!(runs.observe("gateway", false, true, 200));
        assert_eq!((runs.abandoned, runs.abandoned_at_ms), (0, None));
    }

    #[test]
    fn where_a_successor_can_be_started_lost_requests_are_handed_over_instead_of_awaited_by_a_turn()
    {
        let lost = HoldInput {
            abandoned: 1,
            unserved_turns: 9,
            can_hand_over: true,
            ..input()
        };
        let Ask::HandOver(why) = first_request(&lost) else {
            panic!("should hand over")
        };
        assert!(why.contains("successor process"), "{why}");
        // Until the successor asks (or its grace runs out), no second one is started.
        let pending = HoldInput {
            hand_over_pending_ms: Some(12_000),
            ..lost
        };
        let Ask::Refrain(why) = first_request(&pending) else {
            panic!("should refrain")
        };
        assert!(why.contains("12 s ago"), "{why}");
        // While answers arrive here, nothing is handed over.
        assert_eq!(
            first_request(&HoldInput {
                abandoned: 0,
                ..lost
            }),
            Ask::Now {
                hold_ms: Some(1_000),
                catch_up: false
            }
        );
        // The successor itself asks and waits for every answer, whatever came before.
        let successor = HoldInput {
            successor: true,
            turn_waits: false,
            ..pending
        };
        assert_eq!(
            first_request(&successor),
            Ask::Now {
                hold_ms: None,
                catch_up: false
            }
        );
        assert_eq!(
            later_request(&successor, false),
            Ask::Now {
                hold_ms: None,
                catch_up: false
            }
        );
    }

    #[test]
    fn another_process_lease_keeps_its_request_live_until_it_runs_out() {
        let mut runs = SummaryRuns::default();
        runs.asked("gateway-a", true, 1_000);
        assert_eq!(
            runs.leased_elsewhere("gateway-b", 1_000 + LEASE_MS - 1)
                .map(|o| o.runner.as_str()),
            Some("gateway-a")
        );
        assert!(
            !runs.observe("gateway-b", false, false, 1_000 + LEASE_MS - 1),
            "a leased request is not abandoned"
        );
        assert!(runs.renew("gateway-a", 15_000));
        assert!(
            !runs.renew("gateway-b", 15_000),
            "only its sender renews a lease"
        );
        assert!(
            runs.leased_elsewhere("gateway-b", 15_000 + LEASE_MS - 1)
                .is_some(),
            "renewing moves the lease on"
        );
        assert!(
            runs.leased_elsewhere("gateway-a", 16_000).is_none(),
            "a runner's own request is not another's"
        );
        assert!(
            runs.observe("gateway-b", false, false, 15_000 + LEASE_MS),
            "a lease nobody renewed ran out: abandoned"
        );
        assert_eq!((runs.outstanding.clone(), runs.abandoned), (None, 1));
        // A request sent without a lease (a process at its first turn) is never live elsewhere,
        // and is not renewed into one.
        runs.asked("one-shot", false, 40_000);
        assert!(runs.leased_elsewhere("gateway-b", 40_001).is_none());
        assert!(!runs.renew("one-shot", 40_002));
        // Records written before leases never count as live elsewhere.
        let old: SummaryRuns =
            serde_json::from_str(r#"{"outstanding":{"runner":"old","sinceMs":5},"abandoned":0}"#)
                .unwrap();
        assert!(old.leased_elsewhere("new", 6).is_none());
    }

    #[test]
    fn a_hand_over_stays_pending_until_the_successor_asks_or_its_grace_runs_out() {
        let mut runs = SummaryRuns {
            abandoned: 2,
            ..SummaryRuns::default()
        };
        runs.handed_over(1_000);
        assert_eq!(runs.hand_over_pending(31_000), Some(30_000));
        assert_eq!(runs.hand_over_pending(1_000 + HAND_OVER_GRACE_MS), None);
        runs.asked("successor", true, 2_000);
        assert_eq!(
            runs.hand_over_pending(3_000),
            None,
            "the successor's request takes the hand-over"
        );
        runs.answered("successor", true);
        assert_eq!(
            runs.abandoned, 2,
            "a successor's answer says nothing of answers in one-shot processes"
        );
    }

    #[test]
    fn a_process_that_ends_with_its_turn_hands_over_from_its_first_request() {
        let one_shot = HoldInput {
            can_hand_over: true,
            ends_with_turn: true,
            ..input()
        };
        let Ask::HandOver(why) = first_request(&one_shot) else {
            panic!("should hand over")
        };
        assert!(
            why.contains("ends with its turn") && why.contains("successor"),
            "{why}"
        );
        // Once handed over, the next one-shot process neither asks nor starts a second successor.
        let pending = HoldInput {
            hand_over_pending_ms: Some(4_000),
            ..one_shot
        };
        assert!(matches!(first_request(&pending), Ask::Refrain(why) if why.contains("4 s ago")));
        // Where no successor can be started, it asks as before (a browser, an embedder).
        let alone = HoldInput {
            can_hand_over: false,
            ..one_shot
        };
        assert_eq!(
            first_request(&alone),
            Ask::Now {
                hold_ms: Some(1_000),
                catch_up: false
            }
        );
        // The successor itself asks.
        let successor = HoldInput {
            successor: true,
            ..one_shot
        };
        assert_eq!(
            first_request(&successor),
            Ask::Now {
                hold_ms: None,
                catch_up: false
            }
        );
    }
}
