//! `lcm_grep`: search the conversations in the caller's reach (this session key's, or all of
//! its agent's), newest first or ranked, and say for each hit where it stands in the view.

use serde::{Deserialize, Serialize};

use super::Reach;
use crate::engine::params::{validate_session, SessionRef};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::store::masking;
use crate::store::recall;
use crate::store::search::{self, SearchHit, SearchMode, TimeWindow};
use crate::store::Sql;

const GREP_DEFAULT_LIMIT: usize = 20;
const GREP_MAX_LIMIT: usize = 200;

/// `lcm_grep`'s arguments.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GrepParams {
    /// The caller's session, from which its reach is derived.
    #[serde(flatten)]
    pub session: SessionRef,
    /// What to search for: literal text (`text`, `ranked`) or an FTS4 query (`full_text`).
    pub pattern: String,
    /// "text" (default), "full_text", or "ranked" (lexical and semantic candidates fused, best
    /// first).
    #[serde(default)]
    pub mode: Option<String>,
    /// "conversation" (default: this session's conversations, archived ones included) or "agent".
    #[serde(default)]
    pub scope: Option<String>,
    /// "both" (default), "messages" or "summaries".
    #[serde(default)]
    pub kind: Option<String>,
    /// ms since the epoch, inclusive.
    #[serde(default)]
    pub since: Option<i64>,
    /// ms since the epoch, exclusive.
    #[serde(default)]
    pub before: Option<i64>,
    /// At most this many hits (1–200, default 20).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// A grep hit, with where to go next: for a message summarized away, the summary in the view
/// that covers it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GrepHit {
    #[serde(flatten)]
    pub hit: SearchHit,
    pub in_view: bool,
    /// A message in the view as a stub or an excerpt (expand it to read it whole).
    pub stubbed: bool,
    /// The highest summary above the hit that is in the current view (expand it to reach the hit).
    pub covered_by: Option<i64>,
}

/// `lcm_grep`'s answer.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GrepResult {
    /// The scope searched: "conversation" or "agent".
    pub scope: &'static str,
    /// How many conversations in reach were searched.
    pub conversations: usize,
    /// The hits, newest first (`ranked`: best first).
    pub hits: Vec<GrepHit>,
}

/// At most `limit` hits, newest first, where neither kind crowds the other out: a fact quoted in
/// many summaries must not hide the original message (what expand and describe start from), so
/// each kind keeps at least half the limit when it has that many hits.
fn fair_mix(hits: Vec<SearchHit>, limit: usize) -> Vec<SearchHit> {
    let newest_first =
        |a: &SearchHit, b: &SearchHit| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id));
    let (mut messages, mut summaries): (Vec<SearchHit>, Vec<SearchHit>) =
        hits.into_iter().partition(|h| h.kind == "message");
    messages.sort_by(newest_first);
    summaries.sort_by(newest_first);
    let take_messages = messages
        .len()
        .min(limit.div_ceil(2).max(limit - summaries.len().min(limit)));
    let take_summaries = summaries.len().min(limit - take_messages);
    let mut out: Vec<SearchHit> = messages
        .into_iter()
        .take(take_messages)
        .chain(summaries.into_iter().take(take_summaries))
        .collect();
    out.sort_by(newest_first);
    out
}

