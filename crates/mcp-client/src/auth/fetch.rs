//! The OAuth client's own HTTP requests (metadata, registration, tokens), with the safety
//! rules of <https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization/security-considerations>
//! (Communication Security) and the security best practices (SSRF):
//!
//! - every URL must be `https`; plain `http` only to a loopback host, and only in the
//!   development mode the caller opts into ([`NetworkPolicy::allow_loopback`]);
//! - loopback, private, link-local, shared and unspecified addresses are refused, whether
//!   written in the URL or resolved from a name (the resolver filters the addresses it
//!   hands to the connector, so a name cannot be re-pointed between check and connect),
//!   unless the policy allows them;
//! - `GET` follows at most [`MAX_REDIRECTS`] redirects, each checked like the first URL,
//!   and sends no credential or custom header to another origin ([`redirect_headers`]);
//!   `POST` (registration, tokens) follows none;
//! - bodies are bounded ([`MAX_BODY`]) and every request has a timeout ([`TIMEOUT`]).
//!
//! This is not the MCP transport: it talks to authorization servers and metadata URLs of
//! any origin, which the transport never does.

use std::future::Future;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE, LOCATION, USER_AGENT};
use http::{HeaderMap, HeaderValue, Method, Request, StatusCode, Uri};
use http_body_util::{BodyExt as _, Full, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::connect::dns::Name;
use hyper_util::rt::TokioExecutor;

use crate::{AuthErrorKind, Error};

/// How many redirects a metadata `GET` follows.
pub const MAX_REDIRECTS: usize = 5;
/// The largest response body read (a metadata document, a token response).
pub const MAX_BODY: usize = 1 << 20;
/// How long one OAuth HTTP request may take, connection included.
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// Which hosts the OAuth client may reach. The default is the safe one: `https` only, and
/// public addresses only.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct NetworkPolicy {
    /// Development mode: loopback hosts (`localhost`, `127.0.0.0/8`, `::1`) may be reached,
    /// over plain `http` too. For a server and authorization server running on the same
    /// machine, such as the conformance suite's mocks; never for a remote server.
    pub allow_loopback: bool,
    /// Private (RFC 1918, unique-local), shared (RFC 6598) and link-local addresses may be
    /// reached (still over `https`). For servers on an internal network.
    pub allow_private: bool,
}

impl NetworkPolicy {
    /// The development-mode policy: loopback allowed, over `http` too.
    pub fn development() -> NetworkPolicy {
        NetworkPolicy {
            allow_loopback: true,
            allow_private: false,
        }
    }

    /// Why `ip` may not be reached under this policy, if it may not.
    pub fn refusal(&self, ip: IpAddr) -> Option<&'static str> {
        let kind = classify(ip)?;
        match kind {
            Kind::Loopback if self.allow_loopback => None,
            Kind::Private | Kind::LinkLocal | Kind::Shared if self.allow_private => None,
            _ => Some(kind.describe()),
        }
    }

    /// Checks a URL the client is about to fetch or hand to the user: absolute, `https`
    /// (or `http` to a loopback host in development mode), and not naming a refused
    /// address literally. Names are checked again when they are resolved. A URL refused is
    /// [`Error::Auth`] with [`AuthErrorKind::InsecureUrl`] or
    /// [`AuthErrorKind::AddressRefused`].
    pub fn check_url(&self, url: &str) -> Result<Uri, Error> {
        self.check(url).map_err(Error::Auth)
    }

    /// [`check_url`](Self::check_url)'s decision, as the kind alone.
    pub(crate) fn check(&self, url: &str) -> Result<Uri, AuthErrorKind> {
        let uri: Uri = url
            .parse()
            .map_err(|_| AuthErrorKind::insecure(url, "not a URL"))?;
        let Some(host) = uri.host() else {
            return Err(AuthErrorKind::insecure(url, "no host"));
        };
        let host = host.trim_start_matches('[').trim_end_matches(']');
        match uri.scheme_str() {
            Some("https") => {}
            Some("http") if is_loopback_host(host) && self.allow_loopback => {}
            Some("http") if is_loopback_host(host) => {
                return Err(AuthErrorKind::insecure(
                    url,
                    "plain http is allowed only to loopback hosts in development mode",
                ));
            }
            _ => return Err(AuthErrorKind::insecure(url, "the scheme must be https")),
        }
        let refused = if let Ok(ip) = host.parse::<IpAddr>() {
            self.refusal(ip)
        } else if is_loopback_name(host) && !self.allow_loopback {
            Some(Kind::Loopback.describe())
        } else {
            None
        };
        if let Some(reason) = refused {
            return Err(AuthErrorKind::AddressRefused {
                host: host.to_owned(),
                reason: reason.to_owned(),
            });
        }
        Ok(uri)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Loopback,
    Private,
    LinkLocal,
    Shared,
    Other,
}

