//! The HTTP server end to end, on a real socket on 127.0.0.1: a table of requests and the
//! replies they must get (<https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>), then the
//! behaviours a table cannot show (disconnects, keep-alives, limits while streaming,
//! concurrency, timeouts and shutdown). No test sleeps: ordering comes from the handler's
//! log and gate, and time-dependent tests run on tokio's paused clock.

mod support;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, StatusCode};
use http_body_util::{BodyExt as _, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo};
use mcp_jsonrpc::ErrorObject;
use mcp_transport_http::{HttpServer, HttpServerConfig, ParamHeader, RunningServer};
use mcp_types::ErrorCode;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use support::{
    ChannelBody, TestHandler, assert_status, channel_body, collect, first_sse_events, full_body,
    next_log, request_body, sse_events, standard_headers, subset,
};

/// A `tools/list` request with id `id` laid out `{"jsonrpc":"2.0","id":N,"method":"M","params":…}`,
/// with `space` before the params and `after` following them.
fn usual(id: u32, space: &str, after: &str) -> String {
    let meta = support::meta();
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{space}{{"_meta":{meta}}}{after}}}"#
    )
}

/// What a reply's body must be.
enum Expect {
    /// No body at all.
    Empty,
    /// One JSON message containing these members.
    Json(Value),
    /// SSE events, each containing the members of its counterpart.
    Sse(Vec<Value>),
}

/// One row of the table: a request and the reply it must get.
struct Case {
    name: &'static str,
    method: Method,
    path: &'static str,
    headers: Vec<(String, Vec<u8>)>,
    body: Vec<u8>,
    status: u16,
    reply_headers: Vec<(&'static str, &'static str)>,
    absent_headers: Vec<&'static str>,
    expect: Expect,
}

impl Case {
    /// A well-formed request (id 1) for `method` with `params` (plus `_meta`).
    fn post(name: &'static str, method: &str, params: Value) -> Case {
        Case {
            name,
            method: Method::POST,
            path: "/mcp",
            headers: standard_headers(method),
            body: request_body(1, method, params),
            status: 200,
            reply_headers: Vec::new(),
            absent_headers: Vec::new(),
            expect: Expect::Empty,
        }
    }

    /// A POST of `body` as it is, with the standard headers for `method`.
    fn raw(name: &'static str, method: &str, body: &str) -> Case {
        Case {
            body: body.as_bytes().to_vec(),
            ..Case::post(name, method, json!({}))
        }
    }

    fn method(mut self, method: Method) -> Case {
        self.method = method;
        self
    }

    fn path(mut self, path: &'static str) -> Case {
        self.path = path;
        self
    }

    /// Replaces every value of a header.
    fn set(mut self, name: &str, value: impl AsRef<[u8]>) -> Case {
        self = self.unset(name);
        self.headers
            .push((name.to_owned(), value.as_ref().to_vec()));
        self
    }

    /// Adds one more value of a header.
    fn add(mut self, name: &str, value: impl AsRef<[u8]>) -> Case {
        self.headers
            .push((name.to_owned(), value.as_ref().to_vec()));
        self
    }

    fn unset(mut self, name: &str) -> Case {
        self.headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
        self
    }

    fn status(mut self, status: u16) -> Case {
        self.status = status;
        self
    }

    fn json(mut self, status: u16, body: Value) -> Case {
        self.status = status;
        self.expect = Expect::Json(body);
        self.reply_headers
            .push(("content-type", "application/json"));
        self
    }

    /// A JSON-RPC error reply with this status, id and code.
    fn error(self, status: u16, id: Value, code: i32) -> Case {
        let mut body = json!({"jsonrpc": "2.0", "error": {"code": code}});
        body["id"] = id;
        self.json(status, body)
    }

    fn sse(mut self, events: Vec<Value>) -> Case {
        self.expect = Expect::Sse(events);
        self.reply_headers.extend([
            ("content-type", "text/event-stream"),
            ("cache-control", "no-cache"),
            ("x-accel-buffering", "no"),
        ]);
        self
    }

    fn reply_header(mut self, name: &'static str, value: &'static str) -> Case {
        self.reply_headers.push((name, value));
        self
    }

    fn no_reply_header(mut self, name: &'static str) -> Case {
        self.absent_headers.push(name);
        self
    }
}

