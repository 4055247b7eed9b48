//! The peer: one connection's engine, over any [`FrameReader`] and [`FrameWriter`].
//!
//! [`Peer::connect`] starts two tasks owned by the returned [`Connection`]: the driver,
//! which reads frames, routes responses to waiting callers and dispatches requests to the
//! [`Handler`], and the writer, which owns the transport's sending half and writes frames
//! from a bounded queue. A [`Peer`] is the cheap, cloneable handle for sending requests and
//! notifications.
//!
//! Cancellation and timeouts follow `docs/2026-07-28/basic/patterns/cancellation.mdx` and
//! `docs/2026-07-28/basic/patterns/progress.mdx`: a request that times out or whose future is
//! dropped is withdrawn, and (when [`PeerConfig::cancel_notifications`] is on, as for stdio)
//! the peer is sent `notifications/cancelled`; progress for a request resets its timeout,
//! never past the hard maximum. A request the peer cancels gets no response.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::Poll;
use std::time::Duration;

use bytes::Bytes;
use mcp_types::{
    CancelledNotificationParams, ErrorCode, ProgressNotificationParams, ProgressToken, RequestId,
};
use serde::Serialize;
use serde_json::value::RawValue;
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore, mpsc, oneshot};
use tokio::task::{AbortHandle, JoinHandle};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::error::Error;
use crate::message::{
    DecodeOptions, Decoded, ErrorObject, Message, Notification, Request, Response, decode,
    encode_error, encode_notification, encode_raw_result, encode_request,
};
use crate::pending::{Closed, PendingTable};
use crate::received::RawResult;
use crate::sink::NotificationSink;
use crate::transport::{FrameReader, FrameWriter, TransportError};

const CANCELLED: &str = "notifications/cancelled";
const PROGRESS: &str = "notifications/progress";

/// What to do with an inbound request when every concurrency slot is busy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Overload {
    /// Stop reading until a slot frees up (backpressure on the peer).
    Wait,
    /// Answer at once with -32603 and a message saying the server is busy.
    Reject,
}

/// A connection's limits and behaviour.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PeerConfig {
    /// How long an outbound request waits for its response; progress resets it.
    pub request_timeout: Duration,
    /// The hard limit on an outbound request's wait, whatever progress arrives.
    pub max_request_timeout: Duration,
    /// How many inbound requests run at once.
    pub max_concurrency: usize,
    /// What happens to inbound requests beyond `max_concurrency`.
    pub overload: Overload,
    /// How many frames may wait for the writer before senders wait (backpressure).
    pub outbound_queue: usize,
    /// Tell the peer with `notifications/cancelled` when an outbound request is abandoned
    /// (stdio). Off for transports that cancel by closing a stream (HTTP).
    pub cancel_notifications: bool,
    /// Answer frames that are not valid messages with -32700 or -32600 (a server does;
    /// a client facing a server that pollutes its stdout only logs them).
    pub reply_to_malformed: bool,
    /// How frames are decoded (batches).
    pub decode: DecodeOptions,
    /// How long in-flight inbound requests may run on after the peer hangs up, before
    /// they are cancelled (default 1 s). Over stdio this must stay below the client's
    /// wait between closing the server's stdin and `SIGTERM` (2 s for
    /// `mcp-transport-stdio`'s `ServerCommand`): a server whose client went away then
    /// cancels its handlers and exits on its own, as `docs/2026-07-28/basic/transports/stdio.mdx`
    /// (Shutdown) asks, instead of being killed with its handlers mid-way.
    pub eof_grace: Duration,
}

impl Default for PeerConfig {
    fn default() -> Self {
        PeerConfig {
            request_timeout: Duration::from_mins(1),
            max_request_timeout: Duration::from_mins(10),
            max_concurrency: 64,
            overload: Overload::Wait,
            outbound_queue: 256,
            cancel_notifications: true,
            reply_to_malformed: true,
            decode: DecodeOptions::default(),
            eof_grace: Duration::from_secs(1),
        }
    }
}

/// Called with each progress update of a request.
pub type ProgressCallback = Arc<dyn Fn(&ProgressNotificationParams) + Send + Sync>;

/// Called with a request's id once it is allocated.
pub type IdCallback = Arc<dyn Fn(&RequestId) + Send + Sync>;

/// Per-request options for an outbound request.
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct RequestOptions {
    /// Overrides [`PeerConfig::request_timeout`].
    pub timeout: Option<Duration>,
    /// Overrides [`PeerConfig::max_request_timeout`].
    pub max_timeout: Option<Duration>,
    /// The progress token the caller put in the request's `_meta`; progress notifications
    /// carrying it reset the timeout and reach `on_progress`.
    pub progress_token: Option<ProgressToken>,
    /// Called (on the connection's reader, so it must be quick) with each progress update.
    pub on_progress: Option<ProgressCallback>,
    /// Called with the request's id once it is allocated, before the request is sent (for
    /// routing what the peer tags with that id, such as a subscription's notifications).
    pub on_id: Option<IdCallback>,
}

impl std::fmt::Debug for RequestOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestOptions")
            .field("timeout", &self.timeout)
            .field("max_timeout", &self.max_timeout)
            .field("progress_token", &self.progress_token)
            .field("on_progress", &self.on_progress.is_some())
            .field("on_id", &self.on_id.is_some())
            .finish()
    }
}

impl RequestOptions {
    /// Options with a timeout.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Options with a hard maximum.
    #[must_use]
    pub fn max_timeout(mut self, max: Duration) -> Self {
        self.max_timeout = Some(max);
        self
    }

