//! The state compaction keeps: summaries and their links, the trigger's state and its events,
//! masking stubs of old tool outputs, summary runs and the summarizer's spend, the host's prompt
//! accounting, and repair of fallback summaries.
//!
//! Where PostgreSQL's statements differ, they are the `_pg` sibling of the module that picks them
//! (`compaction_pg`, `summary_runs_pg`), private to this folder.

pub mod accounting;
pub mod compaction;
mod compaction_pg;
pub mod masking;
pub mod repair;
pub mod spend;
pub mod summary_runs;
mod summary_runs_pg;
