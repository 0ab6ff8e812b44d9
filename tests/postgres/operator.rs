//! The operator tests (`operator_cases/cases.rs`) on PostgreSQL, each on a fresh schema of a real
//! server. Run: `bash scripts/pg-server.sh run cargo test --features postgres --test postgres operator::`.

pg_store!();

include!("../operator_cases/cases.rs");