    /// Options that follow progress for `token`, calling `on_progress` with each update.
    #[must_use]
    pub fn progress(
        mut self,
        token: ProgressToken,
        on_progress: impl Fn(&ProgressNotificationParams) + Send + Sync + 'static,
    ) -> Self {
        self.progress_token = Some(token);
        self.on_progress = Some(Arc::new(on_progress));
        self
    }
}

/// Serves the peer's requests and notifications.
pub trait Handler: Send + Sync + 'static {
    /// Answers one request: a result as raw JSON, or an error object.
    ///
    /// Requests run concurrently, each on its own task, up to
    /// [`PeerConfig::max_concurrency`]. `cx` carries the request's cancellation token.
    fn request(
        &self,
        request: Request,
        cx: RequestContext,
    ) -> impl Future<Output = Result<Box<RawValue>, ErrorObject>> + Send;

    /// Takes one notification. It runs on the connection's reader, in order, so it must not
    /// wait on the peer (spawn a task for anything slow). The default ignores it.
    fn notification(&self, notification: Notification, peer: &Peer) {
        let _ = (notification, peer);
    }
}

/// A handler for a peer that serves nothing: every request gets -32601.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHandler;

impl Handler for NoHandler {
    async fn request(
        &self,
        request: Request,
        _cx: RequestContext,
    ) -> Result<Box<RawValue>, ErrorObject> {
        Err(ErrorObject::method_not_found(&request.method))
    }
}

/// Headers a transport lends to the layers above without copying them: HTTP hands over
/// the request's own header map (`mcp-transport-http` implements this for
/// `http::HeaderMap`). Names are matched case-insensitively; values that are not visible
/// ASCII are not offered.
pub trait Headers: Send + Sync + fmt::Debug + 'static {
    /// The first value of the header `name`.
    fn get(&self, name: &str) -> Option<&str>;

    /// Every header, names lower-cased, in arrival order.
    fn iter(&self) -> Box<dyn Iterator<Item = (&str, &str)> + '_>;
}

impl Headers for Vec<(String, String)> {
    fn get(&self, name: &str) -> Option<&str> {
        self.as_slice()
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn iter(&self) -> Box<dyn Iterator<Item = (&str, &str)> + '_> {
        Box::new(
            self.as_slice()
                .iter()
                .map(|(n, v)| (n.as_str(), v.as_str())),
        )
    }
}

/// Who made a request, as an authenticating transport established it (for HTTP, from the
/// `Authorization` header, by the authenticator the server was configured with).
///
/// The engine and the transports treat it as opaque; the layer that authenticated knows
/// its concrete type and gets it back with `downcast_ref` (on `dyn Principal`).
/// The server core binds what must not cross principals (sealed `requestState`, legacy
/// sessions) to [`id`](Principal::id).
///
/// ```
/// use mcp_jsonrpc::{Principal, TransportInfo};
/// use std::sync::Arc;
///
/// #[derive(Debug)]
/// struct User(String);
/// impl Principal for User {
///     fn id(&self) -> &str {
///         &self.0
///     }
/// }
///
/// let info = TransportInfo::default().with_principal(Arc::new(User("alice".into())));
/// let principal = info.principal().unwrap();
/// assert_eq!(principal.id(), "alice");
/// assert_eq!(principal.downcast_ref::<User>().unwrap().0, "alice");
/// ```
pub trait Principal: std::any::Any + Send + Sync + fmt::Debug {
    /// A stable identifier: the same for every request of one principal, never shared by
    /// two principals (an authenticator that knows several issuers includes the issuer).
    fn id(&self) -> &str;
}

impl dyn Principal {
    /// The principal as its concrete type, if it is a `T`.
    pub fn downcast_ref<T: Principal>(&self) -> Option<&T> {
        (self as &dyn std::any::Any).downcast_ref()
    }
}

/// What a transport knows about one request that the layers above may want: for HTTP, the
/// request's headers and, when the server authenticates requests, the [`Principal`] that
/// made it. An authenticating transport leaves the credentials (`Authorization`) out of
/// the headers, so that no handler can pass them on.
#[derive(Debug)]
#[non_exhaustive]
pub struct TransportInfo {
    headers: Box<dyn Headers>,
    /// Who made the request, when the transport authenticated it.
    pub principal: Option<Arc<dyn Principal>>,
}

impl Default for TransportInfo {
    fn default() -> Self {
        TransportInfo::with_headers(Vec::new())
    }
}

impl TransportInfo {
    /// Facts made of headers (names lower-cased, in arrival order).
    pub fn with_headers(headers: Vec<(String, String)>) -> Self {
        TransportInfo {
            headers: Box::new(headers),
            principal: None,
        }
    }

    /// Facts made of headers the transport lends as they are (no copy).
    pub fn from_headers(headers: impl Headers) -> Self {
        TransportInfo {
            headers: Box::new(headers),
            principal: None,
        }
    }

    /// The same facts, with the principal that made the request.
    #[must_use]
    pub fn with_principal(mut self, principal: Arc<dyn Principal>) -> Self {
        self.principal = Some(principal);
        self
    }

    /// Who made the request, if the transport authenticated it.
    pub fn principal(&self) -> Option<&dyn Principal> {
        self.principal.as_deref()
    }

    /// The first value of the header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name)
    }

    /// Every header, names lower-cased, in arrival order.
    pub fn headers(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        self.headers.iter()
    }
}

