//! Both eras on one Streamable HTTP endpoint: [`DualEraHttp`] serves modern requests
//! through the 2026-07-28 endpoint of `mcp-transport-http` untouched, and legacy clients
//! (2025-11-25 back to 2025-03-26) with sessions, as
//! `docs/2026-07-28/basic/transports/streamable-http.mdx` (Backward Compatibility) and
//! `docs/2026-07-28/basic/versioning.mdx` allow, following
//! `docs/2025-11-25/basic/transports.mdx` (Streamable HTTP) for the legacy side.
//!
//! Each request is classified before any modern validation:
//!
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
//!   (128 random bits, hex) sent in `Mcp-Session-Id`. Past
//!   [`LegacyHttpConfig::max_sessions`] a new one is refused with `503`; a session idle
//!   for [`LegacyHttpConfig::session_idle_timeout`] (no request, no open GET stream)
//!   ends. An unknown or ended session gets `404`, so its client initializes again;
//!   DELETE ends one.
//! - A POST's requests run on their own tasks, not on the connection: a client that
//!   disconnects has not cancelled (`notifications/cancelled` does). What a request sends
//!   (notifications, server-to-client requests, its response) goes to a resumable stream:
//!   a plain JSON reply when the response is all there is, otherwise an SSE stream whose
//!   events carry ids `<stream>-<seq>`. A GET with `Last-Event-ID` resumes that stream
//!   after that event, on a new connection. Sessions of 2025-11-25 get a priming event
//!   (id, empty data, `retry`) first.
//! - Server-to-client requests (`elicitation/create`, `sampling/createMessage`,
//!   `roots/list`, for a handler's `input_required`) go on the stream of the request
//!   that needs them; the client POSTs the answer, which is routed by its id.
//! - The GET stream carries change notifications (list changes, updates of subscribed
//!   resources); one per session (a second gets `409`), lossy when nobody listens.
//! - `MCP-Protocol-Version`, when sent, must be an enabled legacy revision (`400`
//!   otherwise); without it a session's negotiated version applies. Batches are accepted
//!   from 2025-03-26 sessions only, up to [`LegacyHttpConfig::max_batch`] messages.
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
mod log;
#[cfg(feature = "http-sse")]
mod sse;
mod state;

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::{Buf, Bytes};
use http::header::{
    ACCEPT, ACCEPT_ENCODING, CACHE_CONTROL, CONTENT_ENCODING, CONTENT_TYPE, HOST, ORIGIN,
    RETRY_AFTER,
};
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, Response, StatusCode};
use http_body::Body;
use http_body_util::{BodyExt, Empty, Full, Limited, StreamBody};
use mcp_jsonrpc::{
    CancellationToken, DecodeOptions, Decoded, ErrorObject, Handler, Message, Notification,
    NotificationSink, Peer, RequestContext, TransportInfo, decode, encode_error, encode_raw_result,
};
use mcp_transport_http::Authenticator;
use mcp_transport_http::{Endpoint, HttpServer, HttpServerConfig, McpService, RunningServer};
use mcp_types::ErrorCode;
use serde_json::value::RawValue;
use tokio::sync::mpsc;

use self::body::{BodyKind, FutureKind};
pub use self::body::{DualEraBody, DualEraFuture};
pub use self::config::LegacyHttpConfig;
use self::log::{EventLog, Pacing, parse_event_id, priming_event};
use self::state::{HttpSession, answer, new_session_id, notify};
pub(crate) use self::state::{Notifier, Outbound};
use crate::Error;
use crate::session::{self, Link, lock};

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
    path: Option<String>,
    allowed_hosts: mcp_transport_http::AllowList,
    allowed_origins: mcp_transport_http::AllowList,
    authenticator: Option<Arc<dyn Authenticator>>,
    max_body_bytes: usize,
    body_read_timeout: Duration,
    keep_alive: Option<Duration>,
    retry_after: HeaderValue,
    sessions: Arc<Sessions>,
    last_sweep: Mutex<Instant>,
    /// The parent of every session's token.
    root: CancellationToken,
}

/// The open legacy sessions by id.
type Sessions = Mutex<HashMap<String, Arc<HttpSession>>>;

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
}

