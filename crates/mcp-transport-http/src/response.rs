//! The response body: nothing, one JSON message, or a request-scoped SSE stream that drives
//! the handler while it writes (<https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>,
//! Receiving Messages).
//!
//! An SSE stream polls the handler's future itself, inside the connection's task, so a
//! request costs no extra task. Each event is `event: message` and one `data:` line per line
//! of JSON, with no event id: streams are not resumable in 2026-07-28. Notifications come
//! in the order the handler sent them, then the response, then the end of the stream;
//! anything sent after the response is dropped. While the handler runs with nothing to send,
//! a `: keep-alive` comment goes out every keep-alive interval. Dropping the body (the client
//! went away) fires the request's cancellation token.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{BufMut as _, Bytes, BytesMut};
use http_body::{Body, Frame, SizeHint};
use mcp_jsonrpc::{
    ErrorObject, SPLIT_RESULT_AT, encode_error, encode_raw_result, encode_raw_result_parts,
};
use mcp_types::RequestId;
use serde_json::value::RawValue;
use tokio::sync::{OwnedSemaphorePermit, mpsc};
use tokio::time::Interval;
use tokio_util::sync::DropGuard;

/// What a handler returns.
pub(crate) type Outcome = Result<Box<RawValue>, ErrorObject>;

/// A handler's future, boxed so that the response body can own it once it is running.
pub(crate) type HandlerFuture = Pin<Box<dyn Future<Output = Outcome> + Send>>;

const KEEP_ALIVE: &[u8] = b": keep-alive\n\n";

/// The body of every response the MCP endpoint sends: empty, one JSON message, or an SSE
/// stream. It implements [`http_body::Body`] with `Bytes` frames and never fails.
pub struct McpBody {
    kind: Kind,
    // Held until the response has been written: the concurrency limit counts whole
    // exchanges, not just handler time.
    _permit: Option<OwnedSemaphorePermit>,
}

enum Kind {
    Empty,
    Full(Option<Bytes>),
    /// A large result's frame in [`encode_raw_result_parts`]'s pieces, the next first
    /// (boxed: every response's body would otherwise be three `Bytes` larger).
    Parts(Box<std::array::IntoIter<Bytes, 3>>),
    Sse(Box<SseStream>),
}

impl std::fmt::Debug for McpBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match &self.kind {
            Kind::Empty => "empty",
            Kind::Full(_) | Kind::Parts(_) => "json",
            Kind::Sse(_) => "sse",
        };
        f.debug_struct("McpBody")
            .field("kind", &kind)
            .finish_non_exhaustive()
    }
}

impl McpBody {
    pub(crate) fn empty() -> Self {
        McpBody {
            kind: Kind::Empty,
            _permit: None,
        }
    }

    pub(crate) fn full(bytes: Bytes, permit: Option<OwnedSemaphorePermit>) -> Self {
        McpBody {
            kind: Kind::Full(Some(bytes)),
            _permit: permit,
        }
    }

    /// One JSON message: a handler's outcome for request `id` (see [`SPLIT_RESULT_AT`]).
    pub(crate) fn outcome(
        id: &RequestId,
        outcome: Outcome,
        permit: Option<OwnedSemaphorePermit>,
    ) -> Self {
        let kind = match outcome {
            Ok(result) if result.get().len() >= SPLIT_RESULT_AT => {
                Kind::Parts(Box::new(encode_raw_result_parts(id, result).into_iter()))
            }
            outcome => Kind::Full(Some(encode_outcome(id, outcome))),
        };
        McpBody {
            kind,
            _permit: permit,
        }
    }

    pub(crate) fn sse(stream: SseStream, permit: OwnedSemaphorePermit) -> Self {
        McpBody {
            kind: Kind::Sse(Box::new(stream)),
            _permit: Some(permit),
        }
    }
}

impl Body for McpBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match &mut self.get_mut().kind {
            Kind::Empty => Poll::Ready(None),
            Kind::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            Kind::Parts(parts) => Poll::Ready(parts.next().map(|b| Ok(Frame::data(b)))),
            Kind::Sse(stream) => stream
                .poll_event(cx)
                .map(|event| event.map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.kind {
            Kind::Empty | Kind::Full(None) => true,
            Kind::Parts(parts) => parts.as_slice().is_empty(),
            Kind::Full(Some(_)) | Kind::Sse(_) => false,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Empty | Kind::Full(None) => SizeHint::with_exact(0),
            Kind::Full(Some(bytes)) => SizeHint::with_exact(bytes.len() as u64),
            Kind::Parts(parts) => {
                SizeHint::with_exact(parts.as_slice().iter().map(|b| b.len() as u64).sum())
            }
            Kind::Sse(_) => SizeHint::default(),
        }
    }
}

