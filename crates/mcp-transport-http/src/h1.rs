//! The server's own HTTP/1.1 for the requests MCP clients send, with hyper for the rest.
//!
//! An MCP client's request is a `POST` with a `Content-Length` body, over HTTP/1.1 and a
//! keep-alive connection (`docs/2026-07-28/basic/transports/streamable-http.mdx`). This
//! module serves exactly those: it reads the head into the connection's buffer, parses it
//! with `httparse`, and calls the [`Endpoint`] at once, with the body taken from the same
//! buffer when it came with the head (both shared, not copied, with the request), or else
//! left on the connection until the endpoint asks for it. It writes the response's head
//! and body in one write (a JSON reply) or as chunks flushed one by one (an SSE stream).
//! hyper's dispatcher, its body channel and its write queue are not on that path.
//!
//! The endpoint decides a request from its head before any byte of a body still to come
//! is read: its path, `Host`, `Origin`, `Content-Type`, a concurrency slot and the
//! authenticator's verdict (`service.rs`). A refusal is sent as soon as it is made, and
//! the connection is then closed, since the body it did not read cannot be told apart
//! from a next request. A connection therefore holds no more than what arrived with its
//! head until its request has passed those checks.
//!
//! Any other head (another method or version, `Transfer-Encoding`, `Expect`, `Upgrade`,
//! a `Content-Length` over the body limit, a malformed or oversized head, more than 32
//! fields) hands the connection, with every byte read so far, to hyper for the rest of its
//! life ([`Rewind`]): hyper answers it as before, so what the two share is only the common
//! request. A head handed over before it was complete keeps the deadline it had: hyper's
//! header read timeout for it ends when this module's would have. There, a chunked request
//! whose body was not read to its end without a trailer section closes the connection
//! after its response ([`ChunkedEnd`]: where hyper ends such a message is not where every
//! reader does).
//!
//! The rules hyper applied hold on this path too: the header read timeout runs from the
//! moment a head is awaited (an idle keep-alive connection is closed when it fires), a
//! body that stops arriving is refused with `408` after the body read timeout, a head
//! longer than [`HttpServerConfig::max_head_bytes`](crate::HttpServerConfig) is refused
//! with `431`, a client that closes its connection while its request runs drops the
//! request (which cancels it), a write that makes no progress ends the connection
//! (`io.rs`), and a graceful shutdown closes an idle connection at once and a busy one
//! after its response. Every response carries `Date` (RFC 9110 §6.6.1).

use std::convert::Infallible;
use std::io;
use std::mem::MaybeUninit;
use std::net::SocketAddr;
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::{Buf, Bytes, BytesMut};
use http::header::{CONTENT_LENGTH, HeaderName, HeaderValue};
use http::{HeaderMap, Method, Request, Response, StatusCode, Uri, Version};
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt as _;
use mcp_jsonrpc::CancellationToken;
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _, ReadBuf};
use tokio::time::{Instant, Sleep};

use crate::io::WriteTimeout;
use crate::server::{Endpoint, Settings, head_bytes, serve_with_hyper};

/// A request's body as the server hands it to an [`Endpoint`]: read whole already (it came
/// with its head), left on the connection until the endpoint reads it, or still arriving
/// through hyper.
///
/// The server decides a request from its head before it reads a byte of the body that
/// did not come with the head: an endpoint that answers without reading the body (a
/// refusal) has its answer sent at once, and the connection is then closed, since the
/// unread body cannot be told from a next request.
pub struct RequestBody(Kind);

