//! A compaction changes the cached view in place (the replaced items leave, the summary takes
//! their place, older items fill the room it freed) instead of rebuilding it from the store.
//! These tests hold the in-place view to what a rebuild shows: after every compaction, the view
//! of the engine that compacted equals the view a fresh engine builds from the same database.

sqlite_store!();

include!("../view_follows_compaction_cases/cases.rs");
