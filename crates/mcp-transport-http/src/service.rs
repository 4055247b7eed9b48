//! The MCP endpoint as a service: every rule of
//! <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http> between an HTTP request and a
//! [`Handler`] call, in the order they apply.
//!
//! 0. With an [`Authenticator`](crate::Authenticator), a request it answers itself (a
//!    metadata document) is answered before anything else.
//! 1. The path (`404`), the host (`400` when absent, `403` when not allowed: the target's
//!    authority when it has one, RFC 9112 §3.2.2, else `Host`), `Origin` when present
//!    (`403`), the method (`405` with `Allow: POST`), `Content-Type` (`415`),
//!    `Content-Encoding` other than `identity` (`415` with `Accept-Encoding: identity`),
//!    `Accept` (`406`) and a `Content-Length` over the limit (`413`) are checked from the
//!    head alone, before anything is allocated for the request. Hosts and origins are
//!    parsed strictly ([`AllowList`](crate::AllowList)).
//! 2. A concurrency slot is taken (`503` with `Retry-After` when none is free), the
//!    authenticator (if any) authenticates the head (its refusal, a `401` or `403`, is sent
//!    as it is), and only then is the body read, under the size limit (`413`) and the body
//!    timeout (`408`). hyper's server connection reads no byte of a body the service has
//!    not asked for beyond what came with the head, so a refusal in steps 0 to 2 goes
//!    out as soon as the head has arrived.
//! 3. The body is decoded as one JSON-RPC message: not JSON → `400` with -32700, not a
//!    valid message or a batch → `400` with -32600, a response (clients never send one) →
//!    `400` with -32600.
//! 4. A notification → the notification hook → `202` with no body.
//! 5. A request → the mirrored headers against the body (`400` with -32020, or -32602 for
//!    missing `_meta` fields) → the authenticator's authorization (its refusal as it is)
//!    → the handler. A handler that finishes without a notification
//!    gets a JSON reply; the first notification opens an SSE stream instead. An error reply
//!    takes the status the spec pins for its code: -32601 → `404`, -32020, -32021 and
//!    -32022 → `400`; any other outcome is `200`.

use std::convert::Infallible;
use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use bytes::{Buf, Bytes};
use http::header::{
    ACCEPT_ENCODING, ALLOW, CACHE_CONTROL, CONTENT_LENGTH, CONTENT_TYPE, RETRY_AFTER,
};
use http::{HeaderName, HeaderValue, Method, Request, Response, StatusCode};
use http_body::Body;
use mcp_jsonrpc::{
    CancellationToken, DecodeOptions, Decoded, ErrorObject, Handler, LazyChannel, Message,
    NotificationSink, Params, RequestContext, decode, encode_error,
};
use mcp_types::{ErrorCode, RequestId};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::MissedTickBehavior;

use crate::body::{self, BodyError};
use crate::config::HttpServerConfig;
use crate::error::Error;
use crate::headers;
use crate::mirror::{self, Rejection};
use crate::response::{HandlerFuture, McpBody, SseStream};

const APPLICATION_JSON: HeaderValue = HeaderValue::from_static("application/json");
const EVENT_STREAM: HeaderValue = HeaderValue::from_static("text/event-stream");
const NO_CACHE: HeaderValue = HeaderValue::from_static("no-cache");
const POST: HeaderValue = HeaderValue::from_static("POST");
const NO: HeaderValue = HeaderValue::from_static("no");
const IDENTITY: HeaderValue = HeaderValue::from_static("identity");
const X_ACCEL_BUFFERING: HeaderName = HeaderName::from_static("x-accel-buffering");

/// The MCP endpoint as a hyper and tower service, generic over the [`Handler`] that answers
/// requests. Cloning is cheap and every clone shares one concurrency limit.
///
/// [`HttpServer`](crate::HttpServer) serves it on its own listener; to serve it beside other
/// routes, mount it in a router. With axum:
///
/// ```no_run
/// # use mcp_jsonrpc::{ErrorObject, Handler, Request, RequestContext};
/// # use serde_json::value::RawValue;
/// # struct MyServer;
/// # impl Handler for MyServer {
/// #     async fn request(&self, r: Request, _: RequestContext) -> Result<Box<RawValue>, ErrorObject> {
/// #         Err(ErrorObject::method_not_found(&r.method))
/// #     }
/// # }
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use mcp_transport_http::{HttpServerConfig, McpService};
///
/// let mcp = McpService::new(MyServer, HttpServerConfig::default())?;
/// let app = axum::Router::new()
///     .route("/health", axum::routing::get(|| async { "ok" }))
///     .route_service("/mcp", mcp);
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
/// axum::serve(listener, app).await?;
/// # Ok(())
/// # }
/// ```
pub struct McpService<H> {
    shared: Arc<Shared<H>>,
}

