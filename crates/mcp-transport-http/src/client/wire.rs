//! The client's HTTP/1.1 (RFC 9112), spoken by the call that holds the connection.
//!
//! A Streamable HTTP client has one request in flight per HTTP/1.1 connection, so the
//! connection needs no task of its own: the call that takes it from the pool writes its
//! request, reads the reply's head, and its [`Body`](super::pool::Body) reads the rest from
//! the socket, after which the connection goes back to the pool. hyper's client connection
//! (which this replaces for HTTP/1.1; hyper still speaks HTTP/2) runs as a task that each
//! request and each body chunk is handed to and back from through channels: about half
//! of our client's instructions per small call (`docs/PERFORMANCE.md`, "Kept, and why",
//! has the gain). Heads are parsed by `httparse`, hyper's own parser.
//!
//! Invariants:
//!
//! - A request is written whole before its reply is read: an MCP server reads a request
//!   before it answers it. A server that answers early and closes fails the write, and the
//!   answer is read if it arrived.
//! - Every read is bounded: a head by [`MAX_HEAD`] bytes and [`MAX_HEADERS`] fields, a chunk
//!   size line and the trailers by [`MAX_LINE`], [`MAX_TRAILERS`] and
//!   [`MAX_TRAILER_FIELDS`]; a body's own size is
//!   the caller's limit (it reads frames).
//! - A connection is reusable only after a body framed by length or by chunks was read to
//!   its end, from a reply that keeps the connection alive, with nothing read past it.
//! - A reply framed two ways (`Transfer-Encoding` with `Content-Length`, or
//!   `Transfer-Encoding` in HTTP/1.0) fails the call and drops its connection.

use std::io;
use std::mem::MaybeUninit;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use bytes::{Buf, Bytes, BytesMut};
use http::header::{
    CONNECTION, CONTENT_LENGTH, CONTENT_TYPE, HeaderName, LOCATION, TRANSFER_ENCODING,
    WWW_AUTHENTICATE,
};
use http::{HeaderMap, HeaderValue, Method, StatusCode, Version};
use hyper_util::rt::TokioIo;
use tokio::io::AsyncWrite;
use tokio_util::io::poll_read_buf;

use crate::headers::{JSON, SSE};

/// The largest reply head read, in bytes (hyper's client reads up to about 400 KiB; an MCP
/// server's heads are a few hundred bytes).
pub(super) const MAX_HEAD: usize = 64 * 1024;
/// The most header fields a reply head may have.
pub(super) const MAX_HEADERS: usize = 100;
/// The longest chunk size line, extensions included.
const MAX_LINE: usize = 4096;
/// The most bytes of trailer fields after the last chunk (under hyper's 16 KiB, so that no
/// body hyper would refuse is taken).
const MAX_TRAILERS: usize = 8 * 1024;
/// The most trailer fields after the last chunk (under hyper's 100).
const MAX_TRAILER_FIELDS: usize = 64;
/// A body at most this large is copied after the head, so the request is one write.
const COPY_BODY: usize = 16 * 1024;
/// What a read asks the socket for at least.
const READ_SIZE: usize = 8 * 1024;

/// An HTTP/1.1 connection: its stream and what was read from it and not yet used.
pub(super) struct Conn<S> {
    io: TokioIo<S>,
    read: BytesMut,
    /// The request head being written, kept for its capacity.
    head: Vec<u8>,
    /// The names and value spans of the head being parsed, kept for their capacity.
    fields: Vec<(HeaderName, usize, usize)>,
    /// A reply's header map given back by its caller ([`Conn::recycle`]), cleared and
    /// filled again by the next reply's head rather than another allocated.
    spare: Option<HeaderMap>,
}

/// Why a request failed.
#[derive(Debug)]
pub(super) enum Failure {
    /// Nothing of the request reached the server (the connection was closed or reset
    /// before its first byte went): it may be sent again on another connection.
    Unsent(io::Error),
    /// Any other failure, after the request (or part of it) was written.
    Failed(Box<dyn std::error::Error + Send + Sync>),
}

/// How a reply's body is framed (RFC 9112, section 6.3), and how far it has been read.
#[derive(Debug)]
pub(super) enum Framing {
    /// This many bytes are left.
    Length(u64),
    /// Chunked, at this step of the chunk syntax.
    Chunked(Chunk),
    /// Until the server closes the connection.
    UntilClose,
    /// Read to its end.
    Done,
}

/// A step of chunked decoding.
#[derive(Debug, Clone, Copy)]
pub(super) enum Chunk {
    /// Before a chunk size line.
    Size,
    /// Inside a chunk's data, this many bytes left.
    Data(u64),
    /// After a chunk's data, before its CRLF.
    DataEnd,
    /// After the last chunk: trailer fields, this many bytes and this many fields of them
    /// so far.
    Trailers(usize, usize),
}

