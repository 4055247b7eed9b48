//! The engine's error: why an outbound request or notification did not get its answer.

use std::time::Duration;

use crate::message::ErrorObject;

/// Why a request to the peer failed.
///
/// A JSON-RPC error the peer sent back is [`Error::Remote`]: protocol errors are data the
/// caller can match on ([`Error::remote`]). Every other variant is this side's view of the
/// connection: it timed out, it closed, or the message could not be encoded or decoded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The peer answered with a JSON-RPC error.
    #[error("the peer answered with error {0}")]
    Remote(ErrorObject),
    /// No response arrived in time; the peer was told to cancel.
    #[error("no response to `{method}` within {after:?}")]
    Timeout {
        /// The request's method.
        method: String,
        /// How long the request waited.
        after: Duration,
    },
    /// The connection closed before the response arrived (the peer hung up, the process
    /// exited, a write failed, or this side shut down).
    #[error("the connection closed{}", .0.as_deref().map(|r| format!(": {r}")).unwrap_or_default())]
    Closed(Option<String>),
    /// The params could not be serialized.
    #[error("cannot encode the params of `{method}`")]
    Encode {
        /// The request's method.
        method: String,
        /// What serde_json reported.
        #[source]
        source: serde_json::Error,
    },
    /// The result did not have the expected shape.
    #[error("the result of `{method}` does not have the expected shape")]
    Decode {
        /// The request's method.
        method: String,
        /// What serde_json reported.
        #[source]
        source: serde_json::Error,
    },
    /// The frame that answered the request is not a well-formed response; what the
    /// decoder reported. Not produced by this crate any more: every frame is decoded
    /// whole, and a malformed one answers no request (kept so that matches on it hold).
    #[error("the response is malformed: {0}")]
    Malformed(String),
}

impl Error {
    /// The peer's error object, if the peer answered with one.
    pub fn remote(&self) -> Option<&ErrorObject> {
        match self {
            Error::Remote(e) => Some(e),
            _ => None,
        }
    }

    /// Whether the request timed out.
    pub fn is_timeout(&self) -> bool {
        matches!(self, Error::Timeout { .. })
    }

    /// Whether the connection closed before an answer arrived.
    pub fn is_closed(&self) -> bool {
        matches!(self, Error::Closed(_))
    }
}

// The errors are `Send + Sync + 'static`, checked as the crate compiles.
const _: () = {
    const fn assert_bounds<T: Send + Sync + 'static + std::error::Error>() {}
    assert_bounds::<Error>();
    assert_bounds::<crate::TransportError>();
    assert_bounds::<crate::DecodeError>();
};