impl Kind {
    fn describe(self) -> &'static str {
        match self {
            Kind::Loopback => "a loopback address",
            Kind::Private => "a private address",
            Kind::LinkLocal => "a link-local address",
            Kind::Shared => "a shared (carrier-grade NAT) address",
            Kind::Other => "an unspecified, broadcast, multicast or reserved address",
        }
    }
}

fn classify(ip: IpAddr) -> Option<Kind> {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => classify_v4(v4),
            None => classify_v6(v6),
        },
    }
}

fn classify_v4(ip: Ipv4Addr) -> Option<Kind> {
    let [a, b, ..] = ip.octets();
    if ip.is_loopback() {
        Some(Kind::Loopback)
    } else if ip.is_private() {
        Some(Kind::Private)
    } else if ip.is_link_local() {
        Some(Kind::LinkLocal)
    } else if a == 100 && (64..128).contains(&b) {
        Some(Kind::Shared)
    } else if ip.is_unspecified() || ip.is_broadcast() || ip.is_multicast() || a == 0 || a >= 240 {
        Some(Kind::Other)
    } else {
        None
    }
}

fn classify_v6(ip: Ipv6Addr) -> Option<Kind> {
    let first = ip.segments()[0];
    if ip.is_loopback() {
        Some(Kind::Loopback)
    } else if first & 0xfe00 == 0xfc00 {
        Some(Kind::Private)
    } else if first & 0xffc0 == 0xfe80 {
        Some(Kind::LinkLocal)
    } else if ip.is_unspecified() || ip.is_multicast() {
        Some(Kind::Other)
    } else {
        None
    }
}

fn is_loopback_name(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost") || host.to_ascii_lowercase().ends_with(".localhost")
}

/// Whether `host` (a name or an address, brackets allowed) is a loopback host.
pub fn is_loopback_host(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    is_loopback_name(host)
        || host
            .parse::<IpAddr>()
            .is_ok_and(|ip| classify(ip) == Some(Kind::Loopback))
}

/// The origin of a URL: scheme, host and port, lowercased, with the default port filled in.
pub(crate) fn origin(uri: &Uri) -> Option<(String, String, u16)> {
    let scheme = uri.scheme_str()?.to_ascii_lowercase();
    let host = uri.host()?.to_ascii_lowercase();
    let port = uri.port_u16().or(match scheme.as_str() {
        "https" => Some(443),
        "http" => Some(80),
        _ => None,
    })?;
    Some((scheme, host, port))
}

/// The headers to send when following a redirect from `from` to `to`: all of them within
/// the same origin; across origins only `Accept` and `User-Agent`, so that no credential
/// (`Authorization`, cookies) and no caller-set header reaches another origin.
pub fn redirect_headers(headers: &HeaderMap, from: &Uri, to: &Uri) -> HeaderMap {
    if origin(from).is_some() && origin(from) == origin(to) {
        return headers.clone();
    }
    let mut kept = HeaderMap::new();
    for name in [ACCEPT, USER_AGENT] {
        if let Some(value) = headers.get(&name) {
            kept.insert(name, value.clone());
        }
    }
    kept
}

