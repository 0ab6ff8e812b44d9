//! The SQL seam and what sits under it: the [`Sql`](sql::Sql) trait every query runs through, the
//! dialect differences between SQLite and PostgreSQL, the schema and its migrations, and the native
//! connections (rusqlite, and PostgreSQL behind the `postgres` feature) used by tests and benches.

pub mod dialect;
pub mod error_codes;
#[cfg(not(target_arch = "wasm32"))]
pub mod native;
#[cfg(all(not(target_arch = "wasm32"), feature = "postgres"))]
pub mod native_pg;
pub mod packed;
pub mod schema;
pub mod sql;