impl<H: Handler> DualEraHttp<H> {
    /// The endpoint for `handler`: modern requests are served with `http`, legacy
    /// sessions with `legacy` (and the allow-lists, path and body limits of `http`).
    pub fn new(
        handler: H,
        http: HttpServerConfig,
        legacy: LegacyHttpConfig,
    ) -> Result<Self, Error> {
        let inner = Arc::new(handler);
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
            legacy,
            sessions: Arc::default(),
            last_sweep: Mutex::new(Instant::now()),
            root: CancellationToken::new(),
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

    /// How many legacy sessions are open.
    pub fn sessions(&self) -> usize {
        lock(&self.shared.sessions).len()
    }

    /// Answers one HTTP request. A POST that names its method in `Mcp-Method` (every
    /// modern request does; a legacy client never sends the header) and carries no
    /// session goes straight to the modern endpoint, which checks everything else.
    pub fn handle<B>(&self, request: Request<B>) -> DualEraFuture
    where
        B: Body + Send + 'static,
        B::Data: Buf + Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        if self.shared.is_modern(&request) {
            return DualEraFuture(FutureKind::Modern(self.shared.modern.handle(request)));
        }
        let shared = Arc::clone(&self.shared);
        DualEraFuture(FutureKind::Legacy(Box::pin(shared.route(request))))
    }
}

impl<H: Handler> Endpoint for DualEraHttp<H> {
    type Body = DualEraBody;
    type Future = DualEraFuture;

    fn call(&self, request: Request<mcp_transport_http::RequestBody>) -> Self::Future {
        self.handle(request)
    }

    fn cancel_all(&self) {
        self.shared.modern.cancel_all();
        self.shared.root.cancel();
        for session in lock(&self.shared.sessions).values() {
            session.end();
        }
    }
}

impl<H: Handler> Shared<H> {
    /// A POST without a session that names a method other than `initialize` in
    /// `Mcp-Method`, outside the HTTP+SSE paths: a modern request.
    #[cfg_attr(not(feature = "http-sse"), allow(clippy::unused_self))]
    fn is_modern<B>(&self, request: &Request<B>) -> bool {
        let headers = request.headers();
        let modern = request.method() == Method::POST
            && !headers.contains_key(SESSION_ID)
            && headers
                .get(MCP_METHOD)
                .is_some_and(|m| m.as_bytes() != b"initialize");
        #[cfg(feature = "http-sse")]
        let modern = modern && !self.is_sse_transport(request);
        modern
    }

    async fn route<B>(self: Arc<Self>, request: Request<B>) -> Response<DualEraBody>
    where
        B: Body + Send + 'static,
        B::Data: Buf + Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        #[cfg(feature = "http-sse")]
        if self.is_sse_transport(&request) {
            if let Some(refused) = self.refuse_host_or_origin(request.headers()) {
                return refused;
            }
            self.sweep();
            return self.sse_transport(request).await;
        }
        if self
            .path
            .as_deref()
            .is_some_and(|p| request.uri().path() != p)
        {
            return self.modern(request).await;
        }
        if let Some(refused) = self.refuse_host_or_origin(request.headers()) {
            return refused;
        }
        self.sweep();
        let session_id = request
            .headers()
            .get(SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        // Every request the legacy side serves is authenticated first, a session's too:
        // its id is no credential.
        let legacy = matches!(
            (request.method(), &session_id),
            (&Method::POST, _) | (&Method::GET | &Method::DELETE, Some(_))
        );
        let caller = if legacy {
            match self.authenticate(request.headers()).await {
                Ok(caller) => caller,
                Err(refused) => return refused,
            }
        } else {
            None
        };
        match (request.method(), session_id) {
            (&Method::POST, Some(id)) => self.session_post(&id, &caller, request).await,
            (&Method::GET, Some(id)) => self.session_get(&id, &caller, request.headers()),
            (&Method::DELETE, Some(id)) => self.session_delete(&id, &caller),
            (&Method::POST, None) => {
                // A modern client names every request in `Mcp-Method`; a legacy one
                // never does.
                let modern = request
                    .headers()
                    .get(MCP_METHOD)
                    .is_some_and(|m| m.as_bytes() != b"initialize");
                if modern {
                    return self.modern(request).await;
                }
                let (head, body) = request.into_parts();
                let bytes = match self.read_body(&head.headers, body).await {
                    Ok(bytes) => bytes,
                    Err(refused) => return refused,
                };
                match decode(&bytes, DecodeOptions::default()) {
                    // `initialize` with modern `_meta` is a modern request for a method
                    // 2026-07-28 removed (`404` with -32601), not a legacy handshake.
                    Ok(Decoded::Single(Message::Request(r)))
                        if r.method == "initialize"
                            && !session::has_modern_meta(r.params.as_ref()) =>
                    {
                        self.initialize(&head.headers, &caller, r).await
                    }
                    _ => {
                        self.modern(Request::from_parts(head, Full::new(bytes)))
                            .await
                    }
                }
            }
            _ => self.modern(request).await,
        }
    }

