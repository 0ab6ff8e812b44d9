//! The semantic index, the engine's half: which embedder the engine uses, embedding what is
//! stored (a turn's messages inside the turn's write, or right after the turn when the caller
//! defers it; summaries inside the write that stores them), the backfill of what has no vector
//! yet (resumable, in bounded batches, from the host's `maintain`, never inside a turn), and
//! the semantic ranking of a recall: the question's
//! vector against every vector of the caller's reach, brute force over an in-memory copy that
//! is brought up to date from the store before each use.
//!
//! The ranking is by the question's vector **less the mean vector of what it is compared with**
//! (`score = (q - mean) . v`). A static embedder gives every text a share of one common
//! direction, so by plain cosine the stored texts that are most like all the others (routine
//! turns, chit-chat) come near every question. Subtracting the mean takes that share out and
//! ranks by what sets a text apart from the rest of its conversation; only the order changes:
//! the similarity reported with each hit is still the plain cosine (the confidence rule of
//! `hybrid.rs` reads it). Measured with `benches/recall_eval` (docs/recall-evaluation.md):
//! embedding-only evidence recall 66 % -> 94 % of 300 questions.
//!
//! Scoping is the caller's: every ranking takes the list of conversations the caller may read
//! and reads vectors of those conversations only. Nothing here decides who may read what.

use std::collections::HashMap;
use std::sync::Arc;

use crate::core::embed::{similarity, Embedder};
use crate::core::message::StoredMessage;
use crate::error::Result;
use crate::store::conversations::Conversation;
use crate::store::messages::Appended;
use crate::store::vectors::{self, Owner, StoredVector};
use crate::store::{Sql, WriteTx};

use super::Engine;

/// The embedder an engine shares with its writes.
pub type SharedEmbedder = Arc<dyn Embedder + Send + Sync>;

/// Characters of a text that are embedded: its start says what it is about, and a huge tool
/// output must not cost a turn milliseconds.
pub const EMBEDDED_CHARS: usize = 4_000;
/// Messages the backfill embeds in one `maintain`: `maintain` counts in the turn's overhead, so a
/// batch is small (the shipped embedder takes ~10-20 µs for a 160-character message natively;
/// docs/recall.md has the measured batch).
pub const BACKFILL_MESSAGES: usize = 64;
/// Summaries the backfill embeds in one `maintain`.
pub const BACKFILL_SUMMARIES: usize = 8;

/// The engine's default embedder when `semanticRecall` is on: the static table that ships in
/// the package (`core::embed::default_embedder`, built once per process).
pub fn default_embedder() -> Option<SharedEmbedder> {
    Some(Arc::new(Shipped(crate::core::embed::default_embedder())))
}