/// A request's cancellation token, made when first needed: by a handler that asks for it
/// ([`RequestContext::cancellation`]), or by whatever cancels the request. Most requests
/// are answered without either, and a `CancellationToken` costs an allocation and a lock
/// at each clone, drop and check (about 7 % of the stdio server's time per small call,
/// issue #8, `docs/PERFORMANCE.md`); this slot costs one small allocation and atomics.
/// Clones share the slot, so every clone sees the same token.
#[derive(Debug, Clone, Default)]
struct CancelSlot(Arc<std::sync::OnceLock<CancellationToken>>);

impl CancelSlot {
    /// A slot holding `token` already (a transport that made its own).
    fn with(token: CancellationToken) -> Self {
        CancelSlot(Arc::new(std::sync::OnceLock::from(token)))
    }

    /// The token, made now if nothing asked for it before.
    fn token(&self) -> &CancellationToken {
        self.0.get_or_init(CancellationToken::new)
    }

    /// Cancels the request (making its token, so that a handler asking later sees it
    /// cancelled).
    fn cancel(&self) {
        self.token().cancel();
    }

    /// Whether the request was cancelled; a token never made was never cancelled.
    fn is_cancelled(&self) -> bool {
        self.0.get().is_some_and(CancellationToken::is_cancelled)
    }
}

/// What a handler knows about the request it serves.
#[derive(Debug, Clone)]
pub struct RequestContext {
    id: RequestId,
    cancel: CancelSlot,
    sink: NotificationSink,
    transport: Option<Arc<TransportInfo>>,
}

impl RequestContext {
    /// A context for a request a transport dispatches itself (HTTP does, one request per
    /// POST): its id, the token that cancels it, and where its notifications go.
    pub fn new(id: RequestId, cancel: CancellationToken, sink: NotificationSink) -> Self {
        RequestContext {
            id,
            cancel: CancelSlot::with(cancel),
            sink,
            transport: None,
        }
    }

    /// Attaches what the transport knows about the request (HTTP headers).
    #[must_use]
    pub fn with_transport_info(mut self, info: Arc<TransportInfo>) -> Self {
        self.transport = Some(info);
        self
    }

    /// What the transport knows about the request, if it told.
    pub fn transport_info(&self) -> Option<&TransportInfo> {
        self.transport.as_deref()
    }

    /// The request's id.
    pub fn id(&self) -> &RequestId {
        &self.id
    }

    /// Fired when the peer cancels the request or the connection shuts down.
    pub fn cancellation(&self) -> &CancellationToken {
        self.cancel.token()
    }

    /// Whether the request was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Where this request's notifications go.
    pub fn sink(&self) -> &NotificationSink {
        &self.sink
    }

    /// Sends a notification tied to this request (a log message, a subscription event).
    pub async fn notify<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: Option<&P>,
    ) -> Result<(), Error> {
        self.sink.notify(method, params).await
    }

    /// Sends `notifications/progress` for `token` (the progress token the request's
    /// `_meta` carried; the layer above reads it).
    pub async fn progress(
        &self,
        token: ProgressToken,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> Result<(), Error> {
        let mut params = ProgressNotificationParams::new(
            serde_json::Number::from_f64(progress).unwrap_or_else(|| 0.into()),
            token,
        );
        params.total = total.and_then(serde_json::Number::from_f64);
        params.message = message;
        self.sink.notify(PROGRESS, Some(&params)).await
    }
}

/// A waiter parked in the pending table.
struct Waiter {
    tx: oneshot::Sender<Result<RawResult, Error>>,
    progress: Option<Arc<ProgressWatch>>,
}

struct ProgressWatch {
    notify: Notify,
    callback: Option<ProgressCallback>,
}

/// An inbound request in flight.
struct InFlight {
    cancel: CancelSlot,
    abort: Option<AbortHandle>,
}

struct Shared {
    config: PeerConfig,
    pending: Mutex<PendingTable<Waiter>>,
    inbound: Mutex<HashMap<RequestId, InFlight>>,
    outbound: mpsc::Sender<Bytes>,
    /// Cancellation notices: at most one per pending request, so bounded by the table.
    control: mpsc::UnboundedSender<Bytes>,
    close_reason: Mutex<Option<String>>,
    /// Fired to stop reading (shutdown, or the writer failed).
    stop: CancellationToken,
    /// Fired by the driver once nothing more will be queued: the writer drains and closes.
    writer_stop: CancellationToken,
    /// Wakes the timeout sweeper ([`sweep`]): a deadline earlier than the one it sleeps
    /// to, or the table closed.
    sweeper: Notify,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding one of these locks cannot leave the data half-updated in a way
    // that matters more than losing the connection, so a poisoned lock is used as is.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A handle for sending requests and notifications to the peer. Cheap to clone.
#[derive(Clone)]
pub struct Peer {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Peer")
            .field("pending", &lock(&self.shared.pending).len())
            .field("closed", &self.is_closed())
            .finish_non_exhaustive()
    }
}

/// The tasks of one connection. Dropping it stops them.
pub struct Connection {
    driver: Option<JoinHandle<()>>,
    shared: Arc<Shared>,
    grace: Arc<Mutex<Option<Duration>>>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field(
                "running",
                &self.driver.as_ref().is_some_and(|d| !d.is_finished()),
            )
            .finish_non_exhaustive()
    }
}

impl Connection {
    /// Stops reading, lets in-flight inbound requests finish within `grace`, cancels (and
    /// then aborts) the rest, fails every pending outbound request, and closes the
    /// transport's sending half.
    pub async fn shutdown(mut self, grace: Duration) {
        *lock(&self.grace) = Some(grace);
        self.shared.stop.cancel();
        if let Some(driver) = self.driver.take() {
            let _ = driver.await;
        }
    }

