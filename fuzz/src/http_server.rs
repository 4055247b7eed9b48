//! `http_server`: raw bytes, in reads of input-chosen sizes and pauses, on one server
//! connection: hyper's HTTP/1.1 server connection with what the server adds around it
//! (the head limit measured as sent, the rule that a chunked body not read cleanly to its
//! end closes the connection, the write timeout), and the endpoint behind it.
//!
//! The connection is an in-memory stream (`tokio::io::duplex`) served by
//! `fuzzing::Connections`, the code `HttpServer` runs for an accepted socket, on a
//! current-thread runtime whose clock is paused: every timeout of the server (1 s for a
//! head, a body and a stalled write) and of the target runs in virtual time, which moves
//! only when every task waits, so a timeout costs nothing and a read split is a real one
//! (after each piece the client waits until the server has done all it can with it). The
//! endpoint is an `McpService` (head limit 512 bytes, body limit 256, 16 fields) with a
//! handler that answers any method, notifying first for `fuzz/stream` (an SSE reply in
//! chunks) and sleeping first for `fuzz/slow`; a wrapper records each request the
//! endpoint is called with (method, target, the body bytes it draws) and the handler
//! records each message it gets.
//!
//! The input is mostly plausible HTTP, built from an `Arbitrary` structure: requests
//! (method, target, version, the usual MCP header fields with some left out, extra fields
//! among `Content-Length`, `Transfer-Encoding`, `Host`, `Content-Type`, `Connection`,
//! `Expect`, `Mcp-*` and any other, and a body framed by length, by chunks (sizes,
//! extensions, trailers), by both, or wrongly, holding a JSON-RPC request, a notification,
//! another whole request, or any bytes) and raw byte spans, and the reads to send them in.
//! An input whose first byte has bit 4 set is raw instead (the seeds and regressions
//! written by hand): a count byte, that many reads of three bytes (size - 1, little
//! endian, then the pause), and the bytes to send. The first byte's bit 3 keeps the
//! client's write half open after the last byte; its bits 0-2 mean nothing (they once
//! chose between the server's own HTTP/1.1 and hyper, and the committed corpus keeps
//! them).
//!
//! A strict HTTP/1.1 parser reads the same bytes as a sequence of requests: `httparse`
//! for each head, then RFC 9112 §6 for the body: `Transfer-Encoding` whose last coding is
//! `chunked` (§7.1; a bare LF or CR in a size line or after the data is an error), else
//! `Content-Length` (digits; repeated only with the same value), else no body. A request
//! with both is refused (§6.1: a server may serve it by its chunks alone, then must close),
//! and so is one whose trailer section has a bare LF (where it ends depends on whether LF
//! alone ends a line, §2.2: the same rule), and any other framing error; the parse stops
//! at the first request that is refused, unclear or incomplete. Checks:
//!
//! - nothing panics or hangs: the connection ends, with the server's task, within 30 s of
//!   virtual time after the last byte, and nothing is left in flight afterwards;
//! - the server's output is a sequence of well-formed responses (`httparse`, framed by
//!   `Content-Length` or chunks; interim `1xx` skipped; only the last may be cut short);
//! - no request gets two responses: the server writes at most one final response per
//!   request the strict parser found, plus one for a head it could not parse; the answer
//!   to a request refused, incomplete or unclear, or to an unparsable head, is an error
//!   (4xx or 5xx; an unclear request whose data arrived whole may be served) and is the
//!   last;
//! - no body byte is answered as a request: the k-th request the endpoint is called with
//!   is the strict parser's k-th (same method, same target), the body bytes it draws are
//!   that request's body (a prefix of it; all of it only when it arrived whole), the
//!   handler runs only for a request whose body arrived whole and gets that body's id,
//!   and every JSON-RPC id in a response is the id of the request at the same position;
//!   a `405` answers a request that is not a `POST`, a `404` one for another path, and a
//!   `2xx` a `POST` to the endpoint within both limits;
//! - every limit holds: a head over `max_head_bytes` (counted with the usual spacing, and
//!   as sent) never reaches the endpoint and never gets a `2xx`; a body over
//!   `max_body_bytes` never reaches the handler and never gets a `2xx`.

use std::fmt::Write as _;
use std::pin::Pin;
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Uri};
use http_body::{Body, Frame, SizeHint};
use libfuzzer_sys::arbitrary::{self, Arbitrary, Unstructured};
use mcp_jsonrpc::{DecodeOptions, Decoded, ErrorObject, Handler, Message as Rpc, RequestContext};
use mcp_transport_http::fuzzing::Connections;
use mcp_transport_http::{
    Endpoint, HttpServerConfig, McpBody, McpService, RequestBody, RequestBodyError, ResponseFuture,
};
use mcp_types::RequestId;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::runtime::Runtime;

/// The limits of the server, small so that inputs reach them.
const MAX_HEAD: usize = 512;
const MAX_BODY: usize = 256;
const MAX_FIELDS: usize = 16;
/// Every timeout of the server.
const TIMEOUT: Duration = Duration::from_secs(1);
/// How long the connection may stay open after the last byte was sent (virtual time).
const HANG: Duration = Duration::from_secs(30);
/// A pause long enough for any of the server's timeouts to fire.
const LONG_PAUSE: Duration = Duration::from_millis(1500);
const PATH: &str = "/mcp";
const VERSION: &str = "2026-07-28";
const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

// ---------------------------------------------------------------------------------------
// The input.

#[derive(Debug, Arbitrary)]
struct Input {
    /// Read by `run` from the input's first byte (see the module docs).
    flags: u8,
    /// The first reads: each a size and a pause after it; the rest goes in one write.
    reads: Vec<(u16, u8)>,
    items: Vec<Item>,
}

#[derive(Debug, Arbitrary)]
enum Item {
    Request(Req),
    Raw(Vec<u8>),
}

