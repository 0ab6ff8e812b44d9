//! Hybrid retrieval, the semantic half of a recall and its fusion with the lexical half: the
//! messages and summaries of the caller's reach nearest in meaning to the question (a summary
//! brings its originals nearest to the question, a message the one after it), in one ranked
//! list that `core::ask::evidence::select_fused` fuses with the lexical ranking by reciprocal
//! rank. Used by `lcm_ask`'s evidence and by `lcm_grep`'s `ranked` mode.
//!
//! Time: the caller's `since`/`before` bound the semantic candidates as they bound the lexical
//! ones; without them, a time phrase in the question ("yesterday", "last week", "before
//! 2026-05-01"; `core::ask::when`), read against the newest stored time in reach, puts the
//! candidates of that period first.
//!
//! Scoping: every vector read belongs to a conversation of `conversations` (the caller's reach);
//! every row loaded is checked against it again.

use std::collections::HashSet;

use super::ask_candidates::{from_message, Gathered};
use super::Engine;
use crate::core::ask::evidence::{self, Candidate, Origin};
use crate::core::ask::terms::search_terms;
use crate::core::ask::when::{self, Window};
use crate::core::ask::EVIDENCE_DEFAULT_TOKENS;
use crate::error::Result;
use crate::store::recall;
use crate::store::search::{SearchHit, TimeWindow};
use crate::store::snippet;
use crate::store::Sql;

/// The similarity the nearest candidate needs when the lexical search found nothing: below it
/// the question is about nothing stored. Measured with the shipped embedder against stored (four
/// bits a component) vectors, over the distillation script's 16 paraphrase pairs and the engine
/// tests' 3: the engine tests' paraphrases score 0.45-0.58 against their stored message, the 19
/// pairs 0.51 at the median (0.24 for the farthest); unrelated sentences 0.22 at the median, 95 %
/// at or below 0.40.
pub(super) const CONFIDENT_SIMILARITY: f32 = 0.40;
/// Messages the semantic index ranks per question at most; it proposes them, nearest first,
/// until they would fill the evidence budget. A static embedder places a paraphrase's source
/// well below the top 16 more often than not (at 16 the engine's rows of `cargo bench --bench
/// recall_eval` were 64.3 %; 64: 83.3 %, 128: 87.7 %, 256: 87.0 %, 512: 85.7 %, with most of the
/// budget then held by the nearest).
pub(super) const SEMANTIC_MESSAGES: usize = 256;
/// Summaries it proposes; each brings its nearest originals.
pub(super) const SEMANTIC_SUMMARIES: usize = 4;
/// Originals a proposed summary brings.
const ORIGINALS_PER_SUMMARY: usize = 3;
/// Original messages read under a proposed summary to find its nearest ones.
const ORIGINALS_READ: i64 = 200;
/// Proposed messages whose next message is proposed too.
const NEIGHBOURED: usize = 8;
/// Evidence items of the first round that seed the second, and the characters taken of each.
const SEED_ITEMS: usize = 3;
/// The weight of the second round's ranking in the fusion (the first round's is 1).
pub(super) const SECOND_ROUND_WEIGHT: f64 = 0.5;
const SEED_CHARS: usize = 600;

/// The text of a second retrieval round: the question and the start of the first round's best
/// `SEED_ITEMS` candidates (fused order).
pub(super) fn second_round_query(question: &str, first: &[(u32, Candidate)]) -> String {
    let mut query = question.to_owned();
    for (_, c) in first.iter().take(SEED_ITEMS) {
        query.push('\n');
        query.extend(c.text.chars().take(SEED_CHARS));
    }
    query
}

/// The texts a second lexical round takes its words from: the start of the first round's best
/// `SEED_ITEMS` candidates (fused order), as the semantic second round reads them.
pub(super) fn second_round_texts(first: &[(u32, Candidate)]) -> Vec<String> {
    first
        .iter()
        .take(SEED_ITEMS)
        .map(|(_, c)| c.text.chars().take(SEED_CHARS).collect())
        .collect()
}

