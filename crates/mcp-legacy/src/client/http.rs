//! Legacy sessions over HTTP, and era detection (`detect`).
//!
//! Detection (which era the server speaks, and connecting in it) is in `http/detect.rs`.
//!
//! A legacy Streamable HTTP session ([`HttpWire`]):
//!
//! - echoes `Mcp-Session-Id` on every request once `initialize` returned one, and sends
//!   `MCP-Protocol-Version` from 2025-06-18 on;
//! - reads each POST's reply, JSON or SSE; on an SSE reply, answers the server's requests
//!   with the user's handlers (a POST of the JSON-RPC response), reports progress and
//!   delivers change notifications to `listen`;
//! - resumes a POST stream that ends before its response, the 2025-11-25 way: after the
//!   stream's `retry` delay, a GET with `Last-Event-ID` (at most
//!   [`MAX_RESUMES`] times per request);
//! - keeps the standalone GET stream open for server-initiated messages, reconnecting with
//!   `Last-Event-ID` after the `retry` delay, and routes responses that arrive on it;
//! - waits at least [`MIN_RETRY`] before any reconnection, whatever `retry` says, and
//!   longer (doubling, up to a minute) after each stream in a row that brought nothing new,
//!   with random jitter: a server that sends `retry: 0` and closes its streams at once
//!   is not reconnected to in a tight loop;
//! - re-initializes once when the server answers 404 to a request carrying the session
//!   id (the session expired), then re-sends the request (which never ran);
//! - sends `notifications/cancelled` when a request's future is dropped (in the legacy
//!   revisions a closed connection is not a cancellation);
//! - DELETEs the session on [`Client::shutdown`](mcp_client::Client::shutdown).
//!
//! Bounds: every body and SSE event by the `HttpClientConfig` limits, the probe and the
//! handshake by the probe timeout, each request by its timeout (reset by progress, capped
//! by the hard maximum), at most [`MAX_PENDING`] requests in flight and
//! [`MAX_SERVER_REQUESTS`] server requests being answered.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE};
use http::{HeaderName, HeaderValue, Method, StatusCode, Uri};
use mcp_jsonrpc::{DecodeOptions, Decoded, ErrorObject, Message, RequestOptions};
use mcp_transport_http::{EventStream, HttpClient, RawRequest, RawResponse};
use mcp_types::{RequestId, legacy, method};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::session::{Handshake, Shared, Wire};
use super::{Connector, Error, VerdictCache, handshake};

mod detect;

pub use detect::HttpConnection;
pub(super) use detect::connect;

/// How many times one request's broken stream is resumed.
pub const MAX_RESUMES: usize = 10;
/// How many requests may be in flight on one session.
pub const MAX_PENDING: usize = 256;
/// How many server requests (elicitation, sampling, roots, ping) are answered at once on
/// one session; past that a request is dropped with a warning.
pub const MAX_SERVER_REQUESTS: usize = 32;
/// How long to wait before reconnecting when the server gave no `retry`.
const DEFAULT_RETRY: Duration = Duration::from_secs(1);
/// The shortest wait before reconnecting a stream, whatever `retry` the server sent.
pub const MIN_RETRY: Duration = Duration::from_millis(250);
/// The longest `retry` honoured, and the longest wait the backoff grows to (before its
/// jitter).
const MAX_RETRY: Duration = Duration::from_mins(1);
/// How many reconnections of the standalone GET stream may fail in a row.
const MAX_GET_FAILURES: u32 = 5;
const SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
const PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");
const MCP_METHOD: HeaderName = HeaderName::from_static("mcp-method");
const JSON: HeaderValue = HeaderValue::from_static("application/json");
const ACCEPT_BOTH: HeaderValue = HeaderValue::from_static("application/json, text/event-stream");
const ACCEPT_SSE: HeaderValue = HeaderValue::from_static("text/event-stream");

type Outcome = Result<Box<RawValue>, ErrorObject>;

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Through the client core's conversion, so that an OAuth failure reported by the
/// authorizer is `Error::Auth` with its kind in a legacy session too, as in a modern one.
fn http_error(e: mcp_transport_http::Error) -> mcp_client::Error {
    mcp_client::Error::from(e)
}

fn status_error(status: StatusCode, error: Option<ErrorObject>) -> mcp_client::Error {
    http_error(mcp_transport_http::Error::Status { status, error })
}

