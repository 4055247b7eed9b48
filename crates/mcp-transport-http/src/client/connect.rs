//! How the client reaches its endpoint: directly, through an HTTP proxy, or through a
//! connector the user supplies.
//!
//! - [`ProxyConfig`] says which proxy serves which endpoint: explicit
//!   ([`ProxyConfig::new`]), or read from the environment as curl reads it
//!   ([`ProxyConfig::from_env`], [`ProxyConfig::from_vars`] for a given set of variables).
//!   The matching (`NO_PROXY` domain suffixes, `*`, IP addresses and CIDR ranges) is
//!   hyper-util's [`Matcher`].
//! - An `https://` endpoint behind a proxy is reached through a `CONNECT` tunnel
//!   (hyper-util's [`Tunnel`]), TLS inside it end to end; an `http://` one by sending each
//!   request to the proxy in absolute form (RFC 9112, section 3.2.2), with the proxy's
//!   credentials in `Proxy-Authorization`.
//! - [`CustomConnector`] replaces the TCP connection under all of it (TLS and the proxy
//!   tunnel are still added on top): any tower `Service<Uri>` whose connections hyper can
//!   drive.
//!
//! [`Tunnel`]: hyper_util::client::legacy::connect::proxy::Tunnel

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use http::{HeaderValue, Uri};
use hyper::rt::{Read, ReadBufCursor, Write};
use hyper_util::client::legacy::connect::{Connected, Connection, HttpConnector};
use hyper_util::client::proxy::matcher::Matcher;
use hyper_util::rt::TokioIo;

use crate::error::{BoxError, Error};

/// What a connection is, to the client: bytes both ways that hyper can drive, and what
/// the connector learnt while opening it ([`Connected`], for ALPN's `h2`). `Sync`, so that
/// a [`ResponseStream`](crate::ResponseStream) reading from it can be shared.
pub trait ConnectionIo: Read + Write + Connection + Send + Sync + Unpin + 'static {}

impl<T: Read + Write + Connection + Send + Sync + Unpin + 'static> ConnectionIo for T {}

/// A connection of any connector: the client's own TCP connections as they are, any
/// other boxed.
pub(crate) enum BoxedIo {
    Tcp(TokioIo<tokio::net::TcpStream>),
    Other(Box<dyn ConnectionIo>),
}

impl BoxedIo {
    fn io(self: Pin<&mut Self>) -> Pin<&mut dyn ConnectionIo> {
        match self.get_mut() {
            BoxedIo::Tcp(io) => Pin::new(io),
            BoxedIo::Other(io) => Pin::new(&mut **io),
        }
    }
}

impl Read for BoxedIo {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: ReadBufCursor<'_>,
    ) -> Poll<std::io::Result<()>> {
        self.io().poll_read(cx, buf)
    }
}

impl Write for BoxedIo {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.io().poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.io().poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.io().poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            BoxedIo::Tcp(io) => io.is_write_vectored(),
            BoxedIo::Other(io) => io.is_write_vectored(),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        self.io().poll_write_vectored(cx, bufs)
    }
}

impl Connection for BoxedIo {
    fn connected(&self) -> Connected {
        match self {
            BoxedIo::Tcp(io) => io.connected(),
            BoxedIo::Other(io) => io.connected(),
        }
    }
}

type ConnectFuture = Pin<Box<dyn Future<Output = Result<BoxedIo, BoxError>> + Send>>;
type ConnectFn = Arc<dyn Fn(Uri) -> ConnectFuture + Send + Sync>;

/// Boxes any connector, its connections made [`BoxedIo`] by `wrap`.
fn boxed<C>(connector: C, wrap: fn(C::Response) -> BoxedIo) -> ConnectFn
where
    C: tower_service::Service<Uri> + Clone + Send + Sync + 'static,
    C::Response: Send + 'static,
    C::Future: Send + 'static,
    C::Error: Into<BoxError>,
{
    Arc::new(move |uri| {
        let mut connector = connector.clone();
        Box::pin(async move {
            std::future::poll_fn(|cx| connector.poll_ready(cx))
                .await
                .map_err(Into::into)?;
            let io = connector.call(uri).await.map_err(Into::into)?;
            Ok(wrap(io))
        })
    })
}

/// A connector the user supplies ([`HttpClientConfig::connector`]), in place of the TCP
/// connection the client opens by itself: a Unix socket, an in-process pipe, a SOCKS
/// proxy, a connection through a custom resolver. It is given the URI to reach (the
/// endpoint's, or the proxy's when one is configured) and returns a connection; TLS (for
/// `https://`) and the proxy's `CONNECT` tunnel are added on top of it. The client's
/// [`connect_timeout`](crate::HttpClientConfig::connect_timeout) bounds each call.
///
/// [`HttpClientConfig::connector`]: crate::HttpClientConfig::connector
#[derive(Clone)]
pub struct CustomConnector(ConnectFn);