/// A reply's head as the pool needs it.
pub(super) struct Head {
    pub(super) status: StatusCode,
    /// The fields `kept` says; `None` when the head told its [`Media`] instead (the map
    /// would be empty).
    pub(super) headers: Option<HeaderMap>,
    pub(super) framing: Framing,
    /// Whether the connection may carry another request after this reply.
    pub(super) keep_alive: bool,
    /// The media type of a usual MCP reply, told here rather than in the header map.
    pub(super) media: Media,
}

/// The media type of a reply read with [`Kept::Content`] whose only kept field is a
/// `Content-Type` of exactly `application/json` or `text/event-stream`, on a success:
/// nearly every MCP reply. Such a reply's header map is left empty (its fill, look-up,
/// drop and recycling were a small but measurable share of our client's work per call). Any
/// other reply has its fields in its header map.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Media {
    /// `Content-Type: application/json`, and no other kept field.
    Json,
    /// `Content-Type: text/event-stream`, and no other kept field.
    Sse,
    /// Whatever the header map says.
    InHeaders,
}

impl Media {
    /// Whether the reply is JSON: told, or exactly one `application/json` (with any
    /// parameters) in `headers`.
    pub(super) fn is_json(self, headers: &HeaderMap) -> bool {
        match self {
            Media::Json => true,
            Media::Sse => false,
            Media::InHeaders => crate::headers::is_json_content(headers),
        }
    }

    /// Whether the reply is an SSE stream: told, or exactly one `text/event-stream` (with
    /// any parameters) in `headers`.
    pub(super) fn is_sse(self, headers: &HeaderMap) -> bool {
        match self {
            Media::Sse => true,
            Media::Json => false,
            Media::InHeaders => crate::headers::is_sse_content(headers),
        }
    }
}

fn invalid(reason: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, reason)
}

/// A stream whose idle check can be answered from the socket, without a read through the
/// stream.
pub(super) trait Probe {
    /// Whether the idle stream is still open, when the socket says so at once; `None` has
    /// the check poll a read through the stream (TLS, whose records only a read can tell
    /// apart: a session ticket the server sends late is not a closed connection).
    fn probe(&self) -> Option<bool> {
        None
    }
}

impl Probe for TokioIo<tokio::net::TcpStream> {
    fn probe(&self) -> Option<bool> {
        // From tokio's readiness, without a system call or a waker, while nothing has
        // arrived; a readiness left over from the last reply costs one `recv` that finds
        // nothing (and clears it). Bytes, or the end of the stream, make it unusable.
        let mut byte = [0u8; 1];
        Some(matches!(
            self.inner().try_read(&mut byte),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock
        ))
    }
}

impl Probe for super::connect::BoxedIo {
    fn probe(&self) -> Option<bool> {
        // Only the client's own TCP connections can be read beside the stream.
        self.tcp()?.probe()
    }
}

#[cfg(feature = "rustls")]
impl Probe for hyper_rustls::MaybeHttpsStream<super::connect::BoxedIo> {
    fn probe(&self) -> Option<bool> {
        match self {
            hyper_rustls::MaybeHttpsStream::Http(io) => io.probe(),
            hyper_rustls::MaybeHttpsStream::Https(_) => None,
        }
    }
}

#[cfg(any(test, feature = "fuzzing"))]
impl Probe for TokioIo<tokio::io::DuplexStream> {}