struct Shared<H> {
    handler: H,
    config: HttpServerConfig,
    permits: Arc<Semaphore>,
    /// Fired by [`McpService::cancel_all`]. A request's token is not its child (a child
    /// joins and leaves the parent's list under its lock: two locks of one mutex, shared
    /// by every connection thread, per request); a handler that has to wait watches this
    /// token instead ([`until_shut_down`]), and a request that arrives after it fired gets
    /// a cancelled token (`all_cancelled`).
    root: CancellationToken,
    /// Whether `root` fired, read without its lock.
    all_cancelled: AtomicBool,
    retry_after: HeaderValue,
}

/// A slot of an [`McpService`]'s concurrency limit, taken with [`McpService::try_slot`]
/// and given back when dropped.
#[derive(Debug)]
pub struct ConcurrencySlot {
    _permit: OwnedSemaphorePermit,
}

impl<H> Clone for McpService<H> {
    fn clone(&self) -> Self {
        McpService {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<H> std::fmt::Debug for McpService<H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpService")
            .field("config", &self.shared.config)
            .field("in_flight", &self.in_flight())
            .finish_non_exhaustive()
    }
}

impl<H> McpService<H> {
    /// Fires the cancellation token of every request in flight and of every request still to
    /// come. A host that serves the service itself calls it when it shuts down.
    pub fn cancel_all(&self) {
        self.shared.all_cancelled.store(true, Ordering::Release);
        self.shared.root.cancel();
    }

    /// Takes a slot of this endpoint's concurrency limit
    /// ([`HttpServerConfig::max_concurrent_requests`]) for work served beside it, such as
    /// the legacy sessions of `mcp-legacy`, so that it counts against the same limit as
    /// the endpoint's own requests; `None` when every slot is taken (the endpoint answers
    /// `503` with `Retry-After` then). The slot is given back when the returned value is
    /// dropped.
    pub fn try_slot(&self) -> Option<ConcurrencySlot> {
        Arc::clone(&self.shared.permits)
            .try_acquire_owned()
            .ok()
            .map(|permit| ConcurrencySlot { _permit: permit })
    }

    /// How many requests hold a concurrency slot now (from their body's first byte to their
    /// response's last).
    pub fn in_flight(&self) -> usize {
        self.shared.config.max_concurrent_requests - self.shared.permits.available_permits()
    }
}

impl<H: Handler> McpService<H> {
    /// The endpoint for `handler` with `config`; fails if the configuration cannot work.
    /// What the handler asks to be checked ([`Handler::mirrored`]) is added to `config`.
    pub fn new(handler: H, config: HttpServerConfig) -> Result<Self, Error> {
        config.validate()?;
        let config = config.adopt(handler.mirrored());
        let seconds = config.retry_after.as_secs().max(1);
        let permits = Arc::new(Semaphore::new(config.max_concurrent_requests));
        Ok(McpService {
            shared: Arc::new(Shared {
                handler,
                permits,
                root: CancellationToken::new(),
                all_cancelled: AtomicBool::new(false),
                retry_after: HeaderValue::from(seconds),
                config,
            }),
        })
    }

