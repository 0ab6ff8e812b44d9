//! Snippets of literal-search hits, cut in Rust from the text the hit was confirmed on (full-text
//! hits get FTS4's own `snippet()`).

const AROUND_CHARS: usize = 80;

/// A window of `content` around the match of `pattern` at byte `start_byte` (from
/// [`crate::store::literal::find`]).
pub fn around(content: &str, start_byte: usize, pattern: &str) -> String {
    let start_byte = if content.is_char_boundary(start_byte) {
        start_byte
    } else {
        0
    };
    let start_char = content[..start_byte].chars().count();
    let from = start_char.saturating_sub(AROUND_CHARS / 2);
    let text: String = content
        .chars()
        .skip(from)
        .take(AROUND_CHARS + pattern.chars().count())
        .collect();
    let prefix = if from > 0 { "…" } else { "" };
    let suffix = if from + text.chars().count() < content.chars().count() {
        "…"
    } else {
        ""
    };
    format!("{prefix}{}{suffix}", text.replace('\n', " "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_respect_char_boundaries() {
        let text = "前面的文字静默后面的文字";
        assert!(around(text, text.find("静默").unwrap(), "静默").contains("静默"));
        assert!(
            around(text, 1, "静默").starts_with("前面"),
            "an offset inside a character falls back to the start"
        );
    }
}