    /// Waits until the connection ends on its own (the peer hangs up or a write fails),
    /// including the wind-down of in-flight requests.
    pub async fn closed(mut self) {
        if let Some(driver) = self.driver.take() {
            let _ = driver.await;
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        if let Some(driver) = self.driver.take() {
            self.shared.stop.cancel();
            driver.abort();
            abort_inbound(&self.shared);
            // The driver, which would have, no longer runs: the requests still waiting can
            // get no answer, and the timeout sweeper ends.
            set_close_reason(&self.shared, "the connection was dropped".to_owned());
            close_pending(&self.shared);
        }
    }
}

/// Cancels every inbound request still in flight (each one's task then answers nothing
/// and leaves the table).
fn cancel_inbound(shared: &Shared) {
    let tokens: Vec<CancelSlot> = lock(&shared.inbound)
        .values()
        .map(|in_flight| in_flight.cancel.clone())
        .collect();
    for token in tokens {
        token.cancel();
    }
}

fn abort_inbound(shared: &Shared) {
    for (_, in_flight) in lock(&shared.inbound).drain() {
        in_flight.cancel.cancel();
        if let Some(abort) = in_flight.abort {
            abort.abort();
        }
    }
}

impl Peer {
    /// Starts a connection over `reader` and `writer`, serving the peer's requests with
    /// `handler`. Must be called within a tokio runtime.
    ///
    /// ```
    /// use mcp_jsonrpc::{memory, NoHandler, Peer, PeerConfig, RequestOptions};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let ((a_read, a_write), (b_read, b_write)) = memory::pair(8);
    /// let (client, client_conn) = Peer::connect(a_read, a_write, NoHandler, PeerConfig::default());
    /// let (_server, server_conn) = Peer::connect(b_read, b_write, NoHandler, PeerConfig::default());
    ///
    /// let err = client
    ///     .request("tools/list", Some(&serde_json::json!({})), RequestOptions::default())
    ///     .await
    ///     .unwrap_err();
    /// assert_eq!(err.remote().unwrap().code, mcp_types::ErrorCode::METHOD_NOT_FOUND);
    /// client_conn.shutdown(std::time::Duration::from_secs(1)).await;
    /// server_conn.shutdown(std::time::Duration::from_secs(1)).await;
    /// # });
    /// ```
    pub fn connect<R: FrameReader, W: FrameWriter, H: Handler>(
        reader: R,
        writer: W,
        handler: H,
        config: PeerConfig,
    ) -> (Peer, Connection) {
        let (outbound, outbound_rx) = mpsc::channel(config.outbound_queue.max(1));
        let (control, control_rx) = mpsc::unbounded_channel();
        let shared = Arc::new(Shared {
            config,
            pending: Mutex::new(PendingTable::default()),
            inbound: Mutex::new(HashMap::new()),
            outbound,
            control,
            close_reason: Mutex::new(None),
            stop: CancellationToken::new(),
            writer_stop: CancellationToken::new(),
            sweeper: Notify::new(),
        });
        let grace = Arc::new(Mutex::new(None));
        tokio::spawn(sweep(Arc::clone(&shared)));
        let writer_task = tokio::spawn(write_loop(
            writer,
            outbound_rx,
            control_rx,
            Arc::clone(&shared),
        ));
        let driver = tokio::spawn(drive(
            reader,
            Arc::new(handler),
            Arc::clone(&shared),
            writer_task,
            Arc::clone(&grace),
        ));
        let peer = Peer {
            shared: Arc::clone(&shared),
        };
        (
            peer,
            Connection {
                driver: Some(driver),
                shared,
                grace,
            },
        )
    }

    /// Sends a request and waits for its result, as raw JSON.
    ///
    /// Dropping the returned future withdraws the request (and tells the peer, see
    /// [`PeerConfig::cancel_notifications`]).
    pub fn request<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: Option<&P>,
        options: RequestOptions,
    ) -> impl Future<Output = Result<Box<RawValue>, Error>> {
        let answer = self.request_encoded(
            method,
            move |id| encode_request(id, method, params),
            options,
        );
        async move { answer.await?.into_raw_value() }
    }