impl CustomConnector {
    /// Wraps a tower `Service<Uri>` connector, such as hyper-util's `HttpConnector` with
    /// settings of one's own.
    pub fn new<C>(connector: C) -> Self
    where
        C: tower_service::Service<Uri> + Clone + Send + Sync + 'static,
        C::Response: ConnectionIo,
        C::Future: Send + 'static,
        C::Error: Into<BoxError>,
    {
        CustomConnector(boxed(connector, |io| BoxedIo::Other(Box::new(io))))
    }
}

impl std::fmt::Debug for CustomConnector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CustomConnector")
    }
}

/// The connector under TLS: opens a connection to the URI it is given, or always to a
/// fixed one (a forward proxy), within a timeout.
#[derive(Clone)]
pub(crate) struct Dial {
    connect: ConnectFn,
    /// Where every connection goes, whatever the request's URI (a forward proxy).
    fixed: Option<Uri>,
    timeout: Option<Duration>,
}

impl tower_service::Service<Uri> for Dial {
    type Response = BoxedIo;
    type Error = BoxError;
    type Future = ConnectFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let target = self.fixed.clone().unwrap_or(uri);
        let connecting = (self.connect)(target);
        match self.timeout {
            Some(limit) => Box::pin(async move {
                tokio::time::timeout(limit, connecting)
                    .await
                    .map_err(|_| BoxError::from("the connection was not opened in time"))?
            }),
            None => connecting,
        }
    }
}

/// How an endpoint is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Route {
    /// Directly.
    Direct,
    /// Through a `CONNECT` tunnel opened by the proxy at `proxy`.
    Tunnel {
        proxy: Uri,
        auth: Option<HeaderValue>,
    },
    /// Each request sent to the proxy at `proxy`, in absolute form.
    Forward {
        proxy: Uri,
        auth: Option<HeaderValue>,
    },
}

/// Which HTTP proxy (if any) serves an endpoint
/// ([`HttpClientConfig::proxy`](crate::HttpClientConfig::proxy)).
///
/// The default is no proxy. [`from_env`](Self::from_env) reads the variables curl reads:
///
/// - `http_proxy` for `http://` endpoints (`HTTP_PROXY` too, except in a CGI program,
///   where a request's `Proxy` header would set it: the "httpoxy" attack);
/// - `https_proxy` or `HTTPS_PROXY` for `https://` endpoints;
/// - `all_proxy` or `ALL_PROXY` for either when its own is not set;
/// - `no_proxy` or `NO_PROXY`: endpoints reached directly. A comma-separated list of
///   domains (each matching itself and its subdomains; a leading `.` is ignored), IP
///   addresses, CIDR ranges, or `*` for every host. As in curl, a loopback endpoint
///   (`localhost`, `127.0.0.1`) is proxied unless listed.
///
/// The lowercase name wins when both are set. A proxy is an `http://` URL (`host:port`
/// alone means `http://host:port`), with optional `user:password@` credentials sent as
/// `Proxy-Authorization: Basic`; an `https://` proxy is refused by
/// [`HttpClient::new`](crate::HttpClient::new) (TLS to the proxy is not supported).
#[derive(Clone, Default)]
pub struct ProxyConfig {
    matcher: Option<Arc<Matcher>>,
}

impl std::fmt::Debug for ProxyConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The matcher's own Debug would print proxy credentials.
        f.debug_struct("ProxyConfig")
            .field("enabled", &self.matcher.is_some())
            .finish()
    }
}

impl ProxyConfig {
    /// No proxy: every endpoint is reached directly (the default).
    pub fn none() -> Self {
        ProxyConfig::default()
    }

    /// One proxy (`http://host:port`) for both `http://` and `https://` endpoints, except
    /// those `no_proxy` lists (in `NO_PROXY`'s syntax; empty for none).
    pub fn new(proxy: &str, no_proxy: &str) -> Self {
        if bypasses_all(no_proxy) {
            return ProxyConfig::none();
        }
        ProxyConfig::with(
            Matcher::builder()
                .all(proxy.to_owned())
                .no(no_proxy.to_owned())
                .build(),
        )
    }

    /// A proxy per scheme (`None`: that scheme is reached directly), except what
    /// `no_proxy` lists.
    pub fn per_scheme(http: Option<&str>, https: Option<&str>, no_proxy: &str) -> Self {
        if bypasses_all(no_proxy) {
            return ProxyConfig::none();
        }
        let mut builder = Matcher::builder().no(no_proxy.to_owned());
        if let Some(http) = http {
            builder = builder.http(http.to_owned());
        }
        if let Some(https) = https {
            builder = builder.https(https.to_owned());
        }
        ProxyConfig::with(builder.build())
    }

