//! The HTTP client end to end, against this crate's own server on 127.0.0.1 (and, for the
//! replies that server never sends, against canned bytes): headers, JSON and SSE replies,
//! error replies, size limits, cancellation by dropping, connection reuse and
//! notifications (<https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>). No test sleeps
//! but the one that waits out the pool's idle timeout: ordering comes from a gate the
//! handler waits on and from the handler's log.

mod support;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use http::HeaderValue;
use mcp_jsonrpc::{ErrorObject, Handler, Message, Request, RequestContext};
use mcp_transport_http::{
    Error, HttpClient, HttpClientConfig, HttpServer, HttpServerConfig, ParamHeader, Reply,
    RequestHeaders, ResponseStream, RunningServer,
};
use mcp_types::RequestId;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, mpsc};
use tokio::task::{JoinHandle, JoinSet};

use support::{Log, VERSION, meta, next_log};

/// The handler behind the server. Its methods:
///
/// - `test/headers`, `tools/call`, `resources/read`: the request's headers as an object;
/// - `test/notify`: two `notifications/message`, then `{"done": true}`;
/// - `test/gated`: one notification, then waits for a gate permit, then `{"released": true}`;
/// - `test/wait`: one notification, logs `started`, waits for its cancellation token (a
///   watcher task logs `cancelled`);
/// - `test/big`: a result with a string of `params.size` bytes;
/// - `test/bigevent`: a notification with a string of `params.size` bytes, then `{}`;
/// - anything else: -32601.
struct ClientTestHandler {
    log: mpsc::UnboundedSender<String>,
    gate: Arc<Semaphore>,
}

fn raw(value: &Value) -> Box<RawValue> {
    RawValue::from_string(value.to_string()).unwrap()
}

fn size(request: &Request) -> usize {
    let params: Value = serde_json::from_str(request.params.as_ref().unwrap().text()).unwrap();
    usize::try_from(params["size"].as_u64().unwrap()).unwrap()
}

impl Handler for ClientTestHandler {
    async fn request(
        &self,
        request: Request,
        cx: RequestContext,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let fail = |e: mcp_jsonrpc::Error| ErrorObject::internal(e.to_string());
        match request.method.as_str() {
            "test/headers" | "tools/call" | "resources/read" => {
                let mut seen = serde_json::Map::new();
                for (name, value) in cx.transport_info().unwrap().headers() {
                    seen.insert(name.to_owned(), Value::String(value.to_owned()));
                }
                Ok(raw(&Value::Object(seen)))
            }
            "test/notify" => {
                for n in 1..=2 {
                    cx.notify("notifications/message", Some(&json!({"n": n})))
                        .await
                        .map_err(fail)?;
                }
                Ok(raw(&json!({"done": true})))
            }
            "test/gated" => {
                cx.notify("notifications/progress", Some(&json!({"progress": 1})))
                    .await
                    .map_err(fail)?;
                self.gate.acquire().await.unwrap().forget();
                Ok(raw(&json!({"released": true})))
            }
            "test/wait" => {
                cx.notify("notifications/message", Some(&json!({"n": 1})))
                    .await
                    .map_err(fail)?;
                // The watcher outlives this future, which the server drops when the client
                // goes away.
                let token = cx.cancellation().clone();
                let log = self.log.clone();
                tokio::spawn(async move {
                    token.cancelled().await;
                    let _ = log.send("cancelled test/wait".to_owned());
                });
                let _ = self.log.send("started test/wait".to_owned());
                cx.cancellation().cancelled().await;
                Ok(raw(&json!({"cancelled": true})))
            }
            "test/big" => Ok(raw(&json!({"text": "x".repeat(size(&request))}))),
            "test/bigevent" => {
                cx.notify(
                    "notifications/message",
                    Some(&json!({"text": "x".repeat(size(&request))})),
                )
                .await
                .map_err(fail)?;
                Ok(raw(&json!({})))
            }
            other => Err(ErrorObject::method_not_found(other)),
        }
    }
}

/// A running server with its handler's log and gate.
struct Fixture {
    server: RunningServer,
    log: Log,
    gate: Arc<Semaphore>,
}

