//! A minimal HTTP/1.1 client: one keep-alive connection, one exchange at a time.
//!
//! The driver shares the machine with the server it measures, so every microsecond it
//! spends on a call is taken from the server (on two cores, a driver as costly
//! per call as the server caps what any server can show). A general-purpose client pays
//! for what a load driver does not need: hyper's client runs each connection as a task of
//! its own, so a call is a hand-off to that task and back, and a request is a header map
//! built per call. Here the connection's owner writes the request (its head made once per
//! kind of call) with one `write` and reads the reply straight from the socket: the head
//! parsed with `httparse`, the body framed by `Content-Length`, by chunks, or by the end
//! of the connection (RFC 9112, section 6.3).
//!
//! Bounds: a reply head of at most [`MAX_HEAD`] bytes and a body of at most [`MAX_BODY`];
//! past either the call fails with what was wrong. A connection the server closes (or
//! says it will, `Connection: close`) is opened again for the next call.

use std::io::Write as _;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

/// The longest reply head accepted, in bytes.
pub const MAX_HEAD: usize = 64 * 1024;

/// The longest reply body accepted, in bytes.
pub const MAX_BODY: usize = 256 * 1024 * 1024;

/// How much room a read gets at least.
const READ_ROOM: usize = 16 * 1024;

/// The most reply headers read (more fail the call).
const MAX_HEADERS: usize = 48;

/// One keep-alive connection to a server.
pub struct Conn {
    address: String,
    stream: Option<TcpStream>,
    /// Bytes read and not yet consumed start at `pos`.
    input: Vec<u8>,
    pos: usize,
    /// The request being written.
    output: Vec<u8>,
    /// A chunked body, decoded.
    chunked: Vec<u8>,
}

/// A reply, borrowed from the connection's buffers until its next call.
#[derive(Debug)]
pub struct Reply<'a> {
    pub status: u16,
    /// The `Mcp-Session-Id` header, if any.
    pub session: Option<String>,
    /// Whether the body is an event stream (`text/event-stream`).
    pub sse: bool,
    pub body: &'a [u8],
}

/// How a reply's body is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    Empty,
    Length(usize),
    Chunked,
    UntilClose,
}

/// What the reply head says.
#[derive(Debug, PartialEq, Eq)]
struct Head {
    status: u16,
    /// The head's length, its blank line included.
    len: usize,
    framing: Framing,
    session: Option<String>,
    sse: bool,
    /// Whether the connection stays open after this reply.
    keep_alive: bool,
}

/// The head of a POST of a JSON body to `path`, up to and with the line before
/// `Content-Length` (which [`Conn::post`] adds): every header a call sends but its length.
pub fn request_head(path: &str, host: &str, headers: &[(&str, &str)]) -> Vec<u8> {
    let mut head = format!(
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
    );
    for (name, value) in headers {
        head.push_str(name);
        head.push_str(": ");
        head.push_str(value);
        head.push_str("\r\n");
    }
    head.into_bytes()
}

impl Conn {
    /// Opens a connection to `address` (`host:port`), with `TCP_NODELAY`.
    pub async fn connect(address: &str) -> Result<Conn, String> {
        let mut conn = Conn {
            address: address.to_owned(),
            stream: None,
            input: Vec::with_capacity(READ_ROOM),
            pos: 0,
            output: Vec::with_capacity(1024),
            chunked: Vec::new(),
        };
        conn.open().await?;
        Ok(conn)
    }

    async fn open(&mut self) -> Result<(), String> {
        let stream = TcpStream::connect(&self.address)
            .await
            .map_err(|e| format!("cannot connect to {}: {e}", self.address))?;
        let _ = stream.set_nodelay(true);
        self.stream = Some(stream);
        self.input.clear();
        self.pos = 0;
        Ok(())
    }

