//! What a search is asked for and what it answers, shared by the SQLite search
//! ([`crate::store::search`]) and PostgreSQL's ([`crate::store::search_pg`]): the mode a pattern
//! is read in, and one hit.

use serde::Serialize;

use crate::error::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchMode {
    Text,
    FullText,
}

impl SearchMode {
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
    pub id: i64,
    pub conversation_id: i64,
    /// Message role, or "summary".
    pub role: String,
    pub snippet: String,
    pub created_at: i64,
}
