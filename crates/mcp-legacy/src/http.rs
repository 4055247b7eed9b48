//! Both eras on one Streamable HTTP endpoint: [`DualEraHttp`] serves modern requests
//! through the 2026-07-28 endpoint of `mcp-transport-http` untouched, and legacy clients
//! (2025-11-25 back to 2025-03-26) with sessions, as the 2026-07-28 transport
//! (<https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>,
//! Backward Compatibility) and versioning
//! (<https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning>) allow,
//! following the 2025-11-25 Streamable HTTP transport
//! (<https://modelcontextprotocol.io/specification/2025-11-25/basic/transports>) for the
//! legacy side.
//!
//! Each request is classified before any modern validation, by its protocol version
//! first:
//!
//! - a request whose `MCP-Protocol-Version` names no legacy revision (2026-07-28) → the
//!   modern endpoint, whatever else it carries: a stale `Mcp-Session-Id` beside it is
//!   ignored, as the 2026-07-28 transport says a modern server ignores it (Earlier
//!   Streamable HTTP Revisions);
//! - an `Mcp-Session-Id` header, a GET or a DELETE with one → the legacy session;
//! - a POST whose body is an `initialize` request without modern `_meta` → a new legacy
//!   session;
//! - everything else (a POST carrying `Mcp-Method` other than `initialize` is known
//!   modern without reading its body) → the modern endpoint, which also answers GET and
//!   DELETE without a session with `405`.
//!
//! Legacy sessions:
//!
//! - A session exists only once its `initialize` succeeded, under an unguessable id
//!   (128 bits from the operating system's random source, hex) sent in
//!   `Mcp-Session-Id`; without randomness the `initialize` is refused with `503`, never
//!   given a guessable id. An unknown or ended session gets `404`, so its client
//!   initializes again; DELETE ends one.
//! - Sessions are capped for all clients together ([`LegacyHttpConfig::max_sessions`]),
//!   per authenticated principal and per address of unauthenticated clients. At a cap
//!   the new session takes the place of an idle one under that cap (never completed
//!   first, then least recently used); `503` comes only when every session under the
//!   cap is busy (`table.rs`). A session not completed (`notifications/initialized` or a
//!   later message) within [`LegacyHttpConfig::session_grace`] ends, and so does one idle
//!   for [`LegacyHttpConfig::session_idle_timeout`] (no request running, no stream open).
//! - Every request a session runs, and every HTTP+SSE request, holds a slot of the
//!   server's concurrency limit (`HttpServerConfig::max_concurrent_requests`), the same
//!   slots modern requests take, from its head to its end: past it `503` with
//!   `Retry-After`.
//! - Path and method, `Host` and `Origin`, `Content-Type`, `Content-Encoding`, `Accept`,
//!   a `Content-Length` over the limit, `MCP-Protocol-Version`, authentication, the
//!   session and the concurrency slot are decided from the head, before a byte of the
//!   body is read: a refusal goes out at once.
//! - A POST's requests run on their own tasks, not on the connection: a client that
//!   disconnects has not cancelled (`notifications/cancelled` does). What a request sends
//!   (notifications, server-to-client requests, its response) goes to a resumable stream:
//!   a plain JSON reply when the response is all there is, otherwise an SSE stream whose
//!   events carry ids `<stream>-<seq>`. A GET with `Last-Event-ID` resumes that stream
//!   after that event, on a new connection; an id this server never gave (malformed, out
//!   of range, or past the stream's end) gets `400`. Sessions of 2025-11-25 get a priming
//!   event (id, empty data, `retry`) first.
//! - Server-to-client requests (`elicitation/create`, `sampling/createMessage`,
//!   `roots/list`, for a handler's `input_required`) go on the stream of the request
//!   that needs them; the client POSTs the answer, which is routed by its id.
//! - The GET stream carries change notifications (list changes, updates of subscribed
//!   resources); one per session (a second gets `409`), lossy when nobody listens.
//! - `MCP-Protocol-Version`, when sent on a session's request, must be an enabled legacy
//!   revision (`400` otherwise); without it a session's negotiated version applies.
//!   Batches are accepted from 2025-03-26 sessions only, up to
//!   [`LegacyHttpConfig::max_batch`] messages.
//! - `Host` and `Origin` are checked against the same allow-lists as modern requests
//!   (`403`), before anything else.
//! - With an [`Authenticator`] in the
//!   `HttpServerConfig`, every legacy request is authenticated and authorized by it as
//!   modern ones are (its `401`/`403` sent as they are), handlers see the principal and
//!   not the credentials, and a session belongs to the principal that initialized it:
//!   another principal gets `404` for it (`auth.rs`).
//!
//! With the `http-sse` feature, the 2024-11-05 HTTP+SSE transport is served beside the
//! endpoint (its own GET and POST paths; see `sse.rs`).