    /// POSTs `body` with `head` (from [`request_head`]) and reads the whole reply.
    pub async fn post(&mut self, head: &[u8], body: &[u8]) -> Result<Reply<'_>, String> {
        if self.stream.is_none() {
            self.open().await?;
        }
        // What the last reply left unread (a server sends nothing unasked; keep it anyway).
        self.input.drain(..self.pos);
        self.pos = 0;
        self.output.clear();
        self.output.extend_from_slice(head);
        let _ = write!(self.output, "Content-Length: {}\r\n\r\n", body.len());
        self.output.extend_from_slice(body);
        let stream = self.stream.as_mut().ok_or("no connection")?;
        if let Err(e) = stream.write_all(&self.output).await {
            self.stream = None;
            return Err(format!("cannot send the request: {e}"));
        }
        match self.read_reply().await {
            Ok((head, range)) => {
                if !head.keep_alive {
                    self.stream = None;
                }
                let body = if head.framing == Framing::Chunked {
                    &self.chunked[..]
                } else {
                    &self.input[range]
                };
                Ok(Reply {
                    status: head.status,
                    session: head.session,
                    sse: head.sse,
                    body,
                })
            }
            Err(e) => {
                self.stream = None;
                Err(e)
            }
        }
    }

    /// Reads one reply (skipping interim 1xx ones): its head, and where its body is in
    /// `input` (a chunked body is decoded into `chunked` instead, and the range is empty).
    async fn read_reply(&mut self) -> Result<(Head, std::ops::Range<usize>), String> {
        let head = loop {
            let head = loop {
                if let Some(head) = parse_head(&self.input[self.pos..])? {
                    break head;
                }
                if self.input.len() - self.pos > MAX_HEAD {
                    return Err(format!("a reply head longer than {MAX_HEAD} bytes"));
                }
                if self.fill().await? == 0 {
                    return Err("the server closed the connection before its reply".into());
                }
            };
            self.pos += head.len;
            if !(100..200).contains(&head.status) {
                break head;
            }
        };
        match head.framing {
            Framing::Empty => Ok((head, self.pos..self.pos)),
            Framing::Length(len) => {
                if len > MAX_BODY {
                    return Err(format!("a reply body of {len} bytes (at most {MAX_BODY})"));
                }
                while self.input.len() - self.pos < len {
                    if self.fill().await? == 0 {
                        return Err("the server closed the connection inside a reply".into());
                    }
                }
                let range = self.pos..self.pos + len;
                self.pos += len;
                Ok((head, range))
            }
            Framing::UntilClose => {
                while self.fill().await? != 0 {
                    if self.input.len() - self.pos > MAX_BODY {
                        return Err(format!("a reply body over {MAX_BODY} bytes"));
                    }
                }
                let range = self.pos..self.input.len();
                self.pos = self.input.len();
                let mut head = head;
                head.keep_alive = false;
                Ok((head, range))
            }
            Framing::Chunked => {
                self.chunked.clear();
                loop {
                    match decode_chunks(&self.input[self.pos..], &mut self.chunked)? {
                        Chunks::Done(used) => {
                            self.pos += used;
                            return Ok((head, 0..0));
                        }
                        Chunks::More(used) => self.pos += used,
                    }
                    if self.chunked.len() > MAX_BODY {
                        return Err(format!("a reply body over {MAX_BODY} bytes"));
                    }
                    if self.fill().await? == 0 {
                        return Err("the server closed the connection inside a reply".into());
                    }
                }
            }
        }
    }

    /// Reads what the socket has (at least one byte, or 0 at its end).
    async fn fill(&mut self) -> Result<usize, String> {
        if self.pos > 0 && self.pos == self.input.len() {
            self.input.clear();
            self.pos = 0;
        }
        self.input.reserve(READ_ROOM);
        let stream = self.stream.as_mut().ok_or("no connection")?;
        stream
            .read_buf(&mut self.input)
            .await
            .map_err(|e| format!("reading the reply: {e}"))
    }
}

/// Parses a reply head from the start of `input`, or `None` if it is not all there yet.
fn parse_head(input: &[u8]) -> Result<Option<Head>, String> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut headers);
    let len = match response.parse(input) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => return Err(format!("a malformed reply head: {e}")),
    };
    let status = response.code.ok_or("a reply head without a status")?;
    let mut keep_alive = response.version == Some(1);
    let mut length = None;
    let mut chunked = false;
    let mut session = None;
    let mut sse = false;
    for header in response.headers.iter() {
        let value = header.value;
        if header.name.eq_ignore_ascii_case("content-length") {
            let text = std::str::from_utf8(value).map_err(|_| "a non-ASCII Content-Length")?;
            let n: usize = text
                .trim()
                .parse()
                .map_err(|_| format!("a bad Content-Length {text:?}"))?;
            if length.is_some_and(|m| m != n) {
                return Err("two different Content-Length headers".into());
            }
            length = Some(n);
        } else if header.name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = value
                .rsplit(|&b| b == b',')
                .next()
                .is_some_and(|last| last.trim_ascii().eq_ignore_ascii_case(b"chunked"));
        } else if header.name.eq_ignore_ascii_case("content-type") {
            sse = value.trim_ascii_start().starts_with(b"text/event-stream");
        } else if header.name.eq_ignore_ascii_case("mcp-session-id") {
            session = Some(String::from_utf8_lossy(value).into_owned());
        } else if header.name.eq_ignore_ascii_case("connection") {
            for token in value.split(|&b| b == b',') {
                let token = token.trim_ascii();
                if token.eq_ignore_ascii_case(b"close") {
                    keep_alive = false;
                } else if token.eq_ignore_ascii_case(b"keep-alive") {
                    keep_alive = true;
                }
            }
        }
    }
    // RFC 9112, 6.3: no body for 1xx, 204 and 304; chunked wins over a length.
    let framing = if (100..200).contains(&status) || status == 204 || status == 304 {
        Framing::Empty
    } else if chunked {
        Framing::Chunked
    } else if let Some(n) = length {
        if n == 0 {
            Framing::Empty
        } else {
            Framing::Length(n)
        }
    } else {
        Framing::UntilClose
    };
    Ok(Some(Head {
        status,
        len,
        framing,
        session,
        sse,
        keep_alive,
    }))
}

