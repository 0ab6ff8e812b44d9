//! The operator's queries on PostgreSQL ([`super::doctor`] picks them): the database's size as
//! the server counts it. (The checks themselves differ by which run, not by their text: see
//! `doctor::checks`.)
//!
//! Must not: run on SQLite.

/// The database's size in bytes, as `/lcm status` reports it.
pub(super) const DB_BYTES_SQL: &str = "SELECT pg_database_size(current_database())";
