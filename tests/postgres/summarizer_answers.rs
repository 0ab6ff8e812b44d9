//! The summarizer-answer tests (`summarizer_answers_cases/cases.rs`) on PostgreSQL, each on a
//! fresh schema of a real server: reasoning stripped, cut-off answers never stored, every call
//! recorded, an answer too long for its chunk changes the next request. Run:
//! `bash scripts/pg-server.sh run cargo test --features postgres --test postgres summarizer_answers::`.

pg_store!();

include!("../summarizer_answers_cases/cases.rs");
