//! Legacy sessions that no single client can exhaust, on the wire (`DualEraHttp` on
//! 127.0.0.1): the caps (all clients, per principal, per address of unauthenticated
//! clients) with eviction of idle sessions, the grace period of a session that is never
//! completed, the server's concurrency limit over session requests and HTTP+SSE
//! requests, decisions taken from the head before the body, classification by protocol
//! version first, and `Last-Event-ID` values no arithmetic may trust.
//!
//! Clients from another address bind their socket to 127.0.0.2 or 127.0.0.3: on Linux
//! the whole of 127.0.0.0/8 is loopback.

#![cfg(feature = "http")]

mod hostile_common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt as _;
use http::{HeaderMap, Request, Response, StatusCode};
use http_body_util::Full;
use hyper::body::Incoming;
use mcp_jsonrpc::Principal;
use mcp_legacy::http::{DualEraHttp, LegacyHttpConfig};
use mcp_server::{Server, ToolDef};
use mcp_test_support::http::{self as raw_http, HttpClient, SseEvents, client_from, json_body};
use mcp_test_support::tools;
use mcp_transport_http::{
    AuthenticateFuture, Authenticator, HttpServer, HttpServerConfig, RunningServer,
};
use mcp_types::CallToolResult;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::sync::{Semaphore, watch};

use hostile_common::{count_panics, meta, panics};

/// What the tools share with the test: `hold` counts itself in `started`, then waits
/// for a permit of `gate`.
#[derive(Clone)]
struct Gate {
    gate: Arc<Semaphore>,
    started: Arc<watch::Sender<usize>>,
}

impl Gate {
    fn new() -> Self {
        Gate {
            gate: Arc::new(Semaphore::new(0)),
            started: Arc::new(watch::Sender::new(0)),
        }
    }

    /// Waits until `count` calls of `hold` have started (an event the tool sends, not a
    /// poll); a failure after 10 s.
    async fn started(&self, count: usize) {
        let mut started = self.started.subscribe();
        tokio::time::timeout(Duration::from_secs(10), started.wait_for(|n| *n >= count))
            .await
            .unwrap_or_else(|_| panic!("waited for {count} held calls"))
            .unwrap();
    }
}

fn server(gate: &Gate) -> Server {
    let held = gate.clone();
    Server::builder("sessions", "1.0.0")
        .tool(tools::echo("hi"))
        .tool(ToolDef::new(
            "hold",
            json!({"type": "object"}),
            move |_args, _cx| {
                let held = held.clone();
                async move {
                    held.started.send_modify(|n| *n += 1);
                    let _permit = held.gate.acquire().await;
                    Ok(CallToolResult::text("released"))
                }
            },
        ))
        .build()
        .unwrap()
}

struct Fixture {
    service: DualEraHttp<Server>,
    running: RunningServer,
    gate: Gate,
    /// A client from 127.0.0.1.
    client: HttpClient,
}

async fn start(http: HttpServerConfig, legacy: LegacyHttpConfig) -> Fixture {
    let gate = Gate::new();
    let service = DualEraHttp::new(server(&gate), http.clone(), legacy).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let running = HttpServer::serve_endpoint(listener, service.clone(), &http).unwrap();
    Fixture {
        service,
        running,
        gate,
        client: client_from([127, 0, 0, 1]),
    }
}

/// [`start`] with the default HTTP configuration.
async fn start_legacy(legacy: LegacyHttpConfig) -> Fixture {
    start(HttpServerConfig::default(), legacy).await
}

/// [`start`] with the default limits and a grace period of `grace` for sessions never
/// completed.
async fn start_grace(grace: Duration) -> Fixture {
    start_legacy(LegacyHttpConfig::default().session_grace(grace)).await
}

fn initialize_body(name: &str) -> String {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": name, "version": "1"}}})
    .to_string()
}

/// [`initialize_body`] of a 2024-11-05 client, for the HTTP+SSE transport.
fn sse_initialize_body(name: &str) -> String {
    initialize_body(name).replace("2025-11-25", "2024-11-05")
}

fn call(id: i64, tool: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": {}}})
    .to_string()
}

