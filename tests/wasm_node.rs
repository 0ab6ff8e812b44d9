//! wasm-bindgen tests in Node: `cargo test --target wasm32-unknown-unknown` with
//! `CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner`. The node:sqlite cases
//! need a Node with node:sqlite (22.5+) first on PATH; scripts/test.sh puts the host's Node 26 there.
#![cfg(target_arch = "wasm32")]

mod embed_cases;
mod node_sqlite_cases;
mod store_cases;
mod wasm_cases;
