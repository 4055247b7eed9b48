//! Initialize-era Streamable HTTP sessions shared by a fleet through a real `redis-server`
//! (feature `session-redis`): three `DualEraHttp` instances in one process, each with its
//! own connection to one Redis, serve any request of any session, refuse a session
//! deleted or expired anywhere, share its log level, route the answer to a
//! server-to-client request to the instance that asked, replay a dead instance's events,
//! hold the caps across the fleet, and refuse with `503` when Redis is gone.

#[path = "../../mcp-server/tests/redis_common/mod.rs"]
mod redis_common;

use std::time::Duration;

use mcp_legacy::http::{DualEraHttp, LegacyHttpConfig, SessionStore};
use mcp_server::{Server, ToolDef};
use mcp_test_support::http::{HttpClient, SseEvents, client, json_body, send, session_id};
use mcp_test_support::tools;
use mcp_transport_http::{HttpServer, HttpServerConfig, RunningServer};
use mcp_types::{CallToolResult, LoggingLevel};
use serde_json::{Value, json};

fn server() -> Server {
    Server::builder("fleet", "1.0.0")
        .tool(tools::echo("hi"))
        .tool(ToolDef::new(
            "logs",
            json!({"type": "object"}),
            |_args, cx| async move {
                cx.log(LoggingLevel::Info, json!("info")).await;
                cx.log(LoggingLevel::Error, json!("error")).await;
                Ok(CallToolResult::text("logged"))
            },
        ))
        .tool(ToolDef::new(
            "interview",
            json!({"type": "object"}),
            |_args, cx| async move {
                let form: mcp_types::ElicitRequestFormParams = serde_json::from_value(json!({
                    "message": "What is your name?",
                    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
                }))?;
                let answer =
                    cx.elicit("name", mcp_types::ElicitRequestParams::ElicitRequestForm(form))?;
                let name = serde_json::to_value(answer.content.as_ref().and_then(|c| c.get("name")))?;
                let name = name.as_str().unwrap_or("?").to_owned();
                Ok(CallToolResult::text(format!("Hi {name}")))
            },
        ))
        .build()
        .unwrap()
}

/// A tool to add at run time: listeners hear `notifications/tools/list_changed`.
fn noop(name: &str) -> ToolDef {
    ToolDef::new(name, json!({"type": "object"}), |_args, _cx| async {
        Ok(CallToolResult::text("ok"))
    })
}

struct Instance {
    running: RunningServer,
    url: String,
    core: Server,
}

async fn instance(redis: &str, legacy: LegacyHttpConfig) -> Instance {
    instance_with(redis, HttpServerConfig::default(), legacy, server()).await
}

async fn instance_with(
    redis: &str,
    http: HttpServerConfig,
    legacy: LegacyHttpConfig,
    core: Server,
) -> Instance {
    let store = SessionStore::redis(redis)
        .timeout(Duration::from_secs(2))
        .connect()
        .await
        .unwrap();
    assert!(store.is_shared());
    let service =
        DualEraHttp::new(core.clone(), http.clone(), legacy.session_store(store)).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let running = HttpServer::serve_endpoint(listener, service, &http).unwrap();
    let url = running.url().to_owned();
    Instance { running, url, core }
}

async fn fleet(redis: &str, legacy: &LegacyHttpConfig, n: usize) -> Vec<Instance> {
    let mut all = Vec::new();
    for _ in 0..n {
        all.push(instance(redis, legacy.clone()).await);
    }
    all
}

fn initialize_body() -> String {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "fleet-test", "version": "1"}}})
    .to_string()
}

/// A new 2025-11-25 session on `url`: its id.
async fn initialize(http: &HttpClient, url: &str) -> String {
    let response = send(http, "POST", url, &[], initialize_body()).await;
    assert_eq!(response.status(), 200);
    let id = session_id(&response);
    let body = json_body(response).await;
    assert_eq!(body["result"]["protocolVersion"], "2025-11-25", "{body}");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let response = send(
        http,
        "POST",
        url,
        &[("mcp-session-id", &id)],
        initialized.to_string(),
    )
    .await;
    assert_eq!(response.status(), 202);
    id
}

