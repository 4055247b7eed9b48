//! A protected server built as `mcp_server::auth` describes (a `ResourceServer` with an
//! endpoint scope and a scoped tool, prompt and resource template, as the authenticator of
//! `DualEraHttp`), tried in the initialize era: a token without the target's scope reaches
//! none of them, however the request is written, on Streamable HTTP sessions, in a
//! 2025-03-26 batch and on the 2024-11-05 HTTP+SSE transport.

use http::{Response, StatusCode};
use hyper::body::Incoming;
use mcp_legacy::http::{DualEraHttp, LegacyHttpConfig};
use mcp_server::auth::{ResourceServer, TokenError, TokenPrincipal, TokenVerifier, VerifyFuture};
use mcp_server::{PromptDef, ResourceTemplateDef, Server, ToolDef};
use mcp_test_support::http::{self as raw_http, HttpClient, SseEvents, session_id};
use mcp_transport_http::{HttpServer, HttpServerConfig, RunningServer};
use mcp_types::{
    CallToolResult, ContentBlock, EmbeddedResourceResource, GetPromptResult, PromptMessage, Role,
    TextResourceContents,
};
use serde_json::{Value, json};

/// Tokens by name: `reader` holds `files:read`, `writer` also `files:write`.
struct Named;

impl TokenVerifier for Named {
    fn verify<'a>(&'a self, token: &'a str, _resource: &'a str) -> VerifyFuture<'a> {
        let scope = match token {
            "reader" => Some("files:read"),
            "writer" => Some("files:read files:write"),
            _ => None,
        };
        Box::pin(async move {
            let scope = scope.ok_or_else(|| TokenError::Invalid("unknown token".into()))?;
            let claims = json!({"iss": "https://auth.example.com", "sub": token, "scope": scope});
            let Value::Object(claims) = claims else {
                unreachable!("an object")
            };
            TokenPrincipal::from_claims(claims)
        })
    }
}

fn server() -> Server {
    let text = |t: &'static str| CallToolResult::text(t);
    Server::builder("protected", "1.0.0")
        .tool(ToolDef::new(
            "echo",
            json!({"type": "object"}),
            move |_a, _cx| async move { Ok(text("echo")) },
        ))
        .tool(ToolDef::new(
            "delete_file",
            json!({"type": "object"}),
            move |_a, _cx| async move { Ok(text("deleted")) },
        ))
        .prompt(PromptDef::new("draft", |_args, _cx| async move {
            Ok(GetPromptResult::new(vec![PromptMessage::new(
                ContentBlock::text("a draft"),
                Role::User,
            )]))
        }))
        .resource_template(ResourceTemplateDef::new(
            "file:///private/{name}",
            "private",
            |uri, _vars, _cx| async move {
                Ok(vec![EmbeddedResourceResource::TextResourceContents(
                    TextResourceContents::new("private", uri),
                )])
            },
        ))
        .build()
        .unwrap()
}

async fn start() -> (RunningServer, HttpClient) {
    let resource = ResourceServer::builder("http://127.0.0.1/mcp")
        .authorization_server("https://auth.example.com")
        .required_scopes(["files:read"])
        .tool_scopes("delete_file", ["files:write"])
        .prompt_scopes("draft", ["files:write"])
        .resource_scopes("file:///private/{name}", ["files:write"])
        .verifier(Named)
        .build()
        .unwrap();
    let http = HttpServerConfig::default().authenticator(resource);
    let legacy = LegacyHttpConfig::default();
    let running = DualEraHttp::bind(HttpServer::DEFAULT_ADDR, server(), http, legacy)
        .await
        .unwrap();
    (running, raw_http::client())
}

async fn send(
    client: &HttpClient,
    running: &RunningServer,
    path: &str,
    headers: &[(&str, &str)],
    body: String,
) -> Response<Incoming> {
    let url = format!("http://{}{path}", running.local_addr());
    raw_http::send(client, "POST", &url, headers, body).await
}

/// The headers of a request in session `id` with `bearer`.
fn in_session<'a>(bearer: &'a str, id: &'a str) -> [(&'static str, &'a str); 2] {
    [("authorization", bearer), ("mcp-session-id", id)]
}

async fn text(response: Response<Incoming>) -> String {
    raw_http::text_body(response).await
}