async fn start() -> Fixture {
    let (log_tx, log) = mpsc::unbounded_channel();
    let gate = Arc::new(Semaphore::new(0));
    let handler = ClientTestHandler {
        log: log_tx,
        gate: Arc::clone(&gate),
    };
    let declared: Arc<[ParamHeader]> = Arc::new([
        ParamHeader::new("Greeting", ["greeting"]).unwrap(),
        ParamHeader::new("Count", ["count"]).unwrap(),
    ]);
    let config = HttpServerConfig::default()
        .param_headers(move |tool: &str| (tool == "greet").then(|| Arc::clone(&declared)));
    let server = HttpServer::bind(HttpServer::DEFAULT_ADDR, handler, config)
        .await
        .unwrap();
    Fixture { server, log, gate }
}

fn connect(url: &str) -> HttpClient {
    HttpClient::new(url, HttpClientConfig::default()).unwrap()
}

/// An encoded request: `params` with the standard `_meta` added.
fn frame(id: i64, method: &str, mut params: Value) -> bytes::Bytes {
    params["_meta"] = meta();
    mcp_jsonrpc::encode_request(&RequestId::from(id), method, Some(&params)).unwrap()
}

fn headers(method: &str) -> RequestHeaders {
    RequestHeaders::new(VERSION, method)
}

/// A message as JSON, for comparing: `{"method", "params"}` or `{"id", "result"|"error"}`.
fn to_json(message: &Message) -> Value {
    match message {
        Message::Notification(n) => json!({
            "method": n.method,
            "params": serde_json::from_str::<Value>(n.params.as_ref().unwrap().get()).unwrap(),
        }),
        Message::Response(r) => match &r.outcome {
            Ok(result) => json!({
                "id": r.id,
                "result": serde_json::from_str::<Value>(result.get()).unwrap(),
            }),
            Err(error) => json!({"id": r.id, "error": error}),
        },
        other => panic!("unexpected message {other:?}"),
    }
}

/// Every message of a stream, as JSON, until it ends; any error fails the test.
async fn collect(mut stream: ResponseStream) -> Vec<Value> {
    let mut messages = Vec::new();
    while let Some(message) = stream.next().await {
        messages.push(to_json(&message.unwrap()));
    }
    messages
}

async fn call(client: &HttpClient, method: &str, params: Value) -> Vec<Value> {
    let stream = client
        .request(frame(1, method, params), headers(method))
        .await
        .unwrap();
    collect(stream).await
}

/// The first error a call produces, from `request` or from its stream.
async fn call_error(client: &HttpClient, method: &str, params: Value) -> Error {
    let mut stream = match client
        .request(frame(1, method, params), headers(method))
        .await
    {
        Ok(stream) => stream,
        Err(e) => return e,
    };
    while let Some(message) = stream.next().await {
        if let Err(e) = message {
            return e;
        }
    }
    panic!("{method}: the call succeeded");
}

#[tokio::test]
async fn json_reply() {
    let f = start().await;
    let got = call(&connect(f.server.url()), "test/big", json!({"size": 3})).await;
    assert_eq!(got, [json!({"id": 1, "result": {"text": "xxx"}})]);
}

#[tokio::test]
async fn sse_reply_in_order() {
    let f = start().await;
    let got = call(&connect(f.server.url()), "test/notify", json!({})).await;
    assert_eq!(
        got,
        [
            json!({"method": "notifications/message", "params": {"n": 1}}),
            json!({"method": "notifications/message", "params": {"n": 2}}),
            json!({"id": 1, "result": {"done": true}}),
        ]
    );
}

#[tokio::test]
async fn notifications_arrive_while_the_call_runs() {
    let f = start().await;
    let client = connect(f.server.url());
    let mut stream = client
        .request(frame(1, "test/gated", json!({})), headers("test/gated"))
        .await
        .unwrap();
    // The handler is blocked on the gate, so this notification came before the response.
    let first = stream.next().await.unwrap().unwrap();
    assert_eq!(
        to_json(&first),
        json!({"method": "notifications/progress", "params": {"progress": 1}})
    );
    f.gate.add_permits(1);
    assert_eq!(
        collect(stream).await,
        [json!({"id": 1, "result": {"released": true}})]
    );
}

