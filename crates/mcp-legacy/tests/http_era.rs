//! The dual-era server on Streamable HTTP, on the wire: legacy sessions (lifecycle, caps,
//! expiry, version header), server-to-client requests on a request's stream, resumption
//! with `Last-Event-ID`, the GET stream, 2025-03-26 batches, and modern requests served
//! beside them on the same endpoint.

use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use mcp_legacy::http::{DualEraHttp, LegacyHttpConfig};
use mcp_server::{Server, ToolDef};
use mcp_test_support::http::{
    HttpClient, SseEvent, SseEvents, client, json_body, send, session_id,
};
use mcp_test_support::tools;
use mcp_transport_http::{HttpServer, HttpServerConfig, RunningServer};
use mcp_types::{CallToolResult, ElicitRequestFormParams, ElicitRequestParams, LoggingLevel};
use serde_json::{Value, json};

fn server() -> Server {
    Server::builder("dual-http", "1.0.0")
        .tool(tools::echo(""))
        .tool(ToolDef::new("ask", json!({"type": "object"}), |_args, cx| async move {
            let form: ElicitRequestFormParams = serde_json::from_value(json!({
                "message": "Your name?",
                "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
            }))?;
            let answer = cx.elicit("name", ElicitRequestParams::ElicitRequestForm(form))?;
            let name = serde_json::to_value(&answer.content)?;
            Ok(CallToolResult::text(format!(
                "hello {}",
                name["name"].as_str().unwrap_or_default()
            )))
        }))
        .tool(ToolDef::new("slow", json!({"type": "object"}), |_args, cx| async move {
            cx.log(LoggingLevel::Info, json!("started")).await;
            tokio::time::sleep(Duration::from_millis(300)).await;
            Ok(CallToolResult::text("slow done"))
        }))
        .build()
        .unwrap()
}

struct Fixture {
    running: RunningServer,
    client: HttpClient,
}

/// [`start`], and a 2025-11-25 session on it: its id.
async fn session(legacy: LegacyHttpConfig) -> (Fixture, Server, String) {
    let (f, core) = start(legacy).await;
    let id = f.initialize("2025-11-25").await;
    (f, core, id)
}

/// [`session`] on a server whose sessions expire after `timeout` idle.
async fn idle_session(timeout: Duration) -> (Fixture, Server, String) {
    session(LegacyHttpConfig::default().session_idle_timeout(timeout)).await
}

async fn start(legacy: LegacyHttpConfig) -> (Fixture, Server) {
    let core = server();
    let running = DualEraHttp::bind(
        HttpServer::DEFAULT_ADDR,
        core.clone(),
        HttpServerConfig::default(),
        legacy,
    )
    .await
    .unwrap();
    let client = client();
    (Fixture { running, client }, core)
}

impl Fixture {
    async fn send(&self, method: &str, headers: &[(&str, &str)], body: &str) -> Response<Incoming> {
        send(
            &self.client,
            method,
            self.running.url(),
            headers,
            body.to_owned(),
        )
        .await
    }

    /// Asserts that `echo` answers in `session` (request `id`): the reply.
    async fn echoes(&self, session: &str, id: i64) -> Value {
        let reply = json_body(self.post(session, &call(id, "echo")).await).await;
        assert_eq!(reply["result"]["content"][0]["text"], "hi", "{reply}");
        reply
    }

    /// Asserts that `session` is unknown (request `id`).
    async fn unknown(&self, session: &str, id: i64) {
        let reply = self.post(session, &call(id, "echo")).await;
        assert_eq!(reply.status(), StatusCode::NOT_FOUND, "{session}");
    }

    async fn post(&self, session: &str, body: &str) -> Response<Incoming> {
        self.send("POST", &[("mcp-session-id", session)], body)
            .await
    }

    /// Makes a request, which sweeps the idle sessions (at most once a second).
    async fn sweep(&self) {
        let _ = self.initialize("2025-11-25").await;
    }

    /// Resumes `session`'s stream after the event `last_event_id` (a GET).
    async fn resume(&self, session: &str, last_event_id: &str) -> Response<Incoming> {
        self.send(
            "GET",
            &[
                ("mcp-session-id", session),
                ("last-event-id", last_event_id),
            ],
            "",
        )
        .await
    }