    /// Answers one HTTP request. The hyper and tower `Service` implementations call this.
    pub fn handle<B>(&self, request: Request<B>) -> ResponseFuture
    where
        B: Body + Send + 'static,
        B::Data: Buf + Send,
    {
        if let Some(auth) = &self.shared.config.authenticator
            && let Some(response) = auth.respond(request.method(), request.uri())
        {
            return ResponseFuture::ready(response.map(|body| McpBody::full(body, None)));
        }
        let (permit, expected) = match self.shared.admit(&request) {
            Ok(admitted) => admitted,
            Err(response) => return ResponseFuture::ready(response),
        };
        let shared = Arc::clone(&self.shared);
        // Written into its box (allocated first), not made on the stack and copied whole:
        // the future is the size of `serve`'s largest state.
        let slot = Box::new_uninit();
        let serving = Box::write(slot, async move {
            Ok(shared.serve(request, permit, expected).await)
        });
        ResponseFuture(State::Running(Box::into_pin(serving)))
    }
}

impl<H: Handler> Shared<H> {
    /// Every check the head alone decides, then a concurrency slot. The error is the
    /// response to send, moved once to the caller.
    #[allow(clippy::result_large_err)]
    fn admit<B>(
        &self,
        request: &Request<B>,
    ) -> Result<(OwnedSemaphorePermit, Option<usize>), Response<McpBody>> {
        let config = &self.config;
        let head = request.headers();
        if let Some(path) = &config.path
            && request.uri().path() != path
        {
            return Err(empty(StatusCode::NOT_FOUND));
        }

        if let Err((status, message)) = crate::config::check_host_and_origin(
            &config.allowed_hosts,
            &config.allowed_origins,
            request.uri(),
            head,
        ) {
            return Err(refusal(status, message));
        }

        if request.method() != Method::POST {
            let mut response = empty(StatusCode::METHOD_NOT_ALLOWED);
            response.headers_mut().insert(ALLOW, POST);
            return Err(response);
        }
        if !headers::is_json_content(head) {
            return Err(refusal(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "the body must be Content-Type: application/json",
            ));
        }
        if headers::is_encoded(head) {
            // RFC 9110 §15.5.16: an unsupported content coding is a 415, and
            // `Accept-Encoding` says which codings are accepted.
            let mut response = refusal(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "the body must not be compressed (Content-Encoding: identity only)",
            );
            response.headers_mut().insert(ACCEPT_ENCODING, IDENTITY);
            return Err(response);
        }
        if !headers::accepts_json_and_sse(head) {
            return Err(refusal(
                StatusCode::NOT_ACCEPTABLE,
                "Accept must list application/json and text/event-stream",
            ));
        }
        // hyper has already refused a malformed or repeated Content-Length.
        let expected = head
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if expected.is_some_and(|n| n > config.max_body_bytes as u64) {
            return Err(too_large(config.max_body_bytes));
        }

        let Ok(permit) = Arc::clone(&self.permits).try_acquire_owned() else {
            let mut response = refusal_with(
                StatusCode::SERVICE_UNAVAILABLE,
                ErrorCode::INTERNAL_ERROR,
                "too many concurrent requests; retry later",
            );
            response
                .headers_mut()
                .insert(RETRY_AFTER, self.retry_after.clone());
            return Err(response);
        };
        Ok((permit, expected.and_then(|n| usize::try_from(n).ok())))
    }

    /// Reads the body and answers the message it holds.
    async fn serve<B>(
        self: Arc<Self>,
        request: Request<B>,
        permit: OwnedSemaphorePermit,
        expected: Option<usize>,
    ) -> Response<McpBody>
    where
        B: Body + Send + 'static,
        B::Data: Buf + Send,
    {
        let config = &self.config;
        let (head, body) = request.into_parts();
        let principal = match &config.authenticator {
            None => None,
            Some(auth) => match auth.authenticate(&head.headers).await {
                Ok(principal) => Some(principal),
                Err(refusal) => return refusal.map(|body| McpBody::full(body, None)),
            },
        };
        let read = tokio::time::timeout(
            config.body_read_timeout,
            body::read_limited(body, config.max_body_bytes, expected),
        )
        .await;
        let bytes = match read {
            Ok(Ok(bytes)) => bytes,
            Ok(Err(BodyError::TooLarge)) => return too_large(config.max_body_bytes),
            Ok(Err(BodyError::Aborted)) => {
                return refusal(
                    StatusCode::BAD_REQUEST,
                    "the request body could not be read",
                );
            }
            Err(_) => return body_timed_out(),
        };

        let message = match decode(&bytes, DecodeOptions::default()) {
            Ok(Decoded::Single(message)) => message,
            Ok(_) => return refusal(StatusCode::BAD_REQUEST, "batches are not supported"),
            Err(e) => {
                tracing::debug!(error = %e, "refused a malformed message");
                return rpc_error(StatusCode::BAD_REQUEST, e.id.as_ref(), &e.to_error_object());
            }
        };
        match message {
            Message::Request(request) => {
                let params = request.params.as_ref().map(Params::text);
                if let Err(rejection) =
                    mirror::check_request(&head.headers, &request.method, params, config)
                {
                    return reject(Some(&request.id), &rejection);
                }
                if let (Some(auth), Some(principal)) = (&config.authenticator, &principal)
                    && let Err(refusal) = auth.authorize(&**principal, &request)
                {
                    return refusal.map(|body| McpBody::full(body, None));
                }
                let info = transport_info(head, principal);
                Arc::clone(&self).dispatch(request, permit, info).await
            }
            Message::Notification(notification) => {
                if let Err(rejection) = mirror::check_notification(
                    &head.headers,
                    &notification.method,
                    notification.params.as_deref(),
                ) {
                    return reject(None, &rejection);
                }
                let accepted = match &config.on_notification {
                    Some(hook) => hook(notification),
                    None => Ok(()),
                };
                match accepted {
                    Ok(()) => empty(StatusCode::ACCEPTED),
                    Err(error) => rpc_error(StatusCode::BAD_REQUEST, None, &error),
                }
            }
            _ => refusal(
                StatusCode::BAD_REQUEST,
                "a client must not send JSON-RPC responses to the server",
            ),
        }
    }

