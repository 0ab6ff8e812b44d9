//! Long text values of a batch sent as one BLOB instead of inside JSON rows.

/// Long text values of a batch packed into one BLOB: each row names its slice by 1-based byte
/// offset and length, and SQL takes it back with `CAST(substr(blob, offset, length) AS TEXT)`
/// (byte-exact: the database is UTF-8). Inside the JSON rows, every byte of a message would be
/// escaped into JSON here and parsed back out by SQLite.
#[derive(Default)]
pub struct Packed {
    /// The packed text values, back to back, as UTF-8.
    pub bytes: Vec<u8>,
}

impl Packed {
    /// Appends `text`; returns its offset (1-based, as `substr` counts) and length in bytes.
    pub fn push(&mut self, text: &str) -> (usize, usize) {
        let start = self.bytes.len() + 1;
        self.bytes.extend_from_slice(text.as_bytes());
        (start, text.len())
    }
}