    async fn modern<B>(&self, request: Request<B>) -> Response<DualEraBody>
    where
        B: Body + Send + 'static,
        B::Data: Buf + Send,
    {
        match self.modern.handle(request).await {
            Ok(response) => response.map(|body| DualEraBody(BodyKind::Modern(body))),
            Err(never) => match never {},
        }
    }

    fn refuse_host_or_origin(&self, headers: &HeaderMap) -> Option<Response<DualEraBody>> {
        let mut hosts = headers.get_all(HOST).iter();
        let host = match (hosts.next(), hosts.next()) {
            (Some(host), None) => host.to_str().ok(),
            _ => None,
        };
        if !host.is_some_and(|h| self.allowed_hosts.allows_host(h)) {
            return Some(refusal(StatusCode::FORBIDDEN, "the Host is not allowed"));
        }
        let mut origins = headers.get_all(ORIGIN).iter();
        match (origins.next(), origins.next()) {
            (None, _) => None,
            (Some(origin), None)
                if origin
                    .to_str()
                    .is_ok_and(|o| self.allowed_origins.allows_origin(o)) =>
            {
                None
            }
            _ => Some(refusal(StatusCode::FORBIDDEN, "the Origin is not allowed")),
        }
    }

    /// Ends the sessions idle for too long, at most once a second.
    fn sweep(&self) {
        {
            let mut last = lock(&self.last_sweep);
            if last.elapsed() < Duration::from_secs(1) {
                return;
            }
            *last = Instant::now();
        }
        let idle = self.legacy.session_idle_timeout;
        let mut ended = Vec::new();
        lock(&self.sessions).retain(|_, session| {
            let alive = session.get.has_reader() || lock(&session.last_seen).elapsed() < idle;
            if !alive {
                ended.push(Arc::clone(session));
            }
            alive
        });
        for session in ended {
            tracing::debug!("a legacy session expired");
            session.end();
        }
    }

