//! Delegated recall (`lcm_ask`), the engine's half: find the evidence for a question in what the
//! caller may read, and build the one LLM request; then turn the LLM's answer (or its failure)
//! into the short, capped result the caller gets.
//!
//! The job has two steps and keeps no state between them: [`Engine::ask_start`] searches (the
//! question's terms over messages and summaries, the original messages under summaries that
//! match or that the caller names, the message after each hit), redacts every text with the
//! same patterns as the summarizer's input, and packs the evidence into a hard token budget
//! (`core::ask`); the shell awaits the LLM with no transaction open; [`Engine::ask_finish`]
//! bounds the answer and keeps only citations of evidence it was given. Nothing here writes.
//!
//! Scoping is the recall tools' (`recall/`): every row comes from a conversation the caller's
//! own session key reaches, and a named id outside it is answered like an unknown id.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ask_candidates::{from_message, from_summary, Gathered};
use super::params::{validate_session, SessionRef};
use super::recall::{RecallTarget, Target};
use super::Engine;
use crate::core::ask::answer::{self, Answer, Outcome};
use crate::core::ask::evidence::{self, Candidate, Evidence, Origin};
use crate::core::ask::terms::{mentions, search_terms};
use crate::core::ask::{
    ANSWER_REQUEST_TOKENS, EVIDENCE_DEFAULT_TOKENS, EVIDENCE_MAX_TOKENS, EVIDENCE_MIN_TOKENS,
    MAX_QUESTION_CHARS,
};
use crate::error::{Error, Result};
use crate::store::recall;
use crate::store::search::{self, SearchMode, TimeWindow};
use crate::store::Sql;

/// What [`Engine::gather_hits`] loaded.
pub(super) struct GatheredHits {
    /// Each message's `(id, conversation, seq)`.
    pub(super) messages: Vec<(i64, i64, i64)>,
    /// Each summary's id.
    pub(super) summaries: Vec<i64>,
}

/// Hits read per term.
const HITS_PER_TERM: usize = 20;
/// Summaries the caller may name in one call.
const MAX_NAMED_SUMMARIES: usize = 10;
/// Original messages read under one summary (named, or matched by a term).
const MESSAGES_PER_SUMMARY: i64 = 200;
/// Summaries matched by a term whose original messages are read.
const EXPANDED_SUMMARIES: usize = 6;
/// Message hits whose next message is read as context.
const NEIGHBOURED_HITS: usize = 12;
/// Longest term searched, in characters (a longer "word" is a pasted blob, not a key term).
const MAX_TERM_CHARS: usize = 200;

/// `lcm_ask`'s arguments, for [`Engine::ask_start`].
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AskParams {
    /// The caller's session, from which its reach is derived.
    #[serde(flatten)]
    pub session: SessionRef,
    /// The question to answer from the stored history (a non-empty string).
    #[serde(default)]
    pub question: Option<Value>,
    /// A literal string to search for besides the question's own terms.
    #[serde(default)]
    pub pattern: Option<Value>,
    /// Summaries whose original messages are evidence (ids as `lcm_describe` takes them).
    #[serde(default)]
    pub summary_ids: Option<Value>,
    /// "conversation" (default) or "agent".
    #[serde(default)]
    pub scope: Option<String>,
    /// Only evidence from this time on, in ms since the epoch (inclusive).
    #[serde(default)]
    pub since: Option<i64>,
    /// Only evidence from before this time, in ms since the epoch (exclusive).
    #[serde(default)]
    pub before: Option<i64>,
    /// A second semantic round seeded with the first round's best evidence (multi-hop
    /// questions); on unless false (docs/recall.md has what it measured).
    #[serde(default)]
    pub second_round: Option<bool>,
    /// The evidence budget (clamped to [EVIDENCE_MIN_TOKENS, EVIDENCE_MAX_TOKENS]).
    #[serde(default)]
    pub max_evidence_tokens: Option<Value>,
}

