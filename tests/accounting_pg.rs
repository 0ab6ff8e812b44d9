//! The accounting tests (`accounting_cases/cases.rs`) on PostgreSQL, each on a fresh schema of a real
//! server. Run: `bash scripts/pg-server.sh run cargo test --features postgres --test accounting_pg`.
#![cfg(all(not(target_arch = "wasm32"), feature = "postgres"))]

mod pg;

type Db = lossless_wasm::store::native_pg::PgSql;

fn open_db() -> Db {
    pg::fresh()
}

include!("accounting_cases/cases.rs");