fn closed(reason: &str) -> mcp_client::Error {
    mcp_client::Error::Transport(mcp_jsonrpc::Error::Closed(Some(reason.to_owned())))
}

fn decode_messages(data: &[u8]) -> Vec<Message> {
    tracing::trace!(target: "mcp_wire", direction = "received", frame = %String::from_utf8_lossy(data));
    let mut options = DecodeOptions::default();
    // 2025-03-26 servers may batch.
    options.max_batch = Some(64);
    match mcp_jsonrpc::decode(data, options) {
        Ok(Decoded::Single(message)) => vec![message],
        Ok(Decoded::Batch(items)) => items.into_iter().filter_map(Result::ok).collect(),
        Ok(_) => Vec::new(),
        Err(e) => {
            tracing::debug!(error = %e, "an undecodable message from the server");
            Vec::new()
        }
    }
}

/// `from + wait`, saturating far in the future (a caller may ask for "no timeout" with a
/// huge duration).
fn later(from: Instant, wait: Duration) -> Instant {
    from.checked_add(wait)
        .or_else(|| from.checked_add(Duration::from_hours(24 * 365)))
        .unwrap_or(from)
}

/// Where a stream left off, for resumption, and how its reconnections are paced.
#[derive(Debug, Default, Clone)]
struct Cursor {
    last_id: Option<String>,
    retry: Option<Duration>,
    /// Whether an event with an id or data arrived since the last reconnection.
    progressed: bool,
    /// How many reconnections in a row found nothing new.
    streak: u32,
}

impl Cursor {
    /// The wait before the next reconnection; each call is one reconnection. A stream (or
    /// a failed attempt) that brought nothing new since the last call doubles the wait.
    fn next_delay(&mut self) -> Duration {
        if std::mem::take(&mut self.progressed) {
            self.streak = 0;
        } else {
            self.streak = self.streak.saturating_add(1);
        }
        backoff(self.retry, self.streak, jitter())
    }
}

/// The wait before a reconnection: the server's `retry` (1 s without one) within
/// [`MIN_RETRY`] and [`MAX_RETRY`], doubled `streak` times up to [`MAX_RETRY`], plus
/// `jitter` (from 0 to 1) of half of that, so that the clients of one server spread out.
fn backoff(retry: Option<Duration>, streak: u32, jitter: f64) -> Duration {
    let base = retry.unwrap_or(DEFAULT_RETRY).clamp(MIN_RETRY, MAX_RETRY);
    let backed_off = base
        .checked_mul(1 << streak.min(16))
        .map_or(MAX_RETRY, |wait| wait.min(MAX_RETRY));
    backed_off + backed_off.mul_f64(jitter.clamp(0.0, 1.0) / 2.0)
}

/// A random number from 0 to 1; 0 when the system has no randomness (the jitter only
/// spreads reconnections out, the wait itself does not depend on it).
fn jitter() -> f64 {
    getrandom::u32().map_or(0.0, |n| f64::from(n) / f64::from(u32::MAX))
}

/// One request's wait: its id and timeout clock.
struct Call<'a> {
    id: &'a RequestId,
    deadline: Arc<Mutex<Instant>>,
}

/// Where a request's progress notifications go, whichever stream carries them.
struct ProgressRoute {
    callback: mcp_jsonrpc::ProgressCallback,
    /// The request's timeout clock, reset by progress.
    deadline: Arc<Mutex<Instant>>,
    timeout: Duration,
    hard: Instant,
}

/// A progress token as a map key (its JSON text).
fn token_key(token: &mcp_types::ProgressToken) -> String {
    serde_json::to_string(token).unwrap_or_default()
}

/// A legacy HTTP session (Streamable HTTP, or HTTP+SSE when `post_url` came from an
/// `endpoint` event).
pub(crate) struct HttpWire {
    http: HttpClient,
    shared: Arc<Shared>,
    session: Mutex<Option<HeaderValue>>,
    /// The negotiated version, once `initialize` answered.
    version: Mutex<Option<String>>,
    /// HTTP+SSE: the URL the `endpoint` event named.
    post_url: Option<Uri>,
    next_id: AtomicI64,
    /// Requests whose response may arrive on the GET stream.
    pending: Mutex<HashMap<RequestId, oneshot::Sender<Outcome>>>,
    /// Progress routes of the requests in flight, by token.
    progress: Mutex<HashMap<String, ProgressRoute>>,
    /// Permits for answering server requests.
    answering: Arc<tokio::sync::Semaphore>,
    get_stream: Mutex<Option<JoinHandle<()>>>,
    closed: AtomicBool,
    /// Set once the session exists, for re-initialization after a 404.
    handshake: Mutex<Option<Arc<Mutex<Handshake>>>>,
    offer: Vec<String>,
    timeout: Duration,
    /// The remembered verdict to forget if the session cannot be re-established.
    forget_on_failure: Mutex<Option<(VerdictCache, String)>>,
}

