//! Snippets of literal-search hits, cut in Rust from the text the hit was confirmed on (full-text
//! hits get FTS4's own `snippet()`).

const AROUND_CHARS: usize = 80;

/// A window of `content` around the first ASCII-case-insensitive occurrence of `pattern`.
pub fn around(content: &str, pattern: &str) -> String {
    let lower = content.to_ascii_lowercase();
    let start_byte = lower.find(&pattern.to_ascii_lowercase()).unwrap_or(0);
    let start_char = content[..start_byte].chars().count();
    let from = start_char.saturating_sub(AROUND_CHARS / 2);
    let text: String = content.chars().skip(from).take(AROUND_CHARS + pattern.chars().count()).collect();
    let prefix = if from > 0 { "…" } else { "" };
    let suffix = if from + text.chars().count() < content.chars().count() { "…" } else { "" };
    format!("{prefix}{}{suffix}", text.replace('\n', " "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_respect_char_boundaries() {
        assert!(around("前面的文字静默后面的文字", "静默").contains("静默"));
    }
}
