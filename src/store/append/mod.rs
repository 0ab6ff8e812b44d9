//! Writing the history: messages and their parts, the context
//! items of the view, which messages a session's archived conversations hold (`archived_identities`), a key's user messages by time (`user_messages_near`), bulk appends (imports and long histories; the PostgreSQL path takes the
//! conversation's lock before appending), claims on a session, and the host's turn advancements.
//!
//! Where PostgreSQL writes or reads differently, its path is the `_pg` sibling of the module
//! that decides (`advancements_pg`, `bulk_pg`, `context_pg`, `lock_before_append_pg`,
//! `messages_pg`), private to this folder; `context_rows` holds what `context` and `context_pg`
//! both return.

pub mod advancements;
mod advancements_pg;
pub mod archived_identities;
pub mod bulk;
mod bulk_pg;
pub mod claim;
pub mod context;
mod context_pg;
mod context_rows;
pub mod lock_before_append;
mod lock_before_append_pg;
pub mod messages;
mod messages_pg;
pub mod user_messages_near;
