//! The accounting tests (`accounting_cases/cases.rs`) on PostgreSQL, each on a fresh schema of a real
//! server. Run: `bash scripts/pg-server.sh run cargo test --features postgres --test postgres accounting::`.

pg_store!();

include!("../accounting_cases/cases.rs");