impl std::fmt::Debug for HttpWire {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpWire")
            .field("url", self.http.url())
            .finish_non_exhaustive()
    }
}

/// Removes a pending entry, and tells the server a request was abandoned, when a request's
/// future is dropped before its answer.
struct Abandon<'a> {
    wire: &'a Arc<HttpWire>,
    id: RequestId,
    token: Option<String>,
    done: bool,
}

impl Drop for Abandon<'_> {
    fn drop(&mut self) {
        lock(&self.wire.pending).remove(&self.id);
        if let Some(token) = &self.token {
            lock(&self.wire.progress).remove(token);
        }
        if self.done || self.wire.closed.load(Ordering::Relaxed) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let wire = Arc::clone(self.wire);
        let id = self.id.clone();
        runtime.spawn(async move {
            let params = json!({ "requestId": id, "reason": "the client abandoned the request" });
            if let Ok(frame) =
                mcp_jsonrpc::encode_notification(method::NOTIFICATIONS_CANCELLED, Some(&params))
            {
                let _ = tokio::time::timeout(Duration::from_secs(5), wire.post_frame(frame)).await;
            }
        });
    }
}

impl HttpWire {
    fn new(
        http: HttpClient,
        shared: Arc<Shared>,
        post_url: Option<Uri>,
        connector: &Connector,
    ) -> Arc<Self> {
        Arc::new(HttpWire {
            http,
            shared,
            session: Mutex::new(None),
            version: Mutex::new(None),
            post_url,
            next_id: AtomicI64::new(1),
            pending: Mutex::new(HashMap::new()),
            progress: Mutex::new(HashMap::new()),
            answering: Arc::new(tokio::sync::Semaphore::new(MAX_SERVER_REQUESTS)),
            get_stream: Mutex::new(None),
            closed: AtomicBool::new(false),
            handshake: Mutex::new(None),
            offer: connector.legacy_offer.clone(),
            timeout: connector.probe_timeout,
            forget_on_failure: Mutex::new(None),
        })
    }

    /// Ends the session on this side: no request waits any longer, and the reader of the
    /// GET stream stops (its connection closes).
    fn end(&self) {
        self.closed.store(true, Ordering::SeqCst);
        self.shared.ended.cancel();
        if let Some(task) = lock(&self.get_stream).take() {
            task.abort();
        }
        lock(&self.pending).clear();
    }

    /// Adds the session's headers.
    fn session_headers(&self, mut request: RawRequest) -> RawRequest {
        if let Some(session) = lock(&self.session).clone() {
            request = request.header(SESSION_ID, session);
        }
        // 2025-06-18 and later name their version on every request after initialize.
        let version = lock(&self.version).clone();
        if let Some(version) = version.filter(|v| v.as_str() >= "2025-06-18")
            && let Ok(value) = HeaderValue::from_str(&version)
        {
            request = request.header(PROTOCOL_VERSION, value);
        }
        request
    }

    fn post(&self, frame: Bytes) -> RawRequest {
        tracing::trace!(target: "mcp_wire", direction = "sent", frame = %String::from_utf8_lossy(&frame));
        let mut request = RawRequest::new(Method::POST)
            .header(CONTENT_TYPE, JSON)
            .header(ACCEPT, ACCEPT_BOTH)
            .body(frame);
        if let Some(url) = &self.post_url {
            request = request.url(url.clone());
        }
        self.session_headers(request)
    }

    /// POSTs a notification or a response (the server answers 202).
    async fn post_frame(&self, frame: Bytes) -> Result<(), mcp_client::Error> {
        let response = self.http.send(self.post(frame)).await.map_err(http_error)?;
        let status = response.status();
        let _ = response.bytes().await;
        if status.is_success() {
            Ok(())
        } else {
            Err(status_error(status, None))
        }
    }

