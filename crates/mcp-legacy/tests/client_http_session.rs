//! The legacy Streamable HTTP session of the dual-era client, against a scripted
//! 2025-06-18 server on 127.0.0.1 (axum) that records what it receives: the modern probe
//! gets a 400 without a modern error, `Mcp-Session-Id` and `MCP-Protocol-Version` are
//! echoed on every later request, a POST stream that ends after a priming event is resumed
//! with a GET carrying `Last-Event-ID` after the `retry` delay, a change notification on
//! the standalone GET stream reaches `listen`, a 404 for an expired session makes the
//! client `initialize` again and re-send the request, and shutdown DELETEs the session.

#![cfg(feature = "http")]

mod scripted_http;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use bytes::Bytes;
use mcp_client::{Client, ListenEvent};
use mcp_legacy::client::{Connector, Transport, VerdictCache};
use mcp_transport_http::HttpClientConfig;
use mcp_types::{Era, JsonObject, SubscriptionFilter};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use scripted_http::{ChannelBody, header};

/// What the server saw: one line per HTTP request.
#[derive(Default)]
struct Seen {
    lines: Vec<String>,
    sessions: HashSet<String>,
    next_session: u32,
    /// The `tools/call` waiting for the client to resume its stream.
    pending_call: Option<Value>,
    /// When the `tools/call` stream was closed.
    closed_at: Option<Instant>,
    /// Delay between that close and the resumption GET.
    resumed_after: Option<Duration>,
    /// Feeds the standalone GET stream.
    get_stream: Option<mpsc::Sender<Bytes>>,
    /// Answer `initialize` with 405, as a server that dropped the legacy era would.
    refuse_initialize: bool,
    /// The JSON-RPC responses the client POSTed (to the server's own requests).
    responses: Vec<Value>,
    /// Woken when a response arrives.
    answered: Arc<tokio::sync::Notify>,
}

type Shared = Arc<Mutex<Seen>>;

fn json_response(session: Option<&str>, body: &Value) -> Response {
    let mut response = Response::builder()
        .status(StatusCode::OK)
        .header("content-type", "application/json");
    if let Some(session) = session {
        response = response.header("mcp-session-id", session);
    }
    response.body(Body::from(body.to_string())).unwrap()
}

fn sse(body: Body) -> Response {
    Response::builder()
        .status(StatusCode::OK)
        .header("content-type", "text/event-stream")
        .body(body)
        .unwrap()
}

fn status(code: StatusCode) -> Response {
    Response::builder()
        .status(code)
        .body(Body::empty())
        .unwrap()
}

async fn post(State(seen): State<Shared>, headers: HeaderMap, body: String) -> Response {
    let message: Value = serde_json::from_str(&body).unwrap_or_default();
    let method = message["method"]
        .as_str()
        .unwrap_or("(response)")
        .to_owned();
    let session = header(&headers, "mcp-session-id");
    let mut seen = seen.lock().unwrap();
    seen.lines.push(format!(
        "POST {method} session={session} version={}",
        header(&headers, "mcp-protocol-version")
    ));
    if method == "initialize" && seen.refuse_initialize {
        return status(StatusCode::METHOD_NOT_ALLOWED);
    }
    if method == "initialize" {
        seen.next_session += 1;
        let id = format!("s-{}", seen.next_session);
        seen.sessions.insert(id.clone());
        let result = json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {"listChanged": true}},
            "serverInfo": {"name": "scripted", "version": "1.0.0"}
        });
        return json_response(
            Some(&id),
            &json!({"jsonrpc": "2.0", "id": message["id"], "result": result}),
        );
    }
    if !seen.sessions.contains(&session) {
        // Like the TypeScript SDK: no session (the modern probe) is a 400 without a
        // modern error; an unknown session is a 404.
        return if session == "-" {
            Response::builder()
                .status(StatusCode::BAD_REQUEST)
                .header("content-type", "application/json")
                .body(Body::from(
                    json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32000, "message": "Bad Request: No valid session ID provided"}}).to_string(),
                ))
                .unwrap()
        } else {
            status(StatusCode::NOT_FOUND)
        };
    }
    match method.as_str() {
        "tools/list" => json_response(
            None,
            &json!({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": [
                {"name": "slow", "inputSchema": {"type": "object"}}
            ]}}),
        ),
        "tools/call" => {
            // A priming event with an id and a retry delay, then the stream ends: the
            // client must come back with a GET after 300 ms.
            seen.pending_call = Some(message["id"].clone());
            seen.closed_at = Some(Instant::now());
            sse(Body::from("id: call-1\nretry: 300\ndata: \n\n"))
        }
        "(response)" => {
            seen.responses.push(message);
            seen.answered.notify_one();
            status(StatusCode::ACCEPTED)
        }
        _ => status(StatusCode::ACCEPTED),
    }
}

