//! The body of a request as the server hands it to an [`Endpoint`](crate::Endpoint), and
//! the rule that a chunked body closes its connection unless it ended cleanly
//! ([`ChunkedEnd`]).

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};

/// A request's body as the server hands it to an [`Endpoint`](crate::Endpoint): read whole
/// already, or still arriving through hyper.
///
/// hyper reads no byte of a body that did not come with its head before the endpoint
/// polls it, so an endpoint that answers without reading the body (a refusal) has its
/// answer sent at once.
pub struct RequestBody(Kind);

enum Kind {
    Full(Option<Bytes>),
    /// Arriving through hyper; a chunked one says how it ended ([`RequestBody::chunked`]).
    Streaming(hyper::body::Incoming, Option<Arc<ChunkedEnd>>),
}

impl std::fmt::Debug for RequestBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Kind::Full(bytes) => f
                .debug_struct("RequestBody")
                .field("len", &bytes.as_ref().map_or(0, Bytes::len))
                .finish(),
            Kind::Streaming(..) => f.debug_struct("RequestBody").finish_non_exhaustive(),
        }
    }
}

impl From<Bytes> for RequestBody {
    /// A body read whole.
    fn from(bytes: Bytes) -> Self {
        RequestBody(Kind::Full((!bytes.is_empty()).then_some(bytes)))
    }
}

impl From<hyper::body::Incoming> for RequestBody {
    /// A body still arriving through hyper.
    fn from(body: hyper::body::Incoming) -> Self {
        RequestBody(Kind::Streaming(body, None))
    }
}

impl RequestBody {
    /// A chunked body arriving through hyper, which tells `end` how it ended.
    pub(crate) fn chunked(body: hyper::body::Incoming, end: Arc<ChunkedEnd>) -> Self {
        RequestBody(Kind::Streaming(body, Some(end)))
    }
}

/// Whether a chunked request body was read to its end without a trailer section: only
/// then may its connection serve another request (`server.rs`, `serve_with_hyper`).
///
/// hyper finds the end of a trailer section by CRLF alone, and then parses the fields in
/// it with `httparse`, which also takes a bare LF as a line end: in
/// `0\r\nX: a\n\nPOST /smuggled …\r\n\r\n`, a reader that ends lines at LF (RFC 9112
/// §2.2 allows one to) sees a second request where hyper sees one trailer field and takes
/// the rest as part of this message. A body its endpoint did not read to the end (a
/// refusal, one over the size limit) is no better: hyper reads what is left of it,
/// trailers included, to keep the connection. Closing the connection after the response
/// in both cases means no response is ever taken for the answer to a request the two
/// readings disagree about. MCP clients send no chunked bodies.
#[derive(Debug, Default)]
pub(crate) struct ChunkedEnd(AtomicU8);

impl ChunkedEnd {
    const READING: u8 = 0;
    const CLEAN: u8 = 1;
    const TRAILED: u8 = 2;

    /// Read to its end, and without a trailer section.
    pub(crate) fn is_clean(&self) -> bool {
        self.0.load(Ordering::Acquire) == Self::CLEAN
    }

    fn saw<E>(&self, polled: &Poll<Option<Result<Frame<Bytes>, E>>>) {
        match polled {
            Poll::Ready(Some(Ok(frame))) if frame.is_trailers() => {
                self.0.store(Self::TRAILED, Ordering::Release);
            }
            Poll::Ready(None) => {
                let _ = self.0.compare_exchange(
                    Self::READING,
                    Self::CLEAN,
                    Ordering::AcqRel,
                    Ordering::Acquire,
                );
            }
            _ => {}
        }
    }
}

/// Why a [`RequestBody`] could not be read: the connection failed, or the client closed
/// it, before the body's end.
#[derive(Debug, thiserror::Error)]
#[error("the request body could not be read")]
pub struct RequestBodyError(#[source] hyper::Error);

impl Body for RequestBody {
    type Data = Bytes;
    type Error = RequestBodyError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, RequestBodyError>>> {
        match &mut self.get_mut().0 {
            Kind::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            Kind::Streaming(body, end) => {
                let polled = Pin::new(body).poll_frame(cx);
                if let Some(end) = end {
                    end.saw(&polled);
                }
                polled.map_err(RequestBodyError)
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.0 {
            Kind::Full(bytes) => bytes.is_none(),
            Kind::Streaming(body, _) => body.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.0 {
            Kind::Full(bytes) => SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64)),
            Kind::Streaming(body, _) => body.size_hint(),
        }
    }
}