    /// GET on the endpoint for a stream of server messages, resuming after `last_id`.
    async fn open_get(&self, last_id: Option<&str>) -> Result<RawResponse, mcp_client::Error> {
        let mut request = RawRequest::new(Method::GET).header(ACCEPT, ACCEPT_SSE);
        if let Some(id) = last_id.and_then(|id| HeaderValue::from_str(id).ok()) {
            request = request.header(LAST_EVENT_ID, id);
        }
        self.http
            .send(self.session_headers(request))
            .await
            .map_err(http_error)
    }

    /// Handles one message from the server; the response to `call`, if it is that.
    fn handle(self: &Arc<Self>, message: Message, call: Option<&Call<'_>>) -> Option<Outcome> {
        match message {
            Message::Response(response) => {
                let id = response.id?;
                if call.is_some_and(|c| *c.id == id) {
                    return Some(response.outcome);
                }
                if let Some(tx) = lock(&self.pending).remove(&id) {
                    let _ = tx.send(response.outcome);
                }
                None
            }
            Message::Request(request) => {
                // Bounded: past MAX_SERVER_REQUESTS answers in progress, a request is
                // dropped (the server's own timeout ends it) rather than queued.
                if let Ok(permit) = Arc::clone(&self.answering).try_acquire_owned() {
                    let wire = Arc::clone(self);
                    tokio::spawn(async move {
                        wire.answer(request).await;
                        drop(permit);
                    });
                } else {
                    tracing::warn!(method = %request.method, "too many server requests in progress; one was dropped");
                }
                None
            }
            Message::Notification(notification) => {
                let params = notification
                    .params
                    .as_deref()
                    .and_then(|p| serde_json::from_str::<Value>(p.get()).ok());
                if notification.method == method::NOTIFICATIONS_PROGRESS {
                    self.progress(params.as_ref());
                } else {
                    self.shared.notify(&notification.method, params.as_ref());
                }
                None
            }
            _ => None,
        }
    }

    fn progress(&self, params: Option<&Value>) {
        let Some(progress) = params.and_then(|p| {
            serde_json::from_value::<mcp_types::ProgressNotificationParams>(p.clone()).ok()
        }) else {
            return;
        };
        let routes = lock(&self.progress);
        let Some(route) = routes.get(&token_key(&progress.progress_token)) else {
            return;
        };
        (route.callback)(&progress);
        *lock(&route.deadline) = later(Instant::now(), route.timeout).min(route.hard);
    }

    /// Answers a server request with the user's handlers and POSTs the response.
    async fn answer(self: Arc<Self>, request: mcp_jsonrpc::Request) {
        let params = request
            .params
            .as_ref()
            .and_then(|p| p.checked().ok())
            .and_then(|p| serde_json::from_str::<Value>(p.get()).ok());
        let frame = match self.shared.answer(&request.method, params).await {
            Ok(result) => mcp_jsonrpc::encode_result(&request.id, &result).ok(),
            Err(error) => Some(mcp_jsonrpc::encode_error(Some(&request.id), &error)),
        };
        if let Some(frame) = frame
            && let Err(e) = self.post_frame(frame).await
        {
            tracing::warn!(error = %e, method = %request.method, "cannot send the answer to a server request");
        }
    }

    /// Reads an SSE stream until `call`'s response (or its end): where it left off.
    async fn read_events(
        self: &Arc<Self>,
        events: &mut EventStream,
        call: Option<&Call<'_>>,
        cursor: &mut Cursor,
    ) -> Option<Outcome> {
        while let Some(event) = events.next().await {
            let Ok(event) = event else { break };
            if event.id.is_some() {
                cursor.last_id.clone_from(&event.id);
            }
            cursor.progressed |= event.id.is_some() || !event.data.is_empty();
            if event.retry.is_some() {
                cursor.retry = event.retry;
            }
            if event.event != "message" || event.data.is_empty() {
                continue;
            }
            for message in decode_messages(event.data.as_bytes()) {
                if let Some(outcome) = self.handle(message, call) {
                    return Some(outcome);
                }
            }
        }
        None
    }

