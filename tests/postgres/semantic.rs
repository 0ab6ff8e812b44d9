//! The semantic index tests (`semantic_cases/cases.rs`) on PostgreSQL, each on a fresh schema of
//! a real server. Run: `bash scripts/pg-server.sh run cargo test --features postgres --test postgres semantic::`.

pg_store!();

include!("../semantic_cases/cases.rs");
