//! Prompt accounting: the engine is not alone in the prompt. The model receives the host's system
//! prompt, tool schemas and envelopes (the *overhead*), the engine's view, the current user
//! prompt, and must keep room for its reply. The host decides before every turn, from the
//! provider's reported usage, whether the turn may run (OpenClaw's preflight check: projected
//! prompt ≥ window − reserve means "compact first"). This module turns what the host reported
//! into the largest view that keeps both promises:
//!
//! 1. **the reply budget stays intact**: 1.2 × (overhead + view + prompt) + reply ≤ window (the
//!    host pads its own estimate by 1.2 before it decides whether the reply still fits);
//! 2. **the next turn passes the host's check**: overhead + view + prompt + the reply to come +
//!    the next prompt < window − reserve, so compaction happens in `maintain`, not as a
//!    blocking preflight.
//!
//! Pure arithmetic on numbers the caller measured ([`HostFacts`]); it never looks at messages.
//! Every number the host does not report is left out of the bound it would tighten, so an
//! embedder that only passes a token budget gets exactly that budget.
//!
//! **How the overhead is learned and bounded.** Each answered request gives one observation:
//! the prompt the provider reported minus what we put in it (our view and the turn's own
//! messages). One report must not swing the budget — a provider that counts a history the host
//! kept elsewhere, a session switched over from another engine, one turn with a huge tool list —
//! so the overhead used is the **median of the last [`OVERHEAD_SAMPLES`] observations**: a single
//! outlier moves it not at all, a lasting change is re-learned within three turns. It is
//! **bounded** by [`MAX_OVERHEAD_FRACTION`] of the window: a host whose fixed prompt really takes
//! 60 % of the window is believed, a report that would leave the view nothing is not. The host's
//! own statement about its prompt is the budget it passes (OpenClaw: window − reserve − its
//! system prompt and the user's prompt), which bounds the view from above whatever we learned.
//! Whatever the budget comes to, the view still holds the current and the previous turn
//! (`engine::view`): the budget decides what else fits, never whether the model sees its task.

use serde::{Deserialize, Serialize};

/// The host's reserve below the window (OpenClaw 2026.9: 20,000 tokens, at most a quarter of
/// the window), where its preflight check asks for compaction.
pub const HOST_RESERVE_TOKENS: u32 = 20_000;
/// The reserve never exceeds this fraction of the window (as in the host).
pub const HOST_RESERVE_MAX_FRACTION: f64 = 0.25;
/// The host estimates a prompt at this factor of its plain count when it decides how much room
/// the reply has (OpenClaw's `SAFETY_MARGIN`), and cuts the reply budget when that estimate
/// plus the reply exceeds the window.
pub const HOST_ESTIMATE_SAFETY: f64 = 1.2;
/// Slack for the difference between our token estimate and the provider's tokenizer on the
/// parts we estimate (the view, the prompt), as a fraction of the window.
pub const ESTIMATE_MARGIN_FRACTION: f64 = 0.02;
/// Overhead observations kept; the overhead used is their median.
pub const OVERHEAD_SAMPLES: usize = 5;
/// The learned overhead never exceeds this fraction of the window.
pub const MAX_OVERHEAD_FRACTION: f64 = 0.75;

/// What the engine learned about one conversation's real prompt. Persisted per conversation;
/// every field is optional because hosts report different subsets (a browser embedder: none).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct HostFacts {
    /// The model's context window.
    pub window: Option<u32>,
    /// The reply budget the host requests (`max_tokens`).
    pub max_output: Option<u32>,
    /// Tokens of the prompt that are not our view nor the turn's own messages: system prompt,
    /// tool schemas, envelopes, and the steady part of our estimate's error.
    pub overhead: Option<u32>,
    /// Output tokens of the last reply.
    pub last_output: Option<u32>,
    /// Our estimate of the last user prompt.
    pub last_prompt: Option<u32>,
    /// Tokens of the last view we returned (our estimate).
    pub last_view: Option<u32>,
    /// The prompt tokens the provider reported for the last request.
    pub last_reported_prompt: Option<u32>,
    /// The last overhead observations, oldest first (at most [`OVERHEAD_SAMPLES`]); `overhead`
    /// is their bounded median.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub overhead_samples: Vec<u32>,
    /// The host's reserve below the window where its preflight check asks for compaction, when
    /// the host says it differs from OpenClaw 2026.9's (see [`HostFacts::preflight_threshold`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preflight_reserve: Option<u32>,
    /// The factor (in thousandths) by which the host pads its estimate of a prompt when it
    /// decides the reply's room, when it is not [`HOST_ESTIMATE_SAFETY`] (OpenClaw 2026.7's
    /// OpenAI-compatible transport: 1.25).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimate_safety_milli: Option<u32>,
}

