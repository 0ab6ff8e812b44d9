//! The default embedder: a static token -> vector table distilled from
//! sentence-transformers/all-MiniLM-L6-v2 (`scripts/distill-embedder.py` says how; the table and
//! vocabulary are compiled in, so it runs the same natively, in Node and in a browser, with
//! nothing to download).
//!
//! A text's vector is the weighted mean of its WordPiece tokens' rows (each row a unit vector
//! quantized to `i8`, each token's weight a frequency weight so that common pieces count less),
//! normalised and quantized. The sum is exact integer arithmetic and the one normalisation is
//! IEEE `f64`, so the bytes are identical on every target. Text with no weighted token (empty,
//! whitespace, only symbols the vocabulary lacks) gets the zero vector: similar to nothing.
//!
//! Work is bounded: a text of at most [`WHOLE_TEXT_BYTES`] is embedded whole; a longer one by
//! [`SAMPLE_WINDOWS`] evenly spaced windows of [`WINDOW_BYTES`] (its start, its end and the parts
//! between); at most [`MAX_TOKENS`] tokens either way.

use super::wordpiece::Vocab;
use super::Embedder;
use std::sync::OnceLock;

/// A text up to this many bytes is embedded whole.
pub const WHOLE_TEXT_BYTES: usize = 32 * 1024;
/// A longer text is sampled in this many windows ...
pub const SAMPLE_WINDOWS: usize = 8;
/// ... of this many bytes each.
pub const WINDOW_BYTES: usize = 4 * 1024;
/// At most this many tokens of a text are embedded.
pub const MAX_TOKENS: usize = 8 * 1024;

/// The name recorded with the default embedder's vectors.
pub const DEFAULT_NAME: &str = "minilm-static-v1";

static TABLE: &[u8] = include_bytes!("minilm_static.bin");
static VOCAB: &str = include_str!("minilm_vocab.txt");

/// An embedder over a static table: `count` tokens, each a `u16` weight and a `dim`-component
/// `i8` unit row.
pub struct StaticEmbedder {
    name: &'static str,
    dim: usize,
    weights: Vec<u16>,
    rows: &'static [u8],
    vocab: Vocab,
}

/// The embedder every store uses unless configured otherwise: built once, on first use.
pub fn default_embedder() -> &'static StaticEmbedder {
    static EMBEDDER: OnceLock<StaticEmbedder> = OnceLock::new();
    EMBEDDER.get_or_init(|| {
        // The table is compiled in and `the_shipped_table_parses` checks it: this cannot fail
        // at run time unless the build embedded a different file.
        StaticEmbedder::from_parts(DEFAULT_NAME, TABLE, VOCAB)
            .unwrap_or_else(|err| panic!("the compiled-in embedding table is malformed: {err}"))
    })
}

impl StaticEmbedder {
    /// Reads a table (`LWST` format, see `scripts/distill-embedder.py`) and its vocabulary.
    pub fn from_parts(
        name: &'static str,
        table: &'static [u8],
        vocab: &'static str,
    ) -> Result<StaticEmbedder, String> {
        let u32_at = |at: usize| -> Result<usize, String> {
            let bytes = table
                .get(at..at + 4)
                .ok_or_else(|| format!("table too short for its header ({} bytes)", table.len()))?;
            Ok(u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as usize)
        };
        if table.get(..4) != Some(b"LWST".as_slice()) {
            return Err("table does not start with LWST".into());
        }
        let (version, count, dim) = (u32_at(4)?, u32_at(8)?, u32_at(12)?);
        if version != 1 || dim == 0 {
            return Err(format!(
                "table version {version} dim {dim}: expected version 1"
            ));
        }
        let weights_end = 16 + count * 2;
        if table.len() != weights_end + count * dim {
            return Err(format!(
                "table is {} bytes; {count} tokens x {dim} dims need {}",
                table.len(),
                weights_end + count * dim
            ));
        }
        let weights = table[16..weights_end]
            .chunks_exact(2)
            .map(|pair| u16::from_le_bytes([pair[0], pair[1]]))
            .collect();
        let vocab = Vocab::from_lines(vocab).ok_or("vocabulary has no [UNK] line")?;
        if vocab.len() != count {
            return Err(format!(
                "vocabulary has {} tokens, table {count}",
                vocab.len()
            ));
        }
        Ok(StaticEmbedder {
            name,
            dim,
            weights,
            rows: &table[weights_end..],
            vocab,
        })
    }

