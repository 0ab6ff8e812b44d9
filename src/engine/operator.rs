//! The operator's view (`/lcm status`, `/lcm doctor`, and the same through the library API): what
//! is stored, what compaction last did and whether it is backing off, and the integrity checks of
//! [`crate::store::doctor`], with the safe fixes applied in one transaction on request. Unlike the
//! recall tools this is for the operator, not the model: status counts cover the whole database.

use serde::{Deserialize, Serialize};

use super::params::SessionRef;
use super::Engine;
use crate::core::compaction::hold::SummaryRuns;
use crate::core::compaction::RetryState;
use crate::error::Result;
use crate::store::doctor::{self, Check, EventRow, Totals};
use crate::store::spend::{self, PassSpend};
use crate::store::Sql;

/// `status`' arguments (`/lcm status`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusParams {
    /// The session to detail, when the command runs inside one.
    #[serde(default)]
    pub session_id: Option<String>,
    /// The session key of that session, when the host gave one.
    #[serde(default)]
    pub session_key: Option<String>,
}

/// This session's conversation, as status details it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionStatus {
    /// Row id in `conversations`.
    pub conversation_id: i64,
    /// The conversation's key: the host's session key, or the session id when it gave none.
    pub session_key: String,
    /// Messages stored in the conversation.
    pub messages: i64,
    /// Tokens of the stored context the view is cut from (summaries and the messages they do not
    /// cover): the history's size, not what the model sees.
    pub context_tokens: i64,
    /// The part of `contextTokens` taken by summaries, in estimated tokens.
    pub context_summary_tokens: i64,
    /// Tokens of the view this process last assembled for the conversation and its budget; None
    /// when it assembled none (another process, e.g. the `lcm` command line, serves the turns).
    pub view_tokens: Option<u64>,
    /// The budget that view was assembled under, in tokens.
    pub view_budget: Option<u32>,
    /// The compaction backoff state (failures, next attempt, breaker); None when none is stored or
    /// this build cannot read it.
    pub retry: Option<RetryState>,
    /// Compaction work the trigger recorded is waiting for `maintain`.
    pub compaction_pending: bool,
    /// The summary request in flight across processes, lost requests and a pending hand-over
    /// (`core::compaction::hold`); absent when unreadable.
    pub summary_runs: Option<SummaryRuns>,
    /// The conversation's 5 latest compaction events, newest first.
    pub latest: Vec<EventRow>,
    /// What this conversation's summaries cost, per pass kind.
    pub spend: Vec<PassSpend>,
}

/// `status`' answer (`/lcm status`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    /// Counts across the database: conversations, messages, tokens, summaries, database size.
    pub totals: Totals,
    /// The session the command runs in, when it named one that has a conversation.
    pub session: Option<SessionStatus>,
    /// The latest compactions and failures across the database.
    pub latest: Vec<EventRow>,
    /// The latest failed passes across the database, newest first.
    pub failures: Vec<EventRow>,
    /// What summaries cost across the database, per pass kind.
    pub spend: Vec<PassSpend>,
}

/// `doctor`'s arguments (`/lcm doctor`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DoctorParams {
    /// Apply the safe fixes (rebuild indexes, recompute totals) after checking.
    #[serde(default)]
    pub fix: bool,
}

/// `doctor`'s answer (`/lcm doctor`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DoctorReport {
    /// Every check passed (after the fix, when one ran).
    pub ok: bool,
    /// Every check's outcome (after the fix, when one ran).
    pub checks: Vec<Check>,
    /// Checks repaired by the fix, then found ok on a second run.
    pub fixed: Vec<&'static str>,
}

impl<S: Sql> Engine<S> {
    /// What is stored, what compaction last did, and, for the named session, its conversation's
    /// state.
    pub fn status(&mut self, params: StatusParams) -> Result<Status> {
        let sql = self.store.sql();
        let totals = doctor::totals(sql)?;
        let latest = doctor::latest_events(sql, None, false, 5)?;
        let failures = doctor::latest_events(sql, None, true, 5)?;
        let session = match params.session_id.filter(|s| !s.trim().is_empty()) {
            None => None,
            Some(session_id) => {
                let session = SessionRef {
                    session_id,
                    session_key: params.session_key,
                };
                match self.conversation(&session)? {
                    None => None,
                    Some(c) => {
                        let sql = self.store.sql();
                        let state = doctor::retry_state_json(sql, c.id)?;
                        // A state this build cannot read is reported as absent, not as an error:
                        // status must work on a damaged database.
                        let retry = state
                            .as_ref()
                            .and_then(|(json, _)| serde_json::from_str(json).ok());
                        Some(SessionStatus {
                            conversation_id: c.id,
                            session_key: c.session_key.clone(),
                            messages: c.message_count,
                            context_tokens: c.context_token_count,
                            context_summary_tokens: c.context_summary_tokens,
                            view_tokens: self.views.tokens(c.id),
                            view_budget: self.views.budget(c.id),
                            retry,
                            compaction_pending: state.is_some_and(|(_, pending)| pending),
                            summary_runs: crate::store::summary_runs::load(sql, c.id).ok(),
                            latest: doctor::latest_events(sql, Some(c.id), false, 5)?,
                            spend: spend::by_pass(sql, Some(c.id))?,
                        })
                    }
                }
            }
        };
        let spend = spend::by_pass(self.store.sql(), None)?;
        Ok(Status {
            totals,
            session,
            latest,
            failures,
            spend,
        })
    }

    /// Runs the integrity checks; with `fix`, applies the safe fixes in one transaction and checks
    /// again.
    pub fn doctor(&mut self, params: DoctorParams) -> Result<DoctorReport> {
        let found = doctor::checks(self.store.sql())?;
        if !params.fix || found.iter().all(|c| c.ok || !c.fixable) {
            return Ok(DoctorReport {
                ok: found.iter().all(|c| c.ok),
                checks: found,
                fixed: Vec::new(),
            });
        }
        let repaired = self.store.write(|tx| doctor::fix(tx, &found))?;
        // The totals changed under any cached view.
        self.views = Default::default();
        let after = doctor::checks(self.store.sql())?;
        let fixed = repaired
            .into_iter()
            .filter(|name| after.iter().any(|c| c.name == *name && c.ok))
            .collect();
        Ok(DoctorReport {
            ok: after.iter().all(|c| c.ok),
            checks: after,
            fixed,
        })
    }
}