    /// One request: POST, then its reply (JSON, SSE, resumed SSE or the GET stream).
    async fn exchange(
        self: &Arc<Self>,
        method: &str,
        params: &Value,
        options: &RequestOptions,
    ) -> Result<Box<RawValue>, mcp_client::Error> {
        let id = RequestId::Integer(self.next_id.fetch_add(1, Ordering::Relaxed));
        let frame = mcp_jsonrpc::encode_request(&id, method, Some(params)).map_err(|source| {
            mcp_client::Error::Decode {
                method: method.to_owned(),
                source,
            }
        })?;
        let (tx, rx) = oneshot::channel();
        {
            let mut pending = lock(&self.pending);
            // Checked under the lock: the HTTP+SSE reader marks the session closed before
            // it clears the table, so no request can wait on a stream that is gone.
            if self.closed.load(Ordering::SeqCst) {
                return Err(closed("the session ended"));
            }
            if pending.len() >= MAX_PENDING {
                return Err(closed("too many requests in flight on this session"));
            }
            pending.insert(id.clone(), tx);
        }
        let timeout = options.timeout.unwrap_or(Duration::from_mins(1));
        let started = Instant::now();
        let hard = later(
            started,
            options
                .max_timeout
                .unwrap_or(Duration::from_mins(10))
                .max(timeout),
        );
        let call = Call {
            id: &id,
            deadline: Arc::new(Mutex::new(later(started, timeout).min(hard))),
        };
        let token = options.progress_token.as_ref().map(token_key);
        if let (Some(token), Some(callback)) = (&token, &options.on_progress) {
            lock(&self.progress).insert(
                token.clone(),
                ProgressRoute {
                    callback: Arc::clone(callback),
                    deadline: Arc::clone(&call.deadline),
                    timeout,
                    hard,
                },
            );
        }
        let mut abandon = Abandon {
            wire: self,
            id: id.clone(),
            token,
            done: false,
        };
        let work = self.reply(method, frame, &call, rx);
        tokio::pin!(work);
        let outcome = loop {
            let deadline = *lock(&call.deadline);
            tokio::select! {
                outcome = &mut work => break outcome,
                () = tokio::time::sleep_until(deadline) => {
                    if *lock(&call.deadline) <= Instant::now() {
                        break Err(mcp_client::Error::Timeout {
                            method: method.to_owned(),
                            after: started.elapsed(),
                        });
                    }
                }
            }
        };
        // A request that got any answer, or that the server never accepted, needs no
        // cancellation.
        abandon.done = !matches!(outcome, Err(mcp_client::Error::Timeout { .. }));
        outcome
    }

    async fn reply(
        self: &Arc<Self>,
        method: &str,
        frame: Bytes,
        call: &Call<'_>,
        mut from_get: oneshot::Receiver<Outcome>,
    ) -> Result<Box<RawValue>, mcp_client::Error> {
        let had_session = lock(&self.session).is_some();
        let response = self.http.send(self.post(frame)).await.map_err(http_error)?;
        let status = response.status();
        if lock(&self.session).is_none()
            && let Some(session) = response.headers().get(SESSION_ID)
        {
            *lock(&self.session) = Some(session.clone());
        }
        if status == StatusCode::NOT_FOUND && had_session && self.post_url.is_none() {
            return Err(SessionExpired::error());
        }
        if status == StatusCode::ACCEPTED {
            // HTTP+SSE, or a server that answers on the GET stream.
            let _ = response.bytes().await;
            return from_get
                .await
                .map_err(|_| closed("the session ended before the response"))?
                .map_err(mcp_client::Error::Protocol);
        }
        if response.is_event_stream() && status.is_success() {
            let mut cursor = Cursor::default();
            let mut events = response.events();
            let mut resumes = 0;
            loop {
                tokio::select! {
                    outcome = self.read_events(&mut events, Some(call), &mut cursor) => {
                        if let Some(outcome) = outcome {
                            return outcome.map_err(mcp_client::Error::Protocol);
                        }
                    }
                    outcome = &mut from_get => {
                        return outcome
                            .map_err(|_| closed("the session ended before the response"))?
                            .map_err(mcp_client::Error::Protocol);
                    }
                }
                // The stream ended before the response: resume it after `retry`, from
                // the last event id (2025-11-25 polling), if the server gave one.
                let Some(last_id) = cursor.last_id.clone() else {
                    return Err(mcp_client::Error::MayHaveRun {
                        method: method.to_owned(),
                    });
                };
                resumes += 1;
                if resumes > MAX_RESUMES {
                    return Err(mcp_client::Error::MayHaveRun {
                        method: method.to_owned(),
                    });
                }
                tokio::select! {
                    () = tokio::time::sleep(cursor.next_delay()) => {}
                    outcome = &mut from_get => {
                        return outcome
                            .map_err(|_| closed("the session ended before the response"))?
                            .map_err(mcp_client::Error::Protocol);
                    }
                }
                let again = self.open_get(Some(&last_id)).await.map_err(|e| {
                    tracing::debug!(error = %e, "resumption failed");
                    mcp_client::Error::MayHaveRun {
                        method: method.to_owned(),
                    }
                })?;
                if !again.status().is_success() || !again.is_event_stream() {
                    return Err(mcp_client::Error::MayHaveRun {
                        method: method.to_owned(),
                    });
                }
                events = again.events();
            }
        }
        let json = response.is_json();
        let body = response.bytes().await.map_err(http_error)?;
        if json {
            // A response to an id this session is not waiting for: the body was this
            // request's reply, so the server answered something else.
            let mut stray = None;
            for message in decode_messages(&body) {
                if let Message::Response(response) = &message
                    && let Some(id) = &response.id
                    && id != call.id
                    && !lock(&self.pending).contains_key(id)
                {
                    stray = Some(id.clone());
                }
                if let Some(outcome) = self.handle(message, Some(call)) {
                    return outcome.map_err(mcp_client::Error::Protocol);
                }
            }
            if let Some(id) = stray.filter(|_| status.is_success()) {
                return Err(mcp_client::Error::UnexpectedResponse {
                    method: method.to_owned(),
                    id: Some(id),
                });
            }
        }
        let error = if json {
            decode_messages(&body).into_iter().find_map(|m| match m {
                Message::Response(r) => r.outcome.err(),
                _ => None,
            })
        } else {
            None
        };
        Err(status_error(status, error))
    }

