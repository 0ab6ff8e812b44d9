//! Delegated recall (`lcm_ask`), the pure half: which words of a question to search for
//! ([`terms`]; for a second round, [`bridging`]), which evidence goes to the LLM under a hard token budget ([`evidence`], fused
//! from the lexical and semantic rankings: [`fusion`], [`rarity`]), the
//! request text, and how the LLM's answer is bounded before it enters the caller's context
//! ([`answer`]).
//!
//! Pure: no I/O, no clock, no search. The engine (`engine/ask.rs`) runs the searches, loads and
//! redacts the rows, and hands them here; the shell makes the one LLM call. Nothing here may
//! decide who may read what: candidates arrive already scoped to the caller's agent.

pub mod answer;
pub mod bridging;
pub mod evidence;
pub mod fusion;
pub mod rarity;
pub mod terms;
pub mod when;

/// Default and bounds of the evidence sent to the LLM, in estimated tokens.
pub const EVIDENCE_DEFAULT_TOKENS: u32 = 6_000;
/// The smallest evidence budget a caller may ask for, in estimated tokens.
pub const EVIDENCE_MIN_TOKENS: u32 = 500;
/// The largest evidence budget a caller may ask for, in estimated tokens.
pub const EVIDENCE_MAX_TOKENS: u32 = 12_000;
/// The hard cap on what the tool returns into the caller's context (answer and id list), in
/// estimated tokens: the point of the tool is that the caller pays this, not the evidence.
pub const ANSWER_CAP_TOKENS: u32 = 400;
/// What the LLM is asked to write at most; below the cap, so an obedient answer is never cut.
pub const ANSWER_REQUEST_TOKENS: u32 = 300;
/// Longest question accepted, in characters.
pub const MAX_QUESTION_CHARS: usize = 2_000;
/// The marker that opens every request, so a log (or a test's mock) can tell it from a turn.
pub const ASK_MARKER: &str = "[lossless-wasm:ask]";
