//! Legacy sessions behind an authenticator, on the wire: legacy requests are
//! authenticated and authorized by the same `Authenticator` as modern ones, handlers see
//! the principal and not the credentials, and a session belongs to the principal that
//! initialized it (another principal gets `404`, whatever the method), on Streamable HTTP
//! and on the 2024-11-05 HTTP+SSE transport.

use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderMap, Response, StatusCode};
use hyper::body::Incoming;
use mcp_jsonrpc::Principal;
use mcp_legacy::http::{DualEraHttp, LegacyHttpConfig};
use mcp_server::{Server, ToolDef};
use mcp_test_support::http::{HttpClient, SseEvents, bearer, client, json_body, send, session_id};
use mcp_transport_http::{
    AuthenticateFuture, Authenticator, HttpServer, HttpServerConfig, RunningServer,
};
use mcp_types::CallToolResult;
use serde_json::{Value, json};

#[derive(Debug)]
struct User(String);

impl Principal for User {
    fn id(&self) -> &str {
        &self.0
    }
}

/// `Bearer alice` and `Bearer bob` are those users; only alice may call `delete`.
struct Tokens;

fn refusal(status: StatusCode, challenge: &'static str) -> Response<Bytes> {
    let mut response = Response::new(Bytes::from_static(b"{}"));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert("www-authenticate", challenge.parse().unwrap());
    response
}

impl Authenticator for Tokens {
    fn authenticate<'a>(&'a self, headers: &'a HeaderMap) -> AuthenticateFuture<'a> {
        let user = bearer(headers)
            .filter(|user| ["alice", "bob"].contains(user))
            .map(str::to_owned);
        Box::pin(async move {
            match user {
                Some(user) => Ok(Arc::new(User(user)) as Arc<dyn Principal>),
                None => Err(refusal(StatusCode::UNAUTHORIZED, "Bearer realm=\"test\"")),
            }
        })
    }

    fn authorize(
        &self,
        principal: &dyn Principal,
        request: &mcp_jsonrpc::Request,
    ) -> Result<(), Response<Bytes>> {
        let deletes = request
            .params
            .as_ref()
            .is_some_and(|p| p.text().contains("\"delete\""));
        if deletes && principal.id() != "alice" {
            return Err(refusal(
                StatusCode::FORBIDDEN,
                "Bearer error=\"insufficient_scope\"",
            ));
        }
        Ok(())
    }
}

fn server() -> Server {
    Server::builder("guarded", "1.0.0")
        .tool(ToolDef::new("whoami", json!({"type": "object"}), |_args, cx| async move {
            let seen = json!({
                "principal": cx.principal().map(|p| p.id().to_owned()),
                "sees_authorization": cx.transport().is_some_and(|t| t.header("authorization").is_some()),
            });
            Ok(CallToolResult::text(seen.to_string()))
        }))
        .tool(ToolDef::new("delete", json!({"type": "object"}), |_args, _cx| async move {
            Ok(CallToolResult::text("deleted"))
        }))
        .build()
        .unwrap()
}

struct Fixture {
    running: RunningServer,
    client: HttpClient,
}

async fn start() -> Fixture {
    let http = HttpServerConfig::default().authenticator(Tokens);
    let legacy = LegacyHttpConfig::default();
    let running = DualEraHttp::bind(HttpServer::DEFAULT_ADDR, server(), http, legacy)
        .await
        .unwrap();
    Fixture {
        running,
        client: client(),
    }
}

impl Fixture {
    async fn send(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> Response<Incoming> {
        let url = format!("http://{}{path}", self.running.local_addr());
        send(&self.client, method, &url, headers, body.to_owned()).await
    }

    /// A legacy session of `user` (2025-11-25).
    async fn initialize(&self, user: &str) -> String {
        let bearer = format!("Bearer {user}");
        let response = self
            .send("POST", "/mcp", &[("authorization", &bearer)], &initialize())
            .await;
        assert_eq!(response.status(), StatusCode::OK);
        let id = session_id(&response);
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        let headers = [
            ("authorization", bearer.as_str()),
            ("mcp-session-id", id.as_str()),
        ];
        assert_eq!(
            self.send("POST", "/mcp", &headers, initialized)
                .await
                .status(),
            StatusCode::ACCEPTED
        );
        id
    }

    /// The status of a `tools/call` of `tool` in `session`, as `user`.
    async fn status(&self, session: &str, user: Option<&str>, tool: &str) -> StatusCode {
        self.call(session, user, tool).await.status()
    }

    /// `tools/call` of `tool` in `session`, as `user` (no token when `None`).
    async fn call(&self, session: &str, user: Option<&str>, tool: &str) -> Response<Incoming> {
        let bearer = user.map(|u| format!("Bearer {u}"));
        let mut headers = vec![("mcp-session-id", session)];
        if let Some(bearer) = &bearer {
            headers.push(("authorization", bearer));
        }
        let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": tool, "arguments": {}}});
        self.send("POST", "/mcp", &headers, &body.to_string()).await
    }
}

fn initialize() -> String {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "wire", "version": "1"}
    }})
    .to_string()
}