impl<S> Conn<S>
where
    S: hyper::rt::Read + hyper::rt::Write + Probe + Unpin,
{
    /// A connection over an open stream.
    pub(super) fn new(io: S) -> Self {
        Conn {
            io: TokioIo::new(io),
            read: BytesMut::new(),
            head: Vec::new(),
            fields: Vec::new(),
            spare: None,
        }
    }

    /// Takes back a reply's header map once its caller has read it, for the next reply.
    pub(super) fn recycle(&mut self, mut map: HeaderMap) {
        // An empty map without room (a reply whose media type was told in its `Head`)
        // would replace a spare that has room.
        if map.capacity() == 0 {
            return;
        }
        map.clear();
        self.spare = Some(map);
    }

    /// Whether the connection, idle in the pool, is still open: the server has neither
    /// closed it nor sent anything (an idle connection that received bytes is unusable).
    ///
    /// Plain TCP is answered by the socket ([`Probe`]). Otherwise a read is polled with
    /// `cx`, the context of the call about to use the connection: a pending poll leaves
    /// its waker registered for the socket's reads, where the reply's read finds it again
    /// (a waker that does nothing, registered here, had the reply's read clone the call's
    /// waker in and the next check drop it again, every call). A readiness left over from
    /// the last reply is cleared either way, so the reply's read waits for the socket
    /// without a system call.
    pub(super) fn is_open(&mut self, cx: &mut Context<'_>) -> bool {
        if !self.read.is_empty() {
            return false;
        }
        if let Some(open) = self.io.inner().probe() {
            return open;
        }
        self.read.reserve(READ_SIZE);
        matches!(
            poll_read_buf(Pin::new(&mut self.io), cx, &mut self.read),
            Poll::Pending
        )
    }

    /// Writes a request (its head from `line`, `host` and `fields`, see [`encode_head`],
    /// then `body`) and reads its reply's head; 1xx replies are skipped. The reply's
    /// header map holds the fields `kept` says.
    pub(super) async fn send(
        &mut self,
        line: RequestLine<'_>,
        host: Option<&HeaderValue>,
        fields: Option<&Fields>,
        body: &Bytes,
        kept: Kept,
    ) -> Result<Head, Failure> {
        let head_request = *line.method == Method::HEAD;
        encode_head(&mut self.head, line, host, fields, body.len());
        let copied = body.len() <= COPY_BODY;
        if copied {
            self.head.extend_from_slice(body);
        }
        let rest: &[u8] = if copied { &[] } else { body };
        let mut written = 0;
        if let Err(e) = std::future::poll_fn(|cx| self.poll_write(cx, rest, &mut written)).await {
            if written == 0 && is_reset(&e) {
                return Err(Failure::Unsent(e));
            }
            // The server may have answered before it closed (a refusal of the request).
            return match self.read_head(head_request, kept).await {
                Ok(head) => Ok(Head {
                    keep_alive: false,
                    ..head
                }),
                Err(_) => Err(Failure::Failed(e.into())),
            };
        }
        self.read_head(head_request, kept)
            .await
            .map_err(|e| Failure::Failed(e.into()))
    }

    /// Writes the head buffer then `rest`, from `written` bytes on.
    fn poll_write(
        &mut self,
        cx: &mut Context<'_>,
        rest: &[u8],
        written: &mut usize,
    ) -> Poll<io::Result<()>> {
        let total = self.head.len() + rest.len();
        while *written < total {
            let io = Pin::new(&mut self.io);
            let n = if *written < self.head.len() {
                let head = &self.head[*written..];
                if rest.is_empty() {
                    ready!(io.poll_write(cx, head))?
                } else {
                    let slices = [io::IoSlice::new(head), io::IoSlice::new(rest)];
                    ready!(io.poll_write_vectored(cx, &slices))?
                }
            } else {
                ready!(io.poll_write(cx, &rest[*written - self.head.len()..]))?
            };
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            *written += n;
        }
        Pin::new(&mut self.io).poll_flush(cx)
    }

    /// Reads a reply head, skipping 1xx ones.
    async fn read_head(&mut self, head_request: bool, kept: Kept) -> io::Result<Head> {
        std::future::poll_fn(|cx| self.poll_head(cx, head_request, kept)).await
    }

    /// [`read_head`](Self::read_head) as a poll: a function rather than a future of its
    /// own, so that waiting for a reply is one state of the caller's future.
    fn poll_head(
        &mut self,
        cx: &mut Context<'_>,
        head_request: bool,
        kept: Kept,
    ) -> Poll<io::Result<Head>> {
        loop {
            match self.parse_head(head_request, kept)? {
                Parsed::Head(head) => return Poll::Ready(Ok(head)),
                Parsed::Skipped => continue,
                Parsed::Partial => {}
            }
            if self.read.len() >= MAX_HEAD {
                return Poll::Ready(Err(invalid(format!(
                    "the reply's head is larger than {MAX_HEAD} bytes"
                ))));
            }
            if ready!(self.poll_fill(cx))? == 0 {
                return Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    if self.read.is_empty() {
                        "the server closed the connection without replying"
                    } else {
                        "the server closed the connection within the reply's head"
                    },
                )));
            }
        }
    }

    /// Reads more from the socket onto the buffer; `Ok(0)` at the end of the stream.
    fn poll_fill(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        if self.read.capacity() - self.read.len() < READ_SIZE / 4 {
            self.read.reserve(READ_SIZE);
        }
        poll_read_buf(Pin::new(&mut self.io), cx, &mut self.read)
    }

    /// Parses and takes a whole reply head from the buffer.
    fn parse_head(&mut self, head_request: bool, kept: Kept) -> io::Result<Parsed> {
        if self.read.is_empty() {
            return Ok(Parsed::Partial);
        }
        // Left uninitialised (3.2 KB that a small head would otherwise zero): httparse
        // fills what it parses.
        let mut headers = [const { MaybeUninit::<httparse::Header<'_>>::uninit() }; MAX_HEADERS];
        let mut parsed = httparse::Response::new(&mut []);
        let base = self.read.as_ptr() as usize;
        let len = match httparse::ParserConfig::default().parse_response_with_uninit_headers(
            &mut parsed,
            &self.read,
            &mut headers,
        ) {
            Ok(httparse::Status::Complete(len)) => len,
            Ok(httparse::Status::Partial) => return Ok(Parsed::Partial),
            Err(e) => return Err(invalid(format!("a malformed reply head: {e}"))),
        };
        let code = parsed.code.unwrap_or_default();
        let status = StatusCode::from_u16(code)
            .map_err(|_| invalid(format!("a reply with status {code}")))?;
        let version = if parsed.version == Some(0) {
            Version::HTTP_10
        } else {
            Version::HTTP_11
        };
        // `Connection: close`, and `keep-alive` (which an HTTP/1.0 reply needs to stay).
        let (mut close, mut asked) = (false, false);
        let mut length: Option<u64> = None;
        let mut chunked = false;
        let mut encoded = false;
        self.fields.clear();
        for field in parsed.headers.iter() {
            let name = match framing_name(field.name.as_bytes()) {
                Some(name) => name,
                None if kept == Kept::Content => continue,
                None => HeaderName::from_bytes(field.name.as_bytes())
                    .map_err(|_| invalid(format!("a bad header name {:?}", field.name)))?,
            };
            let value = field.value;
            if name == CONTENT_LENGTH {
                let n = std::str::from_utf8(value)
                    .ok()
                    .map(str::trim)
                    .filter(|text| !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()))
                    .and_then(|text| text.parse::<u64>().ok())
                    .ok_or_else(|| invalid("a bad Content-Length"))?;
                if length.is_some_and(|m| m != n) {
                    return Err(invalid("two different Content-Length values"));
                }
                length = Some(n);
            } else if name == TRANSFER_ENCODING {
                // A coding list that is not text cannot be read the same way by every
                // recipient (hyper takes it for "not chunked"): refused.
                if !value
                    .iter()
                    .all(|&b| b == b'\t' || (b' '..=b'~').contains(&b))
                {
                    return Err(invalid("a Transfer-Encoding that is not text"));
                }
                encoded = true;
                // The last coding decides (RFC 9112, section 6.3, rule 4).
                chunked = value
                    .rsplit(|&b| b == b',')
                    .next()
                    .is_some_and(|last| last.trim_ascii().eq_ignore_ascii_case(b"chunked"));
            } else if name == CONNECTION {
                for token in value.split(|&b| b == b',') {
                    let token = token.trim_ascii();
                    close |= token.eq_ignore_ascii_case(b"close");
                    asked |= token.eq_ignore_ascii_case(b"keep-alive");
                }
            }
            if kept == Kept::Content
                && name != CONTENT_TYPE
                && name != LOCATION
                && name != WWW_AUTHENTICATE
            {
                continue;
            }
            let start = value.as_ptr() as usize - base;
            self.fields.push((name, start, start + value.len()));
        }
        // RFC 9112 §6.1 and §6.3: a reply framed both by Transfer-Encoding and by
        // Content-Length, or with Transfer-Encoding over HTTP/1.0 (which has none), is
        // how a response is smuggled past an intermediary that reads the other framing.
        // The reply is refused and its connection, whose next bytes cannot be trusted,
        // is dropped with it.
        if encoded && length.is_some() {
            return Err(invalid(
                "a reply with both Transfer-Encoding and Content-Length",
            ));
        }
        if encoded && version == Version::HTTP_10 {
            return Err(invalid("an HTTP/1.0 reply with Transfer-Encoding"));
        }
        if status.is_informational() {
            self.read.advance(len);
            if status == StatusCode::SWITCHING_PROTOCOLS {
                return Err(invalid("an unrequested protocol switch (101)"));
            }
            return Ok(Parsed::Skipped);
        }
        let media = match self.fields.as_slice() {
            [(name, start, end)]
                if kept == Kept::Content && status.is_success() && *name == CONTENT_TYPE =>
            {
                let value = &self.read[*start..*end];
                if value == JSON.as_bytes() {
                    Media::Json
                } else if value == SSE.as_bytes() {
                    Media::Sse
                } else {
                    Media::InHeaders
                }
            }
            _ => Media::InHeaders,
        };
        let headers = if media == Media::InHeaders {
            let mut map = match self.spare.take() {
                Some(mut map) => {
                    map.reserve(self.fields.len());
                    map
                }
                None => HeaderMap::with_capacity(self.fields.len()),
            };
            if kept == Kept::All {
                // Every value shares the head's bytes.
                let head = self.read.split_to(len).freeze();
                for (name, start, end) in self.fields.drain(..) {
                    let value = HeaderValue::from_maybe_shared(head.slice(start..end))
                        .map_err(|_| invalid("a bad header value"))?;
                    map.append(name, value);
                }
            } else {
                // A few values, the usual ones static: the head is dropped from the buffer
                // rather than split off it (which counts a reference to the buffer, and
                // uncounts it when the head goes).
                for (name, start, end) in self.fields.drain(..) {
                    map.append(name, content_value(&self.read[start..end])?);
                }
                self.read.advance(len);
            }
            Some(map)
        } else {
            self.fields.clear();
            self.read.advance(len);
            None
        };
        // RFC 9112, section 6.3: no body after HEAD, 204 and 304; a coding other than
        // chunked last, or no framing at all, runs to the connection's close.
        let framing = if head_request
            || status == StatusCode::NO_CONTENT
            || status == StatusCode::NOT_MODIFIED
        {
            Framing::Done
        } else if chunked {
            Framing::Chunked(Chunk::Size)
        } else if encoded {
            Framing::UntilClose
        } else {
            match length {
                Some(0) => Framing::Done,
                Some(n) => Framing::Length(n),
                None => Framing::UntilClose,
            }
        };
        let keep_alive = !close
            && (version == Version::HTTP_11 || asked)
            && !matches!(framing, Framing::UntilClose);
        Ok(Parsed::Head(Head {
            status,
            headers,
            framing,
            keep_alive,
            media,
        }))
    }

    /// The body's next data, `None` at its end: bytes already read first, then reads from
    /// the socket.
    pub(super) fn poll_data(
        &mut self,
        framing: &mut Framing,
        cx: &mut Context<'_>,
    ) -> Poll<Option<io::Result<Bytes>>> {
        loop {
            match self.take_data(framing) {
                Err(e) => return Poll::Ready(Some(Err(e))),
                Ok(Some(data)) => return Poll::Ready(Some(Ok(data))),
                Ok(None) if matches!(framing, Framing::Done) => return Poll::Ready(None),
                Ok(None) => {}
            }
            let n = match ready!(self.poll_fill(cx)) {
                Ok(n) => n,
                Err(e) => return Poll::Ready(Some(Err(e))),
            };
            if n == 0 {
                if matches!(framing, Framing::UntilClose) {
                    *framing = Framing::Done;
                    return Poll::Ready(None);
                }
                return Poll::Ready(Some(Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the server closed the connection before the reply's end",
                ))));
            }
        }
    }

    /// The next `n` bytes when the buffer holds them already, taken without a poll.
    pub(super) fn take_buffered(&mut self, n: usize) -> Option<Bytes> {
        (self.read.len() >= n).then(|| self.read.split_to(n).freeze())
    }

    /// The body's data already in the buffer, if any; `None` when more must be read, or at
    /// the end (`framing` is then [`Framing::Done`]).
    fn take_data(&mut self, framing: &mut Framing) -> io::Result<Option<Bytes>> {
        loop {
            match framing {
                Framing::Done => return Ok(None),
                Framing::UntilClose => {
                    if self.read.is_empty() {
                        return Ok(None);
                    }
                    return Ok(Some(self.read.split().freeze()));
                }
                Framing::Length(left) => {
                    if self.read.is_empty() {
                        return Ok(None);
                    }
                    let n = usize::try_from(*left)
                        .map_or(self.read.len(), |left| left.min(self.read.len()));
                    *left -= n as u64;
                    if *left == 0 {
                        *framing = Framing::Done;
                    }
                    return Ok(Some(self.read.split_to(n).freeze()));
                }
                Framing::Chunked(chunk) => match decode_chunk(chunk, &mut self.read)? {
                    Step::Data(data) => return Ok(Some(data)),
                    Step::More => return Ok(None),
                    Step::Next => {}
                    Step::End => *framing = Framing::Done,
                },
            }
        }
    }

    /// Whether nothing was read past the reply: a connection is reused only then.
    pub(super) fn is_clean(&self) -> bool {
        self.read.is_empty()
    }
}

