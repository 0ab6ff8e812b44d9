//! The prompt-cache price model (issue 23), per million tokens: input $3 (summarizer calls, which
//! share no cache), cache write $3.75, cache read $0.30, output $15.
//!
//! Per turn of the agent:
//! - the host makes [`CALLS_PER_TURN`] model calls, each answering [`REPLY_TOKENS`] tokens;
//! - every call of the turn gets the engine's view as assembled at the turn's start. The first
//!   call reads the prefix the view shares with the previous turn's view (the longest common
//!   prefix, whole messages compared byte for byte) from the cache and writes the rest; every
//!   later call of the turn reads the whole view from the cache;
//! - a turn's own messages are first paid for when they enter the next turn's view (written
//!   once there); what the calls inside a turn read of them is the same whatever the engine does
//!   and is left out, as are the host's system prompt and tool schemas (`--system N` adds N
//!   always-cached tokens to every call).
//!
//! A replayed session (`real_sessions`) prices each turn with its own number of calls and reply
//! tokens ([`turn_with`]).
//!
//! Summaries: the prompt's tokens at the input price, the answer's at the output price.

pub const INPUT: f64 = 3.0;
pub const CACHE_WRITE: f64 = 3.75;
pub const CACHE_READ: f64 = 0.30;
pub const OUTPUT: f64 = 15.0;
pub const CALLS_PER_TURN: u64 = 4;
pub const REPLY_TOKENS: u64 = 400;

/// Dollars for `tokens` at `per_million`.
pub fn dollars(tokens: u64, per_million: f64) -> f64 {
    tokens as f64 * per_million / 1e6
}

/// What one turn's model calls cost, split by line item.
#[derive(Debug, Default, Clone, Copy)]
pub struct TurnCost {
    pub cache_read: f64,
    pub cache_write: f64,
    pub output: f64,
    /// Tokens read from the cache and written to it (the hit share is read / (read + write)).
    pub read_tokens: u64,
    pub write_tokens: u64,
}

/// A turn with a view of `view` tokens of which `prefix` are cached from the previous turn,
/// under a system prompt of `system` tokens.
pub fn turn(view: u64, prefix: u64, system: u64) -> TurnCost {
    turn_with(
        view,
        prefix,
        system,
        CALLS_PER_TURN,
        REPLY_TOKENS * CALLS_PER_TURN,
    )
}

/// [`turn`] for a turn of `calls` model calls (at least one is priced) answering `output`
/// tokens in all: a replayed session knows both.
pub fn turn_with(view: u64, prefix: u64, system: u64, calls: u64, output: u64) -> TurnCost {
    let calls = calls.max(1);
    let read = system * calls + prefix.min(view) + view * (calls - 1);
    let write = view - prefix.min(view);
    TurnCost {
        cache_read: dollars(read, CACHE_READ),
        cache_write: dollars(write, CACHE_WRITE),
        output: dollars(output, OUTPUT),
        read_tokens: read,
        write_tokens: write,
    }
}

/// What the summarizer calls cost.
pub fn summaries(tokens_in: u64, tokens_out: u64) -> f64 {
    dollars(tokens_in, INPUT) + dollars(tokens_out, OUTPUT)
}
