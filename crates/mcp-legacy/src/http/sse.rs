//! The deprecated HTTP+SSE transport of 2024-11-05 (`docs/2024-11-05/basic/transports.mdx`,
//! HTTP with SSE), for clients that never learned Streamable HTTP; behind the `http-sse`
//! cargo feature, as `docs/2026-07-28/basic/transports/streamable-http.mdx` (Backward
//! Compatibility) suggests: the old endpoints beside the new one.
//!
//! - GET on [`LegacyHttpConfig::sse_path`](super::LegacyHttpConfig::sse_path) opens the
//!   session's one SSE stream; its first event is `endpoint`, whose data is the URI to POST
//!   to: [`messages_path`](super::LegacyHttpConfig::messages_path) with the session id in
//!   the `sessionId` query parameter. Closing that stream ends the session.
//! - Each POST there carries one JSON-RPC message and is answered `202 Accepted` at once;
//!   responses, notifications and server-to-client requests all go on the SSE stream.
//! - The same legacy session logic as Streamable HTTP serves it: `initialize` negotiates,
//!   the core's handlers answer, `input_required` becomes real requests on the stream.

use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

use bytes::Bytes;
use futures_util::StreamExt as _;
use http::{HeaderMap, Method, Request, Response, StatusCode};
use http_body::Body;
use mcp_jsonrpc::{
    DecodeOptions, Decoded, ErrorObject, Handler, Message, NotificationSink, RequestContext,
    decode, encode_error, encode_raw_result,
};
use mcp_types::ErrorCode;

use super::auth::{Caller, transport_info};
use super::{
    DualEraBody, HttpSession, Shared, accepts, answer, empty, json, new_session_id, notify,
    refusal, refusal_with, sse,
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
    pub(super) async fn sse_transport<B>(
        self: Arc<Self>,
        request: Request<B>,
    ) -> Response<DualEraBody>
    where
        B: Body + Send + 'static,
        B::Data: bytes::Buf + Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        // Authenticated like every other request; the session belongs to whoever opened
        // its stream.
        let caller = match self.authenticate(request.headers()).await {
            Ok(caller) => caller,
            Err(refused) => return refused,
        };
        if request.method() == Method::GET {
            return self.sse_open(request.headers(), &caller);
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
        let session = match self.find(&id, &caller) {
            Ok(session) => session,
            Err(unknown) => return unknown,
        };
        let (head, body) = request.into_parts();
        let bytes = match self.read_body(&head.headers, body).await {
            Ok(bytes) => bytes,
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
        match message {
            Message::Request(request) if request.method == "initialize" => {
                let shared = Arc::clone(&self);
                let info = transport_info(&head.headers, &caller);
                tokio::spawn(async move { shared.sse_initialize(&session, info, request).await });
            }
            Message::Request(_)
                if lock(&session.running).len() >= self.legacy.max_streams_per_session =>
            {
                return refusal(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "too many requests running in this session",
                );
            }
            Message::Request(request) => {
                if let Err(refused) = self.authorize(&caller, &request) {
                    return refused;
                }
                let info = transport_info(&head.headers, &caller);
                let log = Arc::clone(&session.get);
                let one = Arc::new(AtomicUsize::new(1));
                self.spawn_request(&session, &log, &one, request, info, false);
            }
            Message::Response(response) => answer(&session, response),
            Message::Notification(notification) => notify(&session, &notification),
            _ => {}
        }
        empty(StatusCode::ACCEPTED)
    }

    /// GET on the SSE path: a new session and its stream, opened by the `endpoint` event.
    fn sse_open(&self, headers: &HeaderMap, caller: &Caller) -> Response<DualEraBody> {
        if !accepts(headers, "text/event-stream") {
            return refusal(
                StatusCode::NOT_ACCEPTABLE,
                "Accept must list text/event-stream",
            );
        }
        if lock(&self.sessions).len() >= self.legacy.max_sessions {
            let mut response = refusal_with(
                StatusCode::SERVICE_UNAVAILABLE,
                ErrorCode::INTERNAL_ERROR,
                "too many sessions; retry later",
            );
            response
                .headers_mut()
                .insert(http::header::RETRY_AFTER, self.retry_after.clone());
            return response;
        }
        let id = new_session_id();
        let mut http = HttpSession::new(None, false).owned_by(caller);
        http.token = self.root.child_token();
        let http = Arc::new(http);
        lock(&self.sessions).insert(id.clone(), Arc::clone(&http));

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
        sse(events)
    }

    /// `initialize` on the HTTP+SSE transport: the answer goes on the stream.
    async fn sse_initialize(
        &self,
        http: &Arc<HttpSession>,
        info: Arc<mcp_jsonrpc::TransportInfo>,
        request: mcp_jsonrpc::Request,
    ) {
        let id = request.id.clone();
        let (tx, _rx) = tokio::sync::mpsc::channel(1);
        let cx = RequestContext::new(
            id.clone(),
            http.token.child_token(),
            NotificationSink::channel(tx),
        )
        .with_transport_info(info);
        let frame = if http.session.get().is_some() {
            encode_error(
                Some(&id),
                &ErrorObject::new(ErrorCode::INVALID_REQUEST, session::ALREADY_INITIALIZED),
            )
        } else {
            match session::initialize(&*self.inner, &self.legacy.versions, request, cx).await {
                Ok((legacy, result)) => {
                    let _ = http.session.set(legacy);
                    self.start_relay(http).await;
                    encode_raw_result(&id, &result)
                }
                Err(error) => encode_error(Some(&id), &error),
            }
        };
        http.get.append(frame, false).await;
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
            lock(&sessions).remove(&self.id);
        }
        self.session.end();
    }
}
