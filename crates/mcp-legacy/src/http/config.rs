//! The limits and choices of the legacy side of [`DualEraHttp`](super::DualEraHttp).

use std::time::Duration;

use super::store::SessionStore;
use crate::session::LEGACY_VERSIONS;

/// The limits and choices of the legacy side of [`DualEraHttp`](super::DualEraHttp); the modern side and the
/// connection limits come from [`HttpServerConfig`](mcp_transport_http::HttpServerConfig).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct LegacyHttpConfig {
    /// The legacy revisions served, newest first (default: all of [`LEGACY_VERSIONS`]).
    /// With none, `initialize` is refused with the versions the server supports.
    pub versions: Vec<&'static str>,
    /// The most legacy sessions at once, all clients together (default 1024). At the cap a
    /// new session takes the place of the least recently used idle one (sessions never
    /// completed first); `initialize` gets `503` only when every session is busy.
    pub max_sessions: usize,
    /// The most legacy sessions one authenticated principal holds at once (default 64),
    /// with the same eviction as [`max_sessions`](Self::max_sessions) among its own.
    pub max_sessions_per_principal: usize,
    /// The most legacy sessions the unauthenticated clients of one address hold at once
    /// (default 64), with the same eviction among that address's own: one client cannot
    /// fill the table. An IPv6 address counts by its /64 prefix (one host is commonly
    /// given a whole /64), an IPv4-mapped one as its IPv4 address, and requests whose
    /// address is unknown (an endpoint called without one) as one address together.
    pub max_sessions_per_address: usize,
    /// A session whose `initialize` is not followed by `notifications/initialized` or any
    /// later request within this time ends (default 30 seconds): sessions opened and
    /// never used do not hold places until [`session_idle_timeout`](Self::session_idle_timeout).
    pub session_grace: Duration,
    /// A session without a request, an open stream or a running request for this long
    /// ends (default 30 minutes).
    pub session_idle_timeout: Duration,
    /// The most messages in one 2025-03-26 batch (default 32).
    pub max_batch: usize,
    /// The most request streams a session keeps at once (default 64), and the most
    /// requests an HTTP+SSE session runs at once; past it a POST with requests gets
    /// `503`.
    pub max_streams_per_session: usize,
    /// The most server-to-client requests waiting for answers in one session (default
    /// 32).
    pub max_pending_requests: usize,
    /// How long a server-to-client request waits for its answer (default 5 minutes).
    pub ask_timeout: Duration,
    /// The reconnection delay announced in the priming event's `retry` field of
    /// 2025-11-25 sessions (default 1 second; `None` sends no `retry`).
    pub retry: Option<Duration>,
    /// For 2025-11-25 sessions, close an SSE connection this long after it opened
    /// without ending its stream: the client polls, resuming with `Last-Event-ID` after
    /// the `retry` delay (<https://modelcontextprotocol.io/specification/2025-11-25/basic/transports>, Sending Messages to the
    /// Server, 6). Default `None`: connections stay open until the stream ends.
    pub close_streams_after: Option<Duration>,
    /// Where the Streamable HTTP sessions live (default: [`SessionStore::memory`], in this
    /// instance). With a shared store (`SessionStore::redis`, feature `session-redis`) the
    /// instances of a fleet serve each other's sessions; see [`store`](super::store).
    pub session_store: SessionStore,
    /// The path of the 2024-11-05 HTTP+SSE transport's GET stream (default `/sse`;
    /// `None` turns the transport off). Feature `http-sse`.
    #[cfg(feature = "http-sse")]
    pub sse_path: Option<String>,
    /// The path the `endpoint` event of the HTTP+SSE transport names for POSTs (default
    /// `/messages`). Feature `http-sse`.
    #[cfg(feature = "http-sse")]
    pub messages_path: String,
}

impl Default for LegacyHttpConfig {
    fn default() -> Self {
        LegacyHttpConfig {
            versions: LEGACY_VERSIONS.to_vec(),
            max_sessions: 1024,
            max_sessions_per_principal: 64,
            max_sessions_per_address: 64,
            session_grace: Duration::from_secs(30),
            session_idle_timeout: Duration::from_mins(30),
            max_batch: 32,
            max_streams_per_session: 64,
            max_pending_requests: 32,
            ask_timeout: Duration::from_mins(5),
            retry: Some(Duration::from_secs(1)),
            close_streams_after: None,
            session_store: SessionStore::memory(),
            #[cfg(feature = "http-sse")]
            sse_path: Some("/sse".to_owned()),
            #[cfg(feature = "http-sse")]
            messages_path: "/messages".to_owned(),
        }
    }
}

impl LegacyHttpConfig {
    /// Serves only `versions` (each one of [`LEGACY_VERSIONS`]; others are ignored).
    #[must_use]
    pub fn versions(mut self, versions: &[&str]) -> Self {
        self.versions = crate::session::legacy_versions(versions);
        self
    }

    /// Sets [`max_sessions`](Self::max_sessions).
    #[must_use]
    pub fn max_sessions(mut self, sessions: usize) -> Self {
        self.max_sessions = sessions;
        self
    }

    /// Sets [`max_sessions_per_principal`](Self::max_sessions_per_principal).
    #[must_use]
    pub fn max_sessions_per_principal(mut self, sessions: usize) -> Self {
        self.max_sessions_per_principal = sessions;
        self
    }

    /// Sets [`max_sessions_per_address`](Self::max_sessions_per_address).
    #[must_use]
    pub fn max_sessions_per_address(mut self, sessions: usize) -> Self {
        self.max_sessions_per_address = sessions;
        self
    }

    /// Sets [`session_grace`](Self::session_grace).
    #[must_use]
    pub fn session_grace(mut self, grace: Duration) -> Self {
        self.session_grace = grace;
        self
    }

    /// Sets [`max_streams_per_session`](Self::max_streams_per_session).
    #[must_use]
    pub fn max_streams_per_session(mut self, streams: usize) -> Self {
        self.max_streams_per_session = streams;
        self
    }

    /// Sets [`session_idle_timeout`](Self::session_idle_timeout).
    #[must_use]
    pub fn session_idle_timeout(mut self, timeout: Duration) -> Self {
        self.session_idle_timeout = timeout;
        self
    }

    /// Sets [`max_batch`](Self::max_batch).
    #[must_use]
    pub fn max_batch(mut self, messages: usize) -> Self {
        self.max_batch = messages;
        self
    }

    /// Sets [`ask_timeout`](Self::ask_timeout).
    #[must_use]
    pub fn ask_timeout(mut self, timeout: Duration) -> Self {
        self.ask_timeout = timeout;
        self
    }

    /// Sets [`retry`](Self::retry).
    #[must_use]
    pub fn retry(mut self, retry: Option<Duration>) -> Self {
        self.retry = retry;
        self
    }

    /// Sets [`session_store`](Self::session_store).
    #[must_use]
    pub fn session_store(mut self, store: SessionStore) -> Self {
        self.session_store = store;
        self
    }

    /// Sets [`close_streams_after`](Self::close_streams_after).
    #[must_use]
    pub fn close_streams_after(mut self, after: Option<Duration>) -> Self {
        self.close_streams_after = after;
        self
    }
}
