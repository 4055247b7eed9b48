//! The crate's one error type: why a server could not start or a setting was refused.
//!
//! Everything that goes wrong with a single HTTP request is answered on the wire (a status
//! and a JSON-RPC error body) and logged; it never becomes an [`Error`]. This type only
//! reports failures the caller must act on: an address that cannot be bound, or a
//! configuration value that cannot work.

use std::io;
use std::net::SocketAddr;

/// Why the server could not start, or a configuration value was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The listening socket could not be bound.
    #[error("cannot bind {addr}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// What the operating system reported.
        #[source]
        source: io::Error,
    },
    /// The bound socket could not report its address.
    #[error("cannot read the listening socket's address")]
    LocalAddr(#[source] io::Error),
    /// A configuration value cannot work (an endpoint path that does not start with `/`).
    #[error("invalid configuration: {0}")]
    Config(String),
    /// An `Mcp-Param-{Name}` name is not an HTTP field-name token (RFC 9110 §5.1).
    #[error("`{0}` is not a valid Mcp-Param header name")]
    ParamHeaderName(String),
}

impl Error {
    /// Whether the listening socket could not be bound (the address is in use, or not local).
    pub fn is_bind(&self) -> bool {
        matches!(self, Error::Bind { .. })
    }

    /// Whether a configuration value was refused.
    pub fn is_config(&self) -> bool {
        matches!(self, Error::Config(_) | Error::ParamHeaderName(_))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn error_is_send_sync_and_static() {
        fn assert_bounds<T: Send + Sync + 'static + std::error::Error>() {}
        assert_bounds::<super::Error>();
    }
}
