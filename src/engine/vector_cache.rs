//! The semantic index's in-memory side: the stored vectors of the conversations recalls have
//! searched, kept as the store keeps them (four bits a component, `core::embed::packing`), and
//! the brute-force ranking of a query against them.
//!
//! The ranking is by the query **less the mean vector of what it is compared with**
//! (`score = (q - mean) . v`). A static embedder gives every text a share of one common
//! direction, so by plain cosine the stored texts that are most like all the others (routine
//! turns, chit-chat) come near every question. Subtracting the mean takes that share out and
//! ranks by what sets a text apart from the rest of its conversation; only the order changes:
//! the similarity reported with each hit is still the plain cosine (the confidence rule of
//! `hybrid.rs` reads it). Measured with `benches/recall_eval` (docs/recall-evaluation.md):
//! embedding-only evidence recall 66 % -> 94 % of 300 questions.
//!
//! A scan costs one table lookup and addition per stored byte ([`PackedScorer`]), not a
//! multiplication per component: at 100,000 messages the two scans of an `lcm_ask` read 25.6 MB
//! less and multiply nothing (docs/recall.md, "Measured").

use std::collections::HashMap;

use crate::core::embed::packing::{self, PackedScorer};
use crate::error::Result;
use crate::store::vectors::{self, Owner, StoredVector};
use crate::store::Sql;

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
    /// Components of each vector, and the bytes each is stored in.
    dim: usize,
    width: usize,
    data: Vec<u8>,
    /// One over the length of each vector's levels (`packing::inverse_length`).
    inverse_lengths: Vec<f32>,
    /// The sum of the held unit vectors, component by component (their mean times their count).
    sum: Vec<f64>,
    /// The newest of `ats`.
    newest: Option<i64>,
}

impl Held {
    fn push(&mut self, v: StoredVector, dim: usize) {
        if self.ids.is_empty() {
            self.dim = dim;
            self.width = dim.div_ceil(2);
            self.sum = vec![0.0; dim];
        }
        // One space per store (vector_space): a vector of another size is not comparable (the
        // store refuses to read one; this is the second line).
        if dim != self.dim || v.vector.len() != self.width {
            return;
        }
        self.ids.push(v.id);
        self.ats.push(v.at);
        self.newest = self.newest.max(Some(v.at));
        let inverse_length = packing::inverse_length(&v.vector);
        packing::add_unit(&v.vector, inverse_length, &mut self.sum);
        self.inverse_lengths.push(inverse_length);
        self.data.extend_from_slice(&v.vector);
    }

    fn clear(&mut self) {
        self.ids.clear();
        self.ats.clear();
        self.data.clear();
        self.inverse_lengths.clear();
        self.sum.clear();
        self.newest = None;
    }

    fn packed(&self, i: usize) -> &[u8] {
        &self.data[i * self.width..(i + 1) * self.width]
    }

    /// The plain cosine similarity of held vector `i` to `query`.
    fn similarity(&self, i: usize, query: &[i8]) -> f32 {
        packing::cosine(query, self.packed(i), self.inverse_lengths[i])
    }
}

/// Whether `a` ranks before `b`: a higher score, then (equal scores) the newer id.
fn ranks_before(a: &(f32, i64, usize, usize), b: &(f32, i64, usize, usize)) -> bool {
    b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)).is_lt()
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
    pub(super) fn refresh(
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
                newer.into_iter().for_each(|v| held.push(v, dim));
            } else {
                held.clear();
                vectors::load(sql, owner, conversation, 0, dim)?
                    .into_iter()
                    .for_each(|v| held.push(v, dim));
            }
            held.count = count;
            held.max_id = max_id;
        }
        Ok(())
    }

    /// The `limit` vectors of `conversations` nearest to `query` whose time `keep` accepts,
    /// nearest first: ranked by the query less the mean of every vector of `conversations`
    /// (the module doc says why), each with its plain cosine similarity.
    pub(super) fn nearest(
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
        let count: usize = held.iter().map(|(_, h)| h.ids.len()).sum();
        if count == 0 || limit == 0 {
            return Vec::new();
        }
        let mut centred: Vec<f64> = query.iter().map(|q| f64::from(*q) / 127.0).collect();
        for (_, h) in &held {
            for (c, total) in centred.iter_mut().zip(&h.sum) {
                *c -= total / count as f64;
            }
        }
        // Scores in the unit of a cosine with the centred query, so that two rankings
        // (messages, summaries) of one query compare.
        let length = centred.iter().map(|c| c * c).sum::<f64>().sqrt();
        let length = if length > 0.0 { length as f32 } else { 1.0 };
        let scorer = PackedScorer::new(&centred);
        // The best `limit` so far, best first: (score, id, which held conversation, index in it).
        // Most vectors score below the worst kept and cost one comparison.
        let mut best: Vec<(f32, i64, usize, usize)> = Vec::with_capacity(limit + 1);
        let mut dots = Vec::new();
        for (n, (_, h)) in held.iter().enumerate() {
            scorer.dots(&h.data, h.width, &mut dots);
            for (i, dot) in dots.iter().enumerate() {
                if !keep(h.ats[i]) {
                    continue;
                }
                let candidate = (dot * h.inverse_lengths[i], h.ids[i], n, i);
                if best.len() == limit && !ranks_before(&candidate, &best[limit - 1]) {
                    continue;
                }
                let at = best.partition_point(|kept| ranks_before(kept, &candidate));
                best.insert(at, candidate);
                best.truncate(limit);
            }
        }
        best.into_iter()
            .map(|(score, id, n, i)| {
                let (conversation, h) = held[n];
                Near {
                    id,
                    conversation,
                    similarity: h.similarity(i, query),
                    score: score / length,
                }
            })
            .collect()
    }

    /// The similarity of one held message vector to `query`, if it is held.
    pub(super) fn similarity_of(
        &self,
        conversation: i64,
        message_id: i64,
        query: &[i8],
    ) -> Option<f32> {
        let held = self.held.get(&(Owner::Message, conversation))?;
        let at = held.ids.binary_search(&message_id).ok()?;
        (held.dim == query.len()).then(|| held.similarity(at, query))
    }

    /// The newest time among the held vectors of `conversations`.
    pub(super) fn newest(&self, conversations: &[i64]) -> Option<i64> {
        conversations
            .iter()
            .filter_map(|c| self.held.get(&(Owner::Message, *c))?.newest)
            .max()
    }
}

