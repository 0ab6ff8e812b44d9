//! The redaction tests that go through a store (`redaction_cases/cases.rs`) on PostgreSQL, each on
//! a fresh schema of a real server: no planted credential reaches a prompt or a stored summary,
//! and every one stays expandable by its own agent only. Run:
//! `bash scripts/pg-server.sh run cargo test --features postgres --test postgres redaction::`.

pg_store!();

include!("../redaction_cases/cases.rs");