/// Polls `check` until it holds; a failure after 10 s.
async fn until(what: &str, mut check: impl AsyncFnMut() -> bool) {
    let started = std::time::Instant::now();
    while !check().await {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "waited for {what}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

impl Fixture {
    fn base(&self) -> String {
        format!("http://{}", self.running.local_addr())
    }

    async fn send_with(
        &self,
        client: &HttpClient,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: String,
    ) -> Response<Incoming> {
        let url = format!("{}{path}", self.base());
        raw_http::send(client, method, &url, headers, body).await
    }

    async fn send(
        &self,
        method: &str,
        headers: &[(&str, &str)],
        body: String,
    ) -> Response<Incoming> {
        self.send_with(&self.client, method, "/mcp", headers, body)
            .await
    }

    /// `initialize` from `client` with `headers`: the session id, or the refusal's status.
    async fn try_initialize(
        &self,
        client: &HttpClient,
        headers: &[(&str, &str)],
    ) -> Result<String, StatusCode> {
        let response = self
            .send_with(client, "POST", "/mcp", headers, initialize_body("c"))
            .await;
        let status = response.status();
        let id = response
            .headers()
            .get("mcp-session-id")
            .map(|id| id.to_str().unwrap().to_owned());
        let retry_after = response.headers().contains_key("retry-after");
        let body = json_body(response).await;
        match id {
            Some(id) if status == StatusCode::OK => {
                assert_eq!(body["result"]["protocolVersion"], "2025-11-25");
                Ok(id)
            }
            _ => {
                if status == StatusCode::SERVICE_UNAVAILABLE {
                    assert!(retry_after, "a 503 says when to retry");
                }
                Err(status)
            }
        }
    }

    /// A completed session of `client` (`initialize`, then `notifications/initialized`).
    async fn session(&self, client: &HttpClient, headers: &[(&str, &str)]) -> String {
        let id = self
            .try_initialize(client, headers)
            .await
            .expect("a session");
        self.complete(client, &id, headers).await;
        id
    }

    async fn complete(&self, client: &HttpClient, id: &str, headers: &[(&str, &str)]) {
        let mut headers = headers.to_vec();
        headers.push(("mcp-session-id", id));
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        let response = self
            .send_with(client, "POST", "/mcp", &headers, initialized.to_owned())
            .await;
        assert_eq!(response.status(), StatusCode::ACCEPTED);
    }

    /// `tools/call` of `tool` in session `id`: the response.
    async fn call_in(
        &self,
        client: &HttpClient,
        id: &str,
        headers: &[(&str, &str)],
        tool: &str,
    ) -> Response<Incoming> {
        let mut headers = headers.to_vec();
        headers.push(("mcp-session-id", id));
        self.send_with(client, "POST", "/mcp", &headers, call(5, tool))
            .await
    }

    /// Initializes from `client` until a place is made (once the server has seen a stream
    /// close): the new session, completed.
    async fn session_eventually(&self, client: &HttpClient, headers: &[(&str, &str)]) -> String {
        let started = std::time::Instant::now();
        loop {
            match self.try_initialize(client, headers).await {
                Ok(id) => {
                    self.complete(client, &id, headers).await;
                    return id;
                }
                Err(StatusCode::SERVICE_UNAVAILABLE)
                    if started.elapsed() < Duration::from_secs(10) =>
                {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                Err(status) => panic!("no place was made: {status}"),
            }
        }
    }

    /// Starts `tools/call` of `tool` with request id `request` in session `id`, on a task
    /// of its own: the reply.
    fn spawn_call(&self, id: &str, request: i64, tool: &str) -> tokio::task::JoinHandle<Value> {
        let request = Request::post(format!("{}/mcp", self.base()))
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-session-id", id)
            .body(Full::new(Bytes::from(call(request, tool))))
            .unwrap();
        let client = self.client.clone();
        tokio::spawn(async move { json_body(client.request(request).await.unwrap()).await })
    }

    /// Asserts that `echo` answers in session `id`.
    async fn echoes(&self, client: &HttpClient, id: &str, headers: &[(&str, &str)]) {
        let response = self.call_in(client, id, headers, "echo").await;
        assert_eq!(response.status(), StatusCode::OK);
        let reply = json_body(response).await;
        assert_eq!(reply["result"]["content"][0]["text"], "hi", "{reply}");
    }

    /// Opens session `id`'s GET stream: while it is open the session is busy.
    async fn open_stream(
        &self,
        client: &HttpClient,
        id: &str,
        headers: &[(&str, &str)],
    ) -> Response<Incoming> {
        let mut headers = headers.to_vec();
        headers.push(("mcp-session-id", id));
        let response = self
            .send_with(client, "GET", "/mcp", &headers, String::new())
            .await;
        assert_eq!(response.status(), StatusCode::OK);
        response
    }

    /// A modern `tools/call` of `echo`, with `extra` headers.
    async fn modern_echo(&self, extra: &[(&str, &str)]) -> Response<Incoming> {
        let body = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "modern"}, "_meta": meta()}});
        let mut headers = vec![
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "echo"),
        ];
        headers.extend_from_slice(extra);
        self.send("POST", &headers, body.to_string()).await
    }
}