#[tokio::test]
async fn server_sees_every_header() {
    let f = start().await;
    let config = HttpClientConfig::default().header(
        http::header::AUTHORIZATION,
        HeaderValue::from_static("Bearer s3cret"),
    );
    let client = HttpClient::new(f.server.url(), config).unwrap();

    // `greet` declares `Mcp-Param-Greeting` and `Mcp-Param-Count`: the server checks each
    // decoded header against the body, so a wrong encoding would be refused with -32020.
    let params = json!({"name": "greet", "arguments": {"greeting": "Hello, 世界", "count": 7}});
    let mcp = headers("tools/call")
        .name("greet")
        .param("Greeting", "Hello, 世界")
        .param("Count", 7);
    let stream = client
        .request(frame(1, "tools/call", params), mcp)
        .await
        .unwrap();
    let got = collect(stream).await;
    let seen = &got[0]["result"];
    let expected = [
        ("accept", "application/json, text/event-stream"),
        ("content-type", "application/json"),
        ("mcp-protocol-version", VERSION),
        ("mcp-method", "tools/call"),
        ("mcp-name", "greet"),
        ("mcp-param-greeting", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        ("mcp-param-count", "7"),
        ("authorization", "Bearer s3cret"),
    ];
    for (name, value) in expected {
        assert_eq!(seen[name], value, "{name} in {seen}");
    }

    // A resource URI outside plain ASCII travels in `Mcp-Name` as a sentinel.
    let uri = "file:///Ünïcode name.txt";
    let stream = client
        .request(
            frame(2, "resources/read", json!({"uri": uri})),
            headers("resources/read").name(uri),
        )
        .await
        .unwrap();
    let got = collect(stream).await;
    let sent = got[0]["result"]["mcp-name"].as_str().unwrap();
    assert!(sent.starts_with("=?base64?"), "{sent}");
}

#[tokio::test]
async fn error_replies() {
    let f = start().await;
    let client = connect(f.server.url());

    // 404 with a -32601 body is the error response, as a message.
    let got = call(&client, "nope/missing", json!({})).await;
    assert_eq!(got.len(), 1);
    assert_eq!(got[0]["id"], 1);
    assert_eq!(got[0]["error"]["code"], -32601);

    // 400 with -32020: headers that do not match the body.
    let stream = client
        .request(
            frame(1, "tools/call", json!({"name": "greet"})),
            headers("tools/call").name("other"),
        )
        .await
        .unwrap();
    let got = collect(stream).await;
    assert_eq!(got[0]["error"]["code"], -32020);

    // A status without a JSON-RPC body (404 on another path) is a typed error.
    let elsewhere = format!("http://{}/elsewhere", f.server.local_addr());
    let err = call_error(&connect(&elsewhere), "test/notify", json!({})).await;
    assert_eq!(err.status(), Some(http::StatusCode::NOT_FOUND), "{err}");
}

#[tokio::test]
async fn size_limits() {
    let f = start().await;
    let limited = |body: usize, event: usize| {
        let config = HttpClientConfig::default()
            .max_response_bytes(body)
            .max_event_bytes(event);
        HttpClient::new(f.server.url(), config).unwrap()
    };

    // A JSON body over the limit.
    let err = call_error(&limited(1024, 1024), "test/big", json!({"size": 4096})).await;
    assert!(matches!(err, Error::BodyTooLarge { limit: 1024 }), "{err}");

    // One SSE event over the event limit.
    let err = call_error(
        &limited(1 << 20, 1024),
        "test/bigevent",
        json!({"size": 4096}),
    )
    .await;
    assert!(matches!(err, Error::EventTooLarge { limit: 1024 }), "{err}");

    // An SSE stream over the body limit, each event within its own.
    let err = call_error(
        &limited(1024, 1 << 20),
        "test/bigevent",
        json!({"size": 4096}),
    )
    .await;
    assert!(matches!(err, Error::BodyTooLarge { limit: 1024 }), "{err}");

    // Within both limits, the same calls succeed.
    let got = call(
        &limited(1 << 20, 1 << 20),
        "test/bigevent",
        json!({"size": 4096}),
    )
    .await;
    assert_eq!(got.len(), 2);
}

#[tokio::test]
async fn dropping_the_stream_cancels_the_request() {
    let mut f = start().await;
    let client = connect(f.server.url());
    let mut stream = client
        .request(frame(1, "test/wait", json!({})), headers("test/wait"))
        .await
        .unwrap();
    assert!(matches!(
        stream.next().await,
        Some(Ok(Message::Notification(_)))
    ));
    assert_eq!(next_log(&mut f.log).await, "started test/wait");
    drop(stream);
    assert_eq!(next_log(&mut f.log).await, "cancelled test/wait");
}

/// A TCP proxy in front of the server that counts the connections it accepts.
struct Proxy {
    addr: SocketAddr,
    accepted: Arc<AtomicUsize>,
    task: JoinHandle<()>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn proxy(target: SocketAddr) -> Proxy {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&accepted);
    let task = tokio::spawn(async move {
        // Dropped with the accept loop, which aborts every piped connection.
        let mut pipes = JoinSet::new();
        loop {
            let (mut inbound, _) = listener.accept().await.unwrap();
            counter.fetch_add(1, Ordering::SeqCst);
            pipes.spawn(async move {
                let mut outbound = TcpStream::connect(target).await.unwrap();
                let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
            });
        }
    });
    Proxy {
        addr,
        accepted,
        task,
    }
}

#[tokio::test]
async fn connections_are_reused() {
    let f = start().await;
    let proxy = proxy(f.server.local_addr()).await;
    let client = connect(&format!("http://{}/mcp", proxy.addr));
    for _ in 0..2 {
        assert_eq!(call(&client, "test/big", json!({"size": 1})).await.len(), 1);
    }
    // An SSE reply read to its end leaves the connection reusable too.
    assert_eq!(call(&client, "test/notify", json!({})).await.len(), 3);
    assert_eq!(call(&client, "test/big", json!({"size": 1})).await.len(), 1);
    assert_eq!(proxy.accepted.load(Ordering::SeqCst), 1);
    // The count is real: another client (another pool) opens a connection of its own.
    let other = connect(&format!("http://{}/mcp", proxy.addr));
    assert_eq!(call(&other, "test/big", json!({"size": 1})).await.len(), 1);
    assert_eq!(proxy.accepted.load(Ordering::SeqCst), 2);
}

/// A connection idle past `pool_idle_timeout` is not reused, and a timeout of zero keeps
/// no connection at all.
#[tokio::test]
async fn idle_connections_expire() {
    let f = start().await;
    let proxy = proxy(f.server.local_addr()).await;
    let url = format!("http://{}/mcp", proxy.addr);
    // Real time (the server and the proxy are on real sockets), so margins of whole
    // seconds: back-to-back calls are seconds inside the timeout, and the sleep lasts at
    // least a second past it.
    let config = HttpClientConfig::default().pool_idle_timeout(Duration::from_secs(2));
    let client = HttpClient::new(&url, config).unwrap();
    assert_eq!(call(&client, "test/big", json!({"size": 1})).await.len(), 1);
    assert_eq!(call(&client, "test/big", json!({"size": 1})).await.len(), 1);
    assert_eq!(proxy.accepted.load(Ordering::SeqCst), 1);
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(call(&client, "test/big", json!({"size": 1})).await.len(), 1);
    assert_eq!(proxy.accepted.load(Ordering::SeqCst), 2);

    let config = HttpClientConfig::default().pool_idle_timeout(Duration::ZERO);
    let client = HttpClient::new(&url, config).unwrap();
    for _ in 0..3 {
        assert_eq!(call(&client, "test/big", json!({"size": 1})).await.len(), 1);
    }
    assert_eq!(proxy.accepted.load(Ordering::SeqCst), 5);
}

/// A server that answers one request per connection and then closes it, without saying so
/// (no `Connection: close`): the client's next request finds its pooled connection closed,
/// before or while sending, and goes on a new one; nothing fails.
#[tokio::test]
async fn a_connection_the_server_closed_while_idle_is_replaced() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let accepted = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&accepted);
    let server = tokio::spawn(async move {
        loop {
            let (mut socket, _) = listener.accept().await.unwrap();
            let n = counter.fetch_add(1, Ordering::SeqCst);
            let mut request = Vec::new();
            let mut buf = [0; 4096];
            while !String::from_utf8_lossy(&request).contains("\"jsonrpc\"") {
                let read = socket.read(&mut buf).await.unwrap();
                assert!(read > 0);
                request.extend_from_slice(&buf[..read]);
            }
            let body = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"n":{n}}}}}"#);
            let reply = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            );
            socket.write_all(reply.as_bytes()).await.unwrap();
            drop(socket);
        }
    });
    let client = connect(&url);
    for n in 0..5 {
        let got = call(&client, "test/x", json!({})).await;
        assert_eq!(got, [json!({"id": 1, "result": {"n": n}})]);
    }
    assert_eq!(accepted.load(Ordering::SeqCst), 5);
    server.abort();
}

