//! Whether a summarizer's output may become a summary, and what happens when it may not
//! (seeds 01 and 02).
//!
//! [`Escalation`] is a small state machine the engine drives: it asks for a level, the engine
//! runs the summarizer at that level, and the machine classifies what came back. Normal goes to
//! aggressive only when the normal output was too big (not shorter than its input, or far over
//! the length asked for): a stricter prompt can fix that, but it cannot fix an exception, a
//! timeout, an empty answer or an answer that echoes our own markup. Anything else gives up.
//!
//! Before its size is judged, an answer must be a summary at all ([`super::plausibility`]): an
//! HTML error page, a JSON error body, a refusal or the input sent back is a failure with a
//! reason that says which, never a stored summary.
//!
//! An answer is judged on what it *is*, not on where its words come from: lines that are the
//! prompt's own template are taken out first ([`Instructions::strip_template`]) and the rest is
//! judged, and so are the lines of the previous summary carried forward (it is in the view
//! already; the prompt asks not to repeat it). A rest that is a real reduction of its input (at
//! most [`REDUCTION_PERCENT`] % of its tokens) is a summary even when it quotes its input line
//! for line, since a selection of the input's lines is an extract; a rest that is not, and
//! copies [`UNREDUCED_ECHO_PERCENT`] % of its word runs from the transcript, is an echo. Loops
//! and character runs are never summaries, at any level and from any summarizer.
//!
//! Giving up produces nothing. There is deliberately no code here that builds summary text:
//! the only text a [`SummaryDraft`] can hold is a summarizer's output (after the caller's
//! `finish` formatting), so a truncated or placeholder summary cannot exist. The engine may then
//! run the extractive summarizer through an escalation of its own ([`Escalation::fallback`]);
//! what that accepts is stored at level [`Level::Fallback`], to be redone by the summarizer.
//!
//! What happens after a give-up (backoff, breaker, retry on the next turn) is [`super::retry`].

use serde::Serialize;

use super::degenerate::{char_run, repetition_loop, Instructions};
pub use super::failure::Failure;
use super::format::contains_our_markup;
pub use super::level::{Level, OutputLimits};
use super::plausibility::{check_shape, EchoFingerprint};
use super::reasoning::strip_reasoning;
use super::retry::RetryKind;
use super::{ErrorKind, SummarizerError, SummarizerOutput, SummaryDraft};
use crate::core::tokens::estimate_text;

/// One attempt and its failure, for telemetry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FailedAttempt {
    /// The level the summarizer ran at.
    pub level: Level,
    /// Why its output was not accepted.
    pub failure: Failure,
}

/// The end of an escalation that produced nothing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GiveUp {
    /// Every attempt, in order.
    pub attempts: Vec<FailedAttempt>,
}

impl GiveUp {
    /// The failure that ended it (the last attempt's).
    pub fn last_failure(&self) -> Option<&Failure> {
        self.attempts.last().map(|a| &a.failure)
    }

    /// Why it gave up, in words for the log (the last failure's reason).
    pub fn reason(&self) -> String {
        self.last_failure()
            .map_or_else(|| "no attempt was made".to_owned(), Failure::reason)
    }

    /// How the give-up counts toward backoff and the breaker: as the last failure does, or as an
    /// output failure when there was no attempt.
    pub fn retry_kind(&self) -> RetryKind {
        self.last_failure()
            .map_or(RetryKind::Output, Failure::retry_kind)
    }

    /// The log line operators look for (seed 02): it says the safety net worked.
    pub fn log_line(&self, preserved_messages: u64) -> String {
        failure_log_line(&self.reason(), preserved_messages)
    }
}

/// `compaction failed (<reason>); all N original messages preserved`.
pub fn failure_log_line(reason: &str, preserved_messages: u64) -> String {
    format!("compaction failed ({reason}); all {preserved_messages} original messages preserved")
}

