//! A raw HTTP/1.1 server on 127.0.0.1 that answers each connection's one request with
//! whatever bytes the test's script returns: a well-formed reply, or a hostile one (a wrong
//! status line, huge headers, a body that lies about its length, a stream that never ends).

use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

/// One request the server read.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    /// The request line (`POST /mcp HTTP/1.1`).
    pub(crate) line: String,
    /// The header fields, names in lowercase, in order.
    pub(crate) headers: Vec<(String, String)>,
    /// The body as JSON (`null` when it is not JSON).
    pub(crate) body: Value,
}

impl Seen {
    /// The value of header `name` (lowercase), if present.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// What the server writes back on one connection.
pub(crate) enum Reply {
    /// These bytes, then the connection closes.
    Close(Vec<u8>),
    /// These bytes, then the connection stays open, silent, until the client closes it.
    Hold(Vec<u8>),
    /// These bytes, then whatever the test sends on the channel as it sends it; the
    /// connection closes when the channel does (or when the client hangs up).
    Stream(Vec<u8>, mpsc::UnboundedReceiver<Vec<u8>>),
}

/// A reply with `status`, the extra `headers`, and `body` (with its `Content-Length`),
/// closing the connection after it.
/// A 200 JSON reply of `body` in the legacy session `s-1`.
pub(crate) fn session_json_reply(body: &serde_json::Value) -> Reply {
    let headers = [
        ("content-type", "application/json"),
        ("mcp-session-id", "s-1"),
    ];
    reply("200 OK", &headers, body.to_string().as_bytes())
}

pub(crate) fn reply(status: &str, headers: &[(&str, &str)], body: &[u8]) -> Reply {
    let mut head = format!("HTTP/1.1 {status}\r\nconnection: close\r\n");
    for (name, value) in headers {
        let _ = write!(head, "{name}: {value}\r\n");
    }
    let _ = write!(head, "content-length: {}\r\n\r\n", body.len());
    Reply::Close([head.as_bytes(), body].concat())
}

/// A `200` JSON reply.
pub(crate) fn json(body: &Value) -> Reply {
    reply(
        "200 OK",
        &[("content-type", "application/json")],
        body.to_string().as_bytes(),
    )
}

/// A `200` SSE reply carrying `events` (each a `data` payload) and ending after them, or
/// held open after them when `hold`.
pub(crate) fn sse(events: &[String], hold: bool) -> Reply {
    let mut bytes =
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n".to_vec();
    for event in events {
        bytes.extend_from_slice(format!("data: {event}\n\n").as_bytes());
    }
    if hold {
        Reply::Hold(bytes)
    } else {
        Reply::Close(bytes)
    }
}

/// Serves `script` on 127.0.0.1: each connection's request goes to it, and its reply goes
/// back. Returns the endpoint's URL and the requests as they are read.
pub(crate) async fn serve<F>(script: F) -> (String, mpsc::UnboundedReceiver<Seen>)
where
    F: FnMut(&Seen) -> Reply + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (tx, rx) = mpsc::unbounded_channel();
    let script = Arc::new(Mutex::new(script));
    tokio::spawn(async move {
        loop {
            let Ok((socket, _)) = listener.accept().await else {
                return;
            };
            let script = Arc::clone(&script);
            let tx = tx.clone();
            tokio::spawn(async move { connection(socket, &script, &tx).await });
        }
    });
    (url, rx)
}

async fn connection<F>(mut socket: TcpStream, script: &Mutex<F>, tx: &mpsc::UnboundedSender<Seen>)
where
    F: FnMut(&Seen) -> Reply,
{
    let Some(seen) = read_request(&mut socket).await else {
        return;
    };
    let reply = (script.lock().unwrap())(&seen);
    let _ = tx.send(seen);
    match reply {
        Reply::Close(bytes) => {
            let _ = socket.write_all(&bytes).await;
            let _ = socket.shutdown().await;
        }
        Reply::Hold(bytes) => {
            let _ = socket.write_all(&bytes).await;
            let _ = socket.flush().await;
            // Silent until the client hangs up.
            let mut sink = [0u8; 1024];
            while matches!(socket.read(&mut sink).await, Ok(n) if n > 0) {}
        }
        Reply::Stream(bytes, mut more) => {
            let mut sink = [0u8; 1024];
            let mut next = Some(bytes);
            while let Some(bytes) = next {
                if socket.write_all(&bytes).await.is_err() || socket.flush().await.is_err() {
                    return;
                }
                next = tokio::select! {
                    bytes = more.recv() => bytes,
                    // The client hung up (or sent more than this server reads).
                    _ = socket.read(&mut sink) => return,
                };
            }
            let _ = socket.shutdown().await;
        }
    }
}

/// Reads one request: its head, then as many body bytes as `Content-Length` says.
async fn read_request(socket: &mut TcpStream) -> Option<Seen> {
    let mut buf = Vec::new();
    let mut chunk = vec![0u8; 16 << 10];
    let head_end = loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
        let n = socket.read(&mut chunk).await.ok().filter(|n| *n > 0)?;
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let line = lines.next().unwrap_or_default().to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + 4 + length {
        let n = socket.read(&mut chunk).await.ok().filter(|n| *n > 0)?;
        buf.extend_from_slice(&chunk[..n]);
    }
    let body =
        serde_json::from_slice(&buf[head_end + 4..head_end + 4 + length]).unwrap_or_default();
    Some(Seen {
        line,
        headers,
        body,
    })
}
