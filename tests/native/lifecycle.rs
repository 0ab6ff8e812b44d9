//! Session lifecycle (issue 5, seed 04): rotation and reset without data loss, restarts and
//! replays without duplicates, subagent isolation.

sqlite_store!();

include!("../lifecycle_cases/cases.rs");
