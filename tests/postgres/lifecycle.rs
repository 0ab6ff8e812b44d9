//! The lifecycle tests (`lifecycle_cases/cases.rs`) on PostgreSQL, each on a fresh schema of a real
//! server. Run: `bash scripts/pg-server.sh run cargo test --features postgres --test postgres lifecycle::`.

pg_store!();

include!("../lifecycle_cases/cases.rs");
