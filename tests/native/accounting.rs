//! Prompt accounting through the engine (native SQLite), with the default config: the view is
//! sized against the host's real prompt, and a forced `compact()` (OpenClaw's preflight check)
//! always makes progress or says, in words the host accepts, that nothing can.

sqlite_store!();

include!("../accounting_cases/cases.rs");
