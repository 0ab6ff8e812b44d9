//! Which evidence goes to the LLM: candidates (messages and summaries the engine found and
//! loaded, already scoped and redacted) are scored by the question's terms they contain, and
//! packed best first into a hard token budget. A candidate longer than its share is cut to an
//! excerpt around its first matching term, so one huge tool output cannot take the whole budget.
//! The chosen items go to the prompt oldest first, as the conversation happened.
//!
//! Pure: the budget is enforced here, on the estimate the rest of the engine uses.

use serde::Serialize;

use super::rarity;
use super::terms::mentions;
use crate::core::tokens::{char_quarters, estimate_text};

/// Estimated tokens of an item's header line in the prompt (id, role, time).
pub const ITEM_HEADER_TOKENS: u32 = 16;

/// Why a candidate was considered; a tie-break after the score (direct hits first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Origin {
    /// A message the caller named, or one under a summary the caller named.
    Named,
    /// A message or summary a term search returned.
    Hit,
    /// An original message under a summary that matched (the summary's own words may differ).
    Expanded,
    /// The message right after a hit (the answer to a question, the result of a command).
    Neighbour,
    /// Close in meaning to the question (the semantic index), whatever its words.
    Similar,
}

/// A message or summary that may go to the LLM.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// "message" or "summary".
    pub kind: &'static str,
    /// Row id in `messages` or `summaries`, per `kind`.
    pub id: i64,
    /// The conversation it belongs to (row id in `conversations`).
    pub conversation_id: i64,
    /// A message's role, or "summary".
    pub role: String,
    /// When it happened (ms since the epoch).
    pub at: i64,
    /// Its full text, already redacted.
    pub text: String,
    /// Why it was considered.
    pub origin: Origin,
    /// For a neighbour: the message it follows. It ranks just below that message (above
    /// candidates that match one term fewer), since it is most often what answers it.
    pub follows: Option<i64>,
}

/// One item of the evidence, as the prompt shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Evidence {
    /// "message" or "summary".
    pub kind: &'static str,
    /// Row id in `messages` or `summaries`, per `kind`.
    pub id: i64,
    /// The conversation it belongs to (row id in `conversations`).
    pub conversation_id: i64,
    /// A message's role, or "summary".
    pub role: String,
    /// When it happened (ms since the epoch).
    pub at: i64,
    /// The text as sent to the LLM: the whole text, or an excerpt when `excerpt` is set.
    #[serde(skip)]
    pub text: String,
    /// Estimated tokens of the text as sent.
    pub tokens: u32,
    /// Only part of the text was sent (an excerpt around the first term it mentions).
    pub excerpt: bool,
    /// How many of the question's terms it mentions.
    pub matched_terms: u32,
}

/// The evidence chosen for one question.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Selection {
    /// Oldest first.
    pub items: Vec<Evidence>,
    /// Estimated tokens of the items, headers included; never above the budget.
    pub tokens: u32,
    /// Candidates left out for want of budget.
    pub left_out: usize,
}

/// How many of `chars`, taken in order, fit `budget` estimated tokens (the estimate is a sum of
/// per-character weights, so this is exact and linear).
fn fitting<'a>(chars: impl Iterator<Item = &'a char>, budget: u32) -> usize {
    let limit = u64::from(budget) * 4;
    let mut quarters = 0u64;
    let mut n = 0;
    for c in chars {
        quarters += char_quarters(*c);
        if quarters > limit {
            break;
        }
        n += 1;
    }
    n
}

/// `text` cut to `budget` tokens around the first of `terms` it mentions (from its start when
/// it mentions none), marked with "…" where it was cut.
pub fn excerpt(text: &str, terms: &[String], budget: u32) -> String {
    if estimate_text(text) <= budget {
        return text.to_owned();
    }
    let chars: Vec<char> = text.chars().collect();
    let lower: String = text.to_lowercase();
    // The byte offset of the first mention in the lowercased text, mapped back to a char index
    // (lowercasing can change byte lengths, never the char count of ASCII-insensitive matches we
    // rely on; a mismatch only shifts the window).
    let at = terms
        .iter()
        .filter_map(|t| lower.find(&t.to_lowercase()))
        .min()
        .map_or(0, |byte| lower[..byte].chars().count().min(chars.len()));
    let inner = budget.saturating_sub(2);
    // Up to a quarter of the window before the mention, the rest after it.
    let before = fitting(chars[..at].iter().rev(), inner / 4);
    let start = at - before;
    let before_tokens = estimate_text(&chars[start..at].iter().collect::<String>());
    let len = fitting(chars[at..].iter(), inner.saturating_sub(before_tokens));
    let end = (at + len).min(chars.len());
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    out.extend(&chars[start..end]);
    if end < chars.len() {
        out.push('…');
    }
    out
}

