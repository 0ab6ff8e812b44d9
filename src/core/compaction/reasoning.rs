//! Separating a model's reasoning from its answer.
//!
//! Reasoning models (Qwen3 and DeepSeek-R1 distills on vLLM or Ollama, Kimi, ...) often return
//! their chain of thought inside the completion text: a `<think>…</think>` block before the
//! answer, a bare `…</think>` when the chat template opened the block in the prompt, an opening
//! tag that never closes because the output limit cut the thinking short, or nothing but
//! reasoning. None of that is a summary: stored, it would be merged forward into every deeper
//! summary and shown to the model on every turn.
//!
//! [`strip_reasoning`] returns the answer with every reasoning block removed and says how much
//! it removed; an answer that is empty afterwards is a failed attempt (the escalation's job).
//! Tags are matched ASCII case-insensitively; a tag inside backticks in the answer proper (a
//! summary quoting `<think>` from a conversation about prompt formats) is part of a block only
//! when it opens one, which is the rule models follow too. Pure; no allocation when there is
//! nothing to strip.

/// The block names models use for reasoning.
const TAGS: [&str; 3] = ["think", "thinking", "reasoning"];

/// An answer with its reasoning removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stripped {
    /// The answer proper, trimmed.
    pub text: String,
    /// Characters of reasoning removed (0 when there was none).
    pub reasoning_chars: usize,
}

/// Position of `needle` (ASCII lowercase) in `haystack`, ASCII case-insensitively, from `from`.
fn find_ci(haystack: &str, needle: &str, from: usize) -> Option<usize> {
    let hay = haystack.as_bytes();
    let pin = needle.as_bytes();
    if pin.is_empty() || from > hay.len() || hay.len() - from < pin.len() {
        return None;
    }
    (from..=hay.len() - pin.len()).find(|&i| hay[i..i + pin.len()].eq_ignore_ascii_case(pin))
}

/// The earliest opening tag of any reasoning block at or after `from`: (start, end of tag, name).
fn next_open(text: &str, from: usize) -> Option<(usize, usize, &'static str)> {
    TAGS.iter()
        .filter_map(|tag| {
            let open = format!("<{tag}>");
            find_ci(text, &open, from).map(|at| (at, at + open.len(), *tag))
        })
        .min_by_key(|(at, _, _)| *at)
}

/// The end of a leading reasoning run closed by a bare `</tag>` with no opening tag before it
/// (the chat template opened the block in the prompt).
fn leading_close(text: &str) -> Option<usize> {
    TAGS.iter()
        .filter_map(|tag| {
            let close = format!("</{tag}>");
            let at = find_ci(text, &close, 0)?;
            let opened_before = find_ci(&text[..at], &format!("<{tag}>"), 0).is_some();
            (!opened_before).then_some(at + close.len())
        })
        .min()
}

/// Removes reasoning blocks from a completion. An opening tag that never closes makes the rest
/// of the text reasoning: the output limit cut the thinking short, and no answer followed.
pub fn strip_reasoning(raw: &str) -> Stripped {
    let lower_has_tag = TAGS
        .iter()
        .any(|t| find_ci(raw, &format!("{t}>"), 0).is_some());
    if !lower_has_tag {
        return Stripped {
            text: raw.trim().to_owned(),
            reasoning_chars: 0,
        };
    }
    let mut removed = 0;
    let mut rest = raw;
    if let Some(end) = leading_close(rest) {
        removed += end;
        rest = &rest[end..];
    }
    let mut out = String::with_capacity(rest.len());
    let mut at = 0;
    while let Some((start, body, tag)) = next_open(rest, at) {
        out.push_str(&rest[at..start]);
        let close = format!("</{tag}>");
        match find_ci(rest, &close, body) {
            Some(end) => {
                removed += end + close.len() - start;
                at = end + close.len();
            }
            None => {
                removed += rest.len() - start;
                at = rest.len();
            }
        }
    }
    out.push_str(&rest[at..]);
    Stripped {
        text: out.trim().to_owned(),
        reasoning_chars: removed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SUMMARY: &str = "## Goal\n- ship the parser\n## Progress\n- tests pass";

    #[test]
    fn a_think_block_before_the_summary_is_removed() {
        let raw = format!("<think>\nThe user wants a summary. Let me list the files first...\n</think>\n\n{SUMMARY}");
        let out = strip_reasoning(&raw);
        assert_eq!(out.text, SUMMARY);
        assert!(out.reasoning_chars > 40, "{out:?}");
    }

    #[test]
    fn every_tag_name_and_case_is_recognised() {
        for raw in [
            format!("<thinking>plan the sections</thinking>{SUMMARY}"),
            format!("<REASONING>count the messages</REASONING>\n{SUMMARY}"),
            format!("<Think>a</Think>{SUMMARY}<think>second thoughts</think>"),
        ] {
            assert_eq!(strip_reasoning(&raw).text, SUMMARY, "{raw}");
        }
    }

    #[test]
    fn a_bare_closing_tag_ends_reasoning_the_template_opened() {
        let raw =
            format!("Okay, so I need to summarize this. First the goal...\n</think>\n{SUMMARY}");
        let out = strip_reasoning(&raw);
        assert_eq!(out.text, SUMMARY);
        assert!(out.reasoning_chars > 0);
    }

    #[test]
    fn reasoning_only_answers_strip_to_nothing() {
        for raw in [
            "<think>\nLet me think about what the user did. They ran cargo test",
            "<think>all of it</think>",
            "Hmm, where to start.\n</think>\n  ",
        ] {
            let out = strip_reasoning(raw);
            assert_eq!(out.text, "", "{raw}");
            assert!(out.reasoning_chars > 0);
        }
    }

    #[test]
    fn an_answer_without_reasoning_is_returned_trimmed_and_unchanged() {
        let out = strip_reasoning(&format!("\n  {SUMMARY}\n"));
        assert_eq!(
            out,
            Stripped {
                text: SUMMARY.to_owned(),
                reasoning_chars: 0
            }
        );
        // A summary that merely mentions a tag name without a tag is untouched.
        let mention = "## Decisions\n- the prompt format drops think blocks and thinking tokens";
        assert_eq!(strip_reasoning(mention).text, mention);
    }

    #[test]
    fn multibyte_text_around_tags_is_kept_intact() {
        let raw = "<think>überlegen…</think>## Ziel\n- Parser ausliefern — 完成";
        assert_eq!(
            strip_reasoning(raw).text,
            "## Ziel\n- Parser ausliefern — 完成"
        );
    }
}