/// The request for the LLM, or the finished answer when there is nothing to ask about.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AskStart {
    /// The request text; `None` when no evidence was found (`answer` is then set).
    pub prompt: Option<String>,
    /// What the LLM is asked to write at most.
    pub max_tokens: u32,
    /// The words searched for: the question's distinctive terms and the `pattern`.
    pub terms: Vec<String>,
    /// The scope searched: "conversation" or "agent".
    pub scope: &'static str,
    /// How many conversations in reach were searched.
    pub conversations: usize,
    /// The evidence sent (ids, kinds, sizes; never text).
    pub evidence: Vec<Evidence>,
    /// The evidence's size in the prompt, in estimated tokens.
    pub evidence_tokens: u32,
    /// The evidence budget it was packed under, in tokens, after clamping.
    pub evidence_budget: u32,
    /// Candidates left out for want of budget.
    pub left_out: usize,
    /// Credentials replaced in the evidence before it was sent.
    pub redacted: u32,
    /// The finished answer, when there is no prompt (nothing found to ask about).
    pub answer: Option<Answer>,
}

/// What the shell reports after the LLM call.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AskFinishParams {
    /// "answered", "llm_failed", "timed_out" or "no_llm".
    pub outcome: String,
    /// The LLM's answer, when the outcome is "answered".
    #[serde(default)]
    pub text: Option<String>,
    /// What went wrong, for the other outcomes.
    #[serde(default)]
    pub detail: Option<String>,
    /// The evidence of the start step (its `kind` and `id` are read).
    #[serde(default)]
    pub evidence: Vec<EvidenceRef>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct EvidenceRef {
    pub kind: String,
    pub id: i64,
}

fn question_of(value: Option<&Value>) -> Result<String> {
    let text = match value {
        Some(Value::String(s)) => s.trim(),
        None | Some(Value::Null) => {
            return Err(Error::input(
                "question",
                "is required: the question to answer from the stored history",
            ))
        }
        Some(other) => {
            return Err(Error::input(
                "question",
                format!("must be a string, got {other}"),
            ))
        }
    };
    if text.is_empty() {
        return Err(Error::input("question", "must not be empty"));
    }
    if text.chars().count() > MAX_QUESTION_CHARS {
        return Err(Error::input(
            "question",
            format!("is longer than {MAX_QUESTION_CHARS} characters; ask something shorter"),
        ));
    }
    Ok(text.to_owned())
}

fn pattern_of(value: Option<&Value>) -> Result<Option<String>> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(Value::String(s)) if s.chars().count() > search::MAX_PATTERN_CHARS => {
            Err(Error::input(
                "pattern",
                format!("is longer than {} characters", search::MAX_PATTERN_CHARS),
            ))
        }
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(Error::input(
            "pattern",
            format!("must be a string, got {other}"),
        )),
    }
}

/// The named summary ids: one id, or a list of them (at most [`MAX_NAMED_SUMMARIES`]).
fn summary_ids_of(value: Option<&Value>) -> Result<Vec<Value>> {
    match value {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(ids)) if ids.len() > MAX_NAMED_SUMMARIES => Err(Error::input(
            "summaryIds",
            format!(
                "names {} summaries; name at most {MAX_NAMED_SUMMARIES}",
                ids.len()
            ),
        )),
        Some(Value::Array(ids)) => Ok(ids.clone()),
        Some(one) => Ok(vec![one.clone()]),
    }
}

fn budget_of(value: Option<&Value>) -> Result<u32> {
    match value {
        None | Some(Value::Null) => Ok(EVIDENCE_DEFAULT_TOKENS),
        Some(Value::Number(n)) => {
            let n = n
                .as_f64()
                .filter(|n| n.is_finite())
                .ok_or_else(|| Error::input("maxEvidenceTokens", "must be a number"))?;
            Ok(n.clamp(
                f64::from(EVIDENCE_MIN_TOKENS),
                f64::from(EVIDENCE_MAX_TOKENS),
            ) as u32)
        }
        Some(other) => Err(Error::input(
            "maxEvidenceTokens",
            format!("must be a number of tokens, got {other}"),
        )),
    }
}

