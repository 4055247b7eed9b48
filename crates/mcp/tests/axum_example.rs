//! The axum example (`examples/axum.rs`), run: its app on a free loopback port, called over
//! HTTP as clients of both eras call it. Without a valid bearer token `/mcp` is `401`;
//! with one, the `whoami` tool answers with the token's `sub`, to a 2026-07-28 request and
//! in a 2025-11-25 session alike; `/health` needs no token.
#![cfg(all(feature = "server", feature = "http", feature = "legacy"))]

#[path = "../examples/axum.rs"]
#[allow(dead_code, unreachable_pub)]
mod example;

use mcp::prelude::*;
use mcp_test_support::http::{HttpClient, client, json_body, send, session_id, text_body};

/// The example's app on `127.0.0.1:0`: its `/mcp` URL.
async fn start() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = example::app(example::server().unwrap()).unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}/mcp")
}

fn whoami(id: i64, modern: bool) -> String {
    let mut params = json!({"name": "whoami", "arguments": {}});
    if modern {
        params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}});
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string()
}

const MODERN: [(&str, &str); 3] = [
    ("mcp-protocol-version", "2026-07-28"),
    ("mcp-method", "tools/call"),
    ("mcp-name", "whoami"),
];

async fn modern_whoami(http: &HttpClient, url: &str, token: &str) -> Value {
    let bearer = format!("Bearer {token}");
    let mut headers = MODERN.to_vec();
    headers.push(("authorization", &bearer));
    let reply = send(http, "POST", url, &headers, whoami(1, true)).await;
    assert_eq!(reply.status(), 200);
    json_body(reply).await
}

#[tokio::test]
async fn without_a_token_mcp_is_401_and_health_is_open() {
    let url = start().await;
    let http = client();
    let reply = send(&http, "POST", &url, &MODERN, whoami(1, true)).await;
    assert_eq!(reply.status(), 401);
    let mut headers = MODERN.to_vec();
    headers.push(("authorization", "Bearer wrong"));
    let reply = send(&http, "POST", &url, &headers, whoami(1, true)).await;
    assert_eq!(reply.status(), 401);
    // A legacy handshake without a token is refused before any session exists.
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "legacy", "version": "1"}}});
    let reply = send(&http, "POST", &url, &[], initialize.to_string()).await;
    assert_eq!(reply.status(), 401);
    assert!(!reply.headers().contains_key("mcp-session-id"));

    let health = url.replace("/mcp", "/health");
    let reply = send(&http, "GET", &health, &[], "").await;
    assert_eq!(reply.status(), 200);
    assert_eq!(text_body(reply).await, "ok");
}

#[tokio::test]
async fn a_modern_request_gets_the_tokens_sub() {
    let url = start().await;
    let http = client();
    for (token, sub) in [("alice-token", "alice"), ("bob-token", "bob")] {
        let reply = modern_whoami(&http, &url, token).await;
        assert_eq!(reply["result"]["content"][0]["text"], sub, "{reply}");
        assert_eq!(reply["result"]["resultType"], "complete");
    }
}

#[tokio::test]
async fn a_legacy_session_gets_the_tokens_sub() {
    let url = start().await;
    let http = client();
    let auth = [("authorization", "Bearer alice-token")];
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "legacy", "version": "1"}}});
    let reply = send(&http, "POST", &url, &auth, initialize.to_string()).await;
    assert_eq!(reply.status(), 200);
    let session = session_id(&reply);
    let reply = json_body(reply).await;
    assert_eq!(reply["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(reply["result"]["serverInfo"]["name"], "axum-example");

    let in_session = [
        ("authorization", "Bearer alice-token"),
        ("mcp-session-id", session.as_str()),
    ];
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let reply = send(&http, "POST", &url, &in_session, initialized).await;
    assert_eq!(reply.status(), 202);
    let reply = send(&http, "POST", &url, &in_session, whoami(2, false)).await;
    assert_eq!(reply.status(), 200);
    let reply = json_body(reply).await;
    assert_eq!(reply["result"]["content"][0]["text"], "alice", "{reply}");
    // A legacy result has no `resultType`: the session speaks 2025-11-25.
    assert!(reply["result"].get("resultType").is_none(), "{reply}");

    // The session's next request without the token never reaches it.
    let no_token = [("mcp-session-id", session.as_str())];
    let reply = send(&http, "POST", &url, &no_token, whoami(3, false)).await;
    assert_eq!(reply.status(), 401);
}
