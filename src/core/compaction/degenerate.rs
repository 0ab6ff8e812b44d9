//! Answers that have the shape of text but are not a summary of anything: repetition loops and
//! restated instructions. Small local models produce both — one sentence over and over until
//! the output limit, or the requested template sent back with its hints still in it — and both
//! used to pass every other check (they are not empty, not an error page, and often shorter
//! than the input).
//!
//! The rules look at the whole answer: a real summary may repeat a path or a short bullet
//! ("- none"), and it names the sections the prompt asked for; it does not consist mostly of
//! one word run repeated, and it does not copy the prompt's hint lines. Pure and deterministic.

use super::plausibility::EchoFingerprint;

/// Words per run when looking for a loop: long enough that a summary's legitimately repeated
/// phrases ("the user asked to", "- read: src/") do not count.
const LOOP_WORDS: usize = 6;
/// A run must occur this often to be a loop.
const LOOP_MIN_REPEATS: usize = 4;
/// Share of the answer's runs that repeated runs must cover.
const LOOP_SHARE_PERCENT: usize = 40;
/// Answers shorter than this many runs are not judged (a short answer cannot loop much).
const LOOP_MIN_RUNS: usize = 12;

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// A repetition loop found in an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loop {
    /// The most repeated word run.
    pub phrase: String,
    /// How often it occurs.
    pub repeats: u32,
    /// Share of the answer (in word runs) made of runs that occur [`LOOP_MIN_REPEATS`] times or more.
    pub share_percent: u32,
}

/// `Some` when most of `text` is the same few word runs over and over.
pub fn repetition_loop(text: &str) -> Option<Loop> {
    let words = words(text);
    if words.len() < LOOP_WORDS + LOOP_MIN_RUNS {
        return None;
    }
    let runs: Vec<&[String]> = words.windows(LOOP_WORDS).collect();
    let mut counts: std::collections::HashMap<&[String], usize> =
        std::collections::HashMap::with_capacity(runs.len());
    for run in &runs {
        *counts.entry(run).or_insert(0) += 1;
    }
    let repeated = runs
        .iter()
        .filter(|r| counts.get(*r).copied().unwrap_or(0) >= LOOP_MIN_REPEATS)
        .count();
    let share = repeated * 100 / runs.len();
    if share < LOOP_SHARE_PERCENT {
        return None;
    }
    // The first run among the most frequent, so the verdict is the same on every run.
    let top = runs
        .iter()
        .copied()
        .max_by(|a, b| counts[a].cmp(&counts[b]).then_with(|| b.cmp(a)))?;
    Some(Loop {
        phrase: top.join(" "),
        repeats: u32::try_from(counts[top]).unwrap_or(u32::MAX),
        share_percent: u32::try_from(share).unwrap_or(100),
    })
}

/// Share of an answer's word runs taken from the prompt's instructions at which it counts as
/// the instructions restated rather than a summary.
const RESTATED_PERCENT: u32 = 50;
/// Hint lines of the requested shape found verbatim at which the answer is the template sent back.
const TEMPLATE_HINTS: usize = 2;

/// The prompt's instructions (everything before its data block), to recognise an answer that
/// restates them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Instructions {
    fingerprint: EchoFingerprint,
    hints: Vec<String>,
}

impl Instructions {
    /// The instructions of a summarization prompt: the text before its first data block, and
    /// the hint lines of the shape it asks for (`hints`, lowercased on comparison).
    pub fn of_prompt(prompt: &str, hints: &[&str]) -> Self {
        let cut = [
            "\n<messages>\n",
            "\n<summaries>\n",
            "\n<previous_summary>\n",
        ]
        .iter()
        .filter_map(|t| prompt.find(t))
        .min()
        .unwrap_or(prompt.len());
        Instructions {
            fingerprint: EchoFingerprint::of(&prompt[..cut]),
            hints: hints.iter().map(|h| h.to_lowercase()).collect(),
        }
    }

