//! Compaction wired into the engine, on native SQLite, with scripted and extractive summarizers.
//! Each test is named for the behaviour it protects (seeds 01, 02, 03, 05 and the list).

sqlite_store!();

include!("../compaction_cases/cases.rs");
include!("../compaction_cases/active_task.rs");
include!("../compaction_cases/whatever_the_summarizer.rs");
