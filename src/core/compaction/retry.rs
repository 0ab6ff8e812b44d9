//! What happens after a summary was given up (seed 01: "skip and retry next turn").
//!
//! - An answer that was not a usable summary (empty, a loop, our own markup, ...) is retried
//!   on the **next turn**: waiting would not make the same request better, and every turn
//!   without a summary pushes the view towards a sliding window.
//! - An answer that was too long for its chunk (not shorter, no saving in the view, cut off at
//!   the output limit) raises the chunk floor: the next attempt waits for a chunk at least twice
//!   as large and three times the answer's size, because a summarizer's answers do not shrink
//!   with its input. The floor is what the summarizer has shown it needs, so it outlives a
//!   success. (Halving the chunk, as before, made the next answer *less* likely to pay off.)
//! - A provider that failed to answer (an error, a timeout) backs off in time, doubling up to
//!   the cap, but a probe runs after [`PROBE_AFTER_TURNS`] turns whatever the clock says, so a
//!   busy session (tool loops make turns seconds apart) never goes unsummarized for more than a
//!   few turns once the provider answers again.
//! - A request whose answer was unusable is never sent again unchanged at once: the same prompt
//!   (same chunk, same previous summary, same limits) waits the backoff, doubling with every
//!   repeat, and no turn probe shortens it, because a model that looped or ran long on a prompt
//!   tends to do so again. Anything that changes the request (a larger chunk once the budget
//!   allows it, new sources) is sent at once.
//! - Refused credentials count towards the breaker; once it is open only one probe per cooldown
//!   runs, forced or not, because repeating a refused credential only repeats the refusal.
//!
//! [`RetryState`] is plain serde data kept in the database, so a restart forgets nothing. Pure
//! transitions; time arrives as `now_ms`.

use serde::{Deserialize, Serialize};

/// Turns after a provider failure when one attempt runs despite the backoff.
pub const PROBE_AFTER_TURNS: u32 = 3;

/// How a failure counts toward backoff and the breaker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RetryKind {
    /// Credentials refused.
    Auth,
    /// The provider failed to answer: an error, a timeout, an outage, a rate limit.
    Provider,
    /// The provider answered, but not with a usable summary.
    Output,
}

/// Retry timing, from [`super::config::CompactionConfig::backoff_policy`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BackoffPolicy {
    /// Backoff after the first failure, in ms; it doubles with each further failure.
    pub base_ms: u64,
    /// The longest backoff, in ms.
    pub max_ms: u64,
    /// Consecutive auth failures that open the breaker.
    pub breaker_after: u32,
}

/// Persisted per conversation: consecutive failures, the auth streak, when the next attempt
/// may run, the turns since the last failure, and whether the breaker is open.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RetryState {
    /// Failed compactions in a row since the last success.
    pub consecutive_failures: u32,
    /// Auth failures since the last success. Other failures neither add to nor reset it: a
    /// timeout says nothing about whether the credentials work.
    pub auth_failures: u32,
    /// No attempt runs before this time (ms since the epoch) unless the provider probe is due;
    /// `None`: no backoff.
    pub next_retry_at_ms: Option<i64>,
    /// Auth failures reached the breaker's limit: attempts wait the longest backoff and no probe
    /// runs, until a success closes it.
    pub breaker_open: bool,
    /// Turns stored since the last failure (for the provider probe).
    #[serde(default)]
    pub turns_since_failure: u32,
    /// The smallest leaf chunk the next attempt may use, after answers too long for their chunk
    /// (0: no floor beyond the payoff minimum).
    #[serde(default)]
    pub chunk_floor: u32,
    /// The fingerprint of the last request whose answers were all unusable, how many times in a
    /// row that same request was given up, and when it may be sent again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unusable_request: Option<String>,
    /// How many times in a row `unusable_request` was given up.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unusable_repeats: u32,
    /// When `unusable_request` may be sent again (ms since the epoch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resend_at_ms: Option<i64>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// Doubling delay after `failures` failures in a row: `base`, `2 base`, ... up to `max`.
fn doubling_delay(failures: u32, policy: &BackoffPolicy) -> i64 {
    let max = policy.max_ms.max(policy.base_ms);
    let doublings = failures.saturating_sub(1).min(63);
    i64::try_from(policy.base_ms.saturating_mul(1u64 << doublings).min(max)).unwrap_or(i64::MAX)
}

impl RetryState {
    /// Records a failed compaction at `now_ms`.
    pub fn on_failure(&mut self, kind: RetryKind, now_ms: i64, policy: &BackoffPolicy) {
        self.consecutive_failures = self.consecutive_failures.saturating_add(1);
        self.turns_since_failure = 0;
        if kind == RetryKind::Auth {
            self.auth_failures = self.auth_failures.saturating_add(1);
        }
        self.breaker_open = self.auth_failures >= policy.breaker_after.max(1);
        if kind == RetryKind::Output && !self.breaker_open {
            self.next_retry_at_ms = None;
            return;
        }
        let delay = if self.breaker_open {
            i64::try_from(policy.max_ms.max(policy.base_ms)).unwrap_or(i64::MAX)
        } else {
            doubling_delay(self.consecutive_failures, policy)
        };
        self.next_retry_at_ms = Some(now_ms.saturating_add(delay));
    }

