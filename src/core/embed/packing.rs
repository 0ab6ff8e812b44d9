//! How a vector is stored: four bits a component, two components a byte, half the bytes of the
//! embedder's `i8` components.
//!
//! Each component is divided by a step of [`CLIP`] times the vector's largest component over
//! seven, rounded and clamped to `-7..=7`: the few components beyond half the largest saturate,
//! and the many small ones, which carry most of a text's meaning, keep their resolution. No
//! scale is stored: a stored vector is only ever compared by direction (its levels times
//! [`inverse_length`] are its unit vector). Measured with
//! `benches/recall_eval` (docs/recall-evaluation.md): evidence recall 88.7 % with one byte a
//! component, 90.7 % with these four bits (clip 0.4-0.6 gave 90.0-91.0 %), because clipping also
//! tempers the components that dominate a static embedder's vectors.
//!
//! Byte `i` holds component `2i` in its low nibble and `2i + 1` in its high one, each as its
//! level plus 8 (so `8` is zero); an odd last component leaves a zero high nibble. The
//! arithmetic is integer and IEEE `f64` in a fixed order: the same bytes on every target.

/// The name of this format, recorded with the vector space (`store::vectors`): vectors stored
/// in another format are made again, never misread.
pub const FORMAT: &str = "q4";
/// Components beyond this share of the largest one saturate.
const CLIP: f64 = 0.5;
/// The largest level: four bits, signed, symmetric.
const LEVELS: i32 = 7;

/// `vector` in the stored format: `(len + 1) / 2` bytes.
pub fn pack(vector: &[i8]) -> Vec<u8> {
    let largest = vector
        .iter()
        .map(|c| i32::from(*c).abs())
        .max()
        .unwrap_or(0)
        .max(1);
    let step = f64::from(largest) * CLIP / f64::from(LEVELS);
    let level = |c: i8| -> u8 {
        let l = (f64::from(c) / step).round() as i32;
        (l.clamp(-LEVELS, LEVELS) + 8) as u8
    };
    vector
        .chunks(2)
        .map(|pair| level(pair[0]) | (pair.get(1).map_or(8, |c| level(*c)) << 4))
        .collect()
}

/// A stored vector of `dim` components back as a unit vector times 127 (the zero vector when
/// every level is zero). `None` when `bytes` is not the size `dim` packs to. The engine compares
/// packed vectors as they are; tests compare with this.
#[cfg(test)]
pub(crate) fn unpack(bytes: &[u8], dim: usize) -> Option<Vec<i8>> {
    if bytes.len() != dim.div_ceil(2) {
        return None;
    }
    let levels: Vec<i32> = levels(bytes, dim).collect();
    let norm = f64::from(levels.iter().map(|l| l * l).sum::<i32>()).sqrt();
    if norm == 0.0 {
        return Some(vec![0; dim]);
    }
    Some(
        levels
            .iter()
            .map(|l| (f64::from(*l) / norm * 127.0).round() as i8)
            .collect(),
    )
}

/// The levels of a packed vector, in order (`dim` of them).
fn levels(bytes: &[u8], dim: usize) -> impl Iterator<Item = i32> + '_ {
    bytes
        .iter()
        .flat_map(|b| [i32::from(b & 15) - 8, i32::from(b >> 4) - 8])
        .take(dim)
}

/// One over the length of a packed vector's levels (0 for the zero vector): the factor that
/// makes its [`PackedScorer::dot`] a dot product with its unit vector.
pub fn inverse_length(bytes: &[u8]) -> f32 {
    let squares: i32 = levels(bytes, bytes.len() * 2).map(|l| l * l).sum();
    if squares == 0 {
        0.0
    } else {
        (1.0 / f64::from(squares).sqrt()) as f32
    }
}

/// The cosine similarity of a query (the embedder's `i8` unit vector times 127) and a packed
/// vector (its levels' direction) whose [`inverse_length`] is `inverse_length`, without
/// unpacking it.
pub fn cosine(query: &[i8], bytes: &[u8], inverse_length: f32) -> f32 {
    let dot: i32 = query
        .iter()
        .zip(levels(bytes, query.len()))
        .map(|(q, l)| i32::from(*q) * l)
        .sum();
    (f64::from(dot) * f64::from(inverse_length) / 127.0) as f32
}