/// The process-wide default embedder, shared by every engine.
struct Shipped(&'static crate::core::embed::StaticEmbedder);

impl Embedder for Shipped {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn embed(&self, text: &str) -> Vec<i8> {
        self.0.embed(text)
    }
}

/// The vector of `text` (its first [`EMBEDDED_CHARS`] characters).
pub fn embed(embedder: &dyn Embedder, text: &str) -> Vec<i8> {
    let end = text
        .char_indices()
        .nth(EMBEDDED_CHARS)
        .map_or(text.len(), |(i, _)| i);
    embedder.embed(&text[..end])
}

/// Whether a vector says anything: a text without words (a tool call's empty text, whitespace)
/// embeds as all zeros, which is similar to nothing; such a vector is not stored (an eighth to a
/// quarter of a coding session's messages). Summaries, which always have words, keep theirs.
pub fn has_meaning(vector: &[i8]) -> bool {
    vector.iter().any(|c| *c != 0)
}

/// Inside the write that appended `parsed` to `before` (the conversation as it was): stores the
/// vectors of the messages the append stored. When it skipped some (already stored), which
/// `seq` each new one got is not known here: those wait for the backfill.
pub fn embed_appended(
    tx: &mut WriteTx<'_, impl Sql>,
    embedder: Option<&SharedEmbedder>,
    before: &Conversation,
    parsed: &[StoredMessage],
    appended: &Appended,
) -> Result<()> {
    let Some(embedder) = embedder else {
        return Ok(());
    };
    if appended.inserted == 0 || appended.skipped > 0 || appended.inserted != parsed.len() {
        return Ok(());
    }
    let rows: Vec<(i64, Vec<i8>)> = parsed
        .iter()
        .enumerate()
        .map(|(i, m)| {
            (
                before.message_count + 1 + i as i64,
                embed(embedder.as_ref(), &m.text),
            )
        })
        .filter(|(_, v)| has_meaning(v))
        .collect();
    vectors::put_by_seq(tx, before.id, &rows)
}

/// Inside the write that stored (or rewrote) a summary: stores its vector.
pub fn embed_summary(
    sql: &mut impl Sql,
    embedder: Option<&SharedEmbedder>,
    summary_id: i64,
    conversation_id: i64,
    text: &str,
) -> Result<()> {
    let Some(embedder) = embedder else {
        return Ok(());
    };
    let vector = embed(embedder.as_ref(), text);
    vectors::put(
        sql,
        Owner::Summary,
        &[(summary_id, conversation_id, vector)],
    )
}

/// The vectors of one conversation held in memory, in owner-id order, side by side in one
/// buffer (a scan reads memory in order), and what the store said about them when they were
/// read (to see whether they are still all of them).
#[derive(Default)]
struct Held {
    /// The store's commit count when the census was last taken.
    checked_at: Option<u64>,
    count: i64,
    max_id: i64,
    ids: Vec<i64>,
    ats: Vec<i64>,
    dim: usize,
    data: Vec<i8>,
    /// The sum of the held vectors, component by component (their mean times their count).
    sum: Vec<i64>,
}

impl Held {
    fn push(&mut self, v: StoredVector) {
        if self.ids.is_empty() {
            self.dim = v.vector.len();
            self.sum = vec![0; self.dim];
        }
        // One space per store (vector_space): a vector of another length is not comparable.
        if v.vector.len() != self.dim {
            return;
        }
        self.ids.push(v.id);
        self.ats.push(v.at);
        for (total, component) in self.sum.iter_mut().zip(&v.vector) {
            *total += i64::from(*component);
        }
        self.data.extend_from_slice(&v.vector);
    }

    fn clear(&mut self) {
        self.ids.clear();
        self.ats.clear();
        self.data.clear();
        self.sum.clear();
    }

    fn vector(&self, i: usize) -> &[i8] {
        &self.data[i * self.dim..(i + 1) * self.dim]
    }
}

/// The integer dot product of two quantized vectors, in chunks the compiler vectorizes;
/// `core::embed::similarity` is this over 127².
fn dot(a: &[i8], b: &[i8]) -> i32 {
    let mut acc = [0i32; 16];
    let (mut ca, mut cb) = (a.chunks_exact(16), b.chunks_exact(16));
    for (x, y) in (&mut ca).zip(&mut cb) {
        for i in 0..16 {
            acc[i] += i32::from(x[i]) * i32::from(y[i]);
        }
    }
    let rest: i32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| i32::from(*x) * i32::from(*y))
        .sum();
    acc.iter().sum::<i32>() + rest
}

/// `query` less `mean` (the component sums `sums` over `count` vectors), scaled so that its
/// largest component is ±127: only the order of the scores it gives matters, and at `i8` it is
/// compared by the same integer dot product as the plain similarity.
fn centred_query(query: &[i8], sums: &[i64], count: usize) -> Vec<i8> {
    let centred: Vec<f64> = query
        .iter()
        .zip(sums)
        .map(|(q, total)| f64::from(*q) - *total as f64 / count.max(1) as f64)
        .collect();
    let largest = centred.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    if largest == 0.0 {
        return vec![0; query.len()];
    }
    centred
        .iter()
        .map(|x| (x / largest * 127.0).round() as i8)
        .collect()
}

/// In-memory copies of the vectors of the conversations recalls have searched, per owner kind.
#[derive(Default)]
pub struct VectorCache {
    held: HashMap<(Owner, i64), Held>,
}

impl VectorCache {
    /// Drops every copy, so the next recall reads the vectors again.
    pub fn clear(&mut self) {
        self.held.clear();
    }

