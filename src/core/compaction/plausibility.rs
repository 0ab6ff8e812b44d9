//! Whether a summarizer's text is a summary at all, judged from the text alone (plus, for echoes,
//! a fingerprint of what was sent). Providers and proxies answer failures in ways that look like
//! success: an HTML error page from a gateway (`502 Bad Gateway`), a JSON error body, a refusal
//! ("I'm sorry, I can't…"), or the input sent straight back. Each would otherwise be stored,
//! merged forward into every deeper summary and shown to the model.
//!
//! The rules are deliberately about the *shape* of the whole answer, not about words inside it:
//! a real summary may well mention "502 Bad Gateway" (the user was debugging nginx) or quote an
//! HTML snippet; it does not *start* as an HTML document, a JSON error object or an apology, and
//! it does not consist mostly of word runs copied from its input.
//!
//! Pure: no I/O, no randomness; the hash is fixed so a verdict replays exactly.

use serde_json::Value;

/// Why a text is not a summary; [`super::escalation::Failure`] carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotASummary {
    /// An HTML document or a gateway's plain-text error, with its title or first line.
    ErrorPage(String),
    /// A JSON error body (`{"error": …}`), with its message when it has one.
    ErrorBody(String),
    /// The model declined, with the opening words.
    Refusal(String),
    /// Most of the text is copied word for word from the input.
    Echo {
        /// Percent of the text copied word for word from the input.
        copied_percent: u32,
    },
}

/// How many characters of an offending text a reason quotes.
const QUOTE_CHARS: usize = 80;

fn quote(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let mut out: String = line.chars().take(QUOTE_CHARS).collect();
    if line.chars().count() > QUOTE_CHARS {
        out.push('…');
    }
    out
}

/// The text between `<title>` and `</title>`, if any (ASCII case-insensitive).
fn html_title(text: &str) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    let start = lower.find("<title>")? + "<title>".len();
    let end = start + lower.get(start..)?.find("</title>")?;
    text.get(start..end)
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty())
}

const HTML_OPENERS: [&str; 5] = ["<!doctype html", "<html", "<head", "<body", "<?xml"];

/// Short plain-text answers that are a gateway's or provider's status, not prose.
const STATUS_PHRASES: [&str; 9] = [
    "bad gateway",
    "service unavailable",
    "gateway timeout",
    "gateway time-out",
    "internal server error",
    "too many requests",
    "rate limit exceeded",
    "upstream connect error",
    "request timeout",
];

/// A plain-text status answer is at most this long; a summary mentioning one is longer.
const STATUS_MAX_CHARS: usize = 200;

fn error_page(trimmed: &str) -> Option<String> {
    let lower = trimmed.to_ascii_lowercase();
    if HTML_OPENERS.iter().any(|o| lower.starts_with(o)) {
        return Some(html_title(trimmed).unwrap_or_else(|| quote(trimmed)));
    }
    if trimmed.chars().count() <= STATUS_MAX_CHARS
        && STATUS_PHRASES.iter().any(|p| lower.contains(p))
    {
        return Some(quote(trimmed));
    }
    None
}

fn error_body(trimmed: &str) -> Option<String> {
    if !trimmed.starts_with('{') {
        return None;
    }
    let Ok(Value::Object(obj)) = serde_json::from_str::<Value>(trimmed) else {
        return None;
    };
    let error = obj.get("error").or_else(|| obj.get("errors"))?;
    let message = match error {
        Value::String(s) => s.clone(),
        Value::Object(e) => e
            .get("message")
            .and_then(Value::as_str)
            .map_or_else(|| error.to_string(), str::to_owned),
        other => other.to_string(),
    };
    Some(message.chars().take(QUOTE_CHARS).collect())
}

/// Openings of a refusal, compared with the text's start after lowercasing and folding the
/// typographic apostrophe.
const REFUSALS: [&str; 12] = [
    "i'm sorry",
    "i am sorry",
    "sorry, i",
    "sorry, but",
    "i can't",
    "i cannot",
    "i'm unable",
    "i am unable",
    "i won't",
    "i will not",
    "as an ai",
    "unfortunately, i",
];