impl<S: Sql> Engine<S> {
    /// Searches what the caller may read, newest first.
    pub fn recall_grep(&mut self, params: GrepParams) -> Result<GrepResult> {
        validate_session(&params.session)?;
        // "ranked": lexical and semantic candidates fused, best first (engine/hybrid.rs).
        let ranked = params.mode.as_deref() == Some("ranked");
        let mode = if ranked {
            SearchMode::Text
        } else {
            SearchMode::parse(params.mode.as_deref().unwrap_or("text"))?
        };
        let (scope, conversations) =
            self.scoped_conversations(&params.session, params.scope.as_deref())?;
        let limit = params
            .limit
            .unwrap_or(GREP_DEFAULT_LIMIT)
            .clamp(1, GREP_MAX_LIMIT);
        let window = TimeWindow {
            since: params.since,
            before: params.before,
        };
        let kinds = match params.kind.as_deref().unwrap_or("both") {
            "both" => ["message", "summary"].as_slice(),
            "messages" => ["message"].as_slice(),
            "summaries" => ["summary"].as_slice(),
            other => {
                return Err(Error::input(
                    "kind",
                    format!(
                        "unknown kind {other:?} (expected \"messages\", \"summaries\" or \"both\")"
                    ),
                ))
            }
        };
        self.store.index_waiting_messages()?;
        let found = search::search_in(
            self.store.sql(),
            Some(&conversations),
            &params.pattern,
            mode,
            limit,
            window,
        )?;
        let hits = if ranked {
            // search_in above validated the pattern and the window the same way for both.
            self.ranked_hits(&params.pattern, &conversations, window, kinds, limit)?
        } else {
            fair_mix(
                found
                    .into_iter()
                    .filter(|h| kinds.contains(&h.kind))
                    .collect(),
                limit,
            )
        };
        let mut out = Vec::with_capacity(hits.len());
        for hit in hits {
            let (in_view, stubbed, covered_by) = if hit.kind == "message" {
                let view = masking::message_view(self.store.sql(), hit.id)?;
                let above = recall::summaries_above_message(self.store.sql(), hit.id)?;
                (
                    view.is_some(),
                    view.is_some_and(|v| v.stub.is_some()),
                    above
                        .iter()
                        .filter(|(_, _, v)| *v)
                        .map(|(id, _, _)| *id)
                        .next(),
                )
            } else {
                (
                    recall::summary_in_view(self.store.sql(), hit.id)?,
                    false,
                    None,
                )
            };
            out.push(GrepHit {
                hit,
                in_view,
                stubbed,
                covered_by,
            });
        }
        Ok(GrepResult {
            scope,
            conversations: conversations.len(),
            hits: out,
        })
    }

    /// The conversations a recall call searches: `conversation` (default: this session key's,
    /// archived segments included) or `agent` (every conversation the caller's reach allows).
    pub(in crate::engine) fn scoped_conversations(
        &mut self,
        session: &SessionRef,
        scope: Option<&str>,
    ) -> Result<(&'static str, Vec<i64>)> {
        match scope.unwrap_or("conversation") {
            "conversation" => Ok((
                "conversation",
                recall::conversations_with_key(self.store.sql(), session.key())?,
            )),
            "agent" | "all" => Ok(("agent", Reach::of(session).conversations(self.store.sql())?)),
            other => Err(Error::input(
                "scope",
                format!("unknown scope {other:?} (expected \"conversation\" or \"agent\")"),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(kind: &'static str, id: i64) -> SearchHit {
        SearchHit {
            kind,
            id,
            conversation_id: 1,
            role: "user".into(),
            snippet: String::new(),
            created_at: id,
        }
    }

    #[test]
    fn neither_kind_of_hit_crowds_the_other_out() {
        let kinds = |hits: Vec<SearchHit>| hits.iter().map(|h| h.kind).collect::<Vec<_>>();
        let many_summaries: Vec<SearchHit> = (1..=3)
            .map(|i| hit("message", i))
            .chain((10..20).map(|i| hit("summary", i)))
            .collect();
        let mixed = fair_mix(many_summaries, 5);
        assert_eq!(mixed.len(), 5);
        assert_eq!(
            kinds(mixed).iter().filter(|k| **k == "message").count(),
            3,
            "half the limit rounded up is kept for messages"
        );
        let few_summaries: Vec<SearchHit> = (1..=10)
            .map(|i| hit("message", i))
            .chain([hit("summary", 50)])
            .collect();
        assert_eq!(
            kinds(fair_mix(few_summaries, 5))
                .iter()
                .filter(|k| **k == "summary")
                .count(),
            1
        );
        let only_messages: Vec<SearchHit> = (1..=10).map(|i| hit("message", i)).collect();
        let newest = fair_mix(only_messages, 4);
        assert_eq!(
            newest.iter().map(|h| h.id).collect::<Vec<_>>(),
            vec![10, 9, 8, 7],
            "newest first"
        );
    }
}
