//! `search`: finds stored messages and summaries of a session (or of every conversation) by a
//! literal string or an FTS4 query; the base of the `lcm_grep` recall tool.

use serde::Deserialize;

use super::params::{validate_session, SessionRef};
use super::Engine;
use crate::error::{Error, Result};
use crate::store::search::{self, SearchHit, SearchMode};
use crate::store::Sql;

/// `search`'s arguments.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchParams {
    /// The session whose conversation to search (with `scope` "conversation").
    #[serde(flatten)]
    pub session: SessionRef,
    /// What to search for: literal text (`text`) or an FTS4 query (`full_text`).
    pub pattern: String,
    /// "text" (default) or "full_text".
    #[serde(default)]
    pub mode: Option<String>,
    /// "conversation" (default: the session's active conversation) or "all".
    #[serde(default)]
    pub scope: Option<String>,
    /// At most this many hits (default 20).
    #[serde(default)]
    pub limit: Option<usize>,
}

impl<S: Sql> Engine<S> {
    /// The stored messages and summaries that match `pattern`, in the scope asked for.
    pub fn search(&mut self, params: SearchParams) -> Result<Vec<SearchHit>> {
        validate_session(&params.session)?;
        let mode = SearchMode::parse(params.mode.as_deref().unwrap_or("text"))?;
        let conversations = match params.scope.as_deref().unwrap_or("conversation") {
            "all" => Vec::new(),
            "conversation" => match self.conversation(&params.session)? {
                Some(conversation) => vec![conversation.id],
                None => return Ok(Vec::new()),
            },
            other => {
                return Err(Error::input(
                    "scope",
                    format!("unknown scope {other:?} (expected \"conversation\" or \"all\")"),
                ))
            }
        };
        self.store.index_waiting_messages()?;
        search::search(
            self.store.sql(),
            &conversations,
            &params.pattern,
            mode,
            params.limit.unwrap_or(20),
        )
    }
}