#[derive(Debug, Arbitrary)]
struct Req {
    method: MethodPick,
    target: TargetPick,
    version: VersionPick,
    /// 1 to 5: that one of the usual fields is left out (see `render`).
    omit: u8,
    fields: Vec<Field>,
    framing: Framing,
    body: BodyPick,
}

#[derive(Debug, Arbitrary)]
enum MethodPick {
    Post,
    Post2,
    Post3,
    Get,
    Head,
    Put,
    Options,
    Connect,
    Other(String),
}

#[derive(Debug, Arbitrary)]
enum TargetPick {
    Endpoint,
    Endpoint2,
    Query,
    Root,
    Absolute,
    Asterisk,
    Other(String),
}

#[derive(Debug, Arbitrary)]
enum VersionPick {
    Http11,
    Http11b,
    Http10,
    Other(String),
}

#[derive(Debug, Arbitrary)]
enum Field {
    Known(Header, u8),
    KnownRaw(Header, Vec<u8>),
    /// `X-Pad` with this many bytes (modulo 600): heads past the limit.
    Pad(u16),
    Raw(String, Vec<u8>),
    /// A whole line as it is (obsolete folding, bare LF, no colon, spaces before it).
    Line(Vec<u8>),
}

#[derive(Debug, Clone, Copy, Arbitrary)]
enum Header {
    Host,
    ContentType,
    Accept,
    ContentLength,
    TransferEncoding,
    Connection,
    Expect,
    Upgrade,
    McpMethod,
    McpName,
    McpProtocolVersion,
    McpParam,
    Origin,
    ContentEncoding,
    Te,
    Trailer,
}

impl Header {
    fn text(self) -> &'static str {
        match self {
            Header::Host => "Host",
            Header::ContentType => "Content-Type",
            Header::Accept => "Accept",
            Header::ContentLength => "Content-Length",
            Header::TransferEncoding => "Transfer-Encoding",
            Header::Connection => "Connection",
            Header::Expect => "Expect",
            Header::Upgrade => "Upgrade",
            Header::McpMethod => "Mcp-Method",
            Header::McpName => "Mcp-Name",
            Header::McpProtocolVersion => "MCP-Protocol-Version",
            Header::McpParam => "Mcp-Param-Region",
            Header::Origin => "Origin",
            Header::ContentEncoding => "Content-Encoding",
            Header::Te => "TE",
            Header::Trailer => "Trailer",
        }
    }

    /// A few values that mean something for this field.
    fn values(self) -> &'static [&'static str] {
        match self {
            Header::Host => &["127.0.0.1", "localhost:8080", "evil.example", "[::1]", ""],
            Header::ContentType => &[
                "application/json",
                "text/plain",
                "application/json; charset=utf-8",
            ],
            Header::Accept => &[
                "application/json, text/event-stream",
                "application/json",
                "*/*",
            ],
            Header::ContentLength => &[
                "{len}",
                "0",
                "5",
                "+5",
                "1, 1",
                "-1",
                "18446744073709551616",
                "00",
                "{len}0",
            ],
            Header::TransferEncoding => &[
                "chunked",
                "Chunked",
                "gzip, chunked",
                "chunked, gzip",
                "identity",
                "chunked, chunked",
                "chunked,",
                "\tchunked",
            ],
            Header::Connection => &[
                "close",
                "keep-alive",
                "Upgrade",
                "close, keep-alive",
                "Keep-Alive",
            ],
            Header::Expect => &["100-continue", "nothing"],
            Header::Upgrade => &["h2c", "websocket"],
            Header::McpMethod => &["{method}", "ping", "fuzz/stream", "tools/list"],
            Header::McpName => &["echo", "=?base64?ZXU=?="],
            Header::McpProtocolVersion => &[VERSION, "2025-06-18"],
            Header::McpParam => &["eu", "=?base64?ZXU=?="],
            Header::Origin => &["http://localhost:3000", "https://evil.example", "null"],
            Header::ContentEncoding => &["gzip", "identity"],
            Header::Te => &["trailers"],
            Header::Trailer => &["X-Checksum"],
        }
    }
}

#[derive(Debug, Arbitrary)]
enum Framing {
    Length,
    Length2,
    Absent,
    Chunked(Chunking),
    /// `Content-Length` and `Transfer-Encoding` both; the first says which comes first.
    Both(bool, Chunking),
    /// A `Content-Length` off by this much: the rest is read as the next request.
    Off(i8),
    Twice,
    Differ,
}

#[derive(Debug, Arbitrary)]
struct Chunking {
    /// The sizes of the chunks (0: the rest); the body is cut in these.
    sizes: Vec<u8>,
    /// The `Transfer-Encoding` value (an index into `Header::TransferEncoding`'s).
    coding: u8,
    extension: Option<Extension>,
    trailer: Option<Trailer>,
    upper: bool,
    zeros: bool,
    /// A size line ends in LF alone.
    bare_lf: bool,
}

#[derive(Debug, Arbitrary)]
enum Extension {
    Named,
    Valued,
    Quoted,
    Spaced,
    Raw(Vec<u8>),
}

#[derive(Debug, Arbitrary)]
enum Trailer {
    Field,
    Raw(Vec<u8>),
}

#[derive(Debug, Arbitrary)]
enum BodyPick {
    Call {
        method: u8,
        pad: u16,
    },
    Call2 {
        method: u8,
        pad: u16,
    },
    Notification {
        pad: u8,
    },
    /// A whole request of its own (id 1000 + its place), inside this one's body.
    Smuggled {
        method: u8,
        chunked: bool,
    },
    Raw(Vec<u8>),
    Empty,
}

const METHODS: [&str; 3] = ["ping", "fuzz/stream", "fuzz/slow"];

fn pad(n: usize) -> String {
    "p".repeat(n)
}

/// A JSON-RPC request with `id`, `method` and `pad` bytes of padding in its params.
fn call(id: u64, method: &str, pad_len: usize) -> Vec<u8> {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{"pad":"{}",{META}}}}}"#,
        pad(pad_len)
    )
    .into_bytes()
}

