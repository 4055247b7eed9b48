//! The server's settings: the endpoint, every limit and timeout, the Host and Origin
//! allow-lists, the two hooks the server core plugs in (the `Mcp-Param-*` headers each
//! tool declares, and what to do with a notification), and the optional authenticator.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use http::HeaderName;
use mcp_jsonrpc::{ErrorObject, Notification};
use mcp_types::Request as _;

use crate::auth::Authenticator;
use crate::error::Error;

/// hyper's own limit on a request's header fields, the default of
/// [`HttpServerConfig::max_headers`]: [`HttpServer`](crate::HttpServer) passes only another
/// value on to hyper, which handles its default faster.
pub(crate) const HYPER_MAX_HEADERS: usize = 100;

/// Called with each JSON-RPC notification a client POSTs. `Ok` answers `202 Accepted`;
/// `Err` answers `400 Bad Request` with the error (and no id) as the body.
///
/// Revision 2026-07-28 defines no client-to-server notification over Streamable HTTP
/// (<https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>, Sending Messages), so the
/// default accepts and drops them. It runs on the connection's task: it must not block.
pub type NotificationHook = Arc<dyn Fn(Notification) -> Result<(), ErrorObject> + Send + Sync>;

/// The settings of an [`HttpServer`](crate::HttpServer) or [`McpService`](crate::McpService).
///
/// Every field has a default chosen for a local server (see each field); the setters
/// return the changed value so settings chain:
///
/// ```
/// use std::time::Duration;
/// use mcp_transport_http::{AllowList, HttpServerConfig};
///
/// let config = HttpServerConfig::default()
///     .path("/rpc")
///     .max_body_bytes(1 << 20)
///     .keep_alive_interval(Some(Duration::from_secs(5)))
///     .allowed_origins(AllowList::loopback().with("https://app.example.com"));
/// assert_eq!(config.max_body_bytes, 1 << 20);
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct HttpServerConfig {
    /// The MCP endpoint's path (default `/mcp`); `None` serves every path, for a service
    /// mounted in a router that already routes by path. Other paths get `404`.
    pub path: Option<Cow<'static, str>>,
    /// The largest request body read (default 4 MiB). It is counted while reading,
    /// whatever `Content-Length` says; past it the reply is `413` and reading stops.
    pub max_body_bytes: usize,
    /// How many requests are served at once across all connections (default 1024),
    /// counting from the end of the header checks to the end of the response. Past it the
    /// reply is `503` with `Retry-After`.
    pub max_concurrent_requests: usize,
    /// How many connections [`HttpServer`](crate::HttpServer) keeps open at once (default
    /// 4096). At the limit it stops accepting: further clients wait in the kernel's listen
    /// backlog (and, past that, in their own SYN retries) and are accepted, in order, as
    /// soon as a connection closes. No connection is accepted and then left unserved, and
    /// none is refused by the server itself. A mounted service inherits the host server's
    /// policy.
    ///
    /// The default is four times the default of
    /// [`max_concurrent_requests`](Self::max_concurrent_requests): every request in flight holds a connection (HTTP/1.1), so the connection limit must
    /// sit above the request limit, or a request past that limit would wait in the backlog
    /// instead of being answered `503` with `Retry-After`; the rest is room for idle
    /// keep-alive connections, which close after
    /// [`header_read_timeout`](Self::header_read_timeout). It is not sized for tests that
    /// hold more connections at once: the soak's 10,000 calls in flight
    /// (`cargo xtask soak --size full`, `docs/RELIABILITY.md`) raise it explicitly
    /// (`mcp-bench-server --max-connections`), as they raise the request limit, because a
    /// default that large would exceed the open-files limit of most processes and stop
    /// bounding anything.
    pub max_connections: usize,
    /// The `Retry-After` a `503` carries (default 1 s, sent in whole seconds, at least 1).
    pub retry_after: Duration,
    /// How often an SSE stream with nothing to send gets a `: keep-alive` comment
    /// (default 15 s; `None` sends none).
    pub keep_alive_interval: Option<Duration>,
    /// How many notifications of one request may wait for the client before the handler's
    /// next `notify` waits too (default 16).
    pub event_buffer: usize,
    /// How long a client may take to send a request head (default 10 s). hyper starts this
    /// clock as soon as a connection is ready for a request, so it is also how long an idle
    /// keep-alive connection stays open. Past it the connection is closed.
    pub header_read_timeout: Duration,
    /// How long a client may take to send a request body once its head has arrived
    /// (default 30 s). Past it the reply is `408`.
    pub body_read_timeout: Duration,
    /// How long a write to the client may make no progress (default 30 s): a client that
    /// stops reading its stream loses the connection instead of holding a request slot
    /// forever. Only [`HttpServer`](crate::HttpServer) enforces it; a mounted service
    /// inherits the host server's policy.
    pub write_timeout: Duration,
    /// The most header fields a request may carry (default 100, hyper's own). Past it the
    /// connection gets `431`. Only [`HttpServer`](crate::HttpServer) enforces it. Any other
    /// value costs more per request: hyper then sets up its two header arrays element by
    /// element and copies them, where for its default it leaves them uninitialized.
    pub max_headers: usize,
    /// The largest request head in bytes (default 64 KiB, at least 8 KiB): the request line
    /// and the header lines, counted as sent and also with the usual spacing. Past it the
    /// connection gets `431`. Only [`HttpServer`](crate::HttpServer) enforces it.
    pub max_head_bytes: usize,
    /// The `Host` values accepted (default: loopback names, any port). Others get `403`;
    /// this is the DNS-rebinding defence.
    pub allowed_hosts: AllowList,
    /// The `Origin` values accepted when the header is present (default: `http` and `https`
    /// origins on loopback names, any port). Others get `403`.
    pub allowed_origins: AllowList,
    /// How long in-flight requests get to wind down after their tokens fire during
    /// [`RunningServer::shutdown`](crate::RunningServer::shutdown) (default 1 s), before
    /// their connections are dropped.
    pub cancel_grace: Duration,
    /// Whether the server answers `GET /healthz` (liveness: `200` while it serves) and
    /// `GET /readyz` (readiness: `200`, or `503` once
    /// [`RunningServer::set_ready`](crate::RunningServer::set_ready) turned it unready or
    /// a shutdown began) for load balancers and orchestrators (default true). They are
    /// answered before any other check (host, origin, authentication, path), with an empty
    /// body, and say nothing but the status. Served by [`HttpServer`](crate::HttpServer)
    /// only, not by an [`McpService`](crate::McpService) mounted in another router.
    pub health_checks: bool,
    /// The load balancers whose word about the client's address is believed (default
    /// none): from these peers, the client is the rightmost `X-Forwarded-For` address
    /// that is not one of them, or, with [`proxy_protocol`](Self::proxy_protocol), the
    /// source of the PROXY header. Per-address limits then count real clients. From any
    /// other peer, neither is believed.
    pub trusted_proxies: Vec<std::net::IpAddr>,
    /// Whether the trusted proxies open each connection with a PROXY protocol version 2
    /// header (HAProxy's `send-proxy-v2`; default false; feature `proxy-protocol`). A
    /// connection from a trusted
    /// proxy without a valid one, within
    /// [`header_read_timeout`](Self::header_read_timeout), is closed. Needs
    /// [`trusted_proxies`](Self::trusted_proxies).
    pub proxy_protocol: bool,
    /// Which body field each method mirrors into `Mcp-Name` (default: `tools/call` and
    /// `prompts/get` → `params.name`, `resources/read` → `params.uri`). Serving a handler
    /// adds the ones it asks for ([`Handler::mirrored`](mcp_jsonrpc::Handler::mirrored)),
    /// as the server core does for the Tasks extension's `taskId` when it serves tasks.
    pub name_fields: Vec<(Cow<'static, str>, Cow<'static, str>)>,
    /// Where the `Mcp-Param-*` headers of each tool come from. When it is `None` (the
    /// default), serving a handler takes them from the handler
    /// ([`Handler::mirrored`](mcp_jsonrpc::Handler::mirrored)): the server core derives them
    /// from its tools' `x-mcp-header` annotations.
    pub param_headers: Option<Arc<dyn ParamHeaders>>,
    /// What happens to a notification POST (default: accepted and dropped).
    pub on_notification: Option<NotificationHook>,
    /// Who may use the endpoint (default: none, every request is served as it comes). With
    /// one, every request is authenticated from its head before its body is read, and
    /// authorized once decoded; see [`Authenticator`].
    pub authenticator: Option<Arc<dyn Authenticator>>,
    /// Threads that serve the connections of a server started by
    /// [`HttpServer`](crate::HttpServer) (default 0).
    ///
    /// With 0, every connection is a task on the runtime that started the server. With
    /// N ≥ 1, the server starts N threads, each running its own single-threaded tokio
    /// runtime; the accept loop stays on the caller's runtime and hands each connection
    /// to the thread with the fewest open connections, where it stays to the end. A
    /// request then never moves between threads (no work-stealing hand-offs, no cross-thread
    /// wake-ups), which is cheaper per request than a multi-threaded runtime and scales
    /// with cores as long as there are more connections than threads (the
    /// thread-per-core model). Tasks a handler spawns run on its connection's thread.
    /// Ignored by [`McpService`](crate::McpService) mounted in another server.
    pub connection_threads: usize,
    /// How long a connection thread keeps looking for a next request on its connections
    /// before its runtime sleeps (default 50 µs; [`Duration::ZERO`] turns it off; at most
    /// [`MAX_IDLE_POLL`]). Only with [`connection_threads`](Self::connection_threads) ≥ 1.
    ///
    /// On a request/response connection the next request usually comes a few tens of
    /// microseconds after the reply. A thread that sleeps in that gap leaves its CPU idle,
    /// and on a virtual machine whose host does not let idle guest CPUs poll (Linux's
    /// `haltpoll.guest_halt_poll_ns=0`, as on the benchmark's host) waking an idle CPU is
    /// a trip through the hypervisor: tens of microseconds on every request. Looking for
    /// readable sockets (an epoll instance of the thread's own, yielding the CPU between
    /// looks) for a short while keeps the CPU awake for the likely next request: with one
    /// call at a time it cut the benchmark's median round trip by more than a third, and
    /// with sixteen connections on two threads it raised the calls served per second by
    /// about a fifth, for up to this much CPU per idle period.
    ///
    /// The poll stops at once when the thread's CPU is wanted by another thread (a look
    /// that took more than a few microseconds means the thread was preempted). On a
    /// machine whose every CPU is busy, a thread that wakes meanwhile can wait for its
    /// turn until the poll ends: with the benchmark's load driver on the same two CPUs,
    /// the slowest one in a hundred calls took longer (a p99 up to twice as high) while
    /// the median fell. A wake-up from elsewhere (a task another thread finishes, a timer,
    /// a new connection) can wait up to this long too. The poll costs one file descriptor
    /// per thread.
    pub idle_poll: Duration,
}