impl<S: Sql> Engine<S> {
    /// Finds the evidence for a question and builds the LLM request (or, when nothing is found,
    /// the finished answer saying so).
    pub fn ask_start(&mut self, params: AskParams) -> Result<AskStart> {
        validate_session(&params.session)?;
        let question = question_of(params.question.as_ref())?;
        let pattern = pattern_of(params.pattern.as_ref())?;
        let named = summary_ids_of(params.summary_ids.as_ref())?;
        let budget = budget_of(params.max_evidence_tokens.as_ref())?;
        let window = TimeWindow {
            since: params.since,
            before: params.before,
        };
        if let (Some(since), Some(before)) = (window.since, window.before) {
            if since >= before {
                return Err(Error::input("since", "must be earlier than before"));
            }
        }
        let (scope, conversations) =
            self.scoped_conversations(&params.session, params.scope.as_deref())?;
        let terms: Vec<String> = search_terms(&question, pattern.as_deref())
            .into_iter()
            .filter(|t| t.chars().count() <= MAX_TERM_CHARS)
            .collect();
        let mut found = Gathered::default();

        for id in named {
            let target = RecallTarget {
                session: params.session.clone(),
                summary_id: Some(id),
                message_id: None,
                cursor: None,
                max_tokens: None,
                all_messages: None,
            };
            let Target::Summary(summary) = self.recall_target(&target)? else {
                continue;
            };
            let covered =
                recall::covered_messages(self.store.sql(), summary.id, 0, MESSAGES_PER_SUMMARY)?;
            found.push(from_summary(summary, Origin::Named));
            for m in covered {
                found.push(from_message(m, Origin::Named));
            }
        }

        self.lexical_candidates(&terms, &conversations, window, &mut found)?;
        // A question without distinctive words ("what did we say?") asks about nothing in
        // particular: the semantic index is not asked either.
        let semantic = if terms.is_empty() {
            Vec::new()
        } else {
            self.semantic_ranking(&question, &conversations, window, budget, &mut found)?
        };
        // Multi-hop: a second semantic round from the question and the first round's best
        // evidence finds a fact that only the first one's words lead to (hybrid.rs).
        let (second, second_lexical) = if params.second_round != Some(false) && !semantic.is_empty()
        {
            let first =
                evidence::fused_order(found.candidates.clone(), &terms, &[(&semantic, 1.0)]);
            let seed = super::hybrid::second_round_query(&question, &first);
            let ranked =
                self.semantic_ranking(&seed, &conversations, window, budget, &mut found)?;
            // And a lexical one for the names that evidence says and the question does not.
            let lexical =
                self.bridging_ranking(&terms, &first, &conversations, window, &mut found)?;
            (ranked, lexical)
        } else {
            (Vec::new(), Vec::new())
        };

        // Every row comes from a conversation in reach; checked once more before it can leave.
        let allowed: HashSet<i64> = conversations.iter().copied().collect();
        let named_ok = |c: &Candidate| c.origin == Origin::Named;
        let mut redacted = 0;
        let mut candidates = Vec::with_capacity(found.candidates.len());
        for mut c in found.candidates {
            if !(allowed.contains(&c.conversation_id) || named_ok(&c)) {
                continue;
            }
            let r = self.redactor.redact(&c.text);
            if !r.counts.is_empty() {
                redacted += r.counts.total();
                c.text = r.text;
            }
            candidates.push(c);
        }
        let rounds = [
            (semantic.as_slice(), 1.0),
            (second.as_slice(), super::hybrid::SECOND_ROUND_WEIGHT),
            (
                second_lexical.as_slice(),
                super::hybrid::SECOND_ROUND_WEIGHT,
            ),
        ];
        let selection = evidence::select_fused(candidates, &terms, &rounds, budget);
        let (prompt, answer) = if selection.items.is_empty() {
            let detail = if terms.is_empty() {
                "the question has no distinctive words to search for".to_owned()
            } else {
                format!("searched for: {}", terms.join(", "))
            };
            (
                None,
                Some(answer::finish(Outcome::NothingFound, "", &detail, &[])),
            )
        } else {
            (Some(answer::prompt(&question, &selection.items)), None)
        };
        Ok(AskStart {
            prompt,
            max_tokens: ANSWER_REQUEST_TOKENS,
            terms,
            scope,
            conversations: conversations.len(),
            evidence_tokens: selection.tokens,
            evidence_budget: budget,
            left_out: selection.left_out,
            evidence: selection.items,
            redacted,
            answer,
        })
    }

