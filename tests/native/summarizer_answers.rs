//! What comes back from a summarizer, judged through the engine on native SQLite
//! (the cases, `summarizer_answers_cases/cases.rs`, run on PostgreSQL too): reasoning is
//! stripped before anything is stored, answers cut off at the output limit are never stored,
//! every call is recorded with its tokens and outcome (and shown in status), and an answer too
//! long for its chunk changes what the next attempt asks for instead of repeating the call.

sqlite_store!();

include!("../summarizer_answers_cases/cases.rs");