    /// Runs the handler until it finishes or sends its first notification, whichever comes
    /// first, and answers with JSON or an SSE stream accordingly.
    async fn dispatch(
        self: Arc<Self>,
        request: mcp_jsonrpc::Request,
        permit: OwnedSemaphorePermit,
        info: Arc<mcp_jsonrpc::TransportInfo>,
    ) -> Response<McpBody> {
        let id = request.id.clone();
        // The notification channel is made only if the handler sends one; closed when this
        // future ends or is dropped, so that a notification sent after the response fails.
        let mut lazy = ClosedOnDrop::new(LazyChannel::new(self.config.event_buffer));
        let mut events = None;
        let token = CancellationToken::new();
        if self.all_cancelled.load(Ordering::Acquire) {
            token.cancel();
        }
        // Dropping this future or the SSE body before the response is written (the client
        // went away) fires the token.
        let cancel = token.clone().drop_guard();
        let watched = token.clone();
        let sink = NotificationSink::lazy(Arc::clone(&lazy.slot));
        let cx = RequestContext::new(id.clone(), token, sink).with_transport_info(info);
        let keep_alive = self.config.keep_alive_interval;
        let owner = Arc::clone(&self);
        // Allocated before the future is made, so that it is written into the box rather
        // than made on the stack and copied whole (as `mcp-jsonrpc`'s engine does).
        let slot = Box::new_uninit();
        let handler = Box::write(slot, async move {
            // Pinned where it is made: passed by value, the handler's future (over a
            // kilobyte) would be copied once more.
            let request = std::pin::pin!(owner.handler.request(request, cx));
            until_shut_down(request, &owner.root, &watched).await
        });
        let mut handler: HandlerFuture = Box::into_pin(handler);

        let first = poll_fn(|task| {
            if let Poll::Ready(outcome) = handler.as_mut().poll(task) {
                return Poll::Ready(Err(outcome));
            }
            if events.is_none() {
                events = lazy.slot.poll_receiver(task);
            }
            let Some(mut receiver) = events.take() else {
                return Poll::Pending;
            };
            match receiver.poll_recv(task) {
                Poll::Ready(Some(event)) => Poll::Ready(Ok((event, receiver))),
                // `Ready(None)` cannot come while `lazy` keeps the sending half; either
                // way the handler or its next notification wakes this task.
                Poll::Ready(None) | Poll::Pending => {
                    events = Some(receiver);
                    Poll::Pending
                }
            }
        })
        .await;

        match first {
            Err(outcome) => match events.or_else(|| lazy.close()) {
                // Notifications before the result (the channel made in the handler's last
                // poll is taken from the slot): an SSE stream of them and the result.
                Some(events) if !events.is_empty() => {
                    sse(SseStream::finished(events, id, outcome, cancel), permit)
                }
                _ => {
                    cancel.disarm();
                    let status = status_of(&outcome);
                    json_body(status, McpBody::outcome(&id, outcome, Some(permit)))
                }
            },
            Ok((first, events)) => {
                let timer = keep_alive.filter(|d| !d.is_zero()).map(|period| {
                    let mut timer =
                        tokio::time::interval_at(tokio::time::Instant::now() + period, period);
                    timer.set_missed_tick_behavior(MissedTickBehavior::Delay);
                    timer
                });
                sse(
                    SseStream::running(first, handler, events, id, timer, cancel),
                    permit,
                )
            }
        }
    }
}

/// Closes a request's [`LazyChannel`] when the request's future ends or is dropped: a
/// notification sent after that (by a task the handler left behind) fails instead of
/// filling a channel that nobody reads.
struct ClosedOnDrop {
    slot: Arc<LazyChannel>,
    /// Not closed yet ([`close`](Self::close) was not called).
    open: bool,
}

impl ClosedOnDrop {
    fn new(slot: LazyChannel) -> Self {
        ClosedOnDrop {
            slot: Arc::new(slot),
            open: true,
        }
    }