    /// Brings the copies of `conversations` up to date: vectors added since (higher ids) are
    /// read alone; any other change (a backfill of older ids, a new embedder) reads the
    /// conversation again. Checked once per commit of this process (`commits`): another
    /// process's vectors are seen after this one's next write.
    fn refresh(
        &mut self,
        sql: &mut impl Sql,
        owner: Owner,
        conversations: &[i64],
        commits: u64,
        dim: usize,
    ) -> Result<()> {
        for &conversation in conversations {
            let held = self.held.entry((owner, conversation)).or_default();
            if held.checked_at == Some(commits) {
                continue;
            }
            let (count, max_id) = vectors::census(sql, owner, conversation)?;
            held.checked_at = Some(commits);
            if held.count == count && held.max_id == max_id {
                continue;
            }
            let newer = if count > held.count && held.count > 0 {
                vectors::load(sql, owner, conversation, held.max_id, dim)?
            } else {
                Vec::new()
            };
            if held.count > 0 && held.count + newer.len() as i64 == count {
                newer.into_iter().for_each(|v| held.push(v));
            } else {
                held.clear();
                vectors::load(sql, owner, conversation, 0, dim)?
                    .into_iter()
                    .for_each(|v| held.push(v));
            }
            held.count = count;
            held.max_id = max_id;
        }
        Ok(())
    }

    /// The `limit` vectors of `conversations` nearest to `query` whose time `keep` accepts,
    /// nearest first, as `(id, conversation, at, similarity)`: ranked by the query less the
    /// mean of every vector of `conversations` (the module doc says why), each with its plain
    /// cosine similarity.
    fn nearest(
        &self,
        owner: Owner,
        conversations: &[i64],
        query: &[i8],
        limit: usize,
        keep: impl Fn(i64) -> bool,
    ) -> Vec<Near> {
        let held: Vec<(i64, &Held)> = conversations
            .iter()
            .filter_map(|c| Some((*c, self.held.get(&(owner, *c))?)))
            .filter(|(_, h)| h.dim == query.len() && !h.ids.is_empty())
            .collect();
        let mut sums = vec![0i64; query.len()];
        for (_, h) in &held {
            for (total, part) in sums.iter_mut().zip(&h.sum) {
                *total += part;
            }
        }
        let count = held.iter().map(|(_, h)| h.ids.len()).sum();
        let centred = centred_query(query, &sums, count);
        // Scores in the unit of a cosine with the centred query, so that two rankings (messages,
        // summaries) of one query compare.
        let length = f64::from(dot(&centred, &centred)).sqrt().max(1.0) * 127.0;
        // (score, id, which held conversation, index in it)
        let mut scored: Vec<(i32, i64, usize, usize)> = Vec::new();
        for (n, (_, h)) in held.iter().enumerate() {
            for i in 0..h.ids.len() {
                if keep(h.ats[i]) {
                    scored.push((dot(&centred, h.vector(i)), h.ids[i], n, i));
                }
            }
        }
        let by_score = |a: &(i32, i64, usize, usize), b: &(i32, i64, usize, usize)| {
            b.0.cmp(&a.0).then(b.1.cmp(&a.1))
        };
        if scored.len() > limit {
            scored.select_nth_unstable_by(limit, by_score);
            scored.truncate(limit);
        }
        scored.sort_by(by_score);
        scored
            .into_iter()
            .map(|(score, id, n, i)| {
                let (conversation, h) = held[n];
                Near {
                    id,
                    conversation,
                    similarity: dot(query, h.vector(i)) as f32 / (127.0 * 127.0),
                    score: (f64::from(score) / length) as f32,
                }
            })
            .collect()
    }

    /// The similarity of one held message vector to `query`, if it is held.
    fn similarity_of(&self, conversation: i64, message_id: i64, query: &[i8]) -> Option<f32> {
        let held = self.held.get(&(Owner::Message, conversation))?;
        let at = held.ids.binary_search(&message_id).ok()?;
        Some(similarity(query, held.vector(at)))
    }

    /// The newest time among the held vectors of `conversations`.
    fn newest(&self, conversations: &[i64]) -> Option<i64> {
        conversations
            .iter()
            .filter_map(|c| self.held.get(&(Owner::Message, *c)))
            .flat_map(|h| h.ats.iter().copied())
            .max()
    }
}

/// One vector the semantic index ranks near a query.
#[derive(Debug, Clone, Copy)]
pub struct Near {
    /// The message's or summary's id.
    pub id: i64,
    /// The conversation it belongs to.
    pub conversation: i64,
    /// The plain cosine similarity to the query, in `[-1, 1]`.
    pub similarity: f32,
    /// What the ranking is by: the cosine of this vector with the query less the mean of what
    /// it was compared with.
    pub score: f32,
}

/// What the semantic index ranks for one query.
#[derive(Debug, Default)]
pub struct Nearest {
    /// Messages, nearest first.
    pub messages: Vec<Near>,
    /// Summaries, nearest first.
    pub summaries: Vec<Near>,
}