/// A short request of `method` with `id` (framed by length or by chunks), small enough
/// to hide in another request's body within the body limit.
fn inner_request(id: u64, method: &str, chunked: bool) -> Vec<u8> {
    let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{{META}}}}}"#);
    let mut out = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n".to_vec();
    if chunked {
        out.extend_from_slice(b"Transfer-Encoding: chunked\r\n\r\n");
        out.extend_from_slice(format!("{:x}\r\n{body}\r\n0\r\n\r\n", body.len()).as_bytes());
    } else {
        out.extend_from_slice(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes());
    }
    out
}

impl Req {
    fn render(&self, index: u64, out: &mut Vec<u8>) {
        let (body, method) = match &self.body {
            BodyPick::Call { method, pad } | BodyPick::Call2 { method, pad } => {
                let method = METHODS[usize::from(*method) % METHODS.len()];
                (call(index, method, usize::from(*pad) % 128), method)
            }
            BodyPick::Notification { pad: n } => (
                format!(
                    r#"{{"jsonrpc":"2.0","method":"notifications/fuzz","params":{{"pad":"{}",{META}}}}}"#,
                    pad(usize::from(*n))
                )
                .into_bytes(),
                "notifications/fuzz",
            ),
            BodyPick::Smuggled { method, chunked } => {
                let method = METHODS[usize::from(*method) % METHODS.len()];
                (inner_request(1000 + index, method, *chunked), "ping")
            }
            BodyPick::Raw(bytes) => (bytes.clone(), "ping"),
            BodyPick::Empty => (Vec::new(), "ping"),
        };
        let method_text = match &self.method {
            MethodPick::Post | MethodPick::Post2 | MethodPick::Post3 => "POST",
            MethodPick::Get => "GET",
            MethodPick::Head => "HEAD",
            MethodPick::Put => "PUT",
            MethodPick::Options => "OPTIONS",
            MethodPick::Connect => "CONNECT",
            MethodPick::Other(text) => text.as_str(),
        };
        let target = match &self.target {
            TargetPick::Endpoint | TargetPick::Endpoint2 => "/mcp",
            TargetPick::Query => "/mcp?x=1",
            TargetPick::Root => "/",
            TargetPick::Absolute => "http://127.0.0.1/mcp",
            TargetPick::Asterisk => "*",
            TargetPick::Other(text) => text.as_str(),
        };
        let version = match &self.version {
            VersionPick::Http11 | VersionPick::Http11b => "HTTP/1.1",
            VersionPick::Http10 => "HTTP/1.0",
            VersionPick::Other(text) => text.as_str(),
        };
        let _ = write!(Line(out), "{method_text} {target} {version}\r\n");
        let usual: [(&str, &str); 6] = [
            ("Host", "127.0.0.1"),
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("MCP-Protocol-Version", VERSION),
            ("Mcp-Method", method),
            ("Mcp-Name", "echo"),
        ];
        // `omit` 1 to 5 leaves that one out; `Mcp-Name` (a test of `tools/call`'s rules
        // is `http_request`'s) is sent only when `omit` is 6.
        for (i, (name, value)) in usual.iter().enumerate() {
            let omitted = usize::from(self.omit) == i + 1 || (i == 5 && self.omit != 6);
            if !omitted {
                let _ = write!(Line(out), "{name}: {value}\r\n");
            }
        }
        let (encoded, decoded_len) = self.encode(&body);
        for field in self.fields.iter().take(12) {
            match field {
                Field::Known(name, pick) => {
                    let values = name.values();
                    let value = values[usize::from(*pick) % values.len()]
                        .replace("{len}", &encoded.len().to_string())
                        .replace("{method}", method);
                    let _ = write!(Line(out), "{}: {value}\r\n", name.text());
                }
                Field::KnownRaw(name, value) => {
                    out.extend_from_slice(name.text().as_bytes());
                    out.extend_from_slice(b": ");
                    out.extend_from_slice(value);
                    out.extend_from_slice(b"\r\n");
                }
                Field::Pad(n) => {
                    let _ = write!(Line(out), "X-Pad: {}\r\n", pad(usize::from(*n) % 600));
                }
                Field::Raw(name, value) => {
                    out.extend_from_slice(name.as_bytes());
                    out.extend_from_slice(b": ");
                    out.extend_from_slice(value);
                    out.extend_from_slice(b"\r\n");
                }
                Field::Line(line) => {
                    out.extend_from_slice(line);
                    out.extend_from_slice(b"\r\n");
                }
            }
        }
        let length = encoded.len();
        let coding = |c: &Chunking| {
            let values = Header::TransferEncoding.values();
            values[usize::from(c.coding) % values.len()]
        };
        match &self.framing {
            Framing::Length | Framing::Length2 => {
                let _ = write!(Line(out), "Content-Length: {length}\r\n");
            }
            Framing::Absent => {}
            Framing::Chunked(c) => {
                let _ = write!(Line(out), "Transfer-Encoding: {}\r\n", coding(c));
            }
            Framing::Both(length_first, c) => {
                let te = format!("Transfer-Encoding: {}\r\n", coding(c));
                let cl = format!("Content-Length: {decoded_len}\r\n");
                let (a, b) = if *length_first { (cl, te) } else { (te, cl) };
                out.extend_from_slice(a.as_bytes());
                out.extend_from_slice(b.as_bytes());
            }
            Framing::Off(delta) => {
                let n = length.saturating_add_signed(isize::from(*delta));
                let _ = write!(Line(out), "Content-Length: {n}\r\n");
            }
            Framing::Twice => {
                let _ = write!(
                    Line(out),
                    "Content-Length: {length}\r\nContent-Length: {length}\r\n"
                );
            }
            Framing::Differ => {
                let _ = write!(
                    Line(out),
                    "Content-Length: {length}\r\nContent-Length: {}\r\n",
                    length + 1
                );
            }
        }
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(&encoded);
    }

