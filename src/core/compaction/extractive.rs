//! The embedded summarizer: deterministic and offline, for the demo, browsers without an LLM,
//! and any host that offers none. It *selects* rather than writes — the opening request as the
//! goal, the first sentence of each assistant reply as progress, sentences that state a decision,
//! and the verbatim artifact ledger — in [`super::format`]'s flat shape, within a token target.
//!
//! It is a summarizer like any other: its output goes through [`super::escalation`], so when it
//! cannot come out shorter than its input it fails there and nothing is stored. It must never
//! cut text to fit; it drops whole bullets (via [`SummaryDoc::bound`]) instead.

use super::degenerate::char_run;
use super::format::{strip_our_markup, SummaryDoc};
use super::ledger::{self, one_line};
use super::level::Level;
use super::{ErrorKind, SourceMessage, SourceSummary, SummarizerError, SummarizerOutput};
use crate::core::message::Role;

/// Recorded as the summarizer of what this module produces.
pub const NAME: &str = "extractive";

/// Longest extracted bullet, in characters.
const BULLET_MAX_CHARS: usize = 200;

/// Phrases that mark a sentence as a decision or a constraint.
const DECISION_CUES: [&str; 14] = [
    "decided",
    "decide to",
    "we will",
    "we'll",
    "let's",
    "instead of",
    "going with",
    "chose",
    "must ",
    "must not",
    "do not",
    "don't",
    "prefer",
    "the plan is",
];

/// How much each level keeps.
struct Keep {
    progress: usize,
    decisions: usize,
    user_asks: bool,
}

fn keep(level: Level) -> Keep {
    match level {
        Level::Normal => Keep {
            progress: usize::MAX,
            decisions: 12,
            user_asks: true,
        },
        Level::Aggressive | Level::Fallback => Keep {
            progress: 4,
            decisions: 4,
            user_asks: false,
        },
    }
}