#[cfg(test)]
mod tests {
    use super::{Held, VectorCache};
    use crate::core::embed::packing::{pack, unpack};
    use crate::core::embed::similarity;
    use crate::store::vectors::{Owner, StoredVector};

    fn cache(conversation: i64, vectors: &[[i8; 4]]) -> VectorCache {
        let mut held = Held::default();
        for (i, v) in vectors.iter().enumerate() {
            let stored = StoredVector {
                id: i as i64 + 1,
                conversation_id: conversation,
                at: i as i64,
                vector: pack(v),
            };
            held.push(stored, 4);
        }
        let mut cache = VectorCache::default();
        cache.held.insert((Owner::Message, conversation), held);
        cache
    }

    #[test]
    fn a_text_like_all_the_others_ranks_below_one_that_stands_out() {
        // Nine routine vectors alike, one distinctive; the query is nearer the routine ones by
        // plain cosine, but what sets it apart from them points at the distinctive one.
        let mut vectors = vec![[127i8, 0, 0, 0]; 9];
        vectors.push([127, 127, 0, 0]);
        let cache = cache(7, &vectors);
        let query = [120i8, 40, 0, 0];
        let stored = |i: usize| unpack(&pack(&vectors[i]), 4).expect("its size");
        assert!(similarity(&query, &stored(0)) > similarity(&query, &stored(9)));
        let near = cache.nearest(Owner::Message, &[7], &query, 3, |_| true);
        assert_eq!(near.len(), 3);
        assert_eq!(near[0].id, 10, "{near:?}");
        assert_eq!(near[0].conversation, 7);
        // The reported similarity is the plain cosine with the stored vector, whatever the order.
        assert!((near[0].similarity - similarity(&query, &stored(9))).abs() < 0.01);
        assert!(near[1].similarity > near[0].similarity);
        assert!(near[0].score > near[1].score);
        assert_eq!(cache.similarity_of(7, 10, &query), Some(near[0].similarity));
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
        assert!(
            cache
                .nearest(Owner::Message, &[7], &[100, 0, 0], 5, |_| true)
                .is_empty(),
            "a query of another dimension compares with nothing"
        );
        let near = cache.nearest(Owner::Message, &[7], &[100, 0, 0, 0], 5, |at| at == 1);
        assert_eq!(near.iter().map(|n| n.id).collect::<Vec<_>>(), vec![2]);
        assert!(cache
            .nearest(Owner::Message, &[7], &[100, 0, 0, 0], 0, |_| true)
            .is_empty());
        assert_eq!(cache.newest(&[7]), Some(1));
        assert_eq!(cache.newest(&[8]), None);
    }

    #[test]
    fn the_best_few_are_the_head_of_the_whole_ranking() {
        // 600 pseudo-random vectors in two conversations, many with equal scores (few levels).
        let mut next = 7u64;
        let mut random = || {
            next = next.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            ((next >> 33) % 7) as i8 * 20 - 60
        };
        let mut cache = VectorCache::default();
        for conversation in [1, 2] {
            let mut held = Held::default();
            for i in 0..300 {
                let v = [random(), random(), random(), random()];
                let stored = StoredVector {
                    id: conversation * 1000 + i,
                    conversation_id: conversation,
                    at: i,
                    vector: pack(&v),
                };
                held.push(stored, 4);
            }
            cache.held.insert((Owner::Message, conversation), held);
        }
        let query = [90i8, -30, 40, 10];
        let all = cache.nearest(Owner::Message, &[1, 2], &query, 10_000, |_| true);
        assert_eq!(all.len(), 600);
        assert!(all
            .windows(2)
            .all(|w| w[0].score > w[1].score || (w[0].score == w[1].score && w[0].id > w[1].id)));
        let few = cache.nearest(Owner::Message, &[1, 2], &query, 16, |_| true);
        let ids = |v: &[super::Near]| v.iter().map(|n| n.id).collect::<Vec<_>>();
        assert_eq!(ids(&few), ids(&all[..16]));
        let late = cache.nearest(Owner::Message, &[1, 2], &query, 5, |at| at >= 250);
        let expected: Vec<i64> = all
            .iter()
            .filter(|n| n.id % 1000 >= 250)
            .take(5)
            .map(|n| n.id)
            .collect();
        assert_eq!(ids(&late), expected);
    }

    #[test]
    fn a_vector_of_another_size_is_not_held() {
        let mut held = Held::default();
        let v = |id: i64, vector: Vec<u8>| StoredVector {
            id,
            conversation_id: 1,
            at: 0,
            vector,
        };
        held.push(v(1, pack(&[1, 2, 3, 4])), 4);
        held.push(v(2, vec![0x88; 5]), 4);
        held.push(v(3, pack(&[1, 2, 3, 4])), 6);
        assert_eq!(held.ids, vec![1]);
    }
}