impl<S: Sql> Engine<S> {
    /// The embedder in use, if semantic recall is on.
    pub fn embedder(&self) -> Option<&SharedEmbedder> {
        self.embedder.as_ref()
    }

    /// Uses `embedder` from now on (None: semantic recall off). A store whose vectors came from
    /// another embedder drops them; the backfill makes them again.
    pub fn set_embedder(&mut self, embedder: Option<SharedEmbedder>) -> Result<()> {
        if let Some(e) = &embedder {
            let (name, dim) = (vectors::space_name(e.name()), e.dim());
            let recorded = vectors::space(self.store.sql())?;
            if recorded.is_none_or(|s| s.embedder != name || s.dim != dim as i64) {
                self.store.write(|tx| vectors::adopt(tx, &name, dim))?;
            }
        }
        self.vectors.clear();
        self.embedder = embedder;
        Ok(())
    }

    /// From now on a turn's writes (`commitTurn`, `afterTurn`) store their messages without
    /// vectors, and `maintain`'s housekeeping leaves the backfill to the caller, who runs
    /// [`Engine::backfill_vectors`] once the turn is answered (the Node worker thread: after it
    /// replied to `housekeep`), off the turn's path. Nothing is missed meanwhile: a recall first
    /// embeds a batch of what waits (see [`Engine::nearest`]). Imports (`bootstrap`, `ingest`)
    /// still embed inside their write.
    pub fn defer_turn_embedding(&mut self) {
        self.turn_embedding_deferred = true;
    }

    /// The embedder a turn's write uses: none when its embedding is deferred.
    pub(super) fn turn_embedder(&self) -> Option<SharedEmbedder> {
        self.embedder
            .clone()
            .filter(|_| !self.turn_embedding_deferred)
    }

    /// Housekeeping: embeds up to [`BACKFILL_MESSAGES`] messages and [`BACKFILL_SUMMARIES`]
    /// summaries that have no vector yet, in one write; returns how many. Resumable: the
    /// position is stored with the vectors, so an interrupted backfill goes on where the last
    /// committed batch ended.
    pub fn backfill_vectors(&mut self) -> Result<usize> {
        let Some(embedder) = self.embedder.clone() else {
            return Ok(0);
        };
        let (messages, through) = vectors::waiting_messages(self.store.sql(), BACKFILL_MESSAGES)?;
        let summaries = vectors::waiting_summaries(self.store.sql(), BACKFILL_SUMMARIES)?;
        let position = vectors::space(self.store.sql())?.map_or(0, |s| s.backfilled_through);
        // Nothing to embed: the position moves only now and then, so a steady store's
        // housekeeping writes nothing.
        if messages.is_empty()
            && summaries.is_empty()
            && through - position < BACKFILL_MESSAGES as i64
        {
            return Ok(0);
        }
        // Every summary gets a vector (one without meaning too: it would otherwise wait forever).
        let embed_all =
            |rows: &[(i64, i64, String)], keep_empty: bool| -> Vec<(i64, i64, Vec<i8>)> {
                rows.iter()
                    .map(|(id, c, text)| (*id, *c, embed(embedder.as_ref(), text)))
                    .filter(|(_, _, v)| keep_empty || has_meaning(v))
                    .collect()
            };
        let (m, s) = (embed_all(&messages, false), embed_all(&summaries, true));
        self.store.write(|tx| {
            vectors::put(tx.sql(), Owner::Message, &m)?;
            vectors::put(tx.sql(), Owner::Summary, &s)?;
            vectors::advance(tx.sql(), through)
        })?;
        Ok(messages.len() + summaries.len())
    }

    /// True when a message or summary still waits for its vector (the backfill has more to
    /// do); false without an embedder.
    pub fn vectors_waiting(&mut self) -> Result<bool> {
        if self.embedder.is_none() {
            return Ok(false);
        }
        let (messages, _) = vectors::waiting_messages(self.store.sql(), 1)?;
        Ok(!messages.is_empty() || !vectors::waiting_summaries(self.store.sql(), 1)?.is_empty())
    }