/// One request's SSE stream.
pub(crate) struct SseStream {
    /// The notification that opened the stream, not yet written.
    first: Option<Bytes>,
    /// The handler, while it runs.
    handler: Option<HandlerFuture>,
    events: mpsc::Receiver<Bytes>,
    id: RequestId,
    /// The encoded response, once the handler has finished.
    last: Option<Bytes>,
    /// How many notifications were queued when the handler finished: only those go out
    /// before the response, so a task the handler left behind cannot hold it back.
    left: usize,
    keep_alive: Option<Interval>,
    /// Fires the request's token if the stream is dropped before the response is written.
    cancel: Option<DropGuard>,
}

impl SseStream {
    pub(crate) fn running(
        first: Bytes,
        handler: HandlerFuture,
        events: mpsc::Receiver<Bytes>,
        id: RequestId,
        keep_alive: Option<Interval>,
        cancel: DropGuard,
    ) -> Self {
        SseStream {
            first: Some(first),
            handler: Some(handler),
            events,
            id,
            last: None,
            left: 0,
            keep_alive,
            cancel: Some(cancel),
        }
    }

    /// A stream for a handler that finished with notifications still queued.
    pub(crate) fn finished(
        events: mpsc::Receiver<Bytes>,
        id: RequestId,
        outcome: Outcome,
        cancel: DropGuard,
    ) -> Self {
        let last = encode_outcome(&id, outcome);
        SseStream {
            first: None,
            handler: None,
            left: events.len(),
            events,
            id,
            last: Some(last),
            keep_alive: None,
            cancel: Some(cancel),
        }
    }

    fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        if let Some(first) = self.first.take() {
            return Poll::Ready(Some(self.event(&first)));
        }
        if let Some(handler) = &mut self.handler {
            if let Poll::Ready(Some(frame)) = self.events.poll_recv(cx) {
                return Poll::Ready(Some(self.event(&frame)));
            }
            match handler.as_mut().poll(cx) {
                Poll::Ready(outcome) => {
                    self.handler = None;
                    self.left = self.events.len();
                    self.last = Some(encode_outcome(&self.id, outcome));
                }
                Poll::Pending => {
                    if let Some(timer) = &mut self.keep_alive
                        && timer.poll_tick(cx).is_ready()
                    {
                        return Poll::Ready(Some(Bytes::from_static(KEEP_ALIVE)));
                    }
                    return Poll::Pending;
                }
            }
        }
        // The handler has finished: what it sent before finishing, then its response.
        if self.left > 0
            && let Ok(frame) = self.events.try_recv()
        {
            self.left -= 1;
            return Poll::Ready(Some(self.event(&frame)));
        }
        if let Some(last) = self.last.take() {
            if let Some(guard) = self.cancel.take() {
                guard.disarm();
            }
            return Poll::Ready(Some(sse_event(&last)));
        }
        Poll::Ready(None)
    }

    fn event(&mut self, json: &[u8]) -> Bytes {
        if let Some(timer) = &mut self.keep_alive {
            timer.reset();
        }
        sse_event(json)
    }
}

/// The JSON-RPC response for a handler's outcome.
pub(crate) fn encode_outcome(id: &RequestId, outcome: Outcome) -> Bytes {
    match outcome {
        Ok(result) => encode_raw_result(id, &result),
        Err(error) => encode_error(Some(id), &error),
    }
}

/// One SSE event: `event: message`, one `data:` line per line of `json`, a blank line.
///
/// JSON from `mcp-jsonrpc`'s encoders is one line, but a handler's raw result may be
/// pretty-printed. A line break in JSON text is whitespace between tokens (inside a string
/// it is escaped), so splitting there and letting the client join the lines with `\n`
/// keeps the same JSON value.
pub(crate) fn sse_event(json: &[u8]) -> Bytes {
    let mut buf = BytesMut::with_capacity(json.len() + 24);
    buf.put_slice(b"event: message\n");
    if memchr::memchr2(b'\n', b'\r', json).is_none() {
        buf.put_slice(b"data: ");
        buf.put_slice(json);
        buf.put_u8(b'\n');
    } else {
        for line in json.split(|b| *b == b'\n' || *b == b'\r') {
            if !line.is_empty() {
                buf.put_slice(b"data: ");
                buf.put_slice(line);
                buf.put_u8(b'\n');
            }
        }
    }
    buf.put_u8(b'\n');
    buf.freeze()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events() {
        assert_eq!(
            &sse_event(br#"{"a":1}"#)[..],
            b"event: message\ndata: {\"a\":1}\n\n"
        );
        assert_eq!(
            &sse_event(b"{\r\n  \"a\": 1\n}")[..],
            b"event: message\ndata: {\ndata:   \"a\": 1\ndata: }\n\n"
        );
    }
}
