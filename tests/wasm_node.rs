//! wasm-bindgen tests in Node: `cargo test --target wasm32-unknown-unknown` with
//! `CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner`.
#![cfg(target_arch = "wasm32")]

mod wasm_cases;
