//! A standalone server: a TCP listener, one HTTP/1.1 connection task per client (each
//! served by hyper's server connection), and graceful shutdown.
//!
//! The accept loop owns every connection task in a `JoinSet`; [`RunningServer`] owns the
//! accept loop. It takes a permit of a semaphore of [`HttpServerConfig::max_connections`]
//! before each `accept` and hands it to the connection's task (on a connection thread
//! too), which holds it until the connection ends: at the limit the loop stops accepting
//! and further clients wait in the kernel's listen backlog until a connection closes, so
//! none is accepted and left unserved. An `accept` that fails for want of file
//! descriptors or memory is logged and retried after a short pause instead of in a busy
//! loop. Shutdown stops accepting (the listener is closed), asks every connection to
//! finish its current exchange and close, waits up to the grace period, then fires every
//! request's cancellation token, waits up to [`HttpServerConfig::cancel_grace`] more (a
//! cancelled `subscriptions/listen` handler ends its stream with a result in that time),
//! and finally drops whatever is left.
//!
//! With [`HttpServerConfig::connection_threads`], the connections are served on threads
//! of their own instead (`shards.rs`); the accept loop and the steps of a shutdown stay
//! the same.

use std::convert::Infallible;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{Either, Empty};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use mcp_jsonrpc::{CancellationToken, Handler};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, oneshot};
use tokio::task::{JoinHandle, JoinSet};

use crate::config::{HYPER_MAX_HEADERS, HttpServerConfig};
use crate::error::Error;
use crate::layer::Layered;
use crate::request_body::{ChunkedEnd, RequestBody};
use crate::service::McpService;
use crate::shards::Shards;
use crate::write_timeout::WriteTimeout;

/// Starts MCP servers on their own listeners. See [`McpService`] to mount the endpoint in
/// another server instead.
#[derive(Debug)]
pub struct HttpServer {
    _private: (),
}

