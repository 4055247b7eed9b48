//! The crate's one error type.

use crate::LEGACY_VERSIONS;

/// What can go wrong in this crate: setting up a dual-era server ([`Bind`](Self::Bind),
/// `Http`), or connecting to a server of either era with `client::Connector` (the other
/// variants).
///
/// `Http` and `Spawn` carry the transport crate's own error, typed, so they exist only
/// with the features (`http`; `client` and `stdio`) that bring that crate in.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The listening address could not be bound.
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
    /// The shared session store (Redis, feature `session-redis`) could not be connected to.
    #[cfg(feature = "session-redis")]
    #[error("cannot use the session store (Redis): {0}")]
    SessionStore(Box<dyn std::error::Error + Send + Sync>),
    /// The server process could not be started.
    #[cfg(all(feature = "client", feature = "stdio"))]
    #[error("cannot start the server")]
    Spawn(#[source] mcp_transport_stdio::ProcessError),
    /// The probe or the `initialize` handshake failed.
    #[cfg(feature = "client")]
    #[error("the handshake with the server failed")]
    Handshake(#[source] mcp_client::Error),
    /// The server answered `initialize` with a version this client does not accept.
    #[error(
        "the server answered initialize with version {answered:?}; this client accepts {accepted:?}"
    )]
    UnsupportedVersion {
        /// What the server answered.
        answered: String,
        /// What this client accepts.
        accepted: Vec<String>,
    },
    /// The version pinned with `client::EraChoice::Version` is not one this client speaks.
    #[error(
        "cannot pin version {0:?}: this client speaks 2026-07-28 and the legacy revisions {LEGACY_VERSIONS:?}"
    )]
    UnknownVersion(String),
    /// The `initialize` result is not an `InitializeResult`.
    #[error("the initialize result is malformed")]
    Malformed(#[source] serde_json::Error),
    /// A request after the handshake failed.
    #[cfg(feature = "client")]
    #[error(transparent)]
    Client(#[from] mcp_client::Error),
}

// The error is `Send + Sync + 'static`, checked as the crate compiles.
const _: () = {
    const fn check<T: Send + Sync + 'static + std::error::Error>() {}
    check::<Error>();
};
