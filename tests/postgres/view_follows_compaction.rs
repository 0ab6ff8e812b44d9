//! The view_follows_compaction tests (`view_follows_compaction_cases/cases.rs`) on PostgreSQL, each on a fresh schema of a real
//! server. Run: `bash scripts/pg-server.sh run cargo test --features postgres --test postgres view_follows_compaction::`.

pg_store!();

include!("../view_follows_compaction_cases/cases.rs");
