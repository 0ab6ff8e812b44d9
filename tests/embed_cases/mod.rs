//! The default embedder gives the same bytes everywhere: natively (`embed_native.rs`), in wasm
//! under Node (`wasm_node.rs`) and in headless Chromium (`wasm_browser.rs`). Each case hashes the
//! vectors of a fixed set of texts and compares the hash with one constant, so a backend whose
//! arithmetic or tokenization differed in a single component fails.

use lossless_wasm::core::embed::{default_embedder, Embedder};

/// Texts covering the tokenizer's paths: ASCII, punctuation, accents, CJK, emoji, other scripts,
/// control characters, empty, and a text long enough to be sampled in windows.
pub fn fixture_texts() -> Vec<String> {
    let mut texts: Vec<String> = [
        "why did we drop the retry wrapper?",
        "removed the backoff loop, it hid the timeouts",
        "Ärger über die Café-Rechnung: 12,50 €",
        "東京への飛行機は高かった 🙂",
        "Привет, как дела? مرحبا كيف حالك",
        "fn main() { println!(\"{}\", x[0] >> 2); } // TODO",
        "",
        "\u{0}\u{7}\u{200b}\u{feff} \t\n",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    texts.push(
        (0..9_000)
            .map(|i| format!("line {i} of the build log: step {} ok", i % 37))
            .collect::<Vec<_>>()
            .join("\n"),
    );
    texts
}

/// FNV-1a 64 over every vector's bytes, in order, each vector preceded by its length.
pub fn fixture_digest() -> String {
    let embedder = default_embedder();
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |byte: u8| {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    };
    for text in fixture_texts() {
        let vector = embedder.embed(&text);
        assert_eq!(
            vector.len(),
            embedder.dim(),
            "a vector has dim() components"
        );
        for byte in (vector.len() as u32).to_le_bytes() {
            eat(byte);
        }
        for component in vector {
            eat(component as u8);
        }
    }
    format!("{hash:016x}")
}

/// The digest the native build computes; every backend must compute the same.
pub const EXPECTED_DIGEST: &str = "34b14e7177493f04";

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn the_default_embedder_gives_the_same_bytes_on_every_backend() {
    let embedder = default_embedder();
    assert_eq!(embedder.name(), "minilm-static-v1");
    let first = embedder.embed("why did we drop the retry wrapper?");
    assert!(
        first.iter().any(|c| *c != 0),
        "a sentence has a non-zero vector"
    );
    assert_eq!(fixture_digest(), EXPECTED_DIGEST);
}