    /// The body as sent (chunked when the framing says so) and the length it decodes to.
    fn encode(&self, body: &[u8]) -> (Vec<u8>, usize) {
        let (Framing::Chunked(c) | Framing::Both(_, c)) = &self.framing else {
            return (body.to_vec(), body.len());
        };
        let mut out = Vec::new();
        let eol: &[u8] = if c.bare_lf { b"\n" } else { b"\r\n" };
        let extension: Vec<u8> = match &c.extension {
            None => Vec::new(),
            Some(Extension::Named) => b";name".to_vec(),
            Some(Extension::Valued) => b";a=b".to_vec(),
            Some(Extension::Quoted) => b";a=\"q;\\\" x\"".to_vec(),
            Some(Extension::Spaced) => b" ; a = b".to_vec(),
            Some(Extension::Raw(raw)) => raw.clone(),
        };
        let size_line = |out: &mut Vec<u8>, n: usize| {
            if c.zeros {
                out.extend_from_slice(b"00");
            }
            let digits = if c.upper {
                format!("{n:X}")
            } else {
                format!("{n:x}")
            };
            out.extend_from_slice(digits.as_bytes());
            out.extend_from_slice(&extension);
            out.extend_from_slice(eol);
        };
        let mut rest = body;
        let mut sizes = c.sizes.iter().take(16);
        while !rest.is_empty() {
            let n = match sizes.next() {
                Some(&n) if n > 0 => usize::from(n).min(rest.len()),
                _ => rest.len(),
            };
            size_line(&mut out, n);
            out.extend_from_slice(&rest[..n]);
            out.extend_from_slice(b"\r\n");
            rest = &rest[n..];
        }
        size_line(&mut out, 0);
        match &c.trailer {
            None => {}
            Some(Trailer::Field) => out.extend_from_slice(b"X-Checksum: 1\r\n"),
            Some(Trailer::Raw(raw)) => {
                out.extend_from_slice(raw);
                out.extend_from_slice(b"\r\n");
            }
        }
        out.extend_from_slice(b"\r\n");
        (out, body.len())
    }
}

/// `write!` into a byte buffer.
struct Line<'a>(&'a mut Vec<u8>);

impl std::fmt::Write for Line<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

impl Input {
    fn bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for (index, item) in self.items.iter().take(8).enumerate() {
            match item {
                Item::Request(req) => req.render(index as u64 + 1, &mut out),
                Item::Raw(raw) => out.extend_from_slice(raw),
            }
        }
        out
    }
}

// ---------------------------------------------------------------------------------------
// The strict parser.

/// How a request's body arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Arrival {
    Whole,
    /// The input ended first.
    Cut,
    /// Its chunked framing is broken.
    Broken,
    /// Its data arrived whole, but where its trailer section ends is read two ways: a
    /// bare LF in it ends a line for a reader that takes LF alone as a line end (RFC 9112
    /// §2.2 allows that), and not for one that looks for CRLF.
    Unclear,
}

/// A request the strict parser found.
#[derive(Debug)]
struct Message {
    method: String,
    target: String,
    /// The head's size with the usual spacing (method, target, each field's name and
    /// value, one space after each colon, CRLF line ends; the final CRLF not counted).
    head: usize,
    /// The head's size as it came, the final CRLF included.
    wire: usize,
    /// Its framing headers are invalid: no server may serve it.
    refused: bool,
    /// Where it ends is read two ways: it is framed by both `Content-Length` and
    /// `Transfer-Encoding` (RFC 9112 §6.1), or its trailer section has a bare LF. A server
    /// may refuse it, or serve it by one reading and then close the connection.
    unclear: bool,
    /// The body as decoded (what arrived of it).
    body: Vec<u8>,
    arrival: Arrival,
}

impl Message {
    /// One line for a failure's report.
    fn summary(&self) -> String {
        format!(
            "{} {} head {} ({} as sent){}{} {:?} body {:?}",
            self.method,
            self.target,
            self.head,
            self.wire,
            if self.refused { " refused" } else { "" },
            if self.unclear { " unclear" } else { "" },
            self.arrival,
            String::from_utf8_lossy(&self.body)
        )
    }

    /// Whether its head is over the limit however it is spaced: with the usual spacing,
    /// and as it came (`max_head_bytes` is exact for the first, "give or take the
    /// spacing", and holds for both).
    fn over_limit(&self) -> bool {
        self.head > MAX_HEAD && self.wire > MAX_HEAD + 2
    }

    /// Whether a server may serve it and the requests after it.
    fn whole(&self) -> bool {
        !self.refused && !self.unclear && self.arrival == Arrival::Whole
    }
}

