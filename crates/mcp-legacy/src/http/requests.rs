//! A session's requests on Streamable HTTP: the `initialize` that opens it; the requests a
//! POST carries, run on their own tasks with their stream ([`Shared::session_post`]); a
//! GET's stream of change notifications, or the resumption of a request's stream; the
//! DELETE that ends it.

use std::future::Future as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::Poll;

use http::{HeaderMap, HeaderValue, Request, Response, StatusCode};
use mcp_jsonrpc::{
    CancellationToken, DecodeOptions, Decoded, ErrorObject, Handler, LazyChannel, Message,
    NotificationSink, RequestContext, decode, encode_error, encode_raw_result,
};
use mcp_transport_http::ConcurrencySlot;
use mcp_types::ErrorCode;
use tokio::sync::mpsc;

use super::log::{EventLog, parse_event_id, priming_event};
use super::state::{HttpSession, answer, notify};
use super::table::Bucket;
use super::{
    DualEraBody, LAST_EVENT_ID, NOTIFICATION_BUFFER, RequestBody, Run, SESSION_ID,
    SESSION_NOT_FOUND, Shared, Step, TOO_MANY_REQUESTS, TOO_MANY_SESSIONS, accepts, auth, empty,
    json, refusal, refusal_with, refuse_content, sse,
};
use crate::session::{self, Link, lock};

impl<H: Handler> Shared<H> {
    /// A new legacy session, from its `initialize` request.
    pub(super) async fn initialize(
        &self,
        head: http::request::Parts,
        caller: &auth::Caller,
        bucket: Bucket,
        request: mcp_jsonrpc::Request,
        slot: ConcurrencySlot,
    ) -> Response<DualEraBody> {
        let id = request.id.clone();
        let token = self.root.child_token();
        let (tx, _rx) = mpsc::channel(1);
        let cx = RequestContext::new(id.clone(), token.clone(), NotificationSink::channel(tx))
            .with_transport_info(auth::transport_info(head, caller));
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
        let Some(session_id) = self.session_id() else {
            return self.unavailable("no session id can be made now; retry later");
        };
        #[cfg(feature = "session-redis")]
        if let Some(fleet) = &self.fleet {
            let body = encode_raw_result(&id, &result);
            let response = self
                .initialize_shared(fleet, session_id, session, caller, bucket, body)
                .await;
            drop(slot);
            return response;
        }
        let http = Arc::new(HttpSession::new(Some(session), true, token, bucket).owned_by(caller));
        // The caps are checked and the session inserted in one step, after the
        // handshake's await: concurrent handshakes never take the table past a cap.
        let Some(in_use) = self.admit(session_id.clone(), &http) else {
            http.end();
            return self.unavailable(TOO_MANY_SESSIONS);
        };
        self.start_relay(&http).await;
        let body = encode_raw_result(&id, &result);
        let mut response = json(StatusCode::OK, body);
        if let Ok(value) = HeaderValue::from_str(&session_id) {
            response.headers_mut().insert(SESSION_ID, value);
        }
        drop((in_use, slot));
        response
    }

    /// Starts the relay of change notifications to the session's GET stream.
    pub(super) async fn start_relay(&self, http: &Arc<HttpSession>) {
        if let Some(legacy) = http.session.get() {
            let outbound = self.outbound(http, Arc::clone(&http.get));
            session::relisten(&self.inner, legacy, &Link::Http(&outbound)).await;
        }
    }