#[tokio::test]
async fn notifications_get_202() {
    let f = start().await;
    let client = connect(f.server.url());
    let note = |method: &str| {
        mcp_jsonrpc::encode_notification(method, Some(&json!({"_meta": meta()}))).unwrap()
    };
    client
        .notify(
            note("notifications/initialized"),
            headers("notifications/initialized"),
        )
        .await
        .unwrap();
    // A mismatched `Mcp-Method` is refused with 400 and -32020, carried by the error.
    let err = client
        .notify(
            note("notifications/initialized"),
            headers("notifications/other"),
        )
        .await
        .unwrap_err();
    let Error::Status { status, error } = &err else {
        panic!("{err}");
    };
    assert_eq!(*status, http::StatusCode::BAD_REQUEST);
    assert_eq!(error.as_ref().unwrap().code.0, -32020);
}

/// Serves one connection with `reply` after reading a request, and returns the URL.
async fn canned(reply: &'static str) -> (String, JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut request = Vec::new();
        let mut buf = [0; 4096];
        // Read the head and the body (the client always sends `Content-Length`).
        loop {
            let n = socket.read(&mut buf).await.unwrap();
            request.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&request);
            if let Some(end) = text.find("\r\n\r\n") {
                let length: usize = text[..end]
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length:")
                            .map(|v| v.trim().parse().unwrap())
                    })
                    .unwrap_or(0);
                if request.len() >= end + 4 + length {
                    break;
                }
            }
            assert!(n > 0, "the client closed early");
        }
        socket.write_all(reply.as_bytes()).await.unwrap();
        socket.shutdown().await.unwrap();
        // Wait for the client to close, so the reply is not cut short by a reset.
        let _ = socket.read(&mut buf).await;
    });
    (url, task)
}