    /// Opens the standalone GET stream for server-initiated messages (its head is awaited,
    /// so that it is in place before the next request), then reads it on a task that
    /// reconnects with `Last-Event-ID`. A server without one (405, or no SSE) is fine.
    async fn start_get_stream(self: &Arc<Self>) {
        let first = match self.open_get(None).await {
            Ok(response) if response.status().is_success() && response.is_event_stream() => {
                response
            }
            Ok(response) => {
                tracing::debug!(status = %response.status(), "no standalone GET stream");
                return;
            }
            Err(e) => {
                tracing::debug!(error = %e, "no standalone GET stream");
                return;
            }
        };
        let wire = Arc::clone(self);
        let task = tokio::spawn(async move { wire.run_get_stream(first).await });
        if let Some(old) = lock(&self.get_stream).replace(task) {
            old.abort();
        }
    }

    async fn run_get_stream(self: Arc<Self>, first: RawResponse) {
        let mut cursor = Cursor::default();
        let mut events = first.events();
        let mut failures = 0;
        loop {
            let _ = self.read_events(&mut events, None, &mut cursor).await;
            loop {
                if self.closed.load(Ordering::Relaxed) || failures >= MAX_GET_FAILURES {
                    return;
                }
                tokio::time::sleep(cursor.next_delay()).await;
                match self.open_get(cursor.last_id.as_deref()).await {
                    Ok(r) if r.status().is_success() && r.is_event_stream() => {
                        failures = 0;
                        events = r.events();
                        break;
                    }
                    Ok(r) if r.status() == StatusCode::METHOD_NOT_ALLOWED => return,
                    _ => failures += 1,
                }
            }
        }
    }

    /// `initialize` again after the session expired (404), then `notifications/initialized`
    /// and a new GET stream.
    async fn reinitialize(self: &Arc<Self>) -> Result<(), mcp_client::Error> {
        *lock(&self.session) = None;
        *lock(&self.version) = None;
        let fresh = handshake(self, &self.shared.handlers, &self.offer, self.timeout)
            .await
            .map_err(|e| match e {
                Error::Handshake(e) | Error::Client(e) => e,
                other => closed(&other.to_string()),
            })?;
        self.initialized(&fresh).await?;
        let current = lock(&self.handshake).clone();
        if let Some(current) = current {
            *lock(&current) = fresh;
        }
        Ok(())
    }

