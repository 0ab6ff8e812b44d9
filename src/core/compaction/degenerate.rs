//! Answers that have the shape of text but are not a summary of anything: repetition loops,
//! character runs and restated instructions. Small local models produce all three — one
//! sentence over and over until the output limit, one digit written 250 times inside a URL, or
//! the requested template sent back with its hints still in it — and all used to pass every
//! other check (they are not empty, not an error page, and often shorter than the input).
//!
//! The rules look at the whole answer: a real summary may repeat a path or a short bullet
//! ("- none"), and it names the sections the prompt asked for; it does not consist mostly of
//! one word run repeated, it holds no stretch of [`RUN_MIN_CHARS`] characters that is one short
//! unit over and over, and it does not copy the prompt's hint lines. Lines that *are* the
//! prompt's own template (its instruction lines and hint lines) are removed before the rest is
//! judged ([`Instructions::strip_template`]): small models often copy them and then summarize.
//! Pure and deterministic.

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

/// A character run is at least this many characters long…
pub const RUN_MIN_CHARS: usize = 30;
/// …made of a unit of at most this many characters (no whitespace)…
const RUN_MAX_UNIT: usize = 10;
/// …written at least this many times in a row (a 6-character unit 5 times is 30 characters).
const RUN_MIN_REPEATS: usize = 5;

/// A character run found in an answer: a short unit written over and over with no space
/// (`1111…`, `abab…`, `=-=-…`), the character-level twin of a [`Loop`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CharRun {
    /// The repeated unit.
    pub unit: String,
    /// How many times it is written in a row.
    pub repeats: u32,
}

/// `Some` when `text` holds a stretch of [`RUN_MIN_CHARS`] characters or more (with no
/// whitespace) that is one unit of 1–10 characters repeated, at least 5 times (30 times for a
/// single character). Hashes, paths, base64 and identifiers do not repeat periodically; a model
/// stuck on one token does. Linear in the text's length times the largest unit.
pub fn char_run(text: &str) -> Option<CharRun> {
    let chars: Vec<char> = text.chars().collect();
    let mut best: Option<(usize, usize, usize)> = None; // (start, unit, length)
    for unit in 1..=RUN_MAX_UNIT {
        // `len` counts how many characters in a row equal the one `unit` before them.
        let mut len = 0usize;
        for i in unit..chars.len() {
            if chars[i] == chars[i - unit] && !chars[i].is_whitespace() {
                len += 1;
                let total = len + unit;
                if total >= RUN_MIN_CHARS
                    && total / unit >= RUN_MIN_REPEATS
                    && best.is_none_or(|(_, _, l)| total > l)
                {
                    best = Some((i + 1 - total, unit, total));
                }
            } else {
                len = 0;
            }
        }
    }
    let (start, unit, total) = best?;
    // A unit that is itself periodic (`11` in `1111…`) is reported by its shortest period.
    let mut unit_chars: Vec<char> = chars[start..start + unit].to_vec();
    for p in 1..unit {
        if unit % p == 0 && (0..unit).all(|k| unit_chars[k] == unit_chars[k % p]) {
            unit_chars.truncate(p);
            break;
        }
    }
    if unit_chars.iter().any(|c| c.is_whitespace()) {
        return None;
    }
    Some(CharRun {
        repeats: u32::try_from(total / unit_chars.len()).unwrap_or(u32::MAX),
        unit: unit_chars.into_iter().collect(),
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
    /// The prompt's own lines (instructions, hints), normalized, sorted: an answer's line equal
    /// to one of them is template, not summary. The shape's headings are not among them.
    template_lines: Vec<String>,
    /// The lines of the previous summary a leaf prompt shows for continuity (and asks not to
    /// repeat), normalized, sorted: that summary is in the view already, so an answer's line
    /// equal to one of them is carried forward, not new.
    previous_lines: Vec<String>,
}

/// An answer with the prompt's template lines taken out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stripped {
    /// What is left of the answer once those lines are out.
    pub text: String,
    /// How many lines were the template's.
    pub removed: usize,
    /// How many lines were the previous summary's, carried forward.
    pub carried: usize,
    /// Whether anything but headings and blank lines is left.
    pub has_content: bool,
}

/// A line as compared with the template: no list or quote markers, no surrounding space or
/// final punctuation, lower case, single spaces.
fn normalize_line(line: &str) -> String {
    let trimmed = line
        .trim()
        .trim_start_matches(|c: char| matches!(c, '-' | '*' | '>' | '#' | '+') || c.is_whitespace())
        .trim_end_matches(|c: char| matches!(c, '.' | ':' | ';' | ',') || c.is_whitespace());
    trimmed
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// The text of a prompt's `<name>` data block, or "" when it has none.
fn block<'a>(prompt: &'a str, name: &str) -> &'a str {
    let open = format!("\n<{name}>\n");
    let close = format!("\n</{name}>");
    let Some(start) = prompt.find(&open).map(|i| i + open.len()) else {
        return "";
    };
    let end = prompt[start..]
        .find(&close)
        .map_or(prompt.len(), |i| start + i);
    &prompt[start..end]
}

