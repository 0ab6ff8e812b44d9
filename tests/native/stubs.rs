//! Tool-output stubs through the engine on native SQLite (issue 23, item 1): old tool outputs
//! become one-line stubs in the view, the previous turn stays whole, identical outputs appear
//! once, a huge message becomes an excerpt from its first turn, every stubbed output is found by
//! grep and returned whole by expand, the state survives a reopen, batches wait until they pay
//! for their cache break unless the budget is under pressure, and tool calls stay paired.

sqlite_store!();

include!("../stubs_cases/cases.rs");