/// What the engine does next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Run the summarizer at this level and pass its output to [`Escalation::on_output`].
    Run(Level),
    /// The output passed every check: store this summary.
    Accept(SummaryDraft),
    /// No level produced an acceptable summary: store nothing.
    GiveUp(GiveUp),
}

/// Token estimates differ from a provider's tokenizer; only a gross overshoot is a failure.
pub const OVER_CAP_FACTOR: u32 = 2;

/// An answer at most this share of its input's tokens is a reduction: it is not judged as an
/// echo however much of it is quoted (a selection of a third of the input's lines is an
/// extract). A third: the normal level asks for at most 40 % of a small input, and a real
/// summary comes out well under it; the echoes seen copy most of the transcript back.
pub const REDUCTION_PERCENT: u32 = 33;

/// An answer that is no such reduction and copies at least this share of its word runs from
/// the input is the input sent back (an echo).
pub const UNREDUCED_ECHO_PERCENT: u32 = 50;

/// One summarization: normal, then aggressive if normal came out too big, then give up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Escalation {
    input_tokens: u32,
    limits: OutputLimits,
    summarizer: String,
    level: Level,
    attempts: Vec<FailedAttempt>,
    finished: bool,
    /// Drafts are stored at [`Level::Fallback`] (see [`Escalation::fallback`]).
    fallback: bool,
    echo: EchoFingerprint,
    instructions: Instructions,
    /// What the replaced range costs in the view now, and what a summary's framing adds to its
    /// text there, when the caller knows (a summary must save view tokens, not only be shorter
    /// than its source text).
    view_cost: Option<ViewCost>,
}

/// The view tokens a summary must come in under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ViewCost {
    /// Tokens the range to replace holds in the view.
    pub range_tokens: u32,
    /// Tokens a summary item adds around its text (wrapper, recovery line, message overhead).
    pub framing_tokens: u32,
}

impl Escalation {
    /// `input_tokens` is the estimate of the source text; `summarizer` names who answers.
    pub fn new(input_tokens: u32, limits: OutputLimits, summarizer: impl Into<String>) -> Self {
        Escalation {
            input_tokens,
            limits,
            summarizer: summarizer.into(),
            level: Level::Normal,
            attempts: Vec::new(),
            finished: false,
            fallback: false,
            echo: EchoFingerprint::default(),
            instructions: Instructions::default(),
            view_cost: None,
        }
    }

    /// The extractive summarizer run for a range the summarizer gave no usable answer for: the
    /// same checks, normal then aggressive, and what it accepts is a draft at
    /// [`Level::Fallback`].
    pub fn fallback(input_tokens: u32, limits: OutputLimits) -> Self {
        Escalation {
            fallback: true,
            ..Escalation::new(input_tokens, limits, super::extractive::NAME)
        }
    }

    /// Judges answers against what the summary would cost in the view.
    pub fn with_view_cost(mut self, cost: ViewCost) -> Self {
        self.view_cost = Some(cost);
        self
    }

    /// Remembers the transcript a leaf prompt sends and the instructions of any prompt, so an
    /// answer that repeats either is rejected. The extractive summarizer is exempt: it is made
    /// of input sentences by design.
    pub fn with_prompt(mut self, prompt: &str) -> Self {
        if self.summarizer != super::extractive::NAME {
            self.echo = EchoFingerprint::of_leaf_prompt(prompt);
            self.instructions = Instructions::of_prompt(prompt, &super::prompts::SHAPE_HINTS);
        }
        self
    }

    /// The first step: run at normal level, or give up at once on an empty source.
    pub fn start(&mut self) -> Step {
        if self.input_tokens == 0 {
            return self.fail(Failure::EmptySource);
        }
        Step::Run(self.level)
    }

