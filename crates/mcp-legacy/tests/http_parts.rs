//! The HTTP request's head reaches tool handlers in both eras: a tower layer in front of
//! the dual-era endpoint inserts claims in each request's extensions, and a tool reads them
//! (`Context::http_extension`, the `HttpExtension` and `HttpParts` parameters) whether the
//! call came as a 2026-07-28 request or in a 2025-11-25 session.

use std::task::{Context, Poll};
use std::time::Duration;

use http::{Request, StatusCode};
use mcp_legacy::http::{DualEraHttp, LegacyHttpConfig};
use mcp_server::{FromContext, HttpExtension, HttpParts, Server, ToolDef};
use mcp_test_support::http::{HttpClient, client, json_body, send, session_id};
use mcp_transport_http::{HttpServer, HttpServerConfig, RunningServer};
use mcp_types::CallToolResult;
use serde_json::{Value, json};
use tower_service::Service;

/// What the test's authentication layer verified.
#[derive(Debug, Clone)]
struct Claims {
    sub: String,
}

/// Puts `Claims` with the `x-user` header's value in each request's extensions.
#[derive(Clone)]
struct ClaimsLayer<S>(S);

impl<S: Service<Request<B>>, B> Service<Request<B>> for ClaimsLayer<S> {
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<B>) -> S::Future {
        let sub = request
            .headers()
            .get("x-user")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        if let Some(sub) = sub {
            request.extensions_mut().insert(Claims { sub });
        }
        self.0.call(request)
    }
}

fn server() -> Server {
    Server::builder("parts", "1.0.0")
        .tool(ToolDef::new(
            "whoami",
            json!({"type": "object"}),
            |_args, cx| async move {
                let HttpExtension(claims) = HttpExtension::<Claims>::from_context(&cx)?;
                let parts = HttpParts::from_context(&cx)?;
                // The context's own accessors agree with the parameters.
                assert_eq!(cx.http_extension::<Claims>().unwrap().sub, claims.sub);
                assert_eq!(cx.http_parts().unwrap().uri, parts.uri);
                Ok(CallToolResult::text(format!(
                    "{} {} {}",
                    claims.sub,
                    parts.method,
                    parts.uri.path()
                )))
            },
        ))
        .build()
        .unwrap()
}

async fn start() -> RunningServer {
    DualEraHttp::bind_with_layer(
        HttpServer::DEFAULT_ADDR,
        server(),
        HttpServerConfig::default(),
        LegacyHttpConfig::default(),
        tower_layer::layer_fn(ClaimsLayer),
    )
    .await
    .unwrap()
}

fn whoami(id: i64, meta: Option<Value>) -> String {
    let mut params = json!({"name": "whoami", "arguments": {}});
    if let Some(meta) = meta {
        params["_meta"] = meta;
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string()
}

async fn modern(c: &HttpClient, url: &str, user: Option<&str>) -> Value {
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}});
    let mut headers = vec![
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "whoami"),
    ];
    headers.extend(user.map(|user| ("x-user", user)));
    let reply = send(c, "POST", url, &headers, whoami(1, Some(meta))).await;
    assert_eq!(reply.status(), StatusCode::OK);
    json_body(reply).await
}

async fn legacy_session(c: &HttpClient, url: &str, user: &str) -> String {
    let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "wire", "version": "1"}
    }})
    .to_string();
    let reply = send(c, "POST", url, &[("x-user", user)], body).await;
    assert_eq!(reply.status(), StatusCode::OK);
    let id = session_id(&reply);
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let headers = [("mcp-session-id", id.as_str()), ("x-user", user)];
    let reply = send(c, "POST", url, &headers, initialized).await;
    assert_eq!(reply.status(), StatusCode::ACCEPTED);
    id
}

fn text(reply: &Value) -> &str {
    reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text result: {reply}"))
}

#[tokio::test]
async fn a_modern_call_reads_what_the_layer_inserted() {
    let running = start().await;
    let c = client();
    let reply = modern(&c, running.url(), Some("alice")).await;
    assert_eq!(text(&reply), "alice POST /mcp");

    // No claims in the extensions: the parameter fails the call, as a tool error.
    let reply = modern(&c, running.url(), None).await;
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    assert!(text(&reply).contains("Claims"), "{reply}");
    running.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn a_legacy_session_call_reads_its_own_requests_extensions() {
    let running = start().await;
    let c = client();
    let session = legacy_session(&c, running.url(), "bob").await;
    // Each POST of the session carries its own head: the claims of this request, not of
    // the `initialize` that opened the session.
    for (id, user) in [(1, "bob"), (2, "carol")] {
        let headers = [("mcp-session-id", session.as_str()), ("x-user", user)];
        let reply = send(&c, "POST", running.url(), &headers, whoami(id, None)).await;
        assert_eq!(reply.status(), StatusCode::OK);
        let reply = json_body(reply).await;
        assert_eq!(text(&reply), format!("{user} POST /mcp"));
    }
    running.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn without_http_the_parameters_fail_the_call() {
    // The same tool over the in-memory transport (as over stdio): no HTTP request, so the
    // parameters fail the call with a tool error instead of panicking.
    let (client, _a, _b) = mcp_test_support::client::connect_in_memory(
        server(),
        mcp_client::Client::builder("c", "1"),
        16,
    );
    let result = client
        .call_tool("whoami", serde_json::Map::new())
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true));
    assert!(mcp_test_support::first_text(&result).contains("Claims"));
}
