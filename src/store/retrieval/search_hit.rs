//! What a search is asked for and what it answers, shared by the SQLite search
//! ([`crate::store::search`]) and PostgreSQL's (`search_pg`): the mode a pattern
//! is read in, and one hit.

use serde::Serialize;

use crate::error::{Error, Result};

/// How a search pattern is read (see the `store::search` module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchMode {
    /// A literal string ("text").
    Text,
    /// The caller's FTS4 query syntax ("full_text").
    FullText,
}

impl SearchMode {
    /// The mode of its name: "text" or "full_text"; an input error otherwise.
    pub fn parse(name: &str) -> Result<SearchMode> {
        match name {
            "text" => Ok(SearchMode::Text),
            "full_text" => Ok(SearchMode::FullText),
            other => Err(Error::input(
                "mode",
                format!("unknown search mode {other:?} (expected \"text\" or \"full_text\")"),
            )),
        }
    }
}

/// One match.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    /// "message" or "summary".
    pub kind: &'static str,
    /// The row id in `messages` or `summaries`, as `kind` says.
    pub id: i64,
    /// The conversation it belongs to, a row id in `conversations`.
    pub conversation_id: i64,
    /// Message role, or "summary".
    pub role: String,
    /// An excerpt of the text around the match.
    pub snippet: String,
    /// When it happened, in ms since the epoch: a message's host timestamp, a summary's latest
    /// covered time, else when it was stored.
    pub created_at: i64,
}