    /// A 2025-11-25 session whose log level is `info` (request 1 sets it): its id.
    async fn logging_session(&self) -> String {
        let id = self.initialize("2025-11-25").await;
        let set_level =
            r#"{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"info"}}"#;
        assert_eq!(
            json_body(self.post(&id, set_level).await).await["result"],
            json!({})
        );
        id
    }

    async fn initialize(&self, version: &str) -> String {
        let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": version,
            "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "wire", "version": "1"}
        }})
        .to_string();
        let response = self.send("POST", &[], &body).await;
        assert_eq!(response.status(), StatusCode::OK);
        let id = session_id(&response);
        let result = json_body(response).await;
        assert_eq!(result["result"]["protocolVersion"], version);
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert_eq!(
            self.post(&id, initialized).await.status(),
            StatusCode::ACCEPTED
        );
        id
    }
}

fn call(id: i64, name: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": name, "arguments": {"text": "hi"}}})
    .to_string()
}

#[tokio::test]
async fn a_legacy_session_is_served_by_the_modern_handlers_and_ends_with_delete() {
    let (f, _core, id) = session(LegacyHttpConfig::default()).await;
    assert_eq!(id.len(), 32, "128 random bits in hex: {id}");
    assert!(id.bytes().all(|b| b.is_ascii_hexdigit()));
    let other = f.initialize("2025-06-18").await;
    assert_ne!(id, other);

    let reply = f.echoes(&id, 1).await;
    assert!(reply["result"].get("resultType").is_none(), "{reply}");

    let ping = json_body(
        f.post(&id, r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#)
            .await,
    )
    .await;
    assert_eq!(ping["result"], json!({}));

    let gone = f.send("DELETE", &[("mcp-session-id", &id)], "").await;
    assert_eq!(gone.status(), StatusCode::OK);
    let after = f.post(&id, &call(3, "echo")).await;
    assert_eq!(after.status(), StatusCode::NOT_FOUND);
    assert_eq!(json_body(after).await["error"]["code"], -32001);
    // The other session is untouched.
    f.echoes(&other, 4).await;
}

#[tokio::test]
async fn unknown_sessions_bad_versions_and_the_session_cap_are_refused() {
    let (f, _core) = start(LegacyHttpConfig::default().max_sessions(1)).await;
    let unknown = f
        .post("0123456789abcdef0123456789abcdef", &call(1, "echo"))
        .await;
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);

    let id = f.initialize("2025-11-25").await;
    // An unknown version, and the modern one, are refused in a legacy session.
    for version in ["2099-01-01", "2026-07-28"] {
        let headers = [
            ("mcp-session-id", id.as_str()),
            ("mcp-protocol-version", version),
        ];
        let reply = f.send("POST", &headers, &call(1, "echo")).await;
        assert_eq!(reply.status(), StatusCode::BAD_REQUEST, "{version}");
    }

    let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "second", "version": "1"}}})
    .to_string();
    // The one session is busy (its GET stream is open), so no place can be made.
    let stream = f.send("GET", &[("mcp-session-id", &id)], "").await;
    assert_eq!(stream.status(), StatusCode::OK);
    let full = f.send("POST", &[], &body).await;
    assert_eq!(full.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(full.headers().contains_key("retry-after"));

    // A refused request allocated nothing: the one session still works.
    f.echoes(&id, 2).await;
    drop(stream);
}

#[tokio::test]
async fn a_session_idle_less_than_its_timeout_is_kept() {
    // The sessions' idle times are real time (the server's clock is std's), so the margins
    // are whole seconds: the old session is idle at least 4.1 s of its 4 s when the sweep
    // comes (sleeps only ever last longer), the recent one 2 s and whatever the machine
    // adds, which may be up to 2 s before the test fails wrongly.
    let (f, _core, old) = idle_session(Duration::from_secs(4)).await;
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let recent = f.initialize("2025-11-25").await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    // More than a second since the last sweep: the old session expires, which shows the
    // sweep ran; the recent one stays.
    f.sweep().await;
    f.unknown(&old, 1).await;
    f.echoes(&recent, 2).await;
}

#[tokio::test]
async fn an_idle_session_expires() {
    let (f, _core, id) = idle_session(Duration::from_millis(100)).await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    f.sweep().await;
    f.unknown(&id, 1).await;
}

