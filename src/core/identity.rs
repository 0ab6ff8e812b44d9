//! Content identity: a stable 128-bit fingerprint used to recognise a message (or a batch) we have
//! already stored, so host retries and replays never store anything twice. Two independent
//! FNV-1a 64-bit lanes keep it dependency-free and identical on every target. JSON is fed in a
//! canonical form (object keys sorted) so the same content hashes the same whatever key order a
//! host used.

use serde_json::Value;

const OFFSET_A: u64 = 0xcbf2_9ce4_8422_2325;
const OFFSET_B: u64 = 0x6c62_272e_07bb_0142;
const PRIME: u64 = 0x0000_0100_0000_01b3;
/// Objects with at most this many fields are sorted without allocating.
const SMALL_OBJECT: usize = 16;

/// Incremental fingerprint builder. Feed fields with [`Fingerprint::field`], which frames each
/// field by its length so `("ab","c")` and `("a","bc")` differ.
#[derive(Debug, Clone)]
pub struct Fingerprint {
    a: u64,
    b: u64,
    /// Reused for the JSON text of scalars (not part of the fingerprint).
    scratch: Vec<u8>,
}

impl Default for Fingerprint {
    fn default() -> Self {
        Fingerprint {
            a: OFFSET_A,
            b: OFFSET_B,
            scratch: Vec::new(),
        }
    }
}

impl Fingerprint {
    /// A builder with nothing fed yet.
    pub fn new() -> Self {
        Self::default()
    }

    fn bytes(&mut self, data: &[u8]) {
        for &byte in data {
            self.a = (self.a ^ u64::from(byte)).wrapping_mul(PRIME);
            self.b = (self.b ^ u64::from(byte.rotate_left(3))).wrapping_mul(PRIME);
        }
    }

    /// Adds one length-framed field.
    pub fn field(&mut self, data: &str) -> &mut Self {
        self.field_bytes(data.as_bytes())
    }

    fn field_bytes(&mut self, data: &[u8]) -> &mut Self {
        self.bytes(&(data.len() as u64).to_le_bytes());
        self.bytes(data);
        self
    }

    /// Adds a JSON value in canonical form: object keys sorted, no whitespace.
    pub fn json(&mut self, value: &Value) -> &mut Self {
        match value {
            Value::Object(map) => {
                // Sorted with their values (looking each key up again cost a hash per field); a
                // message's objects are small, so their entries are sorted on the stack.
                let mut small = [("", &Value::Null); SMALL_OBJECT];
                let mut large = Vec::new();
                let entries = if map.len() <= SMALL_OBJECT {
                    for (slot, (key, value)) in small.iter_mut().zip(map) {
                        *slot = (key.as_str(), value);
                    }
                    &mut small[..map.len()]
                } else {
                    large.extend(map.iter().map(|(key, value)| (key.as_str(), value)));
                    &mut large[..]
                };
                entries.sort_unstable_by(|x, y| x.0.cmp(y.0));
                self.field("{");
                for (key, value) in entries.iter() {
                    self.field(key);
                    self.json(value);
                }
                self.field("}")
            }
            Value::Array(items) => {
                self.field("[");
                for item in items {
                    self.json(item);
                }
                self.field("]")
            }
            scalar => {
                // The scalar's JSON text, written into a reused buffer: a fresh String per
                // scalar was a bulk import's most frequent allocation.
                let mut text = std::mem::take(&mut self.scratch);
                text.clear();
                let written = serde_json::to_writer(&mut text, scalar);
                if written.is_ok() {
                    self.field_bytes(&text);
                } else {
                    // Writing a scalar into memory does not fail; the same text as before if it did.
                    self.field(&scalar.to_string());
                }
                self.scratch = text;
                self
            }
        }
    }

    /// The fingerprint as 32 lower-case hex digits.
    pub fn hex(&self) -> String {
        format!("{:016x}{:016x}", self.a, self.b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_is_stable_and_field_framed() {
        let one = Fingerprint::new().field("ab").field("c").hex();
        let two = Fingerprint::new().field("a").field("bc").hex();
        assert_ne!(one, two);
        assert_eq!(one, Fingerprint::new().field("ab").field("c").hex());
        assert_eq!(one.len(), 32);
    }

    #[test]
    fn json_identity_ignores_key_order_but_not_values() {
        let a: Value = serde_json::from_str(r#"{"a":1,"b":[{"x":"y","z":2}]}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"b":[{"z":2,"x":"y"}],"a":1}"#).unwrap();
        let c: Value = serde_json::from_str(r#"{"b":[{"z":3,"x":"y"}],"a":1}"#).unwrap();
        assert_eq!(
            Fingerprint::new().json(&a).hex(),
            Fingerprint::new().json(&b).hex()
        );
        assert_ne!(
            Fingerprint::new().json(&a).hex(),
            Fingerprint::new().json(&c).hex()
        );
    }

    #[test]
    fn json_identity_is_unchanged_for_stored_messages() {
        // Identities are stored: the same content must hash as it always did, or a re-sent
        // history would be stored a second time. `reference` is the implementation before the
        // scalar buffer, which fed each scalar's `to_string()`.
        fn reference(fp: &mut Fingerprint, value: &Value) {
            match value {
                Value::Object(map) => {
                    let mut keys: Vec<&String> = map.keys().collect();
                    keys.sort();
                    fp.field("{");
                    for key in keys {
                        fp.field(key);
                        reference(fp, &map[key.as_str()]);
                    }
                    fp.field("}");
                }
                Value::Array(items) => {
                    fp.field("[");
                    items.iter().for_each(|item| reference(fp, item));
                    fp.field("]");
                }
                scalar => {
                    fp.field(&scalar.to_string());
                }
            }
        }
        let v: Value = serde_json::from_str(r#"{"t":"a\"b\n\u0001é\u2028","n":[1,-2,2.5,1e300,0.1,true,null,""],"o":{"z":{},"a":[]}}"#).unwrap();
        let mut old = Fingerprint::new();
        reference(&mut old, &v);
        assert_eq!(Fingerprint::new().json(&v).hex(), old.hex());
        assert_eq!(
            old.hex(),
            "81df8e6d2606beb0b3bfae05c98c2b84",
            "the reference itself must not change"
        );
        // Objects of up to SMALL_OBJECT fields are sorted on the stack, larger ones in a Vec.
        for fields in [SMALL_OBJECT, SMALL_OBJECT + 1, 40] {
            let object: serde_json::Map<String, Value> = (0..fields)
                .rev()
                .map(|i| (format!("k{i}"), Value::from(i)))
                .collect();
            let value = Value::Object(object);
            let mut old = Fingerprint::new();
            reference(&mut old, &value);
            assert_eq!(
                Fingerprint::new().json(&value).hex(),
                old.hex(),
                "{fields} fields"
            );
        }
    }
}