/// Which of a reply's header fields its header map holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kept {
    /// Every field.
    All,
    /// `Content-Type`, `Location` and `WWW-Authenticate`: all that an MCP request's
    /// caller reads of a reply, without an authorizer (which is shown every field). The
    /// others are read for the framing (`Content-Length`, `Transfer-Encoding`,
    /// `Connection`) or not at all (`Date`, `Server`): no name or value is made of them.
    Content,
}

/// The name of a field that frames the reply or that [`Kept::Content`] keeps, matched
/// without making a [`HeaderName`] of it (case-insensitively: RFC 9110, section 5.1).
fn framing_name(name: &[u8]) -> Option<HeaderName> {
    let known = match name.len() {
        8 => LOCATION,
        10 => CONNECTION,
        12 => CONTENT_TYPE,
        14 => CONTENT_LENGTH,
        16 => WWW_AUTHENTICATE,
        17 => TRANSFER_ENCODING,
        _ => return None,
    };
    let lower = known.as_str().as_bytes();
    // Servers mostly send names in lower case (HTTP/2 and hyper always): compared whole
    // first, byte by byte without case only if that fails.
    (name == lower || name.eq_ignore_ascii_case(lower)).then_some(known)
}

/// A value [`Kept::Content`] keeps: the media types of MCP replies without a copy, any
/// other value copied.
fn content_value(value: &[u8]) -> io::Result<HeaderValue> {
    if value == JSON.as_bytes() {
        return Ok(HeaderValue::from_static(JSON));
    }
    if value == SSE.as_bytes() {
        return Ok(HeaderValue::from_static(SSE));
    }
    HeaderValue::from_bytes(value).map_err(|_| invalid("a bad header value"))
}