/// A reply read whole.
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) status: StatusCode,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
}

type Connector = hyper_rustls::HttpsConnector<HttpConnector<GuardedResolver>>;

/// The OAuth HTTP client: see the module docs.
#[derive(Clone)]
pub(crate) struct Fetcher {
    client: Client<Connector, Full<Bytes>>,
    policy: NetworkPolicy,
}

mcp_types::debug_fields!(Fetcher { policy });

const USER_AGENT_VALUE: HeaderValue =
    HeaderValue::from_static(concat!("mcp-client/", env!("CARGO_PKG_VERSION")));

impl Fetcher {
    pub(crate) fn new(
        policy: NetworkPolicy,
        tls: Option<Arc<rustls::ClientConfig>>,
    ) -> Result<Fetcher, AuthErrorKind> {
        let mut http = HttpConnector::new_with_resolver(GuardedResolver {
            policy: policy.clone(),
        });
        http.enforce_http(false);
        http.set_connect_timeout(Some(TIMEOUT));
        let builder = hyper_rustls::HttpsConnectorBuilder::new();
        let builder = match tls {
            Some(config) => {
                let mut config = (*config).clone();
                config.alpn_protocols.clear();
                builder.with_tls_config(config)
            }
            None => builder
                .with_provider_and_webpki_roots(rustls::crypto::ring::default_provider())
                .map_err(|e| AuthErrorKind::Http {
                    url: String::new(),
                    reason: format!("TLS setup failed: {e}"),
                })?,
        };
        // `https_or_http`: plain http is filtered by the policy before a request is made.
        let connector = builder
            .https_or_http()
            .enable_all_versions()
            .wrap_connector(http);
        Ok(Fetcher {
            client: Client::builder(TokioExecutor::new()).build(connector),
            policy,
        })
    }

    pub(crate) fn policy(&self) -> &NetworkPolicy {
        &self.policy
    }

    /// `GET url` for a JSON document, following redirects as the module docs say.
    pub(crate) async fn get(&self, url: &str) -> Result<Reply, AuthErrorKind> {
        let mut uri = self.policy.check(url)?;
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
        headers.insert(USER_AGENT, USER_AGENT_VALUE);
        for _ in 0..=MAX_REDIRECTS {
            let reply = self.once(Method::GET, &uri, &headers, Bytes::new()).await?;
            if !reply.status.is_redirection() {
                return Ok(reply);
            }
            let Some(location) = reply.headers.get(LOCATION).and_then(|l| l.to_str().ok()) else {
                return Ok(reply);
            };
            let next = resolve(&uri, location).ok_or_else(|| AuthErrorKind::Http {
                url: uri.to_string(),
                reason: format!("unusable redirect location `{location}`"),
            })?;
            let next = self.policy.check(&next)?;
            headers = redirect_headers(&headers, &uri, &next);
            uri = next;
        }
        Err(AuthErrorKind::Http {
            url: url.to_owned(),
            reason: format!("more than {MAX_REDIRECTS} redirects"),
        })
    }

    /// `POST url` with `body` of `content_type` and extra `headers`; redirects are not
    /// followed (a 3xx is returned as it is, for the caller to refuse).
    pub(crate) async fn post(
        &self,
        url: &str,
        content_type: &'static str,
        body: Bytes,
        mut headers: HeaderMap,
    ) -> Result<Reply, AuthErrorKind> {
        let uri = self.policy.check(url)?;
        headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
        headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
        headers.insert(USER_AGENT, USER_AGENT_VALUE);
        self.once(Method::POST, &uri, &headers, body).await
    }

