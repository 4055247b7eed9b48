//! What the resource-server tests run against: a made-up authorization server on
//! 127.0.0.1 (a JWKS endpoint and an introspection endpoint, both counting their requests),
//! token signing with the test keys of `tests/keys/`, an MCP server behind a
//! `ResourceServer`, and a small HTTP client.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::{HeaderMap, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt as _, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use mcp_server::auth::ResourceServer;
use mcp_server::{PromptDef, ResourceDef, ResourceTemplateDef, Server, ToolDef};
use mcp_transport_http::{HttpServer, HttpServerConfig, RunningServer};
use mcp_types::{
    CallToolResult, ContentBlock, ElicitRequestFormParams, ElicitRequestParams,
    EmbeddedResourceResource, GetPromptResult, PromptMessage, Role, TextResourceContents,
};
use serde_json::{Value, json};
use tokio::net::TcpListener;

pub(crate) const RESOURCE: &str = "https://mcp.example.com";
pub(crate) const ISSUER: &str = "https://auth.example.com";
/// How the resource server authenticates to the introspection endpoint.
pub(crate) const RS_CLIENT: (&str, &str) = ("mcp-server", "s3cret&+");

pub(crate) fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// The test keys.
pub(crate) struct Keys {
    pub(crate) rsa1: EncodingKey,
    pub(crate) rsa2: EncodingKey,
    /// `rsa1`'s public key in PEM, the secret of the algorithm-confusion attack.
    pub(crate) rsa1_public_pem: &'static [u8],
}

pub(crate) fn keys() -> Keys {
    Keys {
        rsa1: EncodingKey::from_rsa_pem(include_bytes!("../keys/rsa1.pem")).unwrap(),
        rsa2: EncodingKey::from_rsa_pem(include_bytes!("../keys/rsa2.pem")).unwrap(),
        rsa1_public_pem: include_bytes!("../keys/rsa1.pub.pem"),
    }
}

/// The public JWK of `key`, with `kid`.
pub(crate) fn jwk(key: &EncodingKey, kid: &str) -> Value {
    let mut jwk = Jwk::from_encoding_key(key, Algorithm::RS256).unwrap();
    jwk.common.key_id = Some(kid.to_owned());
    serde_json::to_value(jwk).unwrap()
}

/// The claims of a good access token for `subject` with `scope`.
pub(crate) fn claims(subject: &str, scope: &str) -> Value {
    let now = now();
    json!({
        "iss": ISSUER, "aud": RESOURCE, "sub": subject, "client_id": "desktop-app",
        "scope": scope, "iat": now, "exp": now + 600, "jti": format!("{subject}-{now}"),
    })
}

/// A JWT signed with `key` (RS256 unless `alg` says otherwise).
pub(crate) fn sign(
    key: &EncodingKey,
    kid: Option<&str>,
    typ: Option<&str>,
    claims: &Value,
) -> String {
    sign_with(key, Algorithm::RS256, kid, typ, claims)
}

pub(crate) fn sign_with(
    key: &EncodingKey,
    alg: Algorithm,
    kid: Option<&str>,
    typ: Option<&str>,
    claims: &Value,
) -> String {
    let mut header = Header::new(alg);
    header.kid = kid.map(str::to_owned);
    header.typ = typ.map(str::to_owned);
    jsonwebtoken::encode(&header, claims, key).unwrap()
}

/// The made-up authorization server: `GET /jwks` serves [`AuthServer::jwks`], `POST
/// /introspect` answers from [`AuthServer::introspection`] for the resource server's
/// client only.
pub(crate) struct AuthServer {
    pub(crate) addr: SocketAddr,
    pub(crate) jwks: Arc<Mutex<Value>>,
    pub(crate) jwks_fetches: Arc<AtomicUsize>,
    pub(crate) introspection: Arc<Mutex<HashMap<String, Value>>>,
    pub(crate) introspections: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for AuthServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl AuthServer {
    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub(crate) fn fetches(&self) -> usize {
        self.jwks_fetches.load(Ordering::SeqCst)
    }

    pub(crate) fn set_keys(&self, keys: &[Value]) {
        *self.jwks.lock().unwrap() = json!({ "keys": keys });
    }

    pub(crate) async fn start(keys: Vec<Value>) -> AuthServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let jwks = Arc::new(Mutex::new(json!({ "keys": keys })));
        let jwks_fetches = Arc::new(AtomicUsize::new(0));
        let introspection = Arc::new(Mutex::new(HashMap::new()));
        let introspections = Arc::new(AtomicUsize::new(0));
        let state = (
            Arc::clone(&jwks),
            Arc::clone(&jwks_fetches),
            Arc::clone(&introspection),
            Arc::clone(&introspections),
        );
        let task =
            mcp_test_support::http::serve_http1(listener, state, |request, state| async move {
                answer(request, &state).await
            });
        AuthServer {
            addr,
            jwks,
            jwks_fetches,
            introspection,
            introspections,
            task,
        }
    }
}