/// What [`Conn::parse_head`] found.
enum Parsed {
    /// A whole head, taken from the buffer.
    Head(Head),
    /// A 1xx reply's head, taken and skipped.
    Skipped,
    /// Not all of a head yet.
    Partial,
}

/// What one step of chunked decoding did.
enum Step {
    /// Chunk data.
    Data(Bytes),
    /// Moved on in the syntax.
    Next,
    /// More input is needed.
    More,
    /// The last chunk and the trailers were read.
    End,
}

/// Decodes one step of the chunked coding (RFC 9112, section 7.1) from `input`.
///
/// Every line ends with CRLF, as the grammar says and hyper's decoder insists: a bare LF
/// (or CR) in a size line, after a chunk's data or in the trailers is an error, never a
/// line end. A recipient that took it as one would frame the body otherwise than a proxy
/// in front that does not, which is how one response is smuggled inside another.
fn decode_chunk(chunk: &mut Chunk, input: &mut BytesMut) -> io::Result<Step> {
    match *chunk {
        Chunk::Size => {
            let Some(end) = memchr::memchr(b'\n', input) else {
                if input.len() > MAX_LINE {
                    return Err(invalid("a chunk size line too long"));
                }
                return Ok(Step::More);
            };
            let size = chunk_size(&input[..end]).ok_or_else(|| invalid("a bad chunk size"))?;
            input.advance(end + 1);
            *chunk = if size == 0 {
                Chunk::Trailers(0, 0)
            } else {
                Chunk::Data(size)
            };
            Ok(Step::Next)
        }
        Chunk::Data(left) => {
            if input.is_empty() {
                return Ok(Step::More);
            }
            let n = usize::try_from(left).map_or(input.len(), |left| left.min(input.len()));
            let left = left - n as u64;
            *chunk = if left == 0 {
                Chunk::DataEnd
            } else {
                Chunk::Data(left)
            };
            Ok(Step::Data(input.split_to(n).freeze()))
        }
        Chunk::DataEnd => {
            match &input[..] {
                [b'\r', b'\n', ..] => {}
                [] | [b'\r'] => return Ok(Step::More),
                _ => return Err(invalid("a chunk not followed by CRLF")),
            }
            input.advance(2);
            *chunk = Chunk::Size;
            Ok(Step::Next)
        }
        Chunk::Trailers(seen, fields) => {
            let Some(end) = memchr::memchr(b'\n', input) else {
                if seen.saturating_add(input.len()) > MAX_TRAILERS {
                    return Err(invalid("trailer fields too long"));
                }
                return Ok(Step::More);
            };
            let line = input[..end]
                .strip_suffix(b"\r")
                .ok_or_else(|| invalid("a trailer line not ended by CRLF"))?;
            if line.is_empty() {
                input.advance(end + 1);
                return Ok(Step::End);
            }
            // Each line a well-formed field, as hyper's decoder has it: one that is not
            // could be taken by another reader for something else.
            let mut field = [httparse::EMPTY_HEADER; 1];
            let well_formed = line.iter().all(|&b| b != b'\r')
                && httparse::parse_headers(&input[..=end], &mut field).is_ok()
                && HeaderValue::from_bytes(field[0].value).is_ok();
            if !well_formed {
                return Err(invalid("a malformed trailer field"));
            }
            let seen = seen
                .checked_add(end + 1)
                .filter(|&seen| seen <= MAX_TRAILERS)
                .ok_or_else(|| invalid("trailer fields too long"))?;
            let fields = fields
                .checked_add(1)
                .filter(|&fields| fields <= MAX_TRAILER_FIELDS)
                .ok_or_else(|| invalid("too many trailer fields"))?;
            input.advance(end + 1);
            *chunk = Chunk::Trailers(seen, fields);
            Ok(Step::Next)
        }
    }
}