/// The longest [`HttpServerConfig::idle_poll`] accepted (1 ms).
pub const MAX_IDLE_POLL: Duration = Duration::from_millis(1);

/// The most [`HttpServerConfig::connection_threads`] accepted.
pub const MAX_CONNECTION_THREADS: usize = 1024;

impl Default for HttpServerConfig {
    fn default() -> Self {
        HttpServerConfig {
            path: Some(Cow::Borrowed("/mcp")),
            max_body_bytes: 4 << 20,
            max_concurrent_requests: 1024,
            max_connections: 4096,
            retry_after: Duration::from_secs(1),
            keep_alive_interval: Some(Duration::from_secs(15)),
            event_buffer: 16,
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            write_timeout: Duration::from_secs(30),
            max_headers: HYPER_MAX_HEADERS,
            max_head_bytes: 64 << 10,
            allowed_hosts: AllowList::loopback(),
            allowed_origins: AllowList::loopback(),
            cancel_grace: Duration::from_secs(1),
            health_checks: true,
            trusted_proxies: Vec::new(),
            proxy_protocol: false,
            name_fields: vec![
                (
                    Cow::Borrowed(mcp_types::CallToolRequest::METHOD),
                    Cow::Borrowed("name"),
                ),
                (
                    Cow::Borrowed(mcp_types::GetPromptRequest::METHOD),
                    Cow::Borrowed("name"),
                ),
                (
                    Cow::Borrowed(mcp_types::ReadResourceRequest::METHOD),
                    Cow::Borrowed("uri"),
                ),
            ],
            param_headers: None,
            on_notification: None,
            authenticator: None,
            connection_threads: 0,
            idle_poll: Duration::from_micros(50),
        }
    }
}