async fn get(State(seen): State<Shared>, headers: HeaderMap) -> Response {
    let mut seen = seen.lock().unwrap();
    let last = header(&headers, "last-event-id");
    seen.lines.push(format!(
        "GET last-event-id={last} session={} version={}",
        header(&headers, "mcp-session-id"),
        header(&headers, "mcp-protocol-version")
    ));
    if last == "call-1"
        && let Some(id) = seen.pending_call.take()
    {
        seen.resumed_after = seen.closed_at.map(|at| at.elapsed());
        // The server pings the client on the resumed stream before answering.
        let ping = json!({"jsonrpc": "2.0", "id": "srv-1", "method": "ping"});
        let response = json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": "resumed"}]}});
        return sse(Body::from(format!(
            "id: call-2\ndata: {ping}\n\nid: call-3\ndata: {response}\n\n"
        )));
    }
    let (tx, rx) = mpsc::channel(8);
    seen.get_stream = Some(tx);
    sse(Body::new(ChannelBody(rx)))
}

async fn delete(State(seen): State<Shared>, headers: HeaderMap) -> StatusCode {
    let mut seen = seen.lock().unwrap();
    let session = header(&headers, "mcp-session-id");
    seen.lines.push(format!("DELETE session={session}"));
    seen.sessions.remove(&session);
    StatusCode::OK
}

fn lines(seen: &Shared) -> Vec<String> {
    seen.lock().unwrap().lines.clone()
}