/// How many of `terms` `text` mentions (as [`mentions`] matches, the text lowercased once).
fn matched(text: &str, terms: &[String]) -> u32 {
    let lower = text.to_lowercase();
    terms
        .iter()
        .filter(|t| lower.contains(t.to_lowercase().as_str()))
        .count() as u32
}

/// Packs the best candidates into `budget` tokens: most terms mentioned first, then named before
/// found before expanded before neighbours, then messages before summaries (originals beat
/// paraphrase), then newest. Each item gets at most a third of the budget (an excerpt when
/// longer). Duplicates (same kind and id) count once, with their best origin.
pub fn select(candidates: Vec<Candidate>, terms: &[String], budget: u32) -> Selection {
    pack(lexical_order(candidates, terms), terms, budget)
}

/// [`select`] with the lexical order fused with the `semantic` rankings (candidates' `(kind,
/// id)`, most similar first; one per retrieval round, each with its weight) by reciprocal-rank
/// fusion ([`super::fusion`]): a candidate near the top of
/// either list, or fairly high in both, goes first. Candidates in neither list go last, in
/// their lexical order.
pub fn select_fused(
    candidates: Vec<Candidate>,
    terms: &[String],
    semantic: &[(&[(&'static str, i64)], f64)],
    budget: u32,
) -> Selection {
    pack(fused_order(candidates, terms, semantic), terms, budget)
}

/// The candidates in the order [`select_fused`] packs them, each with how many terms it
/// mentions.
pub fn fused_order(
    candidates: Vec<Candidate>,
    terms: &[String],
    semantic: &[(&[(&'static str, i64)], f64)],
) -> Vec<(u32, Candidate)> {
    let lexical = lexical_order(candidates, terms);
    if semantic.iter().all(|(list, _)| list.is_empty()) {
        return lexical;
    }
    let lexical_keys = rarity_order(&lexical, terms);
    let lists: Vec<(&[(&'static str, i64)], f64)> = std::iter::once((lexical_keys.as_slice(), 1.0))
        .chain(semantic.iter().copied())
        .collect();
    let fused = super::fusion::weighted_reciprocal_rank(&lists);
    let position: std::collections::HashMap<(&'static str, i64), usize> =
        fused.iter().enumerate().map(|(i, key)| (*key, i)).collect();
    // Direct hits keep their lexical place ahead of the fusion: a candidate that mentions an
    // identifier, number, host or path of the question is what it asks about, and a ranking by
    // meaning cannot tell `zq2x` from `zq27x`.
    // The message after a direct hit (its reply, its output) stays with it.
    let distinctive: Vec<&String> = terms.iter().filter(|t| is_distinctive(t)).collect();
    let mut pinned: std::collections::HashMap<(&'static str, i64), usize> = Default::default();
    let mut hits = 0;
    for (m, c) in &lexical {
        let direct = *m > 0 && distinctive.iter().any(|t| mentions(&c.text, t));
        let follows_pinned = c
            .follows
            .is_some_and(|id| pinned.contains_key(&("message", id)));
        if (direct && hits < MAX_PINNED) || follows_pinned {
            hits += usize::from(direct);
            let at = pinned.len();
            pinned.insert((c.kind, c.id), at);
        }
    }
    let mut ordered = lexical;
    ordered.sort_by_key(|(_, c)| {
        let key = (c.kind, c.id);
        match pinned.get(&key) {
            Some(i) => (0, *i),
            None => (1, position.get(&key).copied().unwrap_or(usize::MAX)),
        }
    });
    ordered
}

/// The lexical list as the fusion reads it: `lexical` ranked again by [`rarity::weights`], a
/// message after a hit just below it (as in the lexical order), ties in the lexical order. A
/// candidate only the semantic index found has no lexical rank, nor one under
/// [`rarity::LEXICAL_FLOOR`] of the best.
fn rarity_order(lexical: &[(u32, Candidate)], terms: &[String]) -> Vec<(&'static str, i64)> {
    let texts: Vec<&str> = lexical.iter().map(|(_, c)| c.text.as_str()).collect();
    let own = rarity::weights(&texts, terms);
    let message_weight: std::collections::HashMap<i64, f64> = lexical
        .iter()
        .zip(&own)
        .filter(|((_, c), _)| c.kind == "message")
        .map(|((_, c), w)| (c.id, *w))
        .collect();
    let mut scored: Vec<(f64, (&'static str, i64))> = lexical
        .iter()
        .zip(&own)
        .filter(|((matched, c), _)| *matched > 0 || c.origin != Origin::Similar)
        .map(|((_, c), w)| {
            let after = c
                .follows
                .and_then(|id| message_weight.get(&id))
                .map_or(0.0, |a| a * 0.99);
            (w.max(after), (c.kind, c.id))
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    let best = scored.first().map_or(0.0, |s| s.0);
    scored
        .into_iter()
        .filter(|(w, _)| *w >= best * rarity::LEXICAL_FLOOR)
        .map(|(_, key)| key)
        .collect()
}

/// The candidates that mention one of `terms`, rare words first.
pub fn lexical_ranking(candidates: &[Candidate], terms: &[String]) -> Vec<(&'static str, i64)> {
    let texts: Vec<&str> = candidates.iter().map(|c| c.text.as_str()).collect();
    let w = rarity::weights(&texts, terms);
    let mut scored: Vec<(f64, (&'static str, i64))> = candidates
        .iter()
        .zip(w)
        .filter(|(_, w)| *w > 0.0)
        .map(|(c, w)| (w, (c.kind, c.id)))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    scored.into_iter().map(|(_, k)| k).collect()
}

/// Direct hits that keep their lexical place at most (see [`fused_order`]).
const MAX_PINNED: usize = 8;

/// A term that names one thing: it has a digit or the punctuation of identifiers, hosts and
/// paths (`zq2x`, `5433`, `pg-stage-3.internal`, `src/main.rs`).
fn is_distinctive(term: &str) -> bool {
    term.chars()
        .any(|c| c.is_ascii_digit() || matches!(c, '_' | '.' | '/' | ':' | '@' | '-'))
}

/// The candidates, deduplicated, best lexical match first (see [`select`]), each with how many
/// terms it mentions.
pub fn lexical_order(mut candidates: Vec<Candidate>, terms: &[String]) -> Vec<(u32, Candidate)> {
    candidates.sort_by(|a, b| (a.kind, a.id, a.origin).cmp(&(b.kind, b.id, b.origin)));
    candidates.dedup_by(|later, kept| later.kind == kept.kind && later.id == kept.id);
    let matches: Vec<u32> = candidates.iter().map(|c| matched(&c.text, terms)).collect();
    let message_rank: std::collections::HashMap<i64, u32> = candidates
        .iter()
        .zip(&matches)
        .filter(|(c, _)| c.kind == "message")
        .map(|(c, m)| (c.id, *m))
        .collect();
    // Ranks in half terms: a neighbour gets its anchor's rank less one half.
    let mut scored: Vec<(u32, u32, Candidate)> = candidates
        .into_iter()
        .zip(matches)
        .map(|(c, m)| {
            let anchor = c
                .follows
                .and_then(|id| message_rank.get(&id))
                .map_or(0, |a| (a * 2).saturating_sub(1));
            ((m * 2).max(anchor), m, c)
        })
        .collect();
    scored.sort_by(|(sa, _, a), (sb, _, b)| {
        sb.cmp(sa)
            .then(a.origin.cmp(&b.origin))
            .then((a.kind == "summary").cmp(&(b.kind == "summary")))
            .then(b.at.cmp(&a.at))
            .then(b.id.cmp(&a.id))
    });
    scored
        .into_iter()
        .map(|(_, matched, c)| (matched, c))
        .collect()
}

/// The most one item may take of `budget` (an excerpt when its text is longer).
fn item_share(budget: u32) -> u32 {
    (budget / 3).max(ITEM_HEADER_TOKENS * 4)
}

/// What `text` would take of `budget` as one evidence item, header included, at most.
pub fn item_tokens(text: &str, budget: u32) -> u32 {
    estimate_text(text).min(item_share(budget)) + ITEM_HEADER_TOKENS
}

/// Packs `ordered` candidates, best first, into `budget` tokens (each item at most a third of
/// it, an excerpt around its first term when longer); the chosen ones oldest first.
pub fn pack(ordered: Vec<(u32, Candidate)>, terms: &[String], budget: u32) -> Selection {
    let share = item_share(budget);
    let mut selection = Selection::default();
    for (matched_terms, c) in ordered {
        let room = budget.saturating_sub(selection.tokens);
        if room <= ITEM_HEADER_TOKENS * 2 {
            selection.left_out += 1;
            continue;
        }
        let cap = share.min(room - ITEM_HEADER_TOKENS);
        let text = excerpt(&c.text, terms, cap);
        let tokens = estimate_text(&text);
        if tokens + ITEM_HEADER_TOKENS > room {
            selection.left_out += 1;
            continue;
        }
        selection.tokens += tokens + ITEM_HEADER_TOKENS;
        let excerpt = text.len() < c.text.len();
        selection.items.push(Evidence {
            kind: c.kind,
            id: c.id,
            conversation_id: c.conversation_id,
            role: c.role,
            at: c.at,
            text,
            tokens,
            excerpt,
            matched_terms,
        });
    }
    selection.items.sort_by(|a, b| {
        a.at.cmp(&b.at)
            .then((a.kind == "summary").cmp(&(b.kind == "summary")))
            .then(a.id.cmp(&b.id))
    });
    selection
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(kind: &'static str, id: i64, text: &str, origin: Origin) -> Candidate {
        Candidate {
            kind,
            id,
            conversation_id: 1,
            role: if kind == "summary" {
                "summary".into()
            } else {
                "user".into()
            },
            at: id * 10,
            text: text.into(),
            origin,
            follows: None,
        }
    }

    fn terms(t: &[&str]) -> Vec<String> {
        t.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn the_budget_is_never_exceeded_and_the_best_matches_win() {
        let filler = "routine words ".repeat(200);
        let mut cands: Vec<Candidate> = (1..=40)
            .map(|i| cand("message", i, &filler, Origin::Hit))
            .collect();
        cands.push(cand(
            "message",
            99,
            "the vault code is ZEBRA-9 for staging",
            Origin::Hit,
        ));
        let sel = select(cands, &terms(&["ZEBRA-9", "staging"]), 1_000);
        assert!(!sel.items.is_empty(), "something was selected");
        assert!(sel.tokens <= 1_000, "{} tokens", sel.tokens);
        let sum: u32 = sel
            .items
            .iter()
            .map(|e| e.tokens + ITEM_HEADER_TOKENS)
            .sum();
        assert_eq!(sum, sel.tokens);
        assert!(
            sel.items.iter().any(|e| e.id == 99 && e.matched_terms == 2),
            "the message with both terms is chosen"
        );
        assert!(sel.left_out > 0, "the budget left candidates out");
    }

    #[test]
    fn a_huge_message_becomes_an_excerpt_around_its_term() {
        let text = format!(
            "{} the port is 5433 {}",
            "before ".repeat(3_000),
            "after ".repeat(3_000)
        );
        let sel = select(
            vec![cand("message", 1, &text, Origin::Hit)],
            &terms(&["5433"]),
            900,
        );
        let item = &sel.items[0];
        assert!(item.excerpt, "cut to an excerpt");
        assert!(item.text.contains("the port is 5433"), "{}", item.text);
        assert!(item.text.starts_with('…') && item.text.ends_with('…'));
        assert!(
            item.tokens <= 300,
            "at most a third of the budget: {}",
            item.tokens
        );
    }

    #[test]
    fn duplicates_count_once_and_originals_beat_summaries_at_equal_score() {
        let cands = vec![
            cand("summary", 5, "retry budget raised", Origin::Hit),
            cand("message", 5, "retry budget raised to 7", Origin::Neighbour),
            cand("message", 5, "retry budget raised to 7", Origin::Hit),
        ];
        let sel = select(cands, &terms(&["retry"]), 6 + ITEM_HEADER_TOKENS + 20);
        assert_eq!(sel.items.len(), 1, "{:?}", sel.items);
        assert_eq!((sel.items[0].kind, sel.items[0].id), ("message", 5));
        assert_eq!(
            sel.left_out, 1,
            "the summary did not fit after the original"
        );
    }

    #[test]
    fn the_message_after_a_strong_hit_ranks_above_weaker_hits() {
        let mut reply = cand("message", 2, "done, raised it", Origin::Neighbour);
        reply.follows = Some(1);
        let cands = vec![
            cand("message", 1, "retry budget zq7", Origin::Hit),
            cand("message", 3, "retry budget", Origin::Hit),
            reply,
        ];
        let sel = select(
            cands,
            &terms(&["retry", "budget", "zq7"]),
            7 + 4 + 2 * ITEM_HEADER_TOKENS + 20,
        );
        assert_eq!(
            sel.items.iter().map(|e| e.id).collect::<Vec<_>>(),
            vec![1, 2],
            "{:?}",
            sel.items
        );
    }

    #[test]
    fn chosen_items_are_ordered_oldest_first() {
        let cands = vec![
            cand("message", 3, "alpha beta", Origin::Hit),
            cand("message", 1, "alpha", Origin::Hit),
            cand("message", 2, "beta", Origin::Hit),
        ];
        let sel = select(cands, &terms(&["alpha", "beta"]), 1_000);
        assert_eq!(
            sel.items.iter().map(|e| e.id).collect::<Vec<_>>(),
            vec![1, 2, 3]
        );
    }

    #[test]
    fn a_word_most_candidates_mention_does_not_put_them_ahead_of_the_nearest_in_meaning() {
        // Thirty messages mention only the speaker's name, one also names the harbour; the
        // semantic index ranks a message that mentions neither first.
        let mut cands: Vec<Candidate> = (1..=30)
            .map(|i| {
                cand(
                    "message",
                    i,
                    &format!("Maya: routine note {i}"),
                    Origin::Hit,
                )
            })
            .collect();
        cands.push(cand(
            "message",
            40,
            "Maya: the flat by the harbour",
            Origin::Hit,
        ));
        cands.push(cand("message", 100, "we signed a lease", Origin::Similar));
        let semantic: Vec<(&'static str, i64)> = vec![("message", 100), ("message", 7)];
        let order: Vec<i64> = fused_order(cands, &terms(&["Maya", "harbour"]), &[(&semantic, 1.0)])
            .into_iter()
            .map(|(_, c)| c.id)
            .collect();
        let at = |id: i64| order.iter().position(|x| *x == id).unwrap();
        assert_eq!(at(40), 0, "the rare word's candidate first: {order:?}");
        assert_eq!(at(100), 1, "then the nearest in meaning: {order:?}");
        assert_eq!(
            at(7),
            2,
            "then the name's candidate the semantic index ranks: {order:?}"
        );
        assert!(
            (1..=30).filter(|id| *id != 7).all(|id| at(id) > at(100)),
            "the name alone ranks no candidate ahead of it: {order:?}"
        );
    }

    #[test]
    fn a_lexical_ranking_lists_only_candidates_that_mention_a_term_rarest_first() {
        let cands = vec![
            cand("message", 1, "Maya and Dmitri ran", Origin::Hit),
            cand("message", 2, "Maya slept", Origin::Hit),
            cand("message", 3, "Maya ate", Origin::Hit),
            cand("message", 4, "nothing here", Origin::Similar),
            cand("message", 5, "Dmitri finished", Origin::Hit),
        ];
        let ranking = lexical_ranking(&cands, &terms(&["Dmitri", "Maya"]));
        assert_eq!(
            ranking,
            vec![
                ("message", 1),
                ("message", 5),
                ("message", 2),
                ("message", 3)
            ]
        );
    }

    #[test]
    fn item_tokens_counts_what_pack_would_take() {
        let long = "word ".repeat(10_000);
        assert_eq!(item_tokens(&long, 900), 300 + ITEM_HEADER_TOKENS);
        assert_eq!(
            item_tokens("short", 900),
            estimate_text("short") + ITEM_HEADER_TOKENS
        );
    }

    #[test]
    fn excerpt_handles_multibyte_text_and_texts_without_a_mention() {
        let text = "静默发布".repeat(2_000);
        let cut = excerpt(&text, &terms(&["nothing"]), 50);
        assert!(estimate_text(&cut) <= 52 && cut.ends_with('…') && !cut.starts_with('…'));
        assert_eq!(excerpt("short", &terms(&["x"]), 50), "short");
    }
}
