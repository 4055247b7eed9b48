//! The server's limit of open connections (`HttpServerConfig::max_connections`, listed in
//! `docs/RELIABILITY.md`): at the limit every connection is served at once; past it a new
//! client waits in the kernel's listen backlog, unserved, and is served as soon as one of
//! the open connections closes. Ordering comes from the handler's log and gate; the only
//! timed waits are the ones that show a connection past the limit gets no answer, each
//! followed by what must happen instead: that connection answered once a slot frees.

mod support;

use std::time::Duration;

use http::{Request, StatusCode};
use http_body_util::BodyExt as _;
use hyper_util::rt::TokioIo;
use mcp_transport_http::{HttpServer, HttpServerConfig, RunningServer};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tokio::sync::mpsc::error::TryRecvError;

use support::{TestHandler, assert_status, next_log, request_body, standard_headers};

/// The bound on every wait that should succeed, so a failure fails instead of hanging.
const NET: Duration = Duration::from_secs(10);

/// A `test/block` request, as raw HTTP/1.1 bytes.
fn raw_block_request(server: &RunningServer) -> Vec<u8> {
    let body = request_body(7, "test/block", json!({}));
    let mut request =
        format!("POST /mcp HTTP/1.1\r\nhost: {}\r\n", server.local_addr()).into_bytes();
    for (name, value) in standard_headers("test/block") {
        request.extend_from_slice(name.as_bytes());
        request.extend_from_slice(b": ");
        request.extend_from_slice(&value);
        request.extend_from_slice(b"\r\n");
    }
    request.extend_from_slice(format!("content-length: {}\r\n\r\n", body.len()).as_bytes());
    request.extend_from_slice(&body);
    request
}

/// One client connection with a `test/block` request in flight on it.
struct Held {
    response: tokio::task::JoinHandle<hyper::Result<http::Response<hyper::body::Incoming>>>,
    connection: tokio::task::JoinHandle<()>,
}

async fn hold(server: &RunningServer) -> Held {
    let stream = TcpStream::connect(server.local_addr()).await.unwrap();
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    let connection = tokio::spawn(async move {
        let _ = connection.await;
    });
    let mut request = Request::post("/mcp").header("host", server.local_addr().to_string());
    for (k, v) in standard_headers("test/block") {
        request = request.header(k, v);
    }
    let request = request
        .body(http_body_util::Full::new(bytes::Bytes::from(request_body(
            1,
            "test/block",
            json!({}),
        ))))
        .unwrap();
    let response = tokio::spawn(async move { sender.send_request(request).await });
    Held {
        response,
        connection,
    }
}

/// What `stream` receives until a `released` result is in it; `which` names the
/// connection in a failure.
async fn read_until_released(stream: &mut TcpStream, which: &str) -> String {
    let mut reply = Vec::new();
    let mut chunk = [0u8; 4096];
    while !String::from_utf8_lossy(&reply).contains("released") {
        let n = tokio::time::timeout(NET, stream.read(&mut chunk))
            .await
            .unwrap_or_else(|_| panic!("the {which} connection was not answered"))
            .unwrap();
        assert!(n > 0, "the {which} connection closed without an answer");
        reply.extend_from_slice(&chunk[..n]);
    }
    String::from_utf8_lossy(&reply).into_owned()
}

/// Lets the blocked request that `stream` sent through once the handler has started it
/// (as `log` says), and reads its answer; `which` names the connection in a failure.
async fn release_one(
    log: &mut support::Log,
    gate: &tokio::sync::Semaphore,
    stream: &mut TcpStream,
    which: &str,
) -> String {
    assert_eq!(next_log(log).await, "started test/block");
    gate.add_permits(1);
    read_until_released(stream, which).await
}

#[tokio::test]
async fn connections_past_the_limit_wait_until_one_closes() {
    past_the_limit(HttpServerConfig::default()).await;
}

#[tokio::test]
async fn the_limit_holds_with_connection_threads() {
    // Each connection's permit travels with it to its thread and is given back there.
    past_the_limit(HttpServerConfig::default().connection_threads(2)).await;
}