enum Kind {
    Full(Option<Bytes>),
    /// Read from the connection once the endpoint polls it, and delivered whole.
    Awaited {
        slot: Arc<Slot>,
        length: u64,
    },
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
            Kind::Awaited { length, .. } => f
                .debug_struct("RequestBody")
                .field("len", length)
                .finish_non_exhaustive(),
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

/// Whether a chunked request body that came through hyper was read to its end without a
/// trailer section: only then may its connection serve another request
/// ([`serve_with_hyper`]).
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
pub struct RequestBodyError(#[source] Option<hyper::Error>);

impl Body for RequestBody {
    type Data = Bytes;
    type Error = RequestBodyError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, RequestBodyError>>> {
        match &mut self.get_mut().0 {
            Kind::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            Kind::Awaited { slot, .. } => slot.poll_body(cx),
            Kind::Streaming(body, end) => {
                let polled = Pin::new(body).poll_frame(cx);
                if let Some(end) = end {
                    end.saw(&polled);
                }
                polled.map_err(|e| RequestBodyError(Some(e)))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.0 {
            Kind::Full(bytes) => bytes.is_none(),
            Kind::Awaited { slot, .. } => slot.lock().taken,
            Kind::Streaming(body, _) => body.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.0 {
            Kind::Full(bytes) => SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64)),
            Kind::Awaited { slot, length } => {
                SizeHint::with_exact(if slot.lock().taken { 0 } else { *length })
            }
            Kind::Streaming(body, _) => body.size_hint(),
        }
    }
}

/// Where a connection hands over a body its endpoint asked for ([`Kind::Awaited`]).
#[derive(Default)]
struct Slot(Mutex<SlotState>);

#[derive(Default)]
struct SlotState {
    /// The endpoint polled the body: the connection may read it.
    wanted: bool,
    /// The whole body, once it has arrived.
    body: Option<Bytes>,
    /// The body was taken (or its failure reported): it has ended.
    taken: bool,
    /// The connection stopped before the body arrived.
    abandoned: bool,
    /// The body's reader, waiting for the body.
    reader: Option<Waker>,
    /// The connection, waiting for the body to be wanted.
    connection: Option<Waker>,
}

impl Slot {
    fn lock(&self) -> MutexGuard<'_, SlotState> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn poll_body(
        &self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, RequestBodyError>>> {
        let mut state = self.lock();
        if let Some(body) = state.body.take() {
            state.taken = true;
            return Poll::Ready(Some(Ok(Frame::data(body))));
        }
        if state.taken {
            return Poll::Ready(None);
        }
        if state.abandoned {
            state.taken = true;
            return Poll::Ready(Some(Err(RequestBodyError(None))));
        }
        state.wanted = true;
        if !state
            .reader
            .as_ref()
            .is_some_and(|w| w.will_wake(cx.waker()))
        {
            state.reader = Some(cx.waker().clone());
        }
        let connection = state.connection.take();
        drop(state);
        if let Some(connection) = connection {
            connection.wake();
        }
        Poll::Pending
    }

    /// Ready once the endpoint has asked for the body.
    fn poll_wanted(&self, cx: &mut Context<'_>) -> Poll<()> {
        let mut state = self.lock();
        if state.wanted {
            return Poll::Ready(());
        }
        if !state
            .connection
            .as_ref()
            .is_some_and(|w| w.will_wake(cx.waker()))
        {
            state.connection = Some(cx.waker().clone());
        }
        Poll::Pending
    }
}

/// The connection's side of a [`Slot`]: delivers the body, or, dropped before, tells the
/// reader that it will never come.
struct Delivery(Arc<Slot>);

impl Delivery {
    fn deliver(self, body: Bytes) {
        let mut state = self.0.lock();
        state.body = Some(body);
        let reader = state.reader.take();
        drop(state);
        if let Some(reader) = reader {
            reader.wake();
        }
        // Dropped now: the reader finds the body before it would look for an abandoned
        // one.
    }

    /// Ready once the endpoint has asked for the body.
    async fn wanted(slot: Option<&Slot>) {
        match slot {
            Some(slot) => std::future::poll_fn(|cx| slot.poll_wanted(cx)).await,
            None => std::future::pending().await,
        }
    }
}

impl Drop for Delivery {
    /// Marks the slot abandoned: a reader that has not found the body by now never will.
    fn drop(&mut self) {
        let mut state = self.0.lock();
        state.abandoned = true;
        let reader = state.reader.take();
        drop(state);
        if let Some(reader) = reader {
            reader.wake();
        }
    }
}

/// The fields a head of this path may have (or `max_headers`, if fewer); one with more
/// goes to hyper, which applies [`HttpServerConfig::max_headers`](crate::HttpServerConfig).
const MAX_FIELDS: usize = 32;
/// The least free room in the read buffer before a read.
const READ_ROOM: usize = 8 << 10;
/// How much a client may send ahead (pipelined requests) while its request runs; past it
/// the connection stops reading until the response is written.
const READ_AHEAD: usize = 64 << 10;
/// What a frame is copied into the write buffer up to; a larger one is written from its
/// own bytes.
const COPY_LIMIT: usize = 4 << 10;

/// Where a field's name and value sit in the head.
#[derive(Clone, Copy)]
struct Span {
    name: (u32, u32),
    value: (u32, u32),
}

/// What a buffered head is.
enum Parsed {
    /// Not complete yet.
    Partial,
    /// One this path serves.
    Served(Head),
    /// One for hyper.
    Hyper,
}

/// A head this path serves, by its place in the read buffer.
struct Head {
    len: usize,
    target: (usize, usize),
    body: usize,
    close: bool,
}

/// What became of one exchange.
enum Step {
    /// The connection waits for the next request.
    Next,
    /// The connection is done.
    Close,
    /// hyper takes the connection over; the deadline of the head it is given, when the
    /// head had to be waited for.
    Hyper(Option<Instant>),
}

/// One connection, over a TCP stream (or, for the fuzz target, an in-memory one).
struct Conn<I> {
    io: WriteTimeout<I>,
    read: BytesMut,
    out: Vec<u8>,
    /// Large frames written after `out`, from their own bytes.
    frames: Vec<Bytes>,
    spans: Vec<Span>,
    date: Date,
    /// The address of the client's end, for [`Endpoint::call_from`].
    peer: SocketAddr,
}

/// Serves one accepted connection.
pub(crate) async fn serve<E, I>(
    settings: Arc<Settings<E>>,
    stream: I,
    closing: CancellationToken,
    peer: SocketAddr,
) where
    E: Endpoint,
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let mut conn = Conn {
        io: WriteTimeout::new(stream, settings.write_timeout),
        read: BytesMut::new(),
        out: Vec::new(),
        frames: Vec::new(),
        spans: Vec::new(),
        date: Date::default(),
        peer,
    };
    let step = {
        let mut timer = pin!(tokio::time::sleep(Duration::ZERO));
        let mut closed = pin!(closing.cancelled());
        loop {
            match conn
                .exchange(&settings, timer.as_mut(), closed.as_mut())
                .await
            {
                Step::Next if !closing.is_cancelled() => {}
                Step::Next | Step::Close => break Step::Close,
                hyper @ Step::Hyper(_) => break hyper,
            }
        }
    };
    match step {
        Step::Hyper(deadline) => {
            let io = Rewind {
                prefix: conn.read.freeze(),
                inner: conn.io,
            };
            serve_with_hyper(&settings, io, closing, peer, deadline).await;
        }
        Step::Next | Step::Close => {
            let _ = conn.io.shutdown().await;
        }
    }
}

impl<I: AsyncRead + AsyncWrite + Unpin> Conn<I> {
    /// Reads one request, answers it, and says what comes next.
    ///
    /// The endpoint is called as soon as the head is parsed. A body that did not come with
    /// its head is read only when the endpoint asks for it (after its checks of the head:
    /// path, `Host`, `Origin`, `Content-Type`, a concurrency slot, authentication), under
    /// the body read timeout; an answer given without it goes out at once and closes the
    /// connection.
    async fn exchange<E: Endpoint>(
        &mut self,
        settings: &Settings<E>,
        mut timer: Pin<&mut Sleep>,
        mut closed: Pin<&mut tokio_util::sync::WaitForCancellationFuture<'_>>,
    ) -> Step {
        // A buffer grown for a large body is not kept by an idle connection.
        if self.read.is_empty() && self.read.capacity() > READ_AHEAD {
            self.read = BytesMut::new();
        }
        // The head, under the header read timeout from the moment it is awaited; hyper,
        // if it takes the connection over, gets what is left of that time.
        let mut deadline = None;
        let head = loop {
            match self.parse(settings.max_headers.min(MAX_FIELDS)) {
                Parsed::Served(head) if head.body > settings.max_body_bytes => {
                    return Step::Hyper(deadline);
                }
                Parsed::Served(head) => break head,
                Parsed::Hyper => return Step::Hyper(deadline),
                Parsed::Partial if self.read.len() > settings.max_head_bytes => {
                    return Step::Hyper(deadline);
                }
                Parsed::Partial => {}
            }
            if deadline.is_none() && !settings.header_read_timeout.is_zero() {
                let at = Instant::now() + settings.header_read_timeout;
                timer.as_mut().reset(at);
                deadline = Some(at);
            }
            if self.read.capacity() - self.read.len() < READ_ROOM {
                self.read.reserve(READ_ROOM);
            }
            let idle = self.read.is_empty();
            tokio::select! {
                biased;
                () = closed.as_mut(), if idle => return Step::Close,
                () = timer.as_mut(), if deadline.is_some() => return Step::Close,
                read = self.io.read_buf(&mut self.read) => match read {
                    Ok(0) | Err(_) => return Step::Close,
                    Ok(_) => {}
                },
            }
        };

        // The body: taken from the buffer when it came with the head, else left on the
        // connection until the endpoint asks for it.
        let bytes = self.read.split_to(head.len).freeze();
        let (body, mut delivery) = if self.read.len() >= head.body {
            (
                RequestBody::from(self.read.split_to(head.body).freeze()),
                None,
            )
        } else {
            let slot = Arc::new(Slot::default());
            let body = RequestBody(Kind::Awaited {
                slot: Arc::clone(&slot),
                length: head.body as u64,
            });
            (body, Some(Delivery(slot)))
        };
        let Some(request) = self.request(&bytes, &head, body) else {
            let _ = self.respond(plain(StatusCode::BAD_REQUEST), true).await;
            return Step::Close;
        };
        drop(bytes);
        // Measured as sent (less the blank line that ends it) as well as with the usual
        // spacing: the parsed request has lost a fragment and any extra spacing, so the
        // second measure alone can come in under the limit.
        let sent = head.len.saturating_sub(2);
        if sent > settings.max_head_bytes || head_bytes(&request) > settings.max_head_bytes {
            let _ = self
                .respond(plain(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE), true)
                .await;
            return Step::Close;
        }

        // The endpoint's answer; the client closing its connection meanwhile drops it.
        let response = {
            let slot = delivery.as_ref().map(|d| Arc::clone(&d.0));
            let mut call = pin!(settings.service.call_from(request, self.peer));
            // Whether the endpoint asked for the body and it is being read.
            let mut reading = false;
            let limited = !settings.body_read_timeout.is_zero();
            loop {
                let watch = delivery.is_none() && self.read.len() < READ_AHEAD;
                tokio::select! {
                    biased;
                    response = call.as_mut() => match response {
                        Ok(response) => break response,
                        Err(never) => match never {},
                    },
                    () = timer.as_mut(), if reading && limited => {
                        let _ = self.respond(crate::service::body_timed_out(), true).await;
                        return Step::Close;
                    }
                    () = Delivery::wanted(slot.as_deref()), if delivery.is_some() && !reading => {
                        reading = true;
                        self.read.reserve(head.body.saturating_sub(self.read.len()));
                        if limited {
                            timer
                                .as_mut()
                                .reset(Instant::now() + settings.body_read_timeout);
                        }
                    }
                    read = self.io.read_buf(&mut self.read), if reading || watch => match read {
                        Ok(0) | Err(_) => return Step::Close,
                        Ok(_) if reading && self.read.len() >= head.body => {
                            reading = false;
                            if let Some(delivery) = delivery.take() {
                                delivery.deliver(self.read.split_to(head.body).freeze());
                            }
                        }
                        Ok(_) => {}
                    },
                }
            }
        };
        // A body the endpoint did not read cannot be skipped: the connection ends.
        let unread = delivery.is_some();
        drop(delivery);
        match self.respond(response, head.close || unread).await {
            Ok(true) if !unread => Step::Next,
            Ok(_) | Err(_) => Step::Close,
        }
    }

    /// Parses the head at the start of the read buffer.
    fn parse(&mut self, max_fields: usize) -> Parsed {
        if self.read.is_empty() {
            return Parsed::Partial;
        }
        // Left uninitialised: httparse fills what it parses.
        let mut fields = [const { MaybeUninit::<httparse::Header<'_>>::uninit() }; MAX_FIELDS];
        let mut parsed = httparse::Request::new(&mut []);
        let len = match httparse::ParserConfig::default().parse_request_with_uninit_headers(
            &mut parsed,
            &self.read,
            &mut fields[..max_fields],
        ) {
            Ok(httparse::Status::Complete(len)) => len,
            Ok(httparse::Status::Partial) => return Parsed::Partial,
            // Too many fields, or a malformed head: hyper says which.
            Err(_) => return Parsed::Hyper,
        };
        if parsed.method != Some("POST") || parsed.version != Some(1) {
            return Parsed::Hyper;
        }
        let base = self.read.as_ptr() as usize;
        let at = |s: &[u8]| s.as_ptr() as usize - base;
        let Some(target) = parsed.path.map(|p| (at(p.as_bytes()), p.len())) else {
            return Parsed::Hyper;
        };
        let mut body: Option<usize> = None;
        let mut close = false;
        self.spans.clear();
        for field in parsed.headers.iter() {
            let name = field.name.as_bytes();
            let value = field.value;
            if name.eq_ignore_ascii_case(b"content-length") {
                match (body, content_length(value)) {
                    (None, Some(n)) => body = Some(n),
                    // Repeated, or not a length: hyper refuses it.
                    _ => return Parsed::Hyper,
                }
            } else if name.eq_ignore_ascii_case(b"connection") {
                if value.eq_ignore_ascii_case(b"close") {
                    close = true;
                } else if !value.eq_ignore_ascii_case(b"keep-alive") {
                    return Parsed::Hyper;
                }
            } else if name.eq_ignore_ascii_case(b"transfer-encoding")
                || name.eq_ignore_ascii_case(b"expect")
                || name.eq_ignore_ascii_case(b"upgrade")
            {
                return Parsed::Hyper;
            }
            let (Ok(name_at), Ok(name_len), Ok(value_at), Ok(value_len)) = (
                u32::try_from(at(name)),
                u32::try_from(name.len()),
                u32::try_from(at(value)),
                u32::try_from(value.len()),
            ) else {
                return Parsed::Hyper;
            };
            self.spans.push(Span {
                name: (name_at, name_len),
                value: (value_at, value_len),
            });
        }
        Parsed::Served(Head {
            len,
            target,
            body: body.unwrap_or(0),
            close,
        })
    }

    /// The request of a parsed head, sharing the head's and the body's bytes.
    fn request(
        &self,
        head: &Bytes,
        parsed: &Head,
        body: RequestBody,
    ) -> Option<Request<RequestBody>> {
        let slice = |(at, len): (u32, u32)| head.slice(at as usize..(at + len) as usize);
        let mut headers = HeaderMap::with_capacity(self.spans.len());
        for span in &self.spans {
            let name = field_name(&slice(span.name))?;
            let value = HeaderValue::from_maybe_shared(slice(span.value)).ok()?;
            headers.append(name, value);
        }
        let (at, len) = parsed.target;
        let uri = Uri::from_maybe_shared(head.slice(at..at + len)).ok()?;
        let mut request = Request::new(body);
        *request.method_mut() = Method::POST;
        *request.uri_mut() = uri;
        *request.version_mut() = Version::HTTP_11;
        *request.headers_mut() = headers;
        Some(request)
    }

    /// Writes a response; `Ok(true)` when the connection stays open for the next request.
    async fn respond<B>(&mut self, response: Response<B>, close: bool) -> io::Result<bool>
    where
        B: Body<Data = Bytes, Error = Infallible>,
    {
        let (parts, body) = response.into_parts();
        let close = close
            || parts
                .headers
                .get(http::header::CONNECTION)
                .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"close"));
        let status = parts.status;
        let bodiless = status == StatusCode::NO_CONTENT
            || status == StatusCode::NOT_MODIFIED
            || status.is_informational();
        let length = body.size_hint().exact();

        self.out.clear();
        self.frames.clear();
        let out = &mut self.out;
        out.extend_from_slice(b"HTTP/1.1 ");
        out.extend_from_slice(status.as_str().as_bytes());
        out.push(b' ');
        out.extend_from_slice(status.canonical_reason().unwrap_or("").as_bytes());
        out.extend_from_slice(b"\r\n");
        for (name, value) in &parts.headers {
            if name == http::header::CONNECTION
                || name == http::header::TRANSFER_ENCODING
                || name == CONTENT_LENGTH
            {
                continue;
            }
            out.extend_from_slice(name.as_str().as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(value.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"date: ");
        out.extend_from_slice(self.date.now());
        out.extend_from_slice(b"\r\n");
        if close {
            out.extend_from_slice(b"connection: close\r\n");
        }
        if !bodiless {
            match length {
                Some(n) => {
                    out.extend_from_slice(b"content-length: ");
                    push_decimal(out, n);
                    out.extend_from_slice(b"\r\n");
                }
                None => out.extend_from_slice(b"transfer-encoding: chunked\r\n"),
            }
        }
        out.extend_from_slice(b"\r\n");

        let mut body = pin!(body);
        if bodiless {
            self.write_out().await?;
            return Ok(!close);
        }
        let chunked = length.is_none();
        loop {
            let frame = {
                let watch = self.read.len() < READ_AHEAD;
                tokio::select! {
                    biased;
                    frame = body.frame() => frame,
                    read = self.io.read_buf(&mut self.read), if watch => match read {
                        Ok(0) => return Ok(false),
                        Err(e) => return Err(e),
                        Ok(_) => continue,
                    },
                }
            };
            let Some(frame) = frame else { break };
            let Ok(frame) = frame;
            let Ok(data) = frame.into_data() else {
                continue; // No trailers on this path.
            };
            if data.is_empty() {
                continue;
            }
            if chunked {
                self.out.extend_from_slice(hex_size(data.len()).as_bytes());
                self.out.extend_from_slice(b"\r\n");
                self.push(data);
                self.out.extend_from_slice(b"\r\n");
                // Each event goes out as it comes.
                self.write_out().await?;
            } else {
                self.push(data);
            }
        }
        if chunked {
            self.out.extend_from_slice(b"0\r\n\r\n");
        }
        self.write_out().await?;
        Ok(!close)
    }

    /// Adds a frame's data to what is to be written: copied when small, shared when not.
    fn push(&mut self, data: Bytes) {
        if data.len() <= COPY_LIMIT && self.frames.is_empty() {
            self.out.extend_from_slice(&data);
        } else {
            if !self.out.is_empty() || !self.frames.is_empty() {
                let pending = Bytes::from(std::mem::take(&mut self.out));
                self.frames.push(pending);
            }
            self.frames.push(data);
        }
    }

    /// Writes `out` and the frames after it, vectored.
    async fn write_out(&mut self) -> io::Result<()> {
        if self.frames.is_empty() {
            self.io.write_all(&self.out).await?;
        } else {
            if !self.out.is_empty() {
                let pending = Bytes::from(std::mem::take(&mut self.out));
                self.frames.push(pending);
            }
            let mut queue = Queue {
                frames: &mut self.frames,
                at: 0,
            };
            self.io.write_all_buf(&mut queue).await?;
            self.frames.clear();
        }
        self.out.clear();
        Ok(())
    }
}

/// Frames to write, as one [`Buf`] (written vectored).
struct Queue<'a> {
    frames: &'a mut Vec<Bytes>,
    at: usize,
}

impl Buf for Queue<'_> {
    fn remaining(&self) -> usize {
        self.frames[self.at..].iter().map(Bytes::len).sum()
    }

    fn chunk(&self) -> &[u8] {
        self.frames.get(self.at).map_or(&[], |b| &b[..])
    }

    fn chunks_vectored<'b>(&'b self, dst: &mut [io::IoSlice<'b>]) -> usize {
        let mut n = 0;
        for (slot, frame) in dst.iter_mut().zip(&self.frames[self.at..]) {
            *slot = io::IoSlice::new(frame);
            n += 1;
        }
        n
    }

    fn advance(&mut self, mut cnt: usize) {
        while cnt > 0 {
            let Some(frame) = self.frames.get_mut(self.at) else {
                return;
            };
            if cnt < frame.len() {
                frame.advance(cnt);
                return;
            }
            cnt -= frame.len();
            self.at += 1;
        }
        while self.frames.get(self.at).is_some_and(Bytes::is_empty) {
            self.at += 1;
        }
    }
}

/// A response with no body but its status's reason.
fn plain(status: StatusCode) -> Response<http_body_util::Empty<Bytes>> {
    let mut response = Response::new(http_body_util::Empty::new());
    *response.status_mut() = status;
    response
}

/// A `Content-Length` value: digits only (RFC 9110 §8.6).
fn content_length(value: &[u8]) -> Option<usize> {
    if !value.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(value).ok()?.parse().ok()
}

/// A field's name: the MCP fields without an allocation, the standard ones as `http`
/// knows them, any other copied.
fn field_name(name: &[u8]) -> Option<HeaderName> {
    // Made at compile time: `from_static` at run time checks its text each call.
    const MCP: [(&[u8], HeaderName); 5] = [
        (b"mcp-method", HeaderName::from_static("mcp-method")),
        (b"mcp-name", HeaderName::from_static("mcp-name")),
        (
            b"mcp-protocol-version",
            HeaderName::from_static("mcp-protocol-version"),
        ),
        (b"mcp-session-id", HeaderName::from_static("mcp-session-id")),
        (b"last-event-id", HeaderName::from_static("last-event-id")),
    ];
    if (name.len() >= 8 && name[..4].eq_ignore_ascii_case(b"mcp-")) || name.len() == 13 {
        for (text, known) in MCP {
            if name.eq_ignore_ascii_case(text) {
                return Some(known);
            }
        }
    }
    HeaderName::from_bytes(name).ok()
}

/// Appends `n` in decimal.
fn push_decimal(out: &mut Vec<u8>, mut n: u64) {
    let mut buf = [0u8; 20];
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[at..]);
}

/// A chunk size in hexadecimal.
fn hex_size(n: usize) -> HexSize {
    let mut buf = [0u8; 16];
    let mut at = buf.len();
    let mut n = n;
    loop {
        at -= 1;
        buf[at] = b"0123456789ABCDEF"[n & 15];
        n >>= 4;
        if n == 0 {
            break;
        }
    }
    HexSize { buf, at }
}

/// The digits of [`hex_size`].
struct HexSize {
    buf: [u8; 16],
    at: usize,
}

impl HexSize {
    fn as_bytes(&self) -> &[u8] {
        &self.buf[self.at..]
    }
}

/// The `Date` value, made again when the second changes.
struct Date {
    second: u64,
    text: [u8; 29],
}

impl Default for Date {
    fn default() -> Self {
        Date {
            second: u64::MAX,
            text: [b' '; 29],
        }
    }
}

impl Date {
    fn now(&mut self) -> &[u8] {
        let now = SystemTime::now();
        let second = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        if second != self.second {
            let text = httpdate::fmt_http_date(now);
            if text.len() == self.text.len() {
                self.text.copy_from_slice(text.as_bytes());
                self.second = second;
            }
        }
        &self.text
    }
}

pin_project_lite::pin_project! {
    /// A connection handed to hyper with the bytes already read from it in front.
    pub(crate) struct Rewind<I> {
        prefix: Bytes,
        #[pin]
        inner: I,
    }
}

impl<I: AsyncRead> AsyncRead for Rewind<I> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.project();
        if !this.prefix.is_empty() {
            let n = this.prefix.len().min(buf.remaining());
            buf.put_slice(&this.prefix[..n]);
            this.prefix.advance(n);
            return Poll::Ready(Ok(()));
        }
        this.inner.poll_read(cx, buf)
    }
}