/// Every request in `bytes`, up to the first one that is refused or incomplete; and
/// whether the bytes end with a head that is incomplete or malformed.
fn strict(bytes: &[u8]) -> (Vec<Message>, bool) {
    let mut messages = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let mut fields = [httparse::EMPTY_HEADER; 256];
        let mut request = httparse::Request::new(&mut fields);
        let len = match request.parse(&bytes[at..]) {
            Ok(httparse::Status::Complete(len)) => len,
            Ok(httparse::Status::Partial) | Err(_) => return (messages, true),
        };
        let method = request.method.unwrap_or_default().to_owned();
        let target = request.path.unwrap_or_default().to_owned();
        let head = method.len()
            + target.len()
            + 12
            + request
                .headers
                .iter()
                .map(|f| f.name.len() + f.value.len() + 4)
                .sum::<usize>();
        let mut codings = Vec::new();
        let mut lengths = Vec::new();
        for field in request.headers.iter() {
            if field.name.eq_ignore_ascii_case("transfer-encoding") {
                codings.push(field.value);
            } else if field.name.eq_ignore_ascii_case("content-length") {
                lengths.push(field.value);
            }
        }
        let rest = &bytes[at + len..];
        let mut message = Message {
            method,
            target,
            head,
            wire: len,
            refused: false,
            unclear: false,
            body: Vec::new(),
            arrival: Arrival::Whole,
        };
        let consumed = if !codings.is_empty() {
            // RFC 9112 §6.1: the final coding (the last of the last field's list) must be
            // `chunked`, and it alone frames the body; HTTP/1.0 has none. Codings before
            // it, known or not, move no boundary.
            let chunked = request.version == Some(1)
                && codings.last().is_some_and(|v| {
                    let text = std::str::from_utf8(v).unwrap_or_default();
                    text.rsplit(',')
                        .next()
                        .is_some_and(|c| c.trim().eq_ignore_ascii_case("chunked"))
                });
            message.unclear = !lengths.is_empty();
            if chunked {
                let (body, arrival, used) = dechunk(rest);
                message.body = body;
                if arrival == Arrival::Unclear {
                    message.unclear = true;
                    message.arrival = Arrival::Whole;
                } else {
                    message.arrival = arrival;
                }
                used
            } else {
                message.refused = true;
                0
            }
        } else if !lengths.is_empty() {
            let parsed: Vec<Option<u64>> = lengths.iter().map(|v| digits(v)).collect();
            match parsed.first() {
                Some(Some(n)) if parsed.iter().all(|p| p == &Some(*n)) => {
                    let n = usize::try_from(*n).unwrap_or(usize::MAX);
                    if rest.len() < n {
                        message.body = rest.to_vec();
                        message.arrival = Arrival::Cut;
                        rest.len()
                    } else {
                        message.body = rest[..n].to_vec();
                        n
                    }
                }
                _ => {
                    message.refused = true;
                    0
                }
            }
        } else {
            0
        };
        let whole = message.whole();
        messages.push(message);
        if !whole {
            return (messages, false);
        }
        at += len + consumed;
    }
    (messages, false)
}

/// A `Content-Length` value: one or more digits that fit.
fn digits(value: &[u8]) -> Option<u64> {
    if value.is_empty() || !value.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(value).ok()?.parse().ok()
}

/// Decodes a chunked body (RFC 9112 §7.1): the data, how it ended, and the bytes it took.
/// Whitespace after the size and any extension bytes but CR and LF are taken, as hyper
/// takes them: they move no boundary. A bare CR or LF would, for some reader, so it is
/// an error; in the trailer section, after the data, it makes the end unclear.
fn dechunk(bytes: &[u8]) -> (Vec<u8>, Arrival, usize) {
    let mut body = Vec::new();
    let mut at = 0;
    let end = bytes.len();
    // The CRLF at `at`: Ok(true) when there, Ok(false) when the input ends first.
    let crlf = |at: usize| -> Result<bool, ()> {
        match (bytes.get(at), bytes.get(at + 1)) {
            (None, _) | (Some(b'\r'), None) => Ok(false),
            (Some(b'\r'), Some(b'\n')) => Ok(true),
            _ => Err(()),
        }
    };
    loop {
        let start = at;
        let mut size: u64 = 0;
        while let Some(digit) = bytes.get(at).and_then(|&b| (b as char).to_digit(16)) {
            let Some(next) = size
                .checked_mul(16)
                .and_then(|s| s.checked_add(u64::from(digit)))
            else {
                return (body, Arrival::Broken, at);
            };
            size = next;
            at += 1;
        }
        if at == end {
            return (body, Arrival::Cut, at);
        }
        if at == start {
            return (body, Arrival::Broken, at);
        }
        while matches!(bytes.get(at), Some(b' ' | b'\t')) {
            at += 1;
        }
        if bytes.get(at) == Some(&b';') {
            while let Some(&b) = bytes.get(at) {
                if b == b'\r' {
                    break;
                }
                if b == b'\n' {
                    return (body, Arrival::Broken, at);
                }
                at += 1;
            }
        }
        match crlf(at) {
            Ok(true) => at += 2,
            Ok(false) => return (body, Arrival::Cut, end),
            Err(()) => return (body, Arrival::Broken, at),
        }
        if size == 0 {
            // The trailer section: field lines, each ending in CRLF, then an empty line.
            loop {
                let line = at;
                while let Some(&b) = bytes.get(at) {
                    if b == b'\r' {
                        break;
                    }
                    if b == b'\n' {
                        return (body, Arrival::Unclear, at);
                    }
                    at += 1;
                }
                match crlf(at) {
                    Ok(true) => at += 2,
                    Ok(false) => return (body, Arrival::Cut, end),
                    Err(()) => return (body, Arrival::Broken, at),
                }
                if at - line == 2 {
                    return (body, Arrival::Whole, at);
                }
            }
        }
        let size = usize::try_from(size).unwrap_or(usize::MAX);
        if end - at < size {
            body.extend_from_slice(&bytes[at..]);
            return (body, Arrival::Cut, end);
        }
        body.extend_from_slice(&bytes[at..at + size]);
        at += size;
        match crlf(at) {
            Ok(true) => at += 2,
            Ok(false) => return (body, Arrival::Cut, end),
            Err(()) => return (body, Arrival::Broken, at),
        }
    }
}

/// The ids a body's JSON-RPC message may be answered with: the request's, or the id the
/// decoder read from a message it refused.
fn ids(body: &[u8]) -> Vec<RequestId> {
    let mut out = Vec::new();
    match mcp_jsonrpc::decode(body, DecodeOptions::default()) {
        Ok(Decoded::Single(Rpc::Request(request))) => out.push(request.id),
        Err(e) => out.extend(e.id),
        Ok(_) => {}
    }
    out
}

fn is_notification(body: &[u8]) -> bool {
    matches!(
        mcp_jsonrpc::decode(body, DecodeOptions::default()),
        Ok(Decoded::Single(Rpc::Notification(_)))
    )
}

// ---------------------------------------------------------------------------------------
// The server's output.

/// A response the server wrote.
#[derive(Debug)]
struct Reply {
    status: u16,
    content_type: Option<String>,
    body: Vec<u8>,
    /// The output ended before its body did.
    cut: bool,
}

