//! Rows every use case reads and writes: the conversation row (its identity, totals and
//! compaction state), with the one column list every statement that reads it names.
//!
//! The row's shared parts are `conversation_rows`; PostgreSQL's locking and resolving, the
//! `_pg` sibling `conversations_pg`; both private to this folder.

mod conversation_rows;
pub mod conversations;
mod conversations_pg;