/// The size of a chunk size line (without its LF): `1*HEXDIG *( SP / HTAB ) [ ";" ext ]
/// CR`, the extension free of CR. At most 15 digits, so that the size fits in 60 bits.
fn chunk_size(line: &[u8]) -> Option<u64> {
    let line = line.strip_suffix(b"\r")?;
    if line.contains(&b'\r') {
        return None;
    }
    let size = match line.iter().position(|&b| b == b';') {
        Some(at) => &line[..at],
        None => line,
    };
    let digits = size
        .iter()
        .rposition(|&b| b != b' ' && b != b'\t')
        .map_or(&size[..0], |last| &size[..=last]);
    if digits.is_empty() || digits.len() > 15 || !digits.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    let digits = std::str::from_utf8(digits).ok()?;
    u64::from_str_radix(digits, 16).ok()
}

/// Whether a write failed because the server had closed or reset the connection.
fn is_reset(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::BrokenPipe
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::NotConnected
    )
}

/// Header fields made once and sent with many requests (the same client headers call
/// after call): the map, for HTTP/2 and for whoever must change them, and its HTTP/1.1
/// encoding, so that a request sent with them copies one run of bytes instead of walking
/// (and first cloning) a map.
#[derive(Debug)]
pub(super) struct Fields {
    map: HeaderMap,
    /// `name: value\r\n` for each field of `map`, in its order.
    encoded: Box<[u8]>,
    /// Whether `map` has a `Content-Length` (looked up once, not per request).
    has_length: bool,
}

