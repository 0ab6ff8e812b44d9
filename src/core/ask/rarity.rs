//! How much the question's words a candidate mentions say about it, for the lexical list that
//! reciprocal-rank fusion reads ([`super::evidence::fused_order`]). A word that half of a
//! conversation's messages carry (a speaker's name) finds many candidates and tells none of them
//! apart; in the fusion any place in a list counts, so such candidates would go ahead of what the
//! semantic index ranks first. Each term weighs by how few of the candidates mention it, and
//! only candidates near the best weight keep a lexical rank.

/// The share of the best candidate's weight a candidate needs to keep a place in the lexical
/// list. Measured with `cargo bench --bench recall_eval` (the engine's rows, 2026-12-05): 0
/// (every lexical candidate) 84.7 %, 0.3 87.7 %, 0.5 87.0 % (82.0 % after a sweep, against
/// 79.3 % at 0.3), 0.9 87.0 %.
pub const LEXICAL_FLOOR: f64 = 0.5;

/// For each of `texts`, the sum of the weights of the `terms` it mentions, a term weighing
/// `ln(1 + n / df)` for `df` of the `n` texts mentioning it (an inverse document frequency over
/// the candidates).
pub fn weights(texts: &[&str], terms: &[String]) -> Vec<f64> {
    let n = texts.len() as f64;
    // As `terms::mentions` matches (ignoring case), each text and term lowercased once: a
    // candidate may be a long tool output.
    let lower_terms: Vec<String> = terms.iter().map(|t| t.to_lowercase()).collect();
    let hits: Vec<Vec<bool>> = texts
        .iter()
        .map(|text| {
            let lower = text.to_lowercase();
            lower_terms
                .iter()
                .map(|t| lower.contains(t.as_str()))
                .collect()
        })
        .collect();
    let term_weight: Vec<f64> = (0..terms.len())
        .map(|t| match hits.iter().filter(|h| h[t]).count() {
            0 => 0.0,
            df => (1.0 + n / df as f64).ln(),
        })
        .collect();
    hits.iter()
        .map(|h| {
            h.iter()
                .zip(&term_weight)
                .filter(|(hit, _)| **hit)
                .map(|(_, w)| w)
                .sum()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::terms::mentions;
    use super::*;

    #[test]
    fn a_word_every_text_mentions_weighs_less_than_a_rare_one() {
        let texts = ["maya: a", "maya: b", "maya: c", "maya: harbour"];
        let terms = vec!["maya".to_owned(), "harbour".to_owned()];
        let w = weights(&texts, &terms);
        assert!(w[3] > 2.0 * w[0], "{w:?}");
        assert_eq!(w[0], w[1]);
        assert_eq!(weights(&["nothing"], &terms), vec![0.0]);
        assert!(weights(&[], &terms).is_empty());
    }

    #[test]
    fn a_term_counts_where_mentions_finds_it() {
        let texts = ["ZEBRA-9 at İstanbul", "zebra-9", "Straße", "nothing"];
        let terms = vec![
            "zebra-9".to_owned(),
            "STRASSE".to_owned(),
            "straße".to_owned(),
        ];
        let w = weights(&texts, &terms);
        for (text, weight) in texts.iter().zip(&w) {
            let mentioned = terms.iter().any(|t| mentions(text, t));
            assert_eq!(*weight > 0.0, mentioned, "{text}: {w:?}");
        }
    }
}