impl<S: Sql> Engine<S> {
    /// The semantic ranking of `question` over `conversations`, its candidates loaded into
    /// `found`: `(kind, id)`, best first. Empty when semantic recall is off or nothing in reach
    /// has a vector.
    pub(super) fn semantic_ranking(
        &mut self,
        question: &str,
        conversations: &[i64],
        window: TimeWindow,
        budget: u32,
        found: &mut Gathered,
    ) -> Result<Vec<(&'static str, i64)>> {
        if self.embedder().is_none() || conversations.is_empty() {
            return Ok(Vec::new());
        }
        let caller = (window.since.is_some() || window.before.is_some()).then_some(Window {
            since: window.since,
            before: window.before,
        });
        let mut nearest = self.nearest(conversations, question, SEMANTIC_MESSAGES, caller)?;
        // How many of the messages and of the summaries at the head are the period's.
        let mut in_period = (0, 0);
        if caller.is_none() {
            let period = self
                .newest_held(conversations)
                .and_then(|anchor| when::window_of(question, anchor));
            if let Some(period) = period {
                // The period's candidates first, then the others.
                let mut first =
                    self.nearest(conversations, question, SEMANTIC_MESSAGES, Some(period))?;
                in_period = (first.messages.len(), first.summaries.len());
                for (list, rest) in [
                    (&mut first.messages, nearest.messages),
                    (&mut first.summaries, nearest.summaries),
                ] {
                    let seen: HashSet<i64> = list.iter().map(|n| n.id).collect();
                    list.extend(rest.into_iter().filter(|n| !seen.contains(&n.id)));
                }
                nearest = first;
            }
        }
        // Something is always nearest: alone, the semantic index must be confident, so that a
        // question about nothing stored is still answered "nothing found" without an LLM call.
        let best = nearest
            .messages
            .iter()
            .chain(&nearest.summaries)
            .map(|n| n.similarity)
            .fold(f32::MIN, f32::max);
        if found.candidates.is_empty() && best < CONFIDENT_SIMILARITY {
            return Ok(Vec::new());
        }
        let allowed: HashSet<i64> = conversations.iter().copied().collect();
        let query = std::mem::take(&mut nearest.query);
        // Messages and summaries in one list: a named period's candidates first, each group in
        // the semantic index's order (its score).
        let mut proposed: Vec<(bool, f32, &'static str, i64)> = nearest
            .messages
            .iter()
            .enumerate()
            .map(|(i, n)| (i < in_period.0, n.score, "message", n.id))
            .chain(
                nearest
                    .summaries
                    .iter()
                    .take(SEMANTIC_SUMMARIES)
                    .enumerate()
                    .map(|(i, n)| (i < in_period.1, n.score, "summary", n.id)),
            )
            .collect();
        proposed.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.total_cmp(&a.1)));
        let mut order = Vec::new();
        let mut messages_seen = 0;
        // What the proposed candidates would take of the evidence budget.
        let mut filled = 0;
        for (_, _, kind, id) in proposed {
            if filled >= budget {
                break;
            }
            if kind == "summary" {
                let before = found.candidates.len();
                self.propose_summary(id, &query, &allowed, found, &mut order)?;
                filled += found.candidates[before..]
                    .iter()
                    .map(|c| evidence::item_tokens(&c.text, budget))
                    .sum::<u32>();
                continue;
            }
            messages_seen += 1;
            let Some(m) = recall::message(self.store.sql(), id)? else {
                continue;
            };
            if !allowed.contains(&m.conversation_id) {
                continue;
            }
            let (conversation, seq) = (m.conversation_id, m.seq);
            let candidate = from_message(m, Origin::Similar);
            filled += evidence::item_tokens(&candidate.text, budget);
            found.push(candidate);
            order.push(("message", id));
            if messages_seen <= NEIGHBOURED {
                if let Some(next) = recall::message_at_seq(self.store.sql(), conversation, seq + 1)?
                {
                    let next_id = next.id;
                    filled += evidence::item_tokens(&next.content, budget);
                    found.push(Candidate {
                        follows: Some(id),
                        ..from_message(next, Origin::Similar)
                    });
                    order.push(("message", next_id));
                }
            }
        }
        Ok(order)
    }

    /// A summary the semantic index proposes, and its originals nearest to `query`.
    fn propose_summary(
        &mut self,
        id: i64,
        query: &[i8],
        allowed: &HashSet<i64>,
        found: &mut Gathered,
        order: &mut Vec<(&'static str, i64)>,
    ) -> Result<()> {
        let Some(s) = recall::summary(self.store.sql(), id)? else {
            return Ok(());
        };
        if !allowed.contains(&s.conversation_id) {
            return Ok(());
        }
        // The originals nearest to the query, by their held vectors; only those are read.
        let mut originals: Vec<(f32, i64)> =
            recall::covered_message_ids(self.store.sql(), id, ORIGINALS_READ)?
                .into_iter()
                .filter(|(_, conversation)| allowed.contains(conversation))
                .filter_map(|(m, conversation)| {
                    Some((self.similarity_to(conversation, m, query)?, m))
                })
                .collect();
        originals.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)));
        found.push(super::ask_candidates::from_summary(s, Origin::Similar));
        order.push(("summary", id));
        for (_, m) in originals.into_iter().take(ORIGINALS_PER_SUMMARY) {
            let Some(m) = recall::message(self.store.sql(), m)? else {
                continue;
            };
            order.push(("message", m.id));
            found.push(from_message(m, Origin::Similar));
        }
        Ok(())
    }

    /// `lcm_grep`'s `ranked` mode: the pattern's words searched as `lcm_ask` searches a
    /// question's, fused with the semantic ranking, best first; `kinds` filters.
    pub(super) fn ranked_hits(
        &mut self,
        pattern: &str,
        conversations: &[i64],
        window: TimeWindow,
        kinds: &[&str],
        limit: usize,
    ) -> Result<Vec<SearchHit>> {
        let terms = search_terms(pattern, None);
        let mut found = Gathered::default();
        self.lexical_candidates(&terms, conversations, window, &mut found)?;
        // As many of the nearest as `lcm_ask`'s default evidence budget would hold.
        let semantic = self.semantic_ranking(
            pattern,
            conversations,
            window,
            EVIDENCE_DEFAULT_TOKENS,
            &mut found,
        )?;
        let allowed: HashSet<i64> = conversations.iter().copied().collect();
        let candidates: Vec<Candidate> = found
            .candidates
            .into_iter()
            .filter(|c| allowed.contains(&c.conversation_id) && kinds.contains(&c.kind))
            .collect();
        let ordered = evidence::fused_order(candidates, &terms, &[(&semantic, 1.0)]);
        Ok(ordered
            .into_iter()
            .take(limit)
            .map(|(_, c)| {
                let lower = c.text.to_lowercase();
                let (at, term) = terms
                    .iter()
                    .filter_map(|t| lower.find(&t.to_lowercase()).map(|at| (at, t.as_str())))
                    .min()
                    .unwrap_or((0, ""));
                let at = if lower.len() == c.text.len() { at } else { 0 };
                SearchHit {
                    kind: c.kind,
                    id: c.id,
                    conversation_id: c.conversation_id,
                    role: c.role.clone(),
                    snippet: snippet::around(&c.text, at, term),
                    created_at: c.at,
                }
            })
            .collect())
    }
}