    /// [`request`](Self::request) with a frame the caller writes: `encode` is given the
    /// request's id and returns the request's JSON text, as
    /// [`encode_request`](crate::encode_request) would write it for that id and `method`
    /// (for a caller that keeps parts of its requests serialized, or knows their size).
    /// A failure to encode fails the request with [`Error::Encode`], as in `request`.
    ///
    /// The result comes as a [`RawResult`]: when the response is laid out
    /// `{"jsonrpc":"2.0","id":N,"result":…}` it is the unread text of the result, which the
    /// caller's own parse checks (one pass over it instead of two); see [`RawResult`].
    pub async fn request_encoded<F: Into<Bytes>>(
        &self,
        method: &str,
        encode: impl FnOnce(&RequestId) -> Result<F, serde_json::Error>,
        options: RequestOptions,
    ) -> Result<RawResult, Error> {
        let shared = &self.shared;
        let progress = options.progress_token.as_ref().map(|_| {
            Arc::new(ProgressWatch {
                notify: Notify::new(),
                callback: options.on_progress.clone(),
            })
        });
        let (tx, mut rx) = oneshot::channel();
        let waiter = Waiter {
            tx,
            progress: progress.clone(),
        };
        let id = lock(&shared.pending)
            .insert(waiter, options.progress_token.clone())
            .map_err(|Closed| self.closed_error())?;
        if let Some(on_id) = &options.on_id {
            on_id(&id);
        }
        let mut guard = PendingGuard {
            shared,
            id: Some(id.clone()),
            sent: false,
        };
        let frame: Bytes = encode(&id)
            .map_err(|source| Error::Encode {
                method: method.to_owned(),
                source,
            })?
            .into();
        if shared.outbound.send(frame).await.is_err() {
            return Err(self.closed_error());
        }
        guard.sent = true;

        // The timeout runs from here. The connection's sweeper keeps it (`sweep`): no
        // timer of its own per request.
        let started = Instant::now();
        let timeout = options.timeout.unwrap_or(shared.config.request_timeout);
        let hard = after(
            started,
            options
                .max_timeout
                .unwrap_or(shared.config.max_request_timeout),
        );
        let deadline = |now: Instant| after(now, timeout).min(hard);
        let set_deadline = |at: Instant| {
            if lock(&shared.pending).set_deadline(&id, at) {
                shared.sweeper.notify_one();
            }
        };
        set_deadline(deadline(started));
        let answer = match progress.as_deref() {
            None => rx.await,
            Some(watch) => loop {
                tokio::select! {
                    biased;
                    answer = &mut rx => break answer,
                    () = watch.notify.notified() => set_deadline(deadline(Instant::now())),
                }
            },
        };
        // Answered, timed out (the sweeper took the request from the table and told the
        // peer) or closed: the guard has nothing left to withdraw.
        guard.id = None;
        match answer {
            Ok(Err(Error::Timeout { .. })) => Err(Error::Timeout {
                method: method.to_owned(),
                after: started.elapsed(),
            }),
            Ok(answer) => answer,
            Err(_) => Err(self.closed_error()),
        }
    }

    /// Sends a typed request: the method and result type come from `R`.
    pub async fn call<R: mcp_types::Request>(
        &self,
        params: &R::Params,
        options: RequestOptions,
    ) -> Result<R::Result, Error> {
        let raw = self.request(R::METHOD, Some(params), options).await?;
        serde_json::from_str(raw.get()).map_err(|source| Error::Decode {
            method: R::METHOD.to_owned(),
            source,
        })
    }

    /// Sends a notification.
    pub async fn notify<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: Option<&P>,
    ) -> Result<(), Error> {
        let frame = encode_notification(method, params).map_err(|source| Error::Encode {
            method: method.to_owned(),
            source,
        })?;
        self.shared
            .outbound
            .send(frame)
            .await
            .map_err(|_| self.closed_error())
    }

    /// Whether the connection has ended.
    pub fn is_closed(&self) -> bool {
        lock(&self.shared.close_reason).is_some()
    }

    fn closed_error(&self) -> Error {
        Error::Closed(lock(&self.shared.close_reason).clone())
    }
}

/// Tells the peer that our request `id`, which was pending, is withdrawn (unless the
/// configuration says not to). The control queue is unbounded but holds at most one notice
/// per request that was pending, so it is bounded by the pending table.
fn tell_cancelled(shared: &Shared, id: RequestId, reason: &str) {
    if !shared.config.cancel_notifications {
        return;
    }
    let mut params = CancelledNotificationParams::new(id);
    params.reason = Some(reason.to_owned());
    if let Ok(frame) = encode_notification(CANCELLED, Some(&params)) {
        let _ = shared.control.send(frame);
    }
}

/// Closes the pending table: every request still waiting fails (no answer can arrive any
/// more), and the timeout sweeper ends.
fn close_pending(shared: &Shared) {
    let waiters = lock(&shared.pending).close();
    drop(waiters);
    shared.sweeper.notify_one();
}

/// `now + wait`, or a century on for a wait too long to add (`Duration::MAX` means "no
/// timeout" to a caller, not a panic).
fn after(now: Instant, wait: Duration) -> Instant {
    now.checked_add(wait)
        .unwrap_or_else(|| now + Duration::from_hours(100 * 365 * 24))
}

/// The connection's timeout sweeper: sleeps to the earliest deadline of the requests
/// waiting for an answer (or until woken: an earlier deadline, the table closed), fails
/// the ones whose time is up with [`Error::Timeout`] (their futures fill in the method
/// and the time waited) and tells the peer each was cancelled (reason `"timeout"`), as a
/// dropped request future does. It ends when the table closes. While requests keep their
/// usual timeout it sleeps through them: each new deadline is later than the one it
/// sleeps to.
async fn sweep(shared: Arc<Shared>) {
    loop {
        let (expired, next) = {
            let mut table = lock(&shared.pending);
            if table.is_closed() {
                return;
            }
            table.expire(Instant::now())
        };
        for (id, waiter) in expired {
            let _ = waiter.tx.send(Err(Error::Timeout {
                method: String::new(),
                after: Duration::ZERO,
            }));
            tell_cancelled(&shared, id, "timeout");
        }
        match next {
            Some(at) => {
                tokio::select! {
                    biased;
                    () = shared.sweeper.notified() => {}
                    () = tokio::time::sleep_until(at) => {}
                }
            }
            None => shared.sweeper.notified().await,
        }
    }
}

/// Withdraws a request whose future ends without an answer.
struct PendingGuard<'a> {
    shared: &'a Shared,
    id: Option<RequestId>,
    sent: bool,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let was_pending = lock(&self.shared.pending).remove(&id).is_some();
        if was_pending && self.sent {
            tell_cancelled(self.shared, id, "the request was abandoned");
        }
    }
}

