//! # lossless-wasm
//!
//! Lossless context management for AI agents. Every message an agent sees is stored for good in
//! SQLite; the model is shown a view of the conversation that fits its token budget. The crate
//! compiles to WebAssembly and runs inside OpenClaw (Node) and in browser pages, behind a thin JS
//! shim (`js-shim/`) that owns all host I/O.
//!
//! What it is not: an LLM client, a file-system layer or a transport. The core never reads a
//! clock or a random source; time and fresh ids are inputs, so every decision replays in a test.
//!
//! Layers, one direction of dependency:
//! - [`core`]: pure logic — message parsing, token estimates, config, assembly of the view.
//! - [`store`]: schema, migrations and every query, written once over the [`store::Sql`] trait.
//! - [`engine`]: the lifecycle the host drives (bootstrap, ingest, commitTurn, assemble, compact).
//! - `wasm` (wasm32 only): the `#[wasm_bindgen]` surface, conversions and nothing else.
//!
//! The two types that matter most are [`engine::Engine`], which the host talks to, and
//! [`core::message::StoredMessage`], the parsed, validated form of every message we keep.

// Lints the whole crate holds to (clippy.toml and CI's `cargo clippy -- -D warnings` add
// clippy's). `unsafe` is denied everywhere but the two functions of the wasm bindings that hand
// JS a view of wasm memory, each with its SAFETY argument. An item marked `pub` is part of the
// crate's API: one that no path from the crate root reaches says `pub(crate)` (or `pub(super)`),
// and every item of the API says what it is.
#![deny(unsafe_code)]
#![deny(unreachable_pub)]
#![deny(missing_docs)]

pub mod core;
pub mod engine;
pub mod error;
pub mod store;

#[cfg(target_arch = "wasm32")]
pub mod wasm;

pub use error::{Error, Result};
