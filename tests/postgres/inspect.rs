//! The inspect tests (`inspect_cases/cases.rs`) on PostgreSQL, each on a fresh schema of a real
//! server. Run: `bash scripts/pg-server.sh run cargo test --features postgres --test postgres inspect::`.

pg_store!();

include!("../inspect_cases/cases.rs");