mod auth;
mod body;
mod config;
#[cfg(feature = "session-redis")]
mod fleet;
mod log;
mod requests;
mod respond;
#[cfg(feature = "http-sse")]
mod sse;
mod state;
pub mod store;
mod table;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::{Buf, Bytes};
use http::header::{CONTENT_LENGTH, RETRY_AFTER};
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, Response, StatusCode, Uri};
use http_body::Body;
use http_body_util::{BodyExt, Full, Limited};
use mcp_jsonrpc::{
    CancellationToken, DecodeOptions, Decoded, ErrorObject, Handler, Message, Notification,
    NotificationSink, Peer, RequestContext, TransportInfo, decode,
};
use mcp_transport_http::{
    Authenticator, ConcurrencySlot, Endpoint, HttpServer, HttpServerConfig, McpService,
    RunningServer,
};
use mcp_types::ErrorCode;
use serde_json::value::RawValue;

use self::body::{BodyKind, FutureKind};
pub use self::body::{DualEraBody, DualEraFuture};
pub use self::config::LegacyHttpConfig;
use self::log::{EventLog, Pacing};
use self::respond::{
    accepts, empty, encode_not_found, json, refusal, refusal_with, refuse_content, sse, too_large,
};
#[cfg(feature = "metrics")]
pub use self::state::SESSIONS_GAUGE;
use self::state::{HttpSession, RandomSource, new_session_id};
pub(crate) use self::state::{Notifier, Outbound};
#[cfg(feature = "session-redis")]
pub use self::store::RedisSessionStoreBuilder;
pub use self::store::SessionStore;
use self::table::{Bucket, Caps, InUse, SessionTable};
use crate::Error;
use crate::session::{self, LEGACY_VERSIONS, lock};

const SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
const PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
const MCP_METHOD: HeaderName = HeaderName::from_static("mcp-method");
const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");
const X_ACCEL_BUFFERING: HeaderName = HeaderName::from_static("x-accel-buffering");
/// The JSON-RPC code of an unknown session, as the reference SDKs send it.
const SESSION_NOT_FOUND: ErrorCode = ErrorCode(-32001);
/// How many notifications of one request may wait to be written to its stream.
const NOTIFICATION_BUFFER: usize = 32;
/// The stream number of a session's GET stream.
const GET_STREAM: u64 = 0;
/// The refusal of a request past the server's concurrency limit.
const TOO_MANY_REQUESTS: &str = "too many concurrent requests; retry later";
/// The refusal of a session past a cap whose every session is busy.
const TOO_MANY_SESSIONS: &str = "too many sessions; retry later";

/// One endpoint serving both eras with the same handler; see the [module docs](self).
///
/// ```
/// use mcp_legacy::http::{DualEraHttp, LegacyHttpConfig};
/// use mcp_transport_http::{HttpServer, HttpServerConfig};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let server = mcp_server::Server::builder("demo", "1.0.0").build().unwrap();
/// let running = DualEraHttp::bind(
///     HttpServer::DEFAULT_ADDR,
///     server,
///     HttpServerConfig::default(),
///     LegacyHttpConfig::default(),
/// )
/// .await
/// .unwrap();
/// assert!(running.url().starts_with("http://127.0.0.1:"));
/// running.shutdown(std::time::Duration::from_secs(1)).await;
/// # });
/// ```
pub struct DualEraHttp<H> {
    shared: Arc<Shared<H>>,
}