/// The final responses in `out`; `head_only(i)` says whether the i-th answers a `HEAD`.
fn replies(out: &[u8], head_only: impl Fn(usize) -> bool) -> Result<Vec<Reply>, String> {
    let mut replies = Vec::new();
    let mut at = 0;
    while at < out.len() {
        let mut fields = [httparse::EMPTY_HEADER; 64];
        let mut response = httparse::Response::new(&mut fields);
        let len = match response.parse(&out[at..]) {
            Ok(httparse::Status::Complete(len)) => len,
            Ok(httparse::Status::Partial) => {
                return Err(format!("a response head cut short at byte {at}"));
            }
            Err(e) => return Err(format!("not a response at byte {at}: {e}")),
        };
        let status = response.code.unwrap_or_default();
        let mut length = None;
        let mut chunked = false;
        let mut content_type = None;
        for field in response.headers.iter() {
            if field.name.eq_ignore_ascii_case("content-length") {
                let n = digits(field.value).ok_or("a malformed Content-Length")?;
                if length.is_some_and(|l| l != n) {
                    return Err("two Content-Length values".into());
                }
                length = Some(n);
            } else if field.name.eq_ignore_ascii_case("transfer-encoding") {
                if !field.value.eq_ignore_ascii_case(b"chunked") {
                    return Err("a transfer coding other than chunked".into());
                }
                chunked = true;
            } else if field.name.eq_ignore_ascii_case("content-type") {
                content_type = Some(String::from_utf8_lossy(field.value).into_owned());
            }
        }
        if chunked && length.is_some() {
            return Err("a response framed both by length and by chunks".into());
        }
        at += len;
        if (100..200).contains(&status) {
            continue;
        }
        let rest = &out[at..];
        let (body, cut, used) = if status == 204 || status == 304 || head_only(replies.len()) {
            (Vec::new(), false, 0)
        } else if chunked {
            match dechunk(rest) {
                (body, Arrival::Whole, used) => (body, false, used),
                (body, Arrival::Cut, used) => (body, true, used),
                (_, Arrival::Broken | Arrival::Unclear, used) => {
                    return Err(format!("a broken chunked body at byte {}", at + used));
                }
            }
        } else if let Some(n) = length {
            let n = usize::try_from(n).unwrap_or(usize::MAX);
            if rest.len() < n {
                (rest.to_vec(), true, rest.len())
            } else {
                (rest[..n].to_vec(), false, n)
            }
        } else {
            (rest.to_vec(), false, rest.len())
        };
        at += used;
        if cut && at < out.len() {
            return Err("bytes after a response cut short".into());
        }
        replies.push(Reply {
            status,
            content_type,
            body,
            cut,
        });
    }
    Ok(replies)
}

/// The ids of the JSON-RPC responses in a reply body (JSON, or the `data` of SSE events).
fn reply_ids(reply: &Reply) -> Vec<Value> {
    let media = reply.content_type.as_deref().unwrap_or_default();
    let texts: Vec<&[u8]> = if media.starts_with("text/event-stream") {
        reply
            .body
            .split(|&b| b == b'\n')
            .filter_map(|line| {
                line.strip_prefix(b"data: ")
                    .or_else(|| line.strip_prefix(b"data:"))
            })
            .collect()
    } else if media.starts_with("application/json") {
        vec![&reply.body[..]]
    } else {
        Vec::new()
    };
    texts
        .into_iter()
        .filter_map(|text| serde_json::from_slice::<Value>(text).ok())
        .filter(|v| v.get("result").is_some() || v.get("error").is_some())
        .filter_map(|v| v.get("id").cloned())
        .filter(|id| !id.is_null())
        .collect()
}

// ---------------------------------------------------------------------------------------
// The server under test.

/// A request the endpoint was called with.
#[derive(Default)]
struct Call {
    method: String,
    uri: String,
    /// The body bytes the endpoint drew.
    body: Vec<u8>,
    /// The body reached its end without an error.
    ended: bool,
}

impl std::fmt::Debug for Call {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} body {:?}{}",
            self.method,
            self.uri,
            String::from_utf8_lossy(&self.body),
            if self.ended { " (ended)" } else { "" }
        )
    }
}

/// What the endpoint and the handler saw, for the input being run.
#[derive(Debug, Default)]
struct Log {
    calls: Vec<Call>,
    /// Each message the handler got: the call it came in (the latest), and its id (none
    /// for a notification).
    handled: Vec<(Option<usize>, Option<RequestId>)>,
}

fn log() -> MutexGuard<'static, Log> {
    static LOG: Mutex<Log> = Mutex::new(Log {
        calls: Vec::new(),
        handled: Vec::new(),
    });
    LOG.lock().unwrap_or_else(PoisonError::into_inner)
}

fn handled(id: Option<RequestId>) {
    let mut log = log();
    let call = log.calls.len().checked_sub(1);
    log.handled.push((call, id));
}

/// Answers any request with `{}`; `fuzz/stream` notifies first (an SSE reply) and
/// `fuzz/slow` waits a millisecond first.
struct Echo;

impl Handler for Echo {
    async fn request(
        &self,
        request: mcp_jsonrpc::Request,
        cx: RequestContext,
    ) -> Result<Box<RawValue>, ErrorObject> {
        handled(Some(request.id.clone()));
        match request.method.as_str() {
            "fuzz/stream" => {
                let _ = cx
                    .notify(
                        "notifications/message",
                        Some(&serde_json::json!({"level": "info", "data": "x"})),
                    )
                    .await;
            }
            "fuzz/slow" => tokio::time::sleep(Duration::from_millis(1)).await,
            _ => {}
        }
        Ok(RawValue::from_string("{}".to_owned()).expect("JSON"))
    }
}

/// The endpoint: the `McpService`, with each call and the body bytes it draws recorded.
#[derive(Clone)]
struct Recorder(McpService<Echo>);

impl Endpoint for Recorder {
    type Body = McpBody;
    type Future = ResponseFuture;

