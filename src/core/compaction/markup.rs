//! Recognising our own markup in text: the summary wrapper, its recovery hint and the prompt
//! marker, which must never be fed back into a summary. Used by the rendering ([`super::format`]),
//! the ledger and the checks on answers.

/// Our markers, lower-cased once (markup is matched case-insensitively).
pub(crate) const MARKERS_LOWER: [&str; 4] = [
    "<lossless-summary",
    "</lossless-summary>",
    "recover details of this summary with lcm_expand",
    "[lossless-wasm:summarize]",
];

fn line_has_markup(lower_line: &str) -> bool {
    MARKERS_LOWER.iter().any(|m| lower_line.contains(m))
}

/// Whether `text` contains our summary wrapper, its recovery hint, or our prompt marker.
pub fn contains_our_markup(text: &str) -> bool {
    line_has_markup(&text.to_ascii_lowercase())
}

/// Removes every line that carries our markup, keeping the rest as it was.
pub fn strip_our_markup(text: &str) -> String {
    if !contains_our_markup(text) {
        return text.to_owned();
    }
    text.lines()
        .filter(|line| !line_has_markup(&line.to_ascii_lowercase()))
        .collect::<Vec<_>>()
        .join("\n")
}