impl<H> Clone for DualEraHttp<H> {
    fn clone(&self) -> Self {
        DualEraHttp {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<H> std::fmt::Debug for DualEraHttp<H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DualEraHttp")
            .field("legacy", &self.shared.legacy)
            .field("sessions", &lock(&self.shared.sessions).len())
            .finish_non_exhaustive()
    }
}

struct Shared<H> {
    inner: Arc<H>,
    modern: McpService<Core<H>>,
    legacy: LegacyHttpConfig,
    caps: Caps,
    path: Option<String>,
    allowed_hosts: mcp_transport_http::AllowList,
    allowed_origins: mcp_transport_http::AllowList,
    authenticator: Option<Arc<dyn Authenticator>>,
    max_body_bytes: usize,
    body_read_timeout: Duration,
    keep_alive: Option<Duration>,
    retry_after: HeaderValue,
    sessions: Arc<Sessions>,
    /// When the sessions were last swept, in milliseconds since `started`: read by
    /// every request, so an atomic rather than a lock all connection threads share.
    last_sweep: AtomicU64,
    started: Instant,
    /// The parent of every session's token.
    root: CancellationToken,
    /// Where session ids come from: the operating system's random source (a test puts
    /// a failing one in its place).
    random: RandomSource,
    /// The shared session store, when sessions are kept in Redis (`store.rs`); `None`
    /// for sessions in this instance's memory.
    #[cfg(feature = "session-redis")]
    fleet: Option<Arc<store::RedisSessions>>,
}

/// The open legacy sessions.
type Sessions = Mutex<SessionTable>;

/// The wrapped core, shared by the modern endpoint and the legacy sessions.
struct Core<H>(Arc<H>);

impl<H: Handler> Handler for Core<H> {
    async fn request(
        &self,
        request: mcp_jsonrpc::Request,
        cx: RequestContext,
    ) -> Result<Box<RawValue>, ErrorObject> {
        self.0.request(request, cx).await
    }

    fn notification(&self, notification: Notification, peer: &Peer) {
        self.0.notification(notification, peer);
    }

    fn mirrored(&self) -> mcp_jsonrpc::Mirrored {
        self.0.mirrored()
    }
}

impl<H: Handler> DualEraHttp<H> {
    /// The endpoint for `handler`: modern requests are served with `http`, legacy
    /// sessions with `legacy` (and the allow-lists, path, body limits and concurrency
    /// limit of `http`).
    pub fn new(
        handler: H,
        http: HttpServerConfig,
        legacy: LegacyHttpConfig,
    ) -> Result<Self, Error> {
        let inner = Arc::new(handler);
        let sessions: Arc<Sessions> = Arc::default();
        #[cfg(feature = "session-redis")]
        let fleet = legacy.session_store.shared().cloned();
        #[cfg(feature = "session-redis")]
        if let Some(fleet) = &fleet {
            // The store was connected within a runtime; the endpoint needs one too.
            let runtime = tokio::runtime::Handle::try_current().map_err(|e| {
                Error::SessionStore(Box::new(std::io::Error::other(format!(
                    "a DualEraHttp with a shared session store must be made within a tokio runtime: {e}"
                ))))
            })?;
            fleet.register(&sessions);
            runtime.spawn(fleet::keep_alive(
                Arc::downgrade(&sessions),
                Arc::downgrade(fleet),
                legacy.session_idle_timeout,
            ));
        }
        let shared = Shared {
            path: http.path.as_deref().map(str::to_owned),
            allowed_hosts: http.allowed_hosts.clone(),
            allowed_origins: http.allowed_origins.clone(),
            authenticator: http.authenticator.clone(),
            max_body_bytes: http.max_body_bytes,
            body_read_timeout: http.body_read_timeout,
            keep_alive: http.keep_alive_interval.filter(|d| !d.is_zero()),
            retry_after: HeaderValue::from(http.retry_after.as_secs().max(1)),
            modern: McpService::new(Core(Arc::clone(&inner)), http)?,
            inner,
            caps: Caps::new(&legacy),
            legacy,
            sessions,
            last_sweep: AtomicU64::new(0),
            started: Instant::now(),
            root: CancellationToken::new(),
            random: getrandom::fill,
            #[cfg(feature = "session-redis")]
            fleet,
        };
        Ok(DualEraHttp {
            shared: Arc::new(shared),
        })
    }