impl fmt::Debug for HttpServerConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpServerConfig")
            .field("path", &self.path)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("max_concurrent_requests", &self.max_concurrent_requests)
            .field("max_connections", &self.max_connections)
            .field("retry_after", &self.retry_after)
            .field("keep_alive_interval", &self.keep_alive_interval)
            .field("event_buffer", &self.event_buffer)
            .field("header_read_timeout", &self.header_read_timeout)
            .field("body_read_timeout", &self.body_read_timeout)
            .field("write_timeout", &self.write_timeout)
            .field("max_headers", &self.max_headers)
            .field("max_head_bytes", &self.max_head_bytes)
            .field("allowed_hosts", &self.allowed_hosts)
            .field("allowed_origins", &self.allowed_origins)
            .field("cancel_grace", &self.cancel_grace)
            .field("health_checks", &self.health_checks)
            .field("trusted_proxies", &self.trusted_proxies)
            .field("proxy_protocol", &self.proxy_protocol)
            .field("name_fields", &self.name_fields)
            .field("param_headers", &self.param_headers.is_some())
            .field("on_notification", &self.on_notification.is_some())
            .field("authenticator", &self.authenticator.is_some())
            .field("connection_threads", &self.connection_threads)
            .field("idle_poll", &self.idle_poll)
            .finish()
    }
}

impl HttpServerConfig {
    /// Serves the endpoint at `path` (which must start with `/`).
    #[must_use]
    pub fn path(mut self, path: impl Into<Cow<'static, str>>) -> Self {
        self.path = Some(path.into());
        self
    }

    /// Serves every path: for a service mounted in a router that routes by path already
    /// (and may strip a prefix before the service sees the request).
    #[must_use]
    pub fn any_path(mut self) -> Self {
        self.path = None;
        self
    }

    /// Sets [`max_body_bytes`](Self::max_body_bytes).
    #[must_use]
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// Sets [`max_concurrent_requests`](Self::max_concurrent_requests).
    #[must_use]
    pub fn max_concurrent_requests(mut self, requests: usize) -> Self {
        self.max_concurrent_requests = requests;
        self
    }

