//! The embedder's cross-backend case (`embed_cases`) natively; `wasm_node.rs` and
//! `wasm_browser.rs` run the same case in wasm.

#[path = "../embed_cases/mod.rs"]
mod embed_cases;