/// What a host call reported about the prompt around the view. An absent reply budget leaves the
/// one learned before (a host reports it on some calls only); the reserve and the padding are
/// what the host says on each call that carries limits, and absent means the defaults, so facts
/// a 2026.7 host left are not applied under another host (an upgrade keeps the store).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HostLimits {
    /// The reply budget the host requests.
    pub max_output: Option<u32>,
    /// The host's preflight reserve ([`HostFacts::preflight_reserve`]).
    pub preflight_reserve: Option<u32>,
    /// The host's estimate padding, in thousandths ([`HostFacts::estimate_safety_milli`]).
    pub estimate_safety_milli: Option<u32>,
}

impl HostLimits {
    /// Sets the reported values on `facts`; true when a fact changed.
    pub fn apply_to(&self, facts: &mut HostFacts) -> bool {
        let before = (
            facts.max_output,
            facts.preflight_reserve,
            facts.estimate_safety_milli,
        );
        facts.max_output = self.max_output.or(facts.max_output);
        facts.preflight_reserve = self.preflight_reserve;
        facts.estimate_safety_milli = self.estimate_safety_milli;
        before
            != (
                facts.max_output,
                facts.preflight_reserve,
                facts.estimate_safety_milli,
            )
    }
}

/// The host's preflight threshold for a window: `window − min(20000, window / 4)`.
pub fn host_threshold(window: u32) -> u32 {
    let cap = (f64::from(window) * HOST_RESERVE_MAX_FRACTION).floor() as u32;
    window.saturating_sub(HOST_RESERVE_TOKENS.min(cap))
}

fn margin(window: u32) -> u32 {
    (f64::from(window) * ESTIMATE_MARGIN_FRACTION).ceil() as u32
}

/// A view budget and the bound that set it, for the log and `compaction_events`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ViewBudget {
    /// The view budget, in estimated tokens.
    pub tokens: u32,
    /// `host` (the budget the host passed), `reply` (promise 1) or `preflight` (promise 2).
    pub limited_by: &'static str,
}

impl HostFacts {
    /// The host's padding of its own prompt estimate: [`HOST_ESTIMATE_SAFETY`] unless the host
    /// reported another (never below 1).
    pub fn estimate_safety(&self) -> f64 {
        self.estimate_safety_milli
            .filter(|m| *m >= 1_000)
            .map_or(HOST_ESTIMATE_SAFETY, |m| f64::from(m) / 1_000.0)
    }

    /// The prompt size the view keeps the next turn under: OpenClaw 2026.9's preflight threshold
    /// ([`host_threshold`]), or None when the host makes no preflight check at this window. A
    /// host reports that with a reserve of the whole window or more (OpenClaw 2026.7: its check
    /// starts at `window − reserveTokensFloor − the memory flush's soft threshold`, 24,000 by
    /// default, and a threshold of 0 or less turns it off); the view is then bounded by the
    /// reply alone, but only when the reply budget is known: without it nothing else would keep
    /// the reply, and 2026.9's threshold still applies. A smaller reserve leaves 2026.9's
    /// threshold in place (2026.7.1's own, lower at every window above 24K, binds only its channel
    /// reply path, not the `agent` path; not modelled).
    pub fn preflight_threshold(&self, window: u32) -> Option<u32> {
        match self.preflight_reserve {
            Some(reserve) if reserve >= window && self.max_output.is_some() => None,
            _ => Some(host_threshold(window)),
        }
    }

    /// The largest view for a call whose host budget is `host_budget` and whose current user
    /// prompt is `prompt_tokens` (our estimate; 0 when unknown).
    pub fn view_budget(&self, host_budget: u32, prompt_tokens: u32) -> ViewBudget {
        let mut best = ViewBudget {
            tokens: host_budget,
            limited_by: "host",
        };
        let Some(window) = self.window.filter(|w| *w > 0) else {
            return best;
        };
        let overhead = self.overhead.unwrap_or(0);
        let reply = self.max_output.unwrap_or(0).min(window);
        let fixed = overhead
            .saturating_add(prompt_tokens)
            .saturating_add(margin(window));
        let room_for_prompt =
            (f64::from(window.saturating_sub(reply)) / self.estimate_safety()).floor() as u32;
        let fits_reply = room_for_prompt.saturating_sub(fixed);
        // The reply to come is bounded by the reply budget; the last one is the best guess.
        let next_reply =
            self.last_output
                .unwrap_or(reply)
                .min(if reply > 0 { reply } else { u32::MAX });
        let next_prompt = self.last_prompt.unwrap_or(0).max(prompt_tokens);
        let passes_preflight = self.preflight_threshold(window).map(|threshold| {
            threshold
                .saturating_sub(fixed)
                .saturating_sub(next_reply)
                .saturating_sub(next_prompt)
        });
        for (tokens, limited_by) in [(Some(fits_reply), "reply"), (passes_preflight, "preflight")] {
            let Some(tokens) = tokens else { continue };
            if tokens < best.tokens {
                best = ViewBudget { tokens, limited_by };
            }
        }
        best
    }