    async fn once(
        &self,
        method: Method,
        uri: &Uri,
        headers: &HeaderMap,
        body: Bytes,
    ) -> Result<Reply, AuthErrorKind> {
        let mut request = Request::new(Full::new(body));
        *request.method_mut() = method;
        *request.uri_mut() = uri.clone();
        *request.headers_mut() = headers.clone();
        let failed = |reason: String| AuthErrorKind::Http {
            url: uri.to_string(),
            reason,
        };
        let exchange = async {
            let response = self
                .client
                .request(request)
                .await
                .map_err(|e| refused(&e).unwrap_or_else(|| failed(chain(&e))))?;
            let (parts, body) = response.into_parts();
            let body = Limited::new(body, MAX_BODY)
                .collect()
                .await
                .map_err(|e| failed(format!("reading the body: {e}")))?
                .to_bytes();
            Ok(Reply {
                status: parts.status,
                headers: parts.headers,
                body,
            })
        };
        tokio::time::timeout(TIMEOUT, exchange)
            .await
            .unwrap_or_else(|_| Err(failed(format!("no answer within {TIMEOUT:?}"))))
    }
}

/// A URI reference resolved against `base` (absolute, or absolute-path).
fn resolve(base: &Uri, reference: &str) -> Option<String> {
    if reference.contains("://") {
        return Some(reference.to_owned());
    }
    let path = if reference.starts_with('/') {
        reference.to_owned()
    } else {
        let dir = base.path().rsplit_once('/').map_or("", |(dir, _)| dir);
        format!("{dir}/{reference}")
    };
    Some(format!(
        "{}://{}{path}",
        base.scheme_str()?,
        base.authority()?
    ))
}

/// An error and its sources, as one line.
fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(e) = source {
        text.push_str(": ");
        text.push_str(&e.to_string());
        source = e.source();
    }
    text
}