    /// `Some(percent)` of the answer copied from the instructions when it restates them.
    pub fn restated(&self, answer: &str) -> Option<u32> {
        let lower = answer.to_lowercase();
        let hints = self
            .hints
            .iter()
            .filter(|h| lower.contains(h.as_str()))
            .count();
        let copied = self.fingerprint.copied_percent(answer);
        if hints >= TEMPLATE_HINTS {
            // The template came back; its hint lines are often too short to judge by word runs.
            return Some(copied.unwrap_or(100));
        }
        copied.filter(|p| *p >= RESTATED_PERCENT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REAL: &str = "# Summary\n## Goal\n- keep the build green while refactoring the parser\n## Progress\n\
        - read src/parser.rs and src/lexer.rs; the tokenizer mishandled escaped quotes\n\
        - ran cargo test -p parser: 3 failures in string_literals, fixed by handling backslash escapes\n\
        - ran cargo test -p parser again: all 212 tests pass\n## Decisions\n- keep the public API unchanged\n\
        ## Artifacts\n- modified: src/lexer.rs\n- read: src/parser.rs\n- read: src/lexer.rs\n- ran: cargo test -p parser\n\
        ## Latest request\n> please also add a test for unicode escapes";

    #[test]
    fn one_sentence_over_and_over_is_a_loop() {
        let looped = "The user is working on the parser and the tests. ".repeat(30);
        let found = repetition_loop(&looped).expect("a loop");
        assert!(
            found.repeats >= 20 && found.share_percent >= 90,
            "{found:?}"
        );
        assert!(found.phrase.split(' ').count() == LOOP_WORDS);
    }

    #[test]
    fn a_summary_that_starts_well_and_then_loops_is_a_loop() {
        let text = format!(
            "{REAL}\n{}",
            "- the user wants the parser fixed and the tests green\n".repeat(25)
        );
        assert!(repetition_loop(&text).is_some());
    }

    #[test]
    fn a_real_summary_with_repeated_paths_and_commands_is_not_a_loop() {
        assert_eq!(repetition_loop(REAL), None);
        let ledgerish = (0..40)
            .map(|i| format!("- ran: cargo test -p mod{i}\n- read: src/mod{i}.rs\n"))
            .collect::<String>();
        assert_eq!(
            repetition_loop(&ledgerish),
            None,
            "distinct commands are a ledger, not a loop"
        );
    }

    #[test]
    fn short_answers_are_not_judged() {
        assert_eq!(repetition_loop("ok ok ok ok ok ok ok ok ok ok"), None);
    }

    const PROMPT: &str = "[lossless-wasm:summarize] leaf summary, normal level\nSummarize the conversation below for an AI agent that will continue it.\n\n\
        Reply with the summary only, in exactly this plain shape:\n# Summary\n## Goal\n- what the user is trying to achieve\n## Progress\n\
        - what was done and what came of it, oldest first\n\nKeep decisions and their reasons, constraints, open tasks, blockers, and exact identifiers.\n\n\
        <messages>\n[t | user]\nplease fix the parser\n</messages>";
    const HINTS: [&str; 2] = [
        "what the user is trying to achieve",
        "what was done and what came of it, oldest first",
    ];

    #[test]
    fn the_template_sent_back_with_its_hints_is_restated_instructions() {
        let ins = Instructions::of_prompt(PROMPT, &HINTS);
        let answer = "# Summary\n## Goal\n- What the user is trying to achieve\n## Progress\n- what was done and what came of it, oldest first";
        assert!(ins.restated(answer).is_some());
    }

    #[test]
    fn instructions_paraphrased_back_are_restated_instructions() {
        let ins = Instructions::of_prompt(PROMPT, &HINTS);
        let answer = "Reply with the summary only, in exactly this plain shape. Keep decisions and their reasons, constraints, open tasks, blockers, and exact identifiers.";
        assert!(
            matches!(ins.restated(answer), Some(p) if p >= RESTATED_PERCENT),
            "{:?}",
            ins.restated(answer)
        );
    }

    #[test]
    fn a_real_summary_does_not_restate_the_instructions() {
        let ins = Instructions::of_prompt(PROMPT, &HINTS);
        assert_eq!(ins.restated(REAL), None);
        assert_eq!(Instructions::default().restated(REAL), None);
    }
}