    /// Records the negotiated version and sends `notifications/initialized`.
    async fn initialized(self: &Arc<Self>, handshake: &Handshake) -> Result<(), mcp_client::Error> {
        *lock(&self.version) = Some(handshake.version.clone());
        let frame = mcp_jsonrpc::encode_notification(
            legacy::method::NOTIFICATIONS_INITIALIZED,
            None::<&()>,
        )
        .map_err(|source| mcp_client::Error::Decode {
            method: legacy::method::NOTIFICATIONS_INITIALIZED.to_owned(),
            source,
        })?;
        self.post_frame(frame).await?;
        if self.post_url.is_none() {
            self.start_get_stream().await;
        }
        Ok(())
    }
}

/// The marker error of a 404 for a known session.
struct SessionExpired;

impl SessionExpired {
    const MESSAGE: &'static str = "the session expired (404)";

    fn error() -> mcp_client::Error {
        closed(Self::MESSAGE)
    }

    fn is(error: &mcp_client::Error) -> bool {
        matches!(error, mcp_client::Error::Transport(mcp_jsonrpc::Error::Closed(Some(m))) if m == Self::MESSAGE)
    }
}

/// The session's wire, as the shared legacy session logic sees it.
#[derive(Debug, Clone)]
pub(crate) struct HttpSession(Arc<HttpWire>);

impl Wire for HttpSession {
    async fn request(
        &self,
        method: &str,
        params: Value,
        options: RequestOptions,
    ) -> Result<Box<RawValue>, mcp_client::Error> {
        let wire = &self.0;
        match wire.exchange(method, &params, &options).await {
            Err(e) if SessionExpired::is(&e) && method != legacy::method::INITIALIZE => {
                if let Err(e) = wire.reinitialize().await {
                    // The server no longer takes this era: the next connection probes.
                    if let Some((verdicts, url)) = lock(&wire.forget_on_failure).as_ref() {
                        verdicts.forget(url);
                    }
                    return Err(e);
                }
                wire.exchange(method, &params, &options).await
            }
            other => other,
        }
    }

    async fn close(&self, grace: Duration) {
        let wire = &self.0;
        wire.end();
        if wire.post_url.is_none() && lock(&wire.session).is_some() {
            let request = wire.session_headers(RawRequest::new(Method::DELETE));
            if let Ok(Ok(response)) = tokio::time::timeout(grace, wire.http.send(request)).await {
                let _ = tokio::time::timeout(grace, response.bytes()).await;
            }
        }
    }
}

impl Wire for Arc<HttpWire> {
    async fn request(
        &self,
        method: &str,
        params: Value,
        options: RequestOptions,
    ) -> Result<Box<RawValue>, mcp_client::Error> {
        self.exchange(method, &params, &options).await
    }

    async fn close(&self, _grace: Duration) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reconnections_wait_at_least_the_floor_and_back_off_to_the_cap() {
        let zero = Some(Duration::ZERO);
        assert_eq!(
            backoff(zero, 0, 0.0),
            MIN_RETRY,
            "retry: 0 is raised to the floor"
        );
        assert_eq!(backoff(zero, 1, 0.0), MIN_RETRY * 2);
        assert_eq!(backoff(zero, 3, 0.0), MIN_RETRY * 8);
        assert_eq!(backoff(None, 0, 0.0), DEFAULT_RETRY);
        assert_eq!(backoff(Some(Duration::from_hours(1)), 0, 0.0), MAX_RETRY);
        assert_eq!(backoff(zero, u32::MAX, 0.0), MAX_RETRY, "no overflow");
        // Jitter adds up to half, never takes away.
        assert_eq!(backoff(zero, 0, 1.0), MIN_RETRY + MIN_RETRY / 2);
        assert_eq!(backoff(zero, u32::MAX, 1.0), MAX_RETRY + MAX_RETRY / 2);
        for _ in 0..100 {
            let wait = backoff(zero, 0, jitter());
            assert!(wait >= MIN_RETRY && wait <= MIN_RETRY + MIN_RETRY / 2);
        }
    }

    #[test]
    fn a_stream_that_brings_something_resets_the_backoff() {
        let mut cursor = Cursor {
            retry: Some(Duration::ZERO),
            ..Cursor::default()
        };
        let first = cursor.next_delay();
        let second = cursor.next_delay();
        assert!(
            first >= MIN_RETRY * 2 && second >= MIN_RETRY * 4,
            "{first:?} {second:?}"
        );
        cursor.progressed = true;
        let after_news = cursor.next_delay();
        assert!(
            after_news >= MIN_RETRY && after_news < MIN_RETRY * 2,
            "{after_news:?}"
        );
    }
}