#[test]
fn the_session_limits_have_their_documented_defaults() {
    let config = LegacyHttpConfig::default();
    assert_eq!(config.max_sessions, 1024);
    assert_eq!(config.max_sessions_per_principal, 64);
    assert_eq!(config.max_sessions_per_address, 64);
    assert_eq!(config.session_grace, Duration::from_secs(30));
    assert!(config.session_grace <= Duration::from_mins(1));
    assert_eq!(config.session_idle_timeout, Duration::from_mins(30));
    assert_eq!(config.max_streams_per_session, 64);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_flood_of_unused_initializes_a_new_client_still_gets_in_from_either_address() {
    let f = start(HttpServerConfig::default(), LegacyHttpConfig::default()).await;
    // 1,500 sessions opened from 127.0.0.1 and never used, on reused connections, 32 at a
    // time: more than the whole table holds.
    let flood = client_from([127, 0, 0, 1]);
    let (f, flood) = (&f, &flood);
    let statuses: Vec<StatusCode> = futures_util::stream::iter(0..1500)
        .map(|_| async move {
            match f.try_initialize(flood, &[]).await {
                Ok(_) => StatusCode::OK,
                Err(status) => status,
            }
        })
        .buffer_unordered(32)
        .collect()
        .await;
    assert!(
        statuses
            .iter()
            .all(|s| [StatusCode::OK, StatusCode::SERVICE_UNAVAILABLE].contains(s)),
        "{statuses:?}"
    );
    assert!(
        f.service.sessions() <= 64,
        "one address holds at most its cap: {}",
        f.service.sessions()
    );
    // A newcomer from the same address and one from another both get in and are served.
    for local in [[127, 0, 0, 1], [127, 0, 0, 2]] {
        let client = client_from(local);
        let id = f.session(&client, &[]).await;
        f.echoes(&client, &id, &[]).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_per_address_cap_holds_at_its_limit_and_makes_room_past_it() {
    let f = start_legacy(LegacyHttpConfig::default().max_sessions_per_address(3)).await;
    let here = client_from([127, 0, 0, 1]);
    // At the limit: three sessions of one address, each kept, each busy (its GET stream
    // open).
    let mut ids = Vec::new();
    let mut streams = Vec::new();
    for _ in 0..3 {
        let id = f.session(&here, &[]).await;
        streams.push(f.open_stream(&here, &id, &[]).await);
        ids.push(id);
    }
    for id in &ids {
        f.echoes(&here, id, &[]).await;
    }
    // Past it, with every session of the address busy: 503. Another address is not
    // affected.
    assert_eq!(
        f.try_initialize(&here, &[]).await,
        Err(StatusCode::SERVICE_UNAVAILABLE)
    );
    let there = client_from([127, 0, 0, 2]);
    let other = f.session(&there, &[]).await;
    f.echoes(&there, &other, &[]).await;
    // One session idle again: the newcomer takes its place.
    drop(streams.remove(0));
    let newcomer = f.session_eventually(&here, &[]).await;
    f.echoes(&here, &newcomer, &[]).await;
    let evicted = f.call_in(&here, &ids[0], &[], "echo").await;
    assert_eq!(evicted.status(), StatusCode::NOT_FOUND);
    for id in &ids[1..] {
        f.echoes(&here, id, &[]).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_global_cap_makes_room_from_idle_sessions_and_refuses_only_when_all_are_busy() {
    let f = start_legacy(LegacyHttpConfig::default().max_sessions(2)).await;
    let (one, two, three) = (
        client_from([127, 0, 0, 1]),
        client_from([127, 0, 0, 2]),
        client_from([127, 0, 0, 3]),
    );
    // At the limit: two sessions, from two addresses, both busy.
    let first = f.session(&one, &[]).await;
    let second = f.session(&two, &[]).await;
    let first_stream = f.open_stream(&one, &first, &[]).await;
    let _second_stream = f.open_stream(&two, &second, &[]).await;
    f.echoes(&one, &first, &[]).await;
    f.echoes(&two, &second, &[]).await;
    assert_eq!(f.service.sessions(), 2);
    // Past it: refused while both are busy, whatever the address.
    assert_eq!(
        f.try_initialize(&three, &[]).await,
        Err(StatusCode::SERVICE_UNAVAILABLE)
    );
    drop(first_stream);
    let third = f.session_eventually(&three, &[]).await;
    f.echoes(&three, &third, &[]).await;
    assert_eq!(f.service.sessions(), 2);
    assert_eq!(
        f.call_in(&one, &first, &[], "echo").await.status(),
        StatusCode::NOT_FOUND
    );
    f.echoes(&two, &second, &[]).await;
}

/// `Bearer <name>` is the principal `<name>`.
struct Names;

#[derive(Debug)]
struct Name(String);

impl Principal for Name {
    fn id(&self) -> &str {
        &self.0
    }
}

impl Authenticator for Names {
    fn authenticate<'a>(&'a self, headers: &'a HeaderMap) -> AuthenticateFuture<'a> {
        let name = raw_http::bearer(headers).map(str::to_owned);
        Box::pin(async move {
            name.map(|name| Arc::new(Name(name)) as Arc<dyn Principal>)
                .ok_or_else(|| {
                    let mut refused = Response::new(Bytes::from_static(b"{}"));
                    *refused.status_mut() = StatusCode::UNAUTHORIZED;
                    refused
                })
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_per_principal_cap_counts_each_principal_apart_and_not_by_address() {
    // One session per address would refuse bob at once if principals counted by
    // address: they do not.
    let f = start(
        HttpServerConfig::default().authenticator(Names),
        LegacyHttpConfig::default()
            .max_sessions_per_principal(2)
            .max_sessions_per_address(1),
    )
    .await;
    let here = client_from([127, 0, 0, 1]);
    let alice = [("authorization", "Bearer alice")];
    let bob = [("authorization", "Bearer bob")];
    // At the limit: two sessions of alice, both busy.
    let first = f.session(&here, &alice).await;
    let second = f.session(&here, &alice).await;
    let first_stream = f.open_stream(&here, &first, &alice).await;
    let _second_stream = f.open_stream(&here, &second, &alice).await;
    f.echoes(&here, &first, &alice).await;
    f.echoes(&here, &second, &alice).await;
    // Past it: alice is refused; bob, from the same address, is not.
    assert_eq!(
        f.try_initialize(&here, &alice).await,
        Err(StatusCode::SERVICE_UNAVAILABLE)
    );
    let bobs = f.session(&here, &bob).await;
    f.echoes(&here, &bobs, &bob).await;
    // Alice's idle session makes room for her next one.
    drop(first_stream);
    let third = f.session_eventually(&here, &alice).await;
    f.echoes(&here, &third, &alice).await;
    assert_eq!(
        f.call_in(&here, &first, &alice, "echo").await.status(),
        StatusCode::NOT_FOUND
    );
    f.echoes(&here, &second, &alice).await;
    f.echoes(&here, &bobs, &bob).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_initializes_never_take_the_table_past_a_cap() {
    for legacy in [
        LegacyHttpConfig::default().max_sessions(4),
        LegacyHttpConfig::default().max_sessions_per_address(4),
    ] {
        let f = start(HttpServerConfig::default(), legacy).await;
        let highest = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let sampler = {
            let (service, highest, stop) = (f.service.clone(), highest.clone(), stop.clone());
            tokio::spawn(async move {
                while !stop.load(Ordering::SeqCst) {
                    highest.fetch_max(service.sessions(), Ordering::SeqCst);
                    tokio::task::yield_now().await;
                }
            })
        };
        // 64 initializes at once, each on its own connection.
        let clients: Vec<HttpClient> = (0..64).map(|_| client_from([127, 0, 0, 1])).collect();
        let outcomes =
            futures_util::future::join_all(clients.iter().map(|c| f.try_initialize(c, &[]))).await;
        stop.store(true, Ordering::SeqCst);
        sampler.await.unwrap();
        for outcome in &outcomes {
            assert!(
                outcome.is_ok() || *outcome == Err(StatusCode::SERVICE_UNAVAILABLE),
                "{outcome:?}"
            );
        }
        assert!(outcomes.iter().any(Result::is_ok));
        highest.fetch_max(f.service.sessions(), Ordering::SeqCst);
        assert!(
            highest.load(Ordering::SeqCst) <= 4,
            "the table held {} sessions at once under a cap of 4",
            highest.load(Ordering::SeqCst)
        );
    }
}

#[tokio::test]
async fn a_session_not_completed_within_the_grace_period_expires() {
    let f = start_grace(Duration::from_millis(100)).await;
    let unfinished = f.try_initialize(&f.client, &[]).await.unwrap();
    let finished = f.session(&f.client, &[]).await;
    // Past the grace period, and more than a second after the last sweep: the next
    // request sweeps.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let _ = f.try_initialize(&f.client, &[]).await;
    assert_eq!(
        f.call_in(&f.client, &unfinished, &[], "echo")
            .await
            .status(),
        StatusCode::NOT_FOUND
    );
    f.echoes(&f.client, &finished, &[]).await;
}

#[tokio::test]
async fn a_session_inside_its_grace_period_is_kept_and_completing_it_keeps_it() {
    let f = start_grace(Duration::from_mins(1)).await;
    let unfinished = f.try_initialize(&f.client, &[]).await.unwrap();
    tokio::time::sleep(Duration::from_millis(1100)).await;
    // This request sweeps; the session is inside its grace period and stays.
    let _ = f.try_initialize(&f.client, &[]).await;
    f.complete(&f.client, &unfinished, &[]).await;
    f.echoes(&f.client, &unfinished, &[]).await;
}

#[cfg(feature = "http-sse")]
impl Fixture {
    /// Opens an HTTP+SSE session: its stream, after the `endpoint` event, and the path to
    /// POST to.
    async fn sse_session(&self) -> (SseEvents, String) {
        let response = self
            .send_with(
                &self.client,
                "GET",
                "/sse",
                &[("accept", "text/event-stream")],
                String::new(),
            )
            .await;
        assert_eq!(response.status(), StatusCode::OK);
        let mut events = SseEvents::new(response);
        let endpoint = events.endpoint().await;
        (events, endpoint)
    }

    async fn sse_post(&self, endpoint: &str, content_type: &str, body: String) -> StatusCode {
        self.send_with(
            &self.client,
            "POST",
            endpoint,
            &[("content-type", content_type)],
            body,
        )
        .await
        .status()
    }

    /// [`sse_post`](Self::sse_post) of a JSON `body`.
    async fn sse_post_json(&self, endpoint: &str, body: String) -> StatusCode {
        self.sse_post(endpoint, "application/json", body).await
    }

    /// An initialized HTTP+SSE session.
    async fn sse_initialized(&self) -> (SseEvents, String) {
        let (mut events, endpoint) = self.sse_session().await;
        let init = sse_initialize_body("old");
        assert_eq!(
            self.sse_post_json(&endpoint, init).await,
            StatusCode::ACCEPTED
        );
        assert_eq!(
            events.message().await.1["result"]["protocolVersion"],
            "2024-11-05"
        );
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert_eq!(
            self.sse_post_json(&endpoint, initialized.to_owned()).await,
            StatusCode::ACCEPTED
        );
        (events, endpoint)
    }

    /// An initialized HTTP+SSE session with a call of `hold` (id 2) running on it.
    async fn sse_holding(&self) -> (SseEvents, String) {
        let (events, endpoint) = self.sse_initialized().await;
        assert_eq!(
            self.sse_post_json(&endpoint, call(2, "hold")).await,
            StatusCode::ACCEPTED
        );
        self.gate.started(1).await;
        (events, endpoint)
    }
}

/// Asserts that the next message on a session's stream is a tool result of `text`.
#[cfg(feature = "http-sse")]
async fn answered(events: &mut SseEvents, text: &str) {
    let (_, message) = events.message().await;
    assert_eq!(message["result"]["content"][0]["text"], text, "{message}");
}

/// Lets one held call go, and reads its answer on the session's stream.
#[cfg(feature = "http-sse")]
async fn release_one(f: &Fixture, events: &mut SseEvents) {
    f.gate.gate.add_permits(1);
    answered(events, "released").await;
}

#[cfg(feature = "http-sse")]
#[tokio::test]
async fn an_http_sse_session_that_never_initializes_ends_after_the_grace_period() {
    let f = start_grace(Duration::from_millis(100)).await;
    let (mut idle, idle_endpoint) = f.sse_session().await;
    let (mut used, used_endpoint) = f.sse_initialized().await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    // Any request sweeps: the session that never initialized ends, its stream with it,
    // although the stream was open.
    let _ = f.try_initialize(&f.client, &[]).await;
    assert!(idle.next().await.is_none(), "the stream ended");
    assert_eq!(
        f.sse_post(&idle_endpoint, "application/json", call(1, "echo"))
            .await,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        f.sse_post(&used_endpoint, "application/json", call(2, "echo"))
            .await,
        StatusCode::ACCEPTED
    );
    answered(&mut used, "hi").await;
}

#[tokio::test]
async fn last_event_ids_out_of_range_or_malformed_are_refused_without_a_panic() {
    count_panics();
    let f = start(HttpServerConfig::default(), LegacyHttpConfig::default()).await;
    let id = f.session(&f.client, &[]).await;
    for last in [
        // The GET stream (0) always exists: resuming after u64::MAX overflowed `after + 1`.
        "0-18446744073709551615",
        "1-18446744073709551615",
        "18446744073709551615-18446744073709551615",
        "0-18446744073709551616",
        "18446744073709551616-0",
        "0-99999999999999999999999999",
        "0-5",
        "7-0",
        "+0-1",
        "0-+1",
        "0--1",
        "-1",
        "0-",
        "-",
        "0-1-2",
        " 0-1",
        "0x0-1",
    ] {
        let response = f
            .send(
                "GET",
                &[("mcp-session-id", &id), ("last-event-id", last)],
                String::new(),
            )
            .await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{last}");
        assert!(json_body(response).await["error"].is_object(), "{last}");
    }
    f.echoes(&f.client, &id, &[]).await;
    assert_eq!(panics(), 0, "nothing may panic, even caught");
}

#[tokio::test]
async fn a_modern_request_with_a_stale_session_id_is_served_as_modern() {
    let f = start(HttpServerConfig::default(), LegacyHttpConfig::default()).await;
    let live = f.session(&f.client, &[]).await;
    for session in ["0123456789abcdef0123456789abcdef", live.as_str()] {
        let response = f.modern_echo(&[("mcp-session-id", session)]).await;
        assert_eq!(response.status(), StatusCode::OK, "{session}");
        assert!(!response.headers().contains_key("mcp-session-id"));
        let reply = json_body(response).await;
        assert_eq!(reply["result"]["resultType"], "complete", "{reply}");
        assert_eq!(reply["result"]["content"][0]["text"], "modern");
    }
    // GET and DELETE stating 2026-07-28 are the modern endpoint's too (405), and the live
    // legacy session is untouched by all of it.
    for method in ["GET", "DELETE"] {
        let response = f
            .send(
                method,
                &[
                    ("mcp-session-id", live.as_str()),
                    ("mcp-protocol-version", "2026-07-28"),
                ],
                String::new(),
            )
            .await;
        assert_eq!(
            response.status(),
            StatusCode::METHOD_NOT_ALLOWED,
            "{method}"
        );
    }
    f.echoes(&f.client, &live, &[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_requests_hold_slots_of_the_server_concurrency_limit() {
    let f = start(
        HttpServerConfig::default().max_concurrent_requests(2),
        LegacyHttpConfig::default(),
    )
    .await;
    let id = f.session(&f.client, &[]).await;
    // At the limit: two legacy calls run, each holding a slot until it ends.
    let held = [f.spawn_call(&id, 1, "hold"), f.spawn_call(&id, 2, "hold")];
    f.gate.started(2).await;
    // Past it: a modern request, another legacy request and an initialize are refused.
    let modern = f.modern_echo(&[]).await;
    assert_eq!(modern.status(), StatusCode::SERVICE_UNAVAILABLE);
    let legacy = f.call_in(&f.client, &id, &[], "echo").await;
    assert_eq!(legacy.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(legacy.headers().contains_key("retry-after"));
    assert_eq!(
        f.try_initialize(&f.client, &[]).await,
        Err(StatusCode::SERVICE_UNAVAILABLE)
    );
    // Decided from the head: a POST whose body never comes is refused at once.
    assert_eq!(head_only(&f, "/mcp", JSON_POST).await, 503);
    f.gate.gate.add_permits(2);
    for reply in held {
        let reply = reply.await.unwrap();
        assert_eq!(reply["result"]["content"][0]["text"], "released", "{reply}");
    }
    // The slots are back.
    assert_eq!(f.modern_echo(&[]).await.status(), StatusCode::OK);
    f.echoes(&f.client, &id, &[]).await;
}

#[tokio::test]
async fn a_request_id_already_running_in_a_session_is_refused() {
    let f = start(HttpServerConfig::default(), LegacyHttpConfig::default()).await;
    let id = f.session(&f.client, &[]).await;
    let held = f.spawn_call(&id, 5, "hold");
    f.gate.started(1).await;
    // Same id (5) while it runs: answered with -32600, never run beside it.
    let second = json_body(f.call_in(&f.client, &id, &[], "echo").await).await;
    assert_eq!(second["id"], 5);
    assert_eq!(second["error"]["code"], -32600, "{second}");
    f.gate.gate.add_permits(1);
    assert_eq!(
        held.await.unwrap()["result"]["content"][0]["text"],
        "released"
    );
}

#[cfg(feature = "http-sse")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_sse_requests_hold_slots_of_the_server_concurrency_limit() {
    let f = start(
        HttpServerConfig::default().max_concurrent_requests(1),
        LegacyHttpConfig::default(),
    )
    .await;
    // At the limit: one request runs on the session's stream, holding the only slot.
    let (mut events, endpoint) = f.sse_holding().await;
    // Past it: the next POST and a modern request are refused.
    assert_eq!(
        f.sse_post_json(&endpoint, call(3, "echo")).await,
        StatusCode::SERVICE_UNAVAILABLE
    );
    assert_eq!(
        f.modern_echo(&[]).await.status(),
        StatusCode::SERVICE_UNAVAILABLE
    );
    release_one(&f, &mut events).await;
    // The slot is back once the answer is on the stream.
    until("the slot given back", async || {
        f.sse_post_json(&endpoint, call(4, "echo")).await == StatusCode::ACCEPTED
    })
    .await;
    answered(&mut events, "hi").await;
}

#[cfg(feature = "http-sse")]
#[tokio::test]
async fn http_sse_initialize_counts_against_the_sessions_running_cap() {
    let f = start_legacy(LegacyHttpConfig::default().max_streams_per_session(1)).await;
    // At the limit: one request running in the session.
    let (mut events, endpoint) = f.sse_holding().await;
    // Past it: an initialize is a request like any other.
    let init = sse_initialize_body("again");
    assert_eq!(
        f.sse_post_json(&endpoint, init).await,
        StatusCode::SERVICE_UNAVAILABLE
    );
    // A request with the id of the running one is refused as such.
    assert_eq!(
        f.sse_post_json(&endpoint, call(2, "echo")).await,
        StatusCode::BAD_REQUEST
    );
    release_one(&f, &mut events).await;
}

#[cfg(feature = "http-sse")]
#[tokio::test]
async fn the_messages_endpoint_refuses_a_body_that_is_not_json() {
    let f = start(HttpServerConfig::default(), LegacyHttpConfig::default()).await;
    let (mut events, endpoint) = f.sse_initialized().await;
    for content_type in ["text/plain", "application/x-www-form-urlencoded", ""] {
        assert_eq!(
            f.sse_post(&endpoint, content_type, call(2, "echo")).await,
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "{content_type:?}"
        );
    }
    assert_eq!(
        f.sse_post(
            &endpoint,
            "application/json; charset=utf-8",
            call(3, "echo")
        )
        .await,
        StatusCode::ACCEPTED
    );
    let (_, reply) = events.message().await;
    assert_eq!(reply["id"], 3, "the refused POSTs ran nothing: {reply}");
}

/// Headers of a well-formed JSON POST.
const JSON_POST: &str =
    "content-type: application/json\r\naccept: application/json, text/event-stream\r\n";

/// Sends only the head of a chunked POST to `path` with `headers` (lines ending in
/// `\r\n`), never its body, and returns the status of the answer. A server that waited
/// for the body would not answer for its body read timeout (two minutes here).
async fn head_only(f: &Fixture, path: &str, headers: &str) -> u16 {
    let addr = f.running.local_addr();
    let head = format!(
        "POST {path} HTTP/1.1\r\nhost: {addr}\r\n{headers}transfer-encoding: chunked\r\n\r\n"
    );
    status_of_raw(f, &head).await
}

/// Sends `bytes` on a new connection and returns the status of the first answer, which
/// must come within ten seconds.
async fn status_of_raw(f: &Fixture, bytes: &str) -> u16 {
    let mut stream = tokio::net::TcpStream::connect(f.running.local_addr())
        .await
        .unwrap();
    stream.write_all(bytes.as_bytes()).await.unwrap();
    let mut reply = Vec::new();
    let mut buf = [0; 1024];
    while !reply.windows(2).any(|w| w == b"\r\n") {
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf))
            .await
            .expect("an answer in time")
            .unwrap();
        assert!(n > 0, "closed without an answer");
        reply.extend_from_slice(&buf[..n]);
    }
    let line = String::from_utf8_lossy(&reply);
    line.split(' ').nth(1).unwrap().parse().unwrap()
}

#[tokio::test]
async fn refusals_are_decided_from_the_head_before_the_body_arrives() {
    let f = start(
        HttpServerConfig::default()
            .body_read_timeout(Duration::from_mins(2))
            .max_body_bytes(1024),
        LegacyHttpConfig::default(),
    )
    .await;
    let accept = "accept: application/json, text/event-stream\r\n";
    let cases = [
        ("/mcp", format!("content-type: text/plain\r\n{accept}"), 415),
        (
            "/mcp",
            "content-type: application/json\r\naccept: application/json\r\n".to_owned(),
            406,
        ),
        (
            "/mcp",
            format!("{JSON_POST}mcp-session-id: 0123456789abcdef0123456789abcdef\r\n"),
            404,
        ),
        (
            "/messages?sessionId=0123456789abcdef0123456789abcdef",
            "content-type: text/plain\r\n".to_owned(),
            415,
        ),
        (
            "/messages?sessionId=0123456789abcdef0123456789abcdef",
            "content-type: application/json\r\n".to_owned(),
            404,
        ),
    ];
    for (path, headers, status) in cases {
        #[cfg(not(feature = "http-sse"))]
        if path.starts_with("/messages") {
            continue;
        }
        assert_eq!(
            head_only(&f, path, &headers).await,
            status,
            "{path} {headers}"
        );
    }
    // A Content-Length over the limit is refused without reading.
    let addr = f.running.local_addr();
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head =
        format!("POST /mcp HTTP/1.1\r\nhost: {addr}\r\n{JSON_POST}content-length: 4096\r\n\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut buf = [0; 64];
    let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf))
        .await
        .expect("an answer before the body")
        .unwrap();
    assert!(
        String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 413"),
        "{}",
        String::from_utf8_lossy(&buf[..n])
    );
}

/// The status of a whole `initialize` POST sent raw: `target` as the request line's target
/// and `host` as its `Host` header line (omitted when `None`).
async fn initialize_raw(f: &Fixture, target: &str, host: Option<&str>) -> u16 {
    let body = initialize_body("raw");
    let host = host.map(|h| format!("host: {h}\r\n")).unwrap_or_default();
    let request = format!(
        "POST {target} HTTP/1.1\r\n{host}{JSON_POST}content-length: {}\r\n\r\n{body}",
        body.len()
    );
    status_of_raw(f, &request).await
}

#[tokio::test]
async fn a_legacy_request_s_host_is_judged_as_a_modern_one_s() {
    let f = start(HttpServerConfig::default(), LegacyHttpConfig::default()).await;
    let port = f.running.local_addr().port();
    let loopback = format!("127.0.0.1:{port}");
    assert_eq!(initialize_raw(&f, "/mcp", Some(&loopback)).await, 200);
    for host in [
        "[::1].evil.example",
        "127.0.0.1.evil.example",
        "evil.example",
        "user@127.0.0.1",
        "127.0.0.1:",
        "127.0.0.1:80x",
        "127.0.0.1/mcp",
    ] {
        let status = initialize_raw(&f, "/mcp", Some(host)).await;
        assert!(status == 403 || status == 400, "{host}: {status}");
    }
    // RFC 9112 §3.2.2: an absolute-form target names the host, whatever `Host` says.
    let foreign = initialize_raw(&f, "http://evil.example/mcp", Some(&loopback)).await;
    assert_eq!(foreign, 403);
    let own = format!("http://{loopback}/mcp");
    assert_eq!(initialize_raw(&f, &own, Some("evil.example")).await, 200);
    assert_eq!(initialize_raw(&f, "/mcp", None).await, 400);
}

#[tokio::test]
async fn a_shutdown_ends_each_stream_with_a_retry_hint_and_a_deleted_session_without_one() {
    let legacy = LegacyHttpConfig::default().retry(Some(Duration::from_millis(1500)));
    let f = start_legacy(legacy).await;
    // A session deleted by its client: its GET stream just ends (nothing to come back to).
    let gone = f.session(&f.client, &[]).await;
    let get = f
        .send("GET", &[("mcp-session-id", &gone)], String::new())
        .await;
    assert_eq!(get.status(), StatusCode::OK);
    let deleted = f
        .send("DELETE", &[("mcp-session-id", &gone)], String::new())
        .await;
    assert!(deleted.status().is_success());
    let ended = raw_http::text_body(get).await;
    assert!(!ended.contains("retry: 1500\n\n"), "{ended:?}");

    // The server shuts down: the live session's GET stream ends with the delay, after its
    // priming event (which carries the same delay), as its last field.
    let id = f.session(&f.client, &[]).await;
    let get = f
        .send("GET", &[("mcp-session-id", &id)], String::new())
        .await;
    assert_eq!(get.status(), StatusCode::OK);
    f.running.shutdown(Duration::from_millis(200)).await;
    let stream = raw_http::text_body(get).await;
    assert!(stream.starts_with("id: 0-0\nretry: 1500\n"), "{stream:?}");
    assert!(stream.ends_with("\n\nretry: 1500\n\n"), "{stream:?}");
}