    /// The token ids the embedder reads from `text` (bounded as the module doc says).
    pub fn token_ids(&self, text: &str) -> Vec<u32> {
        let mut ids = Vec::with_capacity(text.len().min(MAX_TOKENS) / 4 + 8);
        if text.len() <= WHOLE_TEXT_BYTES {
            self.vocab.tokenize_into(text, MAX_TOKENS, &mut ids);
            return ids;
        }
        let span = text.len() - WINDOW_BYTES;
        for window in 0..SAMPLE_WINDOWS {
            let start = ceil_boundary(text, span * window / (SAMPLE_WINDOWS - 1));
            let end = floor_boundary(text, (start + WINDOW_BYTES).min(text.len()));
            self.vocab
                .tokenize_into(&text[start..end], MAX_TOKENS, &mut ids);
        }
        ids
    }

    fn row(&self, id: u32) -> &[u8] {
        let at = id as usize * self.dim;
        &self.rows[at..at + self.dim]
    }
}

impl Embedder for StaticEmbedder {
    fn name(&self) -> &str {
        self.name
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, text: &str) -> Vec<i8> {
        // Exact integer sums: i32 lanes (which vectorize) for up to CHUNK tokens, whose
        // largest possible sum 255 * 65535 * 127 fits in an i32, then carried into i64.
        const CHUNK: usize = 255;
        let mut sum = vec![0i64; self.dim];
        let mut chunk = vec![0i32; self.dim];
        let mut in_chunk = 0;
        for id in self.token_ids(text) {
            let weight = i32::from(self.weights[id as usize]);
            if weight == 0 {
                continue;
            }
            for (acc, component) in chunk.iter_mut().zip(self.row(id)) {
                *acc += weight * i32::from(*component as i8);
            }
            in_chunk += 1;
            if in_chunk == CHUNK {
                carry(&mut sum, &mut chunk);
                in_chunk = 0;
            }
        }
        carry(&mut sum, &mut chunk);
        let norm = sum
            .iter()
            .map(|x| (*x as f64) * (*x as f64))
            .sum::<f64>()
            .sqrt();
        if norm == 0.0 {
            return vec![0; self.dim];
        }
        sum.iter()
            .map(|x| ((*x as f64) / norm * 127.0).round() as i8)
            .collect()
    }
}

fn carry(sum: &mut [i64], chunk: &mut [i32]) {
    for (total, part) in sum.iter_mut().zip(chunk.iter_mut()) {
        *total += i64::from(*part);
        *part = 0;
    }
}