#[tokio::test]
async fn input_required_becomes_an_elicitation_request_on_the_calls_stream() {
    let (f, _core, id) = session(LegacyHttpConfig::default()).await;
    let mut events = SseEvents::checked(f.post(&id, &call(7, "ask")).await);
    let (priming_id, priming) = events.next().await.unwrap().into_parts();
    assert!(priming.is_empty(), "a priming event first");
    assert!(priming_id.unwrap().ends_with("-0"));

    let (_, ask) = events.message().await;
    assert_eq!(ask["method"], "elicitation/create");
    assert_eq!(ask["params"]["message"], "Your name?");
    let done = answer_ada(&f, &id, &ask, &mut events).await;
    assert_eq!(done["id"], 7);
    assert!(
        events.next().await.is_none(),
        "the stream ends after the response"
    );
}

#[tokio::test]
async fn a_broken_stream_resumes_after_the_last_event_id() {
    let (f, _core) = start(LegacyHttpConfig::default()).await;
    let id = f.logging_session().await;

    let mut events = SseEvents::checked(f.post(&id, &call(2, "slow")).await);
    let _priming = events.next().await.unwrap().into_parts();
    let (log_id, log) = events.message().await;
    assert_eq!(log["method"], "notifications/message");
    // The connection breaks before the response.
    drop(events);

    let resumed = f.resume(&id, &log_id).await;
    assert_eq!(resumed.status(), StatusCode::OK);
    let mut events = SseEvents::checked(resumed);
    let (_, done) = events.message().await;
    assert_eq!(done["id"], 2, "the response, not the log again: {done}");
    assert_eq!(done["result"]["content"][0]["text"], "slow done");

    let unknown = f.resume(&id, "999-1").await;
    assert_eq!(unknown.status(), StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn the_get_stream_carries_list_changes_and_is_one_per_session() {
    let (f, core) = start(LegacyHttpConfig::default()).await;
    let id = f.initialize("2025-11-25").await;
    let mut events = SseEvents::checked(f.send("GET", &[("mcp-session-id", &id)], "").await);
    let (_, priming) = events.next().await.unwrap().into_parts();
    assert!(priming.is_empty());
    let second = f.send("GET", &[("mcp-session-id", &id)], "").await;
    assert_eq!(second.status(), StatusCode::CONFLICT);

    core.add_tool(ToolDef::new(
        "late",
        json!({"type": "object"}),
        |_a, _c| async move { Ok(CallToolResult::text("late")) },
    ))
    .unwrap();
    let (_, changed) = events.message().await;
    assert_eq!(changed["method"], "notifications/tools/list_changed");
    assert!(changed.get("params").is_none(), "untagged: {changed}");
}

#[tokio::test]
async fn batches_are_for_2025_03_26_sessions_only() {
    let (f, _core) = start(LegacyHttpConfig::default()).await;
    let old = f.initialize("2025-03-26").await;
    let batch = format!(
        "[{},{}]",
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
        call(2, "echo")
    );
    let mut events = SseEvents::checked(f.post(&old, &batch).await);
    let mut ids = vec![
        events.message().await.1["id"].clone(),
        events.message().await.1["id"].clone(),
    ];
    ids.sort_by_key(Value::as_i64);
    assert_eq!(ids, [json!(1), json!(2)]);

    // Malformed elements are answered each with its error, on one stream that ends.
    let bad = r#"[{"jsonrpc":"2.0","id":5},{"jsonrpc":"2.0","id":6,"method":7}]"#;
    let mut events = SseEvents::checked(f.post(&old, bad).await);
    let mut codes = Vec::new();
    while let Some((_, data)) = events.next().await.map(SseEvent::into_parts) {
        let reply: Value = serde_json::from_str(&data).unwrap();
        codes.push(reply["error"]["code"].clone());
    }
    assert_eq!(codes, [json!(-32600), json!(-32600)]);

    let new = f.initialize("2025-11-25").await;
    let refused = f.post(&new, &batch).await;
    assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn modern_requests_share_the_endpoint() {
    let (f, _core) = start(LegacyHttpConfig::default()).await;
    // A modern request (id 1, `_meta` in its params, the modern headers) of `method`.
    let modern = async |method: &str| {
        let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}});
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": {"_meta": meta}});
        let headers = [
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", method),
        ];
        f.send("POST", &headers, &body.to_string()).await
    };
    let reply = modern("tools/list").await;
    assert_eq!(reply.status(), StatusCode::OK);
    assert!(!reply.headers().contains_key("mcp-session-id"));
    assert_eq!(json_body(reply).await["result"]["resultType"], "complete");

    // `initialize` with modern `_meta` is a modern request for a removed method.
    let reply = modern("initialize").await;
    assert_eq!(reply.status(), StatusCode::NOT_FOUND);
    assert_eq!(json_body(reply).await["error"]["code"], -32601);

    // GET without a session is the modern endpoint's 405.
    let get = f.send("GET", &[], "").await;
    assert_eq!(get.status(), StatusCode::METHOD_NOT_ALLOWED);
}

