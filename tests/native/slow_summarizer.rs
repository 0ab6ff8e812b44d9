//! A slow summarizer never slows a turn (issue 23, item 5), on native SQLite: how long a request
//! may hold the host's call, one summary in flight per conversation, requests a process left
//! unanswered, the catch-up turn, and an answer that arrives after the context changed. Two
//! engines on one database file stand for two processes (`openclaw agent --local` runs one
//! process per turn). The shim's side (waiting, detaching) is tested in
//! tests/js/engine/slow-summarizer.test.mjs. The cases (`slow_summarizer_cases/cases.rs`) run on PostgreSQL
//! too, where several gateways share one store (slow_summarizer_pg.rs).

sqlite_store!();

include!("../slow_summarizer_cases/cases.rs");
