//! What summarizing costs: one `summarizer_calls` row per call (tokens in and out, the pass and
//! level, what came of the answer), and the totals `/lcm status` shows. Written in the same
//! transaction as the pass's outcome, never across an await.

use serde::Serialize;

use crate::error::Result;
use crate::store::Sql;

/// One summarizer call, as recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call<'a> {
    /// The conversation summarized, a row id in `conversations`.
    pub conversation_id: i64,
    /// `leaf`, `condensed`, or `repair`.
    pub pass: &'a str,
    /// The level asked for: "normal", "aggressive" or "fallback".
    pub level: &'a str,
    /// Tokens sent to the summarizer.
    pub input_tokens: i64,
    /// Tokens the summarizer answered with.
    pub output_tokens: i64,
    /// Whether the provider reported the tokens (`provider`) or we estimated them (`estimate`).
    pub counted_by: &'a str,
    /// `stored` (the answer became a summary), `rejected` (it was not a usable summary),
    /// `failed` (no answer: an error or a timeout) or `stale` (the context changed meanwhile).
    pub outcome: &'a str,
    /// Why the call ended as it did (a rejection's or failure's reason), when there is one.
    pub reason: Option<&'a str>,
}

/// Inserts one row into `summarizer_calls`.
pub const RECORD_SQL: &str = "INSERT INTO summarizer_calls (conversation_id, created_at, pass, level, input_tokens, output_tokens, counted_by, outcome, reason) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";

/// Records one summarizer call, at `now_ms` (ms since the epoch).
pub fn record(sql: &mut impl Sql, call: &Call<'_>, now_ms: i64) -> Result<()> {
    sql.execute(
        RECORD_SQL,
        &[
            call.conversation_id.into(),
            now_ms.into(),
            call.pass.into(),
            call.level.into(),
            call.input_tokens.into(),
            call.output_tokens.into(),
            call.counted_by.into(),
            call.outcome.into(),
            call.reason.into(),
        ],
    )
}

/// Totals over a set of calls.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Spend {
    /// How many calls were recorded.
    pub calls: i64,
    /// Calls whose answer became a summary.
    pub stored: i64,
    /// Calls whose answer was not a usable summary.
    pub rejected: i64,
    /// Calls that got no answer (error, timeout) or whose answer arrived after the context changed.
    pub failed: i64,
    /// Tokens sent, over all the calls.
    pub input_tokens: i64,
    /// Tokens answered, over all the calls.
    pub output_tokens: i64,
    /// Whether any call's tokens are our estimate rather than the provider's count.
    pub estimated: bool,
}

/// Spend of one pass kind (`leaf`, `condensed`, `repair`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PassSpend {
    /// The pass kind: `leaf`, `condensed` or `repair`.
    pub pass: String,
    /// Its totals.
    #[serde(flatten)]
    pub spend: Spend,
}

const TOTALS: &str = "SELECT pass, COUNT(*), \
       COUNT(CASE WHEN outcome = 'stored' THEN 1 END), COUNT(CASE WHEN outcome = 'rejected' THEN 1 END), COUNT(CASE WHEN outcome IN ('failed', 'stale') THEN 1 END), \
       COALESCE(SUM(input_tokens), 0), COALESCE(SUM(output_tokens), 0), COUNT(CASE WHEN counted_by = 'estimate' THEN 1 END) > 0 \
     FROM summarizer_calls";

/// Spend per pass kind, for one conversation or (with `None`) the whole database.
pub fn by_pass(sql: &mut impl Sql, conversation_id: Option<i64>) -> Result<Vec<PassSpend>> {
    let rows = match conversation_id {
        Some(id) => sql.query(
            &format!("{TOTALS} WHERE conversation_id = ?1 GROUP BY pass ORDER BY pass"),
            &[id.into()],
        )?,
        None => sql.query(&format!("{TOTALS} GROUP BY pass ORDER BY pass"), &[])?,
    };
    rows.iter()
        .map(|r| {
            Ok(PassSpend {
                pass: r.text(0)?,
                spend: Spend {
                    calls: r.int(1)?,
                    stored: r.int(2)?,
                    rejected: r.int(3)?,
                    failed: r.int(4)?,
                    input_tokens: r.int(5)?,
                    output_tokens: r.int(6)?,
                    estimated: r.int(7)? != 0,
                },
            })
        })
        .collect()
}