fn call(id: i64, tool: &str, arguments: &Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}})
    .to_string()
}

/// POSTs `body` to session `session` on `url`: the status and every message of the
/// answer (one for a JSON reply, each event's for SSE).
async fn post(http: &HttpClient, url: &str, session: &str, body: String) -> (u16, Vec<Value>) {
    let response = send(http, "POST", url, &[("mcp-session-id", session)], body).await;
    let status = response.status().as_u16();
    let sse = response
        .headers()
        .get("content-type")
        .is_some_and(|c| c == "text/event-stream");
    if !sse {
        let body = mcp_test_support::http::body_bytes(response).await;
        let message = serde_json::from_slice(&body).unwrap_or(Value::Null);
        return (status, vec![message]);
    }
    let mut events = SseEvents::new(response);
    let mut messages = Vec::new();
    while let Some(event) = events.next_with_data().await {
        messages.push(serde_json::from_str(event.data()).unwrap());
    }
    (status, messages)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_initialized_on_one_instance_is_served_by_the_others_until_deleted() {
    let Some(redis) = redis_common::redis().await else {
        return;
    };
    let fleet = fleet(&redis.url, &LegacyHttpConfig::default(), 3).await;
    let (a, b, c) = (&fleet[0].url, &fleet[1].url, &fleet[2].url);
    let http = client();
    let session = initialize(&http, a).await;

    for (n, url) in [(1, b), (2, c), (3, a)] {
        let (status, messages) =
            post(&http, url, &session, call(n, "echo", &json!({"text": "x"}))).await;
        assert_eq!(status, 200, "{messages:?}");
        assert_eq!(
            messages[0]["result"]["content"][0]["text"], "x",
            "{messages:?}"
        );
    }

    // The log level set through B applies on A, which cached the session before.
    let (_, before) = post(&http, a, &session, call(10, "logs", &json!({}))).await;
    assert_eq!(before.len(), 1, "no level set, no logs: {before:?}");
    let set = json!({"jsonrpc": "2.0", "id": 11, "method": "logging/setLevel", "params": {"level": "error"}});
    let (status, _) = post(&http, b, &session, set.to_string()).await;
    assert_eq!(status, 200);
    let (_, after) = post(&http, a, &session, call(12, "logs", &json!({}))).await;
    assert_eq!(after.len(), 2, "one log at error, none at info: {after:?}");
    assert_eq!(after[0]["method"], "notifications/message", "{after:?}");
    assert_eq!(after[0]["params"]["level"], "error", "{after:?}");

    // DELETE through B: A and C, which hold it, refuse it from then on.
    let response = send(&http, "DELETE", b, &[("mcp-session-id", &session)], "").await;
    assert_eq!(response.status(), 200);
    for url in [a, c, b] {
        let (status, _) = post(&http, url, &session, call(20, "echo", &json!({}))).await;
        assert_eq!(status, 404, "{url}");
    }
    let response = send(&http, "DELETE", a, &[("mcp-session-id", &session)], "").await;
    assert_eq!(response.status(), 404, "deleted once");
    for instance in fleet {
        instance.running.shutdown(Duration::from_secs(1)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_elicitation_asked_on_one_instance_is_answered_through_another() {
    let Some(redis) = redis_common::redis().await else {
        return;
    };
    let fleet = fleet(&redis.url, &LegacyHttpConfig::default(), 2).await;
    let (a, b) = (&fleet[0].url, &fleet[1].url);
    let http = client();
    let session = initialize(&http, a).await;

    let response = send(
        &http,
        "POST",
        a,
        &[("mcp-session-id", &session)],
        call(1, "interview", &json!({})),
    )
    .await;
    assert_eq!(response.status(), 200);
    let mut events = SseEvents::checked(response);
    let (_, ask) = events.message().await;
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    let ask_id = ask["id"].clone();
    assert!(
        ask_id.as_i64().unwrap() >= 1 << 32,
        "numbered in A's range: {ask_id}"
    );

    let answer = json!({"jsonrpc": "2.0", "id": ask_id,
        "result": {"action": "accept", "content": {"name": "Ada"}}});
    let response = send(
        &http,
        "POST",
        b,
        &[("mcp-session-id", &session)],
        answer.to_string(),
    )
    .await;
    assert_eq!(response.status(), 202);

    let (_, result) = events.message().await;
    assert_eq!(result["id"], 1);
    assert_eq!(result["result"]["content"][0]["text"], "Hi Ada", "{result}");
    for instance in fleet {
        instance.running.shutdown(Duration::from_secs(1)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_instances_get_stream_is_replayed_by_another() {
    let Some(redis) = redis_common::redis().await else {
        return;
    };
    let mut fleet = fleet(&redis.url, &LegacyHttpConfig::default(), 2).await;
    let b = fleet.pop().unwrap();
    let a = fleet.pop().unwrap();
    let http = client();
    let session = initialize(&http, &a.url).await;

    // The GET stream on A: its priming event, then a list change.
    let response = send(
        &http,
        "GET",
        &a.url,
        &[
            ("mcp-session-id", &session),
            ("accept", "text/event-stream"),
        ],
        "",
    )
    .await;
    assert_eq!(response.status(), 200);
    let mut events = SseEvents::checked(response);
    let priming = events.next().await.unwrap();
    assert!(priming.data().is_empty());
    a.core.add_tool(noop("one")).unwrap();
    let (first, message) = events.message().await;
    assert_eq!(message["method"], "notifications/tools/list_changed");
    drop(events);
    // Missed while disconnected: two more changes.
    a.core.add_tool(noop("two")).unwrap();
    a.core.add_tool(noop("three")).unwrap();

    // A dies once what it wrote is in Redis (written by a task of its own: polled, by
    // reading the replay on B until both missed events are there).
    let mut stored = false;
    for _ in 0..50 {
        let response = send(
            &http,
            "GET",
            &b.url,
            &[
                ("mcp-session-id", &session),
                ("accept", "text/event-stream"),
                ("last-event-id", &first),
            ],
            "",
        )
        .await;
        assert_eq!(response.status(), 200);
        let mut events = SseEvents::checked(response);
        let both = tokio::time::timeout(Duration::from_millis(200), async {
            events.message().await;
            events.message().await;
        });
        if both.await.is_ok() {
            stored = true;
            break;
        }
    }
    assert!(stored, "A's missed events reached Redis");
    a.running.shutdown(Duration::from_secs(1)).await;

    let response = send(
        &http,
        "GET",
        &b.url,
        &[
            ("mcp-session-id", &session),
            ("accept", "text/event-stream"),
            ("last-event-id", &first),
        ],
        "",
    )
    .await;
    assert_eq!(response.status(), 200);
    let mut events = SseEvents::checked(response);
    let (second, message) = events.message().await;
    assert_eq!(message["method"], "notifications/tools/list_changed");
    let (third, _) = events.message().await;
    assert_ne!(second, third);
    assert_eq!(
        first.split('-').next(),
        second.split('-').next(),
        "A's stream"
    );
    // Then live, on B's own GET stream, whose ids are B's.
    b.core.add_tool(noop("four")).unwrap();
    let (live, message) = events.message().await;
    assert_eq!(message["method"], "notifications/tools/list_changed");
    assert_ne!(
        live.split('-').next(),
        first.split('-').next(),
        "{live} is B's"
    );

    // An id past what Redis holds of A's stream (A may have sent an event whose copy never
    // reached Redis before it died): nothing to replay, and the stream goes on live.
    let past = format!("{}-999", first.split('-').next().unwrap());
    let response = send(
        &http,
        "GET",
        &b.url,
        &[
            ("mcp-session-id", &session),
            ("accept", "text/event-stream"),
            ("last-event-id", &past),
        ],
        "",
    )
    .await;
    assert_eq!(response.status(), 200);
    let mut events = SseEvents::checked(response);
    b.core.add_tool(noop("five")).unwrap();
    let (next, message) = events.message().await;
    assert_eq!(message["method"], "notifications/tools/list_changed");
    assert_ne!(
        next.split('-').next(),
        first.split('-').next(),
        "{next} is B's, live: nothing of A's was replayed"
    );
    b.running.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_caps_hold_across_the_fleet() {
    let Some(redis) = redis_common::redis().await else {
        return;
    };
    // Two sessions in all; every client here is 127.0.0.1.
    let legacy = LegacyHttpConfig::default().max_sessions(2);
    let fleet = fleet(&redis.url, &legacy, 3).await;
    let http = client();
    let first = initialize(&http, &fleet[0].url).await;
    let _second = initialize(&http, &fleet[1].url).await;
    let response = send(&http, "POST", &fleet[2].url, &[], initialize_body()).await;
    assert_eq!(response.status(), 503, "one past the fleet-wide cap");
    let body = json_body(response).await;
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("too many sessions"),
        "{body}"
    );
    // A place comes back when a session ends, wherever it is deleted.
    let response = send(
        &http,
        "DELETE",
        &fleet[2].url,
        &[("mcp-session-id", &first)],
        "",
    )
    .await;
    assert_eq!(response.status(), 200);
    initialize(&http, &fleet[2].url).await;
    for instance in fleet {
        instance.running.shutdown(Duration::from_secs(1)).await;
    }

    // Per address, across instances, with room in all.
    let legacy = LegacyHttpConfig::default().max_sessions_per_address(2);
    let redis2 = redis_common::redis().await.unwrap();
    let fleet = self::fleet(&redis2.url, &legacy, 2).await;
    initialize(&http, &fleet[0].url).await;
    initialize(&http, &fleet[1].url).await;
    let response = send(&http, "POST", &fleet[0].url, &[], initialize_body()).await;
    assert_eq!(response.status(), 503, "one past the per-address cap");
    for instance in fleet {
        instance.running.shutdown(Duration::from_secs(1)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_session_expires_in_the_fleet() {
    let Some(redis) = redis_common::redis().await else {
        return;
    };
    let legacy = LegacyHttpConfig::default().session_idle_timeout(Duration::from_millis(500));
    let fleet = fleet(&redis.url, &legacy, 2).await;
    let http = client();
    let session = initialize(&http, &fleet[0].url).await;
    // Used within the timeout, again and again: it lives longer than the timeout.
    for n in 0..4 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let (status, _) = post(
            &http,
            &fleet[n % 2].url,
            &session,
            call(1, "echo", &json!({})),
        )
        .await;
        assert_eq!(status, 200, "used at {n}");
    }
    // Busy, with its GET stream open on one instance, and no request: it is kept for the
    // whole fleet, as a busy session is in memory.
    let get = send(
        &http,
        "GET",
        &fleet[0].url,
        &[("mcp-session-id", &session)],
        "",
    )
    .await;
    assert_eq!(get.status(), 200);
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let (status, _) = post(&http, &fleet[1].url, &session, call(3, "echo", &json!({}))).await;
    assert_eq!(status, 200, "kept while its stream is open");
    drop(get);
    // Idle past the timeout: gone everywhere, the instance that cached it too.
    tokio::time::sleep(Duration::from_millis(900)).await;
    for instance in &fleet {
        let (status, _) = post(&http, &instance.url, &session, call(2, "echo", &json!({}))).await;
        assert_eq!(status, 404);
    }
    for instance in fleet {
        instance.running.shutdown(Duration::from_secs(1)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_redis_a_request_is_refused_with_503_naming_the_cause() {
    let Some(mut redis) = redis_common::redis().await else {
        return;
    };
    let fleet = fleet(&redis.url, &LegacyHttpConfig::default(), 2).await;
    let http = client();
    let session = initialize(&http, &fleet[0].url).await;
    redis.kill();
    // Neither the instance that holds the session nor another serves it.
    for instance in &fleet {
        let response = send(
            &http,
            "POST",
            &instance.url,
            &[("mcp-session-id", &session)],
            call(1, "echo", &json!({})),
        )
        .await;
        assert_eq!(response.status(), 503);
        let body = json_body(response).await;
        let message = body["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("session store (Redis) cannot be reached"),
            "{message}"
        );
    }
    let response = send(&http, "POST", &fleet[1].url, &[], initialize_body()).await;
    assert_eq!(response.status(), 503, "no new session without the store");
    for instance in fleet {
        instance.running.shutdown(Duration::from_secs(1)).await;
    }
}

#[test]
fn the_default_store_is_memory() {
    assert!(!SessionStore::memory().is_shared());
    assert!(!LegacyHttpConfig::default().session_store.is_shared());
}

/// `Bearer <name>` is the principal `<name>`; no credential is refused.
struct Names;

#[derive(Debug)]
struct Name(String);

impl mcp_jsonrpc::Principal for Name {
    fn id(&self) -> &str {
        &self.0
    }
}

impl mcp_transport_http::Authenticator for Names {
    fn authenticate<'a>(
        &'a self,
        headers: &'a http::HeaderMap,
    ) -> mcp_transport_http::AuthenticateFuture<'a> {
        let name = mcp_test_support::http::bearer(headers).map(str::to_owned);
        Box::pin(async move {
            name.map(|name| {
                std::sync::Arc::new(Name(name)) as std::sync::Arc<dyn mcp_jsonrpc::Principal>
            })
            .ok_or_else(|| {
                let mut refused = http::Response::new(bytes::Bytes::from_static(b"{}"));
                *refused.status_mut() = http::StatusCode::UNAUTHORIZED;
                refused
            })
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_per_principal_cap_holds_across_the_fleet_and_counts_each_principal_apart() {
    let Some(redis) = redis_common::redis().await else {
        return;
    };
    let legacy = LegacyHttpConfig::default()
        .max_sessions_per_principal(2)
        .max_sessions_per_address(1);
    let mut fleet = Vec::new();
    for _ in 0..3 {
        let http = HttpServerConfig::default().authenticator(Names);
        fleet.push(instance_with(&redis.url, http, legacy.clone(), server()).await);
    }
    let http = client();
    let open = async |url: &str, who: &str| {
        let bearer = format!("Bearer {who}");
        let response = send(
            &http,
            "POST",
            url,
            &[("authorization", &bearer)],
            initialize_body(),
        )
        .await;
        let status = response.status().as_u16();
        (status, (status == 200).then(|| session_id(&response)))
    };
    // At the limit: two of alice's, on two instances.
    let (status, first) = open(&fleet[0].url, "alice").await;
    assert_eq!(status, 200);
    assert_eq!(open(&fleet[1].url, "alice").await.0, 200);
    // Past it, on the third: refused. Bob, from the same address, is not (a principal's
    // sessions do not count against the address's cap).
    assert_eq!(
        open(&fleet[2].url, "alice").await.0,
        503,
        "one past alice's cap"
    );
    assert_eq!(open(&fleet[2].url, "bob").await.0, 200);
    // Alice's place comes back when one of hers is deleted, on any instance.
    let response = send(
        &http,
        "DELETE",
        &fleet[1].url,
        &[
            ("mcp-session-id", first.as_deref().unwrap()),
            ("authorization", "Bearer alice"),
        ],
        "",
    )
    .await;
    assert_eq!(response.status(), 200);
    assert_eq!(open(&fleet[2].url, "alice").await.0, 200);
    for instance in fleet {
        instance.running.shutdown(Duration::from_secs(1)).await;
    }
}

/// Instance A serving only `tool`, instance B the usual server, and a session started on A.
async fn pair(redis: &str, tool: ToolDef) -> (Instance, Instance, String) {
    let core = Server::builder("fleet", "1.0.0")
        .tool(tool)
        .build()
        .unwrap();
    let legacy = LegacyHttpConfig::default();
    let a = instance_with(redis, HttpServerConfig::default(), legacy.clone(), core).await;
    let b = instance(redis, legacy).await;
    let session = initialize(&client(), &a.url).await;
    (a, b, session)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancellation_sent_to_another_instance_stops_the_request() {
    let Some(redis) = redis_common::redis().await else {
        return;
    };
    let (started, stopped) = (
        std::sync::Arc::new(tokio::sync::Notify::new()),
        std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false)),
    );
    let waiting = {
        let (started, stopped) = (
            std::sync::Arc::clone(&started),
            std::sync::Arc::clone(&stopped),
        );
        ToolDef::new("wait", json!({"type": "object"}), move |_args, cx| {
            let (started, stopped) = (
                std::sync::Arc::clone(&started),
                std::sync::Arc::clone(&stopped),
            );
            async move {
                // Set when the run stops early: its token fires, or it is dropped.
                struct Stopped(std::sync::Arc<std::sync::atomic::AtomicBool>);
                impl Drop for Stopped {
                    fn drop(&mut self) {
                        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
                    }
                }
                let _stopped = Stopped(stopped);
                started.notify_one();
                tokio::select! {
                    () = cx.cancellation().cancelled() => Ok(CallToolResult::text("stopped")),
                    () = tokio::time::sleep(Duration::from_secs(30)) => Ok(CallToolResult::text("waited")),
                }
            }
        })
    };
    let (a, b, session) = pair(&redis.url, waiting).await;
    let http = client();
    // The call runs on A (its answer is not awaited here)...
    let running = {
        let (http, url, session) = (http.clone(), a.url.clone(), session.clone());
        tokio::spawn(async move { post(&http, &url, &session, call(7, "wait", &json!({}))).await })
    };
    tokio::time::timeout(Duration::from_secs(10), started.notified())
        .await
        .expect("the call started on A");
    // ...and its cancellation reaches B.
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 7, "reason": "changed my mind"}});
    let (status, _) = post(&http, &b.url, &session, cancel.to_string()).await;
    assert_eq!(status, 202);
    for _ in 0..250 {
        if stopped.load(std::sync::atomic::Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        stopped.load(std::sync::atomic::Ordering::SeqCst),
        "the handler on A saw the cancellation sent to B"
    );
    running.abort();
    a.running.shutdown(Duration::from_secs(1)).await;
    b.running.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_stream_of_a_dead_instance_is_replayed_by_another() {
    let Some(redis) = redis_common::redis().await else {
        return;
    };
    // Reports progress twice, then runs until its instance goes.
    let steps = ToolDef::new("steps", json!({"type": "object"}), |_args, cx| async move {
        cx.progress(1.0, Some(3.0), Some("one")).await;
        cx.progress(2.0, Some(3.0), Some("two")).await;
        tokio::time::sleep(Duration::from_mins(1)).await;
        Ok(CallToolResult::text("done"))
    });
    let (a, b, session) = pair(&redis.url, steps).await;
    let http = client();
    let body = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "steps", "arguments": {}, "_meta": {"progressToken": "p"}}});
    let response = send(
        &http,
        "POST",
        &a.url,
        &[("mcp-session-id", &session)],
        body.to_string(),
    )
    .await;
    let mut events = SseEvents::checked(response);
    let (first, message) = events.message().await;
    assert_eq!(message["params"]["message"], "one", "{message}");
    // The client saw the first event only; A dies.
    drop(events);
    a.running.shutdown(Duration::from_millis(100)).await;

    // Redis has the stream: B replays what came after the first event, then ends it (the
    // request ran on A, which is gone).
    let mut replayed = Vec::new();
    for _ in 0..50 {
        let response = send(
            &http,
            "GET",
            &b.url,
            &[("mcp-session-id", &session), ("last-event-id", &first)],
            "",
        )
        .await;
        assert_eq!(response.status(), 200);
        let mut events = SseEvents::checked(response);
        replayed.clear();
        while let Some(event) = events.next_with_data().await {
            replayed.push(serde_json::from_str::<Value>(event.data()).unwrap());
        }
        if !replayed.is_empty() {
            break;
        }
        // The copy may still have been on its way to Redis.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(replayed.len(), 1, "{replayed:?}");
    assert_eq!(replayed[0]["params"]["message"], "two", "{replayed:?}");
    b.running.shutdown(Duration::from_secs(1)).await;
}