    /// Binds `addr` and serves both eras there until [`RunningServer::shutdown`]. Must
    /// be called within a tokio runtime.
    pub async fn bind(
        addr: SocketAddr,
        handler: H,
        http: HttpServerConfig,
        legacy: LegacyHttpConfig,
    ) -> Result<RunningServer, Error> {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| Error::Bind { addr, source })?;
        let limits = http.clone();
        let service = DualEraHttp::new(handler, http, legacy)?;
        Ok(HttpServer::serve_endpoint(listener, service, &limits)?)
    }

    /// Binds `addr` and serves both eras there behind a tower `layer` (a timeout, a rate
    /// limit, tracing, authentication that inserts claims in the request's extensions,
    /// which handlers read), until [`RunningServer::shutdown`]: see
    /// [`HttpServer::serve_endpoint_with_layer`]. The layer wraps this endpoint as a tower
    /// `Service`. Must be called within a tokio runtime.
    pub async fn bind_with_layer<L, B>(
        addr: SocketAddr,
        handler: H,
        http: HttpServerConfig,
        legacy: LegacyHttpConfig,
        layer: L,
    ) -> Result<RunningServer, Error>
    where
        L: tower_layer::Layer<Self>,
        L::Service: tower_service::Service<
                Request<mcp_transport_http::RequestBody>,
                Response = Response<B>,
                Error: Into<Box<dyn std::error::Error + Send + Sync>>,
                Future: Send + 'static,
            > + Clone
            + Send
            + Sync
            + 'static,
        B: Body<Data = Bytes, Error: Into<Box<dyn std::error::Error + Send + Sync>>>
            + Send
            + 'static,
    {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| Error::Bind { addr, source })?;
        let limits = http.clone();
        let service = DualEraHttp::new(handler, http, legacy)?;
        Ok(HttpServer::serve_endpoint_with_layer(
            listener, service, &limits, layer,
        )?)
    }

    /// How many legacy sessions are open.
    pub fn sessions(&self) -> usize {
        lock(&self.shared.sessions).len()
    }

    /// Answers one HTTP request whose client's address is unknown: for the cap on the
    /// sessions of unauthenticated clients, all such requests count as one address (see
    /// [`LegacyHttpConfig::max_sessions_per_address`]). A server that knows the address
    /// calls [`handle_from`](Self::handle_from); [`HttpServer`] does.
    pub fn handle<B>(&self, request: Request<B>) -> DualEraFuture
    where
        B: Body + Send + 'static,
        B::Data: Buf + Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        self.handle_from(request, None)
    }

    /// Answers one HTTP request from `peer`, the address of the client's end of the
    /// connection. A request that states a modern revision in `MCP-Protocol-Version`,
    /// or a POST that names its method in `Mcp-Method` (every modern request does; a
    /// legacy client never sends the header) and carries no session, goes straight to
    /// the modern endpoint, which checks everything else.
    pub fn handle_from<B>(&self, request: Request<B>, peer: Option<SocketAddr>) -> DualEraFuture
    where
        B: Body + Send + 'static,
        B::Data: Buf + Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        if self.shared.is_modern(&request) {
            return DualEraFuture(FutureKind::Modern(self.shared.modern.handle(request)));
        }
        let shared = Arc::clone(&self.shared);
        // Allocated first and the future written into it, not made on the stack and
        // copied whole (as the modern endpoint does).
        let slot = Box::new_uninit();
        let routing = Box::write(slot, async move { shared.route(request, peer).await });
        DualEraFuture(FutureKind::Legacy(Box::into_pin(routing)))
    }
}

impl<H: Handler> Endpoint for DualEraHttp<H> {
    type Body = DualEraBody;
    type Future = DualEraFuture;

    fn call(&self, request: Request<mcp_transport_http::RequestBody>) -> Self::Future {
        self.handle(request)
    }