/// How far [`decode_chunks`] got.
#[derive(Debug, PartialEq, Eq)]
enum Chunks {
    /// The last chunk and the trailers were read: this many bytes of input were used.
    Done(usize),
    /// This many bytes were used (whole chunks); the rest needs more input.
    More(usize),
}

/// Decodes the whole chunks at the start of `input` onto `out` (RFC 9112, section 7.1).
fn decode_chunks(input: &[u8], out: &mut Vec<u8>) -> Result<Chunks, String> {
    let mut at = 0;
    loop {
        let rest = &input[at..];
        let Some(line_end) = find_crlf(rest) else {
            if rest.len() > 1024 {
                return Err("a chunk size line longer than 1 KiB".into());
            }
            return Ok(Chunks::More(at));
        };
        let line = &rest[..line_end];
        let digits = line
            .split(|&b| b == b';')
            .next()
            .unwrap_or_default()
            .trim_ascii();
        let size = std::str::from_utf8(digits)
            .ok()
            .filter(|d| !d.is_empty() && d.len() <= 15)
            .and_then(|d| usize::from_str_radix(d, 16).ok())
            .ok_or_else(|| format!("a bad chunk size {:?}", String::from_utf8_lossy(line)))?;
        let data = line_end + 2;
        if size == 0 {
            // Trailer fields, then a blank line.
            let mut trailer = data;
            loop {
                let Some(end) = find_crlf(&rest[trailer..]) else {
                    return Ok(Chunks::More(at));
                };
                trailer += end + 2;
                if end == 0 {
                    return Ok(Chunks::Done(at + trailer));
                }
            }
        }
        if rest.len() < data + size + 2 {
            return Ok(Chunks::More(at));
        }
        if &rest[data + size..data + size + 2] != b"\r\n" {
            return Err("a chunk not followed by CRLF".into());
        }
        out.extend_from_slice(&rest[data..data + size]);
        at += data + size + 2;
    }
}