    /// Classifies the output of the attempt at the current level. `finish` turns the raw text
    /// into what would be stored (the caller's formatting, e.g. [`super::format::finalize`]);
    /// it runs only on output that passed the raw checks.
    pub fn on_output(
        &mut self,
        output: SummarizerOutput,
        finish: impl FnOnce(&str) -> String,
    ) -> Step {
        if self.finished {
            return Step::GiveUp(GiveUp {
                attempts: self.attempts.clone(),
            });
        }
        match self.classify(output, finish) {
            Ok((text, tokens)) => {
                self.finished = true;
                Step::Accept(SummaryDraft {
                    text,
                    tokens,
                    level: if self.fallback {
                        Level::Fallback
                    } else {
                        self.level
                    },
                    summarizer: self.summarizer.clone(),
                })
            }
            Err(failure) if failure.escalates() && self.level == Level::Normal => {
                self.attempts.push(FailedAttempt {
                    level: self.level,
                    failure,
                });
                self.level = Level::Aggressive;
                Step::Run(self.level)
            }
            Err(failure) => self.fail(failure),
        }
    }

    /// Attempts that failed so far.
    pub fn attempts(&self) -> &[FailedAttempt] {
        &self.attempts
    }

    fn fail(&mut self, failure: Failure) -> Step {
        self.attempts.push(FailedAttempt {
            level: self.level,
            failure,
        });
        self.finished = true;
        Step::GiveUp(GiveUp {
            attempts: self.attempts.clone(),
        })
    }