    /// The lexical half of a recall: each term searched as `lcm_grep`'s text mode over messages
    /// and summaries of `conversations`, the originals under matching summaries that mention a
    /// term, and the message after each message hit; loaded into `found`.
    pub(super) fn lexical_candidates(
        &mut self,
        terms: &[String],
        conversations: &[i64],
        window: TimeWindow,
        found: &mut Gathered,
    ) -> Result<()> {
        if !terms.is_empty() && !conversations.is_empty() {
            self.store.index_waiting_messages()?;
        }
        let mut message_hits = Vec::new();
        let mut summary_hits = Vec::new();
        for term in terms {
            let hits = self.gather_hits(
                term,
                conversations,
                window,
                HITS_PER_TERM,
                Origin::Hit,
                found,
            )?;
            message_hits.extend(hits.messages);
            summary_hits.extend(hits.summaries);
        }
        // A summary's words may differ from its originals': read the originals under the
        // summaries that matched, keeping those that mention a term.
        for id in summary_hits.into_iter().take(EXPANDED_SUMMARIES) {
            for m in recall::covered_messages(self.store.sql(), id, 0, MESSAGES_PER_SUMMARY)? {
                if !found.has("message", m.id) && terms.iter().any(|t| mentions(&m.content, t)) {
                    found.push(from_message(m, Origin::Expanded));
                }
            }
        }
        // The message after a hit often holds what was decided or what a command printed.
        for (hit, conversation, seq) in message_hits.into_iter().take(NEIGHBOURED_HITS) {
            if let Some(m) = recall::message_at_seq(self.store.sql(), conversation, seq + 1)? {
                found.push(Candidate {
                    follows: Some(hit),
                    ..from_message(m, Origin::Neighbour)
                });
            }
        }

        Ok(())
    }

    /// The hits of `term` (text mode, within `conversations` and `window`, up to `limit` of each
    /// kind) not gathered yet, loaded into `found` as found by `origin`, in hit order.
    pub(super) fn gather_hits(
        &mut self,
        term: &str,
        conversations: &[i64],
        window: TimeWindow,
        limit: usize,
        origin: Origin,
        found: &mut Gathered,
    ) -> Result<GatheredHits> {
        let hits = search::search_in(
            self.store.sql(),
            Some(conversations),
            term,
            SearchMode::Text,
            limit,
            window,
        )?;
        let (mut messages, mut summaries) = (Vec::new(), Vec::new());
        for hit in hits {
            if found.has(hit.kind, hit.id) {
                continue;
            }
            if hit.kind == "message" {
                if let Some(m) = recall::message(self.store.sql(), hit.id)? {
                    messages.push((m.id, m.conversation_id, m.seq));
                    found.push(from_message(m, origin));
                }
            } else if let Some(s) = recall::summary(self.store.sql(), hit.id)? {
                summaries.push(s.id);
                found.push(from_summary(s, origin));
            }
        }
        Ok(GatheredHits {
            messages,
            summaries,
        })
    }

    /// The caller's answer from the LLM's text or failure, capped and with its citations checked
    /// against the evidence that was sent.
    pub fn ask_finish(&self, params: AskFinishParams) -> Result<Answer> {
        let outcome = match params.outcome.as_str() {
            "answered" => Outcome::Answered,
            "llm_failed" => Outcome::LlmFailed,
            "timed_out" => Outcome::TimedOut,
            "no_llm" => Outcome::NoLlm,
            other => {
                return Err(Error::input(
                    "outcome",
                    format!("unknown outcome {other:?}"),
                ))
            }
        };
        let evidence: Vec<Evidence> = params
            .evidence
            .iter()
            .map(|e| Evidence {
                kind: if e.kind == "summary" {
                    "summary"
                } else {
                    "message"
                },
                id: e.id,
                conversation_id: 0,
                role: String::new(),
                at: 0,
                text: String::new(),
                tokens: 0,
                excerpt: false,
                matched_terms: 0,
            })
            .collect();
        Ok(answer::finish(
            outcome,
            params.text.as_deref().unwrap_or(""),
            params.detail.as_deref().unwrap_or(""),
            &evidence,
        ))
    }
}
