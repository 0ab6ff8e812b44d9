//! The search terms of a question: the words worth looking up in the stored history. A question
//! in natural language ("what did we decide about the retry budget?") is mostly words that match
//! everything; the terms are the ones that can single out a message: identifiers, numbers,
//! paths, hosts, longer content words, and CJK phrases.
//!
//! Pure and deterministic; at most [`MAX_TERMS`] terms, most distinctive first, so the number of
//! searches a question costs is bounded whatever its length.

use crate::core::tokens::is_cjk;

/// Most terms searched for one question.
pub const MAX_TERMS: usize = 8;
/// Shortest plain word (letters only) kept as a term.
const MIN_WORD_CHARS: usize = 4;
/// Shortest CJK run kept as a term.
const MIN_CJK_CHARS: usize = 2;

/// Words that say what is asked, not what about: they match nearly every message.
const STOPWORDS: &[&str] = &[
    "about",
    "after",
    "again",
    "also",
    "answer",
    "anything",
    "been",
    "before",
    "being",
    "could",
    "decide",
    "decided",
    "decision",
    "did",
    "does",
    "doing",
    "done",
    "each",
    "earlier",
    "ever",
    "from",
    "have",
    "having",
    "here",
    "into",
    "just",
    "know",
    "last",
    "like",
    "made",
    "make",
    "mention",
    "mentioned",
    "more",
    "most",
    "much",
    "must",
    "need",
    "note",
    "noted",
    "other",
    "over",
    "said",
    "same",
    "should",
    "some",
    "such",
    "tell",
    "than",
    "that",
    "their",
    "them",
    "then",
    "there",
    "these",
    "they",
    "thing",
    "this",
    "those",
    "through",
    "under",
    "until",
    "very",
    "want",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "whom",
    "whose",
    "will",
    "with",
    "would",
    "your",
    "yours",
    "please",
    "remember",
    "recall",
    "conversation",
    "history",
    "previously",
    "exactly",
    "actually",
    "which",
];

/// Question words at the end of a CJK run ("…是什么", "…是谁"), dropped from the term.
const CJK_QUESTION_TAILS: &[&str] = &[
    "是什么",
    "是谁",
    "是哪个",
    "是多少",
    "什么",
    "多少",
    "哪里",
    "怎么样",
    "吗",
    "呢",
    "么",
];

fn is_trim(c: char) -> bool {
    !(c.is_alphanumeric()
        || matches!(c, '_' | '+' | '#' | '@' | '$' | '%' | '/' | '~')
        || is_cjk(c))
}

fn is_cjk_punctuation(c: char) -> bool {
    matches!(
        c,
        '，' | '。'
            | '？'
            | '！'
            | '：'
            | '；'
            | '、'
            | '“'
            | '”'
            | '‘'
            | '’'
            | '（'
            | '）'
            | '《'
            | '》'
            | '【'
            | '】'
            | '「'
            | '」'
    )
}

/// How likely a term is to single out a message: symbols and digits (identifiers, hosts,
/// versions) above CJK phrases above long words above short ones.
fn distinctiveness(term: &str) -> u32 {
    let chars = term.chars().count() as u32;
    let marked = term
        .chars()
        .any(|c| c.is_ascii_digit() || matches!(c, '_' | '-' | '.' | ':' | '/' | '@' | '#' | '+'));
    let upper_inside = term.chars().skip(1).any(|c| c.is_uppercase());
    let cjk = term.chars().any(is_cjk);
    (if marked || upper_inside {
        1_000
    } else if cjk {
        500
    } else {
        0
    }) + chars.min(100)
}

fn strip_cjk_tail(run: &str) -> &str {
    let mut out = run;
    for tail in CJK_QUESTION_TAILS {
        if let Some(head) = out.strip_suffix(tail) {
            out = head;
        }
    }
    out
}