    fn classify(
        &self,
        output: SummarizerOutput,
        finish: impl FnOnce(&str) -> String,
    ) -> Result<(String, u32), Failure> {
        let raw = output.map_err(|SummarizerError { kind, message }| match kind {
            ErrorKind::Truncated => Failure::Truncated {
                output_tokens: estimate_text(&message),
            },
            kind => Failure::Summarizer { kind, message },
        })?;
        // Reasoning is never part of a summary; what is left is judged as the answer.
        let stripped = strip_reasoning(&raw);
        if stripped.text.is_empty() {
            return Err(match stripped.reasoning_chars {
                0 => Failure::EmptyOutput,
                chars => Failure::ReasoningOnly {
                    reasoning_chars: u32::try_from(chars).unwrap_or(u32::MAX),
                },
            });
        }
        let raw = stripped.text;
        if contains_our_markup(&raw) {
            return Err(Failure::OurMarkup);
        }
        if let Some(why) = check_shape(&raw) {
            return Err(why.into());
        }
        // The template's own lines are not the answer: take them out and judge the rest.
        // So are the previous summary's lines carried forward: that summary is in the view.
        let template = self.instructions.strip_template(&raw);
        if template.removed + template.carried > 0 && !template.has_content {
            return Err(if template.removed > 0 {
                Failure::RestatedInstructions {
                    copied_percent: 100,
                }
            } else {
                Failure::EchoedInput {
                    copied_percent: 100,
                }
            });
        }
        let raw = template.text;
        // A real reduction of its input is a summary even when it quotes it line for line.
        let reduced = u64::from(estimate_text(&raw)) * 100
            <= u64::from(self.input_tokens) * u64::from(REDUCTION_PERCENT);
        if let Some(copied_percent) = self
            .echo
            .copied_percent(&raw)
            .filter(|p| !reduced && *p >= UNREDUCED_ECHO_PERCENT)
        {
            return Err(Failure::EchoedInput { copied_percent });
        }
        // Runs are never a summary, whoever wrote them (the extractive summarizer leaves out
        // sentences holding one, so its text never has any).
        if let Some(run) = char_run(&raw) {
            return Err(Failure::CharRun {
                unit: run.unit,
                repeats: run.repeats,
            });
        }
        // The extractive summarizer copies input sentences by design: repetitive input makes a
        // repetitive extract, which is faithful, not a model stuck in a loop.
        if let Some(found) =
            repetition_loop(&raw).filter(|_| self.summarizer != super::extractive::NAME)
        {
            return Err(Failure::RepetitionLoop {
                phrase: found.phrase,
                repeats: found.repeats,
            });
        }
        if let Some(copied_percent) = self.instructions.restated(&raw) {
            return Err(Failure::RestatedInstructions { copied_percent });
        }
        let raw_tokens = estimate_text(&raw);
        let cap_tokens = self
            .limits
            .for_level(self.level)
            .saturating_mul(OVER_CAP_FACTOR);
        if raw_tokens > cap_tokens {
            return Err(Failure::OverCap {
                output_tokens: raw_tokens,
                cap_tokens,
            });
        }
        let text = finish(&raw);
        if text.trim().is_empty() {
            return Err(Failure::EmptyOutput);
        }
        if contains_our_markup(&text) {
            return Err(Failure::OurMarkup);
        }
        let tokens = estimate_text(&text);
        if tokens >= self.input_tokens {
            return Err(Failure::NotShorter {
                output_tokens: tokens,
                input_tokens: self.input_tokens,
            });
        }
        if let Some(cost) = self.view_cost {
            let summary_tokens = tokens.saturating_add(cost.framing_tokens);
            if summary_tokens >= cost.range_tokens {
                return Err(Failure::NoSaving {
                    summary_tokens,
                    range_tokens: cost.range_tokens,
                });
            }
        }
        Ok((text, tokens))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::compaction::format::render_for_context;
    use crate::core::compaction::format::SummaryView;
    use crate::core::compaction::plausibility::EchoFingerprint;

    const LIMITS: OutputLimits = OutputLimits {
        normal: 1_000,
        aggressive: 500,
    };

    fn same(text: &str) -> String {
        text.to_owned()
    }

    fn err(kind: ErrorKind) -> SummarizerOutput {
        Err(SummarizerError::new(kind, "boom"))
    }

    /// Drives an escalation with scripted outputs, returning every step taken.
    fn drive(input_tokens: u32, outputs: Vec<SummarizerOutput>) -> Vec<Step> {
        let mut esc = Escalation::new(input_tokens, LIMITS, "scripted");
        let mut steps = vec![esc.start()];
        let mut outputs = outputs.into_iter();
        while let Some(Step::Run(_)) = steps.last() {
            let Some(out) = outputs.next() else { break };
            steps.push(esc.on_output(out, same));
        }
        steps
    }

    fn short() -> SummarizerOutput {
        Ok("short summary".to_owned())
    }
    /// Too long for a 500-token input, and neither a loop nor a run.
    fn long() -> SummarizerOutput {
        Ok((0..800)
            .map(|i| format!("w{i}"))
            .collect::<Vec<_>>()
            .join(" "))
    }

    #[test]
    fn normal_success_is_accepted_at_normal_level() {
        let steps = drive(500, vec![short()]);
        let Some(Step::Accept(draft)) = steps.last() else {
            panic!("{steps:?}")
        };
        assert_eq!(
            (draft.text(), draft.level(), draft.summarizer()),
            ("short summary", Level::Normal, "scripted")
        );
        assert_eq!(draft.tokens(), estimate_text("short summary"));
    }

    #[test]
    fn aggressive_runs_only_when_normal_was_not_shorter() {
        let steps = drive(500, vec![long(), short()]);
        assert_eq!(steps[1], Step::Run(Level::Aggressive));
        let Some(Step::Accept(draft)) = steps.last() else {
            panic!("{steps:?}")
        };
        assert_eq!(draft.level(), Level::Aggressive);
        // A normal output far over its cap (though shorter than a huge input) also escalates.
        let steps = drive(1_000_000, vec![Ok("y".repeat(20_000)), short()]);
        assert_eq!(steps[1], Step::Run(Level::Aggressive));
    }

    #[test]
    fn errors_empty_output_and_our_markup_give_up_without_escalating() {
        let echoed = render_for_context(&SummaryView {
            id: "sum_1",
            depth: 0,
            earliest_ms: None,
            latest_ms: None,
            text: "## Goal\n- x",
        });
        for output in [
            err(ErrorKind::Auth),
            err(ErrorKind::Timeout),
            err(ErrorKind::Other),
            Ok("   \n".to_owned()),
            Ok(echoed),
        ] {
            let steps = drive(500, vec![output.clone(), short()]);
            assert_eq!(steps.len(), 2, "{output:?} must give up at once: {steps:?}");
            assert!(matches!(steps[1], Step::GiveUp(_)));
        }
    }

    #[test]
    fn give_up_never_produces_a_truncated_summary() {
        // Both levels come out too long: the escalation ends with no draft at all, and the
        // engine has nothing it could store.
        let steps = drive(500, vec![long(), long()]);
        assert_eq!(steps.len(), 3);
        let Some(Step::GiveUp(give_up)) = steps.last() else {
            panic!("{steps:?}")
        };
        assert!(!steps.iter().any(|s| matches!(s, Step::Accept(_))));
        assert_eq!(give_up.attempts.len(), 2);
        assert!(matches!(
            give_up.last_failure(),
            Some(Failure::NotShorter { .. })
        ));
        // A finished escalation stays finished: further outputs cannot sneak a draft in.
        let mut esc = Escalation::new(500, LIMITS, "scripted");
        esc.start();
        esc.on_output(err(ErrorKind::Other), same);
        assert!(matches!(esc.on_output(short(), same), Step::GiveUp(_)));
    }

    #[test]
    fn aggressive_failure_of_any_kind_gives_up() {
        for second in [err(ErrorKind::Timeout), Ok(String::new()), long()] {
            let steps = drive(500, vec![long(), second]);
            assert!(
                matches!(steps.last(), Some(Step::GiveUp(g)) if g.attempts.len() == 2),
                "{steps:?}"
            );
        }
    }

    #[test]
    fn an_html_502_page_is_never_accepted_as_a_summary() {
        let page = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body><center><h1>502 Bad Gateway</h1></center></body>\r\n</html>";
        let steps = drive(500, vec![Ok(page.to_owned()), short()]);
        assert_eq!(steps.len(), 2, "an error page gives up at once: {steps:?}");
        let Some(Step::GiveUp(give_up)) = steps.last() else {
            panic!("{steps:?}")
        };
        assert_eq!(
            give_up.last_failure(),
            Some(&Failure::ErrorPage {
                title: "502 Bad Gateway".to_owned()
            })
        );
        assert_eq!(
            give_up.reason(),
            "summarizer returned an error page, not a summary: \"502 Bad Gateway\""
        );
        assert_eq!(
            give_up.retry_kind(),
            RetryKind::Provider,
            "a gateway's error page backs off like the outage it is"
        );
    }

    #[test]
    fn refusals_and_error_bodies_give_up_with_a_reason_that_says_which() {
        let cases = [
            (
                "I'm sorry, but I can't help with summarizing this conversation.",
                "refused instead of summarizing",
            ),
            (
                r#"{"error":{"message":"rate_limit_error","type":"rate_limit_error"}}"#,
                "error body, not a summary: \"rate_limit_error\"",
            ),
        ];
        for (text, reason) in cases {
            let steps = drive(500, vec![Ok(text.to_owned())]);
            let Some(Step::GiveUp(give_up)) = steps.last() else {
                panic!("{steps:?}")
            };
            assert!(
                give_up.reason().contains(reason),
                "{text}: {}",
                give_up.reason()
            );
        }
    }

    #[test]
    fn a_leaf_answer_that_repeats_its_transcript_gives_up_as_an_echo() {
        let transcript: String = (0..40).map(|i| format!("[t{i} | user]\nplease rotate the signing key {i} on the vault cluster and confirm it\n\n")).collect();
        let prompt = format!("[lossless-wasm:summarize] leaf summary, normal level\ninstructions\n\n<messages>\n{transcript}\n</messages>");
        let input = estimate_text(&transcript);
        // Most of the transcript sent back: no reduction, an echo.
        let echo = transcript[..transcript.len() * 9 / 10].to_owned();
        let mut esc = Escalation::new(input, LIMITS, "llm").with_prompt(&prompt);
        esc.start();
        let step = esc.on_output(Ok(echo.clone()), same);
        assert!(
            matches!(&step, Step::GiveUp(g) if matches!(g.last_failure(), Some(Failure::EchoedInput { copied_percent }) if *copied_percent >= 80)),
            "{step:?}"
        );
        // The extractive summarizer quotes its input by design and is never judged as an echo
        // (the copy is then judged on its size: not shorter).
        let mut esc = Escalation::new(input * 2, LIMITS, crate::core::compaction::extractive::NAME)
            .with_prompt(&prompt);
        esc.start();
        assert!(matches!(esc.on_output(Ok(echo), same), Step::Accept(_)));
    }

    #[test]
    fn an_answer_that_quotes_its_input_but_is_a_real_reduction_is_a_summary() {
        let transcript: String = (0..60).map(|i| format!("[t{i} | user]\nplease rotate key{i} on vault{i} and confirm{i} it with audit{i} of cluster{i}\n\n[t{i} | assistant]\nRotated key{i}; audit{i} shows kid{i} new and old{i} revoked at{i} once per policy{i}\n\n")).collect();
        let prompt = format!("[lossless-wasm:summarize] leaf summary, normal level\ninstructions\n\n<messages>\n{transcript}\n</messages>");
        let input = estimate_text(&transcript);
        // A sixth of the transcript, word for word: every 8-word run of it is copied, but it is
        // a small fraction of the input.
        let cut = transcript[..transcript.len() / 6]
            .rfind("\n\n")
            .unwrap_or(0);
        let quoted = transcript[..cut].to_owned();
        assert!(
            u64::from(estimate_text(&quoted)) * 100
                <= u64::from(input) * u64::from(REDUCTION_PERCENT)
        );
        assert!(
            EchoFingerprint::of_leaf_prompt(&prompt)
                .check(&quoted)
                .is_some(),
            "the old rule called it an echo"
        );
        let mut esc = Escalation::new(input, LIMITS, "llm").with_prompt(&prompt);
        esc.start();
        let step = esc.on_output(Ok(quoted), same);
        assert!(
            matches!(step, Step::Accept(_)),
            "{step:?} {:?}",
            esc.attempts()
        );
    }

    #[test]
    fn template_lines_are_stripped_before_judging_and_never_stored() {
        let prompt = format!(
            "[lossless-wasm:summarize] leaf summary, normal level\nSummarize the conversation for the agent.\n\n# Summary\n## Goal\n{}\n## Progress\n{}\n\n<messages>\n[t | user]\nplease fix the parser in src/parser.rs and run the tests {}\n</messages>",
            "- what the user is trying to achieve", "- what was done and what came of it, oldest first", "again ".repeat(200)
        );
        let answer = "Summarize the conversation for the agent.\n# Summary\n## Goal\n- what the user is trying to achieve\n- fix the parser in src/parser.rs\n## Progress\n- what was done and what came of it, oldest first\n- the tests were run";
        let mut esc = Escalation::new(1_000, LIMITS, "llm").with_prompt(&prompt);
        esc.start();
        let Step::Accept(draft) = esc.on_output(Ok(answer.to_owned()), same) else {
            panic!("the rest is a summary")
        };
        assert_eq!(
            draft.text(),
            "# Summary\n## Goal\n- fix the parser in src/parser.rs\n## Progress\n- the tests were run"
        );
    }

    #[test]
    fn a_character_run_is_a_loop_at_every_level_and_for_every_summarizer() {
        let run = Ok(format!(
            "The chat is here: [https://chat.discordapp.com/chat/Threads/{}]",
            "1".repeat(250)
        ));
        let steps = drive(5_000, vec![run.clone(), run.clone()]);
        assert_eq!(steps[1], Step::Run(Level::Aggressive));
        let Some(Step::GiveUp(give_up)) = steps.last() else {
            panic!("{steps:?}")
        };
        assert!(
            matches!(give_up.last_failure(), Some(Failure::CharRun { unit, repeats: 250 }) if unit == "1"),
            "{give_up:?}"
        );
        assert!(
            give_up.reason().contains("repetition loop"),
            "{}",
            give_up.reason()
        );
        let mut esc = Escalation::fallback(5_000, LIMITS);
        esc.start();
        esc.on_output(run.clone(), same);
        assert!(matches!(esc.on_output(run, same), Step::GiveUp(_)));
    }

    #[test]
    fn a_fallback_escalation_stores_its_draft_at_the_fallback_level() {
        let mut esc = Escalation::fallback(500, LIMITS);
        esc.start();
        let Step::Accept(draft) = esc.on_output(short(), same) else {
            panic!()
        };
        assert_eq!(
            (draft.level(), draft.summarizer()),
            (Level::Fallback, crate::core::compaction::extractive::NAME)
        );
    }

    #[test]
    fn empty_source_gives_up_before_calling_the_summarizer() {
        let mut esc = Escalation::new(0, LIMITS, "scripted");
        assert!(
            matches!(esc.start(), Step::GiveUp(g) if g.last_failure() == Some(&Failure::EmptySource))
        );
    }

    #[test]
    fn finish_output_is_what_gets_checked_and_stored() {
        let mut esc = Escalation::new(500, LIMITS, "scripted");
        esc.start();
        let step = esc.on_output(Ok("raw".to_owned()), |raw| format!("# Summary\n- {raw}"));
        let Step::Accept(draft) = step else {
            panic!("{step:?}")
        };
        assert_eq!(draft.text(), "# Summary\n- raw");
        // A finisher that blows the text up past the input fails as not shorter.
        let mut esc = Escalation::new(5, LIMITS, "scripted");
        esc.start();
        assert_eq!(
            esc.on_output(Ok("raw".to_owned()), |_| "z".repeat(400)),
            Step::Run(Level::Aggressive)
        );
    }

    #[test]
    fn failure_is_logged_as_all_originals_preserved() {
        let steps = drive(500, vec![err(ErrorKind::Timeout)]);
        let Some(Step::GiveUp(give_up)) = steps.last() else {
            panic!()
        };
        assert_eq!(
            give_up.log_line(42),
            "compaction failed (summarizer timed out: boom); all 42 original messages preserved"
        );
        assert_eq!(give_up.retry_kind(), RetryKind::Provider);
    }

    #[test]
    fn reasoning_is_stripped_and_only_the_summary_is_stored() {
        let steps = drive(
            500,
            vec![Ok(
                "<think>The user ran tests; I should list them.</think>\nshort summary".to_owned(),
            )],
        );
        let Some(Step::Accept(draft)) = steps.last() else {
            panic!("{steps:?}")
        };
        assert_eq!(draft.text(), "short summary");
    }

    #[test]
    fn an_answer_that_is_only_reasoning_is_a_failure_never_a_summary() {
        for raw in [
            "<think>Let me look at the messages. The user wants",
            "<thinking>plan</thinking>   ",
        ] {
            let steps = drive(500, vec![Ok(raw.to_owned()), short()]);
            let Some(Step::GiveUp(give_up)) = steps.last() else {
                panic!("{steps:?}")
            };
            assert!(
                matches!(give_up.last_failure(), Some(Failure::ReasoningOnly { reasoning_chars }) if *reasoning_chars > 0),
                "{raw}"
            );
            assert!(
                give_up.reason().contains("only reasoning"),
                "{}",
                give_up.reason()
            );
        }
    }

    #[test]
    fn an_answer_cut_off_at_the_output_limit_escalates_and_is_never_stored() {
        let cut = Err(SummarizerError::new(
            ErrorKind::Truncated,
            "## Goal\n- the user wants the parser to handle",
        ));
        let steps = drive(500, vec![cut.clone(), cut]);
        assert_eq!(
            steps[1],
            Step::Run(Level::Aggressive),
            "a stricter, shorter prompt can fix a run-long answer"
        );
        let Some(Step::GiveUp(give_up)) = steps.last() else {
            panic!("{steps:?}")
        };
        assert!(
            matches!(give_up.last_failure(), Some(f @ Failure::Truncated { .. }) if f.too_long() && f.answer_tokens().is_some())
        );
        assert_eq!(give_up.retry_kind(), RetryKind::Output);
    }

    #[test]
    fn a_repetition_loop_is_rejected_then_retried_at_the_aggressive_level() {
        let looped = Ok("The user is fixing the parser and the tests keep failing. ".repeat(20));
        let steps = drive(5_000, vec![looped, short()]);
        assert_eq!(steps[1], Step::Run(Level::Aggressive));
        assert!(matches!(steps.last(), Some(Step::Accept(d)) if d.level() == Level::Aggressive));
        let looped = Ok("- ran cargo test and it failed again\n".repeat(30));
        let steps = drive(5_000, vec![looped.clone(), looped]);
        let Some(Step::GiveUp(give_up)) = steps.last() else {
            panic!("{steps:?}")
        };
        assert!(
            give_up.reason().contains("repetition loop"),
            "{}",
            give_up.reason()
        );
    }

    #[test]
    fn an_answer_restating_the_instructions_is_rejected() {
        let prompt = format!(
            "[lossless-wasm:summarize] leaf summary, normal level\nSummarize.\n\n# Summary\n## Goal\n{}\n## Progress\n{}\n\n<messages>\n[t | user]\nfix it\n</messages>",
            "- what the user is trying to achieve", "- what was done and what came of it, oldest first"
        );
        let mut esc = Escalation::new(5_000, LIMITS, "llm").with_prompt(&prompt);
        esc.start();
        let template = "# Summary\n## Goal\n- what the user is trying to achieve\n## Progress\n- what was done and what came of it, oldest first";
        assert_eq!(
            esc.on_output(Ok(template.to_owned()), same),
            Step::Run(Level::Aggressive)
        );
        assert!(matches!(
            esc.attempts().last().map(|a| &a.failure),
            Some(Failure::RestatedInstructions { .. })
        ));
    }

    #[test]
    fn a_summary_that_would_cost_the_view_as_much_as_its_range_is_never_stored() {
        // 110 tokens of messages; the answer is shorter than the source text but, with the
        // summary's framing in the view, would not save a token.
        let cost = ViewCost {
            range_tokens: 110,
            framing_tokens: 60,
        };
        let answer = Ok((0..60)
            .map(|i| format!("w{i}"))
            .collect::<Vec<_>>()
            .join(" "));
        let mut esc = Escalation::new(400, LIMITS, "llm").with_view_cost(cost);
        esc.start();
        assert_eq!(
            esc.on_output(answer.clone(), same),
            Step::Run(Level::Aggressive)
        );
        let Step::GiveUp(give_up) = esc.on_output(answer, same) else {
            panic!()
        };
        assert!(
            matches!(give_up.last_failure(), Some(Failure::NoSaving { summary_tokens, range_tokens: 110 }) if *summary_tokens >= 110)
        );
        let mut esc = Escalation::new(400, LIMITS, "llm").with_view_cost(cost);
        esc.start();
        assert!(
            matches!(esc.on_output(Ok("tiny".to_owned()), same), Step::Accept(_)),
            "a summary that saves view tokens is kept"
        );
    }

    #[test]
    fn levels_have_stable_names() {
        for level in [Level::Normal, Level::Aggressive, Level::Fallback] {
            assert_eq!(Level::parse(level.as_str()), Some(level));
            assert_eq!(serde_json::to_value(level).unwrap(), level.as_str());
        }
        assert_eq!(Level::parse("fallback"), Some(Level::Fallback));
        assert_eq!(Level::parse("truncated"), None);
    }
}