    /// Learns from one answered request: the provider counted `reported_prompt` tokens for a
    /// prompt made of the overhead, our view of `view_tokens` and `turn_tokens` of the turn's
    /// own messages before the request (our estimates).
    pub fn learn_from_usage(&mut self, reported_prompt: u32, view_tokens: u32, turn_tokens: u32) {
        self.observe_overhead(
            reported_prompt.saturating_sub(view_tokens.saturating_add(turn_tokens)),
        );
        self.last_reported_prompt = Some(reported_prompt);
    }

    /// Adds one overhead observation and sets the overhead to the bounded median of the last
    /// [`OVERHEAD_SAMPLES`] (see the module doc). Facts stored before samples were kept start
    /// from the overhead they had.
    fn observe_overhead(&mut self, observed: u32) {
        if self.overhead_samples.is_empty() {
            self.overhead_samples.extend(self.overhead);
        }
        self.overhead_samples.push(observed);
        let excess = self.overhead_samples.len().saturating_sub(OVERHEAD_SAMPLES);
        self.overhead_samples.drain(..excess);
        let mut sorted = self.overhead_samples.clone();
        sorted.sort_unstable();
        // The lower median: with two observations, the new one does not replace the old.
        let median = sorted[(sorted.len() - 1) / 2];
        self.overhead = Some(self.bounded(median));
    }

    /// An overhead within [`MAX_OVERHEAD_FRACTION`] of the window (when the window is known).
    fn bounded(&self, overhead: u32) -> u32 {
        match self.window.filter(|w| *w > 0) {
            Some(window) => overhead.min((f64::from(window) * MAX_OVERHEAD_FRACTION) as u32),
            None => overhead,
        }
    }

    /// Learns from a forced compaction: the host counts `host_count` tokens where it sees a
    /// prompt over its threshold, while a view of `view_tokens` under our accounting would make
    /// `predicted` tokens. A host count above our prediction is overhead we did not know about.
    pub fn learn_from_host_count(&mut self, host_count: u32, view_tokens: u32) {
        if self.window.is_none() {
            return;
        }
        let predicted = self.predicted_prompt(view_tokens);
        if host_count > predicted {
            // The host's own count of a prompt it finds too large is not an outlier to vote
            // down: it holds at once, and stays an observation for the median.
            let observed = self
                .overhead
                .unwrap_or(0)
                .saturating_add(host_count - predicted);
            self.observe_overhead(observed);
            self.overhead = self.overhead.map(|o| o.max(self.bounded(observed)));
        }
    }

