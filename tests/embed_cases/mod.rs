//! The default embedder gives the same bytes everywhere: natively (`embed_native.rs`), in wasm
//! under Node (`wasm_node.rs`) and in headless Chromium (`wasm_browser.rs`). Each case hashes the
//! vectors of a fixed set of texts and compares the hash with one constant, so a backend whose
//! arithmetic or tokenization differed in a single component fails. The same holds for what the
//! store keeps of them (`core::embed::packing`) and for how a query scores a stored vector.

use lossless_wasm::core::embed::packing::{cosine, inverse_length, pack, PackedScorer};
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

/// FNV-1a 64 over `bytes`.
fn fnv1a(bytes: impl IntoIterator<Item = u8>) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in bytes {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// FNV-1a 64 over what a store keeps of every fixture text's vector (packed), then, for each, the
/// `f32` bits of the first text's scores against it: by table lookup with a query less a fixed
/// offset (the ranking's arithmetic), and by plain cosine.
pub fn stored_digest() -> String {
    let embedder = default_embedder();
    let vectors: Vec<Vec<i8>> = fixture_texts().iter().map(|t| embedder.embed(t)).collect();
    let query = &vectors[0];
    let centred: Vec<f64> = query
        .iter()
        .enumerate()
        .map(|(i, q)| f64::from(*q) / 127.0 - (i % 7) as f64 / 100.0)
        .collect();
    let scorer = PackedScorer::new(&centred);
    let mut bytes = Vec::new();
    for vector in &vectors {
        let packed = pack(vector);
        bytes.extend_from_slice(&packed);
        bytes.extend_from_slice(&scorer.dot(&packed).to_bits().to_le_bytes());
        let length = inverse_length(&packed);
        bytes.extend_from_slice(&cosine(query, &packed, length).to_bits().to_le_bytes());
    }
    fnv1a(bytes)
}

/// FNV-1a 64 over every vector's bytes, in order, each vector preceded by its length.
pub fn fixture_digest() -> String {
    let embedder = default_embedder();
    let mut bytes = Vec::new();
    let mut eat = |byte: u8| bytes.push(byte);
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
    fnv1a(bytes)
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

/// The stored-form digest the native build computes; every backend must compute the same.
pub const EXPECTED_STORED_DIGEST: &str = "4adc8310755ebe06";

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn what_the_store_keeps_and_how_it_scores_are_the_same_on_every_backend() {
    assert_eq!(stored_digest(), EXPECTED_STORED_DIGEST);
}