fn refusal(trimmed: &str) -> Option<String> {
    let head: String = trimmed
        .chars()
        .take(40)
        .collect::<String>()
        .to_lowercase()
        .replace('\u{2019}', "'");
    let head = head.trim_start_matches(|c: char| !c.is_alphanumeric());
    REFUSALS
        .iter()
        .any(|r| head.starts_with(r))
        .then(|| quote(trimmed))
}

/// Judges the text's shape: error page, error body or refusal. `None` means it may be a summary.
pub fn check_shape(text: &str) -> Option<NotASummary> {
    let trimmed = text.trim();
    if let Some(title) = error_page(trimmed) {
        return Some(NotASummary::ErrorPage(title));
    }
    if let Some(message) = error_body(trimmed) {
        return Some(NotASummary::ErrorBody(message));
    }
    refusal(trimmed).map(NotASummary::Refusal)
}

/// Words per shingle: runs this long are rarely shared by a summary and its input by chance.
const SHINGLE_WORDS: usize = 8;
/// An output needs at least this many shingles before echo is judged (short answers quote).
const MIN_SHINGLES: usize = 8;
/// Share of the output's shingles found in the input at which it counts as an echo.
const ECHO_PERCENT: u32 = 80;

fn fnv(words: &[&str]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for word in words {
        for byte in word.bytes().chain(std::iter::once(b' ')) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    hash
}

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

fn shingles(text: &str) -> Vec<u64> {
    let words = words(text);
    let refs: Vec<&str> = words.iter().map(String::as_str).collect();
    refs.windows(SHINGLE_WORDS).map(fnv).collect()
}

/// The word runs of a summarizer's input, to recognise an answer that repeats it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EchoFingerprint {
    /// Sorted, deduplicated shingle hashes.
    hashes: Vec<u64>,
}

impl EchoFingerprint {
    /// The fingerprint of a summarizer's input text.
    pub fn of(input: &str) -> Self {
        let mut hashes = shingles(input);
        hashes.sort_unstable();
        hashes.dedup();
        EchoFingerprint { hashes }
    }

    /// The fingerprint of a leaf prompt's `<messages>` block (the raw transcript sent). Other
    /// prompts get none: merging summaries legitimately restates their facts, and a merge that
    /// restates all of them fails as not shorter anyway.
    pub fn of_leaf_prompt(prompt: &str) -> Self {
        let Some(start) = prompt.rfind("\n<messages>\n") else {
            return EchoFingerprint::default();
        };
        let body = &prompt[start + "\n<messages>\n".len()..];
        let body = body.strip_suffix("\n</messages>").unwrap_or(body);
        EchoFingerprint::of(body)
    }

    /// `Some(Echo)` when most of `output`'s word runs occur in the input.
    pub fn check(&self, output: &str) -> Option<NotASummary> {
        let percent = self.copied_percent(output)?;
        (percent >= ECHO_PERCENT).then_some(NotASummary::Echo {
            copied_percent: percent,
        })
    }