    /// The proxies the process's environment names (see the type's docs).
    pub fn from_env() -> Self {
        ProxyConfig::from_vars(|name| std::env::var(name).ok())
    }

    /// The proxies a set of environment variables names, read through `var` (the
    /// variable's value, or `None` when unset): what [`from_env`](Self::from_env) does
    /// with the process's environment.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Self {
        let first = |names: &[&str]| {
            names
                .iter()
                .find_map(|name| var(name).filter(|v| !v.trim().is_empty()))
        };
        let cgi = var("REQUEST_METHOD").is_some();
        let http = if cgi {
            first(&["http_proxy"])
        } else {
            first(&["http_proxy", "HTTP_PROXY"])
        };
        let https = first(&["https_proxy", "HTTPS_PROXY"]);
        let all = first(&["all_proxy", "ALL_PROXY"]);
        let no = first(&["no_proxy", "NO_PROXY"]).unwrap_or_default();
        if (http.is_none() && https.is_none() && all.is_none()) || bypasses_all(&no) {
            return ProxyConfig::none();
        }
        let mut builder = Matcher::builder().no(no);
        if let Some(all) = all {
            builder = builder.all(all);
        }
        if let Some(http) = http {
            builder = builder.http(http);
        }
        if let Some(https) = https {
            builder = builder.https(https);
        }
        ProxyConfig::with(builder.build())
    }

    fn with(matcher: Matcher) -> Self {
        ProxyConfig {
            matcher: Some(Arc::new(matcher)),
        }
    }

    /// The proxy URL that serves `endpoint`, if any (credentials included).
    pub fn proxy_for(&self, endpoint: &Uri) -> Option<Uri> {
        let intercept = self.matcher.as_ref()?.intercept(endpoint)?;
        Some(intercept.uri().clone())
    }

    /// How `endpoint` is reached; an `https://` proxy is refused.
    pub(crate) fn route(&self, endpoint: &Uri) -> Result<Route, Error> {
        let Some(intercept) = self
            .matcher
            .as_ref()
            .and_then(|matcher| matcher.intercept(endpoint))
        else {
            return Ok(Route::Direct);
        };
        let proxy = intercept.uri().clone();
        if proxy.scheme_str() != Some("http") || proxy.authority().is_none() {
            return Err(Error::Config(
                "the proxy must be an http:// URL with a host (TLS to a proxy is not supported)"
                    .to_owned(),
            ));
        }
        // The proxy's address without its credentials (they go in a header).
        let bare = Uri::builder()
            .scheme("http")
            .authority(
                proxy
                    .authority()
                    .map(|a| a.as_str().rsplit('@').next().unwrap_or_default().to_owned())
                    .unwrap_or_default(),
            )
            .path_and_query("/")
            .build()
            .map_err(|e| Error::Config(format!("the proxy URL is not usable: {e}")))?;
        let auth = intercept.basic_auth().cloned().map(|mut value| {
            value.set_sensitive(true);
            value
        });
        Ok(match endpoint.scheme_str() {
            Some("https") => Route::Tunnel { proxy: bare, auth },
            _ => Route::Forward { proxy: bare, auth },
        })
    }
}

/// Whether a `NO_PROXY` list holds `*`, which (as in curl) bypasses the proxy for every
/// host, IP addresses included (hyper-util's matcher applies it to names only).
fn bypasses_all(no_proxy: &str) -> bool {
    no_proxy.split(',').any(|entry| entry.trim() == "*")
}

/// The connector under TLS for `route`: the user's connector or a TCP one (`tcp`), to the
/// proxy when there is one, with the `CONNECT` tunnel when the route asks for it.
pub(crate) fn dial(
    route: &Route,
    custom: Option<&CustomConnector>,
    tcp: HttpConnector,
    timeout: Option<Duration>,
) -> Dial {
    let base = match custom {
        Some(custom) => custom.0.clone(),
        None => boxed(tcp, BoxedIo::Tcp),
    };
    let base = Dial {
        connect: base,
        fixed: None,
        timeout: None,
    };
    match route {
        Route::Direct => Dial { timeout, ..base },
        Route::Forward { proxy, .. } => Dial {
            fixed: Some(proxy.clone()),
            timeout,
            ..base
        },
        Route::Tunnel { proxy, auth } => {
            let mut tunnel =
                hyper_util::client::legacy::connect::proxy::Tunnel::new(proxy.clone(), base);
            if let Some(auth) = auth {
                tunnel = tunnel.with_auth(auth.clone());
            }
            Dial {
                connect: boxed(TunnelService(tunnel), |io| io),
                fixed: None,
                timeout,
            }
        }
    }
}