fn find_crlf(input: &[u8]) -> Option<usize> {
    input.windows(2).position(|w| w == b"\r\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::net::TcpListener;

    #[test]
    fn heads() {
        let input = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\nMcp-Session-Id: abc\r\n\r\nrest";
        let head = parse_head(input).unwrap().unwrap();
        assert_eq!(
            head,
            Head {
                status: 200,
                len: input.len() - 4,
                framing: Framing::Chunked,
                session: Some("abc".into()),
                sse: true,
                keep_alive: true,
            }
        );
        let head =
            parse_head(b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                .unwrap()
                .unwrap();
        assert_eq!(
            (head.framing, head.keep_alive, head.sse),
            (Framing::Empty, false, false)
        );
        let head = parse_head(b"HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\n")
            .unwrap()
            .unwrap();
        assert_eq!((head.framing, head.keep_alive), (Framing::Length(5), false));
        let head = parse_head(b"HTTP/1.1 200 OK\r\n\r\n").unwrap().unwrap();
        assert_eq!(head.framing, Framing::UntilClose);
        let head = parse_head(b"HTTP/1.1 204 No Content\r\nContent-Length: 9\r\n\r\n")
            .unwrap()
            .unwrap();
        assert_eq!(head.framing, Framing::Empty);
        assert_eq!(parse_head(b"HTTP/1.1 200 OK\r\nContent-Le").unwrap(), None);
        assert!(parse_head(b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n").is_err());
        assert!(
            parse_head(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n")
                .is_err()
        );
        assert!(parse_head(b"garbage\r\n\r\n").is_err());
    }

    #[test]
    fn chunks() {
        let mut out = Vec::new();
        let body = b"5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nTrailer: x\r\n\r\nnext";
        assert_eq!(
            decode_chunks(body, &mut out),
            Ok(Chunks::Done(body.len() - 4))
        );
        assert_eq!(out, b"hello, world");
        // Cut anywhere, the whole chunks before the cut are decoded and the rest waits.
        for cut in 0..body.len() - 4 {
            let mut out = Vec::new();
            let mut at = match decode_chunks(&body[..cut], &mut out).unwrap() {
                Chunks::More(used) => used,
                Chunks::Done(_) => panic!("done at {cut}"),
            };
            match decode_chunks(&body[at..], &mut out).unwrap() {
                Chunks::Done(used) => at += used,
                Chunks::More(_) => panic!("not done after {cut}"),
            }
            assert_eq!((out.as_slice(), at), (&b"hello, world"[..], body.len() - 4));
        }
        assert!(decode_chunks(b"zz\r\n", &mut out).is_err());
        assert!(decode_chunks(b"2\r\nabcd\r\n", &mut out).is_err());
        assert!(decode_chunks(&[b'1'; 2000], &mut out).is_err());
    }

    /// A server that answers each request with the next canned reply, after checking the
    /// request's head and body arrived whole.
    async fn serve(replies: Vec<&'static [u8]>) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap().to_string();
        tokio::spawn(async move {
            let mut replies = replies.into_iter();
            'connections: loop {
                let (mut socket, _) = listener.accept().await.unwrap();
                let mut input = Vec::new();
                loop {
                    // One request: the head, then Content-Length bytes.
                    let (end, len) = loop {
                        if let Some(end) = input.windows(4).position(|w| w == b"\r\n\r\n") {
                            let head = String::from_utf8_lossy(&input[..end]).to_ascii_lowercase();
                            let len: usize = head
                                .split("content-length: ")
                                .nth(1)
                                .and_then(|r| r.split("\r\n").next())
                                .and_then(|n| n.parse().ok())
                                .unwrap();
                            break (end + 4, len);
                        }
                        let mut chunk = [0; 4096];
                        let n = socket.read(&mut chunk).await.unwrap();
                        if n == 0 {
                            continue 'connections;
                        }
                        input.extend_from_slice(&chunk[..n]);
                    };
                    while input.len() < end + len {
                        let mut chunk = [0; 4096];
                        let n = socket.read(&mut chunk).await.unwrap();
                        input.extend_from_slice(&chunk[..n]);
                    }
                    assert!(input[end..end + len].starts_with(b"{"));
                    input.drain(..end + len);
                    let Some(reply) = replies.next() else { return };
                    // Written in two parts, so that the client must read more than once.
                    let (a, b) = reply.split_at(reply.len() / 2);
                    socket.write_all(a).await.unwrap();
                    tokio::task::yield_now().await;
                    socket.write_all(b).await.unwrap();
                    if reply.starts_with(b"HTTP/1.1 200 OK\r\nConnection: close") {
                        continue 'connections;
                    }
                }
            }
        });
        address
    }

    #[tokio::test]
    async fn exchanges() {
        let address = serve(vec![
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 7\r\nMcp-Session-Id: s1\r\n\r\n{\"a\":1}",
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n6\r\ndata: \r\n3\r\n{}\n\r\n0\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok",
            b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n",
        ])
        .await;
        let head = request_head("/mcp", &address, &[("Mcp-Method", "tools/call")]);
        let mut conn = Conn::connect(&address).await.unwrap();
        let reply = conn.post(&head, b"{\"id\":1}").await.unwrap();
        assert_eq!(
            (
                reply.status,
                reply.session.as_deref(),
                reply.sse,
                reply.body
            ),
            (200, Some("s1"), false, &b"{\"a\":1}"[..])
        );
        let reply = conn.post(&head, b"{\"id\":2}").await.unwrap();
        assert_eq!((reply.sse, reply.body), (true, &b"data: {}\n"[..]));
        let reply = conn.post(&head, b"{\"id\":3}").await.unwrap();
        assert_eq!(reply.body, b"ok");
        // The server closed that connection: the next call opens another.
        let reply = conn.post(&head, b"{\"id\":4}").await.unwrap();
        assert_eq!((reply.status, reply.body), (202, &b""[..]));
        // No more replies: the server drops the connection, and the call says so.
        assert!(conn.post(&head, b"{\"id\":5}").await.is_err());
    }
}
