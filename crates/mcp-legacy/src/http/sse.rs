//! The deprecated HTTP+SSE transport of 2024-11-05
//! (<https://modelcontextprotocol.io/specification/2024-11-05/basic/transports>, HTTP with
//! SSE), for clients that never learned Streamable HTTP; behind the `http-sse` cargo
//! feature, as the 2026-07-28 transport
//! (<https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>,
//! Backward Compatibility) suggests: the old endpoints beside the new one.
//!
//! - GET on [`LegacyHttpConfig::sse_path`](super::LegacyHttpConfig::sse_path) opens the
//!   session's one SSE stream; its first event is `endpoint`, whose data is the URI to POST
//!   to: [`messages_path`](super::LegacyHttpConfig::messages_path) with the session id in
//!   the `sessionId` query parameter. Closing that stream ends the session. The session
//!   counts against the same caps as Streamable HTTP sessions, and one that has not
//!   completed its handshake within
//!   [`session_grace`](super::LegacyHttpConfig::session_grace) ends, its stream open or
//!   not.
//! - Each POST there carries one JSON-RPC message (`Content-Type: application/json`,
//!   `415` otherwise) and is answered `202 Accepted` at once; responses, notifications and
//!   server-to-client requests all go on the SSE stream. Its `Content-Type`, its length,
//!   authentication, the session and a slot of the server's concurrency limit are
//!   decided from the head, before its body is read. A request (`initialize` too) holds
//!   its slot, and one of the session's
//!   [`max_streams_per_session`](super::LegacyHttpConfig::max_streams_per_session)
//!   running places, until it ends (`503` past either).
//! - The same legacy session logic as Streamable HTTP serves it: `initialize` negotiates,
//!   the core's handlers answer, `input_required` becomes real requests on the stream.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

use bytes::Bytes;
use futures_util::StreamExt as _;
use http::{Method, Request, Response, StatusCode};
use mcp_jsonrpc::{
    DecodeOptions, Decoded, ErrorObject, Handler, Message, NotificationSink, decode, encode_error,
    encode_raw_result,
};
use mcp_types::ErrorCode;

use super::auth::{Caller, transport_info};
use super::respond::refuse_body_type;
use super::state::NotRegistered;
use super::state::{answer, notify};
use super::table::Bucket;
use super::{
    DualEraBody, HttpSession, RequestBody, Run, Shared, TOO_MANY_SESSIONS, accepts, empty, json,
    refusal, sse,
};
use crate::session::{self, lock};

impl<H: Handler> Shared<H> {
    /// Whether `request` is for one of the HTTP+SSE endpoints.
    pub(super) fn is_sse_transport<B>(&self, request: &Request<B>) -> bool {
        let path = request.uri().path();
        let (Some(sse_path), messages) = (&self.legacy.sse_path, &self.legacy.messages_path) else {
            return false;
        };
        (request.method() == Method::GET && path == sse_path)
            || (request.method() == Method::POST && path == messages)
    }

    /// Routes a request [`is_sse_transport`](Self::is_sse_transport) accepted.
    pub(super) async fn sse_transport<B: RequestBody>(
        self: Arc<Self>,
        request: Request<B>,
        peer: Option<SocketAddr>,
    ) -> Response<DualEraBody> {
        if request.method() == Method::GET {
            if !accepts(request.headers(), "text/event-stream") {
                return refusal(
                    StatusCode::NOT_ACCEPTABLE,
                    "Accept must list text/event-stream",
                );
            }
            // Authenticated like every other request; the session belongs to whoever
            // opened its stream.
            let caller = match self.authenticate(request.headers()).await {
                Ok(caller) => caller,
                Err(refused) => return refused,
            };
            return self.sse_open(&caller, peer);
        }
        // Decided from the head, before a byte of the body is read.
        let headers = request.headers();
        if let Some(refused) = refuse_body_type(headers).or_else(|| self.refuse_length(headers)) {
            return refused;
        }
        let id = request
            .uri()
            .query()
            .and_then(|q| {
                q.split('&')
                    .find_map(|pair| pair.strip_prefix("sessionId="))
            })
            .map(str::to_owned);
        let Some(id) = id else {
            return refusal(
                StatusCode::BAD_REQUEST,
                "the sessionId query parameter is missing",
            );
        };
        let (slot, caller, session, head, bytes) = match self.admit_post(&id, request, false).await
        {
            Ok(post) => post,
            Err(refused) => return refused,
        };
        let message = match decode(&bytes, DecodeOptions::default()) {
            Ok(Decoded::Single(message)) => message,
            Ok(_) => {
                return refusal(
                    StatusCode::BAD_REQUEST,
                    "batches are not part of 2024-11-05",
                );
            }
            Err(e) => {
                return json(
                    StatusCode::BAD_REQUEST,
                    encode_error(e.id.as_ref(), &e.to_error_object()),
                );
            }
        };
        let initialize =
            matches!(&message, Message::Request(request) if request.method == "initialize");
        // Anything after a successful `initialize` completes the handshake.
        if !initialize && session.session.get().is_some() {
            session.complete();
        }
        match message {
            Message::Request(request) => {
                if !initialize && let Err(refused) = self.authorize(&caller, &request) {
                    return refused;
                }
                let token = session.token.child_token();
                let limit = Some(self.legacy.max_streams_per_session);
                if let Err(refused) = session.register(&request.id, &token, limit) {
                    let status = match refused {
                        NotRegistered::Busy => StatusCode::SERVICE_UNAVAILABLE,
                        NotRegistered::Duplicate => StatusCode::BAD_REQUEST,
                    };
                    return json(status, encode_error(Some(&request.id), &refused.error()));
                }
                let info = transport_info(head, &caller);
                let run = Run {
                    session,
                    request,
                    token,
                    info,
                    slot,
                };
                if initialize {
                    let shared = Arc::clone(&self);
                    tokio::spawn(async move { shared.sse_initialize(run).await });
                } else {
                    let log = Arc::clone(&run.session.get);
                    let one = Arc::new(AtomicUsize::new(1));
                    self.spawn_request(run, &log, &one, false);
                }
            }
            // An HTTP+SSE session lives on this instance only: nothing is forwarded.
            Message::Response(response) => drop(answer(&session, response)),
            Message::Notification(notification) => drop(notify(&session, &notification)),
            _ => {}
        }
        empty(StatusCode::ACCEPTED)
    }

