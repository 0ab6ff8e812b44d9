//! The one place text is redacted before it can reach a summarizer: a pass's (or a repair's)
//! sources are redacted as they are loaded, so the prompt, the extractive summarizer and the
//! ledger (which copies commands and errors from tool arguments) all read redacted text; the
//! summarizer's answer is redacted again before it is stored, in case a credential slipped past.
//!
//! Only these copies change: the stored messages stay as they are, and `lcm_expand` /
//! `lcm_grep` return the originals to the conversation's own agent. What was replaced is
//! counted per class (never the values) for the pass's `compaction_events` telemetry.

use serde_json::Value;

use crate::core::message::text_of_raw_json;
use crate::core::redact::{Counts, Redactor};
use crate::store::compaction::{SourceRow, SummaryRow};

/// Redacts a leaf's source messages: their host JSON (what the ledger reads) and their text
/// (what the prompt shows), which is rebuilt from the redacted JSON and checked once more.
pub(super) fn redact_rows(redactor: &Redactor, rows: &mut [SourceRow]) -> Counts {
    let mut counts = Counts::default();
    for row in rows {
        match serde_json::from_str::<Value>(&row.raw_json) {
            Ok(mut value) => {
                let found = redactor.redact_json(&mut value);
                if !found.is_empty() {
                    counts.merge(&found);
                    if let Ok(json) = serde_json::to_string(&value) {
                        row.raw_json = json;
                    }
                    if let Ok(text) = text_of_raw_json(&row.raw_json) {
                        row.text = text;
                    }
                }
            }
            Err(_) => counts.merge(&redact_text(redactor, &mut row.raw_json)),
        }
        // The text joins parts the JSON holds apart; a credential split across them is caught here.
        counts.merge(&redact_text(redactor, &mut row.text));
    }
    counts
}

/// Redacts the summaries a condensed pass merges (older ones were stored before redaction
/// existed, or imported).
pub(super) fn redact_summaries(redactor: &Redactor, rows: &mut [SummaryRow]) -> Counts {
    let mut counts = Counts::default();
    for row in rows {
        counts.merge(&redact_text(redactor, &mut row.content));
    }
    counts
}

/// Redacts one text in place.
pub(super) fn redact_text(redactor: &Redactor, text: &mut String) -> Counts {
    let redacted = redactor.redact(text);
    if !redacted.counts.is_empty() {
        *text = redacted.text;
    }
    redacted.counts
}

/// The `compaction_events.telemetry_json` of a pass that redacted something.
pub(super) fn telemetry(counts: &Counts) -> Option<String> {
    (!counts.is_empty()).then(|| {
        serde_json::json!({ "redactions": counts, "redactedTotal": counts.total() }).to_string()
    })
}