impl HttpServer {
    /// The default address: loopback, on a port the system picks
    /// (<https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>, Security: local servers bind
    /// only to localhost).
    pub const DEFAULT_ADDR: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0);

    /// Binds `addr` and serves the MCP endpoint there with `handler`, until
    /// [`RunningServer::shutdown`]. Must be called within a tokio runtime.
    ///
    /// Cancel safety: dropping the future before it completes closes the listener, if it
    /// was bound; no connection has been accepted yet.
    pub async fn bind<H: Handler>(
        addr: SocketAddr,
        handler: H,
        config: HttpServerConfig,
    ) -> Result<RunningServer, Error> {
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| Error::Bind { addr, source })?;
        HttpServer::serve(listener, handler, config)
    }

    /// Serves the MCP endpoint on a listener the caller bound. Must be called within a tokio
    /// runtime.
    pub fn serve<H: Handler>(
        listener: TcpListener,
        handler: H,
        config: HttpServerConfig,
    ) -> Result<RunningServer, Error> {
        let limits = config.clone();
        let service = McpService::new(handler, config)?;
        HttpServer::serve_endpoint(listener, service, &limits)
    }

    /// Binds `addr` and serves the MCP endpoint there with `handler` behind a tower
    /// `layer` (a timeout, a rate limit, tracing, authentication: see
    /// [`serve_endpoint_with_layer`](Self::serve_endpoint_with_layer)), until
    /// [`RunningServer::shutdown`]. Must be called within a tokio runtime.
    pub async fn bind_with_layer<H, L, B>(
        addr: SocketAddr,
        handler: H,
        config: HttpServerConfig,
        layer: L,
    ) -> Result<RunningServer, Error>
    where
        H: Handler,
        L: tower_layer::Layer<McpService<H>>,
        L::Service: tower_service::Service<Request<RequestBody>, Response = Response<B>>
            + Clone
            + Send
            + Sync
            + 'static,
        <L::Service as tower_service::Service<Request<RequestBody>>>::Error:
            Into<Box<dyn std::error::Error + Send + Sync>>,
        <L::Service as tower_service::Service<Request<RequestBody>>>::Future: Send + 'static,
        B: http_body::Body<Data = Bytes, Error: Into<Box<dyn std::error::Error + Send + Sync>>>
            + Send
            + 'static,
    {
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| Error::Bind { addr, source })?;
        let service = McpService::new(handler, config.clone())?;
        HttpServer::serve_endpoint_with_layer(listener, service, &config, layer)
    }

    /// Serves any [`Endpoint`] behind a tower `layer`, as
    /// [`serve_endpoint`](Self::serve_endpoint) does without one: the layers a router
    /// such as axum would run in front of the endpoint (a timeout, a rate limit, tracing,
    /// authentication that inserts claims in the request's extensions, which handlers
    /// read). The layer wraps `endpoint` as a tower `Service` (an [`McpService`] is one);
    /// the server puts each request's [`PeerAddr`](crate::PeerAddr) in its extensions,
    /// clones the layered service, waits until it is ready and calls it. An error of the
    /// layer's service is answered `503` with a JSON-RPC error (-32603) and logged; a layer
    /// that wants another answer handles its errors itself.
    ///
    /// Fails with [`Error::Config`] if `config` is not valid.
    pub fn serve_endpoint_with_layer<E, L, B>(
        listener: TcpListener,
        endpoint: E,
        config: &HttpServerConfig,
        layer: L,
    ) -> Result<RunningServer, Error>
    where
        E: Endpoint,
        L: tower_layer::Layer<E>,
        L::Service: tower_service::Service<Request<RequestBody>, Response = Response<B>>
            + Clone
            + Send
            + Sync
            + 'static,
        <L::Service as tower_service::Service<Request<RequestBody>>>::Error:
            Into<Box<dyn std::error::Error + Send + Sync>>,
        <L::Service as tower_service::Service<Request<RequestBody>>>::Future: Send + 'static,
        B: http_body::Body<Data = Bytes, Error: Into<Box<dyn std::error::Error + Send + Sync>>>
            + Send
            + 'static,
    {
        HttpServer::serve_endpoint(listener, Layered::new(endpoint, &layer), config)
    }

    /// Serves any [`Endpoint`] (an [`McpService`], or a layer around one such as the
    /// dual-era server of `mcp-legacy`) on a listener the caller bound, with the
    /// connection limits and timeouts of `config` and the same graceful shutdown. Must be
    /// called within a tokio runtime.
    ///
    /// Fails with [`Error::Config`] if `config` is not valid (such as a
    /// [`max_connections`](HttpServerConfig::max_connections) of 0).
    pub fn serve_endpoint<E: Endpoint>(
        listener: TcpListener,
        service: E,
        config: &HttpServerConfig,
    ) -> Result<RunningServer, Error> {
        config.validate()?;
        let local_addr = listener.local_addr().map_err(Error::LocalAddr)?;
        let path = config.path.clone().unwrap_or_default();
        let settings = Arc::new(Settings::new(service, config));
        let settings_ready = settings.ready.clone();
        let shards = match config.connection_threads {
            0 => None,
            threads => Some(Shards::start(threads, &settings, config.idle_poll)?),
        };
        let runtimes = shards.as_ref().map(Shards::runtimes).unwrap_or_default();
        let (stop, stopped) = oneshot::channel();
        let task = tokio::spawn(accept_loop(Listener {
            socket: listener,
            settings,
            shards,
            cancel_grace: config.cancel_grace,
            connection_slots: Arc::new(Semaphore::new(config.max_connections)),
            stop: stopped,
        }));
        Ok(RunningServer {
            local_addr,
            ready: settings_ready,
            url: format!("http://{local_addr}{path}"),
            stop: Some(stop),
            task: Some(task),
            runtimes,
        })
    }
}

/// A server started by [`HttpServer`]. Dropping it stops the server at once, cancelling
/// every request; [`shutdown`](RunningServer::shutdown) stops it gracefully.
#[derive(Debug)]
pub struct RunningServer {
    local_addr: SocketAddr,
    ready: Option<Arc<AtomicBool>>,
    url: String,
    stop: Option<oneshot::Sender<Duration>>,
    task: Option<JoinHandle<()>>,
    runtimes: Vec<tokio::runtime::Handle>,
}

impl RunningServer {
    /// The address the server listens on (with the port the system picked for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The runtimes of the connection threads
    /// ([`HttpServerConfig::connection_threads`]; none without them), for their metrics.
    pub fn connection_runtimes(&self) -> &[tokio::runtime::Handle] {
        &self.runtimes
    }

    /// The endpoint's URL, such as `http://127.0.0.1:49152/mcp`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Turns the server ready or unready: what `GET /readyz` answers (`200` or `503`),
    /// for a load balancer to stop sending it requests before it stops
    /// ([`HttpServerConfig::health_checks`]). Serving goes on either way.
    pub fn set_ready(&self, ready: bool) {
        if let Some(flag) = &self.ready {
            flag.store(ready, Ordering::Release);
        }
    }

