//! The client's HTTP/1.1 (hyper's client connection, driven by the client's pool) against
//! scripted servers on 127.0.0.1: every way RFC 9112 frames a reply body (length, chunks,
//! the connection's end), 1xx replies, HTTP/1.0, which replies leave the connection
//! reusable, and the malformed and oversized heads that must fail the call rather than
//! hang it.

use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_jsonrpc::Message;
use mcp_transport_http::{Error, HttpClient, HttpClientConfig, RequestHeaders};
use mcp_types::RequestId;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

const RESULT: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"ok":true}}"#;

/// Reads one request (its head, then `Content-Length` bytes of body); `false` at the end of
/// the stream.
async fn read_request(socket: &mut TcpStream, pending: &mut Vec<u8>) -> bool {
    let mut buf = [0; 4096];
    loop {
        if let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&pending[..end]).to_ascii_lowercase();
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .map_or(0, |v| v.trim().parse().unwrap());
            if pending.len() >= end + 4 + length {
                pending.drain(..end + 4 + length);
                return true;
            }
        }
        let n = socket.read(&mut buf).await.unwrap_or(0);
        if n == 0 {
            return false;
        }
        pending.extend_from_slice(&buf[..n]);
    }
}

/// What a scripted server does with a connection after a reply.
#[derive(Clone, Copy, PartialEq)]
enum After {
    /// Reads the next request on it.
    Keep,
    /// Answers nothing more on it, but leaves it open until the client closes it: a client
    /// that sent another request on it would wait for ever.
    Hold,
    /// Closes it.
    Close,
}

/// A server that answers the requests it gets, on whatever connections, with `replies` in
/// order. Returns the URL and the count of connections accepted.
async fn scripted(replies: Vec<(String, After)>) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let accepted = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&accepted);
    let replies = Arc::new(std::sync::Mutex::new(replies.into_iter()));
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            counter.fetch_add(1, Ordering::SeqCst);
            let replies = Arc::clone(&replies);
            tokio::spawn(async move {
                let mut pending = Vec::new();
                while read_request(&mut socket, &mut pending).await {
                    let Some((reply, after)) = replies.lock().unwrap().next() else {
                        return;
                    };
                    socket.write_all(reply.as_bytes()).await.unwrap();
                    if after != After::Keep {
                        if after == After::Close {
                            let _ = socket.shutdown().await;
                        }
                        // Wait for the client to close, so the reply is not cut by a reset.
                        while socket.read(&mut [0; 64]).await.is_ok_and(|n| n > 0) {}
                        return;
                    }
                }
            });
        }
    });
    (url, accepted)
}

fn json_reply(extra: &str) -> String {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n{extra}Content-Length: {}\r\n\r\n{RESULT}",
        RESULT.len()
    )
}

/// `RESULT` in chunks of `size` bytes (each with an extension), then trailers.
fn chunked_reply(size: usize) -> String {
    let mut reply = String::from(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
    );
    for chunk in RESULT.as_bytes().chunks(size) {
        let _ = write!(reply, "{:X};name=value\r\n", chunk.len());
        reply.push_str(std::str::from_utf8(chunk).unwrap());
        reply.push_str("\r\n");
    }
    reply.push_str("0\r\nx-checksum: 1\r\n\r\n");
    reply
}

