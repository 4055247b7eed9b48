//! The peer: one connection's engine, over any [`FrameReader`] and [`FrameWriter`].
//!
//! [`Peer::connect`] starts two tasks owned by the returned [`Connection`]: the driver,
//! which reads frames, routes responses to waiting callers and dispatches requests to the
//! [`Handler`], and the writer, which owns the transport's sending half and writes frames
//! from a bounded queue (or lets a sender write its frame itself while it is idle,
//! [`PeerConfig::write_through`], in `write.rs`). A [`Peer`] is the cheap, cloneable handle
//! for sending requests and notifications.
//!
//! Cancellation and timeouts follow <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/cancellation> and
//! <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/progress>: a request that times out or whose future is
//! dropped is withdrawn, and (when [`PeerConfig::cancel_notifications`] is on, as for stdio)
//! the peer is sent `notifications/cancelled`; progress for a request resets its timeout,
//! never past the hard maximum. A request the peer cancels gets no response.
//!
//! The inbound side (the driver and the dispatch of requests) is in `inbound.rs`, what a
//! handler is given ([`RequestContext`]) in `context.rs`.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use mcp_types::{
    CancelledNotificationParams, McpParamHeader, ProgressNotificationParams, ProgressToken,
    RequestId,
};
use serde::Serialize;
use serde_json::value::RawValue;
use tokio::sync::{Notify, mpsc, oneshot};
use tokio::task::{AbortHandle, JoinHandle};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::error::Error;
use crate::message::RawResult;
use crate::message::{
    DecodeOptions, ErrorObject, Notification, Request, encode_notification, encode_request,
};
use crate::pending::{Closed, PendingTable};
use crate::transport::{FrameReader, FrameWriter};

mod context;
mod inbound;
mod write;

use context::CancelSlot;
pub use context::{Headers, Principal, RequestContext, TransportInfo};
use inbound::drive;
use write::{WriteThrough, WriterSlot, write_loop};

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
    /// cancels its handlers and exits on its own, as <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/stdio>
    /// (Shutdown) asks, instead of being killed with its handlers mid-way.
    pub eof_grace: Duration,
    /// Let a sender write its frame itself when the writer is idle and nothing is
    /// queued, rather than queue it for the write loop (on by default). Each frame then
    /// leaves as it is made, and the peer works on it while the next ones are made: a
    /// burst of answers that wakes many callers, each with its next request, or a batch
    /// of requests whose handlers answer one after another, no longer waits for the last
    /// of them before anything is written, and the two ends work at once instead of by
    /// turns. Frames queue for the loop (and go out together, with one flush) only while
    /// a write waits on the peer; they keep their order either way. The cost is a write
    /// per frame rather than per burst. Only transports whose
    /// [`FrameWriter::write_now`] takes frames (stdio's) are affected.
    pub write_through: bool,
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
            write_through: true,
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

    /// The request fields this handler's requests mirror into transport metadata, for a
    /// transport that checks them before dispatch (Streamable HTTP's `Mcp-Name` and
    /// `Mcp-Param-*` headers). A server core derives them from what it has registered, so
    /// that serving it checks what the spec requires without further wiring. The default
    /// adds nothing to the transport's own rules.
    fn mirrored(&self) -> Mirrored {
        Mirrored::default()
    }
}

/// A tool's mirrored arguments by tool name, as [`Mirrored::param_headers`] looks them up.
pub type ParamHeaderLookup = Arc<dyn Fn(&str) -> Vec<McpParamHeader> + Send + Sync>;

/// What a [`Handler`] asks a transport to check, beyond the transport's own rules, where
/// the transport mirrors request fields into its metadata
/// (<https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>,
/// the `Mcp-Name` and `Mcp-Param-*` headers). Wrappers of a handler pass it on.
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct Mirrored {
    /// Methods, beyond `tools/call`, `prompts/get` and `resources/read`, whose `params`
    /// field of this name is mirrored into `Mcp-Name`: the Tasks extension's `tasks/*`
    /// methods and `taskId` when the handler serves tasks.
    pub name_fields: Vec<(&'static str, &'static str)>,
    /// The `x-mcp-header` annotations of a tool's input schema, looked up on every
    /// `tools/call`; `None` when no tool can declare any.
    pub param_headers: Option<ParamHeaderLookup>,
}