    /// Whether `GET /readyz` answers `200`.
    pub fn is_ready(&self) -> bool {
        self.ready
            .as_ref()
            .is_some_and(|flag| flag.load(Ordering::Acquire))
    }

    /// Stops accepting connections, lets in-flight requests finish within `grace`, then
    /// cancels the rest (see the module docs for the steps) and returns when every
    /// connection has closed.
    ///
    /// Cancel safety: dropping the future does not stop the shutdown, which goes on in the
    /// background.
    pub async fn shutdown(mut self, grace: Duration) {
        self.set_ready(false);
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(grace);
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        // Aborting the accept loop drops its JoinSet, which aborts every connection task;
        // their dropped responses fire the requests' tokens.
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

/// What [`HttpServer::serve_endpoint`] runs: one HTTP request in, one response out, and
/// a way to cancel everything in flight when the grace period of a shutdown is over.
/// [`McpService`] is one; a layer that wraps it (routing some requests elsewhere) is
/// another.
pub trait Endpoint: Clone + Send + Sync + 'static {
    /// The response body. An error while it is sent aborts the connection, so the client
    /// never takes a cut response for a whole one.
    type Body: http_body::Body<Data = Bytes, Error: Into<Box<dyn std::error::Error + Send + Sync>>>
        + Send
        + 'static;
    /// The response future.
    type Future: Future<Output = Result<Response<Self::Body>, Infallible>> + Send + 'static;

    /// Answers one request.
    fn call(&self, request: Request<RequestBody>) -> Self::Future;

    /// Answers one request that came from `peer`, the address of the client's end of
    /// the connection (an endpoint that bounds something per client needs it). The
    /// server calls this; the default ignores the address and calls [`call`](Self::call).
    fn call_from(&self, request: Request<RequestBody>, peer: SocketAddr) -> Self::Future {
        let _ = peer;
        self.call(request)
    }

    /// Fires the cancellation token of every request in flight and still to come.
    fn cancel_all(&self);
}

impl<H: Handler> Endpoint for McpService<H> {
    type Body = crate::McpBody;
    type Future = crate::ResponseFuture;

    fn call(&self, request: Request<RequestBody>) -> Self::Future {
        self.handle(request)
    }