type AuthState = (
    Arc<Mutex<Value>>,
    Arc<AtomicUsize>,
    Arc<Mutex<HashMap<String, Value>>>,
    Arc<AtomicUsize>,
);

async fn answer(
    request: Request<hyper::body::Incoming>,
    state: &AuthState,
) -> Response<Full<Bytes>> {
    let (jwks, fetches, introspection, introspections) = state;
    let reply = |status: StatusCode, body: &Value| {
        let mut response = Response::new(Full::new(Bytes::from(body.to_string())));
        *response.status_mut() = status;
        response
            .headers_mut()
            .insert("content-type", "application/json".parse().unwrap());
        response
    };
    match (request.method(), request.uri().path()) {
        (&Method::GET, "/jwks") => {
            fetches.fetch_add(1, Ordering::SeqCst);
            let body = jwks.lock().unwrap().clone();
            reply(StatusCode::OK, &body)
        }
        (&Method::POST, "/introspect") => {
            use base64::Engine as _;
            introspections.fetch_add(1, Ordering::SeqCst);
            // client_secret_basic with the form-encoded secret (RFC 6749 §2.3.1).
            let expected = format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode("mcp-server:s3cret%26%2B")
            );
            let authorized = request
                .headers()
                .get("authorization")
                .is_some_and(|v| *v == *expected);
            let form_typed = request
                .headers()
                .get("content-type")
                .is_some_and(|v| v == "application/x-www-form-urlencoded");
            let body = request.into_body().collect().await.unwrap().to_bytes();
            if !authorized || !form_typed {
                return reply(
                    StatusCode::UNAUTHORIZED,
                    &json!({"error": "invalid_client"}),
                );
            }
            let form = String::from_utf8(body.to_vec()).unwrap();
            let token = form
                .split('&')
                .find_map(|pair| pair.strip_prefix("token="))
                .unwrap_or_default();
            let answer = introspection
                .lock()
                .unwrap()
                .get(token)
                .cloned()
                .unwrap_or_else(|| json!({"active": false}));
            reply(StatusCode::OK, &answer)
        }
        _ => reply(StatusCode::NOT_FOUND, &json!({})),
    }
}

/// The MCP server the tests protect: `whoami` reports what the handler sees of the
/// request, `delete` needs `files:write`, `confirm` asks the user first (MRTR), two
/// resources to read (`file:///payroll` needs `files:write`) and a prompt (`draft`, which
/// needs `files:write`).
pub(crate) fn mcp_server() -> Server {
    Server::builder("protected", "1.0.0")
        .tool(ToolDef::new("whoami", json!({"type": "object"}), |_args, cx| async move {
            let principal = cx.token_principal();
            let report = json!({
                "id": cx.principal().map(|p| mcp_jsonrpc::Principal::id(p).to_owned()),
                "subject": principal.and_then(|p| p.subject()),
                "client": principal.and_then(|p| p.client_id()),
                "scopes": principal.map(|p| p.scopes().to_vec()),
                "sees_authorization": cx.transport().is_some_and(|t| t.header("authorization").is_some()),
            });
            Ok(CallToolResult::text(report.to_string()))
        }))
        .tool(ToolDef::new("delete", json!({"type": "object"}), |_args, _cx| async move {
            Ok(CallToolResult::text("deleted"))
        }))
        .tool(ToolDef::new("confirm", json!({"type": "object"}), |_args, cx| async move {
            let form: ElicitRequestFormParams = serde_json::from_value(json!({
                "message": "Really?",
                "requestedSchema": {"type": "object", "properties": {}}
            }))?;
            let answer = cx.elicit("sure", ElicitRequestParams::ElicitRequestForm(form))?;
            let who = cx.token_principal().and_then(|p| p.subject()).unwrap_or("?").to_owned();
            Ok(CallToolResult::text(format!("{who}: {:?}", answer.action)))
        }))
        .resource(ResourceDef::new("file:///notes", "notes", |uri, _cx| async move {
            Ok(vec![EmbeddedResourceResource::TextResourceContents(TextResourceContents::new("notes", uri))])
        }))
        .resource(ResourceDef::new("file:///payroll", "payroll", |uri, _cx| async move {
            Ok(vec![EmbeddedResourceResource::TextResourceContents(TextResourceContents::new("salaries", uri))])
        }))
        .resource_template(ResourceTemplateDef::new("file:///private/{name}", "private", |uri, _vars, _cx| async move {
            Ok(vec![EmbeddedResourceResource::TextResourceContents(TextResourceContents::new("private", uri))])
        }))
        .prompt(PromptDef::new("draft", |_args, _cx| async move {
            Ok(GetPromptResult::new(vec![PromptMessage::new(ContentBlock::text("a draft"), Role::User)]))
        }))
        .build()
        .unwrap()
}

/// The MCP server behind `resource`, on its own port.
pub(crate) async fn serve(resource: ResourceServer) -> RunningServer {
    HttpServer::bind(
        HttpServer::DEFAULT_ADDR,
        mcp_server(),
        HttpServerConfig::default().authenticator(resource),
    )
    .await
    .unwrap()
}