/// The message's own prose: no tool-call renderings, no markup of ours.
fn prose(text: &str) -> String {
    strip_our_markup(text)
        .lines()
        .filter(|l| !l.trim_start().starts_with("[tool call "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The text's sentences, without those holding a character run (`1111…`): an extract must pass
/// the same run check as any answer, and such a sentence is noise in a summary anyway.
fn sentences(text: &str) -> impl Iterator<Item = &str> {
    text.split_inclusive(['.', '!', '?', '\n'])
        .map(str::trim)
        .filter(|s| s.chars().any(char::is_alphanumeric) && char_run(s).is_none())
}

fn first_sentence(text: &str) -> Option<String> {
    sentences(text)
        .next()
        .map(|s| one_line(s, BULLET_MAX_CHARS))
}

fn is_decision(sentence: &str) -> bool {
    let lower = sentence.to_lowercase();
    DECISION_CUES.iter().any(|cue| lower.contains(cue))
}

fn newest(mut items: Vec<String>, n: usize) -> Vec<String> {
    let skip = items.len().saturating_sub(n);
    items.drain(..skip);
    items
}

fn nothing_to_extract() -> SummarizerOutput {
    Err(SummarizerError::new(
        ErrorKind::Other,
        "the extractive summarizer found no text to keep",
    ))
}

/// Summarizes raw messages (oldest first) in about `target_tokens`.
pub fn summarize_leaf(
    messages: &[SourceMessage<'_>],
    level: Level,
    target_tokens: u32,
) -> SummarizerOutput {
    let keep = keep(level);
    let mut doc = SummaryDoc {
        ledger: ledger::extract(messages),
        ..SummaryDoc::default()
    };
    let mut progress = Vec::new();
    let mut decisions = Vec::new();
    let mut seen_user = false;
    // Tool output is kept only when a stretch has nothing else (e.g. a run of tool results).
    let mut tool_output = Vec::new();
    for m in messages {
        let text = prose(m.text);
        match m.role {
            Role::User => {
                let first = first_sentence(&text);
                if !seen_user {
                    doc.goal.extend(first);
                    seen_user = true;
                } else if keep.user_asks {
                    progress.extend(first.map(|s| format!("User asked: {s}")));
                }
            }
            Role::Assistant => progress.extend(first_sentence(&text)),
            _ => {
                tool_output.extend(first_sentence(&text).map(|s| format!("Tool output: {s}")));
                continue;
            }
        }
        decisions.extend(
            sentences(&text)
                .filter(|s| is_decision(s))
                .map(|s| one_line(s, BULLET_MAX_CHARS)),
        );
    }
    if progress.is_empty() && doc.goal.is_empty() {
        progress = tool_output;
    }
    doc.progress = newest(progress, keep.progress);
    doc.decisions = newest(decisions, keep.decisions);
    // Absorbing into an empty summary deduplicates repeated sentences, newest kept.
    let mut merged = SummaryDoc::default();
    merged.absorb(doc);
    if merged.is_empty() {
        return nothing_to_extract();
    }
    merged.bound(target_tokens);
    Ok(merged.render())
}

/// Merges summaries (oldest first) in about `target_tokens`. At the aggressive level older
/// progress and decisions go first, before any bounding.
pub fn summarize_condensed(
    summaries: &[SourceSummary<'_>],
    level: Level,
    target_tokens: u32,
) -> SummarizerOutput {
    let keep = keep(level);
    let mut doc = SummaryDoc::default();
    for s in summaries {
        doc.absorb(SummaryDoc::parse(s.text));
    }
    if doc.is_empty() {
        return nothing_to_extract();
    }
    doc.progress = newest(doc.progress, keep.progress);
    doc.decisions = newest(doc.decisions, keep.decisions);
    doc.bound(target_tokens);
    Ok(doc.render())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::compaction::escalation::{Escalation, OutputLimits, Step};
    use crate::core::compaction::format::{contains_our_markup, finalize};
    use crate::core::compaction::prompts::render_messages;
    use crate::core::message::parse_message;
    use crate::core::tokens::estimate_text;
    use serde_json::{json, Value};

    fn conversation() -> Vec<Value> {
        let mut values = vec![
            json!({"role":"user","content":"Migrate the billing service to the new queue. Keep the old API working.","timestamp":1_700_000_000_000i64}),
        ];
        for i in 0..30 {
            values.push(json!({"role":"assistant","content":[
                {"type":"text","text":format!("Step {i}: I inspected the consumer for shard {i} and found it still polls. We will switch it to push delivery instead of polling. {}", "Details follow about retries, batching and idempotency keys. ".repeat(4))},
                {"type":"toolCall","id":format!("c{i}"),"name":"bash","arguments":{"command":format!("cargo test billing::shard{i}")}}]}));
            values.push(json!({"role":"toolResult","toolCallId":format!("c{i}"),"isError": i == 7,"content":[{"type":"text","text": if i == 7 { "error: shard7 timed out".to_owned() } else { "ok. ".repeat(40) }}]}));
        }
        values.push(json!({"role":"user","content":"Good. Now write the migration notes in docs/billing.md"}));
        values
    }

    fn summarize(values: &[Value], level: Level, target: u32) -> (u32, SummarizerOutput) {
        let stored: Vec<_> = values
            .iter()
            .map(|v| parse_message(v, "m").unwrap())
            .collect();
        let sources: Vec<SourceMessage> = stored.iter().map(SourceMessage::from).collect();
        (
            estimate_text(&render_messages(&sources)),
            summarize_leaf(&sources, level, target),
        )
    }

    #[test]
    fn extractive_summary_is_flat_shorter_and_keeps_the_ledger() {
        let (input_tokens, out) = summarize(&conversation(), Level::Normal, 1_200);
        let text = out.unwrap();
        assert!(
            estimate_text(&text) < input_tokens / 2,
            "{} vs {input_tokens}",
            estimate_text(&text)
        );
        assert!(estimate_text(&text) <= 1_200);
        assert!(
            text.starts_with("# Summary\n## Goal\n- Migrate the billing service to the new queue."),
            "{text}"
        );
        assert!(text.contains("- ran: cargo test billing::shard29"));
        assert!(text.contains("- error: error: shard7 timed out"));
        assert!(text.contains("We will switch it to push delivery instead of polling."));
        assert!(text.ends_with(
            "## Latest request\n> Good. Now write the migration notes in docs/billing.md"
        ));
        assert!(!contains_our_markup(&text));
    }

    #[test]
    fn extractive_is_deterministic_and_aggressive_is_smaller() {
        let (_, a) = summarize(&conversation(), Level::Normal, 1_200);
        let (_, b) = summarize(&conversation(), Level::Normal, 1_200);
        assert_eq!(a, b);
        let (_, aggressive) = summarize(&conversation(), Level::Aggressive, 600);
        assert!(estimate_text(&aggressive.unwrap()) < estimate_text(&a.unwrap()));
    }

    #[test]
    fn extractive_that_cannot_be_shorter_fails_like_any_summarizer() {
        // A single short message: the summary cannot beat its input, so escalation gives up and
        // no summary exists — no truncated stand-in either.
        let values = [json!({"role":"user","content":"ok"})];
        let stored: Vec<_> = values
            .iter()
            .map(|v| parse_message(v, "m").unwrap())
            .collect();
        let sources: Vec<SourceMessage> = stored.iter().map(SourceMessage::from).collect();
        let input = estimate_text(&render_messages(&sources));
        let ledger = ledger::extract(&sources);
        let mut esc = Escalation::new(
            input,
            OutputLimits {
                normal: 400,
                aggressive: 200,
            },
            NAME,
        );
        let mut step = esc.start();
        while let Step::Run(level) = step {
            step = esc.on_output(summarize_leaf(&sources, level, 200), |raw| {
                finalize(raw, &ledger, 400)
            });
        }
        assert!(matches!(step, Step::GiveUp(_)), "{step:?}");
    }

    #[test]
    fn messages_without_text_produce_an_error_not_an_empty_summary() {
        let sources = [SourceMessage {
            role: Role::ToolResult,
            text: "",
            raw_json: "{}",
            timestamp_ms: None,
        }];
        let err = summarize_leaf(&sources, Level::Normal, 500).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Other);
        assert!(summarize_condensed(&[], Level::Normal, 500).is_err());
    }

    #[test]
    fn condensed_extractive_merges_flat_and_respects_the_level() {
        let a = "# Summary\n## Progress\n- one\n- two\n## Artifacts\n- read: a.rs";
        let b = "# Summary\n## Progress\n- three\n- four\n- five\n## Decisions\n- keep it flat";
        let summaries = [
            SourceSummary {
                text: a,
                earliest_ms: None,
                latest_ms: None,
            },
            SourceSummary {
                text: b,
                earliest_ms: None,
                latest_ms: None,
            },
        ];
        let normal = summarize_condensed(&summaries, Level::Normal, 2_000).unwrap();
        assert_eq!(normal.matches("## Progress").count(), 1);
        assert!(
            normal.contains("- one")
                && normal.contains("- five")
                && normal.contains("- read: a.rs")
        );
        let aggressive = summarize_condensed(&summaries, Level::Aggressive, 2_000).unwrap();
        assert!(!aggressive.contains("- one") && aggressive.contains("- two"));
    }
}