    fn cancel_all(&self) {
        McpService::cancel_all(self);
    }
}

/// What every connection of a server is served with: shared by the accept loop and the
/// connection threads.
pub(crate) struct Settings<E> {
    pub(crate) service: E,
    /// `/readyz`'s answer; `None` without health checks.
    pub(crate) ready: Option<Arc<AtomicBool>>,
    /// Whose word about the client's address is believed.
    trust: Arc<crate::proxied::Trust>,
    header_read_timeout: Duration,
    builder: http1::Builder,
    pub(crate) write_timeout: Duration,
    pub(crate) max_head_bytes: usize,
}

impl<E> Settings<E> {
    /// What the connections of `service` are served with, from a validated `config`.
    pub(crate) fn new(service: E, config: &HttpServerConfig) -> Self {
        let mut builder = http1::Builder::new();
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(Some(config.header_read_timeout).filter(|d| !d.is_zero()))
            .keep_alive(true)
            // hyper checks its buffer only while a head is incomplete, and refuses a
            // complete head that shares a full buffer with the start of its body; the
            // exact bound is `head_bytes`, so hyper's is the backstop, with room for one
            // read past the limit.
            .max_buf_size(config.max_head_bytes.saturating_add(64 << 10).max(8192))
            // A complete head as it came on the wire, the final CRLF included (so a head
            // of exactly the limit, spaced as usual, passes): `head_bytes` counts only
            // the fields hyper keeps, and hyper keeps one `Content-Length` of several
            // equal ones and none beside `Transfer-Encoding`, so without this those lines
            // would not count at all.
            .max_header_size(config.max_head_bytes.saturating_add(2));
        if config.max_headers != HYPER_MAX_HEADERS {
            builder.max_headers(config.max_headers);
        }
        Settings {
            service,
            ready: config
                .health_checks
                .then(|| Arc::new(AtomicBool::new(true))),
            trust: Arc::new(crate::proxied::Trust::new(
                &config.trusted_proxies,
                config.proxy_protocol,
            )),
            header_read_timeout: config.header_read_timeout,
            builder,
            write_timeout: config.write_timeout,
            max_head_bytes: config.max_head_bytes,
        }
    }
}

struct Listener<E> {
    socket: TcpListener,
    settings: Arc<Settings<E>>,
    /// The connection threads, when there are any.
    shards: Option<Shards>,
    cancel_grace: Duration,
    /// One permit per open connection ([`HttpServerConfig::max_connections`]).
    connection_slots: Arc<Semaphore>,
    stop: oneshot::Receiver<Duration>,
}

/// How long the accept loop pauses after an `accept` that failed for want of resources
/// (`EMFILE`, `ENFILE`, `ENOBUFS`, `ENOMEM`): retrying at once would spin, since the
/// connection stays in the backlog until something else frees a descriptor.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

async fn accept_loop<E: Endpoint>(mut this: Listener<E>) {
    let closing = CancellationToken::new();
    let mut connections = JoinSet::new();
    let shards = this.shards.take();
    // The permit for the next connection, taken before `accept` so that at the limit the
    // loop stops accepting instead of accepting and then waiting.
    let mut slot: Option<OwnedSemaphorePermit> = None;
    let grace = loop {
        tokio::select! {
            biased;
            grace = &mut this.stop => break grace.unwrap_or(Duration::ZERO),
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            permit = Arc::clone(&this.connection_slots).acquire_owned(), if slot.is_none() => {
                // The semaphore is never closed, so this is always a permit.
                slot = permit.ok();
            }
            accepted = this.socket.accept(), if slot.is_some() => match accepted {
                Ok((stream, peer)) => {
                    let Some(permit) = slot.take() else { continue };
                    if let Some(shards) = &shards {
                        shards.dispatch(stream, peer, permit);
                    } else {
                        let connection =
                            serve_connection(&this.settings, stream, closing.clone(), peer);
                        connections.spawn(async move {
                            connection.await;
                            drop(permit);
                        });
                    }
                }
                Err(e) => {
                    // The connection was reset or aborted before it was accepted: nothing
                    // to wait for. Anything else (out of file descriptors or memory) would
                    // fail again at once, so give other work a moment to free some.
                    let transient = matches!(
                        e.kind(),
                        std::io::ErrorKind::ConnectionAborted
                            | std::io::ErrorKind::ConnectionReset
                            | std::io::ErrorKind::Interrupted
                    );
                    tracing::warn!(error = %e, open = connections.len(), "accepting a connection failed");
                    if !transient {
                        tokio::time::sleep(ACCEPT_BACKOFF).await;
                    }
                }
            },
        }
    };

    drop(this.socket);
    let service = &this.settings.service;
    if let Some(shards) = shards {
        shards.shut_down(grace, this.cancel_grace, service).await;
        service.cancel_all();
        return;
    }
    closing.cancel();
    if tokio::time::timeout(grace, drain(&mut connections))
        .await
        .is_err()
    {
        tracing::debug!(
            open = connections.len(),
            "grace period over; cancelling in-flight requests"
        );
        service.cancel_all();
        if tokio::time::timeout(this.cancel_grace, drain(&mut connections))
            .await
            .is_err()
        {
            connections.abort_all();
            drain(&mut connections).await;
        }
    }
    service.cancel_all();
}

/// The size of a request's head as it came on the wire, give or take the spacing: the
/// request line and every header line. hyper's own bound (`max_buf_size`) is only checked
/// while a head is incomplete, so a head that arrives in one large read can pass it by up
/// to one read; this makes [`HttpServerConfig::max_head_bytes`] exact.
pub(crate) fn head_bytes<B>(request: &Request<B>) -> usize {
    // The target's length as written, without formatting it into a string.
    let uri = request.uri();
    let target = uri.scheme_str().map_or(0, |scheme| scheme.len() + 3)
        + uri
            .authority()
            .map_or(0, |authority| authority.as_str().len())
        + uri.path_and_query().map_or(0, |path| path.as_str().len());
    let line = request.method().as_str().len() + target + 12;
    request.headers().iter().fold(line, |total, (name, value)| {
        total + name.as_str().len() + value.len() + 4
    })
}

/// `431`, and the connection closed: the rest of what the client sends cannot be trusted
/// to be a next request.
fn head_too_large<B>() -> Response<Either<B, Empty<Bytes>>> {
    let mut response = Response::new(Either::Right(Empty::new()));
    *response.status_mut() = http::StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE;
    response.headers_mut().insert(
        http::header::CONNECTION,
        http::HeaderValue::from_static("close"),
    );
    response
}

/// The status of a health check (`GET` or `HEAD` of `/healthz` or `/readyz`); `None` for
/// any other request.
fn health<B>(request: &Request<B>, ready: &AtomicBool) -> Option<http::StatusCode> {
    if request.method() != http::Method::GET && request.method() != http::Method::HEAD {
        return None;
    }
    match request.uri().path() {
        "/healthz" => Some(http::StatusCode::OK),
        "/readyz" if ready.load(Ordering::Acquire) => Some(http::StatusCode::OK),
        "/readyz" => Some(http::StatusCode::SERVICE_UNAVAILABLE),
        _ => None,
    }
}

pub(crate) async fn drain(connections: &mut JoinSet<()>) {
    while connections.join_next().await.is_some() {}
}

pub(crate) fn serve_connection<E: Endpoint>(
    this: &Arc<Settings<E>>,
    stream: TcpStream,
    closing: CancellationToken,
    peer: SocketAddr,
) -> impl Future<Output = ()> + Send + 'static {
    // SSE events are small and must go out at once.
    if let Err(e) = stream.set_nodelay(true) {
        tracing::debug!(error = %e, "cannot set TCP_NODELAY");
    }
    let settings = Arc::clone(this);
    async move {
        let mut stream = stream;
        let timeout = settings.header_read_timeout;
        let Some(peer) = settings
            .trust
            .connection_peer(&mut stream, peer, timeout)
            .await
        else {
            return;
        };
        serve_io(&settings, stream, closing, peer).await;
    }
}