/// Adds a packed vector's unit components to `sums` (one per component); `inverse_length` is
/// its [`inverse_length`].
pub fn add_unit(bytes: &[u8], inverse_length: f32, sums: &mut [f64]) {
    let factor = f64::from(inverse_length);
    let dim = sums.len();
    for (total, level) in sums.iter_mut().zip(levels(bytes, dim)) {
        *total += f64::from(level) * factor;
    }
}

/// Dot products of one query with many packed vectors, by table lookup instead of
/// multiplication: for each byte position, the query's part of the product for each of the 256
/// byte values, so a vector of `dim` components costs `dim / 2` lookups and additions (the
/// asymmetric distance computation of product quantization). Exact up to `f32` rounding, in a
/// fixed order on every target.
pub struct PackedScorer {
    table: Vec<f32>,
}

impl PackedScorer {
    /// A scorer for `query` (any scale; `dim` components).
    pub fn new(query: &[f64]) -> PackedScorer {
        let positions = query.len().div_ceil(2);
        let mut table = Vec::with_capacity(positions * 256);
        for pair in query.chunks(2) {
            let (low, high) = (pair[0], pair.get(1).copied().unwrap_or(0.0));
            for byte in 0..=255u8 {
                let l = f64::from(i32::from(byte & 15) - 8);
                let h = f64::from(i32::from(byte >> 4) - 8);
                table.push((low * l + high * h) as f32);
            }
        }
        PackedScorer { table }
    }

    /// The query's dot product with the packed vector's levels (times [`inverse_length`], with
    /// its unit vector). A vector longer than the query is read as far as the query goes.
    pub fn dot(&self, bytes: &[u8]) -> f32 {
        let positions = bytes.len().min(self.table.len() / 256);
        let bytes = &bytes[..positions];
        // Four positions a step, each into its own accumulator; a row block of 4 x 256 entries
        // as an array, so that no lookup needs a bounds check (a byte is below 256).
        let (mut a, mut b, mut c, mut d) = (0f32, 0f32, 0f32, 0f32);
        let quads = positions / 4;
        for q in 0..quads {
            let block: &[f32; 1024] = self.table[q * 1024..(q + 1) * 1024]
                .try_into()
                .expect("a block is 1024 entries");
            let quad: &[u8; 4] = bytes[q * 4..q * 4 + 4]
                .try_into()
                .expect("a quad is 4 bytes");
            a += block[usize::from(quad[0])];
            b += block[256 + usize::from(quad[1])];
            c += block[512 + usize::from(quad[2])];
            d += block[768 + usize::from(quad[3])];
        }
        for (p, byte) in bytes.iter().enumerate().skip(quads * 4) {
            a += self.table[p * 256 + usize::from(*byte)];
        }
        (a + b) + (c + d)
    }

    /// [`PackedScorer::dot`] of each vector of `data` (vectors of `width` bytes side by side),
    /// into `out` (cleared first): one tight loop for a whole conversation's vectors.
    pub fn dots(&self, data: &[u8], width: usize, out: &mut Vec<f32>) {
        out.clear();
        if width == 0 {
            return;
        }
        out.extend(data.chunks_exact(width).map(|v| self.dot(v)));
    }
}

#[cfg(test)]
mod tests {
    use super::{add_unit, cosine, inverse_length, pack, unpack, PackedScorer};
    use crate::core::embed::{default_embedder, similarity, Embedder};

