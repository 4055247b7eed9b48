//! The server decides a request from its head, on hyper's server connection, on a real
//! socket:
//!
//! - a head refused for its path, `Host`, `Origin`, `Content-Type`, method, length, a full
//!   concurrency slot or missing credentials is answered at once, without the body it
//!   promises (4 MiB that never come, against a 30 s body read timeout), and its connection
//!   is then closed;
//! - a body the endpoint asks for is read after the head and served, the connection kept;
//! - `Host` and `Origin` are parsed strictly, and a target in absolute form is judged by
//!   its own authority (RFC 9112 §3.2.2);
//! - the header read timeout runs once per head, from its first byte: a head that
//!   trickles in field by field is cut off when it runs out, and one that ends inside it
//!   is served.

mod support;

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Response, StatusCode};
use mcp_jsonrpc::Principal;
use mcp_transport_http::{
    AuthenticateFuture, Authenticator, HttpServer, HttpServerConfig, RunningServer,
};
use serde_json::json;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use support::{TestHandler, request_body, standard_headers};

/// The body length every refused head promises: `max_body_bytes`' default.
const PROMISED: usize = 4 << 20;
/// How long a refusal may take before the test fails: far below the 30 s body read
/// timeout that an answer after waiting for the body would take.
const ANSWER_WITHIN: Duration = Duration::from_secs(5);

/// Accepts `X-Api-Key: let-me-in`; anything else gets `401`.
struct ApiKey;

#[derive(Debug)]
struct Tester;

impl Principal for Tester {
    fn id(&self) -> &'static str {
        "tester"
    }
}

impl Authenticator for ApiKey {
    fn authenticate<'a>(&'a self, headers: &'a HeaderMap) -> AuthenticateFuture<'a> {
        let known = headers.get("x-api-key").is_some_and(|k| k == "let-me-in");
        Box::pin(async move {
            if known {
                Ok(Arc::new(Tester) as Arc<dyn Principal>)
            } else {
                let mut refusal = Response::new(Bytes::new());
                *refusal.status_mut() = StatusCode::UNAUTHORIZED;
                Err(refusal)
            }
        })
    }
}

async fn start(config: HttpServerConfig) -> (RunningServer, support::Log) {
    let (server, log, _gate) = support::serve(config).await;
    (server, log)
}

/// A request head, built field by field.
struct Head {
    target: String,
    method: &'static str,
    fields: Vec<(String, String)>,
}

impl Head {
    /// A `tools/list` POST to `/mcp` with the standard fields, `Host` and a
    /// `Content-Length` of [`PROMISED`].
    fn new(server: &RunningServer) -> Self {
        let mut fields = vec![("host".to_owned(), server.local_addr().to_string())];
        for (name, value) in standard_headers("tools/list") {
            fields.push((name, String::from_utf8(value).unwrap()));
        }
        fields.push(("content-length".to_owned(), PROMISED.to_string()));
        Head {
            target: "/mcp".to_owned(),
            method: "POST",
            fields,
        }
    }

    /// Replaces every `name` field with one of `value`.
    fn set(mut self, name: &str, value: &str) -> Self {
        self.fields.retain(|(n, _)| n != name);
        self.fields.push((name.to_owned(), value.to_owned()));
        self
    }

    fn target(mut self, target: &str) -> Self {
        target.clone_into(&mut self.target);
        self
    }

    fn method(mut self, method: &'static str) -> Self {
        self.method = method;
        self
    }

    fn bytes(&self) -> Vec<u8> {
        let mut out = format!("{} {} HTTP/1.1\r\n", self.method, self.target);
        for (name, value) in &self.fields {
            let _ = write!(out, "{name}: {value}\r\n");
        }
        out.push_str("\r\n");
        out.into_bytes()
    }
}