    fn call_from(
        &self,
        request: Request<mcp_transport_http::RequestBody>,
        peer: SocketAddr,
    ) -> Self::Future {
        self.handle_from(request, Some(peer))
    }

    fn cancel_all(&self) {
        self.shared.modern.cancel_all();
        self.shared.root.cancel();
        // A shutdown, not the end of the sessions: their streams tell clients when to
        // reconnect.
        let retry = self.shared.legacy.retry.unwrap_or(Duration::from_secs(1));
        for session in lock(&self.shared.sessions).values() {
            session.suspend(retry);
        }
    }
}

/// The endpoint as a tower service, to mount in a router (axum's `route_service`) or to
/// wrap in tower layers. The client's address is the request's
/// [`PeerAddr`](mcp_transport_http::PeerAddr) extension when the server put one there
/// (this crate's [`HttpServer`] does), else unknown (see [`DualEraHttp::handle`]).
impl<H: Handler, B> tower_service::Service<Request<B>> for DualEraHttp<H>
where
    B: Body + Send + 'static,
    B::Data: Buf + Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Response = Response<DualEraBody>;
    type Error = Infallible;
    type Future = DualEraFuture;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Infallible>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> DualEraFuture {
        let peer = request
            .extensions()
            .get::<mcp_transport_http::PeerAddr>()
            .map(|peer| peer.0);
        self.handle_from(request, peer)
    }
}

/// A request body the endpoints read: any that [`DualEraHttp::handle`] accepts.
pub(crate) trait RequestBody:
    Body<Data: Buf + Send, Error: Into<Box<dyn std::error::Error + Send + Sync>>> + Send + 'static
{
}

impl<B> RequestBody for B
where
    B: Body + Send + 'static,
    B::Data: Buf + Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
}

/// A POST to a session, admitted ([`Shared::admit_post`]): the request's place in the
/// server's concurrency limit, the caller, the session (busy while the POST is served),
/// the request's head and its body.
type SessionPost = (
    ConcurrencySlot,
    auth::Caller,
    InUse,
    http::request::Parts,
    Bytes,
);

/// What a running request did next.
enum Step {
    Done(Result<Box<RawValue>, ErrorObject>),
    Cancelled,
    Frame(Bytes),
}

/// One request a session runs: what its task holds until it ends.
struct Run {
    /// Keeps the session busy (never evicted) while the request runs.
    session: InUse,
    request: mcp_jsonrpc::Request,
    /// Registered in the session's running requests.
    token: CancellationToken,
    info: Arc<TransportInfo>,
    /// The request's place in the server's concurrency limit.
    slot: ConcurrencySlot,
}

impl Run {
    /// The request's context: cancelled by its token, with its transport's information,
    /// its notifications handed to `notifications`.
    fn context(&self, notifications: NotificationSink) -> RequestContext {
        RequestContext::new(self.request.id.clone(), self.token.clone(), notifications)
            .with_transport_info(Arc::clone(&self.info))
    }
}

impl<H: Handler> Shared<H> {
    /// Whether `request` is the modern endpoint's (see the [module docs](self)): one
    /// that states a revision in `MCP-Protocol-Version` that is no legacy revision,
    /// whatever session header it carries; or a POST without a session that names a
    /// method other than `initialize` in `Mcp-Method`. Never a request for the HTTP+SSE
    /// paths.
    #[cfg_attr(not(feature = "http-sse"), allow(clippy::unused_self))]
    fn is_modern<B>(&self, request: &Request<B>) -> bool {
        #[cfg(feature = "http-sse")]
        if self.is_sse_transport(request) {
            return false;
        }
        let headers = request.headers();
        if let Some(version) = headers.get(PROTOCOL_VERSION) {
            return !LEGACY_VERSIONS
                .iter()
                .any(|legacy| version.as_bytes() == legacy.as_bytes());
        }
        request.method() == Method::POST
            && !headers.contains_key(SESSION_ID)
            && headers
                .get(MCP_METHOD)
                .is_some_and(|m| m.as_bytes() != b"initialize")
    }

