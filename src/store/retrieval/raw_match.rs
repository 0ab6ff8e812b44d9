//! Literal (substring) search over messages whose text is not stored: a necessary condition on
//! `raw_json` that SQL can test, so only candidates are parsed and checked in Rust.
//!
//! A message's text (core::message::text_of_raw_json) is made of pieces — JSON string values
//! (text blocks, tool names, summaries, commands, output), which appear in `raw_json` escaped as
//! serde_json escapes them, and tool-call arguments, which appear in `raw_json` verbatim — joined
//! by glue: `"\n"`, `"[tool call "`, `" "`, `"]"`, `"$ "`; NUL shows as U+2400. Every glue string
//! begins and ends with a [`GLUE`] character, so a run of non-glue characters of the text lies
//! inside one piece, or is (part of) the glue word "tool" or "call". Hence for any run `s` of the
//! pattern between glue characters: if the text contains the pattern, `raw_json` contains `s`
//! escaped, or `s` verbatim, or the message has a tool call. The filter uses the longest run;
//! the caller confirms every candidate on the derived text
//! ([`crate::store::literal`]). Case: ASCII-insensitive, as search is.

use crate::store::sql::SqlValue;

/// Characters that begin or end every glue string of the plain-text rendering (and U+2400,
/// which stands for NUL in the text but is escaped as `\u0000` in `raw_json`).
const GLUE: [char; 6] = ['\n', ' ', '[', ']', '$', '\u{2400}'];

/// A condition on `raw_json` that every message whose text contains the pattern meets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawFilter {
    escaped: String,
    verbatim: String,
    tool_calls: bool,
}

impl RawFilter {
    /// None when the pattern is all glue (then every message is a candidate).
    pub fn new(pattern: &str) -> Option<RawFilter> {
        let lower = pattern.to_ascii_lowercase();
        let run = lower
            .split(|c| GLUE.contains(&c))
            .filter(|s| !s.is_empty())
            .max_by_key(|s| s.len())?;
        let quoted = serde_json::to_string(run).unwrap_or_default();
        let escaped = quoted
            .get(1..quoted.len().saturating_sub(1))
            .unwrap_or_default()
            .to_owned();
        Some(RawFilter {
            escaped,
            verbatim: run.to_owned(),
            tool_calls: "tool".contains(run) || "call".contains(run),
        })
    }

    /// The SQL condition on `column`, its parameters numbered from `?{first}`.
    pub fn sql(&self, column: &str, first: usize) -> (String, Vec<SqlValue>) {
        let mut terms = vec![format!("instr(lower({column}), lower(?{first})) > 0")];
        let mut params: Vec<SqlValue> = vec![self.escaped.as_str().into()];
        if self.verbatim != self.escaped {
            terms.push(format!("instr(lower({column}), lower(?{})) > 0", first + 1));
            params.push(self.verbatim.as_str().into());
        }
        if self.tool_calls {
            terms.push(format!("instr({column}, '\"toolCall\"') > 0"));
        }
        (format!("({})", terms.join(" OR ")), params)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_takes_the_longest_run_between_glue_and_escapes_it_as_serde_json_does() {
        let f = RawFilter::new("say \"Hi\\there\"\n[x]").unwrap();
        assert_eq!(f.verbatim, "\"hi\\there\"");
        assert_eq!(f.escaped, "\\\"hi\\\\there\\\"");
        assert!(!f.tool_calls);
        assert_eq!(RawFilter::new(" \n$[]"), None);
        assert!(RawFilter::new("tool call").unwrap().tool_calls);
        let (sql, params) = RawFilter::new("plain").unwrap().sql("t.raw_json", 3);
        assert_eq!(sql, "(instr(lower(t.raw_json), lower(?3)) > 0)");
        assert_eq!(params.len(), 1);
    }
}
