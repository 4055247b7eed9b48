//! The legacy Streamable HTTP client's own limits, each at the limit and one
//! past it, against a scripted 2025-06-18 server on 127.0.0.1 (axum):
//!
//! - [`MAX_RESUMES`]: a `tools/call` whose POST stream ends after an event with an id,
//!   and whose every resumption (a GET with `Last-Event-ID`) ends the same way until the
//!   one that carries the response. Answered on the 10th resumption, the call succeeds;
//!   one later, the client stops after the 10th with `MayHaveRun` and makes no 11th GET.
//! - [`MAX_PENDING`]: `tools/call`s the server accepts with `202` and answers later on the
//!   standalone GET stream. 256 wait together; the 257th fails at once, without a POST,
//!   and once the 256 are answered a call goes through again.
//!
//! [`MAX_SERVER_REQUESTS`](mcp_legacy::client::MAX_SERVER_REQUESTS) is tested at and past
//! its bound in `hostile_client_sse.rs`. The rules:
//! <https://modelcontextprotocol.io/specification/2025-06-18/basic/transports> (Streamable HTTP, resumability).

#![cfg(feature = "http")]

mod scripted_http;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use bytes::Bytes;
use mcp_client::{Client, Error};
use mcp_legacy::client::{Connector, MAX_PENDING, MAX_RESUMES};
use mcp_transport_http::HttpClientConfig;
use mcp_types::JsonObject;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use scripted_http::{ChannelBody, header};

/// The server's state.
#[derive(Default)]
struct Seen {
    /// The resumption (1-based) whose stream carries the response to the resumed call.
    answer_on_resume: usize,
    /// The resumed call's id.
    resumed_call: Option<Value>,
    /// The resumption GETs, by their `Last-Event-ID`.
    resumes: Vec<String>,
    /// The ids of the calls accepted with `202`, waiting for the GET stream.
    held: Vec<Value>,
    /// How many `tools/call` POSTs arrived.
    calls: usize,
    /// Feeds the standalone GET stream.
    get_stream: Option<mpsc::Sender<Bytes>>,
}

type Shared = Arc<Mutex<Seen>>;

fn response(code: StatusCode, content_type: Option<&str>, body: impl Into<Body>) -> Response {
    let mut response = Response::builder().status(code);
    if let Some(content_type) = content_type {
        response = response.header("content-type", content_type);
    }
    response
        .header("mcp-session-id", "s-1")
        .body(body.into())
        .unwrap()
}

fn result(id: &Value, result: &Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// A call's result, naming the call.
fn called(id: &Value) -> Value {
    result(
        id,
        &json!({"content": [{"type": "text", "text": format!("done {id}")}]}),
    )
}

/// A stream that ends after one event with id `r-{n}` and a 10 ms `retry`, and before
/// it, when given, the response.
fn resumable(n: usize, answer: Option<&Value>) -> Response {
    let answer = answer.map(|a| format!("data: {a}\n\n")).unwrap_or_default();
    let body = format!("{answer}id: r-{n}\nretry: 10\ndata: \n\n");
    response(StatusCode::OK, Some("text/event-stream"), body)
}

async fn post(State(seen): State<Shared>, headers: HeaderMap, body: String) -> Response {
    let message: Value = serde_json::from_str(&body).unwrap_or_default();
    let id = &message["id"];
    let mut seen = seen.lock().unwrap();
    match message["method"].as_str() {
        // The modern probe, without a session: a 400 without a modern error, as the
        // TypeScript SDK answers it.
        Some(method) if method != "initialize" && header(&headers, "mcp-session-id") == "-" => {
            let refused = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32000,
                "message": "Bad Request: No valid session ID provided"}});
            response(
                StatusCode::BAD_REQUEST,
                Some("application/json"),
                refused.to_string(),
            )
        }
        Some("initialize") => {
            let initialized = result(
                id,
                &json!({"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                    "serverInfo": {"name": "scripted", "version": "1.0.0"}}),
            );
            response(
                StatusCode::OK,
                Some("application/json"),
                initialized.to_string(),
            )
        }
        Some("tools/list") => {
            let listed = result(id, &json!({"tools": []}));
            response(StatusCode::OK, Some("application/json"), listed.to_string())
        }
        Some("tools/call") => {
            seen.calls += 1;
            if message["params"]["name"] == "resume" {
                seen.resumed_call = Some(id.clone());
                seen.resumes.clear();
                resumable(0, None)
            } else {
                seen.held.push(id.clone());
                response(StatusCode::ACCEPTED, None, Body::empty())
            }
        }
        _ => response(StatusCode::ACCEPTED, None, Body::empty()),
    }
}