impl Fields {
    pub(super) fn new(map: HeaderMap) -> Self {
        let mut encoded = Vec::new();
        encode_fields(&mut encoded, &map);
        Fields {
            has_length: map.contains_key(CONTENT_LENGTH),
            map,
            encoded: encoded.into_boxed_slice(),
        }
    }

    /// The fields as a map.
    pub(super) fn map(&self) -> &HeaderMap {
        &self.map
    }
}

/// Appends `name: value\r\n` for each field of `map`.
fn encode_fields(out: &mut Vec<u8>, map: &HeaderMap) {
    for (name, value) in map {
        out.extend_from_slice(name.as_str().as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
}

/// What a request's head is written from ([`encode_head`]): its method, its URI and its
/// own header fields, borrowed from wherever the caller keeps them.
#[derive(Clone, Copy)]
pub(super) struct RequestLine<'a> {
    pub(super) method: &'a Method,
    pub(super) uri: &'a http::Uri,
    pub(super) headers: &'a HeaderMap,
    /// Whether the target is written in absolute form (to a forward proxy) rather than
    /// origin form.
    pub(super) absolute_form: bool,
}

#[cfg(test)]
impl<'a> From<&'a http::request::Parts> for RequestLine<'a> {
    fn from(parts: &'a http::request::Parts) -> Self {
        RequestLine {
            method: &parts.method,
            uri: &parts.uri,
            headers: &parts.headers,
            absolute_form: false,
        }
    }
}