/// What the `whoami` tool answered, from its reply (which must be a 200).
async fn whoami(reply: Response<Incoming>) -> Value {
    assert_eq!(reply.status(), StatusCode::OK);
    let text = json_body(reply).await["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    serde_json::from_str(&text).unwrap()
}

#[tokio::test]
async fn legacy_requests_are_authenticated_like_modern_ones() {
    let fixture = start().await;
    // No session without a principal: the authenticator's challenge, as it made it.
    let refused = fixture.send("POST", "/mcp", &[], &initialize()).await;
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        refused.headers()["www-authenticate"],
        "Bearer realm=\"test\""
    );
    assert!(!refused.headers().contains_key("mcp-session-id"));
    let wrong = fixture
        .send(
            "POST",
            "/mcp",
            &[("authorization", "Bearer mallory")],
            &initialize(),
        )
        .await;
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);

    let session = fixture.initialize("alice").await;
    let reply = fixture.call(&session, Some("alice"), "whoami").await;
    assert_eq!(
        whoami(reply).await,
        json!({"principal": "alice", "sees_authorization": false})
    );

    // The session id is no credential: every request needs its token.
    let anonymous = fixture.call(&session, None, "whoami").await;
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
    // And the authenticator authorizes each legacy request too.
    let alice_deletes = fixture.call(&session, Some("alice"), "delete").await;
    assert_eq!(alice_deletes.status(), StatusCode::OK);
    let bob_session = fixture.initialize("bob").await;
    let bob_deletes = fixture.call(&bob_session, Some("bob"), "delete").await;
    assert_eq!(bob_deletes.status(), StatusCode::FORBIDDEN);
    assert_eq!(
        bob_deletes.headers()["www-authenticate"],
        "Bearer error=\"insufficient_scope\""
    );
    // GET and DELETE of a session need a token as well.
    let get = fixture
        .send("GET", "/mcp", &[("mcp-session-id", &session)], "")
        .await;
    assert_eq!(get.status(), StatusCode::UNAUTHORIZED);
    let delete = fixture
        .send("DELETE", "/mcp", &[("mcp-session-id", &session)], "")
        .await;
    assert_eq!(delete.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn a_session_belongs_to_the_principal_that_created_it() {
    let fixture = start().await;
    let session = fixture.initialize("alice").await;
    let as_bob = [
        ("authorization", "Bearer bob"),
        ("mcp-session-id", session.as_str()),
    ];

    let hijack = fixture.call(&session, Some("bob"), "whoami").await;
    assert_eq!(hijack.status(), StatusCode::NOT_FOUND);
    assert_eq!(json_body(hijack).await["error"]["code"], -32001);
    let get = fixture.send("GET", "/mcp", &as_bob, "").await;
    assert_eq!(get.status(), StatusCode::NOT_FOUND);
    let delete = fixture.send("DELETE", "/mcp", &as_bob, "").await;
    assert_eq!(delete.status(), StatusCode::NOT_FOUND);

    // Bob's attempts changed nothing for alice, who can still use and end her session.
    assert_eq!(
        fixture.status(&session, Some("alice"), "whoami").await,
        StatusCode::OK
    );
    let as_alice = [
        ("authorization", "Bearer alice"),
        ("mcp-session-id", session.as_str()),
    ];
    assert_eq!(
        fixture.send("DELETE", "/mcp", &as_alice, "").await.status(),
        StatusCode::OK
    );
    assert_eq!(
        fixture.status(&session, Some("alice"), "whoami").await,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn http_sse_sessions_are_authenticated_and_owned() {
    let fixture = start().await;
    let accept = ("accept", "text/event-stream");
    assert_eq!(
        fixture.send("GET", "/sse", &[accept], "").await.status(),
        StatusCode::UNAUTHORIZED
    );

    let stream = fixture
        .send(
            "GET",
            "/sse",
            &[accept, ("authorization", "Bearer alice")],
            "",
        )
        .await;
    assert_eq!(stream.status(), StatusCode::OK);
    // The stream stays open (and the session with it) to the end of the test.
    let mut events = SseEvents::new(stream);
    let endpoint = events.endpoint().await;

    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let as_bob = fixture
        .send("POST", &endpoint, &[("authorization", "Bearer bob")], ping)
        .await;
    assert_eq!(as_bob.status(), StatusCode::NOT_FOUND);
    let anonymous = fixture.send("POST", &endpoint, &[], ping).await;
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
    let as_alice = fixture
        .send(
            "POST",
            &endpoint,
            &[("authorization", "Bearer alice")],
            ping,
        )
        .await;
    assert_eq!(as_alice.status(), StatusCode::ACCEPTED);
}

#[tokio::test]
async fn modern_requests_on_the_dual_era_endpoint_use_the_same_authenticator() {
    let fixture = start().await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}},
        "name": "whoami", "arguments": {}
    }})
    .to_string();
    let modern = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "whoami"),
    ];
    assert_eq!(
        fixture.send("POST", "/mcp", &modern, &body).await.status(),
        StatusCode::UNAUTHORIZED
    );
    let mut with_token = modern.to_vec();
    with_token.push(("authorization", "Bearer bob"));
    let reply = fixture.send("POST", "/mcp", &with_token, &body).await;
    assert_eq!(whoami(reply).await["principal"], "bob");
}