/// Serves one connection over any stream with hyper, its writes bounded by
/// [`HttpServerConfig::write_timeout`] (`write_timeout.rs`). A TCP connection comes
/// through [`serve_connection`]; the fuzz target's, in memory, directly.
pub(crate) fn serve_io<E, I>(
    this: &Arc<Settings<E>>,
    io: I,
    closing: CancellationToken,
    peer: SocketAddr,
) -> impl Future<Output = ()> + Send + 'static + use<E, I>
where
    E: Endpoint,
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let settings = Arc::clone(this);
    async move {
        let io = WriteTimeout::new(io, settings.write_timeout);
        serve_with_hyper(&settings, io, closing, peer).await;
    }
}

/// Serves a connection with hyper. A head longer than
/// [`HttpServerConfig::max_head_bytes`] as sent gets `431` and the connection closes
/// ([`head_bytes`]); the response to a chunked request closes the connection unless its
/// body was read to its end without a trailer section ([`ChunkedEnd`] says why).
async fn serve_with_hyper<E, I>(
    this: &Settings<E>,
    io: I,
    closing: CancellationToken,
    peer: SocketAddr,
) where
    E: Endpoint,
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let io = TokioIo::new(io);
    let service = this.service.clone();
    let max_head_bytes = this.max_head_bytes;
    let ready = this.ready.clone();
    let trust = Arc::clone(&this.trust);
    let service = hyper::service::service_fn(move |request: Request<Incoming>| {
        let peer = trust.request_peer(request.headers(), peer);
        let health = ready.as_ref().and_then(|ready| health(&request, ready));
        let refused = health.is_some() || head_bytes(&request) > max_head_bytes;
        // A chunked body must be read to its end, without trailers, for the connection to
        // stay open (`ChunkedEnd`).
        let chunked = request
            .headers()
            .contains_key(http::header::TRANSFER_ENCODING)
            .then(|| Arc::new(ChunkedEnd::default()));
        let call = (!refused).then(|| {
            let body = |body| match &chunked {
                Some(end) => RequestBody::chunked(body, Arc::clone(end)),
                None => RequestBody::from(body),
            };
            service.call_from(request.map(body), peer)
        });
        async move {
            match call {
                Some(call) => call.await.map(|mut response| {
                    if chunked.is_some_and(|end| !end.is_clean()) {
                        response.headers_mut().insert(
                            http::header::CONNECTION,
                            http::HeaderValue::from_static("close"),
                        );
                    }
                    response.map(Either::Left)
                }),
                None => Ok(match health {
                    Some(status) => {
                        let mut response = Response::new(Either::Right(Empty::new()));
                        *response.status_mut() = status;
                        response
                    }
                    None => head_too_large(),
                }),
            }
        }
    });
    let connection = this.builder.serve_connection(io, service);
    let mut connection = pin!(connection);
    let result = tokio::select! {
        result = connection.as_mut() => result,
        () = closing.cancelled() => {
            connection.as_mut().graceful_shutdown();
            connection.await
        }
    };
    if let Err(e) = result {
        tracing::debug!(%peer, error = %e, "connection ended with an error");
    }
}
