//! The legacy Streamable HTTP client against a server that answers its standalone GET
//! stream with `retry: 0` and closes it at once, every time: the client reconnects no
//! sooner than [`MIN_RETRY`] after each close, and backs off, so it never spins on the
//! server (a scripted 2025-06-18 server on 127.0.0.1, axum).

#![cfg(feature = "http")]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use mcp_client::Client;
use mcp_legacy::client::{Connector, MIN_RETRY};
use mcp_transport_http::HttpClientConfig;
use serde_json::{Value, json};

/// When each GET arrived.
type Gets = Arc<Mutex<Vec<Instant>>>;

fn reply(code: StatusCode, content_type: &str, body: String) -> Response {
    Response::builder()
        .status(code)
        .header("content-type", content_type)
        .header("mcp-session-id", "s-1")
        .body(body.into())
        .unwrap()
}

async fn post(headers: HeaderMap, body: String) -> Response {
    let message: Value = serde_json::from_str(&body).unwrap_or_default();
    let id = &message["id"];
    match message["method"].as_str() {
        // The modern probe, without a session: a 400 without a modern error.
        Some(method) if method != "initialize" && !headers.contains_key("mcp-session-id") => {
            let refused = json!({"jsonrpc": "2.0", "id": null,
                "error": {"code": -32000, "message": "Bad Request: No valid session ID provided"}});
            reply(
                StatusCode::BAD_REQUEST,
                "application/json",
                refused.to_string(),
            )
        }
        Some("initialize") => {
            let result = json!({"jsonrpc": "2.0", "id": id, "result": {
                "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                "serverInfo": {"name": "closing", "version": "1.0.0"}}});
            reply(StatusCode::OK, "application/json", result.to_string())
        }
        _ => reply(StatusCode::ACCEPTED, "application/json", String::new()),
    }
}

/// The GET stream: `retry: 0`, then the end of the stream.
async fn get(State(gets): State<Gets>) -> Response {
    gets.lock().unwrap().push(Instant::now());
    reply(
        StatusCode::OK,
        "text/event-stream",
        "retry: 0\n\n".to_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_sends_retry_0_and_closes_is_reconnected_to_no_faster_than_the_floor() {
    let gets: Gets = Arc::default();
    let app = axum::Router::new()
        .route("/mcp", axum::routing::post(post).get(get))
        .with_state(Arc::clone(&gets));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    let client = Connector::new(Client::builder("retry", "1.0.0"))
        .connect_http(&url, HttpClientConfig::default())
        .await
        .expect("the scripted server speaks 2025-06-18")
        .client;

    // The client reconnects: wait for three GETs (the first and two reconnections).
    let started = Instant::now();
    while gets.lock().unwrap().len() < 3 {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the client stopped reconnecting"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Then a window of two seconds from the first GET: at most one GET per floor, and
    // one more for the start of the window (without the floor, a loop makes hundreds).
    let first = gets.lock().unwrap()[0];
    let window = Duration::from_secs(2);
    tokio::time::sleep((first + window).saturating_duration_since(Instant::now())).await;
    let seen = gets.lock().unwrap().clone();
    let in_window = seen.iter().filter(|at| **at <= first + window).count();
    let bound = usize::try_from(window.as_millis() / MIN_RETRY.as_millis()).unwrap() + 1;
    assert!(
        in_window <= bound,
        "{in_window} GETs in {window:?}, more than {bound}"
    );
    // Each reconnection came at least the floor after the one before.
    for pair in seen.windows(2) {
        let gap = pair[1] - pair[0];
        assert!(gap >= MIN_RETRY, "a reconnection after {gap:?}");
    }
    drop(client);
}
