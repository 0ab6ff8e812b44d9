//! Token estimation without a tokenizer. Weights per character class approximate common BPE
//! vocabularies: Latin text packs about four characters per token, CJK about one, emoji cost
//! more. Images and other binary payloads are a fixed cost, never counted by their base64 length.

/// Tokens charged for an image or file block, whatever its encoded size.
pub const BINARY_BLOCK_TOKENS: u32 = 1_000;
/// Per-message framing overhead (role markers, separators).
pub const MESSAGE_OVERHEAD_TOKENS: u32 = 4;

/// CJK ideographs, kana, hangul and their punctuation: scripts written without spaces, which
/// tokenizers split per character and word-based search indexes do not split at all.
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x2e80..=0x9fff | 0xac00..=0xd7af | 0xf900..=0xfaff | 0xff00..=0xffef | 0x20000..=0x3ffff)
}

/// A character's weight in quarter tokens (integers: a sum of floats was a serial chain of
/// additions, and the quarters are exact either way).
pub fn char_quarters(c: char) -> u64 {
    match c as u32 {
        0x00..=0x7f => 1,
        _ if is_cjk(c) => 4,
        0x1f000..=0x1faff => 8,
        _ => 2,
    }
}

/// Estimated tokens for plain text.
pub fn estimate_text(text: &str) -> u32 {
    // ASCII text (most of it) weighs one quarter per byte.
    let quarters: u64 = if text.is_ascii() {
        text.len() as u64
    } else {
        text.chars().map(char_quarters).sum()
    };
    u32::try_from(quarters.div_ceil(4)).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin_cjk_and_emoji_are_weighted_differently() {
        assert_eq!(estimate_text(""), 0);
        assert_eq!(estimate_text("abcdefgh"), 2);
        assert_eq!(estimate_text("静默静默"), 4);
        assert_eq!(estimate_text("🎉"), 2);
        assert_eq!(estimate_text("abcde"), 2, "quarters round up");
        assert_eq!(estimate_text("aé静🎉"), 4, "1 + 2 + 4 + 8 quarters");
    }
}