    async fn route<B: RequestBody>(
        self: Arc<Self>,
        request: Request<B>,
        peer: Option<SocketAddr>,
    ) -> Response<DualEraBody> {
        #[cfg(feature = "http-sse")]
        if self.is_sse_transport(&request) {
            if let Some(refused) = self.refuse_or_sweep(&request) {
                return refused;
            }
            return Box::pin(self.sse_transport(request, peer)).await;
        }
        if self
            .path
            .as_deref()
            .is_some_and(|p| request.uri().path() != p)
        {
            return self.modern(request).await;
        }
        if let Some(refused) = self.refuse_or_sweep(&request) {
            return refused;
        }
        let session_id = request
            .headers()
            .get(SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        // Every request the legacy side serves is authenticated, a session's too: its id
        // is no credential. This future is as large as its largest branch, and a session's
        // POST (every call) is the one not boxed: the others (a handshake, the GET stream,
        // DELETE, the HTTP+SSE transport) would make it larger for all requests.
        match (request.method(), session_id) {
            (&Method::POST, Some(id)) => self.session_post(&id, request).await,
            (&Method::GET, Some(id)) => Box::pin(self.session_get(&id, request.headers())).await,
            (&Method::DELETE, Some(id)) => {
                Box::pin(self.session_delete(&id, request.headers())).await
            }
            (&Method::POST, None) => Box::pin(self.post_without_session(request, peer)).await,
            _ => self.modern(request).await,
        }
    }

    /// A POST without a session: an `initialize` (without modern `_meta`) opens a legacy
    /// session; any other body is the modern endpoint's.
    async fn post_without_session<B: RequestBody>(
        self: Arc<Self>,
        request: Request<B>,
        peer: Option<SocketAddr>,
    ) -> Response<DualEraBody> {
        // A modern client names every request in `Mcp-Method`; a legacy one never does.
        let modern = request
            .headers()
            .get(MCP_METHOD)
            .is_some_and(|m| m.as_bytes() != b"initialize");
        if modern {
            return self.modern(request).await;
        }
        // Decided from the head, before a byte of the body is read (the modern endpoint
        // refuses the same heads the same way).
        if let Some(refused) =
            refuse_content(request.headers()).or_else(|| self.refuse_length(request.headers()))
        {
            return refused;
        }
        let Some(slot) = self.modern.try_slot() else {
            return self.unavailable(TOO_MANY_REQUESTS);
        };
        let caller = match self.authenticate(request.headers()).await {
            Ok(caller) => caller,
            Err(refused) => return refused,
        };
        let bucket = Bucket::of(&caller, peer);
        // Refused early when no place can be made, before the body and the handshake's
        // work; `initialize` decides for good when it inserts.
        if !lock(&self.sessions).has_room(&bucket, &self.caps) {
            return self.unavailable(TOO_MANY_SESSIONS);
        }
        let (head, body) = request.into_parts();
        let bytes = match self.read_body(&head.headers, body).await {
            Ok(bytes) => bytes,
            Err(refused) => return refused,
        };
        match decode(&bytes, DecodeOptions::default()) {
            // `initialize` with modern `_meta` is a modern request for a method 2026-07-28
            // removed (`404` with -32601), not a legacy handshake.
            Ok(Decoded::Single(Message::Request(r)))
                if r.method == "initialize" && !session::has_modern_meta(r.params.as_ref()) =>
            {
                self.initialize(head, &caller, bucket, r, slot).await
            }
            _ => {
                // The modern endpoint takes a slot of its own.
                drop(slot);
                self.modern(Request::from_parts(head, Full::new(bytes)))
                    .await
            }
        }
    }

    async fn modern<B: RequestBody>(&self, request: Request<B>) -> Response<DualEraBody> {
        match self.modern.handle(request).await {
            Ok(response) => response.map(|body| DualEraBody(BodyKind::Modern(body))),
            Err(never) => match never {},
        }
    }

    /// The modern endpoint's `Host` and `Origin` checks, the same function on the same
    /// lists, so that the two eras cannot judge one request differently.
    fn refuse_host_or_origin(
        &self,
        target: &Uri,
        headers: &HeaderMap,
    ) -> Option<Response<DualEraBody>> {
        mcp_transport_http::check_host_and_origin(
            &self.allowed_hosts,
            &self.allowed_origins,
            target,
            headers,
        )
        .err()
        .map(|(status, reason)| refusal(status, reason))
    }

    /// What every request for the legacy paths passes first: its `Host` and `Origin`
    /// checked ([`refuse_host_or_origin`](Self::refuse_host_or_origin)), and only for a
    /// request they accept, the sessions that are over swept ([`sweep`](Self::sweep)).
    fn refuse_or_sweep<B>(&self, request: &Request<B>) -> Option<Response<DualEraBody>> {
        let refused = self.refuse_host_or_origin(request.uri(), request.headers());
        if refused.is_none() {
            self.sweep();
        }
        refused
    }

    /// Ends the sessions that are over (not completed within the grace period, or idle
    /// too long), at most once a second.
    fn sweep(&self) {
        let now = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let last = self.last_sweep.load(Ordering::Relaxed);
        // One request a second sweeps: the one that moves the time on.
        if now.saturating_sub(last) < 1000
            || self
                .last_sweep
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        let expired = lock(&self.sessions)
            .expire(self.legacy.session_grace, self.legacy.session_idle_timeout);
        for session in expired {
            tracing::debug!(
                completed = session.is_completed(),
                "a legacy session expired"
            );
            session.end();
        }
    }

    /// `503` with `Retry-After`: the server is at a limit, and a later try may succeed.
    fn unavailable(&self, message: &str) -> Response<DualEraBody> {
        let mut response = refusal_with(
            StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::INTERNAL_ERROR,
            message,
        );
        response
            .headers_mut()
            .insert(RETRY_AFTER, self.retry_after.clone());
        response
    }

    /// A `Content-Length` over the body limit, refused from the head.
    fn refuse_length(&self, headers: &HeaderMap) -> Option<Response<DualEraBody>> {
        let declared = headers
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        declared
            .is_some_and(|n| n > self.max_body_bytes as u64)
            .then(|| too_large(self.max_body_bytes))
    }

    async fn read_body<B: RequestBody>(
        &self,
        headers: &HeaderMap,
        body: B,
    ) -> Result<Bytes, Response<DualEraBody>> {
        if let Some(refused) = self.refuse_length(headers) {
            return Err(refused);
        }
        let read = tokio::time::timeout(
            self.body_read_timeout,
            Limited::new(body, self.max_body_bytes).collect(),
        )
        .await;
        match read {
            Ok(Ok(collected)) => Ok(collected.to_bytes()),
            Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => {
                Err(too_large(self.max_body_bytes))
            }
            Ok(Err(_)) => Err(refusal(
                StatusCode::BAD_REQUEST,
                "the request body could not be read",
            )),
            Err(_) => Err(refusal(
                StatusCode::REQUEST_TIMEOUT,
                "the request body did not arrive in time",
            )),
        }
    }

    /// A new session id; `None` (and the reason logged) when the random source fails.
    fn session_id(&self) -> Option<String> {
        match new_session_id(self.random) {
            Ok(id) => Some(id),
            Err(e) => {
                tracing::error!(error = %e, "no random session id can be made; the session is refused");
                None
            }
        }
    }

    /// Inserts a new session, making room under the caps, in one step (`table.rs`); the
    /// sessions evicted for it end. `None` when every session under a cap is busy.
    fn admit(&self, id: String, session: &Arc<HttpSession>) -> Option<InUse> {
        let admitted = lock(&self.sessions).admit(id, session, &self.caps);
        match admitted {
            Ok((in_use, evicted)) => {
                for old in evicted {
                    tracing::debug!(
                        completed = old.is_completed(),
                        "an idle legacy session was evicted for a new one"
                    );
                    old.end();
                }
                Some(in_use)
            }
            Err(_) => None,
        }
    }

    /// The keep-alive period and, for a 2025-11-25 session, when to close a connection
    /// so that its client polls.
    fn pacing(&self, session: &HttpSession) -> Pacing {
        Pacing {
            keep_alive: self.keep_alive,
            close_after: self
                .legacy
                .close_streams_after
                .filter(|_| session.version() >= "2025-11-25"),
        }
    }

    fn outbound(&self, session: &Arc<HttpSession>, log: Arc<EventLog>) -> Outbound {
        Outbound {
            session: Arc::clone(session),
            log,
            ask_timeout: self.legacy.ask_timeout,
            max_pending: self.legacy.max_pending_requests,
        }
    }

    /// The session `id` of `caller`, in use until the returned guard drops; `404` for one
    /// that does not exist or is another principal's. With `complete`, the request
    /// completes the session (it came after `initialize`).
    #[allow(clippy::result_large_err)]
    fn find(
        &self,
        id: &str,
        caller: &auth::Caller,
        complete: bool,
    ) -> Result<InUse, Response<DualEraBody>> {
        let found = lock(&self.sessions).take(id, |session| session.belongs_to(caller));
        match found {
            Some(session) => {
                session.touch();
                if complete {
                    session.complete();
                }
                Ok(session)
            }
            None => Err(encode_not_found()),
        }
    }

    /// Admits a POST to session `id` (of Streamable HTTP, or of the HTTP+SSE transport) whose
    /// head has passed its transport's checks: a slot of the concurrency limit, the caller,
    /// its session (`complete` as for [`find`](Self::find)) and the whole body, in that
    /// order; or the response that refuses it.
    async fn admit_post<B: RequestBody>(
        &self,
        id: &str,
        request: Request<B>,
        complete: bool,
    ) -> Result<SessionPost, Response<DualEraBody>> {
        let Some(slot) = self.modern.try_slot() else {
            return Err(self.unavailable(TOO_MANY_REQUESTS));
        };
        let caller = self.authenticate(request.headers()).await?;
        #[cfg(feature = "session-redis")]
        let session = match &self.fleet {
            Some(fleet) => self.find_shared(fleet, id, &caller).await?,
            None => self.find(id, &caller, complete)?,
        };
        #[cfg(not(feature = "session-redis"))]
        let session = self.find(id, &caller, complete)?;
        let (head, body) = request.into_parts();
        let bytes = self.read_body(&head.headers, body).await?;
        Ok((slot, caller, session, head, bytes))
    }

    /// Checks `MCP-Protocol-Version` against the enabled revisions.
    fn refuse_version(&self, headers: &HeaderMap) -> Option<Response<DualEraBody>> {
        let version = headers.get(PROTOCOL_VERSION)?;
        let known = version
            .to_str()
            .is_ok_and(|v| self.legacy.versions.contains(&v));
        (!known).then(|| {
            refusal(
                StatusCode::BAD_REQUEST,
                "Bad Request: unsupported MCP-Protocol-Version",
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use http::header::{ACCEPT, CONTENT_TYPE};

    use super::*;

    fn broken(_: &mut [u8]) -> Result<(), getrandom::Error> {
        Err(getrandom::Error::UNSUPPORTED)
    }

    fn request(method: Method, path: &str, body: &'static str) -> Request<Full<Bytes>> {
        Request::builder()
            .method(method)
            .uri(path)
            .header(http::header::HOST, "127.0.0.1")
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream")
            .body(Full::new(Bytes::from_static(body.as_bytes())))
            .unwrap()
    }

    #[tokio::test]
    async fn without_randomness_no_session_is_made() {
        let core = mcp_server::Server::builder("random", "1.0.0")
            .build()
            .unwrap();
        let mut service = DualEraHttp::new(
            core,
            HttpServerConfig::default(),
            LegacyHttpConfig::default(),
        )
        .unwrap();
        Arc::get_mut(&mut service.shared).unwrap().random = broken;
        let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;
        let response = service
            .handle(request(Method::POST, "/mcp", initialize))
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(!response.headers().contains_key(SESSION_ID));
        assert_eq!(service.sessions(), 0);

        #[cfg(feature = "http-sse")]
        {
            let response = service
                .handle(request(Method::GET, "/sse", ""))
                .await
                .unwrap();
            assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
            assert_eq!(service.sessions(), 0);
        }
    }
}