/// A reply: status, headers and the body as JSON (`null` when it is not JSON).
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Value,
}

impl Reply {
    pub(crate) fn challenge(&self) -> &str {
        self.headers
            .get("www-authenticate")
            .map_or("", |v| v.to_str().unwrap())
    }

    /// Asserts that this is the refusal of a reader's token for a target that needs
    /// `files:write` too: a 403 whose challenge names both scopes. `case` names it.
    pub(crate) fn refuses_for_write(&self, case: &str) {
        assert_eq!(self.status, 403, "{case}: {self:?}");
        assert!(
            self.challenge()
                .contains("scope=\"files:read files:write\""),
            "{case}: {self:?}"
        );
    }

    /// The text of a `tools/call` result's first content block.
    pub(crate) fn text(&self) -> &str {
        self.body["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("no text in {self:?}"))
    }
}

pub(crate) fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    })
}

/// One HTTP request to the MCP server.
pub(crate) struct Call {
    pub(crate) method: Method,
    pub(crate) path: String,
    pub(crate) headers: Vec<(&'static str, String)>,
    pub(crate) body: Option<Value>,
    /// The body as text, sent instead of `body` (for what a JSON value cannot hold: a
    /// member given twice).
    pub(crate) raw: Option<String>,
}

/// The `whoami` tool called with `token` as the bearer: the reply.
pub(crate) async fn whoami(server: &RunningServer, token: &str) -> Reply {
    Call::tool("whoami").bearer(token).send(server).await
}

impl Call {
    /// A POST of the JSON-RPC request `method` with `params` (and `_meta`), with the
    /// headers a modern client sends.
    pub(crate) fn rpc(method: &str, mut params: Value) -> Call {
        params["_meta"] = meta();
        let mut headers = vec![
            ("content-type", "application/json".to_owned()),
            ("accept", "application/json, text/event-stream".to_owned()),
            ("mcp-protocol-version", "2026-07-28".to_owned()),
            ("mcp-method", method.to_owned()),
        ];
        let named = if method == "resources/read" {
            "uri"
        } else {
            "name"
        };
        if let Some(name) = params.get(named).and_then(Value::as_str) {
            headers.push(("mcp-name", name.to_owned()));
        }
        Call {
            method: Method::POST,
            path: "/mcp".to_owned(),
            headers,
            body: Some(json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})),
            raw: None,
        }
    }

    /// A `tools/call` of `tool` with no arguments.
    pub(crate) fn tool(tool: &str) -> Call {
        Call::rpc("tools/call", json!({"name": tool, "arguments": {}}))
    }

    pub(crate) fn get(path: &str) -> Call {
        Call {
            method: Method::GET,
            path: path.to_owned(),
            headers: Vec::new(),
            body: None,
            raw: None,
        }
    }

    pub(crate) fn bearer(self, token: &str) -> Call {
        self.header("authorization", format!("Bearer {token}"))
    }

    pub(crate) fn header(mut self, name: &'static str, value: impl Into<String>) -> Call {
        self.headers.push((name, value.into()));
        self
    }

    /// The request `method` with its params written as `params` says, `_meta` first (the
    /// headers as [`rpc`](Self::rpc) makes them for `header_name`).
    pub(crate) fn raw(method: &str, params: &str, header_name: Option<&str>) -> Call {
        let mut call = Call::rpc(method, json!({}));
        if let Some(name) = header_name {
            call.headers.push(("mcp-name", name.to_owned()));
        }
        let params = params.strip_prefix('{').expect("params are an object");
        let comma = if params.trim_start().starts_with('}') {
            ""
        } else {
            ","
        };
        call.raw = Some(format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{"_meta":{}{comma}{params}}}"#,
            meta()
        ));
        call
    }

    pub(crate) fn path(mut self, path: &str) -> Call {
        path.clone_into(&mut self.path);
        self
    }

    /// Sends the call with `token` as the bearer.
    pub(crate) async fn send_as(self, token: &str, server: &RunningServer) -> Reply {
        self.bearer(token).send(server).await
    }

    pub(crate) async fn send(self, server: &RunningServer) -> Reply {
        let client: Client<HttpConnector, Full<Bytes>> =
            Client::builder(TokioExecutor::new()).build_http();
        let mut request = Request::builder().method(self.method).uri(format!(
            "http://{}{}",
            server.local_addr(),
            self.path
        ));
        for (name, value) in &self.headers {
            request = request.header(*name, value);
        }
        let body = match (self.raw, self.body) {
            (Some(raw), _) => Bytes::from(raw),
            (None, body) => body.map(|b| Bytes::from(b.to_string())).unwrap_or_default(),
        };
        let response = client
            .request(request.body(Full::new(body)).unwrap())
            .await
            .unwrap();
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        Reply {
            status,
            headers,
            body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        }
    }
}