/// Sends one case to the server and checks the reply.
async fn check(client: &Client<HttpConnector, Full<Bytes>>, server: &RunningServer, case: Case) {
    let name = case.name;
    let mut request = Request::builder().method(case.method).uri(format!(
        "http://{}{}",
        server.local_addr(),
        case.path
    ));
    for (k, v) in &case.headers {
        request = request.header(k.as_str(), v.as_slice());
    }
    let request = request.body(Full::new(Bytes::from(case.body))).unwrap();
    let response = client
        .request(request)
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"));

    let status = response.status();
    let headers = response.headers().clone();
    let body = collect(response.into_body()).await;
    let text = String::from_utf8_lossy(&body);
    assert_eq!(status.as_u16(), case.status, "{name}: status; body {text}");
    for (k, v) in case.reply_headers {
        assert_eq!(
            headers.get(k).map(|v| v.to_str().unwrap()),
            Some(v),
            "{name}: header {k}"
        );
    }
    for k in case.absent_headers {
        assert!(
            headers.get(k).is_none(),
            "{name}: header {k} must be absent"
        );
    }
    match case.expect {
        Expect::Empty => assert!(body.is_empty(), "{name}: body {text}"),
        Expect::Json(expected) => {
            let actual: Value =
                serde_json::from_slice(&body).unwrap_or_else(|e| panic!("{name}: {e}: {text}"));
            assert!(
                subset(&expected, &actual),
                "{name}: {actual} lacks {expected}"
            );
        }
        Expect::Sse(expected) => {
            let actual = sse_events(&body);
            assert_eq!(actual.len(), expected.len(), "{name}: {actual:?}");
            for (e, a) in expected.iter().zip(&actual) {
                assert!(subset(e, a), "{name}: {a} lacks {e}");
            }
        }
    }
}

fn client() -> Client<HttpConnector, Full<Bytes>> {
    Client::builder(TokioExecutor::new()).build_http()
}

/// The configuration of the table's server: a small body limit, a tool with an
/// `Mcp-Param-Region` header, and a notification hook that refuses one method.
fn table_config() -> HttpServerConfig {
    let sql: Arc<[ParamHeader]> = Arc::new([ParamHeader::new("Region", ["region"]).unwrap()]);
    HttpServerConfig::default()
        .max_body_bytes(64 << 10)
        .param_headers(move |tool: &str| (tool == "sql").then(|| Arc::clone(&sql)))
        .on_notification(|n| {
            if n.method == "notifications/refused" {
                Err(ErrorObject::new(ErrorCode::INVALID_REQUEST, "refused"))
            } else {
                Ok(())
            }
        })
}