/// Sends `head` and nothing more, and reads until the server closes the connection; fails
/// if that takes longer than [`ANSWER_WITHIN`].
async fn answer_without_body(server: &RunningServer, head: &Head) -> String {
    let mut stream = TcpStream::connect(server.local_addr()).await.unwrap();
    stream.write_all(&head.bytes()).await.unwrap();
    let mut reply = Vec::new();
    tokio::time::timeout(ANSWER_WITHIN, stream.read_to_end(&mut reply))
        .await
        .expect("no answer and close before the body came: the server waited for it")
        .unwrap();
    String::from_utf8_lossy(&reply).into_owned()
}

fn status_of(reply: &str) -> &str {
    reply.get(9..12).unwrap_or(reply)
}

#[tokio::test]
async fn an_unauthenticated_head_is_refused_before_its_body() {
    let config = HttpServerConfig::default().authenticator(ApiKey);
    let (server, _log) = start(config).await;
    let reply = answer_without_body(&server, &Head::new(&server)).await;
    assert_eq!(status_of(&reply), "401", "{reply}");
    server.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn each_check_of_the_head_is_answered_before_the_body() {
    let (server, _log) = start(HttpServerConfig::default()).await;
    let cases = [
        (
            "foreign origin",
            Head::new(&server).set("origin", "https://evil.example"),
            "403",
        ),
        (
            "foreign host",
            Head::new(&server).set("host", "evil.example"),
            "403",
        ),
        (
            "content type",
            Head::new(&server).set("content-type", "text/plain"),
            "415",
        ),
        ("path", Head::new(&server).target("/other"), "404"),
        ("method", Head::new(&server).method("PUT"), "405"),
        (
            "length over the limit",
            Head::new(&server).set("content-length", &(PROMISED + 1).to_string()),
            "413",
        ),
    ];
    for (what, head, status) in cases {
        let reply = answer_without_body(&server, &head).await;
        assert_eq!(status_of(&reply), status, "{what}: {reply}");
    }
    server.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_full_concurrency_slot_is_answered_before_the_body() {
    let (handler, mut log, gate) = TestHandler::new();
    let config = HttpServerConfig::default().max_concurrent_requests(1);
    let server = HttpServer::bind(HttpServer::DEFAULT_ADDR, handler, config)
        .await
        .unwrap();
    // The one slot, held by a request that waits on the gate.
    let body = request_body(1, "test/block", json!({}));
    let mut holder = TcpStream::connect(server.local_addr()).await.unwrap();
    let mut bytes = Head::new(&server)
        .set("mcp-method", "test/block")
        .set("content-length", &body.len().to_string())
        .bytes();
    bytes.extend_from_slice(&body);
    holder.write_all(&bytes).await.unwrap();
    assert_eq!(support::next_log(&mut log).await, "started test/block");

    let reply = answer_without_body(&server, &Head::new(&server)).await;
    assert_eq!(status_of(&reply), "503", "{reply}");
    assert!(
        reply.to_ascii_lowercase().contains("\r\nretry-after: "),
        "{reply}"
    );
    gate.add_permits(1);
    let mut first = [0u8; 12];
    holder.read_exact(&mut first).await.unwrap();
    assert_eq!(&first, b"HTTP/1.1 200");
    server.shutdown(Duration::from_secs(5)).await;
}

/// A body sent after its head, once the checks passed, is read and served, and the
/// connection stays open; with credentials, the same.
#[tokio::test]
async fn a_body_that_follows_its_head_is_served_and_the_connection_kept() {
    let config = HttpServerConfig::default().authenticator(ApiKey);
    let (server, _log) = start(config).await;
    let mut stream = TcpStream::connect(server.local_addr()).await.unwrap();
    for id in 1..=2 {
        let body = request_body(id, "tools/list", json!({"n": id}));
        let head = Head::new(&server)
            .set("x-api-key", "let-me-in")
            .set("content-length", &body.len().to_string());
        stream.write_all(&head.bytes()).await.unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        let (first, rest) = body.split_at(body.len() / 2);
        stream.write_all(first).await.unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        stream.write_all(rest).await.unwrap();
        let reply = read_response(&mut stream).await;
        assert!(reply.starts_with("HTTP/1.1 200 OK\r\n"), "{reply}");
        assert!(reply.contains(&format!("\"n\":{id}")), "{reply}");
    }
    server.shutdown(Duration::from_secs(5)).await;
}

/// Reads one response whose body has a `Content-Length`.
async fn read_response(stream: &mut TcpStream) -> String {
    let mut bytes = Vec::new();
    let mut byte = [0u8; 1];
    while !bytes.ends_with(b"\r\n\r\n") {
        let n = tokio::time::timeout(ANSWER_WITHIN, stream.read(&mut byte))
            .await
            .expect("no response")
            .unwrap();
        assert_eq!(n, 1, "the connection closed within a head");
        bytes.push(byte[0]);
    }
    let head = String::from_utf8(bytes).unwrap();
    let length: usize = head
        .to_ascii_lowercase()
        .lines()
        .find_map(|line| line.strip_prefix("content-length: ").map(str::to_owned))
        .expect("a content-length")
        .parse()
        .unwrap();
    let mut body = vec![0; length];
    stream.read_exact(&mut body).await.unwrap();
    head + &String::from_utf8(body).unwrap()
}

/// The status of one whole `tools/list` request sent with `head`'s fields.
async fn status_for(server: &RunningServer, head: Head) -> String {
    let body = request_body(1, "tools/list", json!({}));
    let mut bytes = head
        .set("content-length", &body.len().to_string())
        .set("connection", "close")
        .bytes();
    bytes.extend_from_slice(&body);
    let mut stream = TcpStream::connect(server.local_addr()).await.unwrap();
    stream.write_all(&bytes).await.unwrap();
    let mut reply = Vec::new();
    tokio::time::timeout(ANSWER_WITHIN, stream.read_to_end(&mut reply))
        .await
        .expect("no answer")
        .unwrap();
    let reply = String::from_utf8_lossy(&reply).into_owned();
    status_of(&reply).to_owned()
}

#[tokio::test]
async fn host_and_origin_are_parsed_strictly() {
    let (server, _log) = start(HttpServerConfig::default()).await;
    let port = server.local_addr().port();
    let refused_hosts = [
        "[::1].evil.example".to_owned(),
        format!("[::1].evil.example:{port}"),
        "[::1]evil".to_owned(),
        format!("[::1]:{port}x"),
        format!("[::1]:{port}/mcp"),
        format!("user@127.0.0.1:{port}"),
        format!("127.0.0.1@evil.example:{port}"),
        format!("127.0.0.1:{port}:{port}"),
        format!("localhost.evil.example:{port}"),
        "localhost:".to_owned(),
    ];
    for host in &refused_hosts {
        let status = status_for(&server, Head::new(&server).set("host", host)).await;
        assert!(
            status == "403" || status == "400",
            "Host {host:?}: {status}"
        );
    }
    let refused_origins = [
        "http://[::1]evil",
        "http://[::1].evil.example",
        "http://[::1]/path",
        "http://localhost:3000/",
        "http://user@localhost",
        "http://localhost:3000x",
        "http://localhost:3000 trailing",
        "null",
    ];
    for origin in refused_origins {
        let status = status_for(&server, Head::new(&server).set("origin", origin)).await;
        assert_eq!(status, "403", "Origin {origin:?}");
    }
    for host in [
        format!("127.0.0.1:{port}"),
        format!("LOCALHOST:{port}"),
        format!("[::1]:{port}"),
        "localhost".to_owned(),
    ] {
        let status = status_for(&server, Head::new(&server).set("host", &host)).await;
        assert_eq!(status, "200", "Host {host:?}");
    }
    for origin in ["http://localhost:5173", "https://[::1]", "http://127.0.0.1"] {
        let status = status_for(&server, Head::new(&server).set("origin", origin)).await;
        assert_eq!(status, "200", "Origin {origin:?}");
    }
    server.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_target_in_absolute_form_is_judged_by_its_own_authority() {
    let (server, _log) = start(HttpServerConfig::default()).await;
    let addr = server.local_addr();
    // A foreign authority in the target, a loopback Host: refused.
    let foreign = Head::new(&server).target("http://evil.example/mcp");
    assert_eq!(status_for(&server, foreign).await, "403");
    let userinfo = Head::new(&server).target(&format!("http://user@{addr}/mcp"));
    assert_eq!(status_for(&server, userinfo).await, "403");
    // A loopback authority in the target decides, whatever Host says.
    let loopback = Head::new(&server)
        .target(&format!("http://{addr}/mcp"))
        .set("host", "evil.example");
    assert_eq!(status_for(&server, loopback).await, "200");
    let other_path = Head::new(&server).target(&format!("http://{addr}/other"));
    assert_eq!(status_for(&server, other_path).await, "404");
    server.shutdown(Duration::from_secs(5)).await;
}

/// The header read timeout of these tests: a head of [`FIELDS`] fields sent one every
/// 100 ms ends 100 ms inside it.
const HEAD_TIMEOUT: Duration = Duration::from_millis(4_100);
/// The fields of the trickled head, one every 100 ms.
const FIELDS: usize = 40;

/// Sends a slow head ([`trickle`]) to a server with the [`HEAD_TIMEOUT`] and gives what
/// the server sent and when it closed the connection, from the head's first byte (tokio's
/// paused clock).
async fn slow_head(finish: bool) -> (String, Duration) {
    let config = HttpServerConfig::default().header_read_timeout(HEAD_TIMEOUT);
    let (server, _log) = start(config).await;
    let stream = TcpStream::connect(server.local_addr()).await.unwrap();
    let (mut reader, mut writer) = stream.into_split();
    let started = tokio::time::Instant::now();
    let body = request_body(1, "tools/list", json!({}));
    let mut head = Head::new(&server)
        .set("content-length", &body.len().to_string())
        .set("connection", "close")
        .bytes();
    head.truncate(head.len() - 2);
    let writing = tokio::spawn(async move {
        let _ = trickle(&mut writer, &head, &body, finish).await;
        // Not closed: hyper drops a request whose client half-closed.
        std::future::pending::<()>().await;
    });
    let mut reply = Vec::new();
    let _ = reader.read_to_end(&mut reply).await;
    let closed = started.elapsed();
    writing.abort();
    server.shutdown(Duration::from_secs(5)).await;
    (String::from_utf8_lossy(&reply).into_owned(), closed)
}

/// Writes `head` (without its blank line) and [`FIELDS`] fields, one every 100 ms; then
/// the head's end and `body` when `finish`, else one more byte every 100 ms until the
/// server closes.
async fn trickle(
    writer: &mut tokio::net::tcp::OwnedWriteHalf,
    head: &[u8],
    body: &[u8],
    finish: bool,
) -> std::io::Result<()> {
    let pause = Duration::from_millis(100);
    writer.write_all(head).await?;
    for i in 0..FIELDS {
        tokio::time::sleep(pause).await;
        writer
            .write_all(format!("x-filler-{i}: 1\r\n").as_bytes())
            .await?;
    }
    if finish {
        writer.write_all(b"\r\n").await?;
        return writer.write_all(body).await;
    }
    writer.write_all(b"x-trickle: ").await?;
    loop {
        tokio::time::sleep(pause).await;
        writer.write_all(b"a").await?;
    }
}

#[tokio::test(start_paused = true)]
async fn a_slow_head_gets_one_header_timeout_in_all() {
    let (_, closed) = slow_head(false).await;
    assert!(
        closed <= HEAD_TIMEOUT + Duration::from_millis(100),
        "closed after {closed:?}, past the one header read timeout"
    );
    // And not before it: the head was still arriving.
    assert!(
        closed >= HEAD_TIMEOUT.saturating_sub(Duration::from_millis(100)),
        "closed after {closed:?}, inside the header read timeout"
    );
}

#[tokio::test(start_paused = true)]
async fn a_slow_head_that_ends_in_time_is_served() {
    // 40 fields at 100 ms: the head ends 4.0 s after it began, inside the timeout
    // that runs from its first read.
    let (reply, closed) = slow_head(true).await;
    assert!(
        reply.starts_with("HTTP/1.1 200 OK\r\n"),
        "closed after {closed:?}: {reply}"
    );
}
