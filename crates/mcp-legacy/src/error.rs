//! The errors of this crate.

/// What can go wrong setting up a dual-era server.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The listening address could not be bound.
    #[cfg(feature = "http")]
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: std::net::SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The modern endpoint refused its configuration, or could not start.
    #[cfg(feature = "http")]
    #[error(transparent)]
    Http(#[from] mcp_transport_http::Error),
}
