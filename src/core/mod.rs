//! The pure core: no I/O, no JS, no async, no clock. Everything here is a function of its inputs
//! and is tested natively in milliseconds.

pub mod accounting;
pub mod ask;
pub mod assemble;
pub mod compaction;
pub mod config;
pub mod embed;
pub mod identity;
pub mod masking;
pub mod message;
pub mod redact;
pub mod session_key;
pub mod tokens;
pub mod transcript_match;
pub mod turns;