    fn call(&self, request: Request<RequestBody>) -> ResponseFuture {
        let call = {
            let mut log = log();
            log.calls.push(Call {
                method: request.method().as_str().to_owned(),
                uri: request.uri().to_string(),
                ..Call::default()
            });
            log.calls.len() - 1
        };
        self.0.handle(request.map(|body| Recorded { body, call }))
    }

    fn cancel_all(&self) {
        self.0.cancel_all();
    }
}

/// A request body whose bytes are recorded as the endpoint draws them.
struct Recorded {
    body: RequestBody,
    call: usize,
}

impl Body for Recorded {
    type Data = Bytes;
    type Error = RequestBodyError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, RequestBodyError>>> {
        let call = self.call;
        let polled = Pin::new(&mut self.body).poll_frame(cx);
        let mut log = log();
        let record = &mut log.calls[call];
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    record.body.extend_from_slice(data);
                }
            }
            Poll::Ready(None) => record.ended = true,
            Poll::Ready(Some(Err(_))) | Poll::Pending => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

struct Server {
    runtime: Runtime,
    service: McpService<Echo>,
    connections: Connections<Recorder>,
}

fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .expect("a runtime");
        let config = HttpServerConfig::default()
            .max_head_bytes(MAX_HEAD)
            .max_body_bytes(MAX_BODY)
            .max_headers(MAX_FIELDS)
            .header_read_timeout(TIMEOUT)
            .body_read_timeout(TIMEOUT)
            .write_timeout(TIMEOUT)
            .keep_alive_interval(None)
            .on_notification(|_| {
                handled(None);
                Ok(())
            });
        let service = McpService::new(Echo, config.clone()).expect("a valid configuration");
        let connections = Connections::new(Recorder(service.clone()), &config).expect("valid");
        Server {
            runtime,
            service,
            connections,
        }
    })
}

/// The pause after a read: mostly a millisecond, sometimes long enough for a timeout.
fn pause_after(pick: u8) -> Duration {
    if pick >= 251 {
        LONG_PAUSE
    } else {
        Duration::from_millis(1)
    }
}

/// Sends `bytes` in `reads` (size, pause after it), then the rest, closing the write half
/// unless `keep_open`; returns everything the server wrote, or `None` if the connection
/// was still open `HANG` after the last byte.
async fn exchange(
    connections: &Connections<Recorder>,
    bytes: &[u8],
    reads: &[(u16, u8)],
    keep_open: bool,
) -> Option<Vec<u8>> {
    let (client, server) = tokio::io::duplex(64 << 10);
    let serving = connections.serve(server);
    let (mut reader, mut writer) = tokio::io::split(client);
    let writing = async {
        'send: {
            let mut rest = bytes;
            for &(size, pause) in reads.iter().take(32) {
                if rest.is_empty() {
                    break;
                }
                let n = (usize::from(size) % 512 + 1).min(rest.len());
                if writer.write_all(&rest[..n]).await.is_err() {
                    break 'send;
                }
                rest = &rest[n..];
                // Everything the server can do with these bytes it does before this
                // sleep ends: the clock moves only when every task waits.
                tokio::time::sleep(pause_after(pause)).await;
            }
            if !rest.is_empty() && writer.write_all(rest).await.is_err() {
                break 'send;
            }
            if !keep_open {
                let _ = writer.shutdown().await;
            }
        }
        // The write half stays open (when asked) until the server closes; the reader
        // ends the exchange.
        std::future::pending::<()>().await;
    };
    let reading = async {
        let mut out = Vec::new();
        let _ = reader.read_to_end(&mut out).await;
        out
    };
    let both = async {
        let (out, ()) = tokio::join!(
            async {
                tokio::select! {
                    out = reading => out,
                    () = writing => unreachable!("the writer never ends"),
                }
            },
            serving
        );
        out
    };
    let bound = HANG + reads.iter().take(32).map(|&(_, p)| pause_after(p)).sum();
    tokio::time::timeout(bound, both).await.ok()
}

// ---------------------------------------------------------------------------------------
// The checks.

/// One input: see the module docs.
pub fn run(data: &[u8]) {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    if flags & 16 != 0 {
        // Raw: the bytes as they are, for seeds and regressions written by hand.
        let Some((&count, rest)) = rest.split_first() else {
            return;
        };
        let count = usize::from(count & 31).min(rest.len() / 3);
        let (plan, bytes) = rest.split_at(count * 3);
        let reads: Vec<(u16, u8)> = plan
            .chunks_exact(3)
            .map(|r| (u16::from_le_bytes([r[0], r[1]]), r[2]))
            .collect();
        if !bytes.is_empty() {
            check(bytes, &reads, flags);
        }
        return;
    }
    let Ok(input) = Input::arbitrary_take_rest(Unstructured::new(data)) else {
        return;
    };
    let bytes = input.bytes();
    if !bytes.is_empty() {
        check(&bytes, &input.reads, input.flags);
    }
}

