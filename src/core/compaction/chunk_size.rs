//! How large a leaf chunk may and must be: what the compaction config sets and chunk selection
//! obeys (both depend on this, not on each other).

/// Smallest leaf chunk worth a summary of its own (a rendered summary costs ~60 tokens of
/// framing before any content).
pub const MIN_USEFUL_CHUNK_TOKENS: u64 = 256;

/// Smallest leaf chunk the engine asks a summarizer about: a summary is asked to aim for at
/// least 128 tokens (0.4 of its input above 320) and costs ~60 tokens of framing in the view,
/// so below ~600 tokens even a summary that meets its target saves little or nothing, and an
/// answer that runs long saves nothing at all. A lone 50-token message is never a chunk.
pub const MIN_PAYOFF_CHUNK_TOKENS: u32 = 640;

/// How large a leaf chunk may and must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkSize {
    /// The chunk stops growing here (unless one message or one tool pair is larger).
    pub max_tokens: u32,
    /// A chunk below this is not worth a summarizer call: it is never planned.
    pub min_tokens: u32,
}

impl From<u32> for ChunkSize {
    /// A chunk of `max_tokens` that takes the next message along below a quarter of it (at most
    /// [`MIN_USEFUL_CHUNK_TOKENS`]).
    fn from(max_tokens: u32) -> Self {
        ChunkSize {
            max_tokens,
            min_tokens: u32::try_from(MIN_USEFUL_CHUNK_TOKENS.min(u64::from(max_tokens) / 4))
                .unwrap_or(0),
        }
    }
}