async fn call(client: &HttpClient) -> Result<Value, Error> {
    let frame =
        mcp_jsonrpc::encode_request(&RequestId::from(1), "test/x", Some(&json!({}))).unwrap();
    let mut stream = client
        .request(frame, RequestHeaders::new("2026-07-28", "test/x"))
        .await?;
    let mut last = None;
    while let Some(message) = stream.next().await {
        match message? {
            Message::Response(response) => {
                let result = response.outcome.expect("a result");
                last = Some(serde_json::from_str(result.get()).unwrap());
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    Ok(last.expect("a response"))
}

fn client(url: &str) -> HttpClient {
    HttpClient::new(url, HttpClientConfig::default()).unwrap()
}

/// Each framing delivers the whole body; the connection is reused after a body of known
/// length or chunks from a reply that keeps it, and replaced after one that does not.
#[tokio::test]
async fn bodies_in_every_framing_and_which_keep_the_connection() {
    let http10 = |extra: &str| {
        json_reply("")
            .replace("HTTP/1.1", "HTTP/1.0")
            .replace("Content-Type", &format!("{extra}Content-Type"))
    };
    let replies = vec![
        (json_reply(""), After::Keep),
        (chunked_reply(1), After::Keep),
        (chunked_reply(7), After::Keep),
        // A 1xx reply before the real one is skipped.
        (
            format!(
                "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 Processing\r\n\r\n{}",
                json_reply("")
            ),
            After::Keep,
        ),
        // HTTP/1.0 keeps the connection only when it says so.
        (http10("Connection: keep-alive\r\n"), After::Keep),
        // Connection 1 ends here, by `Connection: close` (the server holds it open).
        (json_reply("Connection: Keep-Alive, close\r\n"), After::Hold),
        // Connection 2: HTTP/1.0 without keep-alive.
        (http10(""), After::Hold),
        // Connection 3: a body until the connection's end.
        (
            format!("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{RESULT}"),
            After::Close,
        ),
        // Connection 4: a body with bytes after it (the connection is not reused).
        (format!("{}extra", json_reply("")), After::Hold),
        (json_reply(""), After::Keep),
    ];
    let (url, accepted) = scripted(replies).await;
    let client = client(&url);
    for n in 0..10 {
        let got = tokio::time::timeout(Duration::from_secs(5), call(&client))
            .await
            .unwrap_or_else(|_| panic!("reply {n}: the call hung"));
        assert_eq!(got.unwrap(), json!({"ok": true}), "reply {n}");
    }
    assert_eq!(accepted.load(Ordering::SeqCst), 5);
}

/// A reply framed both by `Transfer-Encoding` and by `Content-Length`, or with
/// `Transfer-Encoding` over HTTP/1.0, is how responses are smuggled (RFC 9112 §6.1, §6.3):
/// the call fails, and the connection it came on is never used again, although the server
/// keeps it open and would answer on it.
#[tokio::test]
async fn a_reply_framed_two_ways_fails_and_its_connection_is_not_reused() {
    let chunked_with_length = chunked_reply(7).replace(
        "Transfer-Encoding: chunked\r\n",
        &format!(
            "Transfer-Encoding: chunked\r\nContent-Length: {}\r\n",
            RESULT.len()
        ),
    );
    let http10_chunked = chunked_reply(7)
        .replace("HTTP/1.1", "HTTP/1.0")
        .replace("Content-Type", "Connection: keep-alive\r\nContent-Type");
    for (name, reply) in [
        (
            "Transfer-Encoding with Content-Length",
            &chunked_with_length,
        ),
        ("HTTP/1.0 with Transfer-Encoding", &http10_chunked),
    ] {
        let replies = vec![(reply.clone(), After::Keep), (json_reply(""), After::Keep)];
        let (url, accepted) = scripted(replies).await;
        let client = client(&url);
        let got = tokio::time::timeout(Duration::from_secs(5), call(&client))
            .await
            .unwrap_or_else(|_| panic!("{name}: the call hung"));
        let err = got.expect_err(name);
        assert!(
            matches!(err, Error::Send { connect: false, .. }),
            "{name}: {err:?}"
        );
        let got = tokio::time::timeout(Duration::from_secs(5), call(&client))
            .await
            .unwrap_or_else(|_| panic!("{name}: the second call hung"));
        assert_eq!(got.unwrap(), json!({"ok": true}), "{name}");
        assert_eq!(
            accepted.load(Ordering::SeqCst),
            2,
            "{name}: a connection reused"
        );
    }
}

/// What a broken reply's error must be.
type Check = fn(&Error) -> bool;

/// Replies that are not HTTP, or that break their own framing, fail the call with an error
/// that says so; none hangs.
#[tokio::test]
async fn broken_replies_fail_the_call() {
    let send = |e: &Error| matches!(e, Error::Send { connect: false, .. });
    let body = |e: &Error| matches!(e, Error::Body(_));
    // A readable head whose status is not an answer to a request that asked for no
    // upgrade: the status is the error, and the connection (handed over to the
    // protocol the server switched to) is never used again.
    let switched = |e: &Error| matches!(e, Error::Status { status, error: None } if *status == http::StatusCode::SWITCHING_PROTOCOLS);
    let chunked =
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
    // (what, the reply, whether the server then closes, the error expected)
    let cases: Vec<(&str, String, bool, Check)> = vec![
        ("not HTTP", "SSH-2.0-OpenSSH\r\n\r\n".into(), false, send),
        ("a bad status", "HTTP/1.1 20 OK\r\n\r\n".into(), false, send),
        (
            "two lengths",
            json_reply("Content-Length: 3\r\n"),
            false,
            send,
        ),
        (
            "a signed length",
            json_reply("").replace("Length: ", "Length: +"),
            false,
            send,
        ),
        (
            "a protocol switch",
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n".into(),
            false,
            switched,
        ),
        ("no reply", String::new(), true, send),
        (
            "a head cut short",
            "HTTP/1.1 200 OK\r\nContent-Type: appl".into(),
            true,
            send,
        ),
        (
            "a body cut short",
            json_reply("").replace(&format!("Length: {}", RESULT.len()), "Length: 500"),
            true,
            body,
        ),
        ("a bad chunk size", format!("{chunked}xyz\r\n"), false, body),
        (
            "chunks cut short",
            format!("{chunked}5\r\n{{\"jso"),
            true,
            body,
        ),
        (
            "a chunk without its CRLF",
            format!("{chunked}2\r\n{{}}XX"),
            false,
            body,
        ),
        // The chunked framing read strictly: a bare LF where CRLF must be, a trailer line
        // that is no field, are errors, never a line end or a field skipped (a reader
        // that took them would frame the body otherwise than one in front that does not).
        (
            "a bare LF after a chunk size",
            format!("{chunked}2\n{{}}\r\n0\r\n\r\n"),
            false,
            body,
        ),
        (
            "a bare LF after a chunk",
            format!("{chunked}2\r\n{{}}\n0\r\n\r\n"),
            false,
            body,
        ),
        (
            "a bare LF ending the trailers",
            format!("{chunked}2\r\n{{}}\r\n0\r\n\n"),
            true,
            body,
        ),
        (
            "a trailer line that is no field",
            format!("{chunked}2\r\n{{}}\r\n0\r\nx-checksum\r\n\r\n"),
            false,
            body,
        ),
        (
            "a trailer value with a control byte",
            format!("{chunked}2\r\n{{}}\r\n0\r\nx-checksum: \x01\r\n\r\n"),
            false,
            body,
        ),
    ];
    for (name, reply, close, check) in cases {
        let (url, _server) = scripted_once(reply, close).await;
        let client = client(&url);
        let got = tokio::time::timeout(Duration::from_secs(10), call(&client))
            .await
            .unwrap_or_else(|_| panic!("{name}: the call hung"));
        let err = got.expect_err(name);
        assert!(check(&err), "{name}: {err:?}");
    }
}

/// A reply head of 64 KiB (the status line, the fields and the blank line) is read, and
/// one a byte larger fails the call; so do 100 header fields, and 101. The size limit is
/// the one the client's pool sets on each connection: the build that weighs the pool
/// against hyper-util's (`--cfg mcp_without="client_pool"`) cannot set it, and checks the
/// field limit only.
#[tokio::test]
async fn a_head_at_the_size_and_field_limits_is_read_and_one_more_is_refused() {
    const MAX_HEAD: usize = 64 * 1024;
    let padded = |size: usize| {
        let bare = json_reply("X-Pad: \r\n");
        let head = bare.find("\r\n\r\n").unwrap() + 4;
        json_reply(&format!("X-Pad: {}\r\n", "a".repeat(size - head)))
    };
    // With `Content-Type` and `Content-Length`.
    let fields = |n: usize| json_reply(&"X-A: 1\r\n".repeat(n - 2));
    for (name, reply, read) in [
        ("a head at the size limit", padded(MAX_HEAD), true),
        ("a head one byte larger", padded(MAX_HEAD + 1), false),
        ("100 fields", fields(100), true),
        ("101 fields", fields(101), false),
    ]
    .into_iter()
    .filter(|(name, ..)| !(cfg!(mcp_without = "client_pool") && name.starts_with("a head")))
    {
        let (url, _server) = scripted_once(reply, false).await;
        let got = tokio::time::timeout(Duration::from_secs(10), call(&client(&url)))
            .await
            .unwrap_or_else(|_| panic!("{name}: the call hung"));
        if read {
            assert_eq!(got.unwrap(), json!({"ok": true}), "{name}");
        } else {
            let err = got.expect_err(name);
            assert!(
                matches!(err, Error::Send { connect: false, .. }),
                "{name}: {err:?}"
            );
        }
    }
}

/// Serves one connection: reads a request, writes `reply`, then closes the connection when
/// `close` is set (else waits for the client to close it).
async fn scripted_once(reply: String, close: bool) -> (String, tokio::task::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut pending = Vec::new();
        assert!(read_request(&mut socket, &mut pending).await);
        // The client may close first (a head too large is not read to its end).
        let _ = socket.write_all(reply.as_bytes()).await;
        if close {
            let _ = socket.shutdown().await;
        }
        let _ = socket.read(&mut [0; 64]).await;
    });
    (url, task)
}

/// A server that refuses a large request at its head, without reading the body, and
/// closes: the client reports the refusal or the failed send, and does not hang.
#[tokio::test]
async fn a_request_refused_before_its_body_was_read() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut buf = vec![0; 1024];
        let _ = socket.read(&mut buf).await;
        let body = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"too large"}}"#;
        let reply = format!(
            "HTTP/1.1 413 Payload Too Large\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        socket.write_all(reply.as_bytes()).await.unwrap();
        let _ = socket.shutdown().await;
        // Keep reading (and dropping) for a while, as servers that drain do.
        let deadline = tokio::time::Instant::now() + Duration::from_millis(500);
        while tokio::time::timeout_at(deadline, socket.read(&mut buf))
            .await
            .is_ok_and(|r| r.is_ok_and(|n| n > 0))
        {}
    });
    let client = client(&url);
    let text = "x".repeat(8 * 1024 * 1024);
    let frame =
        mcp_jsonrpc::encode_request(&RequestId::from(1), "test/x", Some(&json!({"text": text})))
            .unwrap();
    let got = tokio::time::timeout(
        Duration::from_secs(10),
        client.request(frame, RequestHeaders::new("2026-07-28", "test/x")),
    )
    .await
    .expect("the call hung");
    match got {
        Ok(mut stream) => {
            // The refusal was read: its JSON-RPC error is the reply.
            let message = stream.next().await.unwrap().unwrap();
            let Message::Response(response) = message else {
                panic!("{message:?}");
            };
            assert_eq!(response.outcome.unwrap_err().code.0, -32600);
        }
        Err(e) => assert!(
            matches!(e, Error::Send { connect: false, .. } | Error::Status { .. }),
            "{e:?}"
        ),
    }
}