/// Serves `bytes` on one connection and checks every property of the module docs.
fn check(bytes: &[u8], reads: &[(u16, u8)], flags: u8) {
    let keep_open = flags & 8 != 0;
    let server = server();
    *log() = Log::default();
    let out = server.runtime.block_on(async {
        let out = exchange(&server.connections, bytes, reads, keep_open).await;
        // What the connection started ends with it.
        for _ in 0..10 {
            if server.service.in_flight() == 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        out
    });
    let Some(out) = out else {
        panic!("the connection was still open {HANG:?} after the input ended");
    };
    assert_eq!(
        server.service.in_flight(),
        0,
        "a request was left in flight"
    );
    let log = std::mem::take(&mut *log());
    let (messages, bad_tail) = strict(bytes);
    let show = || {
        format!(
            "input: {:?}\noutput: {:?}\nstrict parser: {:#?} (then a bad head: {bad_tail})\nendpoint and handler: {log:#?}",
            String::from_utf8_lossy(bytes),
            String::from_utf8_lossy(&out),
            messages.iter().map(Message::summary).collect::<Vec<_>>()
        )
    };
    let head_only = |i: usize| messages.get(i).is_some_and(|m| m.method == "HEAD");
    let replies = match replies(&out, head_only) {
        Ok(replies) => replies,
        Err(why) => panic!(
            "the output is not a sequence of responses ({why}): {}",
            show()
        ),
    };

    // No request gets two responses.
    let allowed = messages.len() + usize::from(bad_tail);
    assert!(
        replies.len() <= allowed,
        "{} responses to {} requests (then a bad head: {bad_tail}): {}",
        replies.len(),
        messages.len(),
        show()
    );
    for (i, reply) in replies.iter().enumerate() {
        let status = reply.status;
        let Some(message) = messages.get(i) else {
            // The answer to a head the strict parser could not read.
            assert!(
                status >= 400,
                "response {i} ({status}) to a bad head: {}",
                show()
            );
            continue;
        };
        if message.refused || message.arrival != Arrival::Whole {
            assert!(
                status >= 400,
                "response {i} ({status}) to a refused or incomplete request: {}",
                show()
            );
        }
        let uri = message.target.parse::<Uri>().ok();
        let on_path = uri.as_ref().is_some_and(|u| u.path() == PATH);
        if (200..300).contains(&status) {
            assert!(
                message.method == "POST"
                    && on_path
                    && !message.over_limit()
                    && message.body.len() <= MAX_BODY,
                "response {i} ({status}) to a request the endpoint must refuse: {}",
                show()
            );
        }
        if status == 202 {
            assert!(
                is_notification(&message.body),
                "response {i} (202) to a request that is not a notification: {}",
                show()
            );
        }
        if status == 405 {
            assert!(
                message.method != "POST",
                "response {i} (405) to a POST: {}",
                show()
            );
        }
        if status == 404 {
            assert!(
                !on_path,
                "response {i} (404) to the endpoint's path: {}",
                show()
            );
        }
        if !reply.cut {
            let expected: Vec<Value> = ids(&message.body)
                .into_iter()
                .filter_map(|id| serde_json::to_value(id).ok())
                .collect();
            for id in reply_ids(reply) {
                assert!(
                    expected.contains(&id),
                    "response {i} answers id {id}, not its request's: {}",
                    show()
                );
            }
        }
    }

    // The endpoint sees the strict parser's requests, in order, with their bodies.
    for (k, call) in log.calls.iter().enumerate() {
        let Some(message) = messages.get(k) else {
            panic!(
                "call {k} of the endpoint, with no request there: {}",
                show()
            );
        };
        assert!(
            !message.refused,
            "call {k} for a refused request: {}",
            show()
        );
        assert!(
            message.method == call.method
                && message
                    .target
                    .parse::<Uri>()
                    .is_ok_and(|u| u.to_string() == call.uri),
            "call {k} ({} {}) is not the request there: {}",
            call.method,
            call.uri,
            show()
        );
        assert!(
            !message.over_limit(),
            "call {k}: a head of {} bytes ({} as sent) reached the endpoint: {}",
            message.head,
            message.wire,
            show()
        );
        assert!(
            message.body.starts_with(&call.body),
            "call {k} drew body bytes that are not its request's: {}",
            show()
        );
        if call.ended {
            assert!(
                message.arrival == Arrival::Whole && call.body == message.body,
                "call {k}'s body ended where its request's does not: {}",
                show()
            );
        }
    }
    for (call, id) in &log.handled {
        let message = call.and_then(|k| messages.get(k));
        let Some(message) = message else {
            panic!(
                "the handler ran outside any call ({call:?}, {id:?}): {}",
                show()
            );
        };
        assert!(
            message.arrival == Arrival::Whole && !message.refused,
            "the handler ran for a request whose body did not arrive whole: {}",
            show()
        );
        assert!(
            message.body.len() <= MAX_BODY,
            "a body of {} bytes reached the handler: {}",
            message.body.len(),
            show()
        );
        match id {
            Some(id) => assert!(
                ids(&message.body).contains(id),
                "the handler got id {id:?}, not its request's: {}",
                show()
            ),
            None => assert!(
                is_notification(&message.body),
                "the notification hook ran for a request that is not one: {}",
                show()
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Arrival, dechunk, strict};

    #[test]
    fn the_strict_parser_frames_by_chunks_length_or_nothing() {
        let (messages, bad) = strict(
            b"POST /a HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi\
              POST /b HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2;x=y\r\nhi\r\n0\r\nT: 1\r\n\r\n\
              GET /c HTTP/1.1\r\n\r\nGARBAGE\r\n\r\n",
        );
        assert!(bad);
        assert_eq!(messages.len(), 3);
        assert!(messages.iter().all(super::Message::whole));
        assert_eq!(messages[1].body, b"hi");
        assert!(messages[2].body.is_empty());
    }

    #[test]
    fn both_framings_and_bad_lengths_end_the_parse() {
        let (messages, bad) = strict(
            b"POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET / HTTP/1.1\r\n\r\n",
        );
        assert!(!bad);
        assert_eq!(messages.len(), 1);
        assert!(messages[0].unclear);
        let (messages, _) = strict(b"POST / HTTP/1.1\r\nContent-Length: 1, 1\r\n\r\nx");
        assert!(messages[0].refused);
        let (messages, _) =
            strict(b"POST / HTTP/1.1\r\nContent-Length: 1\r\ncontent-length: 1\r\n\r\nx");
        assert!(messages[0].whole());
    }

    #[test]
    fn a_bare_line_feed_breaks_chunks() {
        assert_eq!(dechunk(b"0\r\nX: a\n\r\n\r\n").1, Arrival::Unclear);
        assert_eq!(dechunk(b"1\nx\r\n0\r\n\r\n").1, Arrival::Broken);
        assert_eq!(dechunk(b"1 ;a\r\nx\r\n0\r\n\r\n").1, Arrival::Whole);
        assert_eq!(dechunk(b"1\r\nx\r\n0\r\n").1, Arrival::Cut);
    }
}
