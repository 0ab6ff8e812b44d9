//! Rows every use case reads and writes: the conversation row (its identity, totals and
//! compaction state), with the one column list every statement that reads it names.

pub mod conversations;