/// Whether a line is one of the summary shape's headings (kept: they are the shape asked for).
fn is_heading(line: &str) -> bool {
    let t = line.trim();
    t.starts_with('#') || t.eq_ignore_ascii_case(super::format::HEADER)
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
        let mut template_lines: Vec<String> = prompt[..cut]
            .lines()
            .filter(|l| !is_heading(l))
            .map(normalize_line)
            .filter(|l| !l.is_empty())
            .collect();
        // A summary's own line cannot be taken for the prompt's first line (the marker).
        template_lines.sort_unstable();
        template_lines.dedup();
        let mut previous_lines: Vec<String> = block(prompt, "previous_summary")
            .lines()
            .filter(|l| !is_heading(l))
            .map(normalize_line)
            .filter(|l| !l.is_empty())
            .collect();
        previous_lines.sort_unstable();
        previous_lines.dedup();
        Instructions {
            fingerprint: EchoFingerprint::of(&prompt[..cut]),
            hints: hints.iter().map(|h| h.to_lowercase()).collect(),
            template_lines,
            previous_lines,
        }
    }

    /// Removes the answer's lines that are the prompt's own (an instruction or hint line copied
    /// whole) or the previous summary's (carried forward); headings and every other line stay,
    /// in order.
    pub fn strip_template(&self, answer: &str) -> Stripped {
        let mut kept = Vec::new();
        let (mut removed, mut carried) = (0, 0);
        let mut has_content = false;
        for line in answer.lines() {
            let normal = normalize_line(line);
            let judged = !normal.is_empty() && !is_heading(line);
            if judged && self.template_lines.binary_search(&normal).is_ok() {
                removed += 1;
                continue;
            }
            if judged && self.previous_lines.binary_search(&normal).is_ok() {
                carried += 1;
                continue;
            }
            has_content |= judged;
            kept.push(line);
        }
        Stripped {
            carried,
            text: if removed + carried == 0 {
                answer.to_owned()
            } else {
                kept.join("\n")
            },
            removed,
            has_content,
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
    fn a_digit_written_250_times_inside_a_url_is_a_char_run() {
        // SmolLM2-135M's answer, stored at level `aggressive` before this check existed.
        let answer = format!(
            "The chat is here: [https://chat.discordapp.com/chat/Threads/{}]",
            "1".repeat(250)
        );
        assert_eq!(repetition_loop(&answer), None, "word runs miss it");
        let run = char_run(&answer).expect("a character run");
        assert_eq!((run.unit.as_str(), run.repeats), ("1", 250));
    }

    #[test]
    fn short_units_repeated_without_spaces_are_char_runs() {
        for (text, unit) in [
            (format!("see {}", "ab".repeat(20)), "ab"),
            (format!("x{}y", "=-".repeat(16)), "=-"),
            (format!("- error: {}", "404;".repeat(9)), "404;"),
            (format!("{} done", "summary".repeat(6)), "summary"),
            ("0".repeat(30), "0"),
        ] {
            let run = char_run(&text).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(run.unit, unit, "{text}");
        }
    }

    #[test]
    fn hashes_paths_identifiers_and_short_repeats_are_not_char_runs() {
        for text in [
            REAL,
            "- ran: git checkout 3f9c2a7e1b0d4c6e8f1a2b3c4d5e6f708192a3b4",
            "- read: src/core/compaction/degenerate.rs and src/core/compaction/plausibility.rs",
            "token sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "aGVsbG8gd29ybGQgdGhpcyBpcyBhIGJhc2U2NCBibG9iIG9mIHRleHQ=",
            &"0".repeat(29),
            &"ab".repeat(14),
            "ha ha ha ha ha ha ha ha ha ha ha ha ha ha ha ha",
            &"- none\n".repeat(12),
            "",
        ] {
            assert_eq!(char_run(text), None, "{text}");
        }
    }

    #[test]
    fn the_templates_lines_are_stripped_and_the_rest_is_kept_in_order() {
        let ins = Instructions::of_prompt(PROMPT, &HINTS);
        let answer = "Summarize the conversation below for an AI agent that will continue it.\n# Summary\n## Goal\n- What the user is trying to achieve.\n- fix the parser\n## Progress\n- what was done and what came of it, oldest first\n- read src/parser.rs";
        let stripped = ins.strip_template(answer);
        assert_eq!(stripped.removed, 3);
        assert!(stripped.has_content);
        assert_eq!(
            stripped.text,
            "# Summary\n## Goal\n- fix the parser\n## Progress\n- read src/parser.rs"
        );
        assert_eq!(ins.restated(&stripped.text), None, "the rest is a summary");
        let only = ins.strip_template("# Summary\n## Goal\n- what the user is trying to achieve\n## Progress\n- what was done and what came of it, oldest first");
        assert!(!only.has_content && only.removed == 2, "{only:?}");
        let none = ins.strip_template(REAL);
        assert_eq!((none.removed, none.text.as_str()), (0, REAL));
    }

    #[test]
    fn the_previous_summarys_lines_carried_forward_are_stripped() {
        let prompt = PROMPT.replace(
            "\n\n<messages>",
            "\n\nFor continuity, the summary of what came just before (do not repeat it):\n<previous_summary>\n# Summary\n## Progress\n- read src/lexer.rs\n- fixed the escapes\n</previous_summary>\n\n<messages>",
        );
        let ins = Instructions::of_prompt(&prompt, &HINTS);
        let stripped = ins.strip_template(
            "## Progress\n- read src/lexer.rs\n- Fixed the escapes.\n- fixed the parser",
        );
        assert_eq!((stripped.removed, stripped.carried), (0, 2));
        assert_eq!(stripped.text, "## Progress\n- fixed the parser");
        let only = ins.strip_template("## Progress\n- read src/lexer.rs\n- fixed the escapes");
        assert!(!only.has_content && only.carried == 2);
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