async fn write_loop<W: FrameWriter>(
    mut writer: W,
    mut frames: mpsc::Receiver<Bytes>,
    mut control: mpsc::UnboundedReceiver<Bytes>,
    shared: Arc<Shared>,
) {
    // One wait for the stop for the whole loop, as in `drive`: made per turn, it joined and
    // left the token's waiters each time the queue ran dry.
    let stop = shared.writer_stop.cancelled();
    tokio::pin!(stop);
    loop {
        let frame = tokio::select! {
            biased;
            Some(frame) = control.recv() => frame,
            frame = frames.recv() => match frame {
                Some(frame) => frame,
                None => break,
            },
            () = &mut stop => break,
        };
        // Everything already queued goes out behind this frame, then one flush.
        wire(WIRE_OUT, &frame);
        let mut result = writer.write_frame(frame).await;
        while result.is_ok()
            && let Ok(next) = control.try_recv().or_else(|_| frames.try_recv())
        {
            wire(WIRE_OUT, &next);
            result = writer.write_frame(next).await;
        }
        if let Err(e) = match result {
            Ok(()) => writer.flush().await,
            Err(e) => Err(e),
        } {
            tracing::warn!(error = %e, "write failed; closing the connection");
            set_close_reason(&shared, format!("write failed: {e}"));
            shared.stop.cancel();
            return;
        }
    }
    // Whatever was queued before the close goes out, then the pipe closes.
    while let Ok(frame) = control.try_recv().or_else(|_| frames.try_recv()) {
        wire(WIRE_OUT, &frame);
        if writer.write_frame(frame).await.is_err() {
            return;
        }
    }
    let _ = writer.flush().await;
    let _ = writer.close().await;
}

const WIRE_OUT: &str = "sent";
const WIRE_IN: &str = "received";

/// Every frame, at `trace` level under the target `mcp_wire` (a tool's `--verbose`
/// shows the wire with it). Free when that level is off: the frame is only formatted
/// for an enabled subscriber.
#[inline]
fn wire(direction: &'static str, frame: &[u8]) {
    tracing::trace!(target: "mcp_wire", direction, frame = %String::from_utf8_lossy(frame));
}

fn set_close_reason(shared: &Shared, reason: String) {
    let mut slot = lock(&shared.close_reason);
    if slot.is_none() {
        *slot = Some(reason);
    }
}

async fn drive<R: FrameReader, H: Handler>(
    mut reader: R,
    handler: Arc<H>,
    shared: Arc<Shared>,
    writer_task: JoinHandle<()>,
    grace: Arc<Mutex<Option<Duration>>>,
) {
    let peer = Peer {
        shared: Arc::clone(&shared),
    };
    let permits = Arc::new(Semaphore::new(shared.config.max_concurrency.max(1)));
    let tracker = TaskTracker::new();
    // One wait for shutdown for the whole loop: a `cancelled()` made per frame joined and
    // left the token's list of waiters (a lock each way, ~0.4 k instructions per
    // request). A frame the reader has at hand is taken without polling it; shutdown is
    // then seen at the top of the next turn.
    let reason = {
        let stop = shared.stop.cancelled();
        tokio::pin!(stop);
        loop {
            if shared.stop.is_cancelled() {
                break "shut down".to_owned();
            }
            let next = tokio::select! {
                biased;
                next = reader.read_frame() => next,
                () = &mut stop => break "shut down".to_owned(),
            };
            match next {
                None => break "the peer closed the connection".to_owned(),
                Some(Err(e)) if e.is_recoverable() => {
                    tracing::warn!(error = %e, "discarded an unreadable frame");
                    if shared.config.reply_to_malformed {
                        let error = ErrorObject::new(ErrorCode::INVALID_REQUEST, e.to_string());
                        let _ = shared.outbound.send(encode_error(None, &error)).await;
                    }
                }
                Some(Err(e)) => break closed_reason(&e),
                Some(Ok(frame)) => {
                    wire(WIRE_IN, &frame);
                    let dispatch = Dispatch {
                        peer: &peer,
                        handler: &handler,
                        permits: &permits,
                        tracker: &tracker,
                    };
                    if dispatch.frame(&frame).await.is_err() {
                        break "shut down".to_owned();
                    }
                }
            }
        }
    };

    // Every outbound request still waiting fails now: no answer can arrive any more.
    set_close_reason(&shared, reason);
    close_pending(&shared);

    // In-flight inbound requests may finish within the grace; then they are cancelled, and
    // the ones that ignore cancellation are aborted.
    tracker.close();
    let grace = lock(&grace).take().unwrap_or(shared.config.eof_grace);
    if tokio::time::timeout(grace, tracker.wait()).await.is_err() {
        cancel_inbound(&shared);
        if tokio::time::timeout(Duration::from_millis(100), tracker.wait())
            .await
            .is_err()
        {
            abort_inbound(&shared);
            tracker.wait().await;
        }
    }
    shared.stop.cancel();
    shared.writer_stop.cancel();
    let _ = writer_task.await;
}

fn closed_reason(e: &TransportError) -> String {
    match e {
        TransportError::Closed(Some(reason)) => reason.clone(),
        other => other.to_string(),
    }
}

/// The reader's view while it dispatches one frame.
struct Dispatch<'a, H> {
    peer: &'a Peer,
    handler: &'a Arc<H>,
    permits: &'a Arc<Semaphore>,
    tracker: &'a TaskTracker,
}

/// Reading must stop (shutdown arrived while waiting for a concurrency slot).
struct Stop;