/// Serves the scripted server on a loopback port; its URL.
async fn serve(seen: &Shared) -> String {
    let app = axum::Router::new()
        .route("/mcp", axum::routing::post(post).get(get).delete(delete))
        .with_state(Arc::clone(seen));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_streamable_http_session_end_to_end() {
    let seen: Shared = Arc::default();
    let url = serve(&seen).await;

    let connection = Connector::new(Client::builder("session-test", "1.0.0"))
        .connect_http(&url, HttpClientConfig::default())
        .await
        .unwrap();
    assert_eq!(connection.verdict.era, Era::Legacy);
    assert_eq!(connection.verdict.version, "2025-06-18");
    assert_eq!(connection.verdict.transport, Transport::StreamableHttp);
    let client = connection.client;
    // The probe (no session: 400), initialize (no version header yet), initialized and
    // the standalone GET stream, both with the session and the version.
    assert_eq!(
        lines(&seen),
        [
            "POST server/discover session=- version=2026-07-28",
            "POST initialize session=- version=-",
            "POST notifications/initialized session=s-1 version=2025-06-18",
            "GET last-event-id=- session=s-1 version=2025-06-18",
        ]
    );

    let tools = client.list_tools_all().await.unwrap();
    assert_eq!(tools[0].name, "slow");

    // The POST stream ends after its priming event; the response comes on the resumed
    // stream, no sooner than the retry delay.
    let result = client.call_tool("slow", JsonObject::new()).await.unwrap();
    assert_eq!(
        serde_json::to_value(&result).unwrap()["content"][0]["text"],
        "resumed"
    );
    let waited = seen.lock().unwrap().resumed_after.unwrap();
    assert!(
        waited >= Duration::from_millis(290),
        "resumed after {waited:?}"
    );
    assert!(
        lines(&seen)
            .contains(&"GET last-event-id=call-1 session=s-1 version=2025-06-18".to_owned()),
        "{:?}",
        lines(&seen)
    );
    // The server's ping was answered with an empty result.
    let answered = Arc::clone(&seen.lock().unwrap().answered);
    tokio::time::timeout(Duration::from_secs(10), answered.notified())
        .await
        .unwrap();
    assert_eq!(
        seen.lock().unwrap().responses,
        [json!({"jsonrpc": "2.0", "id": "srv-1", "result": {}})]
    );

    // A change notification on the standalone GET stream reaches listen.
    let mut filter = SubscriptionFilter::default();
    filter.tools_list_changed = Some(true);
    let mut subscription = client.listen(filter).await.unwrap();
    assert!(matches!(
        subscription.next().await,
        Some(ListenEvent::Acknowledged(_))
    ));
    let stream = seen.lock().unwrap().get_stream.clone().unwrap();
    stream
        .send(Bytes::from(
            "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n",
        ))
        .await
        .unwrap();
    let event = tokio::time::timeout(Duration::from_secs(10), subscription.next())
        .await
        .unwrap();
    assert_eq!(event, Some(ListenEvent::ToolsListChanged));

    // The server forgets the session: the next request gets 404, the client initializes
    // again and re-sends it with the new session.
    seen.lock().unwrap().sessions.clear();
    let before = lines(&seen).len();
    let tools = client.list_tools_all().await.unwrap();
    assert_eq!(tools.len(), 1);
    let after: Vec<String> = lines(&seen).split_off(before);
    assert_eq!(
        &after[..4],
        [
            "POST tools/list session=s-1 version=2025-06-18",
            "POST initialize session=- version=-",
            "POST notifications/initialized session=s-2 version=2025-06-18",
            "GET last-event-id=- session=s-2 version=2025-06-18",
        ]
    );
    assert_eq!(after[4], "POST tools/list session=s-2 version=2025-06-18");

    // Shutdown ends the session, and with it the subscription.
    client.shutdown(Duration::from_secs(2)).await;
    assert_eq!(lines(&seen).last().unwrap(), "DELETE session=s-2");
    let end = tokio::time::timeout(Duration::from_secs(10), subscription.next()).await;
    assert_eq!(end.unwrap(), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remembered_verdict_spares_the_probe_until_it_fails() {
    let seen: Shared = Arc::default();
    let url = serve(&seen).await;
    let verdicts = VerdictCache::default();
    let probes = |seen: &Shared| {
        lines(seen)
            .iter()
            .filter(|l| l.starts_with("POST server/discover"))
            .count()
    };

    let first = Connector::new(Client::builder("cache-test", "1.0.0"))
        .verdicts(verdicts.clone())
        .connect_http(&url, HttpClientConfig::default())
        .await
        .unwrap();
    assert_eq!(verdicts.get(&url), Some(Era::Legacy));
    let second = Connector::new(Client::builder("cache-test", "1.0.0"))
        .verdicts(verdicts.clone())
        .connect_http(&url, HttpClientConfig::default())
        .await
        .unwrap();
    assert_eq!(second.verdict.era, Era::Legacy);
    assert_eq!(probes(&seen), 1, "{:?}", lines(&seen));

    // The server drops the legacy era: the expired session cannot be re-established, the
    // request fails, and the verdict is forgotten, so the next connection probes again.
    {
        let mut seen = seen.lock().unwrap();
        seen.sessions.clear();
        seen.refuse_initialize = true;
    }
    assert!(first.client.list_tools_all().await.is_err());
    assert_eq!(verdicts.get(&url), None);
    let third = Connector::new(Client::builder("cache-test", "1.0.0"))
        .verdicts(verdicts.clone())
        .connect_http(&url, HttpClientConfig::default())
        .await;
    // Probed again: legacy, but neither legacy transport takes it any more.
    let err = third.unwrap_err();
    assert!(matches!(err, mcp_legacy::Error::Handshake(_)), "{err:?}");
    assert_eq!(probes(&seen), 2, "{:?}", lines(&seen));
}