    /// GET on the SSE path: a new session and its stream, opened by the `endpoint` event.
    fn sse_open(&self, caller: &Caller, peer: Option<SocketAddr>) -> Response<DualEraBody> {
        let Some(id) = self.session_id() else {
            return self.unavailable("no session id can be made now; retry later");
        };
        let http = HttpSession::new(
            None,
            false,
            self.root.child_token(),
            Bucket::of(caller, peer),
        );
        let http = Arc::new(http.owned_by(caller));
        let Some(in_use) = self.admit(id.clone(), &http) else {
            return self.unavailable(TOO_MANY_SESSIONS);
        };

        let endpoint = Bytes::from(format!(
            "event: endpoint\ndata: {}?sessionId={id}\n\n",
            self.legacy.messages_path
        ));
        // The stream's end is the session's end: the guard lives as long as the body.
        let guard = EndSession {
            sessions: Arc::downgrade(&self.sessions),
            id,
            session: Arc::clone(&http),
        };
        let events = http
            .get
            .reader(0, Some(endpoint), self.pacing(&http))
            .map(move |event| {
                let _ = &guard;
                event
            });
        // The reader keeps the session busy from here on.
        drop(in_use);
        sse(events)
    }

    /// `initialize` on the HTTP+SSE transport: the answer goes on the stream.
    async fn sse_initialize(&self, run: Run) {
        let (tx, _rx) = tokio::sync::mpsc::channel(1);
        let cx = run.context(NotificationSink::channel(tx));
        let Run {
            session: http,
            request,
            token,
            slot,
            ..
        } = run;
        let id = request.id.clone();
        let frame = if http.session.get().is_some() {
            Some(encode_error(
                Some(&id),
                &ErrorObject::new(ErrorCode::INVALID_REQUEST, session::ALREADY_INITIALIZED),
            ))
        } else {
            let handshake = session::initialize(&*self.inner, &self.legacy.versions, request, cx);
            tokio::select! {
                // Cancelled (`notifications/cancelled`, or the session ended): no response.
                () = token.cancelled() => None,
                outcome = handshake => Some(match outcome {
                    Ok((legacy, result)) => {
                        let _ = http.session.set(legacy);
                        self.start_relay(&http).await;
                        encode_raw_result(&id, &result)
                    }
                    Err(error) => encode_error(Some(&id), &error),
                }),
            }
        };
        lock(&http.running).remove(&id);
        if let Some(frame) = frame {
            http.get.append(frame, false).await;
        }
        // The session stayed busy, and the slot taken, until the answer was on the stream.
        drop((http, slot));
    }
}

/// Ends an HTTP+SSE session when its stream's body is dropped.
struct EndSession {
    sessions: std::sync::Weak<super::Sessions>,
    id: String,
    session: Arc<HttpSession>,
}

impl Drop for EndSession {
    fn drop(&mut self) {
        if let Some(sessions) = self.sessions.upgrade() {
            // Only this stream's session: an evicted or expired one is gone already.
            lock(&sessions).remove_if(&self.id, |session| Arc::ptr_eq(session, &self.session));
        }
        self.session.end();
    }
}