    async fn read_body<B>(
        &self,
        headers: &HeaderMap,
        body: B,
    ) -> Result<Bytes, Response<DualEraBody>>
    where
        B: Body + Send + 'static,
        B::Data: Buf + Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let declared = headers
            .get(http::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|n| n > self.max_body_bytes as u64) {
            return Err(too_large(self.max_body_bytes));
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

    /// A new legacy session, from its `initialize` request.
    async fn initialize(
        &self,
        headers: &HeaderMap,
        caller: &auth::Caller,
        request: mcp_jsonrpc::Request,
    ) -> Response<DualEraBody> {
        if let Some(refused) = refuse_content(headers) {
            return refused;
        }
        if lock(&self.sessions).len() >= self.legacy.max_sessions {
            let mut response = refusal_with(
                StatusCode::SERVICE_UNAVAILABLE,
                ErrorCode::INTERNAL_ERROR,
                "too many sessions; retry later",
            );
            response
                .headers_mut()
                .insert(RETRY_AFTER, self.retry_after.clone());
            return response;
        }
        let id = request.id.clone();
        let token = self.root.child_token();
        let (tx, _rx) = mpsc::channel(1);
        let cx = RequestContext::new(id.clone(), token.clone(), NotificationSink::channel(tx))
            .with_transport_info(auth::transport_info(headers, caller));
        let (session, result) =
            match session::initialize(&*self.inner, &self.legacy.versions, request, cx).await {
                Ok(done) => done,
                Err(error) => {
                    let status = if error.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION {
                        StatusCode::BAD_REQUEST
                    } else {
                        StatusCode::OK
                    };
                    return json(status, encode_error(Some(&id), &error));
                }
            };
        let session_id = new_session_id();
        let mut http = HttpSession::new(Some(session), true).owned_by(caller);
        http.token = token;
        let http = Arc::new(http);
        self.start_relay(&http).await;
        lock(&self.sessions).insert(session_id.clone(), http);
        let body = encode_raw_result(&id, &result);
        let mut response = json(StatusCode::OK, body);
        if let Ok(value) = HeaderValue::from_str(&session_id) {
            response.headers_mut().insert(SESSION_ID, value);
        }
        response
    }

    /// Starts the relay of change notifications to the session's GET stream.
    async fn start_relay(&self, http: &Arc<HttpSession>) {
        if let Some(legacy) = http.session.get() {
            let outbound = self.outbound(http, Arc::clone(&http.get));
            session::relisten(&self.inner, legacy, &Link::Http(&outbound)).await;
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

    /// The session `id` of `caller`; `404` for one that does not exist or is another
    /// principal's.
    #[allow(clippy::result_large_err)]
    fn find(
        &self,
        id: &str,
        caller: &auth::Caller,
    ) -> Result<Arc<HttpSession>, Response<DualEraBody>> {
        match lock(&self.sessions).get(id) {
            Some(session) if session.belongs_to(caller) => {
                session.touch();
                Ok(Arc::clone(session))
            }
            _ => Err(json(
                StatusCode::NOT_FOUND,
                encode_error(
                    None,
                    &ErrorObject::new(SESSION_NOT_FOUND, "Session not found: initialize again"),
                ),
            )),
        }
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

    async fn session_post<B>(
        self: Arc<Self>,
        id: &str,
        caller: &auth::Caller,
        request: Request<B>,
    ) -> Response<DualEraBody>
    where
        B: Body + Send + 'static,
        B::Data: Buf + Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let session = match self.find(id, caller) {
            Ok(session) => session,
            Err(unknown) => return unknown,
        };
        let (head, body) = request.into_parts();
        if let Some(refused) =
            refuse_content(&head.headers).or_else(|| self.refuse_version(&head.headers))
        {
            return refused;
        }
        let bytes = match self.read_body(&head.headers, body).await {
            Ok(bytes) => bytes,
            Err(refused) => return refused,
        };
        let mut options = DecodeOptions::default();
        if session.version() == "2025-03-26" {
            options.max_batch = Some(self.legacy.max_batch);
        }
        let (messages, batch) = match decode(&bytes, options) {
            Ok(Decoded::Single(message)) => (vec![Ok(message)], false),
            Ok(Decoded::Batch(messages)) => (messages, true),
            Ok(_) => return refusal(StatusCode::BAD_REQUEST, "unreadable message"),
            Err(e) => {
                return json(
                    StatusCode::BAD_REQUEST,
                    encode_error(e.id.as_ref(), &e.to_error_object()),
                );
            }
        };

        let mut requests = Vec::new();
        let mut errors = Vec::new();
        for message in messages {
            match message {
                Ok(Message::Request(request)) => requests.push(request),
                Ok(Message::Response(response)) => answer(&session, response),
                Ok(Message::Notification(notification)) => notify(&session, &notification),
                Ok(_) => {}
                Err(e) => errors.push(encode_error(e.id.as_ref(), &e.to_error_object())),
            }
        }
        if requests.is_empty() && errors.is_empty() {
            return empty(StatusCode::ACCEPTED);
        }
        // All or nothing: a batch with one request the principal may not make runs none.
        if let Err(refused) = self.authorize_all(caller, &requests) {
            return refused;
        }
        let Some(log) = self.open_stream(&session) else {
            return refusal(
                StatusCode::SERVICE_UNAVAILABLE,
                "too many open streams in this session",
            );
        };
        let remaining = Arc::new(AtomicUsize::new(requests.len()));
        let single = !batch && errors.is_empty();
        // Without requests, the last error response ends the stream.
        let count = errors.len();
        for (i, error) in errors.into_iter().enumerate() {
            log.append(error, requests.is_empty() && i + 1 == count)
                .await;
        }
        let info = auth::transport_info(&head.headers, caller);
        for request in requests {
            self.spawn_request(&session, &log, &remaining, request, Arc::clone(&info), true);
        }

        if single && let Some(frame) = log.first_or_only().await {
            lock(&session.streams).remove(&log.stream());
            return json(StatusCode::OK, frame);
        }
        let priming = (session.version() >= "2025-11-25")
            .then(|| priming_event(log.stream(), self.legacy.retry));
        sse(log.reader(0, priming, self.pacing(&session)))
    }

    /// A new request stream for `session`, making room among finished ones; `None` at
    /// the cap.
    fn open_stream(&self, session: &HttpSession) -> Option<Arc<EventLog>> {
        let mut streams = lock(&session.streams);
        if streams.len() >= self.legacy.max_streams_per_session {
            streams.retain(|_, log| !log.drained() || log.has_reader());
        }
        if streams.len() >= self.legacy.max_streams_per_session {
            return None;
        }
        let number = session.next_stream.fetch_add(1, Ordering::Relaxed);
        let log = EventLog::new(number, false);
        streams.insert(number, Arc::clone(&log));
        Some(log)
    }

    /// Runs one request of a session on a task of its own: a disconnect is not a
    /// cancellation (`docs/2025-11-25/basic/transports.mdx`), the session's end and the
    /// client's `notifications/cancelled` are.
    /// With `finishes`, the last response ends the stream (a POST's stream); without, the
    /// stream goes on (the single stream of the HTTP+SSE transport).
    fn spawn_request(
        self: &Arc<Self>,
        session: &Arc<HttpSession>,
        log: &Arc<EventLog>,
        remaining: &Arc<AtomicUsize>,
        request: mcp_jsonrpc::Request,
        info: Arc<TransportInfo>,
        finishes: bool,
    ) {
        let token = session.token.child_token();
        lock(&session.running).insert(request.id.clone(), token.clone());
        let shared = Arc::clone(self);
        let session = Arc::clone(session);
        let log = Arc::clone(log);
        let remaining = Arc::clone(remaining);
        tokio::spawn(async move {
            let id = request.id.clone();
            let (tx, mut rx) = mpsc::channel(NOTIFICATION_BUFFER);
            let cx = RequestContext::new(id.clone(), token.clone(), NotificationSink::channel(tx))
                .with_transport_info(info);
            let outbound = shared.outbound(&session, Arc::clone(&log));
            let link = Link::Http(&outbound);
            let run = async {
                match session.session.get() {
                    Some(legacy) => session::serve(&shared.inner, legacy, request, cx, &link).await,
                    None => Err(ErrorObject::new(
                        ErrorCode::INVALID_REQUEST,
                        format!(
                            "{} before initialize: send initialize first",
                            request.method
                        ),
                    )),
                }
            };
            let mut run = std::pin::pin!(run);
            let outcome = loop {
                tokio::select! {
                    biased;
                    () = token.cancelled() => break None,
                    Some(frame) = rx.recv() => log.append(frame, false).await,
                    outcome = &mut run => break Some(outcome),
                }
            };
            lock(&session.running).remove(&id);
            while let Ok(frame) = rx.try_recv() {
                log.append(frame, false).await;
            }
            let last = remaining.fetch_sub(1, Ordering::AcqRel) == 1 && finishes;
            match outcome {
                Some(outcome) => {
                    let frame = match outcome {
                        Ok(result) => encode_raw_result(&id, &result),
                        Err(error) => encode_error(Some(&id), &error),
                    };
                    log.append(frame, last).await;
                }
                // Cancelled: no response (`docs/2025-11-25/basic/utilities/cancellation.mdx`).
                None if last => log.finish(),
                None => {}
            }
        });
    }

    fn session_get(
        &self,
        id: &str,
        caller: &auth::Caller,
        headers: &HeaderMap,
    ) -> Response<DualEraBody> {
        let session = match self.find(id, caller) {
            Ok(session) => session,
            Err(unknown) => return unknown,
        };
        if !accepts(headers, "text/event-stream") {
            return refusal(
                StatusCode::NOT_ACCEPTABLE,
                "Accept must list text/event-stream",
            );
        }
        if let Some(refused) = self.refuse_version(headers) {
            return refused;
        }
        if let Some(last) = headers.get(LAST_EVENT_ID) {
            // The id is the client's word: a number this session never gave (malformed,
            // out of range, or past its stream's end) is refused, never computed with.
            let Some((stream, seq)) = last.to_str().ok().and_then(parse_event_id) else {
                return refusal(StatusCode::BAD_REQUEST, "Last-Event-ID is not one of ours");
            };
            let log = if stream == GET_STREAM {
                Some(Arc::clone(&session.get))
            } else {
                lock(&session.streams).get(&stream).cloned()
            };
            return match log {
                Some(log) if log.has_numbered(seq) => {
                    sse(log.reader(seq, None, self.pacing(&session)))
                }
                Some(_) => refusal(StatusCode::BAD_REQUEST, "Last-Event-ID is not one of ours"),
                None => refusal(
                    StatusCode::BAD_REQUEST,
                    "the stream of Last-Event-ID cannot be resumed",
                ),
            };
        }
        if session.get.has_reader() {
            return refusal(
                StatusCode::CONFLICT,
                "this session's GET stream is already open",
            );
        }
        let priming = (session.version() >= "2025-11-25")
            .then(|| priming_event(GET_STREAM, self.legacy.retry));
        sse(session
            .get
            .reader(session.get.delivered(), priming, self.pacing(&session)))
    }

    fn session_delete(&self, id: &str, caller: &auth::Caller) -> Response<DualEraBody> {
        let removed = {
            let mut sessions = lock(&self.sessions);
            match sessions.get(id) {
                Some(session) if session.belongs_to(caller) => sessions.remove(id),
                _ => None,
            }
        };
        let Some(session) = removed else {
            return refusal_with(
                StatusCode::NOT_FOUND,
                SESSION_NOT_FOUND,
                "Session not found",
            );
        };
        session.end();
        empty(StatusCode::OK)
    }
}

fn accepts(headers: &HeaderMap, media: &str) -> bool {
    headers.get_all(ACCEPT).iter().any(|v| {
        v.to_str().is_ok_and(|v| {
            v.split(',').any(|item| {
                let item = item.split(';').next().unwrap_or_default().trim();
                item.eq_ignore_ascii_case(media) || item == "*/*"
            })
        })
    })
}

/// The legacy POST rules: a JSON body, and an `Accept` listing JSON and SSE.
fn refuse_content(headers: &HeaderMap) -> Option<Response<DualEraBody>> {
    let json_body = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
    if !json_body {
        return Some(refusal(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "the body must be Content-Type: application/json",
        ));
    }
    // Bodies are read as they are: a compressed one is refused (RFC 9110 §15.5.16), as on
    // the modern endpoint.
    let encoded = headers.get_all(CONTENT_ENCODING).iter().any(|value| {
        value.to_str().map_or(true, |value| {
            value.split(',').any(|coding| {
                let coding = coding.trim();
                !coding.is_empty() && !coding.eq_ignore_ascii_case("identity")
            })
        })
    });
    if encoded {
        let mut response = refusal(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "the body must not be compressed (Content-Encoding: identity only)",
        );
        response
            .headers_mut()
            .insert(ACCEPT_ENCODING, HeaderValue::from_static("identity"));
        return Some(response);
    }
    if !accepts(headers, "application/json") || !accepts(headers, "text/event-stream") {
        return Some(refusal(
            StatusCode::NOT_ACCEPTABLE,
            "Accept must list application/json and text/event-stream",
        ));
    }
    None
}

fn empty(status: StatusCode) -> Response<DualEraBody> {
    let mut response = Response::new(DualEraBody::legacy(Empty::new()));
    *response.status_mut() = status;
    response
}

fn json(status: StatusCode, body: Bytes) -> Response<DualEraBody> {
    let mut response = Response::new(DualEraBody::legacy(Full::new(body)));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

fn sse<S>(events: S) -> Response<DualEraBody>
where
    S: futures_util::Stream<Item = Result<http_body::Frame<Bytes>, Infallible>> + Send + 'static,
{
    let mut response = Response::new(DualEraBody::legacy(StreamBody::new(events)));
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(X_ACCEL_BUFFERING, HeaderValue::from_static("no"));
    response
}

fn refusal(status: StatusCode, message: &str) -> Response<DualEraBody> {
    refusal_with(status, ErrorCode::INVALID_REQUEST, message)
}

fn refusal_with(status: StatusCode, code: ErrorCode, message: &str) -> Response<DualEraBody> {
    json(status, encode_error(None, &ErrorObject::new(code, message)))
}

fn too_large(limit: usize) -> Response<DualEraBody> {
    refusal(
        StatusCode::PAYLOAD_TOO_LARGE,
        &format!("the request body exceeds the limit of {limit} bytes"),
    )
}