    /// The messages and summaries of `conversations` nearest in meaning to `text`: up to
    /// `limit` of each, those inside `window` when one is given (its messages' own times).
    pub(super) fn nearest(
        &mut self,
        conversations: &[i64],
        text: &str,
        limit: usize,
        window: Option<crate::core::ask::when::Window>,
    ) -> Result<Nearest> {
        let Some(embedder) = self.embedder.clone() else {
            return Ok(Nearest::default());
        };
        let query = embed(embedder.as_ref(), text);
        if query.iter().all(|c| *c == 0) {
            return Ok(Nearest::default());
        }
        // A turn's messages whose vectors the caller has not made yet (defer_turn_embedding)
        // are embedded before they are ranked.
        if self.turn_embedding_deferred {
            self.backfill_vectors()?;
        }
        let commits = self.store.commits();
        self.vectors.refresh(
            self.store.sql(),
            Owner::Message,
            conversations,
            commits,
            query.len(),
        )?;
        self.vectors.refresh(
            self.store.sql(),
            Owner::Summary,
            conversations,
            commits,
            query.len(),
        )?;
        let keep = |at: i64| window.is_none_or(|w| w.contains(at));
        Ok(Nearest {
            messages: (self
                .vectors
                .nearest(Owner::Message, conversations, &query, limit, keep)),
            summaries: (self
                .vectors
                .nearest(Owner::Summary, conversations, &query, limit, keep)),
        })
    }

    /// The similarity of a message (of `conversation`, held since the last [`Engine::nearest`])
    /// to `text`.
    pub(super) fn similarity_to(
        &self,
        conversation: i64,
        message_id: i64,
        query: &[i8],
    ) -> Option<f32> {
        self.vectors.similarity_of(conversation, message_id, query)
    }

    /// The newest message time held for `conversations` (after [`Engine::nearest`]).
    pub(super) fn newest_held(&self, conversations: &[i64]) -> Option<i64> {
        self.vectors.newest(conversations)
    }
}

#[cfg(test)]
mod tests {
    use super::{dot, Held, VectorCache};
    use crate::core::embed::similarity;
    use crate::store::vectors::{Owner, StoredVector};

    fn cache(conversation: i64, vectors: &[[i8; 4]]) -> VectorCache {
        let mut held = Held::default();
        for (i, v) in vectors.iter().enumerate() {
            held.push(StoredVector {
                id: i as i64 + 1,
                conversation_id: conversation,
                at: i as i64,
                vector: v.to_vec(),
            });
        }
        let mut cache = VectorCache::default();
        cache.held.insert((Owner::Message, conversation), held);
        cache
    }

    #[test]
    fn a_text_like_all_the_others_ranks_below_one_that_stands_out() {
        // Nine routine vectors alike, one distinctive; the query is nearer the routine ones by
        // plain cosine, but what sets it apart from them points at the distinctive one.
        let mut vectors = vec![[100i8, 0, 0, 0]; 9];
        vectors.push([60, 80, 0, 0]);
        let cache = cache(7, &vectors);
        let query = [90i8, 40, 0, 0];
        assert!(dot(&query, &vectors[0]) > dot(&query, &vectors[9]));
        let near = cache.nearest(Owner::Message, &[7], &query, 3, |_| true);
        assert_eq!(near.len(), 3);
        assert_eq!(near[0].id, 10, "{near:?}");
        assert_eq!(near[0].conversation, 7);
        // The reported similarity is the plain cosine, whatever the order.
        assert_eq!(near[0].similarity, similarity(&query, &vectors[9]));
        assert!(near[1].similarity > near[0].similarity);
        assert!(near[0].score > near[1].score);
    }

    #[test]
    fn only_the_conversations_asked_for_and_the_times_kept_are_ranked() {
        let cache = cache(7, &[[100, 0, 0, 0], [0, 100, 0, 0]]);
        assert!(cache
            .nearest(Owner::Message, &[8], &[100, 0, 0, 0], 5, |_| true)
            .is_empty());
        assert!(cache
            .nearest(Owner::Summary, &[7], &[100, 0, 0, 0], 5, |_| true)
            .is_empty());
        let near = cache.nearest(Owner::Message, &[7], &[100, 0, 0, 0], 5, |at| at == 1);
        assert_eq!(near.iter().map(|n| n.id).collect::<Vec<_>>(), vec![2]);
    }

    #[test]
    fn the_chunked_dot_product_is_the_similarity_of_the_seam() {
        let a: Vec<i8> = (0..259).map(|i| ((i * 37) % 255 - 127) as i8).collect();
        let b: Vec<i8> = (0..259).map(|i| ((i * 91 + 5) % 255 - 127) as i8).collect();
        let expected = similarity(&a, &b);
        assert!(expected != 0.0);
        assert_eq!(dot(&a, &b) as f32 / (127.0 * 127.0), expected);
        assert_eq!(dot(&[], &[]), 0);
    }
}