    /// Every answer to the request `fingerprint` was unusable: that same request waits the
    /// backoff before it is sent again, longer with each repeat.
    pub fn on_unusable_request(&mut self, fingerprint: &str, now_ms: i64, policy: &BackoffPolicy) {
        if self.unusable_request.as_deref() == Some(fingerprint) {
            self.unusable_repeats = self.unusable_repeats.saturating_add(1);
        } else {
            self.unusable_request = Some(fingerprint.to_owned());
            self.unusable_repeats = 1;
        }
        self.resend_at_ms =
            Some(now_ms.saturating_add(doubling_delay(self.unusable_repeats, policy)));
    }

    /// When the request `fingerprint` may be sent again, if it may not be sent now: only the
    /// same request waits, and only until its time is up.
    pub fn resend_blocked_until(&self, fingerprint: &str, now_ms: i64) -> Option<i64> {
        if self.unusable_request.as_deref() != Some(fingerprint) {
            return None;
        }
        self.resend_at_ms.filter(|at| now_ms < *at)
    }

    /// A compaction succeeded: every counter resets and the breaker closes. The chunk floor
    /// stays: it records how long this summarizer's answers run.
    pub fn on_success(&mut self) {
        *self = RetryState {
            chunk_floor: self.chunk_floor,
            ..RetryState::default()
        };
    }

    /// An answer of `answer_tokens` was too long for a chunk of `chunk_tokens`: the next chunk
    /// must be at least twice that chunk and three times the answer.
    pub fn on_answer_too_long(&mut self, chunk_tokens: u32, answer_tokens: u32) {
        let needed = chunk_tokens
            .saturating_mul(2)
            .max(answer_tokens.saturating_mul(3));
        self.chunk_floor = self.chunk_floor.max(needed);
    }

    /// A turn was stored: counts towards the provider probe.
    pub fn on_turn(&mut self) {
        if self.consecutive_failures > 0 {
            self.turns_since_failure = self.turns_since_failure.saturating_add(1);
        }
    }

    /// Whether the summarizer may be asked now. Forced compactions follow the same rule: one
    /// that may not summarize still shrinks the view.
    pub fn may_attempt(&self, now_ms: i64) -> bool {
        let time_is_up = self.next_retry_at_ms.is_none_or(|at| now_ms >= at);
        time_is_up || (!self.breaker_open && self.turns_since_failure >= PROBE_AFTER_TURNS)
    }