async fn get(State(seen): State<Shared>, headers: HeaderMap) -> Response {
    let mut seen = seen.lock().unwrap();
    let last = header(&headers, "last-event-id");
    if let Some(n) = last
        .strip_prefix("r-")
        .and_then(|n| n.parse::<usize>().ok())
    {
        seen.resumes.push(last.clone());
        let resume = n + 1;
        let answer = (resume == seen.answer_on_resume)
            .then(|| seen.resumed_call.as_ref().map(called))
            .flatten();
        return resumable(resume, answer.as_ref());
    }
    let (tx, rx) = mpsc::channel(8);
    seen.get_stream = Some(tx);
    response(
        StatusCode::OK,
        Some("text/event-stream"),
        Body::new(ChannelBody(rx)),
    )
}

/// Serves the scripted server on a loopback port and connects a client to it.
async fn connect(seen: &Shared) -> Client {
    let app = axum::Router::new()
        .route("/mcp", axum::routing::post(post).get(get))
        .with_state(Arc::clone(seen));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    Connector::new(Client::builder("limits", "1.0.0"))
        .connect_http(&url, HttpClientConfig::default())
        .await
        .expect("the scripted server speaks 2025-06-18")
        .client
}

async fn call(client: &Client, name: &str) -> Result<Value, Error> {
    client
        .call_tool(name, JsonObject::new())
        .await
        .map(|result| serde_json::to_value(result).unwrap())
}

/// Polls `check` until it holds; a failure after 10 s.
async fn until(what: &str, mut check: impl FnMut() -> bool) {
    let started = std::time::Instant::now();
    while !check() {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "waited for {what}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_is_resumed_max_resumes_times_and_not_once_more() {
    let seen: Shared = Arc::default();
    let client = connect(&seen).await;

    // The response comes on the 10th resumption: the last one the client makes.
    seen.lock().unwrap().answer_on_resume = MAX_RESUMES;
    let result = call(&client, "resume")
        .await
        .expect("answered on the last resumption");
    let id = seen.lock().unwrap().resumed_call.clone().unwrap();
    assert_eq!(result["content"][0]["text"], format!("done {id}"));
    let expected: Vec<String> = (0..MAX_RESUMES).map(|n| format!("r-{n}")).collect();
    assert_eq!(seen.lock().unwrap().resumes, expected);

    // It would come on the 11th: the client stops after the 10th, unsure whether the call
    // ran.
    seen.lock().unwrap().answer_on_resume = MAX_RESUMES + 1;
    let outcome = call(&client, "resume").await;
    assert!(
        matches!(&outcome, Err(Error::MayHaveRun { method }) if method == "tools/call"),
        "{outcome:?}"
    );
    // What happens instead of an 11th GET: the client goes on, and the next request is
    // answered. A stray GET would have been sent before the call failed; it has had that
    // round trip and 100 ms more to arrive.
    let listed = client.list_tools(None).await.expect("the next request");
    assert!(listed.tools.is_empty(), "{listed:?}");
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(seen.lock().unwrap().resumes, expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_pending_requests_wait_together_and_one_more_fails() {
    let seen: Shared = Arc::default();
    let client = connect(&seen).await;

    let waiting: Vec<_> = (0..MAX_PENDING)
        .map(|_| {
            let client = client.clone();
            tokio::spawn(async move { call(&client, "hold").await })
        })
        .collect();
    until("256 held calls", || {
        seen.lock().unwrap().held.len() == MAX_PENDING
    })
    .await;

    // One past the limit fails at once, before any POST.
    let outcome = call(&client, "hold").await;
    assert!(
        matches!(&outcome, Err(Error::Transport(mcp_jsonrpc::Error::Closed(Some(reason))))
            if reason.contains("too many requests in flight")),
        "{outcome:?}"
    );
    assert_eq!(
        seen.lock().unwrap().calls,
        MAX_PENDING,
        "no POST for the 257th"
    );

    // The server answers the 256 on the GET stream: every one completes.
    let (stream, held) = {
        let mut seen = seen.lock().unwrap();
        (
            seen.get_stream.clone().expect("the GET stream is open"),
            std::mem::take(&mut seen.held),
        )
    };
    for id in &held {
        stream
            .send(Bytes::from(format!("data: {}\n\n", called(id))))
            .await
            .expect("the client reads the GET stream");
    }
    for (n, call) in waiting.into_iter().enumerate() {
        let result = call
            .await
            .unwrap()
            .unwrap_or_else(|e| panic!("call {n}: {e:?}"));
        assert!(
            result["content"][0]["text"]
                .as_str()
                .is_some_and(|t| t.starts_with("done ")),
            "{result}"
        );
    }

    // With the table empty again, a call is accepted.
    let again = tokio::spawn({
        let client = client.clone();
        async move { call(&client, "hold").await }
    });
    until("the call after", || seen.lock().unwrap().held.len() == 1).await;
    let id = seen.lock().unwrap().held[0].clone();
    stream
        .send(Bytes::from(format!("data: {}\n\n", called(&id))))
        .await
        .unwrap();
    let result = again
        .await
        .unwrap()
        .expect("accepted once the table has room");
    assert_eq!(result["content"][0]["text"], format!("done {id}"));
}
