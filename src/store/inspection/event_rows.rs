//! What a compaction event row says about its pass, read the same way for the operator's status
//! ([`super::doctor`]) and for the compaction log ([`super::inspect`]): when, which pass at which
//! level, how it came out and why, and the tokens before and after. Each of them selects its own
//! columns around these.

use serde::Serialize;

use crate::error::Result;
use crate::store::sql::Row;

/// The columns of `compaction_events` that [`EventOutcome::from_row`] reads, in its order.
pub(super) const OUTCOME_COLUMNS: &str =
    "created_at, pass, level, outcome, reason, tokens_before, tokens_after";

/// One compaction event's pass and outcome (a part of `doctor::EventRow` and
/// `inspect::EventInfo`, flattened into them when serialized).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EventOutcome {
    /// When the event was logged, in ms since the epoch.
    pub created_at: i64,
    /// "leaf", "condensed", "sweep", "trigger" or "mask".
    pub pass: String,
    /// "normal", "aggressive" or "fallback", when the pass had a level.
    pub level: Option<String>,
    /// "triggered", "compacted", "skipped" or "failed".
    pub outcome: String,
    /// Why it came out that way: a reason name or a sentence for the log.
    pub reason: String,
    /// Tokens before: the replaced items' for a summarizing pass, the context's for a trigger or a
    /// mask pass.
    pub tokens_before: Option<i64>,
    /// Tokens after, counted as `tokens_before` is.
    pub tokens_after: Option<i64>,
}

impl EventOutcome {
    /// Reads [`OUTCOME_COLUMNS`] from `row`, the first of them at column `first`.
    pub(super) fn from_row(row: &Row, first: usize) -> Result<EventOutcome> {
        Ok(EventOutcome {
            created_at: row.int(first)?,
            pass: row.text(first + 1)?,
            level: row.opt_text(first + 2)?,
            outcome: row.text(first + 3)?,
            reason: row.text(first + 4)?,
            tokens_before: row.opt_int(first + 5)?,
            tokens_after: row.opt_int(first + 6)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::doctor::EventRow;
    use super::super::inspect::EventInfo;
    use super::*;

    fn outcome() -> EventOutcome {
        EventOutcome {
            created_at: 5,
            pass: "leaf".into(),
            level: Some("normal".into()),
            outcome: "compacted".into(),
            reason: "threshold".into(),
            tokens_before: Some(900),
            tokens_after: None,
        }
    }

    #[test]
    fn both_rows_serialize_the_outcome_as_their_own_fields_in_column_order() {
        let row = serde_json::to_string(&EventRow {
            conversation_id: 3,
            event: outcome(),
        })
        .unwrap();
        assert_eq!(
            row,
            r#"{"conversationId":3,"createdAt":5,"pass":"leaf","level":"normal","outcome":"compacted","reason":"threshold","tokensBefore":900,"tokensAfter":null}"#
        );
        let info = serde_json::to_string(&EventInfo {
            id: 7,
            event: outcome(),
            summary_id: None,
            telemetry_json: Some("{}".into()),
            repeats: 1,
            last_at: None,
        })
        .unwrap();
        assert_eq!(
            info,
            r#"{"id":7,"createdAt":5,"pass":"leaf","level":"normal","outcome":"compacted","reason":"threshold","tokensBefore":900,"tokensAfter":null,"summaryId":null,"telemetryJson":"{}","repeats":1,"lastAt":null}"#
        );
    }
}