    /// Sets [`max_connections`](Self::max_connections).
    #[must_use]
    pub fn max_connections(mut self, connections: usize) -> Self {
        self.max_connections = connections;
        self
    }

    /// Sets [`retry_after`](Self::retry_after).
    #[must_use]
    pub fn retry_after(mut self, after: Duration) -> Self {
        self.retry_after = after;
        self
    }

    /// Sets [`keep_alive_interval`](Self::keep_alive_interval).
    #[must_use]
    pub fn keep_alive_interval(mut self, interval: Option<Duration>) -> Self {
        self.keep_alive_interval = interval;
        self
    }

    /// Sets [`event_buffer`](Self::event_buffer).
    #[must_use]
    pub fn event_buffer(mut self, events: usize) -> Self {
        self.event_buffer = events;
        self
    }

    /// Sets [`header_read_timeout`](Self::header_read_timeout).
    #[must_use]
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout;
        self
    }

    /// Sets [`body_read_timeout`](Self::body_read_timeout).
    #[must_use]
    pub fn body_read_timeout(mut self, timeout: Duration) -> Self {
        self.body_read_timeout = timeout;
        self
    }

    /// Sets [`write_timeout`](Self::write_timeout).
    #[must_use]
    pub fn write_timeout(mut self, timeout: Duration) -> Self {
        self.write_timeout = timeout;
        self
    }

    /// Sets [`max_headers`](Self::max_headers).
    #[must_use]
    pub fn max_headers(mut self, headers: usize) -> Self {
        self.max_headers = headers;
        self
    }

    /// Sets [`max_head_bytes`](Self::max_head_bytes).
    #[must_use]
    pub fn max_head_bytes(mut self, bytes: usize) -> Self {
        self.max_head_bytes = bytes;
        self
    }

    /// Sets [`allowed_hosts`](Self::allowed_hosts).
    #[must_use]
    pub fn allowed_hosts(mut self, hosts: AllowList) -> Self {
        self.allowed_hosts = hosts;
        self
    }

    /// Sets [`allowed_origins`](Self::allowed_origins).
    #[must_use]
    pub fn allowed_origins(mut self, origins: AllowList) -> Self {
        self.allowed_origins = origins;
        self
    }

    /// Sets [`health_checks`](Self::health_checks).
    #[must_use]
    pub fn health_checks(mut self, on: bool) -> Self {
        self.health_checks = on;
        self
    }

    /// Sets [`trusted_proxies`](Self::trusted_proxies).
    #[must_use]
    pub fn trusted_proxies(mut self, proxies: impl IntoIterator<Item = std::net::IpAddr>) -> Self {
        self.trusted_proxies = proxies.into_iter().collect();
        self
    }

    /// Sets [`proxy_protocol`](Self::proxy_protocol).
    #[must_use]
    pub fn proxy_protocol(mut self, on: bool) -> Self {
        self.proxy_protocol = on;
        self
    }

    /// Sets [`cancel_grace`](Self::cancel_grace).
    #[must_use]
    pub fn cancel_grace(mut self, grace: Duration) -> Self {
        self.cancel_grace = grace;
        self
    }

    /// Sets [`connection_threads`](Self::connection_threads).
    #[must_use]
    pub fn connection_threads(mut self, threads: usize) -> Self {
        self.connection_threads = threads;
        self
    }

    /// Sets [`idle_poll`](Self::idle_poll).
    #[must_use]
    pub fn idle_poll(mut self, window: Duration) -> Self {
        self.idle_poll = window;
        self
    }

    /// Mirrors `params.<field>` of `method` into `Mcp-Name` (replacing an earlier entry for
    /// the same method).
    #[must_use]
    pub fn name_field(
        mut self,
        method: impl Into<Cow<'static, str>>,
        field: impl Into<Cow<'static, str>>,
    ) -> Self {
        let method = method.into();
        self.name_fields.retain(|(m, _)| *m != method);
        self.name_fields.push((method, field.into()));
        self
    }

    /// Sets where the `Mcp-Param-*` headers of each tool come from.
    #[must_use]
    pub fn param_headers(mut self, lookup: impl ParamHeaders) -> Self {
        self.param_headers = Some(Arc::new(lookup));
        self
    }

    /// Sets what happens to a notification POST.
    #[must_use]
    pub fn on_notification(
        mut self,
        hook: impl Fn(Notification) -> Result<(), ErrorObject> + Send + Sync + 'static,
    ) -> Self {
        self.on_notification = Some(Arc::new(hook));
        self
    }

    /// Sets the [`authenticator`](Self::authenticator).
    #[must_use]
    pub fn authenticator(mut self, authenticator: impl Authenticator) -> Self {
        self.authenticator = Some(Arc::new(authenticator));
        self
    }

    pub(crate) fn validate(&self) -> Result<(), Error> {
        if self.proxy_protocol && !cfg!(feature = "proxy-protocol") {
            return Err(Error::Config(
                "proxy_protocol needs the `proxy-protocol` feature of mcp-transport-http"
                    .to_owned(),
            ));
        }
        if self.proxy_protocol && self.trusted_proxies.is_empty() {
            return Err(Error::Config(
                "proxy_protocol needs trusted_proxies: the PROXY header is read only from them"
                    .to_owned(),
            ));
        }
        if self.max_concurrent_requests == 0
            || self.max_concurrent_requests > tokio::sync::Semaphore::MAX_PERMITS
        {
            return Err(Error::Config(format!(
                "max_concurrent_requests must be between 1 and {}",
                tokio::sync::Semaphore::MAX_PERMITS
            )));
        }
        if self.connection_threads > MAX_CONNECTION_THREADS {
            return Err(Error::Config(format!(
                "connection_threads must be at most {MAX_CONNECTION_THREADS}"
            )));
        }
        if self.idle_poll > MAX_IDLE_POLL {
            return Err(Error::Config(format!(
                "idle_poll must be at most {MAX_IDLE_POLL:?}"
            )));
        }
        if self.max_connections == 0 || self.max_connections > tokio::sync::Semaphore::MAX_PERMITS {
            return Err(Error::Config(format!(
                "max_connections must be between 1 and {}",
                tokio::sync::Semaphore::MAX_PERMITS
            )));
        }
        if let Some(path) = &self.path
            && !path.starts_with('/')
        {
            return Err(Error::Config(format!(
                "the endpoint path `{path}` must start with `/`"
            )));
        }
        Ok(())
    }

    /// Adds what the handler asks to be checked ([`Handler::mirrored`]): its `Mcp-Name`
    /// fields for methods this configuration does not name yet, and its `Mcp-Param-*`
    /// lookup unless [`param_headers`](Self::param_headers) set one.
    ///
    /// [`Handler::mirrored`]: mcp_jsonrpc::Handler::mirrored
    pub(crate) fn adopt(mut self, mirrored: mcp_jsonrpc::Mirrored) -> Self {
        for (method, field) in mirrored.name_fields {
            if self.name_field_of(method).is_none() {
                self.name_fields
                    .push((Cow::Borrowed(method), Cow::Borrowed(field)));
            }
        }
        if self.param_headers.is_none()
            && let Some(lookup) = mirrored.param_headers
        {
            self.param_headers = Some(Arc::new(move |tool: &str| {
                ParamHeader::from_annotations(&lookup(tool))
            }));
        }
        self
    }

    pub(crate) fn name_field_of(&self, method: &str) -> Option<&str> {
        self.name_fields
            .iter()
            .find(|(m, _)| m == method)
            .map(|(_, field)| field.as_ref())
    }
}