/// A completed session of `version` for `token`.
async fn session(
    client: &HttpClient,
    running: &RunningServer,
    token: &str,
    version: &str,
) -> String {
    let bearer = format!("Bearer {token}");
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}
    }});
    let response = send(
        client,
        running,
        "/mcp",
        &[("authorization", &bearer)],
        init.to_string(),
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    let id = session_id(&response);
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned();
    let headers = in_session(&bearer, &id);
    let done = send(client, running, "/mcp", &headers, initialized).await;
    assert_eq!(done.status(), StatusCode::ACCEPTED);
    id
}

/// Requests that name a scoped target, written every way a second reading could miss it.
fn scoped_requests() -> Vec<String> {
    let mut requests = Vec::new();
    for extra in ["0", "null", "true", "\"x\"", "[]", "{}", "-2e400"] {
        requests.push(format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"delete_file","uri":{extra},"arguments":{{}}}}}}"#
        ));
        requests.push(format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{{"name":"draft","uri":{extra}}}}}"#
        ));
        requests.push(format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{{"uri":"file:///private/a","name":{extra}}}}}"#
        ));
    }
    requests.extend([
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","name":"delete_file"}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"delete\u005ffile"}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"FILE:///private/%61"}}"#.to_owned(),
    ]);
    requests
}

#[tokio::test]
async fn a_legacy_session_reaches_no_scoped_target_without_its_scope() {
    let (running, client) = start().await;
    let reader = session(&client, &running, "reader", "2025-11-25").await;
    let headers = in_session("Bearer reader", &reader);
    for request in scoped_requests() {
        let response = send(&client, &running, "/mcp", &headers, request.clone()).await;
        let status = response.status();
        let body = text(response).await;
        assert!(
            status == StatusCode::FORBIDDEN || status == StatusCode::BAD_REQUEST,
            "{request}: {status} {body}"
        );
        assert!(
            !body.contains("deleted") && !body.contains("a draft") && !body.contains("\"private\""),
            "{request}: {body}"
        );
    }
    // The same session may use what its token allows.
    let echo = r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","uri":0}}"#;
    let response = send(&client, &running, "/mcp", &headers, echo.to_owned()).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert!(text(response).await.contains("echo"));
    // A writer's session runs the scoped tool, extra member and all.
    let writer = session(&client, &running, "writer", "2025-11-25").await;
    let headers = in_session("Bearer writer", &writer);
    let delete =
        r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"delete_file","uri":0}}"#;
    let response = send(&client, &running, "/mcp", &headers, delete.to_owned()).await;
    assert!(text(response).await.contains("deleted"));
}

#[tokio::test]
async fn a_batch_with_one_scoped_call_is_refused_whole_naming_every_scope() {
    let (running, client) = start().await;
    let reader = session(&client, &running, "reader", "2025-03-26").await;
    let headers = in_session("Bearer reader", &reader);
    let batch = r#"[
        {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}},
        {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"delete_file","uri":0}}
    ]"#;
    let response = send(&client, &running, "/mcp", &headers, batch.to_owned()).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    let challenge = response.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .to_owned();
    for expected in ["insufficient_scope", "scope=\"files:read files:write\""] {
        assert!(challenge.contains(expected), "{challenge}");
    }
    assert!(!text(response).await.contains("echo"));
}

#[tokio::test]
async fn the_http_sse_transport_reaches_no_scoped_target_without_its_scope() {
    let (running, client) = start().await;
    let url = format!("http://{}/sse", running.local_addr());
    let stream = raw_http::send(
        &client,
        "GET",
        &url,
        &[
            ("accept", "text/event-stream"),
            ("authorization", "Bearer reader"),
        ],
        "",
    )
    .await;
    assert_eq!(stream.status(), StatusCode::OK);
    // The stream stays open (and the session with it) to the end of the test.
    let mut events = SseEvents::new(stream);
    let endpoint = events.endpoint().await;
    let headers = [("authorization", "Bearer reader")];
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}
    }});
    let accepted = send(&client, &running, &endpoint, &headers, init.to_string()).await;
    assert_eq!(accepted.status(), StatusCode::ACCEPTED);
    for request in scoped_requests() {
        let response = send(&client, &running, &endpoint, &headers, request.clone()).await;
        let status = response.status();
        assert!(
            status == StatusCode::FORBIDDEN || status == StatusCode::BAD_REQUEST,
            "{request}: {status}"
        );
    }
}
