//! The crate's one error type. Every failure a user can cause (bad message, bad config, a broken
//! database) becomes an [`Error`] whose message names what is wrong; nothing input-derived panics,
//! because a panic in wasm kills the engine for every session. A storage failure carries a
//! [`StorageError`]: its kind (constraint, busy, corrupt, …), the backend's code and the context.

mod storage;

use std::fmt;

pub use storage::{StorageError, StorageErrorKind};

/// What went wrong, with enough context for a user to act on it.
#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// A host message or parameter is malformed. `field` is a path such as `messages[3].role`.
    InvalidInput {
        /// Where in the input the problem is, such as `messages[3].role`.
        field: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A config value is invalid. `key` is the config key as the user wrote it.
    InvalidConfig {
        /// The config key as the user wrote it.
        key: String,
        /// What is wrong with its value.
        reason: String,
    },
    /// The database refused an operation, or its contents are not what we expect.
    Storage(StorageError),
    /// A plan no longer matches the data it was made for (another writer got there first);
    /// nothing was written.
    Stale(String),
}

/// Shorthand used throughout the crate.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// An [`Error::InvalidInput`] for `field`, saying why it is wrong.
    pub fn input(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::InvalidInput {
            field: field.into(),
            reason: reason.into(),
        }
    }

    /// An [`Error::InvalidConfig`] for `key`, saying why it is wrong.
    pub fn config(key: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::InvalidConfig {
            key: key.into(),
            reason: reason.into(),
        }
    }

    /// A storage failure of `kind` described by `detail`.
    pub fn storage(kind: StorageErrorKind, detail: impl Into<String>) -> Self {
        Error::Storage(StorageError::new(kind, detail))
    }

    /// The database answered, but what it holds is not what this build expects
    /// ([`StorageErrorKind::Data`]).
    pub fn unexpected_data(detail: impl Into<String>) -> Self {
        Self::storage(StorageErrorKind::Data, detail)
    }

    /// This error as a storage failure that happened while doing `context`: the text is
    /// `context: <this error's whole text>`, the kind and code a storage failure's own (a
    /// failure of another sort is [`StorageErrorKind::Other`]).
    pub fn within(self, context: impl Into<String>) -> Self {
        let (kind, code) = match &self {
            Error::Storage(err) => (err.kind(), err.code().map(str::to_owned)),
            _ => (StorageErrorKind::Other, None),
        };
        let failure = StorageError::new(kind, self.to_string()).with_context(context);
        Error::Storage(match code {
            Some(code) => failure.with_code(code),
            None => failure,
        })
    }

    /// The storage failure's kind, if this is one.
    pub fn storage_kind(&self) -> Option<StorageErrorKind> {
        match self {
            Error::Storage(err) => Some(err.kind()),
            _ => None,
        }
    }

    /// A stable code for the kind of this error, what a JS caller matches on (the wasm bindings
    /// put it on the `Error` they throw as `code`): `LOSSLESS_INVALID_INPUT`,
    /// `LOSSLESS_INVALID_CONFIG`, `LOSSLESS_STALE`, or `LOSSLESS_STORAGE_` and the storage kind
    /// in capitals (`LOSSLESS_STORAGE_BUSY`, `…_CONSTRAINT`, `…_CORRUPT`, `…_DIALECT`, `…_IO`,
    /// `…_DATA`, `…_OTHER`). Codes are never renamed.
    pub fn code(&self) -> String {
        match self {
            Error::InvalidInput { .. } => "LOSSLESS_INVALID_INPUT".to_owned(),
            Error::InvalidConfig { .. } => "LOSSLESS_INVALID_CONFIG".to_owned(),
            Error::Storage(err) => {
                format!(
                    "LOSSLESS_STORAGE_{}",
                    err.kind().name().to_ascii_uppercase()
                )
            }
            Error::Stale(_) => "LOSSLESS_STALE".to_owned(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidInput { field, reason } => {
                write!(f, "invalid input at `{field}`: {reason}")
            }
            Error::InvalidConfig { key, reason } => write!(f, "invalid config `{key}`: {reason}"),
            Error::Storage(err) => write!(f, "storage error: {err}"),
            Error::Stale(reason) => write!(f, "stale plan: {reason}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<StorageError> for Error {
    fn from(err: StorageError) -> Self {
        Error::Storage(err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_error_has_its_code() {
        assert_eq!(
            Error::input("messages[0]", "x").code(),
            "LOSSLESS_INVALID_INPUT"
        );
        assert_eq!(
            Error::config("freshTailCount", "x").code(),
            "LOSSLESS_INVALID_CONFIG"
        );
        assert_eq!(Error::Stale("x".into()).code(), "LOSSLESS_STALE");
        for (kind, code) in [
            (StorageErrorKind::Constraint, "LOSSLESS_STORAGE_CONSTRAINT"),
            (StorageErrorKind::Busy, "LOSSLESS_STORAGE_BUSY"),
            (StorageErrorKind::Corrupt, "LOSSLESS_STORAGE_CORRUPT"),
            (StorageErrorKind::Dialect, "LOSSLESS_STORAGE_DIALECT"),
            (StorageErrorKind::Io, "LOSSLESS_STORAGE_IO"),
            (StorageErrorKind::Data, "LOSSLESS_STORAGE_DATA"),
            (StorageErrorKind::Other, "LOSSLESS_STORAGE_OTHER"),
        ] {
            assert_eq!(Error::storage(kind, "x").code(), code);
            // A failure wrapped in the context it happened in keeps its kind, so its code.
            assert_eq!(Error::storage(kind, "x").within("reading").code(), code);
        }
    }
}
