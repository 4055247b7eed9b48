//! A protected server built as `mcp_server::auth` describes (a `ResourceServer` with an
//! endpoint scope and a scoped tool, prompt and resource template, as the authenticator of
//! `DualEraHttp`), tried in the initialize era: a token without the target's scope reaches
//! none of them, however the request is written, on Streamable HTTP sessions, in a
//! 2025-03-26 batch and on the 2024-11-05 HTTP+SSE transport.

use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use mcp_legacy::http::{DualEraHttp, LegacyHttpConfig};
use mcp_server::auth::{ResourceServer, TokenError, TokenPrincipal, TokenVerifier, VerifyFuture};
use mcp_server::{PromptDef, ResourceTemplateDef, Server, ToolDef};
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

async fn start() -> (RunningServer, Client<HttpConnector, Full<Bytes>>) {
    let resource = ResourceServer::builder("http://127.0.0.1/mcp")
        .authorization_server("https://auth.example.com")
        .required_scopes(["files:read"])
        .tool_scopes("delete_file", ["files:write"])
        .prompt_scopes("draft", ["files:write"])
        .resource_scopes("file:///private/{name}", ["files:write"])
        .verifier(Named)
        .build()
        .unwrap();
    let running = DualEraHttp::bind(
        HttpServer::DEFAULT_ADDR,
        server(),
        HttpServerConfig::default().authenticator(resource),
        LegacyHttpConfig::default(),
    )
    .await
    .unwrap();
    (running, Client::builder(TokioExecutor::new()).build_http())
}

async fn send(
    client: &Client<HttpConnector, Full<Bytes>>,
    running: &RunningServer,
    path: &str,
    headers: &[(&str, &str)],
    body: String,
) -> Response<Incoming> {
    let mut request = Request::builder()
        .method("POST")
        .uri(format!("http://{}{path}", running.local_addr()))
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request.body(Full::new(Bytes::from(body))).unwrap();
    tokio::time::timeout(Duration::from_secs(10), client.request(request))
        .await
        .expect("an answer in time")
        .unwrap()
}

async fn text(response: Response<Incoming>) -> String {
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    String::from_utf8(bytes.to_vec()).unwrap()
}

/// A completed session of `version` for `token`.
async fn session(
    client: &Client<HttpConnector, Full<Bytes>>,
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
    let id = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned();
    let headers = [
        ("authorization", bearer.as_str()),
        ("mcp-session-id", id.as_str()),
    ];
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
    let headers = [
        ("authorization", "Bearer reader"),
        ("mcp-session-id", reader.as_str()),
    ];
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
    let headers = [
        ("authorization", "Bearer writer"),
        ("mcp-session-id", writer.as_str()),
    ];
    let delete =
        r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"delete_file","uri":0}}"#;
    let response = send(&client, &running, "/mcp", &headers, delete.to_owned()).await;
    assert!(text(response).await.contains("deleted"));
}

#[tokio::test]
async fn a_batch_with_one_scoped_call_is_refused_whole_naming_every_scope() {
    let (running, client) = start().await;
    let reader = session(&client, &running, "reader", "2025-03-26").await;
    let headers = [
        ("authorization", "Bearer reader"),
        ("mcp-session-id", reader.as_str()),
    ];
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
    assert!(challenge.contains("insufficient_scope"), "{challenge}");
    assert!(
        challenge.contains("scope=\"files:read files:write\""),
        "{challenge}"
    );
    assert!(!text(response).await.contains("echo"));
}

#[tokio::test]
async fn the_http_sse_transport_reaches_no_scoped_target_without_its_scope() {
    let (running, client) = start().await;
    let stream = client
        .request(
            Request::builder()
                .uri(format!("http://{}/sse", running.local_addr()))
                .header("accept", "text/event-stream")
                .header("authorization", "Bearer reader")
                .body(Full::new(Bytes::new()))
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(stream.status(), StatusCode::OK);
    let mut body = stream.into_body();
    let mut events = String::new();
    while !events.contains("\n\n") {
        let frame = tokio::time::timeout(Duration::from_secs(10), body.frame())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        if let Ok(data) = frame.into_data() {
            events.push_str(std::str::from_utf8(&data).unwrap());
        }
    }
    let endpoint = events
        .lines()
        .find_map(|line| line.strip_prefix("data: "))
        .expect("an endpoint event")
        .to_owned();
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