impl<H: Handler> Dispatch<'_, H> {
    async fn frame(&self, frame: &Bytes) -> Result<(), Stop> {
        let shared = &self.peer.shared;
        // The usual layouts, their head read once. A response to a request still waiting
        // is handed over unread: the requester's parse of the result is the only one
        // (`received.rs`). Likewise a request: its handler's parse of the params is the
        // only one (`params.rs`).
        if let Some((id, after_id)) = crate::received::integer_id(frame) {
            if let Some(result) = crate::received::result_after_id(frame, after_id) {
                let waiter = lock(&shared.pending).remove(&RequestId::Integer(id));
                if let Some(waiter) = waiter {
                    let _ = waiter.tx.send(Ok(result));
                    return Ok(());
                }
            } else if let Some(request) = crate::params::request_after_id(frame, id, after_id) {
                return self.request(request).await;
            }
        }
        match decode(frame, shared.config.decode) {
            // What needs no waiting is done here; the rest (a request of another layout, a
            // batch, a malformed frame answered) waits in a box of its own. This future is
            // moved into the reader's state once per frame, copied whole: with the rare
            // paths inline it was twice the size of a request's (1,440 bytes), and
            // `memmove` was 7% of a stdio server's samples (issue #8).
            Ok(Decoded::Single(Message::Response(response))) => {
                self.response(response);
                Ok(())
            }
            Ok(Decoded::Single(Message::Notification(notification))) => {
                self.notification(notification);
                Ok(())
            }
            decoded => Box::pin(self.decoded(decoded)).await,
        }
    }

    /// A decoded frame that may have to wait: a request, a batch, or a malformed frame.
    async fn decoded(&self, decoded: Result<Decoded, crate::DecodeError>) -> Result<(), Stop> {
        match decoded {
            Ok(Decoded::Single(message)) => self.message(message).await,
            Ok(Decoded::Batch(messages)) => {
                for message in messages {
                    match message {
                        Ok(message) => self.message(message).await?,
                        Err(e) => self.malformed(&e).await,
                    }
                }
                Ok(())
            }
            Err(e) => {
                self.malformed(&e).await;
                Ok(())
            }
        }
    }

    async fn malformed(&self, e: &crate::DecodeError) {
        let shared = &self.peer.shared;
        tracing::warn!(error = %e, "received a malformed message");
        if shared.config.reply_to_malformed {
            let _ = shared
                .outbound
                .send(encode_error(e.id.as_ref(), &e.to_error_object()))
                .await;
        }
    }

    async fn message(&self, message: Message) -> Result<(), Stop> {
        match message {
            Message::Response(response) => {
                self.response(response);
                Ok(())
            }
            Message::Notification(notification) => {
                self.notification(notification);
                Ok(())
            }
            Message::Request(request) => self.request(request).await,
        }
    }

    fn response(&self, response: Response) {
        let shared = &self.peer.shared;
        let Some(id) = response.id else {
            if let Err(error) = response.outcome {
                tracing::warn!(%error, "the peer reported an error without an id");
            }
            return;
        };
        let waiter = lock(&shared.pending).remove(&id);
        if let Some(waiter) = waiter {
            let _ = waiter
                .tx
                .send(response.outcome.map(RawResult::from).map_err(Error::Remote));
        } else {
            tracing::warn!(%id, "dropped a response to no pending request");
        }
    }

    fn notification(&self, notification: Notification) {
        let shared = &self.peer.shared;
        let params = notification.params.as_deref().map(RawValue::get);
        match notification.method.as_str() {
            CANCELLED => {
                let parsed = params
                    .and_then(|p| serde_json::from_str::<CancelledNotificationParams>(p).ok());
                if let Some(id) = parsed.map(|p| p.request_id) {
                    let in_flight = lock(&shared.inbound).get(&id).map(|f| f.cancel.clone());
                    if let Some(cancel) = in_flight {
                        cancel.cancel();
                        return;
                    }
                }
            }
            PROGRESS => {
                let parsed =
                    params.and_then(|p| serde_json::from_str::<ProgressNotificationParams>(p).ok());
                if let Some(progress) = parsed {
                    let watch = lock(&shared.pending)
                        .by_progress_token(&progress.progress_token)
                        .and_then(|w| w.progress.clone());
                    if let Some(watch) = watch {
                        watch.notify.notify_one();
                        if let Some(callback) = &watch.callback {
                            callback(&progress);
                        }
                        return;
                    }
                }
            }
            _ => {}
        }
        self.handler.notification(notification, self.peer);
    }

    /// Waits for a concurrency slot ([`Overload::Wait`]), or for shutdown.
    async fn wait_for_slot(&self) -> Result<OwnedSemaphorePermit, Stop> {
        tokio::select! {
            biased;
            () = self.peer.shared.stop.cancelled() => Err(Stop),
            permit = Arc::clone(self.permits).acquire_owned() => permit.map_err(|_| Stop),
        }
    }

    async fn request(&self, request: Request) -> Result<(), Stop> {
        let shared = &self.peer.shared;
        if lock(&shared.inbound).contains_key(&request.id) {
            let error = ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                format!("request id {} is already in flight", request.id),
            );
            send_soon(&shared.outbound, encode_error(Some(&request.id), &error)).await;
            return Ok(());
        }
        // A free slot is only looked at here, and taken if the handler has to wait (below):
        // this reader is the only one that takes slots (tasks only give them back), so a
        // slot free now is still free then, and a request answered on its first poll (most
        // are) never takes and gives back a permit, whose return locks the semaphore's
        // waiter list (1.7 % of the stdio server's time per small call). With no slot
        // free, one is waited for, or the request refused, before the handler runs.
        let mut permit: Option<OwnedSemaphorePermit> = None;
        if self.permits.available_permits() == 0 {
            permit = Some(match shared.config.overload {
                // Boxed, to keep this future small (see `frame`).
                Overload::Wait => Box::pin(self.wait_for_slot()).await?,
                Overload::Reject => {
                    let error = ErrorObject::internal(format!(
                        "too many concurrent requests (limit {}); retry later",
                        shared.config.max_concurrency
                    ));
                    send_soon(&shared.outbound, encode_error(Some(&request.id), &error)).await;
                    return Ok(());
                }
            });
        }

        let id = request.id.clone();
        // A token of its own, not a child of a connection-wide one: a child joins and
        // leaves its parent's list under two locks (0.65 k instructions per request).
        // Going away, the connection cancels the requests still in flight through the
        // in-flight table (`cancel_inbound`); one answered on its first poll is never in
        // it, and nothing could have cancelled it meanwhile. The token itself is made
        // only if the handler asks for it or the request is cancelled (`CancelSlot`).
        let cancel = CancelSlot::default();
        let cx = RequestContext {
            id: id.clone(),
            cancel: cancel.clone(),
            sink: NotificationSink::peer(self.peer.clone()),
            transport: None,
        };
        // The handler's state machine lives in one box: a handler future can be many
        // kilobytes, and the task's stage is moved (copied) as the task runs.
        let owner = Arc::clone(self.handler);
        // The box is allocated before the future is made, so the future is written into
        // it: `Box::pin(future)` made it on the stack and copied all of it (the size of
        // its largest state, over a kilobyte) when only its captures were set.
        let slot = Box::new_uninit();
        let mut handler =
            Box::into_pin(Box::write(
                slot,
                async move { owner.request(request, cx).await },
            ));
        // Polled once here first: a handler that answers without waiting (most do) is
        // answered without a task of its own, a spawn and a hand-off fewer per request.
        // Nothing can cancel it meanwhile (cancellations arrive on this task), so it
        // enters the in-flight table only if it has to wait. A panic is contained here as
        // it would be in a task, and answered.
        let first =
            std::future::poll_fn(|task| Poll::Ready(poll_caught(handler.as_mut(), task))).await;
        if let Poll::Ready(outcome) = first {
            drop(permit);
            if !cancel.is_cancelled() {
                // (Only the handler itself can have fired its token by now; a cancelled
                // request gets no response, as from a task.)
                send_soon(&shared.outbound, response_frame(&id, outcome)).await;
            }
            return Ok(());
        }
        let permit = match permit {
            Some(permit) => permit,
            None => match Arc::clone(self.permits).try_acquire_owned() {
                Ok(permit) => permit,
                // Not reached (the slot seen free above is still free), but waited for
                // rather than assumed.
                Err(_) => Box::pin(self.wait_for_slot()).await?,
            },
        };
        lock(&shared.inbound).insert(
            id.clone(),
            InFlight {
                cancel: cancel.clone(),
                abort: None,
            },
        );
        let task_shared = Arc::clone(shared);
        let task_id = id.clone();
        let task = self.tracker.spawn(async move {
            let _permit = permit;
            let outcome = std::future::poll_fn(|task| poll_caught(handler.as_mut(), task)).await;
            lock(&task_shared.inbound).remove(&task_id);
            if cancel.is_cancelled() {
                // The peer cancelled it (or the connection is going away): no response.
                return;
            }
            let _ = task_shared
                .outbound
                .send(response_frame(&task_id, outcome))
                .await;
        });
        if let Some(in_flight) = lock(&shared.inbound).get_mut(&id) {
            in_flight.abort = Some(task.abort_handle());
        }
        Ok(())
    }
}