#[tokio::test]
async fn a_2025_11_25_client_polls_a_stream_the_server_closes() {
    let config = LegacyHttpConfig::default()
        .close_streams_after(Some(Duration::from_millis(100)))
        .retry(Some(Duration::from_millis(10)));
    let (f, _core) = start(config).await;
    let id = f.logging_session().await;

    let mut events = SseEvents::checked(f.post(&id, &call(5, "slow")).await);
    let mut last = String::new();
    let mut seen = Vec::new();
    let mut polls = 0;
    // The server ends the connection before the 300 ms tool is done, not the stream;
    // the client polls with the last id it saw until the response arrives.
    loop {
        while let Some((event_id, data)) = events.next().await.map(SseEvent::into_parts) {
            last = event_id.expect("every event has an id");
            if !data.is_empty() {
                seen.push(serde_json::from_str::<Value>(&data).unwrap());
            }
        }
        if seen.last().is_some_and(|m| m["id"] == 5) {
            break;
        }
        let resumed = f.resume(&id, &last).await;
        events = SseEvents::checked(resumed);
        polls += 1;
    }
    assert!(polls >= 1, "the server closed the first connection early");
    let methods: Vec<&Value> = seen.iter().map(|m| &m["method"]).collect();
    assert_eq!(
        methods,
        [&json!("notifications/message"), &Value::Null],
        "{seen:?}"
    );
    assert_eq!(seen[1]["result"]["content"][0]["text"], "slow done");
}

#[cfg(feature = "http-sse")]
#[tokio::test]
async fn the_2024_11_05_transport_opens_with_an_endpoint_event_and_ends_with_its_stream() {
    let (f, _core) = start(LegacyHttpConfig::default()).await;
    let base = f.running.url().trim_end_matches("/mcp").to_owned();
    let request = Request::get(format!("{base}/sse"))
        .header("accept", "text/event-stream")
        .body(Full::new(Bytes::new()))
        .unwrap();
    let response = f.client.request(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let mut body = response.into_body();
    let first = body.frame().await.unwrap().unwrap().into_data().unwrap();
    let first = std::str::from_utf8(&first).unwrap().to_owned();
    let endpoint = first
        .strip_prefix("event: endpoint\ndata: ")
        .and_then(|rest| rest.strip_suffix("\n\n"))
        .unwrap_or_else(|| panic!("an endpoint event first: {first:?}"))
        .to_owned();
    assert!(endpoint.starts_with("/messages?sessionId="), "{endpoint}");

    let post = |body: String| {
        let request = Request::post(format!("{base}{endpoint}"))
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(body)))
            .unwrap();
        f.client.request(request)
    };
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2024-11-05", "capabilities": {},
        "clientInfo": {"name": "old", "version": "1"}}});
    assert_eq!(
        post(init.to_string()).await.unwrap().status(),
        StatusCode::ACCEPTED
    );
    // The answer comes on the stream.
    let mut events = SseEvents::from_body(body);
    let (_, reply) = events.message().await;
    assert_eq!(reply["id"], 1);
    assert_eq!(reply["result"]["protocolVersion"], "2024-11-05");
    assert_eq!(
        post(call(2, "echo")).await.unwrap().status(),
        StatusCode::ACCEPTED
    );
    let (_, reply) = events.message().await;
    assert_eq!(reply["result"]["content"][0]["text"], "hi");

    // Closing the stream ends the session, once the server has seen the connection go:
    // posts are accepted until then, and 404 from then on.
    drop(events);
    let mut id = 3;
    let ended = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let status = post(call(id, "echo")).await.unwrap().status();
            if status != StatusCode::ACCEPTED {
                return status;
            }
            id += 1;
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the session ended within 10 s of its stream closing");
    assert_eq!(ended, StatusCode::NOT_FOUND);
    let unknown = Request::post(format!("{base}/messages?sessionId=nope"))
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(call(4, "echo"))))
        .unwrap();
    assert_eq!(
        f.client.request(unknown).await.unwrap().status(),
        StatusCode::NOT_FOUND
    );
}