    pub(super) async fn session_post<B: RequestBody>(
        self: Arc<Self>,
        id: &str,
        request: Request<B>,
    ) -> Response<DualEraBody> {
        // Decided from the head, before a byte of the body is read.
        let headers = request.headers();
        if let Some(refused) = refuse_content(headers)
            .or_else(|| self.refuse_version(headers))
            .or_else(|| self.refuse_length(headers))
        {
            return refused;
        }
        let (slot, caller, session, head, bytes) = match self.admit_post(id, request, true).await {
            Ok(post) => post,
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
        // What a request of another instance of the fleet waits for (empty, never
        // allocated, for a session of this instance only).
        #[cfg(feature = "session-redis")]
        let (mut answers, mut cancels) = (Vec::new(), Vec::new());
        for message in messages {
            match message {
                Ok(Message::Request(request)) => requests.push(request),
                Ok(Message::Response(response)) => {
                    let unrouted = answer(&session, response);
                    #[cfg(feature = "session-redis")]
                    if session.fleet.is_some() {
                        answers.extend(unrouted);
                    }
                    #[cfg(not(feature = "session-redis"))]
                    drop(unrouted);
                }
                Ok(Message::Notification(notification)) => {
                    let unrouted = notify(&session, &notification);
                    #[cfg(feature = "session-redis")]
                    if session.fleet.is_some() {
                        cancels.extend(unrouted);
                    }
                    #[cfg(not(feature = "session-redis"))]
                    drop(unrouted);
                }
                Ok(_) => {}
                Err(e) => errors.push(encode_error(e.id.as_ref(), &e.to_error_object())),
            }
        }
        #[cfg(feature = "session-redis")]
        if (!answers.is_empty() || !cancels.is_empty())
            && let Err(refused) = self.forward(&session, answers, cancels).await
        {
            return refused;
        }
        if requests.is_empty() && errors.is_empty() {
            return empty(StatusCode::ACCEPTED);
        }
        // All or nothing: a batch with one request the principal may not make runs none.
        if let Err(refused) = self.authorize_all(&caller, &requests) {
            return refused;
        }
        // Each request holds a slot of the concurrency limit: the head's for the first,
        // one more for each other of a batch. A batch that cannot have them all runs none.
        let mut slots = Vec::with_capacity(requests.len());
        slots.extend((!requests.is_empty()).then_some(slot));
        while slots.len() < requests.len() {
            let Some(slot) = self.modern.try_slot() else {
                return self.unavailable(TOO_MANY_REQUESTS);
            };
            slots.push(slot);
        }
        let Some(log) = self.open_stream(&session) else {
            return refusal(
                StatusCode::SERVICE_UNAVAILABLE,
                "too many open streams in this session",
            );
        };
        let info = auth::transport_info(head, &caller);
        let mut runs = Vec::with_capacity(requests.len());
        for (request, slot) in requests.into_iter().zip(slots) {
            // Not a child of the session's token (whose lock every request of the session
            // would take twice): registered, it is cancelled with the session all the same.
            let token = CancellationToken::new();
            match session.register(&request.id, &token, None) {
                Ok(()) => runs.push(Run {
                    session: session.clone(),
                    request,
                    token,
                    info: Arc::clone(&info),
                    slot,
                }),
                Err(refused) => errors.push(encode_error(Some(&request.id), &refused.error())),
            }
        }
        let remaining = Arc::new(AtomicUsize::new(runs.len()));
        // One message, one answer: a plain JSON reply when nothing else goes first.
        let single = !batch;
        // Without requests, the last error response ends the stream.
        let count = errors.len();
        let none_run = runs.is_empty();
        for (i, error) in errors.into_iter().enumerate() {
            log.append(error, none_run && i + 1 == count).await;
        }
        // A lone request is run where it came in, until it has to wait.
        if runs.len() == 1
            && let Some(run) = runs.pop()
        {
            self.run_request(run, &log, &remaining, true).await;
        } else {
            for run in runs {
                self.spawn_request(run, &log, &remaining, true);
            }
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
    pub(super) fn open_stream(&self, session: &HttpSession) -> Option<Arc<EventLog>> {
        let mut streams = lock(&session.streams);
        if streams.len() >= self.legacy.max_streams_per_session {
            streams.retain(|_, log| !log.drained() || log.has_reader());
        }
        if streams.len() >= self.legacy.max_streams_per_session {
            return None;
        }
        let number = session.next_stream.fetch_add(1, Ordering::Relaxed);
        if session.stream_limit().is_some_and(|limit| number >= limit) {
            return None;
        }
        let log = EventLog::mirrored(
            number,
            false,
            #[cfg(feature = "session-redis")]
            session.fleet.as_ref().map(|f| f.mirror.clone()),
        );
        streams.insert(number, Arc::clone(&log));
        Some(log)
    }

    /// Runs one registered request of a session on a task of its own: a disconnect is
    /// not a cancellation
    /// (<https://modelcontextprotocol.io/specification/2025-11-25/basic/transports>), the
    /// session's end and the client's `notifications/cancelled` are. The task holds the
    /// request's concurrency slot and keeps the session busy until it ends.
    /// With `finishes`, the last response ends the stream (a POST's stream); without, the
    /// stream goes on (the single stream of the HTTP+SSE transport).
    pub(super) fn spawn_request(
        self: &Arc<Self>,
        run: Run,
        log: &Arc<EventLog>,
        remaining: &Arc<AtomicUsize>,
        finishes: bool,
    ) {
        let task = Self::request_task(
            Arc::clone(self),
            run,
            Arc::clone(log),
            Arc::clone(remaining),
            finishes,
        );
        tokio::spawn(task);
    }

    /// Runs one registered request as [`spawn_request`](Self::spawn_request) does, but
    /// polls it once on the caller's task first: a request answered on its first poll
    /// (most are) costs no task and no hand-off between threads. One that has to wait
    /// goes on a task of its own from there, so a disconnect still does not cancel it.
    pub(super) async fn run_request(
        self: &Arc<Self>,
        run: Run,
        log: &Arc<EventLog>,
        remaining: &Arc<AtomicUsize>,
        finishes: bool,
    ) {
        let (shared, log, remaining) = (Arc::clone(self), Arc::clone(log), Arc::clone(remaining));
        // Allocated first and the future written into it, not made on the stack and
        // copied whole: the request's future holds the handler's.
        let slot = Box::new_uninit();
        let task = Box::write(slot, async move {
            Self::request_task(shared, run, log, remaining, finishes).await;
        });
        let mut task = Box::into_pin(task);
        // The caller's waker may be woken once more by what the request waited on; a
        // spurious wake of the connection's task is harmless.
        if std::future::poll_fn(|cx| Poll::Ready(task.as_mut().poll(cx)))
            .await
            .is_pending()
        {
            tokio::spawn(task);
        }
    }

    pub(super) async fn request_task(
        shared: Arc<Self>,
        run: Run,
        log: Arc<EventLog>,
        remaining: Arc<AtomicUsize>,
        finishes: bool,
    ) {
        {
            // The notification channel is made only if the handler sends one.
            let notifications = Arc::new(LazyChannel::new(NOTIFICATION_BUFFER));
            let cx = run.context(NotificationSink::lazy(Arc::clone(&notifications)));
            let Run {
                session,
                request,
                token,
                slot,
                ..
            } = run;
            let id = request.id.clone();
            // What changes a shared session's state is written to the store before it
            // is answered.
            #[cfg(feature = "session-redis")]
            let stateful = session.fleet.is_some()
                && matches!(
                    request.method.as_str(),
                    "logging/setLevel" | "resources/subscribe" | "resources/unsubscribe"
                );
            #[cfg(feature = "session-redis")]
            let method = stateful.then(|| request.method.clone());
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
            // Made, not polled, until the request waits: a request answered on its first
            // poll never touches the session's token.
            let mut cancelled = std::pin::pin!(token.cancelled());
            let mut rx = None;
            let outcome = loop {
                let step = std::future::poll_fn(|task| {
                    if let Poll::Ready(outcome) = run.as_mut().poll(task) {
                        return Poll::Ready(Step::Done(outcome));
                    }
                    if cancelled.as_mut().poll(task).is_ready() {
                        return Poll::Ready(Step::Cancelled);
                    }
                    if rx.is_none() {
                        rx = notifications.poll_receiver(task);
                    }
                    match rx.as_mut().map(|rx| rx.poll_recv(task)) {
                        Some(Poll::Ready(Some(frame))) => Poll::Ready(Step::Frame(frame)),
                        _ => Poll::Pending,
                    }
                })
                .await;
                match step {
                    Step::Done(outcome) => break Some(outcome),
                    Step::Cancelled => break None,
                    Step::Frame(frame) => log.append(frame, false).await,
                }
            };
            #[cfg(feature = "session-redis")]
            let outcome = match (outcome, method) {
                (Some(Ok(result)), Some(method)) => {
                    Some(shared.store_state(&session, &method).await.map(|()| result))
                }
                (outcome, _) => outcome,
            };
            lock(&session.running).remove(&id);
            // What the handler sent before it finished goes before its answer; anything
            // sent after fails.
            if let Some(mut rx) = rx.or_else(|| notifications.close()) {
                notifications.close();
                while let Ok(frame) = rx.try_recv() {
                    log.append(frame, false).await;
                }
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
                // Cancelled: no response
                // (<https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/cancellation>).
                None if last => log.finish(),
                None => {}
            }
            // The slot is given back, and the session left idle (`session` drops with the
            // task), only once the request's answer is on its stream.
            drop(slot);
        }
    }

    pub(super) async fn session_get(&self, id: &str, headers: &HeaderMap) -> Response<DualEraBody> {
        if !accepts(headers, "text/event-stream") {
            return refusal(
                StatusCode::NOT_ACCEPTABLE,
                "Accept must list text/event-stream",
            );
        }
        if let Some(refused) = self.refuse_version(headers) {
            return refused;
        }
        let caller = match self.authenticate(headers).await {
            Ok(caller) => caller,
            Err(refused) => return refused,
        };
        #[cfg(feature = "session-redis")]
        let found = match &self.fleet {
            Some(fleet) => self.find_shared(fleet, id, &caller).await,
            None => self.find(id, &caller, true),
        };
        #[cfg(not(feature = "session-redis"))]
        let found = self.find(id, &caller, true);
        let session = match found {
            Ok(session) => session,
            Err(unknown) => return unknown,
        };
        if let Some(last) = headers.get(LAST_EVENT_ID) {
            // The id is the client's word: a number this session never gave (malformed,
            // out of range, or past its stream's end) is refused, never computed with.
            let Some((stream, seq)) = last.to_str().ok().and_then(parse_event_id) else {
                return refusal(StatusCode::BAD_REQUEST, "Last-Event-ID is not one of ours");
            };
            let log = if stream == session.get.stream() {
                Some(Arc::clone(&session.get))
            } else {
                lock(&session.streams).get(&stream).cloned()
            };
            // A stream of another instance of the fleet, replayed from the store.
            #[cfg(feature = "session-redis")]
            if log.is_none() && session.fleet.is_some() {
                let pacing = self.pacing(&session);
                return self.resume_shared(&session, stream, seq, pacing).await;
            }
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
            .then(|| priming_event(session.get.stream(), self.legacy.retry));
        sse(session
            .get
            .reader(session.get.delivered(), priming, self.pacing(&session)))
    }

    pub(super) async fn session_delete(
        &self,
        id: &str,
        headers: &HeaderMap,
    ) -> Response<DualEraBody> {
        let caller = match self.authenticate(headers).await {
            Ok(caller) => caller,
            Err(refused) => return refused,
        };
        #[cfg(feature = "session-redis")]
        if let Some(fleet) = &self.fleet {
            return self.delete_shared(fleet, id, &caller).await;
        }
        let removed = lock(&self.sessions).remove_if(id, |session| session.belongs_to(&caller));
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
