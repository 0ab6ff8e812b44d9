//! Tool-output masking: the LLM-free first step before any summary. Old tool results in the
//! model's view become one-line stubs (tool, clipped arguments, size, ok or error, and the id
//! `lcm_expand` takes to bring the output back); a single huge message becomes a head-and-tail
//! excerpt plus its stub line. Stored messages never change: a stub is a property of the
//! message's context item, and the recall tools read the stored message.
//!
//! This module owns the rules, as pure functions:
//! - [`stub`]: what a stub and an excerpt look like, byte for byte, and what the summarizer is
//!   shown of a stubbed output;
//! - [`select`]: which items of the newest part of the context may be stubbed (never the
//!   current turn nor the turn before it), which are huge, and what a batch would save;
//! - [`workset`]: which old outputs the agent still uses (reads of files it touched lately),
//!   kept whole while there is room, from what [`touch`] says each tool call did to files;
//! - [`trigger`]: whether a batch is worth the prompt-cache break it causes (budget pressure
//!   always wins), returned with its reason and every input, like the leaf trigger;
//! - [`config`]: the user's keys.
//!
//! It must not read the store, a clock or the host's messages beyond what it is given: the
//! engine (`engine/masking`) reads the items, applies a batch in one transaction and records it.

pub mod config;
mod scan_item;
pub mod select;
pub mod stub;
pub mod touch;
pub mod trigger;
pub mod workset;

pub use config::MaskingConfig;
pub use scan_item::ScanItem;
pub use select::{plan, plan_with, Candidate, Change, Plan, PlanRules};
pub use stub::{
    excerpt_tokens, excerpt_variant, render_excerpt, render_line, stub_line_of, summarizer_text,
    Original, Rendered, ToolCall, STUB_LINE_VARIANT,
};
pub use touch::{touches, Touch};
pub use trigger::{decide, MaskDecision, MaskInput, MaskReason};
pub use workset::{WorkingSetCounts, WorkingSetRules};
