//! BERT-uncased tokenization: the basic tokenizer (clean, lowercase, strip accents, split on
//! whitespace and punctuation, one token per CJK ideograph) followed by greedy longest-match
//! WordPiece over a vocabulary, as the distilled model's own tokenizer does.
//!
//! One deliberate difference from the reference (Hugging Face `BertTokenizer`): every character
//! that is neither a letter, a digit nor a combining mark splits off as its own token, so symbols
//! and emoji (`€`, `©`, `🙂`) do not turn the whole word they touch into `[UNK]` (the reference
//! splits only ASCII punctuation and Unicode `P*` characters). Pure and total: any `&str` gives a
//! list of ids, the work is linear in the text (a word is matched over at most
//! [`MAX_WORD_CHARS`] characters, a piece over at most the vocabulary's longest piece).

use std::collections::HashMap;
use unicode_normalization::char::is_combining_mark;
use unicode_normalization::UnicodeNormalization;

/// A word longer than this many characters is one `[UNK]`, as in the reference tokenizer.
pub const MAX_WORD_CHARS: usize = 100;

/// A WordPiece vocabulary: token text to id (the line number in the vocabulary file).
pub struct Vocab {
    ids: HashMap<&'static str, u32>,
    unk: u32,
    longest_piece_chars: usize,
}

impl Vocab {
    /// Reads a vocabulary of one token a line; `None` when it has no `[UNK]` line.
    pub fn from_lines(text: &'static str) -> Option<Vocab> {
        let mut ids = HashMap::with_capacity(32_768);
        let mut longest_piece_chars = 1;
        for (id, token) in text.lines().enumerate() {
            let id = u32::try_from(id).ok()?;
            ids.entry(token).or_insert(id);
            let chars = token.trim_start_matches("##").chars().count();
            longest_piece_chars = longest_piece_chars.max(chars);
        }
        let unk = *ids.get("[UNK]")?;
        Some(Vocab {
            ids,
            unk,
            longest_piece_chars,
        })
    }

    /// The id of `[UNK]`.
    pub fn unk(&self) -> u32 {
        self.unk
    }

    /// The number of tokens (the largest id plus one).
    pub fn len(&self) -> usize {
        self.ids
            .values()
            .map(|id| *id as usize + 1)
            .max()
            .unwrap_or(0)
    }

    /// Whether the vocabulary has no tokens.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The id of one token, if the vocabulary has it.
    pub fn id(&self, token: &str) -> Option<u32> {
        self.ids.get(token).copied()
    }

    /// The text's token ids, in order, appended to `out`, stopping once `out` holds `limit` ids.
    pub fn tokenize_into(&self, text: &str, limit: usize, out: &mut Vec<u32>) {
        let mut word = String::new();
        let mut scratch = String::new();
        for c in text.chars() {
            if out.len() >= limit {
                return;
            }
            if is_dropped(c) {
                continue;
            }
            if c.is_whitespace() {
                self.flush_word(&mut word, &mut scratch, limit, out);
                continue;
            }
            if is_cjk_ideograph(c) {
                self.flush_word(&mut word, &mut scratch, limit, out);
                self.push_char_token(c, limit, out);
                continue;
            }
            if c.is_ascii() {
                if c.is_ascii_alphanumeric() {
                    word.push(c.to_ascii_lowercase());
                } else {
                    self.flush_word(&mut word, &mut scratch, limit, out);
                    self.push_char_token(c, limit, out);
                }
                continue;
            }
            // Lowercase, decompose, drop the accents: "Ärger" -> "arger".
            for lower in c.to_lowercase() {
                for d in std::iter::once(lower).nfd() {
                    if is_combining_mark(d) {
                        continue;
                    }
                    if d.is_alphanumeric() {
                        word.push(d);
                    } else {
                        self.flush_word(&mut word, &mut scratch, limit, out);
                        self.push_char_token(d, limit, out);
                    }
                }
            }
        }
        self.flush_word(&mut word, &mut scratch, limit, out);
    }

    fn push_char_token(&self, c: char, limit: usize, out: &mut Vec<u32>) {
        if out.len() < limit {
            let mut buf = [0u8; 4];
            out.push(self.id(c.encode_utf8(&mut buf)).unwrap_or(self.unk));
        }
    }

