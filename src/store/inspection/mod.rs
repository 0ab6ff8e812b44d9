//! Read-only views for people and tools: describe/expand, the explorer's DAG, statistics, and
//! the doctor's checks.

pub mod doctor;
pub mod explorer;
pub mod inspect;
pub mod statistics;
