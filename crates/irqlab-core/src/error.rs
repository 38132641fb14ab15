//! The core's error type. Every error names the scenario key that caused it, so the Python
//! layer can report it in one line; none of them is raised once a run has started.

use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Error)]
pub enum Error {
    /// A key that is not part of the scenario schema.
    #[error("unknown key '{key}'{hint}")]
    UnknownKey { key: String, hint: String },

    /// A value of the wrong type (e.g. a string where a number is expected).
    #[error("{key} = {value}: expected {expected}")]
    WrongType {
        key: String,
        value: String,
        expected: String,
    },

    /// A value of the right type outside its allowed range or set.
    #[error("{key} = {value}: {allowed}")]
    OutOfRange {
        key: String,
        value: String,
        allowed: String,
    },

    /// Values that are valid alone but not together.
    #[error("{key} = {value}: {reason}")]
    Inconsistent {
        key: String,
        value: String,
        reason: String,
    },
}

impl Error {
    /// The dotted scenario key the error is about.
    pub fn key(&self) -> &str {
        match self {
            Error::UnknownKey { key, .. }
            | Error::WrongType { key, .. }
            | Error::OutOfRange { key, .. }
            | Error::Inconsistent { key, .. } => key,
        }
    }
}
