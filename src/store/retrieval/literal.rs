//! What a literal (`text` mode) search pattern matches, the same on every backend. The text must
//! contain the pattern, ignoring ASCII case, at a place where:
//! - the pattern's first character, when it is a letter or digit, starts a word of the text (a
//!   word is a run of letters and digits: `Error` is not found in "TypeError", `parser` is found
//!   in "my_parser");
//! - the pattern's last word, when the pattern ends in one shorter than [`PREFIX_MIN_CHARS`],
//!   ends a word of the text (`ok` is not found in "okay"); a longer last word may run on (`pars`
//!   finds "parser").
//!
//! A pattern with CJK text matches anywhere: CJK is written without spaces, so its "words" are
//! whole runs of text. A pattern without letters or digits has no word edges to check.
//!
//! SQLite's FTS4 index (unicode61 words) and PostgreSQL's trigram index only narrow the
//! candidates; each candidate is confirmed here, so both backends answer the same.

use crate::core::tokens::is_cjk;

/// The shortest last word a literal search also finds as the start of a longer word: FTS4 reads a
/// prefix from its list of terms, and a one- or two-letter prefix would have it merge the lists of
/// a large part of the vocabulary.
pub const PREFIX_MIN_CHARS: usize = 3;

fn is_word_char(c: Option<char>) -> bool {
    c.is_some_and(char::is_alphanumeric)
}

/// Which ends of an occurrence must sit on a word's edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Edges {
    /// The character before must not be a letter or digit (or there is none).
    pub start: bool,
    /// The character after must not be a letter or digit (or there is none).
    pub end: bool,
}

impl Edges {
    /// The edges `pattern`'s occurrences must sit on.
    pub fn of(pattern: &str) -> Edges {
        if pattern.chars().any(is_cjk) {
            return Edges {
                start: false,
                end: false,
            };
        }
        let last_word = pattern
            .rsplit(|c: char| !c.is_alphanumeric())
            .next()
            .unwrap_or("");
        Edges {
            start: is_word_char(pattern.chars().next()),
            end: !last_word.is_empty() && last_word.chars().count() < PREFIX_MIN_CHARS,
        }
    }

    /// Whether the occurrence at bytes `at..at + len` of `text` sits on the edges required.
    fn hold(&self, text: &str, at: usize, len: usize) -> bool {
        let starts_inside = self.start && is_word_char(text[..at].chars().next_back());
        let ends_inside = self.end && is_word_char(text[at + len..].chars().next());
        !starts_inside && !ends_inside
    }
}

/// The byte offset in `text` of the first place `pattern` matches, or None.
pub fn find(text: &str, pattern: &str) -> Option<usize> {
    // ASCII lower-casing keeps every byte offset, so offsets in `hay` are offsets in `text`.
    let hay = text.to_ascii_lowercase();
    let needle = pattern.to_ascii_lowercase();
    let edges = Edges::of(pattern);
    let mut from = 0;
    while let Some(found) = hay.get(from..)?.find(&needle) {
        let at = from + found;
        if edges.hold(text, at, needle.len()) {
            return Some(at);
        }
        from = at + hay[at..].chars().next().map_or(1, char::len_utf8);
    }
    None
}

/// Whether `pattern` matches in `text`.
pub fn matches(text: &str, pattern: &str) -> bool {
    find(text, pattern).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_match_starts_where_a_word_does() {
        assert!(!matches("TypeError: x", "Error"));
        assert!(
            matches("TypeError: Error x", "error"),
            "a later occurrence at a word start counts"
        );
        assert_eq!(find("TypeError: Error x", "error"), Some(11));
        assert!(
            matches("see my_parser.rs", "parser"),
            "an underscore separates words"
        );
        assert!(matches("(parser)", "parser"));
        assert!(!matches("reparse", "parse"));
        assert!(
            matches(".rs files", ".rs"),
            "a pattern starting with punctuation may start anywhere"
        );
        assert!(matches("main.rs", ".rs"));
    }

    #[test]
    fn a_last_word_of_three_letters_or_more_may_run_on() {
        assert!(matches("the parser went", "pars"));
        assert!(matches("deployment", "DEPLOY"));
        assert!(matches("of the parser", "of the pars"));
        assert!(!matches("okay then", "ok"));
        assert!(matches("ok then", "ok"));
        assert!(matches("ok", "ok"));
        assert!(!matches("the parser", "parsers"));
        assert!(!matches("a4b", "a4"), "digits are word characters");
        assert!(matches("parser.", "parser."));
        assert!(matches("x = f(1)", "f("));
    }

    #[test]
    fn cjk_and_wordless_patterns_match_anywhere() {
        assert!(matches("安静默认", "静默"));
        assert!(matches("abc静默", "c静"));
        assert!(matches("x🚀y", "🚀"));
        assert!(matches("a%_b", "%_"));
    }

    #[test]
    fn case_folds_for_ascii_only_and_offsets_stay_on_char_boundaries() {
        assert!(matches("ÉCOLE école", "école"));
        assert!(!matches("ÉCOLE", "école"), "non-ASCII case is not folded");
        assert_eq!(find("ééé abc", "abc"), Some(7));
        assert_eq!(
            find("ééabcé", "abc"),
            None,
            "é is a letter, so abc starts inside a word"
        );
        assert_eq!(find("", "a"), None);
    }
}
