//! The stubs tests (`stubs_cases/cases.rs`) on PostgreSQL, each on a fresh schema of a real
//! server. Run: `bash scripts/pg-server.sh run cargo test --features postgres --test postgres stubs::`.

pg_store!();

include!("../stubs_cases/cases.rs");