    /// Greedy longest-match-first WordPiece of one word; a word with a part no piece matches is
    /// one `[UNK]`. Empties `word`.
    fn flush_word(
        &self,
        word: &mut String,
        scratch: &mut String,
        limit: usize,
        out: &mut Vec<u32>,
    ) {
        if word.is_empty() {
            return;
        }
        let bounds: Vec<usize> = word
            .char_indices()
            .map(|(i, _)| i)
            .chain(std::iter::once(word.len()))
            .collect();
        let chars = bounds.len() - 1;
        let mark = out.len();
        if chars > MAX_WORD_CHARS {
            out.push(self.unk);
            word.clear();
            return;
        }
        let mut start = 0;
        while start < chars {
            let mut end = chars.min(start + self.longest_piece_chars);
            let mut found = None;
            while end > start {
                let piece = &word[bounds[start]..bounds[end]];
                let id = if start == 0 {
                    self.id(piece)
                } else {
                    scratch.clear();
                    scratch.push_str("##");
                    scratch.push_str(piece);
                    self.id(scratch)
                };
                if id.is_some() {
                    found = id;
                    break;
                }
                end -= 1;
            }
            match found {
                Some(id) => {
                    out.push(id);
                    start = end;
                }
                None => {
                    out.truncate(mark);
                    out.push(self.unk);
                    break;
                }
            }
        }
        out.truncate(limit.max(mark));
        word.clear();
    }
}

/// Characters the reference tokenizer removes: NUL, the replacement character, control and
/// invisible format characters (whitespace controls such as `\n` and `\t` are whitespace).
fn is_dropped(c: char) -> bool {
    matches!(c, '\0' | '\u{fffd}' | '\u{ad}' | '\u{200b}'..='\u{200f}' | '\u{2060}'..='\u{2064}' | '\u{feff}')
        || (c.is_control() && !c.is_whitespace())
}

/// The CJK Unified Ideographs blocks the reference tokenizer splits into one token each
/// (Hangul, kana and other scripts are words like Latin ones).
fn is_cjk_ideograph(c: char) -> bool {
    matches!(u32::from(c),
        0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0x20000..=0x2A6DF | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F | 0x2B820..=0x2CEAF | 0xF900..=0xFAFF | 0x2F800..=0x2FA1F)
}

#[cfg(test)]
mod tests {
    use super::Vocab;

    const VOCAB: &str = "[PAD]\n[UNK]\nthe\nre\n##try\n##tries\nwrap\n##per\n,\n!\n中\ncafe\n€\n";

    fn tokens(text: &str) -> Vec<u32> {
        let vocab = Vocab::from_lines(VOCAB).expect("the test vocabulary has [UNK]");
        let mut out = Vec::new();
        vocab.tokenize_into(text, usize::MAX, &mut out);
        out
    }

    #[test]
    fn words_split_into_the_longest_pieces_the_vocabulary_has() {
        assert_eq!(tokens("The retries, wrapper!"), vec![2, 3, 5, 8, 6, 7, 9]);
        assert_eq!(tokens("retry"), vec![3, 4]);
    }

    #[test]
    fn accents_case_cjk_and_symbols_are_handled_like_the_reference() {
        assert_eq!(tokens("CAFÉ"), vec![11]);
        assert_eq!(tokens("中中"), vec![10, 10]);
        assert_eq!(tokens("5€"), vec![1, 12]);
        assert_eq!(
            tokens("wrapx"),
            vec![1],
            "a word with an unmatched part is one [UNK]"
        );
        assert_eq!(tokens(&"a".repeat(101)), vec![1]);
    }

    #[test]
    fn empty_and_invisible_text_has_no_tokens_and_the_limit_holds() {
        assert!(tokens("").is_empty());
        assert!(tokens(" \u{0}\u{200b}\u{feff}\n\t").is_empty());
        let vocab = Vocab::from_lines(VOCAB).unwrap();
        let mut out = Vec::new();
        vocab.tokenize_into(&"the ".repeat(50), 7, &mut out);
        assert_eq!(out.len(), 7);
        assert!(
            Vocab::from_lines("a\nb\n").is_none(),
            "a vocabulary without [UNK] is refused"
        );
    }
}