/// The policy refusal among an error's sources, if the resolver refused the host.
fn refused(error: &(dyn std::error::Error + 'static)) -> Option<AuthErrorKind> {
    let mut source = error.source();
    while let Some(e) = source {
        if let Some(refusal) = e.downcast_ref::<Refused>() {
            return Some(AuthErrorKind::AddressRefused {
                host: refusal.host.clone(),
                reason: refusal.reason.to_owned(),
            });
        }
        source = e.source();
    }
    None
}

/// The resolver's refusal, carried through hyper's error as an `io::Error` source.
#[derive(Debug, thiserror::Error)]
#[error("{host} resolves only to refused addresses ({reason})")]
struct Refused {
    host: String,
    reason: &'static str,
}

/// Resolves with the system resolver and keeps only the addresses the policy allows.
#[derive(Debug, Clone)]
struct GuardedResolver {
    policy: NetworkPolicy,
}

impl tower_service::Service<Name> for GuardedResolver {
    type Response = std::vec::IntoIter<SocketAddr>;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, io::Error>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), io::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, name: Name) -> Self::Future {
        let policy = self.policy.clone();
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let mut reason = "no address";
            let allowed: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0))
                .await?
                .filter(|addr| match policy.refusal(addr.ip()) {
                    Some(why) => {
                        reason = why;
                        false
                    }
                    None => true,
                })
                .collect();
            if allowed.is_empty() {
                return Err(io::Error::other(Refused { host, reason }));
            }
            Ok(allowed.into_iter())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_must_be_https_unless_loopback_in_development() {
        let strict = NetworkPolicy::default();
        let dev = NetworkPolicy::development();
        assert!(strict.check_url("https://auth.example.com/token").is_ok());
        for (url, dev_ok) in [
            ("http://auth.example.com/token", false),
            ("ftp://auth.example.com/", false),
            ("/relative", false),
            ("http://localhost:3000/mcp", true),
            ("http://127.0.0.1:3000/mcp", true),
            ("http://[::1]:3000/mcp", true),
            ("https://localhost/mcp", true),
            ("http://10.0.0.1/mcp", false),
        ] {
            assert!(
                strict.check_url(url).is_err(),
                "{url} allowed in strict mode"
            );
            assert_eq!(
                dev.check_url(url).is_ok(),
                dev_ok,
                "{url} in development mode"
            );
        }
    }

    #[test]
    fn private_and_link_local_addresses_are_refused_unless_allowed() {
        let strict = NetworkPolicy::default();
        let private = NetworkPolicy {
            allow_private: true,
            ..NetworkPolicy::default()
        };
        for url in [
            "https://10.1.2.3/",
            "https://172.16.0.1/",
            "https://192.168.1.1/",
            "https://169.254.169.254/latest/meta-data",
            "https://100.64.0.1/",
            "https://[fd00::1]/",
            "https://[fe80::1]/",
            "https://[::ffff:10.0.0.1]/",
        ] {
            let err = strict.check_url(url).unwrap_err();
            assert!(
                matches!(err, Error::Auth(AuthErrorKind::AddressRefused { .. })),
                "{url}: {err}"
            );
            assert!(private.check_url(url).is_ok(), "{url} with private allowed");
        }
        for url in ["https://0.0.0.0/", "https://[::]/", "https://224.0.0.1/"] {
            assert!(private.check_url(url).is_err(), "{url}");
        }
        assert!(strict.check_url("https://93.184.216.34/").is_ok());
        assert!(strict.check_url("https://[2606:2800:220:1::1]/").is_ok());
    }

    #[tokio::test]
    async fn names_resolving_to_refused_addresses_are_refused() {
        let mut resolver = GuardedResolver {
            policy: NetworkPolicy::default(),
        };
        let err = tower_service::Service::call(&mut resolver, "localhost".parse().unwrap())
            .await
            .unwrap_err();
        assert!(err.to_string().contains("loopback"), "{err}");
        let mut resolver = GuardedResolver {
            policy: NetworkPolicy::development(),
        };
        let addrs: Vec<_> =
            tower_service::Service::call(&mut resolver, "localhost".parse().unwrap())
                .await
                .unwrap()
                .collect();
        assert!(addrs.iter().all(|a| a.ip().is_loopback()) && !addrs.is_empty());

        // Through the fetcher: a name (not a literal) that resolves to loopback.
        let fetcher = Fetcher::new(
            NetworkPolicy {
                allow_loopback: false,
                allow_private: false,
            },
            None,
        )
        .unwrap();
        let err = fetcher.get("https://localhost:1/x").await.unwrap_err();
        assert!(matches!(err, AuthErrorKind::AddressRefused { .. }), "{err}");
    }

    #[test]
    fn credentials_never_cross_origins_on_redirects() {
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
        headers.insert(
            http::header::AUTHORIZATION,
            HeaderValue::from_static("Bearer secret"),
        );
        headers.insert(http::header::COOKIE, HeaderValue::from_static("a=b"));
        headers.insert("x-custom", HeaderValue::from_static("1"));
        let from: Uri = "https://as.example.com/.well-known/x".parse().unwrap();
        for (to, same) in [
            ("https://as.example.com:443/other", true),
            ("https://AS.example.com/other", true),
            ("https://evil.example.com/x", false),
            ("https://as.example.com:8443/x", false),
            ("http://as.example.com/x", false),
        ] {
            let kept = redirect_headers(&headers, &from, &to.parse().unwrap());
            if same {
                assert_eq!(kept, headers, "{to}");
            } else {
                let names: Vec<_> = kept.keys().map(|k| k.as_str().to_owned()).collect();
                assert_eq!(names, ["accept"], "{to}");
            }
        }
    }

    #[test]
    fn relative_redirects_resolve() {
        let base: Uri = "https://a.example/x/y".parse().unwrap();
        assert_eq!(resolve(&base, "/z").unwrap(), "https://a.example/z");
        assert_eq!(resolve(&base, "z").unwrap(), "https://a.example/x/z");
        assert_eq!(
            resolve(&base, "https://b.example/").unwrap(),
            "https://b.example/"
        );
    }
}