    #[test]
    fn a_vector_packs_to_half_its_bytes_and_keeps_its_direction() {
        let e = default_embedder();
        for text in [
            "why did we drop the retry wrapper?",
            "The deploy failed because the certificate expired.",
            "東京への飛行機は高かった 🙂",
        ] {
            let v = e.embed(text);
            let packed = pack(&v);
            assert_eq!(packed.len(), v.len() / 2);
            let back = unpack(&packed, v.len()).expect("its own size");
            assert_eq!(back.len(), v.len());
            let close = similarity(&v, &back);
            assert!(close > 0.85, "{text:?}: {close}");
            // Against the unpacked vector's own length (unpacking rounds to i8, which is not
            // exactly unit length), the same cosine.
            let dot: f64 = v
                .iter()
                .zip(&back)
                .map(|(a, b)| f64::from(*a) * f64::from(*b))
                .sum();
            let back_length: f64 = back
                .iter()
                .map(|b| f64::from(*b).powi(2))
                .sum::<f64>()
                .sqrt();
            let exact = dot / (127.0 * back_length);
            assert!(
                (f64::from(cosine(&v, &packed, inverse_length(&packed))) - exact).abs() < 0.01,
                "{text:?}"
            );
            let length = similarity(&back, &back);
            assert!(
                (length - 1.0).abs() < 0.06,
                "{text:?}: squared length {length}"
            );
        }
    }

    #[test]
    fn levels_sit_in_nibbles_low_first_and_large_components_saturate() {
        // Largest 100: the step is 100 * 0.5 / 7; 100 and 50 saturate at 7, -8 is level -1.
        assert_eq!(pack(&[100, 50, -8, 0]), vec![0xff, 0x87]);
        assert_eq!(
            pack(&[-100]),
            vec![0x81],
            "an odd last component: zero high nibble"
        );
        assert_eq!(unpack(&[0x88, 0x88], 4), Some(vec![0; 4]));
        assert_eq!(pack(&[0, 0, 0]), vec![0x88, 0x88]);
    }

    #[test]
    fn a_stored_vector_of_the_wrong_size_is_refused() {
        assert_eq!(unpack(&[0x88; 3], 4), None);
        assert_eq!(unpack(&[0x88; 128], 256).map(|v| v.len()), Some(256));
        assert_eq!(unpack(&[0x88; 2], 3).map(|v| v.len()), Some(3));
    }

    #[test]
    fn the_scorer_gives_the_dot_product_with_the_stored_unit_vector() {
        let e = default_embedder();
        let stored = pack(&e.embed("The deploy failed because the certificate expired."));
        let query = e.embed("why did the release break?");
        let as_f64: Vec<f64> = query.iter().map(|c| f64::from(*c) / 127.0).collect();
        let scored = PackedScorer::new(&as_f64).dot(&stored) * inverse_length(&stored);
        let unit = unpack(&stored, query.len()).expect("its size");
        let expected = similarity(&query, &unit);
        assert!((scored - expected).abs() < 0.02, "{scored} vs {expected}");
        let mut sums = vec![0.0; query.len()];
        add_unit(&stored, inverse_length(&stored), &mut sums);
        let length: f64 = sums.iter().map(|x| x * x).sum::<f64>().sqrt();
        assert!(
            (length - 1.0).abs() < 1e-6,
            "a unit vector adds length 1: {length}"
        );
        assert_eq!(inverse_length(&[0x88, 0x88]), 0.0);
        // An odd dimension: levels 5, 7, 7 (step 30 * 0.5 / 7); the last byte's high nibble
        // is no component.
        let odd = PackedScorer::new(&[1.0, 2.0, 3.0]);
        assert_eq!(
            odd.dot(&pack(&[10, 20, 30])),
            1.0 * 5.0 + 2.0 * 7.0 + 3.0 * 7.0
        );
        // Sizes that do not match read what both have, never past either.
        assert_eq!(odd.dot(&[0x89; 9]), 1.0 + 3.0);
        assert_eq!(odd.dot(&[]), 0.0);
        let wide = PackedScorer::new(&[1.0; 10]);
        assert_eq!(wide.dot(&[0x99; 5]), 10.0);
        assert_eq!(wide.dot(&[0x99; 4]), 8.0);
        assert_eq!(wide.dot(&[0x99; 7]), 10.0);
        let mut out = vec![1.0];
        wide.dots(&[0x99; 10], 5, &mut out);
        assert_eq!(out, vec![10.0, 10.0]);
        wide.dots(&[0x99; 10], 0, &mut out);
        assert!(out.is_empty());
    }
}