fn ceil_boundary(text: &str, mut at: usize) -> usize {
    while at < text.len() && !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

fn floor_boundary(text: &str, mut at: usize) -> usize {
    while at > 0 && !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::{default_embedder, StaticEmbedder, DEFAULT_NAME, TABLE, VOCAB};
    use crate::core::embed::{similarity, Embedder};

    fn norm(v: &[i8]) -> f64 {
        v.iter()
            .map(|c| f64::from(*c) * f64::from(*c))
            .sum::<f64>()
            .sqrt()
            / 127.0
    }

    fn sim(a: &str, b: &str) -> f32 {
        let e = default_embedder();
        similarity(&e.embed(a), &e.embed(b))
    }

    #[test]
    fn the_shipped_table_parses() {
        let e = StaticEmbedder::from_parts(DEFAULT_NAME, TABLE, VOCAB).expect("shipped table");
        assert_eq!(e.name(), "minilm-static-v1");
        assert_eq!(e.dim(), default_embedder().dim());
        assert!(e.dim() >= 64);
        assert!(StaticEmbedder::from_parts("x", &TABLE[..100], VOCAB).is_err());
        assert!(StaticEmbedder::from_parts("x", b"NOPE", VOCAB).is_err());
    }

    #[test]
    fn vectors_are_deterministic_unit_length_and_of_the_recorded_dimension() {
        let e = default_embedder();
        let a = e.embed("The deploy failed because the certificate expired.");
        assert_eq!(a.len(), e.dim());
        assert_eq!(
            a,
            e.embed("The deploy failed because the certificate expired.")
        );
        assert!(
            (norm(&a) - 1.0).abs() < 0.02,
            "unit length, got {}",
            norm(&a)
        );
        assert!((similarity(&a, &a) - 1.0).abs() < 0.03);
    }

    #[test]
    fn a_paraphrase_scores_above_an_unrelated_sentence() {
        let pairs = [
            (
                "why did we drop the retry wrapper?",
                "removed the backoff loop, it hid the timeouts",
                "my sister is visiting from portland next month",
            ),
            (
                "what did the doctor say about my knee?",
                "the physician told me the joint injury needs rest",
                "we switched the build cache to a new bucket",
            ),
            (
                "she adopted a puppy from the shelter",
                "they got a young dog from the animal rescue",
                "the invoice total was wrong by twelve dollars",
            ),
        ];
        for (question, paraphrase, unrelated) in pairs {
            let near = sim(question, paraphrase);
            let far = sim(question, unrelated);
            assert!(
                near > far,
                "{question:?}: paraphrase {near} <= unrelated {far}"
            );
        }
    }

    #[test]
    fn empty_and_symbol_only_text_is_the_zero_vector() {
        let e = default_embedder();
        for text in ["", "   \n\t", "\u{0}\u{200b}\u{feff}"] {
            let v = e.embed(text);
            assert_eq!(v.len(), e.dim());
            assert!(v.iter().all(|c| *c == 0), "{text:?}");
        }
    }

    #[test]
    fn huge_binary_looking_and_many_script_text_embeds_without_panicking() {
        let e = default_embedder();
        let huge = "x".repeat(1 << 20) + &"the cat sat on the mat. ".repeat(40_000);
        let binary: String = (0u32..200_000)
            .filter_map(|i| char::from_u32((i * 7919) % 0x11_0000))
            .collect();
        let scripts = [
            "hello world",
            "héllo wörld",
            "привет мир",
            "γειά σου κόσμε",
            "שלום עולם",
            "مرحبا بالعالم",
            "नमस्ते दुनिया",
            "হ্যালো বিশ্ব",
            "ਸਤਿ ਸ੍ਰੀ ਅਕਾਲ",
            "હેલો વર્લ્ડ",
            "வணக்கம் உலகம்",
            "హలో వరల్డ్",
            "ಹಲೋ ವರ್ಲ್ಡ್",
            "ഹലോ വേൾഡ്",
            "ආයුබෝවන්",
            "สวัสดีชาวโลก",
            "ສະບາຍດີ",
            "မင်္ဂလာပါ",
            "សួស្តី",
            "გამარჯობა",
            "բարեւ աշխարհ",
            "ሰላም ልዑል",
            "ᐊᐃᓐᖓᐃ",
            "안녕하세요 세계",
            "こんにちは世界",
            "你好，世界",
            "再見",
            "ᠰᠠᠶᠢᠨ",
            "བཀྲ་ཤིས་བདེ་ལེགས",
            "ދިވެހި",
            "ꯍꯦꯂꯣ",
            "ᏏᏲ",
            "ⴰⵣⵓⵍ",
            "ߊߟߎ߫",
            "𐌷𐌰𐌹𐌻𐍃",
            "ᚺᚨᛚᛚᛟ",
            "ⲭⲉⲣⲉ",
            "ܫܠܡܐ",
            "ހެލޯ",
            "ᜃᜓᜋᜓᜐ᜔ᜆ",
            "Ꭰ",
            "𓀀𓁐",
            "∑∫√∞",
            "🙂👍🏽👨‍👩‍👧",
            "ﷺ",
            "Ｆｕｌｌｗｉｄｔｈ",
            "ǅemal",
            "ﬁnance",
            "İstanbul",
            "ß straße",
        ];
        assert_eq!(scripts.len(), 50);
        for text in [huge.as_str(), binary.as_str()].into_iter().chain(scripts) {
            let v = e.embed(text);
            assert_eq!(v.len(), e.dim());
            let n = norm(&v);
            assert!(n == 0.0 || (n - 1.0).abs() < 0.02, "{n}");
        }
        assert!(e.token_ids(&huge).len() <= super::MAX_TOKENS);
        assert!(
            !e.token_ids(&huge).is_empty(),
            "the sampled windows of a huge text have tokens"
        );
    }
}
