//! What the HTTP tests share: a test handler whose methods exercise each reply shape, a
//! client, and readers for JSON and SSE bodies.

#![allow(dead_code, unreachable_pub)]

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::{Stream, stream};
use http_body::Frame;
use http_body_util::{BodyExt as _, StreamBody};
use mcp_jsonrpc::{ErrorObject, Handler, Request, RequestContext};
use mcp_types::ErrorCode;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::sync::{Semaphore, mpsc};

pub const VERSION: &str = "2026-07-28";

/// Records what handlers did (`started test/wait`, `cancelled test/wait`), in order.
pub type Log = mpsc::UnboundedReceiver<String>;

/// What a test's tower layer puts in a request's extensions, for `test/parts` to read.
#[derive(Debug, Clone, Copy)]
pub struct Tag(pub &'static str);

/// The test handler. Its methods:
///
/// - `test/notify`: two `notifications/message`, then `{"done": true}`;
/// - `test/pretty`: one notification, then a pretty-printed (multi-line) result;
/// - `test/wait`: logs `started`, waits for its token, logs `cancelled`, returns
///   `{"cancelled": true}`;
/// - `test/listen`: one notification, then the same as `test/wait` (a quiet stream);
/// - `test/block`: logs `started`, waits for a permit of the gate, returns
///   `{"released": true}`;
/// - `test/relay`: a task of its own sends one `notifications/message` a little later,
///   while the handler waits for its token; then `{"relayed": true}`;
/// - `test/late`: answers `{"late": true}` at once, leaving a task that notifies a little
///   later and logs `late refused` or `late sent`;
/// - `test/flood`: sends `params.count` notifications, logging `sent <n>` after each,
///   then returns `{"sent": count}`;
/// - `test/parts`: the request's head (method, path, a [`Tag`] extension, the
///   `PeerAddr` extension);
/// - `test/caps`, `test/version`, `test/params`: errors -32021, -32022 and -32602;
/// - `tools/list`, `tools/call`, `prompts/get`, `resources/read`, `echo`: the params back;
/// - anything else: -32601.
pub struct TestHandler {
    log: mpsc::UnboundedSender<String>,
    gate: Arc<Semaphore>,
}

impl TestHandler {
    pub fn new() -> (TestHandler, Log, Arc<Semaphore>) {
        let (log, rx) = mpsc::unbounded_channel();
        let gate = Arc::new(Semaphore::new(0));
        (
            TestHandler {
                log,
                gate: Arc::clone(&gate),
            },
            rx,
            gate,
        )
    }
}

fn raw(value: &Value) -> Box<RawValue> {
    RawValue::from_string(value.to_string()).unwrap()
}

impl Handler for TestHandler {
    async fn request(
        &self,
        request: Request,
        cx: RequestContext,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let method = request.method.clone();
        let log = |what: &str| {
            let _ = self.log.send(format!("{what} {method}"));
        };
        match method.as_str() {
            "tools/list" | "tools/call" | "prompts/get" | "resources/read" | "echo" => {
                match request.params {
                    Some(params) => params.into_raw_value().map_err(|e| e.to_error_object()),
                    None => Ok(raw(&json!({}))),
                }
            }
            "test/headers" => {
                let seen = cx
                    .transport_info()
                    .and_then(|info| info.header("x-test"))
                    .map(str::to_owned);
                Ok(raw(&json!({ "x-test": seen })))
            }
            "test/parts" => {
                // The request's head as the transport lends it: what a tower layer put in
                // its extensions, and the client's address the server put there.
                let parts = cx
                    .transport_info()
                    .and_then(|info| info.request::<Arc<http::request::Parts>>());
                let tag = parts.and_then(|p| p.extensions.get::<Tag>()).map(|t| t.0);
                let peer = parts
                    .and_then(|p| p.extensions.get::<mcp_transport_http::PeerAddr>())
                    .map(|p| p.0.ip().to_string());
                Ok(raw(&json!({
                    "method": parts.map(|p| p.method.as_str()),
                    "path": parts.map(|p| p.uri.path()),
                    "tag": tag,
                    "peer": peer,
                })))
            }
            "test/notify" => {
                for n in 1..=2 {
                    cx.notify("notifications/message", Some(&json!({"n": n})))
                        .await
                        .map_err(|e| ErrorObject::internal(e.to_string()))?;
                }
                Ok(raw(&json!({"done": true})))
            }
            "test/pretty" => {
                cx.notify("notifications/message", Some(&json!({"n": 1})))
                    .await
                    .map_err(|e| ErrorObject::internal(e.to_string()))?;
                Ok(
                    RawValue::from_string("{\n  \"pretty\": [\n    1,\n    2\n  ]\n}".into())
                        .unwrap(),
                )
            }
            "test/wait" | "test/listen" => {
                if method == "test/listen" {
                    cx.notify("notifications/subscriptions/acknowledged", Some(&json!({})))
                        .await
                        .map_err(|e| ErrorObject::internal(e.to_string()))?;
                }
                // The watcher outlives this future: a client that goes away drops the future
                // and fires the token, and only a task of its own can still see that.
                let token = cx.cancellation().clone();
                let watcher_log = self.log.clone();
                let watched = method.clone();
                tokio::spawn(async move {
                    token.cancelled().await;
                    let _ = watcher_log.send(format!("cancelled {watched}"));
                });
                log("started");
                cx.cancellation().cancelled().await;
                Ok(raw(&json!({"cancelled": true})))
            }
            "test/relay" => {
                // Only the relay's notification can wake the request: the handler then
                // waits for its token (the client going away).
                let token = cx.cancellation().clone();
                tokio::spawn(async move {
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                    let _ = cx
                        .notify("notifications/message", Some(&json!({"relayed": 1})))
                        .await;
                });
                token.cancelled().await;
                Ok(raw(&json!({"relayed": true})))
            }
            "test/late" => {
                let late_log = self.log.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                    let sent = cx.notify::<()>("notifications/message", None).await;
                    let what = if sent.is_ok() { "sent" } else { "refused" };
                    let _ = late_log.send(format!("late {what}"));
                });
                Ok(raw(&json!({"late": true})))
            }
            "test/flood" => {
                let params: Value = request
                    .params
                    .as_ref()
                    .map_or(Value::Null, |p| serde_json::from_str(p.text()).unwrap());
                let count = params["count"].as_u64().unwrap_or(0);
                for n in 0..count {
                    cx.notify("notifications/message", Some(&json!({"n": n})))
                        .await
                        .map_err(|e| ErrorObject::internal(e.to_string()))?;
                    let _ = self.log.send(format!("sent {n}"));
                }
                Ok(raw(&json!({"sent": count})))
            }
            "test/block" => {
                log("started");
                self.gate.acquire().await.unwrap().forget();
                Ok(raw(&json!({"released": true})))
            }
            "test/caps" => Err(ErrorObject::new(
                ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
                "needs sampling",
            )),
            "test/version" => Err(ErrorObject::new(
                ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
                "unsupported",
            )),
            "test/params" => Err(ErrorObject::invalid_params("unknown tool")),
            _ => Err(ErrorObject::method_not_found(&method)),
        }
    }
}