impl Mirrored {
    /// Mirrors `field` of `method`'s params into `Mcp-Name`.
    #[must_use]
    pub fn name_field(mut self, method: &'static str, field: &'static str) -> Self {
        self.name_fields.push((method, field));
        self
    }

    /// Looks up each tool's mirrored arguments with `lookup`.
    #[must_use]
    pub fn param_headers(
        mut self,
        lookup: impl Fn(&str) -> Vec<McpParamHeader> + Send + Sync + 'static,
    ) -> Self {
        self.param_headers = Some(Arc::new(lookup));
        self
    }
}

impl std::fmt::Debug for Mirrored {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mirrored")
            .field("name_fields", &self.name_fields)
            .field("param_headers", &self.param_headers.is_some())
            .finish()
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
    outbound: mpsc::Sender<write::Frame>,
    /// Cancellation notices: at most one per pending request, so bounded by the table.
    control: mpsc::UnboundedSender<Bytes>,
    /// Frames on `control` the write loop has not taken yet (`write.rs`).
    control_queued: AtomicUsize,
    /// The writer's slot, for senders to write through ([`PeerConfig::write_through`]).
    through: Option<Arc<dyn WriteThrough>>,
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
        Self::connect_with(reader, writer, config, |_| handler)
    }

    /// [`connect`](Self::connect) for a handler that needs the connection's own [`Peer`]
    /// (to send requests of its own to the other side): `make` is given the peer, and
    /// returns the handler, before the first message is read. A handler that learnt its
    /// peer only after `connect` returned could be handed a message first: the reading
    /// task may run on another thread at once.
    ///
    /// ```
    /// use mcp_jsonrpc::{memory, NoHandler, Peer, PeerConfig};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let ((a_read, a_write), _other_end) = memory::pair(8);
    /// let mut seen = None;
    /// let (peer, connection) = Peer::connect_with(a_read, a_write, PeerConfig::default(), |peer| {
    ///     seen = Some(peer.clone());
    ///     NoHandler
    /// });
    /// assert!(seen.is_some());
    /// # drop(peer);
    /// connection.shutdown(std::time::Duration::from_secs(1)).await;
    /// # });
    /// ```
    pub fn connect_with<R: FrameReader, W: FrameWriter, H: Handler>(
        reader: R,
        writer: W,
        config: PeerConfig,
        make: impl FnOnce(&Peer) -> H,
    ) -> (Peer, Connection) {
        let (outbound, outbound_rx) = mpsc::channel(config.outbound_queue.max(1));
        let (control, control_rx) = mpsc::unbounded_channel();
        let slot = Arc::new(WriterSlot::new(writer));
        let through = config
            .write_through
            .then(|| Arc::clone(&slot) as Arc<dyn WriteThrough>);
        let shared = Arc::new(Shared {
            config,
            pending: Mutex::new(PendingTable::default()),
            inbound: Mutex::new(HashMap::new()),
            outbound,
            control,
            control_queued: AtomicUsize::new(0),
            through,
            close_reason: Mutex::new(None),
            stop: CancellationToken::new(),
            writer_stop: CancellationToken::new(),
            sweeper: Notify::new(),
        });
        let grace = Arc::new(Mutex::new(None));
        let peer = Peer {
            shared: Arc::clone(&shared),
        };
        let handler = make(&peer);
        tokio::spawn(sweep(Arc::clone(&shared)));
        let writer_task = tokio::spawn(write_loop(
            slot,
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
    /// The result comes as a [`RawResult`], the checked text of the result, for the
    /// caller's own parse.
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
        if write::send(shared, frame).await.is_err() {
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
        write::send(&self.shared, frame)
            .await
            .map_err(|()| self.closed_error())
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
        write::queue_control(shared, frame);
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