/// The `Host` or `Origin` values a server accepts.
///
/// Values are parsed strictly before they are compared, so that no prefix or suffix of a
/// value can pass for an allowed one: a host is `name[:port]` (RFC 9110 §7.2, RFC 3986
/// §3.2.2) where the name is a bracketed IPv6 address or letters, digits, `-`, `.` and
/// `_` (a DNS name or an IPv4 address), with no user information, no empty port and nothing
/// after the port; an origin is `scheme://host[:port]` (RFC 6454 §6.2) with no path, not
/// even `/`. A value that does not parse is refused, and so is an entry that does not.
///
/// Names are compared without ASCII case, IPv6 addresses as addresses. A host entry
/// without a port (`example.com`) accepts any port; one with a port (`example.com:8443`)
/// only that one. An origin entry is a whole origin (`https://app.example.com`), its port
/// included. [`AllowList::loopback`] accepts `localhost`, `127.0.0.1` and `[::1]` with any
/// port (for origins, over `http` or `https`).
///
/// ```
/// use mcp_transport_http::AllowList;
///
/// let hosts = AllowList::loopback().with("mcp.example.com");
/// assert!(hosts.allows_host("localhost:8080"));
/// assert!(hosts.allows_host("MCP.example.com:443"));
/// assert!(!hosts.allows_host("evil.example.com"));
/// assert!(!hosts.allows_host("[::1].evil.example"));
///
/// let origins = AllowList::loopback();
/// assert!(origins.allows_origin("http://127.0.0.1:5173"));
/// assert!(!origins.allows_origin("https://evil.example.com"));
/// assert!(!origins.allows_origin("http://[::1]evil"));
/// assert!(!origins.allows_origin("null"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowList {
    loopback: bool,
    any: bool,
    entries: Vec<Box<str>>,
}

impl AllowList {
    /// Loopback names only (the default).
    pub fn loopback() -> Self {
        AllowList {
            loopback: true,
            any: false,
            entries: Vec::new(),
        }
    }

    /// Nothing at all: for origins, every request that carries an `Origin` is refused.
    pub fn none() -> Self {
        AllowList {
            loopback: false,
            any: false,
            entries: Vec::new(),
        }
    }