/// Replies the server half never sends, as wire bytes, and what the client makes of them.
#[tokio::test]
async fn canned_replies() {
    /// `Ok` means the SSE notification `{"n": 1}` and then the response `{}`.
    type Outcome = Result<(), fn(&Error) -> bool>;
    let cases: &[(&str, &str, Outcome)] = &[
        (
            "redirect",
            "HTTP/1.1 307 Temporary Redirect\r\nLocation: https://evil.example/mcp\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            Err(
                |e| matches!(e, Error::Redirect { location: Some(l), .. } if l == "https://evil.example/mcp"),
            ),
        ),
        (
            "plain-text 500",
            "HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain\r\nContent-Length: 4\r\nConnection: close\r\n\r\noops",
            Err(|e| e.status() == Some(http::StatusCode::INTERNAL_SERVER_ERROR)),
        ),
        (
            "JSON 500 that is not a JSON-RPC error",
            "HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
            Err(|e| e.status() == Some(http::StatusCode::INTERNAL_SERVER_ERROR)),
        ),
        (
            "wrong content type",
            "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi",
            Err(|e| matches!(e, Error::ContentType { content_type: Some(t) } if t == "text/html")),
        ),
        (
            "invalid JSON",
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 3\r\nConnection: close\r\n\r\n{x}",
            Err(|e| matches!(e, Error::Decode(_))),
        ),
        (
            "SSE framing: CRLF, comments, other events, multi-line data",
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n\
             : keep-alive\r\n\r\n\
             event: ping\r\ndata: ignored\r\n\r\n\
             data: {\"jsonrpc\":\"2.0\",\r\ndata: \"method\":\"notifications/message\",\"params\":{\"n\":1}}\r\n\r\n\
             event: message\nid: 3\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n",
            Ok(()),
        ),
        (
            "SSE without a response",
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n\
             data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n",
            Err(|e| matches!(e, Error::Incomplete)),
        ),
    ];
    for (name, reply, expected) in cases {
        let (url, server) = canned(reply).await;
        let client = connect(&url);
        match expected {
            Ok(()) => {
                let got = call(&client, "test/x", json!({})).await;
                assert_eq!(
                    got,
                    [
                        json!({"method": "notifications/message", "params": {"n": 1}}),
                        json!({"id": 1, "result": {}}),
                    ],
                    "{name}"
                );
            }
            Err(check) => {
                let err = call_error(&client, "test/x", json!({})).await;
                assert!(check(&err), "{name}: {err:?}");
            }
        }
        drop(client);
        server.await.unwrap();
    }
}