/// Waits for the next log line, failing the test instead of hanging if none comes.
/// A server of the test handler on `config`, on a free loopback port: the running server,
/// the handler's log and its gate.
pub async fn serve(
    config: mcp_transport_http::HttpServerConfig,
) -> (mcp_transport_http::RunningServer, Log, Arc<Semaphore>) {
    let (handler, log, gate) = TestHandler::new();
    let server = mcp_transport_http::HttpServer::bind(
        mcp_transport_http::HttpServer::DEFAULT_ADDR,
        handler,
        config,
    )
    .await
    .unwrap();
    (server, log, gate)
}

/// Asserts that a raw HTTP reply starts with the status line `HTTP/1.1 {status}`.
#[track_caller]
pub fn assert_status(reply: &str, status: &str) {
    assert!(
        reply.starts_with(&format!("HTTP/1.1 {status}\r\n")),
        "expected {status}: {reply}"
    );
}

pub async fn next_log(log: &mut Log) -> String {
    tokio::time::timeout(Duration::from_secs(30), log.recv())
        .await
        .expect("the handler logged nothing")
        .expect("the log closed")
}

/// The `_meta` every 2026-07-28 request carries.
pub fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// A request body: `params` with the standard `_meta` added.
pub fn request_body(id: i64, method: &str, mut params: Value) -> Vec<u8> {
    params
        .as_object_mut()
        .expect("params are an object")
        .insert("_meta".into(), meta());
    serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
        .unwrap()
}