    /// Everything: the check is off. Only for a server behind a proxy that checks instead.
    pub fn any() -> Self {
        AllowList {
            loopback: false,
            any: true,
            entries: Vec::new(),
        }
    }

    /// The same list with `entry` accepted too.
    #[must_use]
    pub fn with(mut self, entry: impl Into<String>) -> Self {
        self.entries.push(entry.into().into_boxed_str());
        self
    }

    /// Whether a `Host` value (`name[:port]`) is accepted.
    pub fn allows_host(&self, host: &str) -> bool {
        if self.any {
            return true;
        }
        let Some(host) = HostPort::parse(host) else {
            return false;
        };
        (self.loopback && host.name.is_loopback())
            || self.entries.iter().any(|entry| {
                HostPort::parse(entry).is_some_and(|entry| {
                    entry.name == host.name && entry.port.is_none_or(|port| host.port == Some(port))
                })
            })
    }

    /// Whether an `Origin` value (`scheme://host[:port]`) is accepted.
    pub fn allows_origin(&self, origin: &str) -> bool {
        if self.any {
            return true;
        }
        let Some(origin) = Origin::parse(origin) else {
            return false;
        };
        (self.loopback
            && (origin.scheme.eq_ignore_ascii_case("http")
                || origin.scheme.eq_ignore_ascii_case("https"))
            && origin.host.name.is_loopback())
            || self
                .entries
                .iter()
                .any(|entry| Origin::parse(entry).is_some_and(|entry| entry == origin))
    }
}

/// A host name: a bracketed IPv6 address, or a DNS name or IPv4 address as written.
#[derive(Debug, Clone, Copy)]
enum Name<'a> {
    Ipv6(std::net::Ipv6Addr),
    Reg(&'a str),
}

impl PartialEq for Name<'_> {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Name::Ipv6(a), Name::Ipv6(b)) => a == b,
            (Name::Reg(a), Name::Reg(b)) => a.eq_ignore_ascii_case(b),
            _ => false,
        }
    }
}

impl Name<'_> {
    fn is_loopback(&self) -> bool {
        match self {
            Name::Ipv6(address) => *address == std::net::Ipv6Addr::LOCALHOST,
            Name::Reg(name) => {
                name.eq_ignore_ascii_case("localhost") || name.eq_ignore_ascii_case("127.0.0.1")
            }
        }
    }
}

/// `name[:port]`, parsed strictly (see [`AllowList`]).
#[derive(Debug, Clone, Copy, PartialEq)]
struct HostPort<'a> {
    name: Name<'a>,
    port: Option<u16>,
}

impl<'a> HostPort<'a> {
    fn parse(text: &'a str) -> Option<Self> {
        let (name, rest) = if let Some(inside) = text.strip_prefix('[') {
            let (address, rest) = inside.split_once(']')?;
            // Only an IPv6 address; a zone or an IPvFuture literal is refused.
            (Name::Ipv6(address.parse().ok()?), rest)
        } else {
            let end = text.find(':').unwrap_or(text.len());
            let name = &text[..end];
            let valid = !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'));
            if !valid {
                return None;
            }
            (Name::Reg(name), &text[end..])
        };
        let port = match rest.strip_prefix(':') {
            None if rest.is_empty() => None,
            None => return None,
            Some(digits) => Some(port(digits)?),
        };
        Some(HostPort { name, port })
    }
}

/// A port: one to five digits that fit in 16 bits.
fn port(digits: &str) -> Option<u16> {
    if digits.is_empty() || digits.len() > 5 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// `scheme://host[:port]`, parsed strictly (see [`AllowList`]).
#[derive(Debug, Clone, Copy)]
struct Origin<'a> {
    scheme: &'a str,
    host: HostPort<'a>,
}

impl PartialEq for Origin<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.scheme.eq_ignore_ascii_case(other.scheme) && self.host == other.host
    }
}

impl<'a> Origin<'a> {
    fn parse(text: &'a str) -> Option<Self> {
        let (scheme, host) = text.split_once("://")?;
        // RFC 3986 §3.1: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )
        let mut bytes = scheme.bytes();
        let valid = bytes.next().is_some_and(|b| b.is_ascii_alphabetic())
            && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
        if !valid {
            return None;
        }
        Some(Origin {
            scheme,
            host: HostPort::parse(host)?,
        })
    }
}

/// One `Mcp-Param-{Name}` header a tool declares with `x-mcp-header`: the header's name and
/// the path of `properties` keys from the arguments' root to the value it mirrors
/// (<https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>, Custom Headers from Tool
/// Parameters).
///
/// ```
/// use mcp_transport_http::ParamHeader;
///
/// let region = ParamHeader::new("Region", ["region"]).unwrap();
/// assert_eq!(region.header_name().as_str(), "mcp-param-region");
/// assert!(ParamHeader::new("Bad Name", ["x"]).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamHeader {
    header: HeaderName,
    path: Box<[Box<str>]>,
}