    /// Closes the slot now, returning the receiving half if the channel was made and not
    /// taken ([`LazyChannel::close`]); dropping the guard then does nothing more.
    fn close(&mut self) -> Option<tokio::sync::mpsc::Receiver<Bytes>> {
        self.open = false;
        self.slot.close()
    }
}

impl Drop for ClosedOnDrop {
    fn drop(&mut self) {
        if self.open {
            drop(self.slot.close());
        }
    }
}

/// Runs a request's handler; if it has to wait and the service is shut down meanwhile
/// (`root` fires, [`McpService::cancel_all`]), fires the request's `token` and lets the
/// handler finish with it, as a child token of `root` would have been. A handler that
/// answers on its first poll never touches `root` (whose lock every connection thread
/// shares).
async fn until_shut_down<F: Future>(
    mut request: Pin<&mut F>,
    root: &CancellationToken,
    token: &CancellationToken,
) -> F::Output {
    // Made, not polled, until the handler waits: an unpolled wait takes no lock.
    let mut shutdown = std::pin::pin!(root.cancelled());
    poll_fn(|task| {
        if let Poll::Ready(output) = request.as_mut().poll(task) {
            return Poll::Ready(output);
        }
        if !token.is_cancelled() && shutdown.as_mut().poll(task).is_ready() {
            // The handler's own wait on its token, if any, wakes this task again.
            token.cancel();
        }
        Poll::Pending
    })
    .await
}

/// The status the spec pins for a handler's error reply; `200` for everything else.
fn status_of(outcome: &Result<Box<serde_json::value::RawValue>, ErrorObject>) -> StatusCode {
    match outcome {
        Err(e) if e.code == ErrorCode::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        Err(e)
            if e.code == ErrorCode::HEADER_MISMATCH
                || e.code == ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
                || e.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION =>
        {
            StatusCode::BAD_REQUEST
        }
        _ => StatusCode::OK,
    }
}

fn empty(status: StatusCode) -> Response<McpBody> {
    let mut response = Response::new(McpBody::empty());
    *response.status_mut() = status;
    response
}

fn json(
    status: StatusCode,
    body: Bytes,
    permit: Option<OwnedSemaphorePermit>,
) -> Response<McpBody> {
    json_body(status, McpBody::full(body, permit))
}

/// A JSON response of `body`.
fn json_body(status: StatusCode, body: McpBody) -> Response<McpBody> {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, APPLICATION_JSON);
    response
}

fn sse(stream: SseStream, permit: OwnedSemaphorePermit) -> Response<McpBody> {
    let mut response = Response::new(McpBody::sse(stream, permit));
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, EVENT_STREAM);
    headers.insert(CACHE_CONTROL, NO_CACHE);
    headers.insert(X_ACCEL_BUFFERING, NO);
    response
}

fn rpc_error(status: StatusCode, id: Option<&RequestId>, error: &ErrorObject) -> Response<McpBody> {
    json(status, encode_error(id, error), None)
}

fn reject(id: Option<&RequestId>, rejection: &Rejection) -> Response<McpBody> {
    tracing::debug!(error = %rejection.error, "refused a request at header validation");
    rpc_error(rejection.status, id, &rejection.error)
}

