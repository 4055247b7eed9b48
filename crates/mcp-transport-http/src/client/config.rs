//! The client's settings: limits on what the server may send, the connect timeout, extra
//! headers for every POST, and the authorizer that supplies `Authorization`.

use std::sync::Arc;
use std::time::Duration;

use http::{HeaderMap, HeaderName, HeaderValue};

use super::auth::Authorizer;
use super::connect::{CustomConnector, ProxyConfig};

/// The settings of an [`HttpClient`](crate::HttpClient).
///
/// Every field has a default (see each field); the setters return the changed value so
/// settings chain:
///
/// ```
/// use std::time::Duration;
/// use http::HeaderValue;
/// use mcp_transport_http::HttpClientConfig;
///
/// let config = HttpClientConfig::default()
///     .header(http::header::AUTHORIZATION, HeaderValue::from_static("Bearer t0k3n"))
///     .connect_timeout(Duration::from_secs(3))
///     .max_response_bytes(1 << 20);
/// assert_eq!(config.max_response_bytes, 1 << 20);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HttpClientConfig {
    /// Headers sent with every POST (`Authorization`, a user agent). The MCP headers the
    /// client sets itself (`Accept`, `Content-Type`, `MCP-Protocol-Version`, `Mcp-Method`,
    /// `Mcp-Name`, `Mcp-Param-*`) replace any value given here.
    pub headers: HeaderMap,
    /// How long opening a TCP connection may take (default 10 s). Past it the call fails
    /// with a connect error. How long a whole call may take is the caller's business: drop
    /// the call or its [`ResponseStream`](crate::ResponseStream) to give up.
    pub connect_timeout: Duration,
    /// How long an idle connection stays in the pool for reuse (default 90 s).
    pub pool_idle_timeout: Duration,
    /// The largest reply body read, JSON or a whole SSE stream (default 16 MiB). Past it
    /// reading stops with [`Error::BodyTooLarge`](crate::Error::BodyTooLarge). A
    /// long-lived stream (`subscriptions/listen`) needs a larger value.
    pub max_response_bytes: usize,
    /// The largest single SSE event (default 4 MiB). Past it reading stops with
    /// [`Error::EventTooLarge`](crate::Error::EventTooLarge).
    pub max_event_bytes: usize,
    /// The TLS settings for `https://` endpoints (default: the Mozilla roots of
    /// `webpki-roots`, no client certificate). Give your own to trust a private CA or to
    /// present a client certificate. Its `alpn_protocols` are replaced: the client offers
    /// `h2` and `http/1.1` and speaks whichever the server picks.
    #[cfg(feature = "rustls")]
    pub tls: Option<std::sync::Arc<rustls::ClientConfig>>,
    /// Where every request's `Authorization` header comes from, and who answers the
    /// server's `401`/`403` challenges (default: none; a `401` is then
    /// [`Error::Unauthorized`](crate::Error::Unauthorized)). It owns the `Authorization`
    /// header: one given in [`headers`](Self::headers) is not sent. See [`Authorizer`].
    pub authorizer: Option<Arc<dyn Authorizer>>,
    /// The HTTP proxy that serves the endpoint, if any (default: none; see
    /// [`ProxyConfig::from_env`] for the environment's).
    pub proxy: ProxyConfig,
    /// The connector that opens connections in place of the client's own TCP connector
    /// (default: none). TLS and the proxy are still added on top of it.
    pub connector: Option<CustomConnector>,
}

impl Default for HttpClientConfig {
    fn default() -> Self {
        HttpClientConfig {
            headers: HeaderMap::new(),
            connect_timeout: Duration::from_secs(10),
            pool_idle_timeout: Duration::from_secs(90),
            max_response_bytes: 16 << 20,
            max_event_bytes: 4 << 20,
            #[cfg(feature = "rustls")]
            tls: None,
            authorizer: None,
            proxy: ProxyConfig::none(),
            connector: None,
        }
    }
}

impl HttpClientConfig {
    /// Adds a header sent with every POST (another value of the same name is kept too).
    #[must_use]
    pub fn header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers.append(name, value);
        self
    }

    /// Sets [`connect_timeout`](Self::connect_timeout).
    #[must_use]
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Sets [`pool_idle_timeout`](Self::pool_idle_timeout).
    #[must_use]
    pub fn pool_idle_timeout(mut self, timeout: Duration) -> Self {
        self.pool_idle_timeout = timeout;
        self
    }

    /// Sets [`max_response_bytes`](Self::max_response_bytes).
    #[must_use]
    pub fn max_response_bytes(mut self, bytes: usize) -> Self {
        self.max_response_bytes = bytes;
        self
    }

    /// Sets [`max_event_bytes`](Self::max_event_bytes).
    #[must_use]
    pub fn max_event_bytes(mut self, bytes: usize) -> Self {
        self.max_event_bytes = bytes;
        self
    }

    /// Sets [`authorizer`](Self::authorizer).
    #[must_use]
    pub fn authorizer(mut self, authorizer: Arc<dyn Authorizer>) -> Self {
        self.authorizer = Some(authorizer);
        self
    }

    /// Sets [`proxy`](Self::proxy).
    #[must_use]
    pub fn proxy(mut self, proxy: ProxyConfig) -> Self {
        self.proxy = proxy;
        self
    }

    /// Sets [`connector`](Self::connector).
    #[must_use]
    pub fn connector(mut self, connector: CustomConnector) -> Self {
        self.connector = Some(connector);
        self
    }

    /// Sets [`tls`](Self::tls).
    #[cfg(feature = "rustls")]
    #[must_use]
    pub fn tls(mut self, config: std::sync::Arc<rustls::ClientConfig>) -> Self {
        self.tls = Some(config);
        self
    }
}