impl ParamHeader {
    /// The header `Mcp-Param-{name}` mirroring the argument at `path`. `name` must be an
    /// HTTP field-name token (RFC 9110 §5.1) and `path` must not be empty.
    pub fn new<P: Into<Box<str>>>(
        name: &str,
        path: impl IntoIterator<Item = P>,
    ) -> Result<Self, Error> {
        let path: Box<[Box<str>]> = path.into_iter().map(Into::into).collect();
        match crate::headers::param_header_name(name) {
            Some(header) if !path.is_empty() => Ok(ParamHeader { header, path }),
            _ => Err(Error::ParamHeaderName(name.to_owned())),
        }
    }

    /// The full header name, lowercase (`mcp-param-region`).
    pub fn header_name(&self) -> &HeaderName {
        &self.header
    }

    /// The path of `properties` keys to the mirrored argument.
    pub fn path(&self) -> &[Box<str>] {
        &self.path
    }

    /// The transport's headers for a tool's `x-mcp-header` annotations, as
    /// [`mcp_types::mcp_param_headers`] found them in its input schema (a server core's
    /// `param_headers(tool)`); an annotation whose name is no field-name token is left out.
    pub fn from_annotations(annotations: &[mcp_types::McpParamHeader]) -> Option<Arc<[Self]>> {
        let headers: Vec<ParamHeader> = annotations
            .iter()
            .filter_map(|h| ParamHeader::new(&h.header, h.path.iter().map(String::as_str)).ok())
            .collect();
        (!headers.is_empty()).then(|| Arc::from(headers))
    }
}

/// Where the transport learns which `Mcp-Param-*` headers a tool declares. The server core,
/// which owns the tool definitions, implements it; so does any
/// `Fn(&str) -> Option<Arc<[ParamHeader]>>`.
///
/// ```
/// use std::sync::Arc;
/// use mcp_transport_http::{HttpServerConfig, ParamHeader};
///
/// let region: Arc<[ParamHeader]> = Arc::new([ParamHeader::new("Region", ["region"]).unwrap()]);
/// let config = HttpServerConfig::default().param_headers(move |tool: &str| {
///     (tool == "execute_sql").then(|| Arc::clone(&region))
/// });
/// # let _ = config;
/// ```
pub trait ParamHeaders: Send + Sync + 'static {
    /// The headers the tool named `tool` declares; `None` when it declares none or does not
    /// exist. Called once per `tools/call`, so it should be a lookup, not a computation.
    fn param_headers(&self, tool: &str) -> Option<Arc<[ParamHeader]>>;
}

impl<F> ParamHeaders for F
where
    F: Fn(&str) -> Option<Arc<[ParamHeader]>> + Send + Sync + 'static,
{
    fn param_headers(&self, tool: &str) -> Option<Arc<[ParamHeader]>> {
        self(tool)
    }
}