    /// The smallest chunk the next leaf attempt may use: the payoff minimum `base`, raised to
    /// the floor, but never above the largest chunk `max_chunk` the budget allows.
    pub fn chunk_min(&self, base: u32, max_chunk: u32) -> u32 {
        base.max(self.chunk_floor).min(max_chunk)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const POLICY: BackoffPolicy = BackoffPolicy {
        base_ms: 30_000,
        max_ms: 3_600_000,
        breaker_after: 3,
    };

    #[test]
    fn provider_failures_back_off_doubling_up_to_the_cap_and_success_resets_it() {
        let mut s = RetryState::default();
        assert!(s.may_attempt(0));
        let mut delays = vec![];
        for _ in 0..10 {
            s.on_failure(RetryKind::Provider, 1_000, &POLICY);
            delays.push(s.next_retry_at_ms.unwrap() - 1_000);
        }
        assert_eq!(&delays[..4], &[30_000, 60_000, 120_000, 240_000]);
        assert_eq!(*delays.last().unwrap(), 3_600_000);
        assert!(!s.may_attempt(1_000 + 3_599_999));
        assert!(s.may_attempt(1_000 + 3_600_000));
        s.on_success();
        assert_eq!(s, RetryState::default());
    }

    #[test]
    fn a_provider_that_answers_again_is_probed_within_a_few_turns_whatever_the_backoff() {
        let mut s = RetryState::default();
        for _ in 0..10 {
            s.on_failure(RetryKind::Provider, 0, &POLICY);
        }
        for turn in 1..=PROBE_AFTER_TURNS {
            assert!(!s.may_attempt(1_000), "probe too early at turn {turn}");
            s.on_turn();
        }
        assert!(
            s.may_attempt(1_000),
            "a probe after {PROBE_AFTER_TURNS} turns"
        );
        s.on_failure(RetryKind::Provider, 1_000, &POLICY);
        assert!(
            !s.may_attempt(1_001),
            "a failed probe starts the count again"
        );
    }

    #[test]
    fn an_unusable_answer_is_retried_next_turn_without_waiting_or_shrinking_the_chunk() {
        let mut s = RetryState::default();
        for _ in 0..5 {
            s.on_failure(RetryKind::Output, 0, &POLICY);
        }
        assert!(
            s.may_attempt(0),
            "no waiting in time after an answer that was not a summary"
        );
        assert_eq!(
            s.chunk_min(640, 3_000),
            640,
            "a loop or an echo says nothing about the chunk's size"
        );
    }

    #[test]
    fn an_answer_too_long_for_its_chunk_raises_the_floor_and_the_floor_outlives_success() {
        let mut s = RetryState::default();
        s.on_answer_too_long(700, 420);
        assert_eq!(
            s.chunk_min(640, 3_000),
            1_400,
            "twice the chunk that was too small"
        );
        s.on_answer_too_long(1_400, 900);
        assert_eq!(
            s.chunk_min(640, 8_000),
            2_800,
            "twice 1,400 beats three times 900"
        );
        s.on_answer_too_long(100, 1_500);
        assert_eq!(
            s.chunk_min(640, 8_000),
            4_500,
            "three times an answer that long"
        );
        assert_eq!(
            s.chunk_min(640, 3_000),
            3_000,
            "never above the largest chunk the budget allows"
        );
        s.on_success();
        assert_eq!(
            s.chunk_min(640, 8_000),
            4_500,
            "a success keeps what the summarizer showed it needs"
        );
    }

    #[test]
    fn the_same_request_given_up_waits_doubling_while_a_changed_one_is_sent_at_once() {
        let mut s = RetryState::default();
        s.on_unusable_request("a", 0, &POLICY);
        assert_eq!(s.resend_blocked_until("a", 1), Some(30_000));
        assert_eq!(
            s.resend_blocked_until("b", 1),
            None,
            "a changed request is not held"
        );
        assert_eq!(s.resend_blocked_until("a", 30_000), None);
        s.on_unusable_request("a", 30_000, &POLICY);
        assert_eq!(
            s.resend_blocked_until("a", 30_000),
            Some(90_000),
            "the second repeat waits twice as long"
        );
        for _ in 0..PROBE_AFTER_TURNS + 2 {
            s.on_turn();
        }
        assert!(s.may_attempt(30_001), "other requests run");
        assert_eq!(
            s.resend_blocked_until("a", 30_001),
            Some(90_000),
            "no turn probe shortens the wait for the same request"
        );
        s.on_unusable_request("b", 40_000, &POLICY);
        assert_eq!(
            (s.unusable_repeats, s.resend_blocked_until("b", 40_001)),
            (1, Some(70_000)),
            "a new request starts the count again"
        );
        s.on_success();
        assert_eq!(s.resend_blocked_until("b", 40_001), None);
    }

    #[test]
    fn breaker_opens_after_repeated_auth_failures_and_blocks_forced_runs_and_probes() {
        let mut s = RetryState::default();
        for i in 0..3 {
            assert!(!s.breaker_open, "open too early at {i}");
            s.on_failure(RetryKind::Auth, 0, &POLICY);
        }
        assert!(s.breaker_open);
        assert_eq!(s.next_retry_at_ms, Some(3_600_000));
        assert!(!s.may_attempt(10));
        for _ in 0..10 {
            s.on_turn();
        }
        assert!(
            !s.may_attempt(10),
            "turn probes do not bypass an open breaker"
        );
        assert!(s.may_attempt(3_600_000), "one probe after the cooldown");
        s.on_failure(RetryKind::Provider, 3_600_000, &POLICY);
        assert!(
            s.breaker_open,
            "a timeout does not prove the credentials work"
        );
        s.on_success();
        assert!(!s.breaker_open);
    }

    #[test]
    fn retry_state_round_trips_reads_older_rows_and_survives_extremes() {
        let mut s = RetryState::default();
        for _ in 0..200 {
            s.on_failure(
                RetryKind::Auth,
                i64::MAX - 5,
                &BackoffPolicy {
                    base_ms: u64::MAX,
                    max_ms: u64::MAX,
                    breaker_after: 1,
                },
            );
        }
        assert_eq!(s.next_retry_at_ms, Some(i64::MAX));
        let json = serde_json::to_string(&s).unwrap();
        assert!(
            json.contains("\"consecutiveFailures\":200") && json.contains("\"breakerOpen\":true"),
            "{json}"
        );
        assert_eq!(serde_json::from_str::<RetryState>(&json).unwrap(), s);
        let old =
            r#"{"consecutiveFailures":2,"authFailures":0,"nextRetryAtMs":5,"breakerOpen":false}"#;
        assert_eq!(
            serde_json::from_str::<RetryState>(old)
                .unwrap()
                .turns_since_failure,
            0
        );
    }
}