    /// What the host's next preflight projection should come to with a view of `view_tokens`
    /// (the view as it stands now, last reply included): overhead, the view, and a next prompt
    /// like the last one.
    pub fn predicted_prompt(&self, view_tokens: u32) -> u32 {
        self.overhead
            .unwrap_or(0)
            .saturating_add(view_tokens)
            .saturating_add(self.last_prompt.unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(window: u32, max_output: u32, overhead: u32) -> HostFacts {
        HostFacts {
            window: Some(window),
            max_output: Some(max_output),
            overhead: Some(overhead),
            ..HostFacts::default()
        }
    }

    #[test]
    fn host_threshold_keeps_a_quarter_for_small_windows_and_20000_for_large() {
        assert_eq!(host_threshold(8_000), 6_000);
        assert_eq!(host_threshold(32_000), 24_000);
        assert_eq!(host_threshold(128_000), 108_000);
        assert_eq!(host_threshold(0), 0);
    }

    #[test]
    fn without_host_facts_the_host_budget_is_the_budget() {
        let b = HostFacts::default().view_budget(5_000, 300);
        assert_eq!(
            b,
            ViewBudget {
                tokens: 5_000,
                limited_by: "host"
            }
        );
    }

    #[test]
    fn the_view_leaves_room_for_overhead_prompt_reply_and_the_next_turn() {
        let mut f = facts(8_000, 1_024, 3_000);
        f.last_output = Some(40);
        f.last_prompt = Some(600);
        let b = f.view_budget(100_000, 600);
        // preflight: 6000 − (3000 + 600 + 160) − 40 − 600 = 1600; reply: (8000 − 1024) / 1.2 − 3760 = 2053.
        assert_eq!(
            b,
            ViewBudget {
                tokens: 1_600,
                limited_by: "preflight"
            }
        );
        assert!(
            f64::from(3_000 + b.tokens + 600) * HOST_ESTIMATE_SAFETY + 1_024.0 <= 8_000.0,
            "the reply budget stays intact"
        );
        assert!(
            3_000 + b.tokens + 600 + 40 + 600 < host_threshold(8_000),
            "the next turn passes the preflight check"
        );
    }

    /// OpenClaw 2026.7.1's gateway at 8K (issue 42): a 3,826-token host prompt, 2,400-char
    /// notes. Under 2026.9's threshold (6,000) the view beside the current and previous turn
    /// (1,227 tokens) and the omission line (64) has no room for one summary (183); 2026.7.1
    /// makes no preflight check below a 24K window, and its reply bound (a 1,024-token reply,
    /// its estimate padded by 1.25) leaves room for one.
    #[test]
    fn a_host_without_a_preflight_check_at_this_window_bounds_the_view_by_the_reply_alone() {
        let mut f = facts(8_000, 1_024, 3_826);
        f.last_output = Some(15);
        f.last_prompt = Some(604);
        let under_2026_9 = f.view_budget(8_000, 0);
        assert_eq!(
            under_2026_9,
            ViewBudget {
                tokens: 1_395,
                limited_by: "preflight"
            }
        );
        assert!(under_2026_9.tokens < 1_227 + 64 + 183, "no summary fits");
        let limits = HostLimits {
            max_output: Some(1_024),
            preflight_reserve: Some(24_000),
            estimate_safety_milli: Some(1_250),
        };
        assert!(limits.apply_to(&mut f));
        assert!(
            !limits.apply_to(&mut f),
            "the same limits again change nothing"
        );
        // The same store under a host that reports neither (2026.9): its defaults, not 2026.7's.
        let mut upgraded = f.clone();
        assert!(HostLimits::default().apply_to(&mut upgraded));
        assert_eq!(
            upgraded.max_output,
            Some(1_024),
            "the reply budget learned stays"
        );
        assert_eq!(upgraded.preflight_threshold(8_000), Some(6_000));
        assert!((upgraded.estimate_safety() - HOST_ESTIMATE_SAFETY).abs() < f64::EPSILON);
        assert_eq!(f.preflight_threshold(8_000), None);
        let b = f.view_budget(8_000, 0);
        // (8000 − 1024) / 1.25 − (3826 + 160) = 1594.
        assert_eq!(
            b,
            ViewBudget {
                tokens: 1_594,
                limited_by: "reply"
            }
        );
        assert!(b.tokens >= 1_227 + 64 + 183, "a summary fits");
        assert!(
            f64::from(3_826 + b.tokens) * 1.25 + 1_024.0 <= 8_000.0,
            "the reply budget stays intact under the host's own padding"
        );
    }

    #[test]
    fn an_estimate_padding_below_one_is_not_believed() {
        let mut f = facts(8_000, 1_024, 3_000);
        f.estimate_safety_milli = Some(500);
        assert!((f.estimate_safety() - HOST_ESTIMATE_SAFETY).abs() < f64::EPSILON);
        f.estimate_safety_milli = Some(1_250);
        assert!((f.estimate_safety() - 1.25).abs() < f64::EPSILON);
    }

    #[test]
    fn a_host_reserve_below_the_window_or_no_reply_budget_keeps_2026_9s_threshold() {
        let mut f = facts(32_000, 1_024, 3_000);
        f.preflight_reserve = Some(24_000);
        assert_eq!(f.preflight_threshold(32_000), Some(24_000));
        assert_eq!(f.view_budget(100_000, 0).limited_by, "preflight");
        assert_eq!(
            f.view_budget(100_000, 0).tokens,
            24_000 - 3_000 - 640 - 1_024
        );
        // A reserve of the whole window with no reply budget known: nothing but the 2026.9
        // threshold would keep the reply, so it still applies.
        let mut f = HostFacts {
            window: Some(8_000),
            overhead: Some(3_000),
            preflight_reserve: Some(24_000),
            ..HostFacts::default()
        };
        assert_eq!(f.preflight_threshold(8_000), Some(host_threshold(8_000)));
        f.preflight_reserve = None;
        assert_eq!(f.preflight_threshold(8_000), Some(6_000));
    }

    #[test]
    fn a_huge_reply_budget_binds_before_the_preflight_reserve() {
        let mut f = facts(128_000, 100_000, 10_000);
        f.last_output = Some(500);
        let b = f.view_budget(200_000, 0);
        assert_eq!(b.limited_by, "reply");
        assert_eq!(b.tokens, 23_333 - 10_000 - 2_560);
    }

    #[test]
    fn overhead_larger_than_the_window_gives_an_empty_view_not_a_panic() {
        let b = facts(8_000, 1_024, 50_000).view_budget(4_000, u32::MAX);
        assert_eq!(b.tokens, 0);
    }

    #[test]
    fn usage_teaches_the_overhead_and_a_higher_host_count_raises_it() {
        let mut f = HostFacts {
            window: Some(8_000),
            ..HostFacts::default()
        };
        f.learn_from_usage(4_000, 1_000, 600);
        assert_eq!(f.overhead, Some(2_400));
        f.learn_from_usage(100, 1_000, 600);
        f.learn_from_usage(100, 1_000, 600);
        assert_eq!(
            f.overhead,
            Some(0),
            "a report below our estimate is an observation of no overhead, never negative"
        );
        let mut f = HostFacts {
            window: Some(8_000),
            overhead: Some(2_000),
            last_output: Some(50),
            last_prompt: Some(600),
            ..HostFacts::default()
        };
        f.learn_from_host_count(7_000, 3_000);
        // predicted 2000 + 3000 + 600 = 5600: 1400 more overhead than we knew, at once.
        assert_eq!(f.overhead, Some(3_400));
        f.learn_from_host_count(1_000, 3_000);
        assert_eq!(
            f.overhead,
            Some(3_400),
            "a lower host count never lowers the overhead"
        );
    }

    #[test]
    fn one_report_does_not_swing_the_overhead_and_a_lasting_change_is_relearned() {
        let mut f = HostFacts {
            window: Some(128_000),
            ..HostFacts::default()
        };
        for _ in 0..4 {
            f.learn_from_usage(15_000, 9_000, 1_000);
        }
        assert_eq!(f.overhead, Some(5_000));
        // One turn reports a prompt of 100K (a history the provider counted elsewhere).
        f.learn_from_usage(100_000, 9_000, 1_000);
        assert_eq!(f.overhead, Some(5_000), "one outlier moves nothing");
        assert!(f.view_budget(128_000, 500).tokens > 90_000);
        // The host's prompt really grew (many tools): learned within three reports.
        f.learn_from_usage(40_000, 9_000, 1_000);
        assert_eq!(f.overhead, Some(5_000));
        f.learn_from_usage(40_000, 9_000, 1_000);
        assert_eq!(f.overhead, Some(30_000));
        assert_eq!(f.overhead_samples.len(), OVERHEAD_SAMPLES);
    }

    #[test]
    fn the_overhead_is_bounded_by_a_share_of_the_window_and_a_real_60_percent_is_believed() {
        let mut f = HostFacts {
            window: Some(10_000),
            ..HostFacts::default()
        };
        f.learn_from_usage(6_500, 400, 100);
        assert_eq!(
            f.overhead,
            Some(6_000),
            "a fixed prompt of 60 % is believed"
        );
        for _ in 0..3 {
            f.learn_from_usage(50_000, 400, 100);
        }
        assert_eq!(f.overhead, Some(7_500), "never above 75 % of the window");
        // Reports from 0 to over the window never panic and never exceed the bound.
        for reported in [0, 1, 5_000, 9_999, 10_000, 10_001, 200_000, u32::MAX] {
            f.learn_from_usage(reported, 400, 100);
            assert!(f.overhead.unwrap() <= 7_500, "{reported}");
            let _ = f.view_budget(10_000, 300);
        }
    }

    #[test]
    fn facts_round_trip_and_tolerate_missing_fields() {
        let f = facts(8_000, 512, 3_000);
        let json = serde_json::to_string(&f).unwrap();
        assert_eq!(serde_json::from_str::<HostFacts>(&json).unwrap(), f);
        assert_eq!(
            serde_json::from_str::<HostFacts>("{}").unwrap(),
            HostFacts::default()
        );
    }
}
