//! The recall tests (`recall_cases/cases.rs`) on PostgreSQL, each on a fresh schema of a real
//! server. Run: `bash scripts/pg-server.sh run cargo test --features postgres --test postgres recall::`.

pg_store!();

include!("../recall_cases/cases.rs");
