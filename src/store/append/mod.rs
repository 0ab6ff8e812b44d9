//! Writing the history: messages and their parts, the context
//! items of the view, bulk appends (imports and long histories; the PostgreSQL path takes the
//! conversation's lock before appending), claims on a session, and the host's turn advancements.

pub mod advancements;
pub mod bulk;
pub mod bulk_pg;
pub mod claim;
pub mod context;
pub mod lock_before_append;
pub mod messages;
