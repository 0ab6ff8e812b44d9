//! The compaction tests (`compaction_cases/cases.rs`) on PostgreSQL, each on a fresh schema of a real
//! server. Run: `bash scripts/pg-server.sh run cargo test --features postgres --test postgres compaction::`.

pg_store!();

include!("../compaction_cases/cases.rs");
include!("../compaction_cases/active_task.rs");
include!("../compaction_cases/whatever_the_summarizer.rs");
