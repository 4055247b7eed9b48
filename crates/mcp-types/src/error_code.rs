//! JSON-RPC and MCP error codes (<https://modelcontextprotocol.io/specification/2026-07-28/basic>, Error Codes).

use std::fmt;

use serde::{Deserialize, Serialize};

/// A JSON-RPC error code.
///
/// An open newtype rather than a closed enum: peers send codes this crate has never heard
/// of, and those must survive untouched.
///
/// ```
/// use mcp_types::ErrorCode;
///
/// assert_eq!(ErrorCode::METHOD_NOT_FOUND.0, -32601);
/// assert_eq!(ErrorCode(-32022).name(), Some("UnsupportedProtocolVersion"));
/// assert_eq!(ErrorCode(-1).name(), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ErrorCode(pub i32);

impl ErrorCode {
    /// -32700: the message was not valid JSON (or not UTF-8).
    pub const PARSE_ERROR: ErrorCode = ErrorCode(-32700);
    /// -32600: valid JSON, but not a valid JSON-RPC request.
    pub const INVALID_REQUEST: ErrorCode = ErrorCode(-32600);
    /// -32601: the method does not exist or is not offered.
    pub const METHOD_NOT_FOUND: ErrorCode = ErrorCode(-32601);
    /// -32602: the params are invalid (a missing required member included).
    pub const INVALID_PARAMS: ErrorCode = ErrorCode(-32602);
    /// -32603: an internal error of the receiver.
    pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);
    /// -32020: an HTTP header disagrees with the body it mirrors (2026-07-28).
    pub const HEADER_MISMATCH: ErrorCode = ErrorCode(-32020);
    /// -32021: the request needs a client capability it did not declare (2026-07-28).
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: ErrorCode = ErrorCode(-32021);
    /// -32022: the server does not support the request's protocol version (2026-07-28).
    pub const UNSUPPORTED_PROTOCOL_VERSION: ErrorCode = ErrorCode(-32022);
    /// -32002: resource not found (the legacy revisions' code; 2026-07-28 uses -32602).
    pub const RESOURCE_NOT_FOUND: ErrorCode = ErrorCode(-32002);
    /// -32042: URL elicitation required (2025-11-25).
    pub const URL_ELICITATION_REQUIRED: ErrorCode = ErrorCode(-32042);

    /// The spec's name for a code this crate knows, such as `"MethodNotFound"`.
    pub const fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            -32700 => "ParseError",
            -32600 => "InvalidRequest",
            -32601 => "MethodNotFound",
            -32602 => "InvalidParams",
            -32603 => "InternalError",
            -32020 => "HeaderMismatch",
            -32021 => "MissingRequiredClientCapability",
            -32022 => "UnsupportedProtocolVersion",
            -32002 => "ResourceNotFound",
            -32042 => "UrlElicitationRequired",
            _ => return None,
        })
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => write!(f, "{} ({name})", self.0),
            None => write!(f, "{}", self.0),
        }
    }
}

impl From<ErrorCode> for i64 {
    fn from(code: ErrorCode) -> i64 {
        i64::from(code.0)
    }
}