/// What `next_reply` makes of a reply: a successful response comes as its id and result
/// (from a JSON body in one chunk or in many, or from an SSE event), whatever the order of
/// its members, anything else as a message; a body that is not a well-formed response is
/// the decode error `next` gives too.
#[tokio::test]
async fn successful_responses_come_as_results() {
    fn json_reply(body: &str) -> &'static str {
        Box::leak(
            format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )
            .into_boxed_str(),
        )
    }
    /// Every reply of the stream: `("result", id, text)` or `("message", …)`, or the
    /// error's text.
    async fn replies(url: &str) -> Vec<(String, Value, String)> {
        let client = connect(url);
        let mut stream = client
            .request(frame(1, "test/x", json!({})), headers("test/x"))
            .await
            .unwrap();
        let mut got = Vec::new();
        while let Some(reply) = stream.next_reply().await {
            got.push(match reply.unwrap() {
                Reply::Result(id, result) => {
                    ("result".to_owned(), json!(id), result.text().to_owned())
                }
                Reply::Message(message) => ("message".to_owned(), to_json(&message), String::new()),
                other => panic!("{other:?}"),
            });
        }
        got
    }

    let (url, server) = canned(json_reply(
        r#"{"jsonrpc":"2.0","id":7,"result":{"a":[1,2]}}"#,
    ))
    .await;
    assert_eq!(
        replies(&url).await,
        [("result".to_owned(), json!(7), r#"{"a":[1,2]}"#.to_owned())]
    );
    server.await.unwrap();

    // The keys sorted, as a `serde_json::Value` writes them.
    let (url, server) = canned(json_reply(r#"{"id":7,"jsonrpc":"2.0","result":{"a":1}}"#)).await;
    assert_eq!(
        replies(&url).await,
        [("result".to_owned(), json!(7), r#"{"a":1}"#.to_owned())]
    );
    server.await.unwrap();

    // Another member order, and an error response, which comes as a message.
    let (url, server) = canned(json_reply(r#"{"result":{"a":1},"id":7,"jsonrpc":"2.0"}"#)).await;
    assert_eq!(
        replies(&url).await,
        [("result".to_owned(), json!(7), r#"{"a":1}"#.to_owned())]
    );
    server.await.unwrap();
    let (url, server) = canned(json_reply(
        r#"{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"x"}}"#,
    ))
    .await;
    assert_eq!(
        replies(&url).await,
        [(
            "message".to_owned(),
            json!({"id": 7, "error": {"code": 1, "message": "x"}}),
            String::new()
        )]
    );
    server.await.unwrap();

    // A result larger than one read of the socket: the chunks are joined.
    let big = "x".repeat(300_000);
    let body = format!(r#"{{"jsonrpc":"2.0","id":8,"result":{{"text":"{big}"}}}}"#);
    let (url, server) = canned(json_reply(&body)).await;
    let got = replies(&url).await;
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].1, json!(8));
    assert_eq!(got[0].2, format!(r#"{{"text":"{big}"}}"#));
    server.await.unwrap();

    // Over SSE: the notification, then the result.
    let (url, server) = canned(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n\
         data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"n\":1}}\n\n\
         data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n",
    )
    .await;
    assert_eq!(
        replies(&url).await,
        [
            (
                "message".to_owned(),
                json!({"method": "notifications/message", "params": {"n": 1}}),
                String::new()
            ),
            ("result".to_owned(), json!(1), "{}".to_owned()),
        ]
    );
    server.await.unwrap();

    // A result and an error both: a decode error, from `next_reply` as from `next`.
    let bad = r#"{"jsonrpc":"2.0","id":7,"result":{},"error":{"code":1,"message":"x"}}"#;
    let (url, server) = canned(json_reply(bad)).await;
    let client = connect(&url);
    let mut stream = client
        .request(frame(1, "test/x", json!({})), headers("test/x"))
        .await
        .unwrap();
    let Some(Err(err)) = stream.next_reply().await else {
        panic!("expected an error");
    };
    assert!(matches!(err, Error::Decode(_)), "{err:?}");
    drop(stream);
    drop(client);
    server.await.unwrap();
    let (url, server) = canned(json_reply(bad)).await;
    let err = call_error(&connect(&url), "test/x", json!({})).await;
    assert!(matches!(err, Error::Decode(_)), "{err:?}");
    server.await.unwrap();
}

#[tokio::test]
async fn connect_errors() {
    // A port nobody listens on: bound, then released.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let config = HttpClientConfig::default().connect_timeout(Duration::from_secs(5));
    let client = HttpClient::new(&format!("http://{addr}/mcp"), config).unwrap();
    let err = client
        .request(frame(1, "test/x", json!({})), headers("test/x"))
        .await
        .unwrap_err();
    assert!(err.is_connect(), "{err:?}");
}

#[test]
fn error_is_send_sync() {
    fn assert_bounds<T: Send + Sync + 'static>() {}
    assert_bounds::<Error>();
    assert_bounds::<HttpClient>();
    assert_bounds::<ResponseStream>();
}