#[rustfmt::skip]
fn cases() -> Vec<Case> {
    let ok = |params: Value| json!({"jsonrpc": "2.0", "id": 1, "result": params});
    let call = |tool: &str, args: Value| json!({"name": tool, "arguments": args});
    let mm = -32020;
    let null = Value::Null;
    vec![
        // Replies: JSON when the handler emits nothing, SSE when it does.
        Case::post("the handler sees the request's headers", "test/headers", json!({})).set("X-Test", "hello").json(200, json!({"jsonrpc": "2.0", "id": 1, "result": {"x-test": "hello"}})),
        Case::post("json reply", "tools/list", json!({"cursor": "a"})).json(200, ok(json!({"cursor": "a"}))).no_reply_header("mcp-session-id"),
        Case::post("sse reply", "test/notify", json!({})).sse(vec![
            json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"n": 1}}),
            json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"n": 2}}),
            ok(json!({"done": true})),
        ]),
        Case::post("multi-line data", "test/pretty", json!({})).sse(vec![
            json!({"method": "notifications/message"}),
            ok(json!({"pretty": [1, 2]})),
        ]),
        // Handler errors take the status the spec pins for their code.
        Case::post("unknown method", "nope/nope", json!({})).error(404, json!(1), -32601),
        Case::post("missing capability", "test/caps", json!({})).error(400, json!(1), -32021),
        Case::post("unsupported version", "test/version", json!({})).error(400, json!(1), -32022),
        Case::post("other errors are 200", "test/params", json!({})).error(200, json!(1), -32602),
        // The endpoint, its method and media types.
        Case::post("other path", "tools/list", json!({})).path("/other").status(404),
        Case::post("query string", "tools/list", json!({})).path("/mcp?x=1").json(200, ok(json!({}))),
        Case::post("GET", "tools/list", json!({})).method(Method::GET).status(405).reply_header("allow", "POST"),
        Case::post("DELETE", "tools/list", json!({})).method(Method::DELETE).status(405).reply_header("allow", "POST"),
        Case::post("PUT", "tools/list", json!({})).method(Method::PUT).status(405).reply_header("allow", "POST"),
        Case::post("text/plain", "tools/list", json!({})).set("content-type", "text/plain").error(415, null.clone(), -32600),
        Case::post("no content-type", "tools/list", json!({})).unset("content-type").error(415, null.clone(), -32600),
        Case::post("charset", "tools/list", json!({})).set("content-type", "application/json; charset=utf-8").json(200, ok(json!({}))),
        Case::post("accept json only", "tools/list", json!({})).set("accept", "application/json").error(406, null.clone(), -32600),
        Case::post("accept wildcard", "tools/list", json!({})).set("accept", "*/*").error(406, null.clone(), -32600),
        Case::post("no accept", "tools/list", json!({})).unset("accept").error(406, null.clone(), -32600),
        Case::post("accept in two headers", "tools/list", json!({})).set("accept", "text/event-stream").add("accept", "application/json").json(200, ok(json!({}))),
        // Origin and Host: the DNS-rebinding defence.
        Case::post("foreign origin", "tools/list", json!({})).set("origin", "https://evil.example.com").error(403, null.clone(), -32600),
        Case::post("opaque origin", "tools/list", json!({})).set("origin", "null").status(403).json(403, json!({"id": null})),
        Case::post("loopback origin", "tools/list", json!({})).set("origin", "http://localhost:5173").json(200, ok(json!({}))),
        Case::post("foreign host", "tools/list", json!({})).set("host", "evil.example.com").error(403, null.clone(), -32600),
        Case::post("rebinding host with port", "tools/list", json!({})).set("host", "evil.example.com:80").status(403).json(403, json!({})),
        Case::post("localhost host", "tools/list", json!({})).set("host", "localhost:1234").json(200, ok(json!({}))),
        Case::post("ipv6 host", "tools/list", json!({})).set("host", "[::1]:1234").json(200, ok(json!({}))),
        // The protocol version header and `_meta`.
        Case::post("no version header", "tools/list", json!({})).unset("mcp-protocol-version").error(400, json!(1), mm),
        Case::post("version mismatch", "tools/list", json!({})).set("mcp-protocol-version", "2025-11-25").error(400, json!(1), mm),
        Case::raw("no _meta", "tools/list", r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#).error(400, json!(1), -32602),
        Case::raw("no params", "tools/list", r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#).error(400, json!(1), -32602),
        // Mcp-Method and Mcp-Name.
        Case::post("no method header", "tools/list", json!({})).unset("mcp-method").error(400, json!(1), mm),
        Case::post("method mismatch", "tools/list", json!({})).set("mcp-method", "prompts/list").error(400, json!(1), mm),
        Case::post("method value case", "tools/list", json!({})).set("mcp-method", "TOOLS/LIST").error(400, json!(1), mm),
        Case::post("header name case", "tools/list", json!({})).unset("mcp-method").set("MCP-METHOD", "tools/list").json(200, ok(json!({}))),
        Case::post("name ok", "tools/call", call("t", json!({}))).set("mcp-name", "t").json(200, ok(call("t", json!({})))),
        Case::post("name with whitespace", "tools/call", call("t", json!({}))).set("mcp-name", "  t  ").json(200, json!({"id": 1})),
        Case::post("name missing", "tools/call", call("t", json!({}))).error(400, json!(1), mm),
        Case::post("name mismatch", "tools/call", call("t", json!({}))).set("mcp-name", "u").error(400, json!(1), mm),
        Case::post("prompt name", "prompts/get", json!({"name": "p"})).set("mcp-name", "p").json(200, json!({"id": 1})),
        Case::post("resource uri base64", "resources/read", json!({"uri": "file:///ü"})).set("mcp-name", "=?base64?ZmlsZTovLy/DvA==?=").json(200, json!({"id": 1})),
        Case::post("resource uri mismatch", "resources/read", json!({"uri": "file:///a"})).set("mcp-name", "file:///b").error(400, json!(1), mm),
        Case::post("repeated name", "tools/call", call("t", json!({}))).set("mcp-name", "t").add("mcp-name", "t").error(400, json!(1), mm),
        // Mcp-Param-* for the `sql` tool's `region` argument.
        Case::post("param ok", "tools/call", call("sql", json!({"region": "us-west1"}))).set("mcp-name", "sql").set("mcp-param-region", "us-west1").json(200, json!({"id": 1})),
        Case::post("param base64", "tools/call", call("sql", json!({"region": "Hello, 世界"}))).set("mcp-name", "sql").set("Mcp-Param-Region", "=?base64?SGVsbG8sIOS4lueVjA==?=").json(200, json!({"id": 1})),
        Case::post("param bad base64", "tools/call", call("sql", json!({"region": "Hello"}))).set("mcp-name", "sql").set("mcp-param-region", "=?base64?SGVsbG8?=").error(400, json!(1), mm),
        Case::post("param mismatch", "tools/call", call("sql", json!({"region": "a"}))).set("mcp-name", "sql").set("mcp-param-region", "b").error(400, json!(1), mm),
        Case::post("param missing", "tools/call", call("sql", json!({"region": "a"}))).set("mcp-name", "sql").error(400, json!(1), mm),
        Case::post("param not expected for null", "tools/call", call("sql", json!({"region": null}))).set("mcp-name", "sql").json(200, json!({"id": 1})),
        Case::post("param invalid characters", "tools/call", call("sql", json!({"region": "é"}))).set("mcp-name", "sql").set("mcp-param-region", b"\xc3\xa9").error(400, json!(1), mm),
        // Bodies that are not one valid request.
        Case::raw("not json", "tools/list", "{not json").error(400, null.clone(), -32700),
        Case::raw("empty body", "tools/list", "").error(400, null.clone(), -32700),
        Case::raw("invalid envelope", "tools/list", r#"{"jsonrpc":"1.0","id":7,"method":"tools/list"}"#).error(400, json!(7), -32600),
        Case::raw("null id", "tools/list", r#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#).error(400, null.clone(), -32600),
        Case::raw("batch", "tools/list", r#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#).error(400, null.clone(), -32600),
        Case::raw("a response", "tools/list", r#"{"jsonrpc":"2.0","id":1,"result":{}}"#).error(400, null.clone(), -32600),
        // The usual layout (what our client writes): answered as any other.
        Case::raw("usual layout", "tools/list", &usual(3, "", "")).json(200, json!({"id": 3, "result": {"_meta": support::meta()}})),
        Case::raw("usual layout, white space", "tools/list", &usual(3, " ", "\n")).json(200, json!({"id": 3, "result": {"_meta": support::meta()}})),
        Case::raw("usual layout, another member after", "tools/list", &usual(3, "", r#","x":1"#)).json(200, json!({"id": 3, "result": {"_meta": support::meta()}})),
        Case::raw("usual layout, params not json", "tools/list", &{
            usual(3, "", "").replacen(r#""params":{"#, r#""params":{"a":tru,"#, 1)
        })
        .error(400, null.clone(), -32700),
        Case::raw("usual layout, a second id", "tools/list", &usual(3, "", r#","id":4"#)).error(400, null.clone(), -32600),
        // Notifications.
        Case::raw("notification", "notifications/initialized", r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).status(202),
        Case::raw("notification without headers", "notifications/x", r#"{"jsonrpc":"2.0","method":"notifications/x"}"#).unset("mcp-method").unset("mcp-protocol-version").status(202),
        Case::raw("notification method mismatch", "notifications/x", r#"{"jsonrpc":"2.0","method":"notifications/x"}"#).set("mcp-method", "notifications/y").error(400, null.clone(), mm),
        Case::raw("notification refused by the hook", "notifications/refused", r#"{"jsonrpc":"2.0","method":"notifications/refused"}"#).error(400, null.clone(), -32600),
        // Legacy headers are ignored.
        Case::post("session id ignored", "tools/list", json!({})).set("mcp-session-id", "abc").set("last-event-id", "5").json(200, ok(json!({}))).no_reply_header("mcp-session-id"),
        // Limits.
        Case::raw("body over the limit", "tools/list", &format!(r#"{{"pad":"{}"}}"#, "x".repeat(70 << 10))).error(413, null.clone(), -32600),
        Case::raw("body at the limit", "echo", &{
            let mut body = String::from_utf8(request_body(1, "echo", json!({"pad": ""}))).unwrap();
            let pad = (64 << 10) - body.len();
            body = body.replacen(r#""pad":"""#, &format!(r#""pad":"{}""#, "x".repeat(pad)), 1);
            body
        })
        .json(200, json!({"id": 1})),
        Case::post("too many header fields", "tools/list", json!({}))
            .status(431)
            .tap(|case| {
                for i in 0..110 {
                    case.headers.push((format!("x-filler-{i}"), b"1".to_vec()));
                }
            }),
    ]
}

impl Case {
    fn tap(mut self, f: impl FnOnce(&mut Case)) -> Case {
        f(&mut self);
        self
    }
}

#[tokio::test]
async fn table() {
    let (handler, _log, _gate) = TestHandler::new();
    let server = HttpServer::bind(HttpServer::DEFAULT_ADDR, handler, table_config())
        .await
        .unwrap();
    let client = client();
    for case in cases() {
        check(&client, &server, case).await;
    }
    server.shutdown(Duration::from_secs(5)).await;
}

/// Starts a server with `config` and the test handler.
async fn start(
    config: HttpServerConfig,
) -> (RunningServer, support::Log, Arc<tokio::sync::Semaphore>) {
    support::serve(config).await
}

/// A POST for `method` with a streaming body, sent over its own connection, whose task the
/// caller can abort to drop the connection.
async fn open(
    server: &RunningServer,
    method: &str,
    body: ChannelBody,
) -> (
    hyper::client::conn::http1::SendRequest<ChannelBody>,
    tokio::task::JoinHandle<()>,
    Request<ChannelBody>,
) {
    let stream = TcpStream::connect(server.local_addr()).await.unwrap();
    let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    let task = tokio::spawn(async move {
        let _ = connection.await;
    });
    let mut request = Request::post("/mcp").header("host", server.local_addr().to_string());
    for (k, v) in standard_headers(method) {
        request = request.header(k, v);
    }
    (sender, task, request.body(body).unwrap())
}

/// [`open`] with a whole body: a request (id 1) for `method` with no params.
async fn open_full(
    server: &RunningServer,
    method: &str,
) -> (
    hyper::client::conn::http1::SendRequest<ChannelBody>,
    tokio::task::JoinHandle<()>,
    Request<ChannelBody>,
) {
    let body = full_body(request_body(1, method, json!({})));
    open(server, method, body).await
}

#[tokio::test]
async fn a_client_that_disconnects_before_the_reply_cancels_the_handler() {
    let (server, mut log, _gate) = start(HttpServerConfig::default()).await;
    let (mut sender, connection, request) = open_full(&server, "test/wait").await;
    let pending = tokio::spawn(async move { sender.send_request(request).await });
    assert_eq!(next_log(&mut log).await, "started test/wait");
    connection.abort();
    pending.abort();
    assert_eq!(next_log(&mut log).await, "cancelled test/wait");
    server.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_client_that_closes_its_stream_cancels_the_handler() {
    let (server, mut log, _gate) = start(HttpServerConfig::default()).await;
    let (mut sender, connection, request) = open_full(&server, "test/listen").await;
    let response = sender.send_request(request).await.unwrap();
    let (events, body) = first_sse_events(response).await;
    assert_eq!(
        events[0]["method"],
        "notifications/subscriptions/acknowledged"
    );
    assert_eq!(next_log(&mut log).await, "started test/listen");
    drop(body);
    connection.abort();
    assert_eq!(next_log(&mut log).await, "cancelled test/listen");
    server.shutdown(Duration::from_secs(5)).await;
}

/// A notification another task sends while the handler waits (nothing in the handler's own
/// polls, and nothing else to wake the request) opens the request's SSE stream.
#[tokio::test]
async fn a_notification_from_a_task_of_the_handler_opens_the_stream() {
    let (server, _log, _gate) = start(HttpServerConfig::default()).await;
    let (mut sender, connection, request) = open_full(&server, "test/relay").await;
    let response = tokio::time::timeout(Duration::from_secs(5), sender.send_request(request))
        .await
        .expect("the notification woke the request")
        .unwrap();
    let (events, body) = first_sse_events(response).await;
    assert_eq!(events[0]["params"]["relayed"], 1, "{events:?}");
    drop(body);
    connection.abort();
    server.shutdown(Duration::from_secs(5)).await;
}

/// Once a JSON reply went out, a notification a task of the handler sends later fails at
/// once: it neither waits on a channel nobody reads nor reaches anyone.
#[tokio::test]
async fn a_notification_after_a_json_reply_is_refused() {
    let (server, mut log, _gate) = start(HttpServerConfig::default()).await;
    let (mut sender, _connection, request) = open_full(&server, "test/late").await;
    let response = sender.send_request(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "application/json");
    let body = response.into_body().collect().await.unwrap().to_bytes();
    let reply: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(reply["result"]["late"], true);
    assert_eq!(next_log(&mut log).await, "late refused");
    server.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(start_paused = true)]
async fn quiet_streams_get_keep_alive_comments() {
    let config = HttpServerConfig::default().keep_alive_interval(Some(Duration::from_secs(15)));
    let (server, mut log, _gate) = start(config).await;
    let (mut sender, connection, request) = open_full(&server, "test/listen").await;
    let response = sender.send_request(request).await.unwrap();
    let mut body = response.into_body();
    let first = body.frame().await.unwrap().unwrap().into_data().unwrap();
    assert_eq!(sse_events(&first).len(), 1);
    assert_eq!(next_log(&mut log).await, "started test/listen");
    let before = tokio::time::Instant::now();
    for _ in 0..2 {
        let comment = body.frame().await.unwrap().unwrap().into_data().unwrap();
        assert_eq!(&comment[..], b": keep-alive\n\n");
    }
    assert_eq!(before.elapsed(), Duration::from_secs(30));
    drop(body);
    connection.abort();
    assert_eq!(next_log(&mut log).await, "cancelled test/listen");
    server.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn the_body_limit_is_enforced_while_the_body_streams() {
    let config = HttpServerConfig::default().max_body_bytes(1000);
    let (server, _log, _gate) = start(config).await;
    let (tx, body) = channel_body();
    let (mut sender, _connection, request) = open(&server, "tools/list", body).await;
    let reply = tokio::spawn(async move { sender.send_request(request).await });
    // 1200 bytes of a chunked body whose end never comes: the reply cannot wait for it.
    for _ in 0..2 {
        tx.send(Bytes::from(vec![b' '; 600])).await.unwrap();
    }
    let response = reply.await.unwrap().unwrap();
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let body: Value = serde_json::from_slice(&collect(response.into_body()).await).unwrap();
    assert_eq!(body["error"]["code"], -32600);
    drop(tx);
    server.shutdown(Duration::from_secs(5)).await;
}

/// Writes raw bytes on a fresh connection and reads until the server closes it.
async fn raw_exchange(server: &RunningServer, request: &[u8]) -> String {
    let mut stream = TcpStream::connect(server.local_addr()).await.unwrap();
    stream.write_all(request).await.unwrap();
    let mut reply = Vec::new();
    let _ = stream.read_to_end(&mut reply).await;
    String::from_utf8_lossy(&reply).into_owned()
}

fn raw_head(server: &RunningServer, content_length: usize) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\nmcp-protocol-version: 2026-07-28\r\n\
         mcp-method: tools/list\r\ncontent-length: {content_length}\r\n\r\n",
        server.local_addr()
    )
}

#[tokio::test]
async fn a_content_length_over_the_limit_is_refused_before_reading() {
    let config = HttpServerConfig::default().max_body_bytes(1000);
    let (server, _log, _gate) = start(config).await;
    // No body follows the head: the server must answer without waiting for one.
    let reply = raw_exchange(&server, raw_head(&server, 1 << 30).as_bytes()).await;
    assert_status(&reply, "413 Payload Too Large");
    server.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(start_paused = true)]
async fn a_body_that_stops_arriving_gets_408() {
    let config = HttpServerConfig::default().body_read_timeout(Duration::from_secs(7));
    let (server, _log, _gate) = start(config).await;
    let mut request = raw_head(&server, 100);
    request.push_str(r#"{"jsonrpc":"#);
    let reply = raw_exchange(&server, request.as_bytes()).await;
    assert_status(&reply, "408 Request Timeout");
    server.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(start_paused = true)]
async fn a_head_that_stops_arriving_closes_the_connection() {
    let config = HttpServerConfig::default().header_read_timeout(Duration::from_secs(3));
    let (server, _log, _gate) = start(config).await;
    let start = tokio::time::Instant::now();
    let reply = raw_exchange(&server, b"POST /mcp HTTP/1.1\r\nhost: localhost\r\n").await;
    assert!(
        reply.is_empty() || reply.starts_with("HTTP/1.1 408"),
        "{reply}"
    );
    assert!(start.elapsed() >= Duration::from_secs(3));
    server.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn requests_past_the_concurrency_limit_get_503() {
    let config = HttpServerConfig::default()
        .max_concurrent_requests(1)
        .retry_after(Duration::from_secs(2));
    let (server, mut log, gate) = start(config).await;
    let client = client();
    let post = |method: &str| {
        let mut request = Request::post(format!("http://{}/mcp", server.local_addr()));
        for (k, v) in standard_headers(method) {
            request = request.header(k, v);
        }
        request
            .body(Full::new(Bytes::from(request_body(1, method, json!({})))))
            .unwrap()
    };
    let blocked = tokio::spawn(client.request(post("test/block")));
    assert_eq!(next_log(&mut log).await, "started test/block");

    let refused = client.request(post("tools/list")).await.unwrap();
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(refused.headers()["retry-after"], "2");

    gate.add_permits(1);
    let done = blocked.await.unwrap().unwrap();
    assert_eq!(done.status(), StatusCode::OK);
    let body: Value = serde_json::from_slice(&collect(done.into_body()).await).unwrap();
    assert_eq!(body["result"]["released"], true);
    // The slot is free again.
    let again = client.request(post("tools/list")).await.unwrap();
    assert_eq!(again.status(), StatusCode::OK);
    server.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn shutdown_lets_in_flight_requests_finish() {
    let (server, mut log, gate) = start(HttpServerConfig::default()).await;
    let addr = server.local_addr();
    let client = client();
    let mut request = Request::post(format!("http://{addr}/mcp"));
    for (k, v) in standard_headers("test/block") {
        request = request.header(k, v);
    }
    let request = request
        .body(Full::new(Bytes::from(request_body(
            1,
            "test/block",
            json!({}),
        ))))
        .unwrap();
    let in_flight = tokio::spawn(client.request(request));
    assert_eq!(next_log(&mut log).await, "started test/block");

    let shutdown = tokio::spawn(server.shutdown(Duration::from_mins(1)));
    gate.add_permits(1);
    let response = in_flight.await.unwrap().unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let body: Value = serde_json::from_slice(&collect(response.into_body()).await).unwrap();
    assert_eq!(body["result"]["released"], true);
    shutdown.await.unwrap();
    // The listener is closed.
    assert!(TcpStream::connect(addr).await.is_err());
}

#[tokio::test(start_paused = true)]
async fn shutdown_cancels_what_outlasts_the_grace_period() {
    let (server, mut log, _gate) = start(HttpServerConfig::default()).await;
    let (mut sender, _connection, request) = open_full(&server, "test/listen").await;
    let response = sender.send_request(request).await.unwrap();
    assert_eq!(next_log(&mut log).await, "started test/listen");
    let start = tokio::time::Instant::now();
    let shutdown = tokio::spawn(server.shutdown(Duration::from_secs(10)));
    // After the grace period the token fires; the handler then ends its stream with a
    // result, which still reaches the client.
    let events = sse_events(&collect(response.into_body()).await);
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[1]["result"]["cancelled"], true);
    assert_eq!(next_log(&mut log).await, "cancelled test/listen");
    shutdown.await.unwrap();
    assert!(start.elapsed() >= Duration::from_secs(10));
}

#[tokio::test]
async fn the_endpoint_path_is_configurable() {
    let (server, _log, _gate) = start(HttpServerConfig::default().path("/rpc")).await;
    assert!(server.url().ends_with("/rpc"));
    let client = client();
    for (path, status) in [("/rpc", 200), ("/mcp", 404)] {
        let mut request = Request::post(format!("http://{}{path}", server.local_addr()));
        for (k, v) in standard_headers("tools/list") {
            request = request.header(k, v);
        }
        let request = request
            .body(Full::new(Bytes::from(request_body(
                1,
                "tools/list",
                json!({}),
            ))))
            .unwrap();
        assert_eq!(
            client.request(request).await.unwrap().status().as_u16(),
            status
        );
    }
    server.shutdown(Duration::from_secs(5)).await;
}

#[test]
fn a_relative_path_is_refused() {
    let (handler, _log, _gate) = TestHandler::new();
    let err = mcp_transport_http::McpService::new(handler, HttpServerConfig::default().path("mcp"))
        .unwrap_err();
    assert!(err.is_config());
}

#[tokio::test]
async fn a_head_at_the_size_limit_is_served_and_one_byte_more_gets_431() {
    const LIMIT: usize = 16 << 10;
    let (server, _log, _gate) = start(HttpServerConfig::default().max_head_bytes(LIMIT)).await;
    let body = request_body(1, "tools/list", json!({}));
    // The head is the request line and the header lines; its blank last line is not
    // counted. `filler` pads it to exactly `size` bytes.
    let request = |size: usize| {
        let head = raw_head(&server, body.len());
        let head = head.strip_suffix("\r\n").unwrap();
        let filler = size - head.len() - "x-filler: \r\n".len();
        let mut request = format!("{head}x-filler: {}\r\n\r\n", "f".repeat(filler)).into_bytes();
        assert_eq!(request.len() - 2, size);
        request.extend_from_slice(&body);
        request
    };
    let mut stream = TcpStream::connect(server.local_addr()).await.unwrap();
    stream.write_all(&request(LIMIT)).await.unwrap();
    let mut reply = vec![0; 4096];
    let n = stream.read(&mut reply).await.unwrap();
    let reply = String::from_utf8_lossy(&reply[..n]);
    assert_status(&reply, "200 OK");

    let reply = raw_exchange(&server, &request(LIMIT + 1)).await;
    assert_status(&reply, "431 Request Header Fields Too Large");
    assert!(reply.contains("connection: close\r\n"), "{reply}");
    server.shutdown(Duration::from_secs(5)).await;
}

/// A result of any size is one exact JSON body with its `Content-Length`: small results
/// go out as one frame, large ones (16 KiB on) as the frame's pieces, on the same
/// keep-alive connection one after the other.
#[tokio::test]
async fn results_on_both_sides_of_the_split_size_arrive_whole() {
    let (server, _log, _gate) = start(HttpServerConfig::default()).await;
    let client = client();
    for (id, len) in [
        (1, 10),
        (2, 16_300),
        (3, 16_384),
        (4, 16_500),
        (5, 200_000),
        (6, 5),
    ] {
        // The params come back as the result; their size is about the text's.
        let params = json!({ "text": "é\"x".repeat(len / 4) });
        let body = request_body(id, "echo", params);
        let mut request = Request::post(format!("http://{}/mcp", server.local_addr()));
        for (k, v) in standard_headers("echo") {
            request = request.header(k, v);
        }
        let response = client
            .request(request.body(Full::new(Bytes::from(body.clone()))).unwrap())
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let length: usize = response.headers()["content-length"]
            .to_str()
            .unwrap()
            .parse()
            .unwrap();
        let reply = collect(response.into_body()).await;
        assert_eq!(reply.len(), length, "id {id}");
        let sent: Value = serde_json::from_slice(&body).unwrap();
        let expected = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{}}}"#,
            sent["params"]
        );
        let reply: Value = serde_json::from_slice(&reply).unwrap();
        assert_eq!(
            reply,
            serde_json::from_str::<Value>(&expected).unwrap(),
            "id {id}"
        );
    }
    server.shutdown(Duration::from_secs(5)).await;
}

/// The status line of a raw `GET path` with `host` (HTTP/1.0: no connection reuse).
async fn raw_get(server: &RunningServer, path: &str, host: &str) -> String {
    let mut stream = TcpStream::connect(server.local_addr()).await.unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).await.unwrap();
    reply.lines().next().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn health_checks_answer_liveness_and_readiness_before_any_other_check() {
    let (server, _log, _gate) = start(HttpServerConfig::default()).await;
    // A load balancer probes by address, not by a loopback name: the host check does not
    // apply to the health checks (and they say nothing but a status).
    assert_eq!(
        raw_get(&server, "/healthz", "10.0.0.7:8080").await,
        "HTTP/1.1 200 OK"
    );
    assert_eq!(
        raw_get(&server, "/readyz", "10.0.0.7:8080").await,
        "HTTP/1.1 200 OK"
    );
    assert!(server.is_ready());
    server.set_ready(false);
    assert_eq!(
        raw_get(&server, "/readyz", "localhost").await,
        "HTTP/1.1 503 Service Unavailable"
    );
    // Alive, and still serving, while unready.
    assert_eq!(
        raw_get(&server, "/healthz", "localhost").await,
        "HTTP/1.1 200 OK"
    );
    assert_eq!(
        raw_get(&server, "/mcp", "localhost").await,
        "HTTP/1.1 405 Method Not Allowed"
    );
    server.set_ready(true);
    assert_eq!(
        raw_get(&server, "/readyz", "localhost").await,
        "HTTP/1.1 200 OK"
    );
    server.shutdown(Duration::from_secs(1)).await;

    // Turned off: the paths are the endpoint's, which knows nothing of them.
    let (server, _log, _gate) = start(HttpServerConfig::default().health_checks(false)).await;
    assert_eq!(
        raw_get(&server, "/healthz", "localhost").await,
        "HTTP/1.1 404 Not Found"
    );
    assert!(!server.is_ready());
    server.shutdown(Duration::from_secs(1)).await;
}