async fn past_the_limit(config: HttpServerConfig) {
    const LIMIT: usize = 3;
    let config = config.max_connections(LIMIT);
    let (handler, mut log, gate) = TestHandler::new();
    let server = HttpServer::bind(HttpServer::DEFAULT_ADDR, handler, config)
        .await
        .unwrap();

    // At the limit: LIMIT connections, each with a request inside the handler at once.
    let mut held = Vec::new();
    for _ in 0..LIMIT {
        held.push(hold(&server).await);
        assert_eq!(next_log(&mut log).await, "started test/block");
    }

    // Past it: the kernel completes the TCP handshake (the listen backlog), but the server
    // does not accept the connection, so its request is neither read nor answered.
    let mut waiting = TcpStream::connect(server.local_addr()).await.unwrap();
    waiting
        .write_all(&raw_block_request(&server))
        .await
        .unwrap();
    let mut first = [0u8; 1];
    let unanswered =
        tokio::time::timeout(Duration::from_millis(300), waiting.read(&mut first)).await;
    assert!(
        unanswered.is_err(),
        "the connection past the limit was answered"
    );
    assert!(matches!(log.try_recv(), Err(TryRecvError::Empty)));

    // One connection closes (its handler is cancelled): the waiting one is accepted and
    // its request reaches the handler.
    let closed = held.remove(0);
    closed.connection.abort();
    closed.response.abort();
    assert_eq!(next_log(&mut log).await, "started test/block");

    // Every request still open, the late one included, completes once released.
    gate.add_permits(LIMIT);
    for still in held {
        let response = tokio::time::timeout(NET, still.response)
            .await
            .expect("a held request was answered")
            .unwrap()
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let body = response.into_body().collect().await.unwrap().to_bytes();
        let body: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["result"]["released"], true);
    }
    let reply = read_until_released(&mut waiting, "late").await;
    assert_status(&reply, "200 OK");
    assert!(reply.contains(r#""id":7"#), "{reply}");
    server.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn idle_keep_alive_connections_count_against_the_limit() {
    // A connection holds its slot between requests too, until it closes.
    let config = HttpServerConfig::default().max_connections(1);
    let (handler, mut log, gate) = TestHandler::new();
    let server = HttpServer::bind(HttpServer::DEFAULT_ADDR, handler, config)
        .await
        .unwrap();
    let mut first = TcpStream::connect(server.local_addr()).await.unwrap();
    first.write_all(&raw_block_request(&server)).await.unwrap();
    release_one(&mut log, &gate, &mut first, "first").await;

    // The first connection is idle but open (keep-alive): the second waits.
    let mut second = TcpStream::connect(server.local_addr()).await.unwrap();
    second.write_all(&raw_block_request(&server)).await.unwrap();
    // Meanwhile the server serves the connection that holds the slot: the silence below
    // is the limit's doing, not a server that stopped answering.
    first.write_all(&raw_block_request(&server)).await.unwrap();
    release_one(&mut log, &gate, &mut first, "first").await;
    let mut chunk = [0u8; 4096];
    let unanswered =
        tokio::time::timeout(Duration::from_millis(300), second.read(&mut chunk)).await;
    assert!(unanswered.is_err(), "the second connection was answered");
    assert!(matches!(log.try_recv(), Err(TryRecvError::Empty)));

    // Once the first closes, the second is accepted and its request answered.
    drop(first);
    let reply = release_one(&mut log, &gate, &mut second, "second").await;
    assert_status(&reply, "200 OK");
    assert!(reply.contains(r#""id":7"#), "{reply}");
    server.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_connection_limit_of_zero_is_refused() {
    let (handler, _log, _gate) = TestHandler::new();
    let config = HttpServerConfig::default().max_connections(0);
    assert!(
        HttpServer::bind(HttpServer::DEFAULT_ADDR, handler, config)
            .await
            .is_err()
    );
}
