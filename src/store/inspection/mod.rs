//! Read-only views for people and tools: describe/expand, the explorer's DAG, statistics, and
//! the doctor's checks.
//!
//! Where PostgreSQL's statements differ, they are the `_pg` sibling of the module that picks them
//! (`doctor_pg`, `inspect_pg`), private to this folder.

pub mod doctor;
mod doctor_pg;
mod event_rows;
pub mod explorer;
pub mod inspect;
mod inspect_pg;
pub mod statistics;