/// A transport-level refusal: the status, and a JSON-RPC error with no id that says why
/// (-32600: the request, not its params, is at fault).
/// `408`: the body did not arrive within [`HttpServerConfig::body_read_timeout`].
pub(crate) fn body_timed_out() -> Response<McpBody> {
    refusal(
        StatusCode::REQUEST_TIMEOUT,
        "the request body did not arrive in time",
    )
}

fn refusal(status: StatusCode, message: &str) -> Response<McpBody> {
    refusal_with(status, ErrorCode::INVALID_REQUEST, message)
}

pub(crate) fn refusal_with(
    status: StatusCode,
    code: ErrorCode,
    message: &str,
) -> Response<McpBody> {
    rpc_error(status, None, &ErrorObject::new(code, message))
}

fn too_large(limit: usize) -> Response<McpBody> {
    refusal(
        StatusCode::PAYLOAD_TOO_LARGE,
        &format!("the request body exceeds the limit of {limit} bytes"),
    )
}

/// The future of one response. Refusals decided from the request head are ready at once and
/// allocate nothing beyond the response.
pub struct ResponseFuture(State);

enum State {
    Ready(Option<Response<McpBody>>),
    Running(Pin<Box<dyn Future<Output = Result<Response<McpBody>, Infallible>> + Send>>),
}

impl ResponseFuture {
    fn ready(response: Response<McpBody>) -> Self {
        ResponseFuture(State::Ready(Some(response)))
    }
}

mcp_types::debug_fields!(ResponseFuture {});

impl Future for ResponseFuture {
    type Output = Result<Response<McpBody>, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match &mut self.get_mut().0 {
            State::Ready(response) => match response.take() {
                Some(response) => Poll::Ready(Ok(response)),
                None => Poll::Pending,
            },
            State::Running(future) => future.as_mut().poll(cx),
        }
    }
}

impl<H, B> hyper::service::Service<Request<B>> for McpService<H>
where
    H: Handler,
    B: Body + Send + 'static,
    B::Data: Buf + Send,
{
    type Response = Response<McpBody>;
    type Error = Infallible;
    type Future = ResponseFuture;

    fn call(&self, request: Request<B>) -> ResponseFuture {
        self.handle(request)
    }
}

impl<H, B> tower_service::Service<Request<B>> for McpService<H>
where
    H: Handler,
    B: Body + Send + 'static,
    B::Data: Buf + Send,
{
    type Response = Response<McpBody>;
    type Error = Infallible;
    type Future = ResponseFuture;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> ResponseFuture {
        self.handle(request)
    }
}

/// What the transport knows of a request for its handler (`Context::transport` in
/// `mcp-server`): the request's head, moved once into an `Arc` (not copied), lent through
/// [`mcp_jsonrpc::Headers`]. Headers read with names lower-cased as `http` stores them,
/// values that are not visible ASCII skipped; [`TransportInfo::request`] gives the whole
/// head as an `Arc<http::request::Parts>` (method, URI, version, headers, and the
/// extensions a tower or axum layer inserted). With the principal of an authenticated
/// request, and without the credentials (`Authorization`), which no handler may pass on.
///
/// [`TransportInfo::request`]: mcp_jsonrpc::TransportInfo::request
pub fn transport_info(
    mut head: http::request::Parts,
    principal: Option<Arc<dyn mcp_jsonrpc::Principal>>,
) -> Arc<mcp_jsonrpc::TransportInfo> {
    if principal.is_some() {
        crate::auth::strip_credentials(&mut head.headers);
    }
    let info = mcp_jsonrpc::TransportInfo::from_headers(RequestParts(Arc::new(head)));
    Arc::new(match principal {
        Some(principal) => info.with_principal(principal),
        None => info,
    })
}

/// An HTTP request's head, lent to handlers through [`mcp_jsonrpc::Headers`].
#[derive(Debug)]
struct RequestParts(Arc<http::request::Parts>);

impl mcp_jsonrpc::Headers for RequestParts {
    fn get(&self, name: &str) -> Option<&str> {
        self.0.headers.get(name)?.to_str().ok()
    }

    fn iter(&self) -> Box<dyn Iterator<Item = (&str, &str)> + '_> {
        Box::new(
            self.0
                .headers
                .iter()
                .filter_map(|(name, value)| Some((name.as_str(), value.to_str().ok()?))),
        )
    }

    fn request(&self) -> Option<&(dyn std::any::Any + Send + Sync)> {
        Some(&self.0)
    }
}