/// Opens a call of `ask` in `session` and reads up to its elicitation request.
async fn asking(f: &Fixture, session: &str, id: i64) -> (SseEvents, Value) {
    let response = f.post(session, &call(id, "ask")).await;
    assert_eq!(response.status(), StatusCode::OK);
    let mut events = SseEvents::checked(response);
    let (_, ask) = events.message().await;
    (events, ask)
}

/// Answers the elicitation `ask` in `session` with the name Ada, and asserts that its
/// call, on `events`, then completes with the greeting: the response.
async fn answer_ada(f: &Fixture, session: &str, ask: &Value, events: &mut SseEvents) -> Value {
    assert_eq!(
        f.post(session, &answer(ask)).await.status(),
        StatusCode::ACCEPTED
    );
    let (_, done) = events.message().await;
    assert_eq!(done["result"]["content"][0]["text"], "hello Ada");
    done
}

fn answer(ask: &Value) -> String {
    json!({"jsonrpc": "2.0", "id": ask["id"],
        "result": {"action": "accept", "content": {"name": "Ada"}}})
    .to_string()
}

#[tokio::test]
async fn request_streams_per_session_are_capped() {
    let (f, _core, id) = session(LegacyHttpConfig::default().max_streams_per_session(2)).await;
    // At the limit: two calls in the session, each on its own open stream.
    let (mut first, ask) = asking(&f, &id, 1).await;
    assert_eq!(ask["method"], "elicitation/create");
    let (_second, ask2) = asking(&f, &id, 2).await;
    assert_eq!(ask2["method"], "elicitation/create");
    // Past it: a third request gets 503 (a notification is still accepted).
    let refused = f.post(&id, &call(3, "echo")).await;
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    // A stream that ends makes room.
    answer_ada(&f, &id, &ask, &mut first).await;
    assert!(first.next().await.is_none());
    f.echoes(&id, 4).await;
}

#[tokio::test]
async fn server_requests_awaiting_answers_are_capped() {
    let mut legacy = LegacyHttpConfig::default();
    legacy.max_pending_requests = 1;
    let (f, _core, id) = session(legacy).await;
    // At the limit: one elicitation waits for its answer.
    let (mut first, ask) = asking(&f, &id, 1).await;
    assert_eq!(ask["method"], "elicitation/create");
    // Past it: the next call's elicitation is never sent; that call fails at once, its
    // only message the response (so a JSON reply).
    let failed = json_body(f.post(&id, &call(2, "ask")).await).await;
    assert_eq!(failed["id"], 2, "{failed}");
    assert!(
        failed["error"].is_object() || failed["result"]["isError"] == true,
        "{failed}"
    );
    // The first is unaffected.
    answer_ada(&f, &id, &ask, &mut first).await;
}

#[tokio::test]
async fn a_server_request_unanswered_past_its_time_fails_the_call() {
    let config = LegacyHttpConfig::default().ask_timeout(Duration::from_millis(300));
    let (f, _core, id) = session(config).await;
    // Inside the time: answered at once, the call completes (see also
    // `input_required_becomes_an_elicitation_request_on_the_calls_stream`).
    let (mut answered, ask) = asking(&f, &id, 1).await;
    answer_ada(&f, &id, &ask, &mut answered).await;
    // Past it: nobody answers, and the call fails after the timeout.
    let started = std::time::Instant::now();
    let (mut unanswered, ask) = asking(&f, &id, 2).await;
    assert_eq!(ask["method"], "elicitation/create");
    let (_, failed) = unanswered.message().await;
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert_eq!(failed["id"], 2, "{failed}");
    assert!(
        failed["error"].is_object() || failed["result"]["isError"] == true,
        "{failed}"
    );
}