/// One whitespace-separated word of the question as candidate terms (a CJK word may hold several
/// phrases between punctuation marks).
fn word_terms(word: &str, out: &mut Vec<String>) {
    for piece in word.split(is_cjk_punctuation) {
        let piece = piece.trim_matches(is_trim);
        if piece.is_empty() {
            continue;
        }
        if piece.chars().any(is_cjk) {
            let run = strip_cjk_tail(piece);
            if run.chars().filter(|c| is_cjk(*c)).count() >= MIN_CJK_CHARS {
                out.push(run.to_owned());
            }
            continue;
        }
        let lower = piece.to_lowercase();
        let marked = piece
            .chars()
            .any(|c| c.is_ascii_digit() || !c.is_alphanumeric());
        let keep = if marked {
            // "10", "v2", "eu-5": short, but exactly what singles a fact out; one digit is noise.
            piece.chars().count() >= 2
        } else {
            piece.chars().count() >= MIN_WORD_CHARS && !STOPWORDS.contains(&lower.as_str())
        };
        if keep {
            out.push(piece.to_owned());
        }
    }
}

/// The terms to search for: the caller's own pattern first (taken literally), then the
/// question's most distinctive words, without duplicates (case-insensitive), at most
/// [`MAX_TERMS`].
pub fn search_terms(question: &str, pattern: Option<&str>) -> Vec<String> {
    let mut words = Vec::new();
    for word in question.split_whitespace() {
        word_terms(word, &mut words);
    }
    // Stable: equally distinctive words keep the question's order.
    words.sort_by_key(|w| std::cmp::Reverse(distinctiveness(w)));
    let mut out: Vec<String> = Vec::new();
    let pattern = pattern
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(str::to_owned);
    for term in pattern.into_iter().chain(words) {
        if out.len() == MAX_TERMS {
            break;
        }
        if !out.iter().any(|t| t.to_lowercase() == term.to_lowercase()) {
            out.push(term);
        }
    }
    out
}

/// Whether `text` contains `term`, ignoring ASCII case (how the recall search matches text).
pub fn mentions(text: &str, term: &str) -> bool {
    text.to_lowercase().contains(&term.to_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_numbers_and_hosts_come_first_and_question_words_are_dropped() {
        let terms = search_terms("What did we decide about the retry budget at 10 attempts for pg-stage-3.internal:5433?", None);
        assert_eq!(terms[0], "pg-stage-3.internal:5433", "{terms:?}");
        assert!(
            terms.contains(&"10".to_owned())
                && terms.contains(&"retry".to_owned())
                && terms.contains(&"budget".to_owned()),
            "{terms:?}"
        );
        for dropped in ["What", "did", "decide", "about", "the", "at"] {
            assert!(
                !terms.iter().any(|t| t == dropped),
                "{dropped} kept: {terms:?}"
            );
        }
    }

    #[test]
    fn the_callers_pattern_is_the_first_term_taken_literally() {
        let terms = search_terms("who is it?", Some("  OPS-4002 "));
        assert_eq!(terms, vec!["OPS-4002".to_owned()]);
        assert_eq!(
            search_terms("the ff_4_dark_mode flag", Some("ff_4_dark_mode")),
            vec!["ff_4_dark_mode".to_owned(), "flag".to_owned()]
        );
    }

    #[test]
    fn cjk_phrases_are_split_at_punctuation_and_lose_their_question_tail() {
        let terms = search_terms("周3晚上十点静默发布，负责人是谁？", None);
        assert_eq!(
            terms,
            vec!["周3晚上十点静默发布".to_owned(), "负责人".to_owned()],
            "{terms:?}"
        );
    }

    #[test]
    fn a_question_of_only_common_words_has_no_terms_and_a_long_one_is_bounded() {
        assert!(search_terms("what did we say about that?", None).is_empty());
        assert!(search_terms("   ", None).is_empty());
        let long: String = (0..100).map(|i| format!("id-{i} ")).collect();
        assert_eq!(search_terms(&long, None).len(), MAX_TERMS);
    }

    #[test]
    fn mentions_ignores_case() {
        assert!(mentions("The Staging DB", "staging db"));
        assert!(!mentions("staging", "prod"));
    }
}