    /// The share of `output`'s word runs found in the fingerprinted text, when there is enough
    /// of both to judge.
    pub fn copied_percent(&self, output: &str) -> Option<u32> {
        if self.hashes.is_empty() {
            return None;
        }
        let own = shingles(output);
        if own.len() < MIN_SHINGLES {
            return None;
        }
        let copied = own
            .iter()
            .filter(|h| self.hashes.binary_search(h).is_ok())
            .count();
        Some(u32::try_from(copied * 100 / own.len()).unwrap_or(100))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BAD_GATEWAY: &str = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n";

    #[test]
    fn an_html_502_page_is_an_error_page_named_by_its_title() {
        assert_eq!(
            check_shape(BAD_GATEWAY),
            Some(NotASummary::ErrorPage("502 Bad Gateway".to_owned()))
        );
        let doc = "  <!DOCTYPE html><html><body>Cloudflare: origin unreachable</body></html>";
        assert!(matches!(check_shape(doc), Some(NotASummary::ErrorPage(_))));
    }

    #[test]
    fn a_short_plain_text_gateway_status_is_an_error_page() {
        assert!(
            matches!(check_shape("503 Service Unavailable"), Some(NotASummary::ErrorPage(t)) if t == "503 Service Unavailable")
        );
        assert!(matches!(
            check_shape("upstream connect error or disconnect/reset before headers"),
            Some(NotASummary::ErrorPage(_))
        ));
    }

    #[test]
    fn a_summary_that_mentions_a_gateway_error_or_quotes_html_is_a_summary() {
        let summary = "## Goal\n- fix the nginx proxy\n## Progress\n- the user saw `502 Bad Gateway` from nginx after the upgrade; \
                       the upstream socket path was wrong and was corrected in /etc/nginx/sites-enabled/app, after which \
                       the health check passed and the page `<html><head><title>ok</title>` rendered again";
        assert_eq!(check_shape(summary), None);
    }

    #[test]
    fn a_json_error_body_is_rejected_with_its_message() {
        let body =
            r#"{"error":{"message":"overloaded_error: Overloaded","type":"overloaded_error"}}"#;
        assert_eq!(
            check_shape(body),
            Some(NotASummary::ErrorBody(
                "overloaded_error: Overloaded".to_owned()
            ))
        );
        assert_eq!(
            check_shape(r#"{"goal":"x"}"#),
            None,
            "JSON without an error key is not an error body"
        );
    }

    #[test]
    fn refusals_are_rejected_whatever_the_apostrophe() {
        for text in [
            "I'm sorry, but I can't help with that.",
            "I\u{2019}m sorry, I cannot summarize this.",
            "As an AI, I cannot",
            "  Sorry, I am unable to do that",
        ] {
            assert!(
                matches!(check_shape(text), Some(NotASummary::Refusal(_))),
                "{text}"
            );
        }
        assert_eq!(
            check_shape("## Goal\n- the user said \"I'm sorry\" to the reviewer"),
            None
        );
    }

    #[test]
    fn an_answer_repeating_its_input_is_an_echo() {
        let input = (0..60).map(|i| format!("[2026-01-01 10:{i:02} | user]\nplease run the migration number {i} against staging and report back")).collect::<Vec<_>>().join("\n\n");
        let fp = EchoFingerprint::of(&input);
        let half = &input[..input.len() / 2];
        assert!(
            matches!(fp.check(half), Some(NotASummary::Echo { copied_percent }) if copied_percent >= 90),
            "{:?}",
            fp.check(half)
        );
        let summary = "## Goal\n- migrate staging\n## Progress\n- the user asked sixty times for migrations 0 to 59 to be run on staging; none were reported back yet";
        assert_eq!(fp.check(summary), None);
    }

    #[test]
    fn only_a_leaf_prompts_transcript_is_fingerprinted() {
        let transcript = "[t | user]\nplease deploy the billing service to the eu cluster tonight after the freeze ends and tell me";
        let leaf = format!("[lossless-wasm:summarize] leaf summary\nYou are the memory-compaction step of an AI agent and so on and so forth for a while\n\n<messages>\n{transcript}\n</messages>");
        let fp = EchoFingerprint::of_leaf_prompt(&leaf);
        assert!(fp.check(transcript).is_some());
        assert_eq!(fp.check("You are the memory-compaction step of an AI agent and so on and so forth for a while"), None, "instructions are not input");
        assert_eq!(
            EchoFingerprint::of_leaf_prompt("<summaries>\nx\n</summaries>"),
            EchoFingerprint::default()
        );
    }

    #[test]
    fn short_answers_and_empty_fingerprints_are_never_echoes() {
        let fp = EchoFingerprint::of("one two three four five six seven eight nine ten");
        assert_eq!(
            fp.check("one two three four five six seven eight nine ten"),
            None,
            "too short to judge"
        );
        assert_eq!(EchoFingerprint::default().check(&"word ".repeat(500)), None);
    }
}
