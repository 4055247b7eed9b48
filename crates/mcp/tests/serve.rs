//! Serving through the front door answers both eras on one endpoint: an `initialize`
//! handshake opens a session, and a 2026-07-28 request is served beside it.
#![cfg(all(feature = "server", feature = "http", feature = "legacy"))]

use std::time::Duration;

use mcp::prelude::*;
use mcp_test_support::http::{client, json_body, send, session_id};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Add {
    a: i64,
    b: i64,
}

fn server() -> Server {
    Server::builder("front-door", "1.0.0")
        .tool(ToolDef::typed("add", |args: Add, _cx| async move {
            Ok(CallToolResult::text((args.a + args.b).to_string()))
        }))
        .build()
        .unwrap()
}

#[tokio::test]
async fn bind_http_serves_both_eras() {
    let running = mcp::bind_http(server(), "127.0.0.1:0").await.unwrap();
    let http = client();
    let url = running.url();

    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "legacy", "version": "1"}}});
    let reply = send(&http, "POST", url, &[], initialize.to_string()).await;
    assert_eq!(reply.status(), 200);
    assert!(!session_id(&reply).is_empty());
    let reply = json_body(reply).await;
    assert_eq!(reply["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(reply["result"]["serverInfo"]["name"], "front-door");

    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "add", "arguments": {"a": 2, "b": 3},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}}});
    let headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "add"),
    ];
    let reply = send(&http, "POST", url, &headers, call.to_string()).await;
    assert_eq!(reply.status(), 200);
    let reply = json_body(reply).await;
    assert_eq!(reply["result"]["content"][0]["text"], "5", "{reply}");
    running.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn the_modern_endpoint_refuses_the_handshake() {
    let running = mcp::bind_http_modern(server(), "127.0.0.1:0")
        .await
        .unwrap();
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "legacy", "version": "1"}}});
    let reply = send(
        &client(),
        "POST",
        running.url(),
        &[],
        initialize.to_string(),
    )
    .await;
    assert_ne!(
        reply.status(),
        200,
        "a modern-only endpoint opens no session"
    );
    running.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn an_address_that_is_not_ip_and_port_is_refused_by_name() {
    let error = mcp::serve_http(server(), "localhost").await.unwrap_err();
    assert!(matches!(error, mcp::Error::Address { .. }), "{error}");
    assert!(error.to_string().contains("\"localhost\""), "{error}");
}

/// A tower layer that counts the requests it passes on and tags each one's extensions
/// with the count so far.
#[derive(Clone)]
struct Counting<S> {
    inner: S,
    seen: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

/// What [`Counting`] puts in a request's extensions.
#[derive(Debug, Clone, Copy)]
struct Seen(usize);

impl<S: tower_service::Service<http::Request<B>>, B> tower_service::Service<http::Request<B>>
    for Counting<S>
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: http::Request<B>) -> S::Future {
        let n = self.seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        request.extensions_mut().insert(Seen(n));
        self.inner.call(request)
    }
}

fn counting_server() -> Server {
    Server::builder("layered", "1.0.0")
        .tool(ToolDef::new(
            "seen",
            json!({"type": "object"}),
            |_args, cx| async move {
                let Seen(n) = *cx.http_extension::<Seen>().ok_or("not counted")?;
                Ok(CallToolResult::text(n.to_string()))
            },
        ))
        .build()
        .unwrap()
}

#[tokio::test]
async fn bind_http_with_layer_runs_the_layer_for_both_eras() {
    let seen = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = std::sync::Arc::clone(&seen);
    let layer = tower_layer::layer_fn(move |inner| Counting {
        inner,
        seen: std::sync::Arc::clone(&counted),
    });
    let running = mcp::bind_http_with_layer(counting_server(), "127.0.0.1:0", layer)
        .await
        .unwrap();
    let http = client();
    let url = running.url();

    // A 2026-07-28 call: the first request through the layer.
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "seen", "arguments": {},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}}});
    let headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "seen"),
    ];
    let reply = json_body(send(&http, "POST", url, &headers, call.to_string()).await).await;
    assert_eq!(reply["result"]["content"][0]["text"], "1", "{reply}");

    // A 2025-11-25 session: initialize (2), initialized (3), the call (4).
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "legacy", "version": "1"}}});
    let reply = send(&http, "POST", url, &[], initialize.to_string()).await;
    let session = session_id(&reply);
    let in_session = [("mcp-session-id", session.as_str())];
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(
        send(&http, "POST", url, &in_session, initialized)
            .await
            .status(),
        202
    );
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "seen", "arguments": {}}});
    let reply = json_body(send(&http, "POST", url, &in_session, call.to_string()).await).await;
    assert_eq!(reply["result"]["content"][0]["text"], "4", "{reply}");
    assert_eq!(seen.load(std::sync::atomic::Ordering::SeqCst), 4);
    running.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn bind_http_modern_with_layer_runs_the_layer() {
    let seen = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = std::sync::Arc::clone(&seen);
    let layer = tower_layer::layer_fn(move |inner| Counting {
        inner,
        seen: std::sync::Arc::clone(&counted),
    });
    let running = mcp::bind_http_modern_with_layer(counting_server(), "127.0.0.1:0", layer)
        .await
        .unwrap();
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "seen", "arguments": {},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}}});
    let headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "seen"),
    ];
    let reply = send(&client(), "POST", running.url(), &headers, call.to_string()).await;
    let reply = json_body(reply).await;
    assert_eq!(reply["result"]["content"][0]["text"], "1", "{reply}");
    assert_eq!(seen.load(std::sync::atomic::Ordering::SeqCst), 1);
    running.shutdown(Duration::from_secs(1)).await;
}
