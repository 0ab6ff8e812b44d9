//! Reciprocal-rank fusion: several rankings of the same kind of items (the lexical search's, the
//! semantic index's) become one, each item scoring `1 / (K + rank)` in every list it is in
//! (Cormack, Clarke & Büttcher, SIGIR 2009). Ranks, not scores, are fused, so a BM25-like count
//! of matched terms and a cosine similarity need no common scale; an item high in both lists
//! beats one at the top of only one.
//!
//! Pure and deterministic: ties keep the order of first appearance (the first list first).

use std::collections::HashMap;
use std::hash::Hash;

/// The fusion constant: how much a lower rank still counts (60 is the paper's).
pub const K: f64 = 60.0;

/// The items of `lists` (each best first; an item counted once per list, at its best rank),
/// best fused score first.
pub fn reciprocal_rank<T: Copy + Eq + Hash>(lists: &[&[T]]) -> Vec<T> {
    let weighted: Vec<(&[T], f64)> = lists.iter().map(|l| (*l, 1.0)).collect();
    weighted_reciprocal_rank(&weighted)
}

/// [`reciprocal_rank`] with a weight per list: an item scores `weight / (K + rank)` in each (a
/// second retrieval round, less sure than the first, weighs half).
pub fn weighted_reciprocal_rank<T: Copy + Eq + Hash>(lists: &[(&[T], f64)]) -> Vec<T> {
    let mut score: HashMap<T, (f64, usize)> = HashMap::new();
    let mut order = 0;
    for (list, weight) in lists {
        let mut seen = std::collections::HashSet::new();
        for (rank, item) in list.iter().enumerate() {
            if !seen.insert(*item) {
                continue;
            }
            let entry = score.entry(*item).or_insert_with(|| {
                order += 1;
                (0.0, order)
            });
            entry.0 += weight / (K + rank as f64 + 1.0);
        }
    }
    let mut fused: Vec<(T, f64, usize)> = score.into_iter().map(|(t, (s, o))| (t, s, o)).collect();
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.2.cmp(&b.2)));
    fused.into_iter().map(|(t, _, _)| t).collect()
}

#[cfg(test)]
mod tests {
    use super::reciprocal_rank;

    #[test]
    fn an_item_in_both_lists_beats_the_top_of_one_and_ties_keep_first_appearance() {
        let lexical = [1, 2, 3];
        let semantic = [4, 3, 5];
        let fused = reciprocal_rank(&[&lexical, &semantic]);
        assert_eq!(fused[0], 3, "in both lists: {fused:?}");
        assert_eq!(
            &fused[1..3],
            &[1, 4],
            "the two list tops, lexical first: {fused:?}"
        );
        assert_eq!(fused.len(), 5);
        assert_eq!(reciprocal_rank::<i32>(&[&[], &[]]), Vec::<i32>::new());
        assert_eq!(
            reciprocal_rank(&[&[7, 7, 8]]),
            vec![7, 8],
            "counted once per list"
        );
    }
}