impl<I: AsyncWrite> AsyncWrite for Rewind<I> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.project().inner.poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.project().inner.poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.project().inner.poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.project().inner.poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::{content_length, hex_size, push_decimal};

    #[test]
    fn a_content_length_is_digits_that_fit() {
        assert_eq!(content_length(b"0"), Some(0));
        assert_eq!(content_length(b"00042"), Some(42));
        assert_eq!(
            content_length(usize::MAX.to_string().as_bytes()),
            Some(usize::MAX)
        );
        // Empty, signed, spaced, hexadecimal, or past usize: the head goes to hyper.
        for bad in [&b""[..], b"+1", b"-1", b" 1", b"1 ", b"0x10", b"1,1"] {
            assert_eq!(content_length(bad), None, "{bad:?}");
        }
        let past = format!("{}0", usize::MAX);
        assert_eq!(content_length(past.as_bytes()), None);
    }

    #[test]
    fn sizes_are_written_in_decimal_and_hexadecimal() {
        for n in [0u64, 7, 10, 65_536, u64::MAX] {
            let mut out = Vec::new();
            push_decimal(&mut out, n);
            assert_eq!(out, n.to_string().as_bytes());
        }
        // Upper-case digits: HEXDIG allows either case (RFC 9112 §7.1).
        for n in [0usize, 9, 10, 255, 4096, usize::MAX] {
            assert_eq!(hex_size(n).as_bytes(), format!("{n:X}").as_bytes());
        }
    }
}