/// The standard headers of a request for `method`.
pub fn standard_headers(method: &str) -> Vec<(String, Vec<u8>)> {
    [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", VERSION),
        ("mcp-method", method),
    ]
    .iter()
    .map(|(k, v)| ((*k).to_owned(), v.as_bytes().to_vec()))
    .collect()
}

/// The events of the first frame of a response that must be a 200 SSE stream, and the
/// rest of its body.
pub async fn first_sse_events(
    response: http::Response<hyper::body::Incoming>,
) -> (Vec<Value>, hyper::body::Incoming) {
    assert_eq!(response.status(), http::StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut body = response.into_body();
    let first = body.frame().await.expect("a first frame").unwrap();
    let first = first.into_data().expect("a data frame");
    (sse_events(&first), body)
}

/// The events of an SSE body, as JSON, checking the framing on the way: every event is
/// `event: message` with `data:` lines and no `id:`; comments are skipped.
pub fn sse_events(body: &[u8]) -> Vec<Value> {
    let text = std::str::from_utf8(body).expect("SSE is UTF-8");
    assert!(
        text.ends_with("\n\n") || text.is_empty(),
        "unterminated event: {text:?}"
    );
    let mut events = Vec::new();
    for block in text.split("\n\n").filter(|b| !b.is_empty()) {
        let mut data = Vec::new();
        let mut kind = None;
        for line in block.lines() {
            if line.starts_with(':') {
                continue;
            }
            let (field, value) = line.split_once(": ").unwrap_or((line, ""));
            match field {
                "event" => kind = Some(value.to_owned()),
                "data" => data.push(value),
                other => panic!("unexpected SSE field {other:?} in {block:?}"),
            }
        }
        if data.is_empty() {
            continue; // A comment-only block.
        }
        assert_eq!(kind.as_deref(), Some("message"), "{block:?}");
        events.push(serde_json::from_str(&data.join("\n")).expect("event data is JSON"));
    }
    events
}

/// Whether every member of `expected` is in `actual` with a matching value.
pub fn subset(expected: &Value, actual: &Value) -> bool {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => e
            .iter()
            .all(|(k, v)| a.get(k).is_some_and(|av| subset(v, av))),
        (Value::Array(e), Value::Array(a)) => {
            e.len() == a.len() && e.iter().zip(a).all(|(e, a)| subset(e, a))
        }
        _ => expected == actual,
    }
}

/// Reads a whole body.
pub async fn collect(body: hyper::body::Incoming) -> Bytes {
    body.collect().await.expect("the body arrives").to_bytes()
}

/// A request body fed chunk by chunk from a channel; it ends when the sender is dropped.
pub type ChannelBody =
    StreamBody<Pin<Box<dyn Stream<Item = Result<Frame<Bytes>, Infallible>> + Send>>>;

/// A [`ChannelBody`] and the sender that feeds it.
pub fn channel_body() -> (mpsc::Sender<Bytes>, ChannelBody) {
    let (tx, mut rx) = mpsc::channel(4);
    let frames = stream::poll_fn(move |cx| {
        rx.poll_recv(cx)
            .map(|chunk| chunk.map(|c| Ok(Frame::data(c))))
    });
    (tx, StreamBody::new(Box::pin(frames)))
}

/// A [`ChannelBody`] that holds `bytes` and then ends.
pub fn full_body(bytes: impl Into<Bytes>) -> ChannelBody {
    StreamBody::new(Box::pin(stream::iter([Ok(Frame::data(bytes.into()))])))
}