#[tokio::test]
async fn the_dual_era_endpoint_keeps_the_connection_limit() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    // `DualEraHttp::bind` (what `conformance-server` and `mcp serve-example` run) goes
    // through the same accept loop as `HttpServer`: one connection open, the next waits.
    let running = DualEraHttp::bind(
        HttpServer::DEFAULT_ADDR,
        server(),
        HttpServerConfig::default().max_connections(1),
        LegacyHttpConfig::default(),
    )
    .await
    .unwrap();
    let addr = running.local_addr();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let read_reply = |mut stream: tokio::net::TcpStream| async move {
        let mut buf = vec![0; 4096];
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf))
            .await
            .expect("an answer in time")
            .unwrap();
        (String::from_utf8_lossy(&buf[..n]).into_owned(), stream)
    };
    let mut first = tokio::net::TcpStream::connect(addr).await.unwrap();
    first.write_all(request.as_bytes()).await.unwrap();
    let (reply, first) = read_reply(first).await;
    assert!(reply.starts_with("HTTP/1.1 200 OK\r\n"), "{reply}");

    // The first connection stays open (keep-alive): the second is not served.
    let mut second = tokio::net::TcpStream::connect(addr).await.unwrap();
    second.write_all(request.as_bytes()).await.unwrap();
    let mut byte = [0; 1];
    assert!(
        tokio::time::timeout(Duration::from_millis(300), second.read(&mut byte))
            .await
            .is_err(),
        "the connection past the limit was answered"
    );
    drop(first);
    let (reply, _second) = read_reply(second).await;
    assert!(reply.starts_with("HTTP/1.1 200 OK\r\n"), "{reply}");
    running.shutdown(Duration::from_secs(1)).await;
}

/// Served with the default configuration, the endpoint checks what its server registered:
/// the `Mcp-Param-*` header of a tool's `x-mcp-header` annotation, and `Mcp-Name` on the
/// Tasks extension's methods when the server serves tasks. A server without tasks leaves
/// `tasks/get` to the core.
#[tokio::test]
async fn the_endpoint_checks_the_headers_its_server_registered() {
    let sql = ToolDef::new(
        "sql",
        json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"}
        }}),
        |_args, _cx| async move { Ok(CallToolResult::text("ran")) },
    );
    let with_tasks = Server::builder("routed", "1.0.0")
        .tool(Ok(sql.clone()))
        .tasks(mcp_server::tasks::Tasks::in_memory())
        .build()
        .unwrap();
    let without_tasks = Server::builder("plain", "1.0.0").tool(sql).build().unwrap();
    for (core, serves_tasks) in [(with_tasks, true), (without_tasks, false)] {
        let running = DualEraHttp::bind(
            HttpServer::DEFAULT_ADDR,
            core,
            HttpServerConfig::default(),
            LegacyHttpConfig::default(),
        )
        .await
        .unwrap();
        let f = Fixture {
            running,
            client: client(),
        };
        let modern = async |method: &str, params: Value, extra: &[(&str, &str)]| {
            let mut params = params;
            params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}});
            let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
            let mut headers = vec![
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", method),
            ];
            headers.extend_from_slice(extra);
            f.send("POST", &headers, &body.to_string()).await
        };
        let call = json!({"name": "sql", "arguments": {"region": "eu"}});
        let reply = modern("tools/call", call.clone(), &[("mcp-name", "sql")]).await;
        assert_eq!(reply.status(), StatusCode::BAD_REQUEST);
        assert_eq!(json_body(reply).await["error"]["code"], -32020);
        let headers = [("mcp-name", "sql"), ("mcp-param-region", "eu")];
        let reply = modern("tools/call", call, &headers).await;
        assert_eq!(reply.status(), StatusCode::OK);
        assert_eq!(
            json_body(reply).await["result"]["content"][0]["text"],
            "ran"
        );

        let reply = modern("tasks/get", json!({"taskId": "t-1"}), &[]).await;
        let status = reply.status();
        let code = json_body(reply).await["error"]["code"].clone();
        if serves_tasks {
            assert_eq!((status, code), (StatusCode::BAD_REQUEST, json!(-32020)));
        } else {
            assert_ne!(code, json!(-32020), "no tasks, no Mcp-Name rule for them");
        }
        f.running.shutdown(Duration::from_secs(1)).await;
    }
}
