//! Text embeddings for semantic recall: the seam between whatever turns text into a vector and
//! the stores and retrieval that use the vectors.
//!
//! Vectors are unit length, quantized to `i8` (each component times 127, rounded), so that they
//! are stored compactly and compared with integer dot products on every backend alike. An
//! embedder's [`Embedder::name`] and [`Embedder::dim`] are recorded with the vectors it made: a
//! store whose vectors came from another embedder re-embeds instead of mixing two spaces.

pub mod packing;
pub mod static_table;
pub mod wordpiece;

pub use static_table::{default_embedder, StaticEmbedder};

/// Turns text into a unit-length vector quantized to `i8`.
///
/// Must be deterministic: the same text gives the same vector on every backend (native, wasm in
/// Node, wasm in a browser), and any `&str` (empty, huge, any script) gives a vector of
/// [`Embedder::dim`] components without panicking.
pub trait Embedder {
    /// A stable name for the vector space, recorded with stored vectors (for example
    /// `"minilm-static-v1"`); a different name means vectors are not comparable.
    fn name(&self) -> &str;
    /// The number of components of every vector this embedder makes.
    fn dim(&self) -> usize;
    /// The text's vector: `dim()` components, unit length times 127, rounded.
    fn embed(&self, text: &str) -> Vec<i8>;
}

/// Cosine similarity of two quantized unit vectors, in `[-1, 1]` (up to rounding); vectors of
/// different lengths compare as 0.
pub fn similarity(a: &[i8], b: &[i8]) -> f32 {
    if a.len() != b.len() || a.is_empty() {
        return 0.0;
    }
    let dot: i32 = a
        .iter()
        .zip(b)
        .map(|(x, y)| i32::from(*x) * i32::from(*y))
        .sum();
    dot as f32 / (127.0 * 127.0)
}

#[cfg(test)]
mod tests {
    use super::similarity;

    #[test]
    fn a_unit_vector_is_similar_to_itself_and_opposite_to_its_negation() {
        let v: Vec<i8> = vec![127, 0, 0];
        let w: Vec<i8> = vec![-127, 0, 0];
        assert!((similarity(&v, &v) - 1.0).abs() < 1e-6);
        assert!((similarity(&v, &w) + 1.0).abs() < 1e-6);
        assert_eq!(similarity(&v, &[1, 2]), 0.0);
    }
}
