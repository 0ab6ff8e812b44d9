//! A context item as stub selection sees it: the row facts `select.rs` plans over and `workset.rs`
//! reads the turns from, in a file of its own so that neither imports the other for it.

use crate::core::message::Role;

/// One context item as selection sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanItem {
    /// The item's position in the active context (`context_items.ordinal`).
    pub ordinal: i64,
    /// None for a summary.
    pub message_id: Option<i64>,
    /// The message's role; None for a summary.
    pub role: Option<Role>,
    /// Its tokens in the view now.
    pub tokens: u32,
    /// Its stub variant, when it is stubbed (1: a line, 2 and up: an excerpt).
    pub stub: Option<i64>,
    /// Whether the message calls tools (an assistant's tool-call blocks).
    pub calls_tools: bool,
}
