//! The crate's one error type. Every failure a user can cause (bad message, bad config, a broken
//! database) becomes an [`Error`] whose message names what is wrong; nothing input-derived panics,
//! because a panic in wasm kills the engine for every session.

use std::fmt;

/// What went wrong, with enough context for a user to act on it.
#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// A host message or parameter is malformed. `field` is a path such as `messages[3].role`.
    InvalidInput { field: String, reason: String },
    /// A config value is invalid. `key` is the config key as the user wrote it.
    InvalidConfig { key: String, reason: String },
    /// The database refused an operation, or its contents are not what we expect.
    Storage(String),
    /// A plan no longer matches the data it was made for (another writer got there first);
    /// nothing was written.
    Stale(String),
}

/// Shorthand used throughout the crate.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn input(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::InvalidInput {
            field: field.into(),
            reason: reason.into(),
        }
    }

    pub fn config(key: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::InvalidConfig {
            key: key.into(),
            reason: reason.into(),
        }
    }

    pub fn storage(reason: impl Into<String>) -> Self {
        Error::Storage(reason.into())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidInput { field, reason } => {
                write!(f, "invalid input at `{field}`: {reason}")
            }
            Error::InvalidConfig { key, reason } => write!(f, "invalid config `{key}`: {reason}"),
            Error::Storage(reason) => write!(f, "storage error: {reason}"),
            Error::Stale(reason) => write!(f, "stale plan: {reason}"),
        }
    }
}

impl std::error::Error for Error {}
