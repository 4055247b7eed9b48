//! The connection threads' idle poll (`HttpServerConfig::idle_poll`). A file of its own:
//! its test counts the process's open descriptors, which other tests running beside it
//! would change.

mod support;

use std::time::Duration;

use mcp_transport_http::{Error, HttpServer, HttpServerConfig, MAX_IDLE_POLL};
use serde_json::json;
use tokio::net::TcpStream;

use support::{TestHandler, request_body, standard_headers};

/// A server of the test handler on `config`.
async fn serve(config: HttpServerConfig) -> mcp_transport_http::RunningServer {
    let (handler, _log, _gate) = TestHandler::new();
    HttpServer::bind(HttpServer::DEFAULT_ADDR, handler, config)
        .await
        .unwrap()
}

/// A raw HTTP/1.1 POST of `echo` with id `id`, closing the connection after it when
/// `close`.
fn raw_echo(addr: std::net::SocketAddr, id: i64, close: bool) -> Vec<u8> {
    let body = request_body(id, "echo", json!({"n": id}));
    let mut request = format!("POST /mcp HTTP/1.1\r\nhost: {addr}\r\n").into_bytes();
    let length = body.len().to_string();
    let mut headers = standard_headers("echo");
    headers.push(("content-length".to_owned(), length.into_bytes()));
    if close {
        headers.push(("connection".to_owned(), b"close".to_vec()));
    }
    for (name, value) in headers {
        request.extend_from_slice(name.as_bytes());
        request.extend_from_slice(b": ");
        request.extend_from_slice(&value);
        request.extend_from_slice(b"\r\n");
    }
    request.extend_from_slice(b"\r\n");
    request.extend_from_slice(&body);
    request
}

/// Connections on a polling thread are all answered, and each one's socket closes when it
/// does: the poll watches sockets without holding them, and keeps one descriptor of its
/// own per thread, not one per connection.
#[tokio::test]
async fn connections_on_a_polling_thread_are_served_and_closed() {
    let config = HttpServerConfig::default()
        .connection_threads(1)
        .idle_poll(MAX_IDLE_POLL);
    let server = serve(config).await;
    let addr = server.local_addr();
    let descriptors = open_descriptors();
    // One after another, then two at once on the same thread.
    for _ in 0..3 {
        three_calls(addr).await;
    }
    tokio::join!(three_calls(addr), three_calls(addr));
    // Nothing of the connections stays open in the server: only the thread's poll.
    if let Some(before) = descriptors {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while open_descriptors().is_some_and(|now| now > before + 1) {
            assert!(
                std::time::Instant::now() < deadline,
                "{before} descriptors open before the connections, {:?} after",
                open_descriptors()
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// Three calls on one connection, one at a time, the last asking to close it; all are
/// answered, and the server's end of the connection closes.
async fn three_calls(addr: std::net::SocketAddr) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let mut stream = TcpStream::connect(addr).await.unwrap();
    let mut seen = Vec::new();
    for id in 1..=3 {
        stream
            .write_all(&raw_echo(addr, id, id == 3))
            .await
            .unwrap();
        if id < 3 {
            // Wait for this reply before the next request, as a client with one call
            // at a time does; the thread polls in between.
            let mut chunk = [0u8; 4096];
            loop {
                let n = stream.read(&mut chunk).await.unwrap();
                assert_ne!(n, 0, "closed early");
                seen.extend_from_slice(&chunk[..n]);
                if String::from_utf8_lossy(&seen).contains(&format!("\"id\":{id}")) {
                    break;
                }
            }
        }
    }
    // The third asked for the connection to close: the server's end reaches the client.
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut seen))
        .await
        .expect("the server closes the connection")
        .unwrap();
    let text = String::from_utf8_lossy(&seen);
    for id in 1..=3 {
        assert!(text.contains(&format!("\"id\":{id}")), "{text}");
    }
    assert_eq!(text.matches("HTTP/1.1 200").count(), 3, "{text}");
}

/// How many file descriptors this process has open, where `/proc` tells.
fn open_descriptors() -> Option<usize> {
    std::fs::read_dir("/proc/self/fd").ok().map(Iterator::count)
}

#[tokio::test]
async fn an_idle_poll_past_the_most_is_refused() {
    let (handler, _log, _gate) = TestHandler::new();
    let config = HttpServerConfig::default()
        .connection_threads(1)
        .idle_poll(MAX_IDLE_POLL + Duration::from_nanos(1));
    let refused = HttpServer::bind(HttpServer::DEFAULT_ADDR, handler, config).await;
    assert!(matches!(refused, Err(Error::Config(_))), "{refused:?}");
}
