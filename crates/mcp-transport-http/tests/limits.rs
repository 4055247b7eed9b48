//! The server's head and time limits at the limit and one past it (`docs/RELIABILITY.md`,
//! HTTP server): exactly `max_headers` header fields are served and one more gets `431`; a
//! head or a body that completes just inside its timeout is served (the tests past the
//! timeouts are in `http.rs`); a handler gets `event_buffer` notifications ahead of a
//! client that reads nothing, and the next one waits. The clock is tokio's paused one, so
//! the waits take no time.

mod support;

use std::time::Duration;

use http::Request;
use http_body_util::{BodyExt as _, Full};
use mcp_transport_http::{HttpServer, HttpServerConfig, McpService, RunningServer};
use serde_json::json;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use support::{TestHandler, assert_status, request_body, sse_events, standard_headers};

async fn start(config: HttpServerConfig) -> RunningServer {
    let (handler, _log, _gate) = TestHandler::new();
    HttpServer::bind(HttpServer::DEFAULT_ADDR, handler, config)
        .await
        .unwrap()
}

/// A `tools/list` request as raw bytes: its head with `fillers` extra header fields, then
/// its body. The head has `6 + fillers` fields.
fn request(server: &RunningServer, fillers: usize) -> (Vec<u8>, Vec<u8>) {
    let body = request_body(1, "tools/list", json!({}));
    let mut head = format!("POST /mcp HTTP/1.1\r\nhost: {}\r\n", server.local_addr()).into_bytes();
    for (name, value) in standard_headers("tools/list") {
        head.extend_from_slice(name.as_bytes());
        head.extend_from_slice(b": ");
        head.extend_from_slice(&value);
        head.extend_from_slice(b"\r\n");
    }
    for i in 0..fillers {
        head.extend_from_slice(format!("x-filler-{i}: 1\r\n").as_bytes());
    }
    head.extend_from_slice(format!("content-length: {}\r\n\r\n", body.len()).as_bytes());
    (head, body)
}

/// Sends `parts` with `pause` between them and reads the reply until the server closes.
async fn exchange(server: &RunningServer, parts: &[&[u8]], pause: Duration) -> String {
    let mut stream = TcpStream::connect(server.local_addr()).await.unwrap();
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(pause).await;
        }
        stream.write_all(part).await.unwrap();
    }
    let mut reply = Vec::new();
    let _ = stream.read_to_end(&mut reply).await;
    String::from_utf8_lossy(&reply).into_owned()
}

#[tokio::test(start_paused = true)]
async fn exactly_max_headers_fields_are_served_and_one_more_gets_431() {
    const FIELDS: usize = 20;
    let server = start(HttpServerConfig::default().max_headers(FIELDS)).await;
    let (head, body) = request(&server, FIELDS - 6);
    let at = exchange(&server, &[&head, &body], Duration::ZERO).await;
    assert_status(&at, "200 OK");
    let (head, body) = request(&server, FIELDS - 5);
    let past = exchange(&server, &[&head, &body], Duration::ZERO).await;
    assert_status(&past, "431 Request Header Fields Too Large");
    server.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(start_paused = true)]
async fn the_default_header_count_is_100() {
    let server = start(HttpServerConfig::default()).await;
    let (head, body) = request(&server, 100 - 6);
    let at = exchange(&server, &[&head, &body], Duration::ZERO).await;
    assert_status(&at, "200 OK");
    let (head, body) = request(&server, 100 - 5);
    let past = exchange(&server, &[&head, &body], Duration::ZERO).await;
    assert!(past.starts_with("HTTP/1.1 431 "), "{past}");
    server.shutdown(Duration::from_secs(5)).await;
}

/// A request split in two writes, the second sent just inside the read timeout of the
/// part it splits (its head, or its body), is served.
#[tokio::test(start_paused = true)]
async fn a_head_or_body_that_completes_inside_its_timeout_is_served() {
    let timeouts = [
        (
            "head",
            HttpServerConfig::default().header_read_timeout(Duration::from_secs(3)),
            Duration::from_millis(2_999),
        ),
        (
            "body",
            HttpServerConfig::default().body_read_timeout(Duration::from_secs(7)),
            Duration::from_millis(6_999),
        ),
    ];
    for (split, config, pause) in timeouts {
        let server = start(config).await;
        let (head, body) = request(&server, 0);
        let at = match split {
            "head" => head.len() / 2,
            _ => head.len() + body.len() / 2,
        };
        let whole = [head, body].concat();
        let (first, rest) = whole.split_at(at);
        let started = tokio::time::Instant::now();
        let reply = exchange(&server, &[first, rest], pause).await;
        assert_status(&reply, "200 OK");
        assert!(started.elapsed() >= pause, "{split}");
        server.shutdown(Duration::from_secs(5)).await;
    }
}

/// How many `sent` lines the handler has logged so far.
fn sent(log: &mut support::Log, total: &mut usize) -> usize {
    while let Ok(line) = log.try_recv() {
        assert!(line.starts_with("sent "), "{line}");
        *total += 1;
    }
    *total
}

#[tokio::test]
async fn a_handler_gets_event_buffer_notifications_ahead_of_its_client_and_then_waits() {
    const BUFFER: usize = 4;
    const COUNT: usize = 40;
    let (handler, mut log, _gate) = TestHandler::new();
    let service =
        McpService::new(handler, HttpServerConfig::default().event_buffer(BUFFER)).unwrap();
    let mut request = Request::post("/mcp").header("host", "localhost");
    for (k, v) in standard_headers("test/flood") {
        request = request.header(k, v);
    }
    let request = request
        .body(Full::new(bytes::Bytes::from(request_body(
            1,
            "test/flood",
            json!({"count": COUNT}),
        ))))
        .unwrap();
    let response = service.handle(request).await.unwrap();
    assert_eq!(response.headers()["content-type"], "text/event-stream");

    // The client has read nothing: the first notification opened the stream and the
    // buffer holds the rest; the handler's next `notify` waits (at the limit, and past it).
    let mut total = 0;
    tokio::task::yield_now().await;
    assert_eq!(sent(&mut log, &mut total), BUFFER);

    // Reading lets it go on, never more than the buffer ahead of the client.
    let mut body = response.into_body();
    let mut events = Vec::new();
    while let Some(frame) = body.frame().await {
        let data = frame.unwrap().into_data().unwrap();
        events.extend(sse_events(&data));
        let read = events.len();
        assert!(
            sent(&mut log, &mut total) <= read + BUFFER,
            "{total} sent with {read} read"
        );
    }
    assert_eq!(events.len(), COUNT + 1);
    assert_eq!(events[COUNT]["result"]["sent"], COUNT);
    assert_eq!(sent(&mut log, &mut total), COUNT);
}