/// hyper-util's tunnel, whose connections are ours ([`BoxedIo`]); `Sync` for [`boxed`].
#[derive(Clone)]
struct TunnelService(hyper_util::client::legacy::connect::proxy::Tunnel<Dial>);

impl tower_service::Service<Uri> for TunnelService {
    type Response = BoxedIo;
    type Error = BoxError;
    type Future = ConnectFuture;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.0.poll_ready(cx).map_err(BoxError::from)
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let tunneling = self.0.call(uri);
        Box::pin(async move { tunneling.await.map_err(BoxError::from) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn vars(pairs: &[(&str, &str)]) -> ProxyConfig {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        ProxyConfig::from_vars(|name| map.get(name).cloned())
    }

    fn route(config: &ProxyConfig, url: &str) -> Route {
        config.route(&url.parse().unwrap()).unwrap()
    }

    fn proxy(url: &str) -> Uri {
        url.parse().unwrap()
    }

    #[test]
    fn the_environment_is_read_as_curl_reads_it() {
        assert_eq!(route(&vars(&[]), "https://a.example/mcp"), Route::Direct);

        let config = vars(&[
            ("HTTPS_PROXY", "http://secure:3128"),
            ("http_proxy", "http://plain:8080"),
            ("NO_PROXY", "internal.example, 10.0.0.0/8, 192.168.1.7"),
        ]);
        assert_eq!(
            route(&config, "https://a.example/mcp"),
            Route::Tunnel {
                proxy: proxy("http://secure:3128/"),
                auth: None
            }
        );
        assert_eq!(
            route(&config, "http://a.example/mcp"),
            Route::Forward {
                proxy: proxy("http://plain:8080/"),
                auth: None
            }
        );
        // Domain suffixes, CIDR ranges and addresses go direct.
        for direct in [
            "https://internal.example/mcp",
            "https://api.internal.example/mcp",
            "http://10.1.2.3/mcp",
            "https://192.168.1.7/mcp",
        ] {
            assert_eq!(route(&config, direct), Route::Direct, "{direct}");
        }
        assert_ne!(
            route(&config, "https://notinternal.example.org/mcp"),
            Route::Direct
        );
        // As curl: loopback is proxied unless listed.
        assert_ne!(route(&config, "http://127.0.0.1:9/mcp"), Route::Direct);
    }

    #[test]
    fn lowercase_wins_all_proxy_falls_back_and_star_bypasses_all() {
        let config = vars(&[
            ("HTTPS_PROXY", "http://upper:1"),
            ("https_proxy", "http://lower:2"),
            ("ALL_PROXY", "http://all:3"),
        ]);
        assert_eq!(
            config.proxy_for(&"https://x.example".parse().unwrap()),
            Some(proxy("http://lower:2/"))
        );
        assert_eq!(
            config.proxy_for(&"http://x.example".parse().unwrap()),
            Some(proxy("http://all:3/"))
        );
        let config = vars(&[("https_proxy", "http://p:1"), ("no_proxy", "a.example, *")]);
        assert_eq!(route(&config, "https://x.example/mcp"), Route::Direct);
        assert_eq!(route(&config, "https://10.0.0.1/mcp"), Route::Direct);
    }

    #[test]
    fn cgi_programs_ignore_uppercase_http_proxy() {
        let config = vars(&[
            ("HTTP_PROXY", "http://attacker:1"),
            ("REQUEST_METHOD", "GET"),
        ]);
        assert_eq!(route(&config, "http://x.example/mcp"), Route::Direct);
        let config = vars(&[("HTTP_PROXY", "http://corporate:1")]);
        assert_ne!(route(&config, "http://x.example/mcp"), Route::Direct);
    }

    #[test]
    fn credentials_become_a_sensitive_header_and_https_proxies_are_refused() {
        let config = ProxyConfig::new("http://user:secret@p.example:3128", "");
        let Route::Tunnel { proxy: bare, auth } = route(&config, "https://x.example/mcp") else {
            panic!("tunnel expected");
        };
        assert_eq!(bare, proxy("http://p.example:3128/"));
        let auth = auth.unwrap();
        assert!(auth.is_sensitive());
        assert_eq!(auth.to_str().unwrap(), "Basic dXNlcjpzZWNyZXQ=");
        assert!(!format!("{config:?}").contains("secret"));

        let config = ProxyConfig::new("https://p.example:3128", "");
        assert!(
            config
                .route(&"https://x.example/mcp".parse().unwrap())
                .is_err()
        );
    }
}
