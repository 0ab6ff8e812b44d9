//! Summary runs on PostgreSQL ([`super::summary_runs`] picks it): the record is read with its
//! row locked, so two gateways that both find no summary request in flight cannot both record
//! one. SQLite's `BEGIN IMMEDIATE` already holds the database, so it reads plainly.
//!
//! Must not: run on SQLite (no `FOR UPDATE` there).

/// `summary_runs::LOAD_SQL` that locks the conversation's row until the transaction ends.
pub(super) const LOAD_FOR_UPDATE_SQL: &str =
    "SELECT summary_runs_json FROM conversations WHERE id = ?1 FOR UPDATE";
