//! The state compaction keeps: summaries and their links, the trigger's state and its events,
//! masking stubs of old tool outputs, summary runs and the summarizer's spend, the host's prompt
//! accounting, and repair of fallback summaries.

pub mod accounting;
pub mod compaction;
pub mod masking;
pub mod repair;
pub mod spend;
pub mod summary_runs;