/// Queues `frame` for the writer: at once when the queue has room (the usual case), else
/// waiting for room in a box of its own, so that a caller's future holds a pointer where
/// it held the whole wait (see `Dispatch::frame`). A closed queue drops the frame, as a
/// failed `send` does.
async fn send_soon(outbound: &mpsc::Sender<Bytes>, frame: Bytes) {
    match outbound.try_send(frame) {
        Ok(()) | Err(mpsc::error::TrySendError::Closed(_)) => {}
        Err(mpsc::error::TrySendError::Full(frame)) => {
            let _ = Box::pin(outbound.send(frame)).await;
        }
    }
}

/// A handler that panicked: the panic is contained and the request answered with -32603.
struct Panicked;

/// Polls a handler's future, containing a panic the way a task would, so the request can
/// still be answered (and leaves the in-flight table).
fn poll_caught<F: Future + ?Sized>(
    future: Pin<&mut F>,
    task: &mut std::task::Context<'_>,
) -> Poll<Result<F::Output, Panicked>> {
    match std::panic::catch_unwind(AssertUnwindSafe(|| future.poll(task))) {
        Ok(Poll::Ready(output)) => Poll::Ready(Ok(output)),
        Ok(Poll::Pending) => Poll::Pending,
        Err(_) => Poll::Ready(Err(Panicked)),
    }
}

/// The response frame for a handler's outcome.
fn response_frame(
    id: &RequestId,
    outcome: Result<Result<Box<RawValue>, ErrorObject>, Panicked>,
) -> Bytes {
    match outcome {
        Ok(Ok(result)) => encode_raw_result(id, &result),
        Ok(Err(error)) => encode_error(Some(id), &error),
        Err(Panicked) => {
            tracing::error!(%id, "a request handler panicked");
            encode_error(
                Some(id),
                &ErrorObject::internal("the request handler failed"),
            )
        }
    }
}