/// Writes a request head onto `out`: the request line with the origin form of the URI
/// (absolute or not; RFC 9112, section 3.2.1), `host` first if given (section 3.2: a client
/// sends `Host` first), the shared `fields` then the request's own, and `Content-Length`
/// unless one of them gives it (for a body, or a method that carries one).
pub(super) fn encode_head(
    out: &mut Vec<u8>,
    parts: RequestLine<'_>,
    host: Option<&HeaderValue>,
    fields: Option<&Fields>,
    body_len: usize,
) {
    out.clear();
    out.extend_from_slice(parts.method.as_str().as_bytes());
    out.push(b' ');
    let target = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    if parts.absolute_form
        && let (Some(scheme), Some(authority)) = (parts.uri.scheme_str(), parts.uri.authority())
    {
        out.extend_from_slice(scheme.as_bytes());
        out.extend_from_slice(b"://");
        out.extend_from_slice(authority.as_str().as_bytes());
    }
    out.extend_from_slice(if target.is_empty() {
        b"/"
    } else {
        target.as_bytes()
    });
    out.extend_from_slice(b" HTTP/1.1\r\n");
    if let Some(host) = host {
        out.extend_from_slice(b"host: ");
        out.extend_from_slice(host.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    if let Some(fields) = fields {
        out.extend_from_slice(&fields.encoded);
    }
    encode_fields(out, parts.headers);
    let carries_body = body_len > 0
        || *parts.method == Method::POST
        || *parts.method == Method::PUT
        || *parts.method == Method::PATCH;
    if carries_body
        && !parts.headers.contains_key(CONTENT_LENGTH)
        && !fields.is_some_and(|f| f.has_length)
    {
        out.extend_from_slice(b"content-length: ");
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        let mut n = body_len;
        loop {
            at -= 1;
            digits[at] = b'0' + u8::try_from(n % 10).unwrap_or_default();
            n /= 10;
            if n == 0 {
                break;
            }
        }
        out.extend_from_slice(&digits[at..]);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
}

/// For the `http_reply` fuzz target: `reply` read as the reply to a POST, the server's
/// bytes arriving in reads of the sizes in `reads` (taken in turn; none: all at once) and
/// the connection closed after them. The status and the whole body, or `None` when the
/// reply is refused.
#[cfg(feature = "fuzzing")]
pub(crate) fn fuzz_reply(reply: &[u8], reads: &[usize]) -> Option<(u16, Vec<u8>)> {
    use tokio::io::AsyncWriteExt as _;

    let runtime = tokio::runtime::Builder::new_current_thread().build().ok()?;
    let reply = reply.to_vec();
    let reads = reads.to_vec();
    runtime.block_on(async move {
        let (ours, mut server) = tokio::io::duplex(1 << 16);
        // The server's end is handed back, not dropped, so that only its shutdown (the
        // end of the reply) reaches the client.
        let serving = tokio::spawn(async move {
            let mut rest = &reply[..];
            let mut turn = 0;
            while !rest.is_empty() {
                let size = reads.get(turn % reads.len().max(1)).copied();
                turn += 1;
                let (read, tail) = rest.split_at(size.unwrap_or(rest.len()).clamp(1, rest.len()));
                if server.write_all(read).await.is_err() {
                    break;
                }
                rest = tail;
                tokio::task::yield_now().await;
            }
            let _ = server.shutdown().await;
            server
        });
        let mut conn = Conn::new(TokioIo::new(ours));
        let uri = http::Uri::from_static("http://fuzz/mcp");
        let headers = HeaderMap::new();
        let line = RequestLine {
            method: &Method::POST,
            uri: &uri,
            headers: &headers,
            absolute_form: false,
        };
        let outcome = async {
            let head = conn
                .send(line, None, None, &Bytes::new(), Kept::All)
                .await
                .ok()?;
            let mut framing = head.framing;
            let mut body = Vec::new();
            while let Some(data) = std::future::poll_fn(|cx| conn.poll_data(&mut framing, cx)).await
            {
                body.extend_from_slice(&data.ok()?);
            }
            Some((head.status.as_u16(), body))
        }
        .await;
        drop(serving.await);
        outcome
    })
}

/// For the `http_reply` fuzz target: `reply` read by hyper's HTTP/1.1 client connection as
/// the reply to a POST, the connection closed after it. As [`fuzz_reply`].
#[cfg(feature = "fuzzing")]
pub(crate) fn fuzz_reply_hyper(reply: &[u8]) -> Option<(u16, Vec<u8>)> {
    use http_body_util::BodyExt as _;
    use tokio::io::AsyncWriteExt as _;

    let runtime = tokio::runtime::Builder::new_current_thread().build().ok()?;
    let reply = reply.to_vec();
    runtime.block_on(async move {
        use tokio::io::AsyncReadExt as _;

        let (ours, mut server) = tokio::io::duplex(reply.len().saturating_add(1 << 16));
        // hyper refuses bytes that come before its request: the reply is written once the
        // request's head (its body is empty) has arrived.
        let serving = tokio::spawn(async move {
            let mut request = Vec::new();
            let mut buf = [0u8; 1024];
            while !request.ends_with(b"\r\n\r\n") {
                match server.read(&mut buf).await {
                    Ok(0) | Err(_) => return server,
                    Ok(n) => request.extend_from_slice(&buf[..n]),
                }
            }
            if server.write_all(&reply).await.is_ok() {
                let _ = server.shutdown().await;
            }
            server
        });
        let (mut sender, connection) = hyper::client::conn::http1::handshake::<
            _,
            http_body_util::Full<Bytes>,
        >(TokioIo::new(ours))
        .await
        .ok()?;
        let driving = tokio::spawn(connection);
        let request = http::Request::post("/mcp")
            .header(http::header::HOST, "fuzz")
            .body(http_body_util::Full::new(Bytes::new()))
            .ok()?;
        let outcome = async {
            let response = sender.send_request(request).await.ok()?;
            let status = response.status().as_u16();
            let body = response.into_body().collect().await.ok()?.to_bytes();
            Some((status, body.to_vec()))
        }
        .await;
        driving.abort();
        drop(serving.await);
        outcome
    })
}

#[cfg(test)]
mod tests;