/// The DNS-rebinding and cross-origin checks of one request, as every endpoint applies them
/// (`HttpServerConfig`'s [`allowed_hosts`](HttpServerConfig::allowed_hosts) and
/// [`allowed_origins`](HttpServerConfig::allowed_origins)): the host the request names must
/// be on `hosts` (a target in absolute form names it, and a `Host` header, which must still
/// be single and well-formed, is then ignored: RFC 9112 §3.2.2; otherwise the one `Host`
/// header), and an `Origin`, when present, must be single and on `origins`. `Err` is the
/// status and the reason to refuse with.
pub fn check_host_and_origin(
    hosts: &AllowList,
    origins: &AllowList,
    target: &http::Uri,
    headers: &http::HeaderMap,
) -> Result<(), (http::StatusCode, &'static str)> {
    let host = match (
        target.authority(),
        crate::headers::single(headers, http::header::HOST),
    ) {
        (_, Err(_)) => None,
        (Some(authority), Ok(_)) => Some(authority.as_str()),
        (None, Ok(host)) => host,
    };
    let Some(host) = host else {
        return Err((
            http::StatusCode::BAD_REQUEST,
            "a single Host header is required",
        ));
    };
    if !hosts.allows_host(host) {
        tracing::debug!(host, "refused a request for a host not on the allow-list");
        return Err((http::StatusCode::FORBIDDEN, "the Host is not allowed"));
    }
    match crate::headers::single(headers, http::header::ORIGIN) {
        Ok(None) => Ok(()),
        Ok(Some(origin)) if origins.allows_origin(origin) => Ok(()),
        _ => {
            tracing::debug!("refused a request from an origin not on the allow-list");
            Err((http::StatusCode::FORBIDDEN, "the Origin is not allowed"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_parsed_strictly() {
        let parsed = |text| HostPort::parse(text).map(|h| (h.name, h.port));
        assert_eq!(
            parsed("localhost:80"),
            Some((Name::Reg("localhost"), Some(80)))
        );
        assert_eq!(
            parsed("[::1]:8080"),
            Some((Name::Ipv6(std::net::Ipv6Addr::LOCALHOST), Some(8080)))
        );
        assert_eq!(
            parsed("[0:0:0:0:0:0:0:1]"),
            Some((Name::Ipv6(std::net::Ipv6Addr::LOCALHOST), None))
        );
        assert_eq!(
            parsed("example.com"),
            Some((Name::Reg("example.com"), None))
        );
        assert_eq!(parsed("a.example:65535").unwrap().1, Some(65535));
        for bad in [
            "",
            ":80",
            "[::1].evil.example",
            "[::1]evil",
            "[::1]:80x",
            "[::1]:",
            "[::1",
            "[fe80::1%25eth0]",
            "[v1.x]",
            "[127.0.0.1]",
            "localhost:",
            "localhost:80x",
            "localhost:65536",
            "localhost:000080",
            "localhost:80:80",
            "user@localhost",
            "localhost@evil.example",
            "localhost/mcp",
            "localhost ",
            " localhost",
            "local host",
            "localhost%00",
        ] {
            assert_eq!(parsed(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn host_entries_with_and_without_ports() {
        let list = AllowList::none().with("a.example").with("b.example:8443");
        for (host, allowed) in [
            ("a.example", true),
            ("a.example:1", true),
            ("A.EXAMPLE:1", true),
            ("b.example:8443", true),
            ("b.example", false),
            ("b.example:1", false),
            ("localhost", false),
            ("a.example.evil", false),
            ("user@a.example", false),
        ] {
            assert_eq!(list.allows_host(host), allowed, "{host}");
        }
        assert!(AllowList::any().allows_host("anything"));
        // An entry that is not a host matches nothing.
        assert!(
            !AllowList::none()
                .with("a.example/")
                .allows_host("a.example")
        );
    }

    #[test]
    fn loopback_hosts() {
        let list = AllowList::loopback();
        for yes in [
            "localhost",
            "LOCALHOST:1",
            "127.0.0.1",
            "127.0.0.1:8080",
            "[::1]",
            "[::1]:8080",
            "[0::1]:1",
        ] {
            assert!(list.allows_host(yes), "{yes}");
        }
        for no in [
            "[::1].evil.example",
            "[::1]evil",
            "[::1]:80x",
            "localhost.evil.example",
            "127.0.0.1.evil.example",
            "evil@localhost",
            "localhost:80/x",
            "[::2]",
            "127.0.0.2",
        ] {
            assert!(!list.allows_host(no), "{no}");
        }
    }

    #[test]
    fn origins() {
        let list = AllowList::loopback().with("https://app.example");
        for (origin, allowed) in [
            ("http://localhost", true),
            ("https://[::1]:3000", true),
            ("HTTPS://APP.example", true),
            ("https://app.example:443", false),
            ("https://app.example/", false),
            ("https://user@app.example", false),
            ("ftp://localhost", false),
            ("http://localhost.evil.example", false),
            ("http://[::1]evil", false),
            ("http://[::1].evil.example", false),
            ("http://[::1]/path", false),
            ("http://localhost:3000/", false),
            ("http://user@localhost", false),
            ("http://localhost:3000 x", false),
            ("//localhost", false),
            ("1http://localhost", false),
            ("null", false),
        ] {
            assert_eq!(list.allows_origin(origin), allowed, "{origin}");
        }
        assert!(!AllowList::none().allows_origin("http://localhost"));
    }

    #[test]
    fn default_config_is_valid() {
        HttpServerConfig::default().validate().unwrap();
        assert!(HttpServerConfig::default().path("mcp").validate().is_err());
        let none = HttpServerConfig::default().max_concurrent_requests(0);
        assert!(none.validate().is_err());
        let none = HttpServerConfig::default().max_connections(0);
        assert!(none.validate().is_err());
        HttpServerConfig::default()
            .max_connections(1)
            .validate()
            .unwrap();
        let config = HttpServerConfig::default().name_field("tasks/get", "taskId");
        assert_eq!(config.name_field_of("tasks/get"), Some("taskId"));
        assert_eq!(config.name_field_of("resources/read"), Some("uri"));
        assert_eq!(config.name_field_of("tools/list"), None);
    }

    #[test]
    fn param_headers_from_schema_annotations() {
        let schema: mcp_types::JsonObject = serde_json::from_value(serde_json::json!({
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "nested": {"type": "object", "properties": {"id": {"type": "integer", "x-mcp-header": "Item-Id"}}}
            }
        }))
        .unwrap();
        let annotations = mcp_types::mcp_param_headers(&schema).unwrap();
        let headers = ParamHeader::from_annotations(&annotations).unwrap();
        let mut found: Vec<(&str, Vec<&str>)> = headers
            .iter()
            .map(|h| {
                (
                    h.header_name().as_str(),
                    h.path().iter().map(|p| &**p).collect(),
                )
            })
            .collect();
        found.sort();
        assert_eq!(
            found,
            [
                ("mcp-param-item-id", vec!["nested", "id"]),
                ("mcp-param-region", vec!["region"])
            ]
        );
        assert!(ParamHeader::from_annotations(&[]).is_none());
    }
}
