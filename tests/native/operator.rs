//! `/lcm status` and `/lcm doctor` on native SQLite: status counts what is stored and what
//! compaction did; doctor passes on a healthy database, finds each kind of damage, and repairs
//! only what can be rebuilt from the rows (indexes, running totals), never content.

sqlite_store!();

include!("../operator_cases/cases.rs");
