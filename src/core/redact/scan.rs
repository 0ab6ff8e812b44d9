//! Where to look: one pass over a text finds every rule's keywords (ASCII, case-insensitive),
//! and each hit becomes a small window for that rule's regex. regex-lite keeps the wasm small
//! but scans at a few MB/s, so a 20K-token prompt is never handed to it whole; this pass runs
//! at memory speed and most texts hold no keyword of most rules.
//!
//! Owns nothing but positions: it does not know what the rules match.

/// A keyword occurrence: byte offsets of the keyword in the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Hit {
    pub start: usize,
    pub end: usize,
}

const TABLE_BITS: usize = 1 << 16;

/// Every rule's keywords, indexed by a hash of their first three bytes.
#[derive(Debug, Clone)]
pub(super) struct Keywords {
    words: Vec<Vec<u8>>,
    /// For each keyword, the rules it belongs to.
    owners: Vec<Vec<usize>>,
    /// One bit per hash of three lower-cased bytes: is any keyword starting with them?
    present: Vec<u64>,
    /// `(hash, keyword)` sorted by hash, searched only where `present` says so.
    by_hash: Vec<(u16, usize)>,
}

fn hash3(a: u8, b: u8, c: u8) -> u16 {
    let h = (u32::from(a.to_ascii_lowercase()) * 31 + u32::from(b.to_ascii_lowercase())) * 31
        + u32::from(c.to_ascii_lowercase());
    (h & 0xffff) as u16
}

impl Keywords {
    /// `rules[i]` are rule i's keywords: lower-case ASCII, three bytes or more.
    pub(super) fn new(rules: &[Vec<String>]) -> Keywords {
        let mut words: Vec<Vec<u8>> = Vec::new();
        let mut owners: Vec<Vec<usize>> = Vec::new();
        for (rule, keywords) in rules.iter().enumerate() {
            for keyword in keywords {
                let bytes = keyword.as_bytes().to_ascii_lowercase();
                match words.iter().position(|w| *w == bytes) {
                    Some(i) => owners[i].push(rule),
                    None => {
                        words.push(bytes);
                        owners.push(vec![rule]);
                    }
                }
            }
        }
        let mut present = vec![0u64; TABLE_BITS / 64];
        let mut by_hash: Vec<(u16, usize)> = Vec::new();
        for (i, w) in words.iter().enumerate() {
            if let [a, b, c, ..] = w[..] {
                let h = hash3(a, b, c);
                present[usize::from(h) / 64] |= 1 << (h % 64);
                by_hash.push((h, i));
            }
        }
        by_hash.sort_unstable();
        Keywords {
            words,
            owners,
            present,
            by_hash,
        }
    }

    /// Every keyword hit in `text` as `(rule, hit)`, sorted by rule and then text order (most
    /// texts have none, and then nothing is allocated).
    pub(super) fn hits(&self, text: &str) -> Vec<(usize, Hit)> {
        let mut out: Vec<(usize, Hit)> = Vec::new();
        let bytes = text.as_bytes();
        if bytes.len() < 3 {
            return out;
        }
        for i in 0..bytes.len() - 2 {
            let h = hash3(bytes[i], bytes[i + 1], bytes[i + 2]);
            if self.present[usize::from(h) / 64] & (1 << (h % 64)) == 0 {
                continue;
            }
            let first = self.by_hash.partition_point(|(x, _)| *x < h);
            for &(_, k) in self.by_hash[first..].iter().take_while(|(x, _)| *x == h) {
                let word = &self.words[k];
                if bytes.len() - i >= word.len()
                    && bytes[i..i + word.len()].eq_ignore_ascii_case(word)
                {
                    for &rule in &self.owners[k] {
                        out.push((
                            rule,
                            Hit {
                                start: i,
                                end: i + word.len(),
                            },
                        ));
                    }
                }
            }
        }
        // Stable: a rule's hits stay in text order.
        out.sort_by_key(|(rule, _)| *rule);
        out
    }
}

/// Bytes that end a token: a window stretched to one of these holds the whole token.
fn ends_token(b: u8) -> bool {
    b.is_ascii_whitespace() || matches!(b, b'"' | b'\'' | b'`' | b'<' | b'>')
}

fn floor_boundary(text: &str, mut i: usize) -> usize {
    while i > 0 && !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_boundary(text: &str, mut i: usize) -> usize {
    while i < text.len() && !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// Longest stretch past `after` a window follows a token to its end.
const TOKEN_STRETCH: usize = 8_192;

/// Windows for one rule's hits: from `before` bytes ahead of each hit to `after` bytes past it,
/// stretched to the end of the token there; overlapping windows are merged.
pub(super) fn windows(
    text: &str,
    hits: &[Hit],
    before: usize,
    after: usize,
) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut out: Vec<(usize, usize)> = Vec::new();
    for hit in hits {
        let start = floor_boundary(text, hit.start.saturating_sub(before));
        let mut end = hit.end.saturating_add(after).min(bytes.len());
        let cap = end.saturating_add(TOKEN_STRETCH).min(bytes.len());
        while end < cap && !ends_token(bytes[end]) {
            end += 1;
        }
        let end = ceil_boundary(text, end);
        match out.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => out.push((start, end)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kw(rules: &[&[&str]]) -> Keywords {
        Keywords::new(
            &rules
                .iter()
                .map(|r| r.iter().map(|s| s.to_string()).collect())
                .collect::<Vec<_>>(),
        )
    }

    #[test]
    fn hits_are_found_case_insensitively_for_every_rule_that_owns_the_keyword() {
        let k = kw(&[&["akia", "ghp_"], &["ghp_"]]);
        let hits = k.hits("x AKIAABC and ghp_1 and Ghp_2");
        let of = |rule: usize| {
            hits.iter()
                .filter(|(r, _)| *r == rule)
                .map(|(_, h)| h.start)
                .collect::<Vec<_>>()
        };
        assert_eq!(of(0), vec![2, 14, 24]);
        assert_eq!(of(1), vec![14, 24]);
    }

    #[test]
    fn windows_stretch_to_the_end_of_the_token_and_merge() {
        let text = "aa ghp_0123456789abcdef rest ghp_x";
        let hits = [Hit { start: 3, end: 7 }, Hit { start: 29, end: 33 }];
        assert_eq!(windows(text, &hits, 0, 2), vec![(3, 23), (29, 34)]);
        assert_eq!(windows(text, &hits, 0, 40), vec![(3, 34)]);
    }

    #[test]
    fn windows_never_split_a_character() {
        let text = "ééé ghp_x ééé";
        let w = windows(text, &[Hit { start: 7, end: 11 }], 1, 4);
        assert!(text.is_char_boundary(w[0].0) && text.is_char_boundary(w[0].1));
    }
}
